/* Waiting at scale: followers block on the leader's wake-up hint
 * up to the expiry the row reported, and wake when the lease can change. */
#include <signal.h>

#include "harness.h"
#include "lease/lease.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static unsigned long long term_of(const char *lease)
{
	return strtoull(h_sql("SELECT term FROM leaderrun_lease WHERE name='%s'", lease), NULL, 10);
}

/* How many of P[0..N) logged a wake-up by the hint (-vv). */
static int woken(struct h_proc *p, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += strstr(h_slurp(p[i].err), "woken by the hint") != NULL;
	return k;
}

static void stop_all(struct h_proc *p, int n)
{
	for (int i = 0; i < n; i++)
		if (p[i].status < 0 && h_alive(p[i].pid))
			kill(p[i].pid, SIGTERM);
	for (int i = 0; i < n; i++)
		h_finish(&p[i], 20000);
}

/* Waits until N followers block on LEASE's hint (each look samples for a
 * second); returns how many the last look saw. */
static int wait_blocked(const char *lease, int n, int timeout_ms)
{
	int blocked;

	for (int64_t end = h_now_ms() + timeout_ms; (blocked = h_hint_waiters(lease)) != n && h_now_ms() < end;)
		continue;
	return blocked;
}

/* Waits until LEASE is held (a first term written). */
static void wait_held(const char *lease)
{
	for (int64_t end = h_now_ms() + 10000; term_of(lease) == 0; h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "nobody took %s", lease);
}

Test(waiting, holder_killed_wakes_exactly_one_follower_and_the_others_keep_blocking)
{
	const char *lease = h_lease("killed");
	struct h_proc holder, f[4];
	unsigned long long term;
	int64_t t0;
	int blocked;

	LR(&holder, "-t", "12s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 120");
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	/* Frozen, it renews no more but keeps its session and the hint: the
	 * row's expiry, 8 to 12 s away, is fixed before the followers first
	 * look, so each blocks up to just past it and none times out (and
	 * polls) between the kill below and the expiry. */
	cr_assert_eq(kill(holder.pid, SIGSTOP), 0);
	term = term_of(lease);
	for (int i = 0; i < 4; i++)
		LR(&f[i], "-t", "12s", "-vv", "-l", lease, "--", "sleep", "120");
	for (int64_t end = h_now_ms() + 5000; (blocked = h_hint_waiters(lease)) != 4 && h_now_ms() < end;)
		continue; /* each look samples for a second */
	cr_assert_eq(blocked, 4, "the followers block on the leader's hint");
	cr_assert_eq(kill(holder.pid, SIGKILL), 0);
	t0 = h_now_ms();
	h_wait(&holder, 5000);
	for (int64_t end = h_now_ms() + 3000; woken(f, 4) == 0; h_sleep_ms(20))
		cr_assert(h_now_ms() < end, "no follower woke");
	/* Before the expiry: one follower holds the dead leader's hint, the
	 * others still block behind it (for the second of looks, after
	 * which no other has woken). */
	cr_assert_eq(h_hint_waiters(lease), 3, "the other three keep blocking");
	cr_assert_eq(woken(f, 4), 1, "exactly one follower woke");
	/* After the expiry the woken one leads, and the others block on its
	 * hint again. */
	while (term_of(lease) == term && h_now_ms() - t0 < 15000)
		h_sleep_ms(50);
	cr_assert_gt(term_of(lease), term, "nobody took over within the ttl");
	cr_assert_eq(wait_blocked(lease, 3, 5000), 3, "the others block on the new leader's hint");
	cr_assert_eq(woken(f, 4), 1, "still exactly one follower woke");
	stop_all(f, 4);
}

