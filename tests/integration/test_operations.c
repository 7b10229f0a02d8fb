/* What operators and schedules do to a lease, with the overlap checker
 * watching: --release revokes (the holder stops, reaps, then lets go; a
 * frozen holder is waited out), --release --force frees at once, --pause
 * and --resume hold every contender off, --once-per runs a job once per
 * cron slot, and --init upgrades an older table in place. */
#include <signal.h>

#include "harness.h"
#include "httpd.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

/* The server's clock, in microseconds since the epoch. */
static int64_t db_now_us(void)
{
	return strtoll(h_sql("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))"), NULL, 10);
}

/* The expiry that --release printed ("... at the latest by TIME"). */
static void release_deadline(const char *out, char *buf, size_t len)
{
	const char *p = strstr(out, "at the latest by ");

	cr_assert_not_null(p, "%s", out);
	snprintf(buf, len, "%.27s", p + strlen("at the latest by "));
}

/* Waits until LEASE has a standby waiting (its row's lock held). */
static void wait_standby(const char *lease)
{
	for (int64_t end = h_now_ms() + 15000;
	     atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND IS_USED_LOCK(lock_name) IS NOT "
			"NULL",
			lease)) < 1;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "nobody waits for %s", lease);
}

/* Waits until root's SQL answers WANT: a row another process wrote. */
static void wait_sql(const char *sql, const char *want)
{
	char got[256];

	for (int64_t end = h_now_ms() + 10000;; h_sleep_ms(50)) {
		snprintf(got, sizeof(got), "%s", h_sql("%s", sql));
		if (strcmp(got, want) == 0)
			return;
		cr_assert(h_now_ms() < end, "%s: '%s', not '%s'", sql, got, want);
	}
}

Test(operations, release_of_a_live_holder_hands_over_after_its_command_is_dead)
{
	struct h_proc holder, waiter, p;
	const char *lease = h_lease("rev");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	char ignore_term[512], expiry[40];
	int64_t released, started_ns[2];

	/* The holder's job ignores SIGTERM, so it lives through the whole
	 * kill-grace (2.25 s at ttl 9 s) and dies only of SIGKILL: the waiter
	 * must not start in that window either. */
	snprintf(ignore_term, sizeof(ignore_term), "trap '' TERM; exec %s %s %s 60", h_probe(), log, lock);
	LR(&holder, "-t", "9s", "-l", lease, "--", "sh", "-c", ignore_term);
	cr_assert(h_wait_file(log, "start", 10000));
	LR(&waiter, "-w", "30s", "-t", "9s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	wait_standby(lease);
	released = h_now_ms();
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "revoked lease"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "it stops at its next renew, at the latest by "), "%s", h_slurp(p.out));
	release_deadline(h_slurp(p.out), expiry, sizeof(expiry));
	cr_assert_eq(h_finish(&holder, 15000), 76, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.err), "revoked"), "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&waiter, 15000), 0, "%s", h_slurp(waiter.err));
	/* No overlap (the probe's flock: the waiter's job started after the
	 * holder's was dead), and the terms grow. */
	cr_assert_eq(h_probe_check(log, started_ns, NULL, 2), 2);
	cr_log_info("waiter started %lld ms after --release", (long long)(h_now_ms() - released));
	/* Before the expiry the holder last wrote, by the database's clock:
	 * within a renew interval (3 s) and the kill-grace (2.25 s) of the
	 * revocation, where the expiry is at least 6 s away. An expiry would
	 * let the waiter in at it or after; the margin left for the hand-over
	 * itself is no more than 1.75 s, which a busy machine can take. */
	cr_assert_str_eq(h_sql("SELECT acquired_at < STR_TO_DATE('%s', "
			       "'%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ') FROM leaderrun_lease WHERE name='%s'",
			       expiry, lease),
			 "1", "the waiter did not start before the revoked holder's expiry %s", expiry);
}

