/* Choosing the leader: --priority, --preempt, --release --to and --spread,
 * against the real binary and server, with probe.sh's flock as the overlap
 * checker wherever a lease changes hands. */
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* The lease's holder now ("" when not held), by the server's clock. */
static const char *holder_of(const char *lease)
{
	return h_sql("SELECT COALESCE(MAX(IF(expires_at > UTC_TIMESTAMP(6), holder, NULL)), '') FROM leaderrun_lease "
		     "WHERE name = '%s'",
		     lease);
}

/* Waits until HOLDER holds LEASE; fails the test after TIMEOUT_MS. */
static void wait_holder(const char *lease, const char *holder, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;

	while (strcmp(holder_of(lease), holder) != 0) {
		cr_assert(h_now_ms() < end, "%s does not hold %s (holder: '%s')", holder, lease, holder_of(lease));
		h_sleep_ms(50);
	}
}

/* Waits until LEASE has N standbys alive. */
static void wait_standbys(const char *lease, int n)
{
	int64_t end = h_now_ms() + 15000;

	while (atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND IS_USED_LOCK(lock_name) IS "
			  "NOT NULL AND holder <> (SELECT holder FROM leaderrun_lease WHERE name = '%s' AND slot = 0)",
			  lease, lease)) != n) {
		cr_assert(h_now_ms() < end, "not %d standbys of %s", n, lease);
		h_sleep_ms(50);
	}
}

/* Waits until probe.sh's LOG says N starts: a holder's command runs. */
static void wait_starts(const char *log, int n)
{
	int64_t end = h_now_ms() + 10000;

	for (;;) {
		const char *at = h_slurp(log);
		int k = 0;
		while ((at = strstr(at, "start ")) != NULL) {
			k++;
			at++;
		}
		if (k >= n)
			return;
		cr_assert(h_now_ms() < end, "not %d starts:\n%s", n, h_slurp(log));
		h_sleep_ms(20);
	}
}

static void stop(struct h_proc *p)
{
	kill(p->pid, SIGKILL);
	(void)h_wait(p, 10000);
}

Test(choose, the_highest_priority_live_candidate_wins_each_time_the_holder_is_killed)
{
	const char *lease = h_lease("prio"), *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc p1, p5, p10, again;

	LR(&p1, "-t", "2s", "-l", lease, "--holder", "p1", "--priority", "1", "--", h_probe(), log, lock, "60");
	wait_holder(lease, "p1", 10000);
	wait_starts(log, 1);
	LR(&p5, "-t", "2s", "-l", lease, "--holder", "p5", "--priority", "5", "--", h_probe(), log, lock, "60");
	LR(&p10, "-t", "2s", "-l", lease, "--holder", "p10", "--priority", "10", "--", h_probe(), log, lock, "60");
	wait_standbys(lease, 2);
	/* Killed, the holder's command dies with its watcher; the favourite
	 * takes the lease at its expiry, whoever the hint woke first. */
	stop(&p1);
	wait_holder(lease, "p10", 10000);
	wait_starts(log, 2);
	LR(&p1, "-t", "2s", "-l", lease, "--holder", "p1", "--priority", "1", "--", h_probe(), log, lock, "60");
	wait_standbys(lease, 2);
	stop(&p10);
	wait_holder(lease, "p5", 10000);
	wait_starts(log, 3);
	LR(&again, "-t", "2s", "-l", lease, "--holder", "p10", "--priority", "10", "--", h_probe(), log, lock, "60");
	wait_standbys(lease, 2);
	/* No --preempt: p10 waits for p5's end. */
	h_sleep_ms(3000);
	cr_assert_str_eq(holder_of(lease), "p5");
	stop(&p5);
	wait_holder(lease, "p10", 10000);
	wait_starts(log, 4);
	stop(&again);
	wait_holder(lease, "p1", 10000);
	wait_starts(log, 5);
	stop(&p1);
	/* p1, p10, p5, p10 again, p1: one at a time, terms growing. */
	cr_assert_eq(h_probe_check(log, NULL, NULL, 8), 5);
}