Test(waiting, frozen_holder_with_its_session_open_is_taken_over_after_expiry)
{
	const char *lease = h_lease("frozen");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc holder, f[2];
	unsigned long long term;
	int64_t t0, took;

	LR(&holder, "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "60");
	cr_assert(h_wait_file(log, "start", 10000));
	term = term_of(lease);
	for (int i = 0; i < 2; i++)
		LR(&f[i], "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	cr_assert_eq(wait_blocked(lease, 2, 10000), 2, "the followers block on the holder's hint");
	/* Frozen: its session (and hint) stays open; only the expiry ends the
	 * followers' wait. Its watcher stops the command at the deadline. */
	cr_assert_eq(kill(holder.pid, SIGSTOP), 0);
	t0 = h_now_ms();
	while (term_of(lease) == term && h_now_ms() - t0 < 20000)
		h_sleep_ms(20);
	took = h_now_ms() - t0;
	cr_assert_gt(term_of(lease), term, "nobody took over from the frozen holder");
	/* The row expires within the ttl of the last renew; + 1 s, + slack
	 * for a busy machine (the overlap check below is the strict part). */
	cr_assert_lt(took, 3000 + 1000 + 5000, "takeover took %lld ms", (long long)took);
	kill(holder.pid, SIGCONT);
	cr_assert_eq(h_finish(&holder, 20000), 76, "%s", h_slurp(holder.err));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(h_finish(&f[i], 20000), 0, "%s", h_slurp(f[i].err));
	cr_assert_geq(h_probe_check(log, NULL, NULL, 3), 2);
}

Test(waiting, release_revokes_and_a_follower_takes_over_within_the_stated_bound)
{
	/* man leaderrun(1), --release: a follower takes over within a renew
	 * interval plus --kill-grace of the revocation, plus round trips.
	 * ttl 6s: renew 2 s, grace 1.5 s; its expiry would be 4-6 s away. */
	const char *lease = h_lease("revoked");
	struct h_proc holder, f, op;
	unsigned long long term;
	int64_t t0, took;

	const char *by;

	LR(&holder, "-t", "6s", "-l", lease, "--", "sleep", "120");
	wait_held(lease);
	term = term_of(lease);
	LR(&f, "-t", "6s", "-l", lease, "--", "sh", "-c", "echo took; sleep 1");
	cr_assert_eq(wait_blocked(lease, 1, 10000), 1, "the follower blocks on the holder's hint");
	t0 = h_now_ms();
	LR(&op, "--release", lease);
	cr_assert_eq(h_finish(&op, 30000), 0, "%s", h_slurp(op.err));
	cr_assert(h_wait_file(f.out, "took", 10000), "the follower never took over");
	took = h_now_ms() - t0;
	cr_assert_gt(term_of(lease), term);
	/* Strictly: before the expiry the revoked holder last wrote, by the
	 * server's clock (an expiry would let it in at it or after). The time
	 * here, generously: it counts this machine's load. */
	by = strstr(h_slurp(op.out), "at the latest by ");
	cr_assert(by, "%s", h_slurp(op.out));
	cr_assert_str_eq(h_sql("SELECT acquired_at < STR_TO_DATE('%.27s', '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ') FROM "
			       "leaderrun_lease WHERE name='%s'",
			       by + strlen("at the latest by "), lease),
			 "1", "the follower took over at the revoked holder's expiry: %s", h_slurp(op.out));
	cr_assert_lt(took, 2000 + 1500 + 5000, "the follower took %lld ms", (long long)took);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&f, 10000), 0, "%s", h_slurp(f.err));
}

Test(waiting, long_wait_costs_no_more_statements_than_the_bound)
{
	/* man leaderrun(1), CONNECTIONS AND LOAD: behind a healthy holder a
	 * follower sends at most two statements (a look and the blocked
	 * GET_LOCK) per ttl minus renew interval. ttl 3s, renew 1 s: a cycle
	 * is at least 2 s long. Counted per session in the general log. */
	const char *lease = h_lease("cost");
	struct h_proc holder, f;
	const int window_s = 12;
	long n;

	LR(&holder, "-t", "3s", "-l", lease, "--", "sleep", "120");
	wait_held(lease);
	LR(&f, "-t", "3s", "-l", lease, "--", "true");
	cr_assert_eq(wait_blocked(lease, 1, 10000), 1, "the follower blocks on the holder's hint");
	n = h_follower_statements(lease, window_s);
	/* A cycle in flight at each end of the window: + 1. */
	cr_assert_leq(n, 2 * (window_s / 2 + 1), "%ld statements in %d s", n, window_s);
	cr_assert_geq(n, 2, "the follower never looked: %ld", n);
	kill(f.pid, SIGTERM);
	kill(holder.pid, SIGTERM);
	h_finish(&f, 10000);
	h_finish(&holder, 10000);
}