Test(operations, release_of_a_frozen_holder_waits_for_its_expiry)
{
	struct h_proc holder, waiter, p;
	const char *lease = h_lease("frz");
	char expiry[40];
	pid_t command = 0;
	int64_t t0, window;

	LR(&holder, "-t", "3s", "-l", lease, "--", "sh", "-c", "echo $$; exec sleep 60");
	cr_assert(h_wait_file(holder.out, "\n", 10000));
	cr_assert_eq(sscanf(h_slurp(holder.out), "%d", &command), 1);
	LR(&waiter, "-w", "30s", "-t", "3s", "-l", lease, "--", "true");
	wait_standby(lease);
	/* A frozen holder never sees the revocation: only its expiry can let
	 * the waiter in. */
	kill(holder.pid, SIGSTOP);
	kill(-command, SIGSTOP);
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0, "%s", h_slurp(p.err));
	release_deadline(h_slurp(p.out), expiry, sizeof(expiry));
	cr_assert_eq(h_finish(&waiter, 15000), 0, "%s", h_slurp(waiter.err));
	cr_assert_str_eq(h_sql("SELECT acquired_at >= STR_TO_DATE('%s', '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ') FROM "
			       "leaderrun_lease WHERE name='%s'",
			       expiry, lease),
			 "1", "the waiter acquired before the revoked holder's expiry %s", expiry);
	/* Thawed: the stale command dies at once, the holder says 76. */
	t0 = h_now_ms();
	kill(-command, SIGCONT);
	kill(holder.pid, SIGCONT);
	cr_assert(h_wait_gone(command, 5000), "stale command %d survived the thaw", (int)command);
	window = h_now_ms() - t0;
	cr_log_info("stale command killed %lld ms after the thaw", (long long)window);
	/* At once: tens of ms; bounded generously for a busy machine. */
	cr_assert_lt(window, 2000);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
}

Test(operations, release_force_frees_at_once_with_a_larger_term)
{
	struct h_proc holder, next, p;
	const char *lease = h_lease("force");
	unsigned long long t1 = 0, t2 = 0;
	int64_t t0;

	LR(&holder, "-t", "30s", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM; exec sleep 60");
	cr_assert(h_wait_file(holder.out, "\n", 10000));
	sscanf(h_slurp(holder.out), "%llu", &t1);
	t0 = h_now_ms();
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, "--force", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "by force"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "may still run until its holder's next renew"), "%s", h_slurp(p.out));
	LR(&next, "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&next, 10000), 0, "%s", h_slurp(next.err));
	/* At once, not at the expiry (30 s): bounded generously for a busy
	 * machine. */
	cr_assert_lt(h_now_ms() - t0, 10000, "not acquired at once");
	sscanf(h_slurp(next.out), "%llu", &t2);
	cr_assert_gt(t2, t1);
	/* The old holder learns at its next renew (10 s at ttl 30 s). */
	cr_assert_eq(h_finish(&holder, 20000), 76, "%s", h_slurp(holder.err));
}

Test(operations, pause_refuses_no_wait_holds_waiters_and_resume_lets_them_run)
{
	struct h_proc waiter, p;
	const char *lease = h_lease("pause");

	/* A lease that does not exist yet is created paused. */
	cr_assert_eq(run(&p, (const char *const[]){"--pause", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "until --resume"), "%s", h_slurp(p.out));
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", lease, "--", "echo", "ran", NULL}), 75);
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "is paused by "), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "until --resume"), "%s", h_slurp(p.err));
	/* -E and the JSON event say paused, not busy. */
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-E", "0", "--log-format", "json", "-l", lease, "--", "echo",
						   "ran", NULL}),
		     0);
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "\"event\":\"paused\""), "%s", h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", lease, NULL}), 0);
	cr_assert(strstr(h_slurp(p.out), "\"paused\": true"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"paused_until\": \"9999-12-31T23:59:59.000000Z\""), "%s", h_slurp(p.out));

	LR(&waiter, "-w", "30s", "--retry-interval", "200ms", "-l", lease, "--", "echo", "ran");
	h_sleep_ms(1500);
	cr_assert_eq(h_wait(&waiter, 0), -1, "the waiter ran while paused: %s", h_slurp(waiter.err));
	cr_assert_eq(run(&p, (const char *const[]){"--resume", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "resumed lease"), "%s", h_slurp(p.out));
	cr_assert_eq(h_finish(&waiter, 10000), 0, "%s", h_slurp(waiter.err));
	cr_assert_str_eq(h_slurp(waiter.out), "ran\n");
	cr_assert_eq(run(&p, (const char *const[]){"--resume", "no-such-lease-anywhere", NULL}), 1);
}