Test(choose, a_frozen_favourite_holds_the_lease_up_no_longer_than_its_claim)
{
	const char *lease = h_lease("frozen");
	struct h_proc holder, fav, low;
	int64_t killed, took;

	LR(&holder, "-t", "2s", "-l", lease, "--holder", "A", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&fav, "-t", "2s", "-l", lease, "--holder", "fav", "--priority", "10", "--", "sleep", "60");
	LR(&low, "-v", "-t", "2s", "-l", lease, "--holder", "low", "--priority", "1", "--", "sleep", "60");
	wait_standbys(lease, 2);
	/* Frozen: its session, and so its claim, lives on. */
	kill(fav.pid, SIGSTOP);
	killed = h_now_ms();
	stop(&holder);
	wait_holder(lease, "low", 15000);
	took = h_now_ms() - killed;
	/* The expiry (2 s), then the claim (max(2 s, 2 x 1 s)): not before,
	 * and not much after (about 4 s; bounded generously for a busy
	 * machine). */
	cr_assert_geq(took, 3500, "low took the lease %lld ms after the kill, inside the favourite's claim",
		      (long long)took);
	cr_assert_lt(took, 12000, "low waited %lld ms for a frozen favourite", (long long)took);
	cr_assert(h_wait_file(low.err, "lease free, but left to another candidate", 5000), "%s", h_slurp(low.err));
	kill(fav.pid, SIGCONT);
	stop(&fav);
	stop(&low);
}

Test(choose, preemption_with_fail_back_stops_the_holder_before_the_favourite_starts)
{
	const char *lease = h_lease("preempt"), *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc fav, low, back;
	unsigned long long terms[4];

	LR(&fav, "-t", "3s", "-l", lease, "--holder", "fav", "--priority", "10", "--preempt=1s", "--", h_probe(), log,
	   lock, "60");
	wait_holder(lease, "fav", 10000);
	LR(&low, "-t", "3s", "-l", lease, "--holder", "low", "--priority", "1", "--", h_probe(), log, lock, "60");
	wait_standbys(lease, 1);
	wait_starts(log, 1);
	stop(&fav);
	wait_holder(lease, "low", 10000);
	wait_starts(log, 2);
	/* The favourite comes back: after 1 s waiting it takes the lease
	 * over, and the holder's command is stopped first. */
	LR(&back, "-t", "3s", "-l", lease, "--holder", "fav", "--priority", "10", "--preempt=1s", "--", h_probe(), log,
	   lock, "60");
	wait_holder(lease, "fav", 15000);
	wait_starts(log, 3);
	cr_assert_eq(h_finish(&low, 10000), 76, "%s", h_slurp(low.err));
	cr_assert(strstr(h_slurp(low.err), "lease preempted by fav"), "%s", h_slurp(low.err));
	cr_assert(h_wait_file(back.err, "preempting low (its priority 1, ours 10)", 5000), "%s", h_slurp(back.err));
	cr_assert_str_eq(h_sql("SELECT outcome FROM leaderrun_history WHERE lease = '%s' AND holder = 'low'", lease),
			 "preempted");
	stop(&back);
	cr_assert_eq(h_probe_check(log, NULL, terms, 4), 3);
}

Test(choose, a_holder_of_a_higher_priority_is_not_preempted)
{
	const char *lease = h_lease("nopreempt");
	struct h_proc top, mid;

	LR(&top, "-t", "3s", "-l", lease, "--holder", "top", "--priority", "10", "--", "sleep", "60");
	wait_holder(lease, "top", 10000);
	LR(&mid, "-t", "3s", "-l", lease, "--holder", "mid", "--priority", "5", "--preempt=0", "-w", "4s", "--",
	   "true");
	cr_assert_eq(h_finish(&mid, 15000), 75, "%s", h_slurp(mid.err));
	cr_assert_str_eq(holder_of(lease), "top");
	cr_assert_str_eq(h_sql("SELECT revoked_term = term FROM leaderrun_lease WHERE name = '%s'", lease), "0");
	stop(&top);
}