/* A holder that runs until the file GO exists, started as LR would. */
static void hold_until(struct h_proc *p, const char *lease, const char *ttl, const char *go)
{
	char script[400];

	snprintf(script, sizeof(script), "echo up; while [ ! -e '%s' ]; do sleep 0.05; done", go);
	LR(p, "-t", ttl, "-l", lease, "--", "sh", "-c", script);
	cr_assert(h_wait_file(p->out, "up", 10000), "%s", h_slurp(p->err));
}

/* HOLDER (hold_until's, on GO) lets go, a follower blocked on its hint. */
static void hand_over(struct h_proc *holder, const char *lease, const char *go)
{
	cr_assert_eq(wait_blocked(lease, 1, 10000), 1, "the follower blocks on the leader's hint");
	fclose(fopen(go, "w"));
	cr_assert_eq(h_finish(holder, 10000), 0, "%s", h_slurp(holder->err));
}

/* The hand-over's path carries no parse: a follower prepares its
 * acquisition on the server while it waits (once a connection), and the
 * hint's wake-up sends only its values. Seen in the general log: the
 * follower's session, from just before the holder lets go to its end. */
Test(waiting, a_woken_follower_sends_the_acquisition_it_prepared_while_waiting)
{
	const char *lease = h_lease("prepared");
	struct h_proc holder, f;
	unsigned long long term;
	const char *go = h_path("go");
	long id;

	hold_until(&holder, lease, "15s", go);
	term = term_of(lease);
	LR(&f, "-l", lease, "--", "echo", "ran");
	cr_assert_eq(wait_blocked(lease, 1, 10000), 1, "the follower blocks on the leader's hint");
	id = h_follower_session(lease);
	h_sql("TRUNCATE mysql.general_log");
	h_sql("SET GLOBAL log_output='TABLE', general_log=1");
	fclose(fopen(go, "w"));
	cr_assert_eq(h_finish(&f, 10000), 0, "%s", h_slurp(f.err));
	h_sql("SET GLOBAL general_log=0");
	cr_assert_gt(term_of(lease), term, "the follower took the lease");
	cr_assert(strstr(h_slurp(f.out), "ran"), "the follower's command ran");
	cr_assert_eq(atol(h_sql("SELECT COUNT(*) FROM mysql.general_log WHERE thread_id=%ld AND "
				"argument LIKE 'EXECUTE lr_acquire USING %%'",
				id)),
		     1, "the acquisition went as the prepared block");
	/* The server logs what the EXECUTE ran as an 'Execute' too: only a
	 * statement sent as text is parsed. */
	cr_assert_eq(atol(h_sql("SELECT COUNT(*) FROM mysql.general_log WHERE thread_id=%ld AND "
				"command_type = 'Query' AND (argument LIKE '%%UPDATE `leaderrun_lease` SET holder%%' "
				"OR argument LIKE '%%PREPARE%%')",
				id)),
		     0, "nothing was parsed on the hand-over's path: %s",
		     h_sql("SELECT GROUP_CONCAT(command_type, ': ', LEFT(argument, 60) SEPARATOR ' | ') FROM "
			   "mysql.general_log WHERE thread_id=%ld",
			   id));
	h_sql("TRUNCATE mysql.general_log");
	h_finish(&holder, 10000);
}

/* A follower's watcher is forked while it waits, with no group and no
 * deadline; the command's child gives it both before it execs. Frozen
 * after it took over, the follower's command must still stop at its
 * deadline, before the next one's starts. */