Test(operations, a_paused_skip_is_reported_as_paused_to_pings_and_webhooks)
{
	struct h_proc p;
	const char *lease = h_lease("pausenote");
	const char *log = h_path("http.log");
	char ping[128], hook[128];
	int port = httpd_start(log, 200);

	snprintf(ping, sizeof(ping), "http://127.0.0.1:%d/hc", port);
	snprintf(hook, sizeof(hook), "http://127.0.0.1:%d/hook", port);
	cr_assert_eq(run(&p, (const char *const[]){"--pause", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(
	    run(&p, (const char *const[]){"-n", "--ping", ping, "--notify", hook, "-l", lease, "--", "true", NULL}), 75,
	    "%s", h_slurp(p.err));
	/* A note on the check's log, neither up nor down; the webhook says
	 * paused, not busy. */
	cr_assert(strstr(h_slurp(log), "GET /hc/log"), "%s", h_slurp(log));
	cr_assert_null(strstr(h_slurp(log), "GET /hc/fail"), "%s", h_slurp(log));
	cr_assert(strstr(h_slurp(log), "\"event\":\"paused\""), "%s", h_slurp(log));
	cr_assert_null(strstr(h_slurp(log), "\"event\":\"busy\""), "%s", h_slurp(log));
}

Test(operations, pause_for_a_while_resumes_by_itself)
{
	struct h_proc waiter, p;
	const char *lease = h_lease("pausefor");
	int64_t t0, t0_db = db_now_us();

	cr_assert_eq(run(&p, (const char *const[]){"--pause", lease, "--for", "2s", NULL}), 0, "%s", h_slurp(p.err));
	t0 = h_now_ms();
	LR(&waiter, "-w", "30s", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&waiter, 15000), 0, "%s", h_slurp(waiter.err));
	cr_assert_str_eq(h_slurp(waiter.out), "ran\n");
	cr_log_info("ran %lld ms after --pause --for 2s", (long long)(h_now_ms() - t0));
	/* By the server's clock: the pause began after T0_DB, and ends 2 s
	 * later (the time here counts the --pause run's own start). */
	cr_assert_geq(strtoll(h_sql("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', acquired_at) FROM "
				    "leaderrun_lease WHERE name='%s'",
				    lease),
			      NULL, 10),
		      t0_db + 2000000, "ran before the pause ended");
}

Test(operations, pause_keeps_a_running_holder_and_release_then_stops_it)
{
	struct h_proc holder, waiter, p;
	const char *lease = h_lease("pauserun");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	LR(&holder, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60");
	cr_assert(h_wait_file(log, "start", 10000));
	cr_assert_eq(run(&p, (const char *const[]){"--pause", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "keeps running"), "%s", h_slurp(p.out));
	LR(&waiter, "-w", "30s", "--retry-interval", "200ms", "-l", lease, "--", h_probe(), log, lock, "0");
	/* Several renews later the holder still runs. */
	h_sleep_ms(2500);
	cr_assert_eq(h_wait(&holder, 0), -1, "a pause stopped the holder: %s", h_slurp(holder.err));
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	/* Released, but still paused: the waiter keeps waiting. */
	h_sleep_ms(1000);
	cr_assert_eq(h_wait(&waiter, 0), -1, "the waiter ran while paused");
	cr_assert_eq(run(&p, (const char *const[]){"--resume", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&waiter, 10000), 0, "%s", h_slurp(waiter.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}

/* Sleeps until the server's clock reads AT_US (the host and the sandbox
 * share a clock; the server's is what counts). */
static void sleep_until_db(int64_t at_us)
{
	int64_t d = at_us - db_now_us();
	if (d > 0)
		h_sleep_ms((int)(d / 1000));
}

static int once(const char *lease, const char *log, const char *lock, struct h_proc *p)
{
	LR(p, "-n", "--once-per", "6s", "-l", lease, "--", h_probe(), log, lock, "0.1");
	return h_finish(p, 15000);
}

Test(operations, once_per_slot_starts_once_around_the_slot_and_again_in_the_next)
{
	struct h_proc p;
	const char *lease = h_lease("slot");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	const int64_t period = 6000000;
	/* The next slot time at least 2 s away: slots are multiples of the
	 * period from the epoch, a contender belongs to the nearest one. */
	int64_t slot = (db_now_us() + 2000000 + period - 1) / period * period;

	/* Fired 1 s early: takes the slot. */
	sleep_until_db(slot - 1000000);
	cr_assert_eq(once(lease, log, lock, &p), 0, "%s", h_slurp(p.err));
	/* Fired 1 s late: the same slot, skipped, and the message names it. */
	sleep_until_db(slot + 1000000);
	cr_assert_eq(once(lease, log, lock, &p), 75, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "already ran for the "), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), " slot, term "), "%s", h_slurp(p.err));
	/* The next slot (slot + 6 s), fired early and late: once again. */
	sleep_until_db(slot + period - 1000000);
	cr_assert_eq(once(lease, log, lock, &p), 0, "%s", h_slurp(p.err));
	sleep_until_db(slot + period + 1000000);
	cr_assert_eq(once(lease, log, lock, &p), 75, "%s", h_slurp(p.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", lease, NULL}), 0);
	cr_assert(strstr(h_slurp(p.out), "\"last_slot\": \"2"), "%s", h_slurp(p.out));
}

Test(operations, once_per_waiters_whose_slot_gets_used_exit_75)
{
	struct h_proc holder, w[2];
	const char *lease = h_lease("slotwait");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	int ran = 0, skipped = 0;

	/* A run without --once-per holds the lease; two cron waiters of one
	 * slot queue behind it. One takes the slot, the other then skips. */
	LR(&holder, "-l", lease, "--", h_probe(), log, lock, "1.5");
	cr_assert(h_wait_file(log, "start", 10000));
	for (int i = 0; i < 2; i++)
		LR(&w[i], "-w", "30s", "--once-per", "1h", "-l", lease, "--", h_probe(), log, lock, "0.5");
	cr_assert_eq(h_finish(&holder, 10000), 0, "%s", h_slurp(holder.err));
	for (int i = 0; i < 2; i++) {
		int st = h_finish(&w[i], 15000);
		cr_assert(st == 0 || st == 75, "waiter %d exited %d: %s", i, st, h_slurp(w[i].err));
		ran += st == 0;
		skipped += st == 75;
		if (st == 75)
			cr_assert(strstr(h_slurp(w[i].err), "already ran for the "), "%s", h_slurp(w[i].err));
	}
	cr_assert_eq(ran, 1);
	cr_assert_eq(skipped, 1);
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}

Test(operations, init_upgrades_a_schema_2_table_in_place_keeping_rows_and_terms)
{
	struct h_proc p;
	char table[64];
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};
	const char *use[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "-n", "-l", "up", "--", "true", NULL};
	const char *pause[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--pause", "other", NULL};

	snprintf(table, sizeof(table), "v2_%ld", (long)getpid());
	h_sql("CREATE TABLE %s (name VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "holder VARCHAR(255) NOT NULL DEFAULT '', term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
	      "acquired_at DATETIME(6) NULL, renewed_at DATETIME(6) NULL, "
	      "expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00', last_exit INT NULL, "
	      "finished_at DATETIME(6) NULL, PRIMARY KEY (name))",
	      table);
	h_sql("INSERT INTO %s (name, term, last_exit) VALUES ('up', 41, 3), ('other', 7, NULL)", table);
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "a new build stopped on an older table: %s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "from schema 2 to 7"), "%s", h_slurp(p.err));
	/* up's 42 is the run before the upgrade's. */
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(name, term ORDER BY name) FROM %s", table), "other7,up42");
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT term FROM %s WHERE name='up'", table), "43");
	/* Schema 4: the history table came with the upgrade, and the run is
	 * in it. */
	cr_assert_str_eq(h_sql("SELECT CONCAT(term, ' ', outcome) FROM %s_history WHERE lease='up'", table),
			 "43 exited");
	h_start(&p, pause, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* And once more: nothing left to do. */
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "upgraded"), "%s", h_slurp(p.err));
}

/* The lease table of schema 3, as sql/leaderrun.sql of leaderrun 0.1.x made
 * it (schema 4 adds only the history table next to it). */
static void create_schema_3_table(const char *table)
{
	h_sql("CREATE TABLE %s (name VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "holder VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '', "
	      "term BIGINT UNSIGNED NOT NULL DEFAULT 0, acquired_at DATETIME(6) NULL, renewed_at DATETIME(6) NULL, "
	      "expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00', last_exit INT NULL, "
	      "finished_at DATETIME(6) NULL, revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
	      "paused_until DATETIME(6) NULL, "
	      "paused_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '', "
	      "last_slot DATETIME(6) NULL, slot_term BIGINT UNSIGNED NULL, PRIMARY KEY (name)) ENGINE=InnoDB",
	      table);
}

static bool table_exists(const char *name)
{
	return strcmp(h_sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=DATABASE() AND "
			    "TABLE_NAME='%s'",
			    name),
		      "1") == 0;
}

static int count_char(const char *text, char c)
{
	int n = 0;
	for (; *text; text++)
		n += *text == c;
	return n;
}

/* A run on a lease table without its history: exits STATUS after renewing
 * a few times, and says, in one line and once, that the history is off and
 * what enables it. */
static void assert_runs_without_history(const char *dsn, const char *table, const char *lease, const char *why)
{
	struct h_proc p;
	/* A ttl of 3 s renews twice with half a second for each: one renew
	 * that a busy machine slowed past -t 1s's 166 ms would add its own
	 * two lines. */
	const char *argv[] = {h_bin(), "-d", dsn,  "--table",		table, "-t", "3s", "-l", lease,
			      "--",    "sh", "-c", "sleep 2.5; exit 4", NULL};

	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 4, "%s: %s", why, h_slurp(p.err));
	/* One line, and a second one about the fence where the user has
	 * no grant on it either (schema 3's sql/grants.sql). */
	cr_assert_eq(count_char(h_slurp(p.err), '\n') - (strstr(h_slurp(p.err), "the fence is off") != NULL), 1,
		     "%s: want one line:\n%s", why, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "run history off"), "%s: %s", why, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s: %s", why, h_slurp(p.err));
}

Test(operations, a_database_without_the_history_table_runs_leases_and_warns_once)
{
	struct h_proc p;
	char table[64], history[64], dsn[600];
	const char *lease = h_lease("s3");
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};

	snprintf(table, sizeof(table), "s3_%ld_lease", (long)getpid());
	snprintf(history, sizeof(history), "s3_%ld_history", (long)getpid());
	/* The lease table as --init makes it, its history dropped (an
	 * administrator who applied only the lease table's DDL). */
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	h_sql("DROP TABLE %s", history);
	/* Not upgraded yet, seen by a user that could create the table... */
	assert_runs_without_history(h_dsn_root(), table, lease, "root");
	/* ...and by the fleet's user with schema 3's grants (sql/grants.sql
	 * of 0.1: nothing on the history table), the usual case. */
	snprintf(dsn, sizeof(dsn), "%s", h_dsn());
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s TO '%s'@'127.0.0.1'", table, getenv("LR_DB_USER"));
	assert_runs_without_history(dsn, table, lease, "least privilege");
	cr_assert_str_eq(h_sql("SELECT CONCAT(term, ' ', last_exit) FROM %s WHERE name='%s'", table, lease), "2 4");
	cr_assert(!table_exists(history));
	/* The fleet's metrics still come, without the history's. */
	{
		const char *status[] = {h_bin(),    "-d",	dsn,	      "--table", table,
					"--status", "--format", "prometheus", NULL};
		h_start(&p, status, NULL);
		cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
		cr_assert(strstr(h_slurp(p.out), "leaderrun_status_history_available 0"), "%s", h_slurp(p.out));
		cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
	}
	/* The command the warning named turns the history on. */
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(table_exists(history));
	h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO '%s'@'127.0.0.1'", history, getenv("LR_DB_USER"));
	/* And the fence's grants (schema 7), without which a run says the
	 * fence is off. */
	h_sql("GRANT SELECT ON s3_%ld_fence TO '%s'@'127.0.0.1'", (long)getpid(), getenv("LR_DB_USER"));
	h_sql("GRANT EXECUTE ON PROCEDURE s3_%ld_fence_move TO '%s'@'127.0.0.1'", (long)getpid(), getenv("LR_DB_USER"));
	{
		const char *use[] = {h_bin(), "-d", dsn, "--table", table, "-l", lease, "--", "true", NULL};
		h_start(&p, use, NULL);
		cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
		cr_assert_str_eq(h_slurp(p.err), "", "the history is written: quiet");
	}
	{
		char sql[300];
		snprintf(sql, sizeof(sql),
			 "SELECT CONCAT(term, ' ', outcome, ' ', exit_status) FROM %s WHERE lease='%s'", history,
			 lease);
		wait_sql(sql, "3 exited 0");
	}
}

/* Every column of every row, for a before-and-after comparison. */
#define ROWS_OF                                                                                                        \
	"SELECT GROUP_CONCAT(CONCAT_WS('|', name, holder, term, IFNULL(acquired_at, '-'), "                            \
	"expires_at, IFNULL(last_exit, '-'), revoked_term, IFNULL(paused_until, '-'), paused_by, "                     \
	"IFNULL(last_slot, '-'), IFNULL(slot_term, '-')) ORDER BY name SEPARATOR ';') FROM %s"

Test(operations, init_upgrades_a_schema_3_table_to_5_keeping_rows_and_terms)
{
	struct h_proc p;
	char table[64], history[64], before[4096];
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};
	const char *use[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "-n", "-l", "up", "--", "true", NULL};

	snprintf(table, sizeof(table), "v3_%ld", (long)getpid());
	snprintf(history, sizeof(history), "v3_%ld_history", (long)getpid());
	create_schema_3_table(table);
	h_sql("INSERT INTO %s (name, holder, term, acquired_at, last_exit, revoked_term, last_slot, slot_term) VALUES "
	      "('up', 'h1', 41, '2026-01-02 03:04:05.123456', 3, 40, '2026-01-02 03:00:00', 41), "
	      "('other', '', 7, NULL, NULL, 0, NULL, NULL)",
	      table);
	h_sql("INSERT INTO %s (name, term, paused_until, paused_by) VALUES ('paused', 9, '9999-12-31 23:59:59', 'ops')",
	      table);
	snprintf(before, sizeof(before), "%s", h_sql(ROWS_OF, table));
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "from schema 3 to 7"), "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql(ROWS_OF, table), before, "a row changed");
	cr_assert(table_exists(history));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM %s", history), "0");
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.err), "", "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT term FROM %s WHERE name='up'", table), "42");
	{
		char sql[200];
		snprintf(sql, sizeof(sql), "SELECT CONCAT(term, ' ', outcome) FROM %s WHERE lease='up'", history);
		wait_sql(sql, "42 exited");
	}
	/* And once more: nothing left to do. */
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "upgraded"), "%s", h_slurp(p.err));
}