Test(choose, release_to_a_named_standby_switches_over_and_exits_0)
{
	const char *lease = h_lease("switch"), *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc a, b, c, d, op;
	char term_before[32];

	LR(&a, "-l", lease, "--holder", "A", "--", h_probe(), log, lock, "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-l", lease, "--holder", "B", "--priority", "5", "--", h_probe(), log, lock, "60");
	LR(&c, "-l", lease, "--holder", "C", "--priority", "1", "--", h_probe(), log, lock, "60");
	LR(&d, "-l", lease, "--holder", "D", "--", h_probe(), log, lock, "60");
	wait_standbys(lease, 3);
	snprintf(term_before, sizeof(term_before), "%s",
		 h_sql("SELECT term FROM leaderrun_lease WHERE name = '%s'", lease));
	/* D has the lowest priority: only the choice gets it the lease. */
	LR(&op, "--release", lease, "--to", "D");
	cr_assert_eq(h_finish(&op, 30000), 0, "%s%s", h_slurp(op.out), h_slurp(op.err));
	cr_assert_str_eq(holder_of(lease), "D");
	wait_starts(log, 2);
	cr_assert(strstr(h_slurp(op.out), "switched over lease "), "%s", h_slurp(op.out));
	cr_assert_gt(atoll(h_sql("SELECT term FROM leaderrun_lease WHERE name = '%s'", lease)), atoll(term_before));
	cr_assert_eq(h_finish(&a, 10000), 76, "%s", h_slurp(a.err));
	cr_assert(strstr(h_slurp(a.err), "lease switched over to D"), "%s", h_slurp(a.err));
	cr_assert_str_eq(h_sql("SELECT outcome FROM leaderrun_history WHERE lease = '%s' AND holder = 'A'", lease),
			 "switched_over");
	/* A stops at its next renew and releases; B, woken first, and C,
	 * behind it, hand on to D at once, not at a poll (15 s at the default
	 * ttl). By the server's clock, from A's end to D's start: a time from
	 * here would count this machine's load. */
	cr_assert_lt(
	    atof(h_sql("SELECT TIMESTAMPDIFF(MICROSECOND, a.ended_at, d.started_at) / 1e6 FROM "
		       "leaderrun_history a JOIN leaderrun_history d ON d.lease = a.lease WHERE a.lease = '%s' "
		       "AND a.holder = 'A' AND d.holder = 'D'",
		       lease)),
	    5.0, "D started long after A's release");
	stop(&b);
	stop(&c);
	stop(&d);
	cr_assert_eq(h_probe_check(log, NULL, NULL, 4), 2);
}

Test(choose, a_switch_over_is_spent_once_the_chosen_standby_holds_the_lease)
{
	const char *lease = h_lease("spent");
	struct h_proc a, b, f, op;

	/* Services: a preempted one stands by again, and would take the
	 * lease back while the choice of it ran. */
	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--service", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-t", "3s", "-l", lease, "--holder", "B", "--service", "--", "sleep", "60");
	LR(&f, "-t", "3s", "-l", lease, "--holder", "F", "--priority", "10", "--preempt=4s", "--service", "--", "sleep",
	   "60");
	wait_standbys(lease, 2);
	LR(&op, "--release", lease, "--to", "B");
	cr_assert_eq(h_finish(&op, 30000), 0, "%s%s", h_slurp(op.out), h_slurp(op.err));
	/* F's --preempt then takes the lease from B, and keeps it: the
	 * choice of B ended with B's term, not at its window's end. */
	wait_holder(lease, "F", 12000);
	h_sleep_ms(3000);
	cr_assert_str_eq(holder_of(lease), "F");
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_history WHERE lease = '%s' AND holder = 'B'", lease),
			 "1");
	stop(&a);
	stop(&b);
	stop(&f);
}

Test(choose, a_preemption_after_a_spent_switch_over_is_said_as_a_preemption)
{
	const char *lease = h_lease("label"), *flag = h_path("unhealthy");
	struct h_proc a, b, c, f, op;
	char check[300];
	struct h_proc *y;

	snprintf(check, sizeof(check), "test ! -e %s", flag);
	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--service", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-t", "3s", "-l", lease, "--holder", "B", "--health-cmd", check, "--health-interval", "100ms",
	   "--health-retries", "1", "--service", "--", "sleep", "60");
	LR(&c, "-t", "3s", "-l", lease, "--holder", "C", "--service", "--", "sleep", "60");
	wait_standbys(lease, 2);
	for (int64_t end = h_now_ms() + 10000;
	     strcmp(h_sql("SELECT COALESCE(MAX(healthy), 0) FROM leaderrun_standby WHERE lease = '%s' AND holder = 'B'",
			  lease),
		    "1") != 0;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "B is not a healthy standby");
	LR(&op, "--release", lease, "--to", "B");
	cr_assert_eq(h_finish(&op, 30000), 0, "%s%s", h_slurp(op.out), h_slurp(op.err));
	/* B steps down, alive, its choice spent by its term; another leads. */
	fclose(fopen(flag, "w"));
	for (int64_t end = h_now_ms() + 10000; strcmp(holder_of(lease), "A") != 0 && strcmp(holder_of(lease), "C") != 0;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "nobody took over from B (holder '%s')", holder_of(lease));
	y = strcmp(holder_of(lease), "A") == 0 ? &a : &c;
	LR(&f, "-t", "3s", "-l", lease, "--holder", "F", "--priority", "10", "--preempt=0", "--service", "--", "sleep",
	   "60");
	wait_holder(lease, "F", 10000);
	cr_assert(strstr(h_slurp(y->err), "lease preempted by F"), "%s", h_slurp(y->err));
	stop(&a);
	stop(&b);
	stop(&c);
	stop(&f);
}