Test(waiting, a_woken_follower_frozen_while_its_command_runs_is_stopped_at_the_deadline)
{
	const char *lease = h_lease("wfreeze");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock"), *go = h_path("go");
	struct h_proc holder, f;

	hold_until(&holder, lease, "2s", go);
	LR(&f, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60");
	hand_over(&holder, lease, go);
	cr_assert(h_wait_file(log, "start", 10000), "the follower never took over: %s", h_slurp(f.err));
	h_frozen_holders_command_stops_at_the_deadline(&f, lease, log, lock);
}

/* The same watcher, when the follower that took over is SIGKILLed: what
 * its command started dies with it. */
Test(waiting, a_woken_follower_sigkilled_takes_its_commands_children_with_it)
{
	const char *lease = h_lease("wkill"), *go = h_path("go");
	struct h_proc holder, f;

	hold_until(&holder, lease, "15s", go);
	LR(&f, "-l", lease, "--", H_TREE_CMD);
	hand_over(&holder, lease, go);
	h_sigkill_takes_the_tree(&f);
}

/* "Too many connections" (1040). max_connections cannot go below 10, so
 * the server is filled up to it by root sessions asleep in SLEEP(); root
 * itself still gets in through the one connection MariaDB keeps for
 * CONNECTION ADMIN. Each test restores the setting in .fini, also when it
 * fails. */
/* A follower woken by the hint sends its acquisition from the database
 * thread at once, without a hop through the supervisor; a --health-cmd
 * that failed while it was blocked calls that off: one that turned
 * unhealthy waiting does not take the lease when the leader lets go, and
 * takes it once healthy again. */
Test(waiting, a_follower_that_turns_unhealthy_while_blocked_does_not_take_the_lease_when_woken)
{
	const char *lease = h_lease("sick_waiter");
	const char *go = h_path("go"), *healthy = h_path("healthy");
	struct h_proc holder, f;
	char check[300];

	fclose(fopen(healthy, "w"));
	snprintf(check, sizeof(check), "test -e '%s'", healthy);
	hold_until(&holder, lease, "15s", go);
	LR(&f, "-l", lease, "--health-cmd", check, "--health-interval", "200ms", "--health-retries", "2", "--", "echo",
	   "ran");
	cr_assert_eq(wait_blocked(lease, 1, 10000), 1, "the follower blocks on the leader's hint");
	unlink(healthy);
	cr_assert(h_wait_file(f.err, "--health-cmd failed", 5000), "%s", h_slurp(f.err));
	hand_over(&holder, lease, go);
	h_sleep_ms(1500);
	cr_assert(!strstr(h_slurp(f.out), "ran"), "the unhealthy follower ran its command:\n%s", h_slurp(f.err));
	cr_assert(h_alive(f.pid));
	fclose(fopen(healthy, "w"));
	cr_assert_eq(h_finish(&f, 10000), 0, "%s", h_slurp(f.err));
	cr_assert(strstr(h_slurp(f.out), "ran"), "healthy again, it took the lease:\n%s", h_slurp(f.err));
}

static long saved_max_connections;
#define FEW_CONNECTIONS 10

static void save_max_connections(void)
{
	saved_max_connections = atol(h_sql("SELECT @@GLOBAL.max_connections"));
}

static void restore_max_connections(void)
{
	/* Wake the fillers (KILL ends a SLEEP at once; a client killed by a
	 * signal would leave its session asleep), then the old limit. */
	const char *ids = h_sql("SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE INFO LIKE "
				"'SELECT SLEEP(600)%%' AND ID <> CONNECTION_ID()");
	char buf[4096], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", ids);
	for (char *id = strtok_r(buf, ",\n", &save); id; id = strtok_r(NULL, ",\n", &save))
		if (strcmp(id, "NULL") != 0)
			h_sql("KILL CONNECTION %s", id);
	if (saved_max_connections > 0)
		h_sql("SET GLOBAL max_connections=%ld", saved_max_connections);
}

/* Sessions on the server besides the one asking. */
static int sessions(void)
{
	return atoi(h_sql("SELECT COUNT(*) - 1 FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon'"));
}

/* Fillers connected and asleep. */
static int fillers(void)
{
	return atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE "
			  "'SELECT SLEEP(600)%%' AND ID <> CONNECTION_ID()"));
}

/* Lowers max_connections to FEW_CONNECTIONS and fills what is left with
 * root sessions asleep in SLEEP(600); stops when the server is full.
 * Each filler is seen asleep before the next starts: on a busy machine a
 * client can take seconds to connect, and one filler too many would take
 * the extra place the server keeps for root, refusing sessions() itself. */
static void fill_connections(struct h_proc *fill, int max_fill, int *nfill)
{
	char sock[300];

	snprintf(sock, sizeof(sock), "--socket=%s", getenv("LR_DB_SOCKET"));
	h_sql("SET GLOBAL max_connections=%d", FEW_CONNECTIONS);
	while (*nfill < max_fill && sessions() < FEW_CONNECTIONS) {
		h_start(
		    &fill[(*nfill)++],
		    (const char *const[]){"mariadb", "--no-defaults", sock, "-uroot", "-e", "SELECT SLEEP(600)", NULL},
		    NULL);
		for (int64_t end = h_now_ms() + 30000; fillers() < *nfill; h_sleep_ms(20))
			cr_assert(h_now_ms() < end, "a filler did not connect in 30 s");
	}
	cr_assert_eq(sessions(), FEW_CONNECTIONS, "could not fill the server's %d connections", FEW_CONNECTIONS);
}