Test(operations, init_upgrades_a_schema_4_database_to_5_keeping_runs_and_terms)
{
	struct h_proc p;
	char table[64], history[64], before[4096];
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};
	const char *use[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "-n", "-l", "up", "--", "true", NULL};

	snprintf(table, sizeof(table), "v4_%ld_lease", (long)getpid());
	snprintf(history, sizeof(history), "v4_%ld_history", (long)getpid());
	create_schema_3_table(table);
	/* Schema 4's history, as sql/upgrade-3-to-4.sql made it. */
	h_sql("CREATE TABLE %s (lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "term BIGINT UNSIGNED NOT NULL, holder VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "host VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '', "
	      "started_at DATETIME(6) NOT NULL, ended_at DATETIME(6) NULL, outcome VARCHAR(16) NOT NULL DEFAULT '', "
	      "exit_status INT NULL, exit_signal INT NULL, PRIMARY KEY (lease, term)) ENGINE=InnoDB",
	      history);
	h_sql("INSERT INTO %s (name, holder, term) VALUES ('up', 'h1', 41), ('other', '', 7)", table);
	h_sql("INSERT INTO %s (lease, term, holder, started_at, ended_at, outcome, exit_status) VALUES "
	      "('up', 41, 'h1', '2026-01-02 03:04:05', '2026-01-02 03:04:06', 'exited', 0)",
	      history);
	/* Not upgraded: a run of this build runs (term 42), and says what to
	 * do. */
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "a new build stopped on an older table: %s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
	snprintf(before, sizeof(before), "%s", h_sql(ROWS_OF, table));
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "from schema 4 to 7"), "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql(ROWS_OF, table), before, "a row changed");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(CONCAT(slot, slots) ORDER BY name) FROM %s", table), "01,01");
	cr_assert_str_eq(h_sql("SELECT CONCAT(slot, ' ', term, ' ', outcome) FROM %s", history), "0 41 exited");
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT term FROM %s WHERE name='up'", table), "43");
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "upgraded"), "%s", h_slurp(p.err));
}