Test(choose, release_to_a_name_that_is_not_waiting_exits_75_and_changes_nothing)
{
	const char *lease = h_lease("switchnone");
	struct h_proc a, b, op;
	char before[128];

	LR(&a, "-l", lease, "--holder", "A", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-l", lease, "--holder", "B", "--", "sleep", "60");
	wait_standbys(lease, 1);
	snprintf(
	    before, sizeof(before), "%s",
	    h_sql("SELECT CONCAT(holder, ' ', term, ' ', revoked_term) FROM leaderrun_lease WHERE name = '%s'", lease));
	LR(&op, "--release", lease, "--to", "nobody");
	cr_assert_eq(h_finish(&op, 10000), 75, "%s", h_slurp(op.err));
	cr_assert(strstr(h_slurp(op.err), "no standby 'nobody' waits for lease"), "%s", h_slurp(op.err));
	/* The holder itself is no standby either. */
	LR(&op, "--release", lease, "--to", "A");
	cr_assert_eq(h_finish(&op, 10000), 75, "%s", h_slurp(op.err));
	cr_assert_str_eq(
	    h_sql("SELECT CONCAT(holder, ' ', term, ' ', revoked_term) FROM leaderrun_lease WHERE name = '%s'", lease),
	    before);
	cr_assert_str_eq(
	    h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND chosen_until IS NOT NULL", lease),
	    "0");
	stop(&a);
	stop(&b);
}

Test(choose, twenty_spread_leases_on_four_hosts_leave_no_host_more_than_eight)
{
	static struct h_proc p[20][4];
	char lease[20][64], host[8];
	int per_host[4] = {0};

	for (int l = 0; l < 20; l++)
		snprintf(lease[l], sizeof(lease[l]), "%s-%d", h_lease("spread"), l);
	/* All at once: each host's run of each lease. */
	for (int l = 0; l < 20; l++)
		for (int k = 0; k < 4; k++) {
			snprintf(host, sizeof(host), "h%d", k);
			LR(&p[l][k], "-n", "--spread", "-l", lease[l], "--holder", host, "--", "sleep", "4");
		}
	for (int l = 0; l < 20; l++) {
		int ran = 0;
		for (int k = 0; k < 4; k++) {
			int rc = h_finish(&p[l][k], 30000);
			cr_assert(rc == 0 || rc == 75, "lease %d host %d: %d %s", l, k, rc, h_slurp(p[l][k].err));
			if (rc == 0) {
				ran++;
				per_host[k]++;
			}
		}
		cr_assert_eq(ran, 1, "lease %d ran %d times", l, ran);
	}
	for (int k = 0; k < 4; k++)
		cr_assert_leq(per_host[k], 8, "host h%d took %d of the 20 leases (%d %d %d %d)", k, per_host[k],
			      per_host[0], per_host[1], per_host[2], per_host[3]);
}

Test(choose, a_waiting_candidate_with_a_priority_costs_what_a_plain_one_does)
{
	const char *lease = h_lease("prio-cost");
	struct h_proc holder, waiter;
	long n;

	LR(&holder, "-l", lease, "--holder", "A", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&waiter, "-l", lease, "--holder", "W", "--priority", "5", "--preempt", "--", "true");
	wait_standbys(lease, 1);
	for (int64_t end = h_now_ms() + 15000; h_hint_waiters(lease) < 1;)
		cr_assert(h_now_ms() < end, "the candidate never waits on the hint");
	/* At the default ttl (15 s): a look a ttl at most, 0.2 a second. */
	n = h_follower_statements(lease, 20);
	cr_assert_leq(n, 4, "a waiting candidate with --priority and --preempt sent %ld statements in 20 s", n);
	stop(&holder);
	stop(&waiter);
}

Test(choose, preempt_without_a_priority_is_a_usage_error)
{
	struct h_proc p;

	LR(&p, "--preempt", "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 64);
	cr_assert(strstr(h_slurp(p.err), "give this candidate --priority N"), "%s", h_slurp(p.err));
	LR(&p, "--priority", "high", "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 64);
	cr_assert(strstr(h_slurp(p.err), "--priority 'high' must be a whole number"), "%s", h_slurp(p.err));
	LR(&p, "--release", "x", "--to", "B", "--force");
	cr_assert_eq(h_finish(&p, 10000), 64);
}

Test(choose, init_gives_a_standbys_table_of_0_9_the_columns_of_priority)
{
	struct h_proc p;

	h_sql("CREATE TABLE old_standby LIKE leaderrun_standby");
	h_sql("ALTER TABLE old_standby DROP COLUMN priority, DROP COLUMN chosen_until, DROP COLUMN chosen_term, "
	      "DROP COLUMN preempt_term, "
	      "DROP COLUMN spread");
	h_sql("CREATE TABLE old_lease LIKE leaderrun_lease");
	h_start(&p, (const char *const[]){h_bin(), "-d", h_dsn_root(), "--table", "old_lease", "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
			       "TABLE_NAME = 'old_standby' AND COLUMN_NAME IN ('priority', 'chosen_until', "
			       "'chosen_term', 'preempt_term', 'spread')"),
			 "5");
}

/* Issue 51, findings 5 and 6: an account with exactly sql/grants.sql's
 * rights, which may write the standbys' table (and insert lease rows),
 * holding a GET_LOCK ('x' in the issue) as a live standby's session would. */
static void grants_sql_account(void)
{
	const char *db = getenv("LR_DB_NAME"), *to = "TO 'lr_claims'@'localhost'";

	h_sql("CREATE USER IF NOT EXISTS 'lr_claims'@'localhost' IDENTIFIED BY 'claims-pw'");
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s.leaderrun_lease %s", db, to);
	h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leaderrun_history %s", db, to);
	h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leaderrun_standby %s", db, to);
	h_sql("GRANT SELECT ON %s.leaderrun_fence %s", db, to);
	h_sql("GRANT EXECUTE ON PROCEDURE %s.leaderrun_fence_move %s", db, to);
	h_sql("GRANT EXECUTE ON PROCEDURE %s.leaderrun_fence_end %s", db, to);
}

/* That account's session, in the background: a GET_LOCK, then SQL,
 * then REFRESH (or nothing) every 0.5 s for 40 s, the lock held all along. */
static void hostile_session(struct h_proc *p, const char *sql, const char *refresh)
{
	static char script[16384], sock[300];
	/* The lock's name is the test's own (the last test's session may
	 * not have ended yet); which name does not matter. */
	size_t n = (size_t)snprintf(script, sizeof(script), "SELECT GET_LOCK('x-%d', 10); %s; ", (int)getpid(), sql);

	for (int k = 0; k < 80 && n < sizeof(script) - 400; k++)
		n += (size_t)snprintf(script + n, sizeof(script) - n, "%s%sDO SLEEP(0.5); ", refresh ? refresh : "",
				      refresh ? "; " : "");
	snprintf(sock, sizeof(sock), "--socket=%s", getenv("LR_DB_SOCKET"));
	h_start(p,
		(const char *const[]){"/usr/bin/mariadb", "--no-defaults", sock, "-ulr_claims", "-pclaims-pw", "-N",
				      getenv("LR_DB_NAME"), "-e", script, NULL},
		NULL);
}

/* A holds LEASE, B waits (--retry-interval RETRY); the account writes a
 * standby row of LEASE (COLS, then VALUES) under its lock, refreshing it
 * with REFRESH; an operator's --release. Returns how long after the lease
 * came free B held it; fails past LIMIT_MS. */
static int64_t held_back(const char *lease, const char *retry, const char *cols, const char *values,
			 const char *refresh, int limit_ms)
{
	struct h_proc a, b, evil, rel;
	char sql[1024];
	int64_t end, free_at;

	grants_sql_account();
	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-v", "-t", "3s", "--retry-interval", retry, "-l", lease, "--holder", "B", "--", "sleep", "60");
	cr_assert(h_wait_file(b.err, "waiting: held by A", 10000), "%s", h_slurp(b.err));
	snprintf(sql, sizeof(sql),
		 "INSERT INTO leaderrun_standby (lease, holder, host, since, healthy, lock_name%s) VALUES ('%s', "
		 "'evil', 'evil', UTC_TIMESTAMP(6), TRUE, 'x-%d'%s)",
		 cols, lease, (int)getpid(), values);
	hostile_session(&evil, sql, refresh);
	end = h_now_ms() + 10000;
	while (atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND holder = 'evil' AND "
			  "IS_USED_LOCK(lock_name) IS NOT NULL",
			  lease)) != 1) {
		cr_assert(h_now_ms() < end, "the hostile row is not there:\n%s", h_slurp(evil.err));
		h_sleep_ms(50);
	}
	LR(&rel, "--release", lease);
	cr_assert_eq(h_finish(&rel, 10000), 0, "%s", h_slurp(rel.err));
	end = h_now_ms() + 10000;
	while (strcmp(holder_of(lease), "A") == 0) {
		cr_assert(h_now_ms() < end, "A did not give the lease back");
		h_sleep_ms(20);
	}
	free_at = h_now_ms();
	wait_holder(lease, "B", limit_ms);
	end = h_now_ms() - free_at;
	cr_log_info("%s: B took the lease %lld ms after it came free", lease, (long long)end);
	stop(&evil);
	stop(&a);
	stop(&b);
	return end;
}

/* Seen failing on 0fe1266: the lease stayed free for the 12 s allowed. */
Test(choose, a_favourite_row_refreshed_under_a_held_lock_holds_a_released_lease_no_longer_than_the_claim)
{
	const char *lease = h_lease("evil-prio");
	char refresh[256];

	snprintf(refresh, sizeof(refresh),
		 "UPDATE leaderrun_standby SET since = UTC_TIMESTAMP(6) WHERE lease = '%s' AND holder = 'evil'", lease);
	/* The claim: max(2 s, 2 x 1 s), from the moment it came free. */
	cr_assert_lt(held_back(lease, "1s", ", priority", ", 1000000", refresh, 12000), 6000);
}

/* Seen failing on 0fe1266: the lease stayed free for the 16 s allowed. */
Test(choose, a_choice_of_a_term_that_never_comes_holds_a_released_lease_back_no_longer_than_10_s)
{
	const char *lease = h_lease("evil-chosen");

	cr_assert_lt(held_back(lease, "1s", ", chosen_until, chosen_term",
			       ", UTC_TIMESTAMP(6) + INTERVAL 23 HOUR, 18446744073709551615", NULL, 16000),
		     3000);
}

/* The same choice for the term that holds the lease now: spent 10 s past
 * the term's end. Seen failing on 0fe1266: the lease stayed free. */
Test(choose, a_forged_choice_of_the_term_holds_a_released_lease_back_no_longer_than_10_s)
{
	const char *lease = h_lease("evil-term");
	char values[256];

	snprintf(values, sizeof(values),
		 ", UTC_TIMESTAMP(6) + INTERVAL 23 HOUR, (SELECT term FROM leaderrun_lease WHERE name = '%s' AND "
		 "slot = 0)",
		 lease);
	cr_assert_lt(held_back(lease, "1s", ", chosen_until, chosen_term", values, NULL, 20000), 14000);
}

/* --priority's range is -1000000 to 1000000. B's claim would be 6 s (2 x
 * its --retry-interval). Seen failing on 0fe1266: 6 s. */
Test(choose, a_priority_outside_the_options_range_claims_nothing)
{
	const char *lease = h_lease("evil-range");

	cr_assert_lt(held_back(lease, "3s", ", priority", ", 2147483647", NULL, 12000), 3000);
}

/* Waits until LEASE has N rows in the lease table. */
static void wait_rows(const char *lease, int n)
{
	int64_t end = h_now_ms() + 10000;

	while (atoi(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name = '%s'", lease)) != n) {
		cr_assert(h_now_ms() < end, "not %d rows of %s", n, lease);
		h_sleep_ms(50);
	}
}

/* How many times NEEDLE is in HAY. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Finding 6: a slot-1 row of 2 slots, inserted beside a one-slot lease.
 * Seen failing on 0fe1266: both standbys exited 64 ("this lease runs with
 * --slots 2"), the service's stopped. */
Test(choose, a_slot_row_of_another_count_is_ignored_with_one_warning_and_stops_no_standby)
{
	const char *lease = h_lease("evil-slots"), *warned = "ignored";
	struct h_proc a, b, svc, evil, rel;
	char sql[512];
	int64_t end;

	grants_sql_account();
	LR(&a, "-t", "2s", "-l", lease, "--holder", "A", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-v", "-t", "2s", "-l", lease, "--holder", "B", "--", "sleep", "60");
	LR(&svc, "-v", "-t", "2s", "-l", lease, "--holder", "S", "--service", "--", "sleep", "60");
	cr_assert(h_wait_file(b.err, "waiting: held by A", 10000), "%s", h_slurp(b.err));
	cr_assert(h_wait_file(svc.err, "waiting: held by A", 10000), "%s", h_slurp(svc.err));
	snprintf(sql, sizeof(sql), "INSERT INTO leaderrun_lease (name, slot, slots) VALUES ('%s', 1, 2)", lease);
	hostile_session(&evil, sql, NULL);
	cr_assert(h_wait_file(b.err, warned, 10000), "%s", h_slurp(b.err));
	/* A few looks more (a look at each expiry, 2 s): still waiting. */
	h_sleep_ms(5000);
	cr_assert(h_alive(b.pid) && h_alive(svc.pid), "B:\n%s\nS:\n%s", h_slurp(b.err), h_slurp(svc.err));
	LR(&rel, "--release", lease);
	cr_assert_eq(h_finish(&rel, 10000), 0, "%s", h_slurp(rel.err));
	end = h_now_ms() + 10000;
	while (strcmp(holder_of(lease), "B") != 0 && strcmp(holder_of(lease), "S") != 0) {
		cr_assert(h_now_ms() < end, "nobody took the lease:\nB:\n%s\nS:\n%s", h_slurp(b.err), h_slurp(svc.err));
		h_sleep_ms(50);
	}
	cr_assert(h_alive(b.pid) && h_alive(svc.pid), "B:\n%s\nS:\n%s", h_slurp(b.err), h_slurp(svc.err));
	cr_assert_eq(count_of(h_slurp(b.err), warned), 1, "%s", h_slurp(b.err));
	cr_assert_eq(count_of(h_slurp(svc.err), warned), 1, "%s", h_slurp(svc.err));
	stop(&evil);
	stop(&a);
	stop(&b);
	stop(&svc);
}

/* The same stray row, held for a day by its expiry, when the fleet moves
 * to --slots 2 while no slot is held: it holds no slot of the count in
 * force, so the change goes on. Seen failing on 09232df: exit 64 ("this
 * lease runs with --slots 2 (1 held now)"). */
Test(choose, a_held_slot_row_of_another_count_does_not_refuse_a_change_of_slots)
{
	const char *lease = h_lease("evil-change");
	struct h_proc p, evil;
	char sql[512];

	grants_sql_account();
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	snprintf(sql, sizeof(sql),
		 "INSERT INTO leaderrun_lease (name, slot, slots, holder, expires_at) VALUES ('%s', 1, 2, 'evil', "
		 "UTC_TIMESTAMP(6) + INTERVAL 1 DAY)",
		 lease);
	hostile_session(&evil, sql, NULL);
	wait_rows(lease, 2);
	LR(&p, "-n", "--slots", "2", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	stop(&evil);
}
HARNESS_MAIN

/* Waits until HOLDER stands by for LEASE, alive (its promote's back-off
 * over). */
static void wait_standby_named(const char *lease, const char *holder)
{
	int64_t end = h_now_ms() + 15000;

	while (strcmp(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND holder = '%s' AND "
			    "IS_USED_LOCK(lock_name) IS NOT NULL",
			    lease, holder),
		      "1") != 0) {
		cr_assert(h_now_ms() < end, "%s does not stand by for %s", holder, lease);
		h_sleep_ms(50);
	}
}

/* The chosen standby takes the lease, its promote fails at once, and it
 * lets go before the operator's look sees it: the switch-over happened,
 * said the same way each time (it was exit 1 after the whole window, or
 * exit 0 when a look caught the short hold). The operator is stopped
 * (SIGSTOP) from its first look until B has let go, so that no look of
 * its can catch B's hold: what it must say then is pinned, not a race. */
Test(choose, release_to_a_standby_whose_promote_fails_at_once_says_its_term_and_that_it_let_go)
{
	const char *lease = h_lease("letgo");
	struct h_proc a, b, c;

	/* Each demotes and stands by again, its service left running. */
	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--on-demote", "true", "--service", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-t", "3s", "-l", lease, "--holder", "B", "--on-promote", "exit 1", "--on-demote", "true", "--service",
	   "--", "sleep", "60");
	LR(&c, "-t", "3s", "-l", lease, "--holder", "C", "--on-demote", "true", "--service", "--", "sleep", "60");
	for (int i = 0; i < 3; i++) {
		struct h_proc op;
		char said[160], b_term[32];
		int64_t t0;
		int rc;

		wait_standby_named(lease, "B");
		for (int64_t end = h_now_ms() + 10000; !*holder_of(lease) || !strcmp(holder_of(lease), "B");
		     h_sleep_ms(50))
			cr_assert(h_now_ms() < end, "round %d: nobody but B holds %s", i, lease);
		snprintf(
		    b_term, sizeof(b_term), "%s",
		    h_sql("SELECT COALESCE(MAX(term), 0) FROM leaderrun_history WHERE lease = '%s' AND holder = 'B'",
			  lease));
		t0 = h_now_ms();
		LR(&op, "--release", lease, "--to", "B");
		/* Its first look follows the revoke at once, before the holder's
		 * next renew can even see the revoke. */
		cr_assert(h_wait_file(op.out, "revoked lease", 10000), "round %d: %s", i, h_slurp(op.err));
		kill(op.pid, SIGSTOP);
		for (int64_t end = h_now_ms() + 10000;
		     atoll(h_sql("SELECT COALESCE(MAX(term), 0) FROM leaderrun_history WHERE lease = '%s' AND holder = "
				 "'B'",
				 lease)) <= atoll(b_term) ||
		     !strcmp(holder_of(lease), "B");
		     h_sleep_ms(20))
			cr_assert(h_now_ms() < end, "round %d: B did not take and let go of %s", i, lease);
		kill(op.pid, SIGCONT);
		rc = h_finish(&op, 30000);
		cr_assert_eq(rc, 0, "round %d: exit %d: %s", i, rc, h_slurp(op.err));
		/* Well before the old wait's end: the holder's expiry (up to 3 s)
		 * + 10 s + 1 s. */
		cr_assert_lt(h_now_ms() - t0, 9000, "round %d took %lld ms: %s", i, (long long)(h_now_ms() - t0),
			     h_slurp(op.err));
		snprintf(b_term, sizeof(b_term), "%s",
			 h_sql("SELECT MAX(term) FROM leaderrun_history WHERE lease = '%s' AND holder = 'B'", lease));
		snprintf(said, sizeof(said), "switched over lease %s to B (term %s)", lease, b_term);
		cr_assert(strstr(h_slurp(op.out), said), "round %d: no '%s' in:\n%s", i, said, h_slurp(op.out));
		snprintf(said, sizeof(said), "standby B has since let go of lease %s", lease);
		cr_assert(strstr(h_slurp(op.err), said), "round %d: no '%s' in:\n%s", i, said, h_slurp(op.err));
	}
	stop(&a);
	stop(&b);
	stop(&c);
}

/* The chosen standby dies before it takes the lease, and another takes
 * the next term: the choice is spent, so the operator says so at once,
 * not after the holder's expiry + 10 s + 1 s. */
Test(choose, release_to_a_standby_that_another_term_overtakes_exits_1_at_once)
{
	const char *lease = h_lease("overtaken");
	struct h_proc a, b, c, op;
	char said[160];
	int64_t t0;
	int rc;

	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--service", "--", "sleep", "60");
	wait_holder(lease, "A", 10000);
	LR(&b, "-t", "3s", "-l", lease, "--holder", "B", "--service", "--", "sleep", "60");
	LR(&c, "-t", "3s", "-l", lease, "--holder", "C", "--service", "--", "sleep", "60");
	wait_standbys(lease, 2);
	t0 = h_now_ms();
	LR(&op, "--release", lease, "--to", "B");
	cr_assert(h_wait_file(op.out, "revoked lease", 10000), "%s", h_slurp(op.err));
	/* The operator stopped until C holds: its looks see the row only then. */
	kill(op.pid, SIGSTOP);
	stop(&b);
	wait_holder(lease, "C", 10000);
	kill(op.pid, SIGCONT);
	rc = h_finish(&op, 30000);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, h_slurp(op.err));
	cr_assert_lt(h_now_ms() - t0, 9000, "took %lld ms", (long long)(h_now_ms() - t0));
	snprintf(said, sizeof(said),
		 "standby B did not take lease %s (the run history has no term of its above 1): held by C", lease);
	cr_assert(strstr(h_slurp(op.err), said), "no '%s' in:\n%s", said, h_slurp(op.err));
	stop(&a);
	stop(&c);
}