/* A killed session stays in PROCESSLIST until its thread has seen the
 * KILL: counted as full, the server would have room once it leaves. */
static void wait_sessions_gone(const char *user)
{
	for (int64_t end = h_now_ms() + 30000;
	     atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s'", user)) > 0;
	     h_sleep_ms(20))
		cr_assert(h_now_ms() < end, "%s's killed sessions did not leave in 30 s", user);
}

static int count_of(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

Test(waiting, follower_refused_with_too_many_connections_waits_with_one_warning_and_acquires_later,
     .init = save_max_connections, .fini = restore_max_connections)
{
	const char *lease = h_lease("refused");
	struct h_proc holder, f, fill[FEW_CONNECTIONS];
	int nfill = 0;
	int64_t t0, took;

	LR(&holder, "-t", "3s", "-l", lease, "--", "sleep", "120");
	wait_held(lease);
	fill_connections(fill, FEW_CONNECTIONS, &nfill);
	LR(&f, "-t", "3s", "-vv", "-l", lease, "--", "sh", "-c", "echo took");
	/* Backoff 0.25-0.5 s, doubling: several refusals within a few
	 * seconds. */
	for (int64_t end = h_now_ms() + 15000; count_of(h_slurp(f.err), "still refused") < 2; h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the refused follower did not retry: %s", h_slurp(f.err));
	cr_assert(h_alive(f.pid), "the refused follower gave up: %s", h_slurp(f.err));
	cr_assert_eq(count_of(h_slurp(f.err), "no connection to spare"), 1, "one warning: %s", h_slurp(f.err));
	cr_assert_geq(count_of(h_slurp(f.err), "still refused"), 1, "it kept trying: %s", h_slurp(f.err));
	cr_assert_eq(count_of(h_slurp(f.err), "warning"), 1, "no other warnings: %s", h_slurp(f.err));
	/* The holder lets go: its connection is the one that frees up. The
	 * follower's next try (its backoff doubles to the renew interval, 1 s
	 * here, at least --retry-interval) gets in and takes the free lease. */
	kill(holder.pid, SIGTERM);
	h_finish(&holder, 10000);
	t0 = h_now_ms();
	cr_assert(h_wait_file(f.out, "took", 15000), "the follower never acquired: %s", h_slurp(f.err));
	took = h_now_ms() - t0;
	cr_assert_lt(took, 8000 + 1000, "acquired %lld ms after the connection freed up", (long long)took);
	cr_assert_eq(h_finish(&f, 10000), 0, "%s", h_slurp(f.err));
	restore_max_connections();
	for (int i = 0; i < nfill; i++)
		h_finish(&fill[i], 10000);
}

Test(waiting, holder_refused_with_too_many_connections_on_reconnect_is_a_renew_failure, .init = save_max_connections,
     .fini = restore_max_connections)
{
	/* A holder's open session never meets 1040 (the server counts
	 * connections only when they are made), but one that lost its session
	 * reconnects to renew: with the server full, that renew fails like
	 * any other, and the deadline stops the command (76). ttl 30s: renew
	 * every 10 s; the command is stopped 30 - 6 - 1.5 = 22.5 s after the
	 * last renew at the latest. The freeze below must end well before
	 * that, or the watcher stops the command while leaderrun is frozen and
	 * no reconnect is tried: on a busy machine the fillers alone can take
	 * seconds to connect. */
	const char *lease = h_lease("refused-holder");
	struct h_proc holder, fill[FEW_CONNECTIONS];
	int nfill = 0;
	int64_t t0, took;

	LR(&holder, "-t", "30s", "-l", lease, "--", "sleep", "120");
	wait_held(lease);
	fill_connections(fill, FEW_CONNECTIONS, &nfill);
	/* Frozen while its sessions go and fillers take the free places:
	 * the holder cannot win it back before the server is full again. */
	cr_assert_eq(kill(holder.pid, SIGSTOP), 0);
	cr_assert_geq(h_kill_connections(getenv("LR_DB_USER")), 1, "the holder had no session to lose");
	wait_sessions_gone(getenv("LR_DB_USER"));
	fill_connections(fill, FEW_CONNECTIONS, &nfill);
	cr_assert_eq(kill(holder.pid, SIGCONT), 0);
	t0 = h_now_ms();
	cr_assert_eq(h_finish(&holder, 40000), 76, "%s", h_slurp(holder.err));
	took = h_now_ms() - t0;
	cr_assert_lt(took, 30000 + 1500, "the command outlived its lease: %lld ms", (long long)took);
	cr_assert(strstr(h_slurp(holder.err), "renew failed"), "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.err), "1040"), "%s", h_slurp(holder.err));
	restore_max_connections();
	for (int i = 0; i < nfill; i++)
		h_finish(&fill[i], 10000);
}

/* Issue 25: GET_LOCK names are server-wide, so the wake-up hint must be
 * named per database. Two databases on one server, a lease of the same
 * name (and term) in each: the follower in db2 blocked on db1's holder's
 * hint, and started only at the expiry it had read (19 s late in the
 * report), long after db2's own holder had let go. */
Test(waiting, follower_is_not_held_up_by_the_same_lease_in_another_database)
{
	const char *lease = h_lease("otherdb");
	const char *started = h_path("follower.started");
	char db2[64], dsn2[600], root2[600], hosts[512], *save = NULL;
	struct h_proc h1, h2, f, p;
	int64_t t0;

	snprintf(db2, sizeof(db2), "%s_other%ld", getenv("LR_DB_NAME"), (long)getpid());
	h_sql("CREATE DATABASE IF NOT EXISTS `%s`", db2);
	snprintf(hosts, sizeof(hosts), "%s",
		 h_sql("SELECT GROUP_CONCAT(Host) FROM mysql.user WHERE User='%s'", getenv("LR_DB_USER")));
	for (char *host = strtok_r(hosts, ",", &save); host; host = strtok_r(NULL, ",", &save))
		h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON `%s`.* TO '%s'@'%s'", db2, getenv("LR_DB_USER"), host);
	snprintf(root2, sizeof(root2), "mysql://root@localhost/%s?socket=%s", db2, getenv("LR_DB_SOCKET"));
	snprintf(dsn2, sizeof(dsn2), "mysql://%s:%s@127.0.0.1:%s/%s", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"),
		 getenv("LR_DB_PORT"), db2);
	h_start(&p, (const char *const[]){h_bin(), "-d", root2, "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));

	/* db1's holder first, so that it has the hint if the names clash. */
	LR(&h1, "-t", "30s", "-l", lease, "--", "sleep", "60");
	for (int i = 0; i < 100 && term_of(lease) == 0; i++)
		h_sleep_ms(100);
	cr_assert_eq(term_of(lease), 1, "db1's holder did not take the lease: %s", h_slurp(h1.err));
	h_start(&h2, (const char *const[]){h_bin(), "-d", dsn2, "-t", "30s", "-l", lease, "--", "sleep", "4", NULL},
		NULL);
	for (int i = 0; i < 100 && strcmp(h_sql("SELECT COALESCE(MAX(term), 0) FROM `%s`.leaderrun_lease WHERE "
						"name='%s' AND expires_at > UTC_TIMESTAMP(6)",
						db2, lease),
					  "1") != 0;
	     i++)
		h_sleep_ms(100);
	h_start(&f,
		(const char *const[]){h_bin(), "-d", dsn2, "-w", "60s", "-t", "30s", "-l", lease, "--", "sh", "-c",
				      "echo started >\"$0\"", started, NULL},
		NULL);
	cr_assert_eq(h_finish(&h2, 20000), 0, "db2's holder: %s", h_slurp(h2.err));
	t0 = h_now_ms();
	/* ttl 30 s: before the fix the follower waited for the expiry it
	 * read, ~26 s after its holder's exit. */
	cr_assert(h_wait_file(started, NULL, 10000), "the follower did not start within 10 s of its holder's exit: %s",
		  h_slurp(f.err));
	cr_assert_eq(h_finish(&f, 20000), 0, "%s", h_slurp(f.err));
	cr_assert_lt(h_now_ms() - t0, 15000);
	/* db1's holder was never disturbed. */
	cr_assert_eq(h_wait(&h1, 0), -1, "db1's holder ended: %s", h_slurp(h1.err));
	kill(h1.pid, SIGTERM);
	h_finish(&h1, 20000);
	h_sql("DROP DATABASE `%s`", db2);
}
