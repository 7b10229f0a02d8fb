/* Fenced writes: a job's transaction proves its term with CALL
 * leaderrun_fence, and the database refuses it once a newer term took the
 * lease over. The jobs here are real SQL clients (the mariadb CLI, as the
 * suite's least-privileged user) writing rows tagged with their term into
 * a table of the test's; the check reads back what committed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "proxy.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

TestSuite(fence, .timeout = 120);

/* The job's SQL client over TCP to PORT (0: the server's own), as the
 * suite's user: a shell command prefix. */
static const char *client(char *buf, size_t len, int port)
{
	snprintf(buf, len,
		 "mariadb --no-defaults --default-character-set=utf8mb4 --protocol=TCP -h127.0.0.1 -P%d -u%s -p%s %s",
		 port ? port : atoi(getenv("LR_DB_PORT")), getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"),
		 getenv("LR_DB_NAME"));
	return buf;
}

/* The rows the jobs write, one per committed transaction. */
static void rows_table(void)
{
	h_sql("CREATE TABLE IF NOT EXISTS fenced_rows (lease VARCHAR(64), term BIGINT UNSIGNED, who VARCHAR(16), "
	      "PRIMARY KEY (lease, term, who))");
	char hosts[512], *save = NULL;

	/* The sandbox makes the user once per host it may come from. */
	snprintf(hosts, sizeof(hosts), "%s",
		 h_sql("SELECT host FROM mysql.user WHERE user='%s'", getenv("LR_DB_USER")));
	for (char *host = strtok_r(hosts, "\n", &save); host; host = strtok_r(NULL, "\n", &save))
		h_sql("GRANT SELECT, INSERT ON %s.fenced_rows TO '%s'@'%s'", getenv("LR_DB_NAME"), getenv("LR_DB_USER"),
		      host);
}

/* A fenced transaction, as a shell command: fence with TERM (a shell
 * word), write the row of WHO, hold it SECS seconds inside the
 * transaction, commit. */
static const char *fenced(char *buf, size_t len, int port, const char *term, const char *who, const char *secs)
{
	char c[512];

	snprintf(buf, len,
		 "%s -e \"START TRANSACTION; CALL leaderrun_fence('$LEADERRUN_LEASE', %s); "
		 "INSERT INTO fenced_rows VALUES ('$LEADERRUN_LEASE', %s, '%s'); SELECT SLEEP(%s); COMMIT\"",
		 client(c, sizeof(c), port), term, term, who, secs);
	return buf;
}

static const char *committed(const char *lease)
{
	return h_sql("SELECT COALESCE(GROUP_CONCAT(CONCAT(term, ':', who) ORDER BY term, who), '') FROM "
		     "fenced_rows WHERE lease='%s'",
		     lease);
}

static unsigned long long fence_term(const char *lease)
{
	return strtoull(h_sql("SELECT COALESCE(MAX(term), 0) FROM leaderrun_fence WHERE lease='%s'", lease), NULL, 10);
}

/* Term 1's transaction was ended: the one row committed is the new
 * holder's. Its term is 2, or 3 when the first takeover gave its term back
 * while the ended session rolled back. */
static void only_new_rows(const char *lease)
{
	const char *rows = committed(lease);

	cr_assert(strcmp(rows, "2:new") == 0 || strcmp(rows, "3:new") == 0, "committed: %s", rows);
}

static void wait_for_fence(const char *lease, unsigned long long term)
{
	for (int k = 0; k < 200 && fence_term(lease) != term; k++)
		h_sleep_ms(50);
	cr_assert_eq(fence_term(lease), term, "the fence never reached term %llu", term);
}

Test(fence, a_stale_term_is_refused_naming_the_lease_and_its_own_term_only)
{
	struct h_proc p;
	const char *lease = h_lease("stale");
	char job[1024], want[256];

	rows_table();
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "first", "0"));
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* The next run's job fences with the term before its own. */
	LR(&p, "-n", "-l", lease, "--", "sh", "-c",
	   fenced(job, sizeof(job), 0, "$((LEADERRUN_TERM - 1))", "stale", "0"));
	cr_assert_eq(h_finish(&p, 20000), 1, "%s", h_slurp(p.err));
	snprintf(want, sizeof(want), "(45000) at line 1: leaderrun_fence: lease '%s' term 1 is stale\n", lease);
	cr_assert(strstr(h_slurp(p.err), want), "want '%s' in:\n%s", want, h_slurp(p.err));
	/* Whoever may call it learns no term beyond the one it gave. */
	cr_assert_null(strstr(h_slurp(p.err), "current term"), "%s", h_slurp(p.err));
	cr_assert_str_eq(committed(lease), "1:first");
}

Test(fence, the_fence_holds_the_new_term_before_the_command_starts)
{
	struct h_proc p;
	const char *lease = h_lease("moved");
	char job[1024], c[512];

	/* Three runs: each command reads the fence as its own term. */
	for (int k = 1; k <= 3; k++) {
		snprintf(job, sizeof(job),
			 "t=$(%s -N -e \"SELECT term FROM leaderrun_fence WHERE lease='$LEADERRUN_LEASE'\"); "
			 "[ \"$t\" = \"$LEADERRUN_TERM\" ] || { echo \"fence $t, term $LEADERRUN_TERM\"; exit 9; }",
			 client(c, sizeof(c), 0));
		LR(&p, "-n", "-l", lease, "--", "sh", "-c", job);
		cr_assert_eq(h_finish(&p, 20000), 0, "%s\n%s", h_slurp(p.out), h_slurp(p.err));
	}
	cr_assert_eq(fence_term(lease), 3);
}

Test(fence, a_fence_outside_a_transaction_is_refused)
{
	struct h_proc p;
	char job[1024], c[512];

	if (h_server_mysql())
		cr_skip_test("MySQL has no @@in_transaction: the guard is MariaDB's (leaderrun-safety(7))");
	snprintf(job, sizeof(job), "%s -e \"CALL leaderrun_fence('$LEADERRUN_LEASE', $LEADERRUN_TERM)\"",
		 client(c, sizeof(c), 0));
	LR(&p, "-n", "-l", h_lease("outside"), "--", "sh", "-c", job);
	cr_assert_eq(h_finish(&p, 20000), 1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "call it inside the transaction it guards"), "%s", h_slurp(p.err));
}

Test(fence, each_slot_fences_with_its_own_term)
{
	struct h_proc a, b;
	const char *lease = h_lease("slots");
	char job[1024], c[512];

	rows_table();
	snprintf(job, sizeof(job),
		 "%s -e \"START TRANSACTION; CALL leaderrun_fence_slot('$LEADERRUN_LEASE', $LEADERRUN_SLOT, "
		 "$LEADERRUN_TERM); INSERT INTO fenced_rows VALUES ('$LEADERRUN_LEASE', $LEADERRUN_TERM, "
		 "CONCAT('slot', $LEADERRUN_SLOT)); SELECT SLEEP(1); COMMIT\"",
		 client(c, sizeof(c), 0));
	LR(&a, "-n", "--slots", "2", "-l", lease, "--", "sh", "-c", job);
	LR(&b, "-n", "--slots", "2", "-l", lease, "--", "sh", "-c", job);
	cr_assert_eq(h_finish(&a, 20000), 0, "%s", h_slurp(a.err));
	cr_assert_eq(h_finish(&b, 20000), 0, "%s", h_slurp(b.err));
	cr_assert_str_eq(committed(lease), "1:slot0,1:slot1");
}

/* The test's own SQL session, in the background: STATEMENTS through PORT
 * (0: straight), as the suite's user. */
static void session(struct h_proc *p, int port, const char *statements)
{
	char c[512];
	char *argv[16];
	int n = 0;

	client(c, sizeof(c), port);
	for (char *save = NULL, *w = strtok_r(c, " ", &save); w && n < 12; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n++] = "-e";
	argv[n++] = (char *)statements;
	argv[n] = NULL;
	h_start(p, (const char *const *)argv, NULL);
}

/* Waits until a session of the suite's user runs SLEEP inside its
 * transaction: it has fenced. */
static void wait_for_sleeper(void)
{
	for (int k = 0; k < 200; k++) {
		if (atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s' AND INFO LIKE "
			       "'SELECT SLEEP%%'",
			       getenv("LR_DB_USER"))) > 0)
			return;
		h_sleep_ms(50);
	}
	cr_assert_fail("the fenced session never got to its SLEEP");
}

/* A session of term 1 of LEASE that fenced, wrote its row and keeps its
 * transaction open (a minute), as a cut-off host's would stay open: the
 * server thinks it alive. Returns once it has fenced. */
static void open_stale_transaction(struct h_proc *stale, const char *lease)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "START TRANSACTION; CALL leaderrun_fence('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, "
		 "'stale'); SELECT SLEEP(60); COMMIT",
		 lease, lease);
	session(stale, 0, sql);
	wait_for_sleeper();
}

Test(fence, an_open_fenced_transaction_is_ended_at_the_takeover_and_never_commits)
{
	struct h_proc a, b, stale;
	const char *lease = h_lease("open");
	char job[1024];
	int64_t t0, took;

	rows_table();
	LR(&a, "-t", "3s", "-l", lease, "--", "sh", "-c", "sleep 2");
	wait_for_fence(lease, 1);
	open_stale_transaction(&stale, lease);
	LR(&b, "-t", "3s", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "new", "0"));
	t0 = h_now_ms();
	cr_assert_eq(h_finish(&a, 20000), 0, "%s", h_slurp(a.err));
	cr_assert_eq(h_finish(&b, 30000), 0, "%s", h_slurp(b.err));
	took = h_now_ms() - t0;
	cr_log_info("the takeover waited for the open transaction; run over %lld ms after A's start", (long long)took);
	cr_assert(strstr(h_slurp(b.err), "ended session"), "%s", h_slurp(b.err));
	cr_assert_neq(h_finish(&stale, 10000), 0, "the stale transaction ended well:\n%s", h_slurp(stale.out));
	only_new_rows(lease);
	/* A ran 2 s; the wait for the open transaction is a lock wait (1 s)
	 * and the end of its session: well under a ttl more. */
	cr_assert_lt(took, 8000, "B's run ended %lld ms after A's began", (long long)took);
}

/* A server that rolls the whole transaction back at a lock wait
 * (innodb_rollback_on_timeout): the acquisition that carried the move
 * (lease_block.c) is rolled back with it, and only an acquisition that
 * stands may end the stale session. Seen failing on b073a13: every try
 * rolled back, the command never ran. */
Test(fence, a_stale_fenced_transaction_is_ended_where_a_lock_wait_rolls_back_the_whole_transaction)
{
	struct h_proc p, stale;
	const char *lease = h_lease("rbto");

	setenv("SANDBOX_DB_EXTRA_ARGS", "--innodb-rollback-on-timeout=1", 1);
	h_sandbox("restart");
	rows_table();
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	open_stale_transaction(&stale, lease);
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "ran\n");
	cr_assert(strstr(h_slurp(p.err), "ended session"), "%s", h_slurp(p.err));
	cr_assert_neq(h_finish(&stale, 10000), 0, "the stale transaction ended well:\n%s", h_slurp(stale.out));
	unsetenv("SANDBOX_DB_EXTRA_ARGS");
	h_sandbox("restart");
}

Test(fence, a_holder_frozen_with_its_job_mid_transaction_cannot_commit_after_the_takeover)
{
	struct h_proc a, b;
	const char *lease = h_lease("frozen");
	char job[1100], tx[1024];
	struct h_vm vm;

	rows_table();
	snprintf(job, sizeof(job), "echo $$; exec %s", fenced(tx, sizeof(tx), 0, "$LEADERRUN_TERM", "frozen", "5"));
	LR(&a, "-t", "2s", "-l", lease, "--", "sh", "-c", job);
	h_vm_of(&a, &vm);
	wait_for_sleeper();
	/* A paused VM: leaderrun, its watcher and the job, mid-transaction. */
	h_vm_signal(&vm, SIGSTOP);
	LR(&b, "-t", "2s", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "new", "0"));
	cr_assert_eq(h_finish(&b, 30000), 0, "%s", h_slurp(b.err));
	h_vm_signal(&vm, SIGCONT);
	cr_assert_eq(h_finish(&a, 20000), 76, "%s", h_slurp(a.err));
	only_new_rows(lease);
}

Test(fence, a_stale_statement_delayed_through_a_proxy_is_refused)
{
	struct h_proc a, b, stale;
	const char *lease = h_lease("delayed");
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	char sql[512], job[1024];

	rows_table();
	LR(&a, "-l", lease, "--", "sh", "-c", "sleep 1");
	wait_for_fence(lease, 1);
	/* Term 1's statements, sent while it holds the lease, held up in the
	 * network for 3 s: they reach the server after the takeover. */
	proxy_set_mode(proxy, PROXY_DELAY);
	proxy_set_delay(proxy, 3000);
	snprintf(sql, sizeof(sql),
		 "START TRANSACTION; CALL leaderrun_fence('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, "
		 "'delayed'); COMMIT",
		 lease, lease);
	session(&stale, proxy_port(proxy), sql);
	LR(&b, "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "new", "8"));
	cr_assert_eq(h_finish(&a, 20000), 0, "%s", h_slurp(a.err));
	cr_assert_eq(h_finish(&stale, 60000), 1, "%s", h_slurp(stale.err));
	cr_assert(strstr(h_slurp(stale.err), "term 1 is stale"), "%s", h_slurp(stale.err));
	cr_assert_eq(h_finish(&b, 30000), 0, "%s", h_slurp(b.err));
	cr_assert_str_eq(committed(lease), "2:new");
}

Test(fence, renewals_never_wait_behind_a_fenced_transaction)
{
	struct h_proc p;
	const char *lease = h_lease("renew");
	char job[1024];

	rows_table();
	/* Renewals every 0.33 s while the job holds the fence for 3 s. */
	LR(&p, "-t", "1s", "-v", "-l", lease, "--", "sh", "-c",
	   fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "long", "3"));
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "renew failed"), "%s", h_slurp(p.err));
	cr_assert_str_eq(committed(lease), "1:long");
}

Test(fence, a_table_without_the_fence_runs_the_command_and_says_so)
{
	struct h_proc p;
	const char *argv[] = {h_bin(), "-n", "-d", h_dsn_root(), "--table", "nofence_lease",
			      "-l",    "x",  "--", "echo",	 "ran",	    NULL};

	/* A database of schema 5: the lease table, no fence. */
	h_sql("CREATE TABLE IF NOT EXISTS nofence_lease LIKE leaderrun_lease");
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "ran\n");
	cr_assert(strstr(h_slurp(p.err), "the fence is off"), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
}

Test(fence, init_makes_the_fence_of_a_schema_5_database)
{
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", "five_lease", "--init", NULL};
	char out[256];

	h_sql("CREATE TABLE IF NOT EXISTS five_lease LIKE leaderrun_lease");
	h_sql("CREATE TABLE IF NOT EXISTS five_history LIKE leaderrun_history");
	cr_assert_eq(h_run(init, out, sizeof(out)), 0);
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA=DATABASE() "
			       "AND ROUTINE_NAME IN ('five_fence', 'five_fence_slot', 'five_fence_end', "
			       "'five_fence_move')"),
			 "4");
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM five_fence"), "0");
	/* Its procedures fence its own table, for the account the row names. */
	h_sql("INSERT INTO five_fence (lease, slot, term, fencer) VALUES ('x', 0, 7, 'root')");
	h_sql("START TRANSACTION; CALL five_fence('x', 7); COMMIT");
	cr_assert_str_eq(h_sql("SELECT fences FROM five_fence"), "1");
}

Test(fence, a_stale_session_that_cannot_be_ended_keeps_the_command_from_starting)
{
	struct h_proc stale, p;
	const char *lease = h_lease("noend");
	char dsn[512];
	const char *db = getenv("LR_DB_NAME");

	/* An account like sql/grants.sql's, without the right to end sessions
	 * (no EXECUTE on leaderrun_fence_end). */
	h_sql("CREATE USER IF NOT EXISTS 'noend'@'localhost' IDENTIFIED BY 'noend-pw'");
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s.leaderrun_lease TO 'noend'@'localhost'", db);
	h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leaderrun_history TO 'noend'@'localhost'", db);
	h_sql("GRANT SELECT ON %s.leaderrun_fence TO 'noend'@'localhost'", db);
	h_sql("GRANT EXECUTE ON PROCEDURE %s.leaderrun_fence_move TO 'noend'@'localhost'", db);
	snprintf(dsn, sizeof(dsn), "mysql://noend:noend-pw@localhost/%s?socket=%s", db, getenv("LR_DB_SOCKET"));
	rows_table();
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	open_stale_transaction(&stale, lease);
	h_start(&p, (const char *const[]){h_bin(), "-n", "-d", dsn, "-l", lease, "--", "echo", "ran", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 20000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "could not be ended"), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "EXECUTE on leaderrun_fence_end"), "%s", h_slurp(p.err));
	/* The term it took was given back at once. */
	cr_assert_str_eq(h_sql("SELECT expires_at <= UTC_TIMESTAMP(6) FROM leaderrun_lease WHERE name='%s'", lease),
			 "1");
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
}

Test(fence, a_lease_whose_terms_went_back_below_its_fence_never_runs)
{
	struct h_proc p;
	const char *lease = h_lease("back");

	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* A lease table restored from an old backup: term 1 again, while
	 * the fence (and the jobs' writes) saw term 5. */
	h_sql("UPDATE leaderrun_fence SET term = 5 WHERE lease = '%s'", lease);
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "terms went back"), "%s", h_slurp(p.err));
	/* Raised above the fence, the lease runs again, with a term the
	 * fence has not seen. */
	h_sql("UPDATE leaderrun_lease SET term = 5 WHERE name = '%s'", lease);
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "6\n");
}

/* A session that goes on past its errors (the CLI's --force): STATEMENTS,
 * as the suite's user. It stands for a job whose refused fence reached the
 * server late (a paused machine, a delayed statement) and whose host was
 * cut off before it could roll back: the server keeps the session, and
 * its transaction, until wait_timeout. */
static void cut_off_session(struct h_proc *p, const char *statements)
{
	static char cmd[1600];
	char c[512];

	/* Fed on stdin: -e stops at the first error, even with --force. */
	snprintf(cmd, sizeof(cmd), "exec %s --force <<'EOF'\n%s\nEOF\n", client(c, sizeof(c), 0), statements);
	h_start(p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
}

Test(fence, a_refused_fence_left_open_does_not_block_the_next_takeover)
{
	struct h_proc p, stale;
	const char *lease = h_lease("refused");
	char job[1024], sql[512];
	int64_t t0, took;

	rows_table();
	for (int k = 1; k <= 2; k++) {
		LR(&p, "-n", "-l", lease, "--", "true");
		cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	}
	/* Term 1's fence arrives after term 2 took the fence: refused. */
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1); SELECT SLEEP(60)", lease);
	cut_off_session(&stale, sql);
	wait_for_sleeper();
	t0 = h_now_ms();
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "new", "0"));
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	took = h_now_ms() - t0;
	cr_assert_str_eq(committed(lease), "3:new");
	cr_assert_lt(took, 8000, "the run took %lld ms", (long long)took);
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
}

Test(fence, a_refused_fence_left_open_does_not_hold_up_the_current_terms_job)
{
	struct h_proc p, stale;
	const char *lease = h_lease("refusedcur");
	char job[1100], tx[1024], sql[512];

	rows_table();
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* Term 2's job writes 3 s into its run; term 1's late fence came
	 * before. Its lock wait would be the server's 50 s. */
	snprintf(job, sizeof(job), "sleep 3; %s", fenced(tx, sizeof(tx), 0, "$LEADERRUN_TERM", "cur", "0"));
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", job);
	wait_for_fence(lease, 2);
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1); SELECT SLEEP(60)", lease);
	cut_off_session(&stale, sql);
	wait_for_sleeper();
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(committed(lease), "2:cur");
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
}

Test(fence, a_refused_fence_of_a_lease_never_fenced_does_not_block_its_first_acquisition)
{
	struct h_proc p, stale;
	const char *lease = h_lease("nofencerow");
	char sql[512];

	/* Refused, no fence row: only older builds have taken this lease.
	 * Its locks would cover the row's place in the table. */
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1); SELECT SLEEP(60)", lease);
	cut_off_session(&stale, sql);
	wait_for_sleeper();
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "ran\n");
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
}

/* The refusal of CALL (a statement, quoted for the shell's -e) on LEASE's
 * fence, as the job's client prints it. */
static const char *refusal(const char *call)
{
	static struct h_proc p;
	char sql[1024];

	snprintf(sql, sizeof(sql), "START TRANSACTION; %s; COMMIT", call);
	session(&p, 0, sql);
	cr_assert_eq(h_finish(&p, 20000), 1, "%s did not fail: %s", call, h_slurp(p.err));
	return h_slurp(p.err);
}

Test(fence, a_refusal_names_its_own_term_in_full_whatever_the_name_and_terms)
{
	/* A minutely job of a long name, a slot of 2, after a few months. */
	char lease[128], call[512], want[128];
	const char *err;

	snprintf(lease, sizeof(lease), "%s-nightly-reconciliation-of-the-ledger-accounts", h_lease("msg"));
	h_sql("INSERT INTO leaderrun_fence (lease, slot, term, fencer) VALUES ('%s', 1, 123457, '%s')", lease,
	      getenv("LR_DB_USER"));
	snprintf(call, sizeof(call), "CALL leaderrun_fence_slot('%s', 1, 123456)", lease);
	err = refusal(call);
	snprintf(want, sizeof(want), "slot 1 term 123456 is stale\n");
	cr_assert(strstr(err, "(45000)") && strstr(err, want), "want '%s' in:\n%s", want, err);
	cr_assert_null(strstr(err, "123457"), "%s", err);
	/* A job run without leaderrun passes no term (NULL in most drivers). */
	snprintf(call, sizeof(call), "CALL leaderrun_fence_slot('%s', 1, NULL)", lease);
	err = refusal(call);
	cr_assert(strstr(err, "(45000)") && strstr(err, "term NULL is stale"), "%s", err);
}

Test(fence, a_stale_fence_on_a_lease_named_in_any_script_is_refused_with_45000)
{
	struct h_proc p;
	char lease[128], job[1024];

	/* The database's default character set is the server's (latin1 on
	 * MariaDB); the lease's name is not. */
	snprintf(lease, sizeof(lease), "夜間バッチ🌙-%s", h_lease("utf8"));
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	LR(&p, "-n", "-l", lease, "--", "sh", "-c",
	   fenced(job, sizeof(job), 0, "$((LEADERRUN_TERM - 1))", "stale", "0"));
	cr_assert_eq(h_finish(&p, 20000), 1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "(45000) at line 1: leaderrun_fence: lease '夜間バッチ"), "%s",
		  h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "term 1 is stale"), "%s", h_slurp(p.err));
}

Test(fence, a_prepared_xa_transaction_that_fenced_keeps_the_command_from_starting_until_it_ends)
{
	struct h_proc p, stale;
	const char *lease = h_lease("xa");
	char job[1024], sql[512];
	const char *rows;

	rows_table();
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* A transaction manager's branch of term 1: fenced, prepared, then
	 * its host cut off. */
	snprintf(sql, sizeof(sql),
		 "XA START '%s'; CALL leaderrun_fence('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, 'xa'); "
		 "XA END '%s'; XA PREPARE '%s'; SELECT SLEEP(60)",
		 lease, lease, lease, lease, lease);
	session(&stale, 0, sql);
	wait_for_sleeper();
	/* Its session may be ended (MariaDB shows the branch as its
	 * session's until it ends; MySQL as no session's, and then nobody is
	 * ended); the prepared transaction outlives it either way. */
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "XA RECOVER"), "%s", h_slurp(p.err));
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
	/* Its transaction manager commits it: no newer command has started. */
	h_sql("XA COMMIT '%s'", lease);
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "new", "0"));
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	rows = committed(lease);
	cr_assert(strcmp(rows, "1:xa,3:new") == 0, "committed: %s", rows);
}

/* A refused fence inside an XA branch: the fence cannot roll an XA
 * transaction back (XAER_RMFAIL), so it ends the branch's session, which
 * rolls the branch back before it can be prepared. Nothing is left to
 * hold the fence, whatever the caller does next. */
static void refused_in_xa(const char *lease, const char *term)
{
	struct h_proc stale;
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "XA START '%s';\nCALL leaderrun_fence('%s', %s);\nXA END '%s';\nXA PREPARE '%s';\nSELECT SLEEP(60);",
		 lease, lease, term, lease, lease);
	cut_off_session(&stale, sql);
	h_finish(&stale, 20000); /* --force: its status is 0 whatever failed */
	cr_assert(strstr(h_slurp(stale.err), "ERROR 1927") || strstr(h_slurp(stale.err), "ERROR 2013"),
		  "the refused branch's session lived on: %s", h_slurp(stale.err));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = 0"), "0",
			 "a branch without a session outlived the refusal");
}

Test(fence, a_refused_fence_in_an_xa_transaction_leaves_no_branch_to_block_the_next_takeover)
{
	struct h_proc p;
	const char *lease = h_lease("xarefused");

	for (int k = 1; k <= 2; k++) {
		LR(&p, "-n", "-l", lease, "--", "true");
		cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	}
	/* A transaction manager's branch of term 1 (stale), and one of term
	 * 0 (never valid), each prepared after its refusal. */
	refused_in_xa(lease, "1");
	refused_in_xa(lease, "0");
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "ran\n");
	cr_assert_null(strstr(h_slurp(p.err), "conflict"), "%s", h_slurp(p.err));
}

Test(fence, a_lock_on_the_fence_that_is_no_fence_gets_no_session_ended)
{
	struct h_proc fencer, admin, p;
	const char *lease = h_lease("admin");
	char sql[512];

	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* An innocent session: it fenced (and committed) with term 1, so the
	 * row names it, then sleeps, alive. */
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1); COMMIT; SELECT SLEEP(8)", lease);
	session(&fencer, 0, sql);
	wait_for_sleeper();
	/* An administrator's transaction locks the row without fencing, for
	 * 3 s: the takeover waits for it, and ends nobody. */
	snprintf(sql, sizeof(sql),
		 "START TRANSACTION; SELECT term FROM leaderrun_fence WHERE lease='%s' FOR UPDATE; DO SLEEP(3); "
		 "COMMIT",
		 lease);
	{
		const char *argv[] = {"/usr/bin/mariadb",
				      "--no-defaults",
				      "-uroot",
				      "-S",
				      getenv("LR_DB_SOCKET"),
				      getenv("LR_DB_NAME"),
				      "-e",
				      sql,
				      NULL};
		h_start(&admin, argv, NULL);
	}
	h_sleep_ms(300);
	LR(&p, "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "ended session"), "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&admin, 20000), 0, "%s", h_slurp(admin.err));
	cr_assert_eq(h_finish(&fencer, 20000), 0, "the innocent session was ended: %s", h_slurp(fencer.err));
}

/* ---- The fence's rights stay the fence's: what each account can and
 * cannot make the procedures do, tried as an attacker holding it would. */

/* ACCOUNT (password PW) on every host the sandbox's user comes from, with
 * the PRIVILEGE ("EXECUTE ON PROCEDURE", "INSERT ON") on OBJECT of the
 * test database. */
static void account(const char *name, const char *pw, const char *privilege, const char *object)
{
	const char *hosts[] = {"localhost", "127.0.0.1"};

	for (int k = 0; k < 2; k++) {
		h_sql("CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s'", name, hosts[k], pw);
		h_sql("GRANT %s %s.%s TO '%s'@'%s'", privilege, getenv("LR_DB_NAME"), object, name, hosts[k]);
	}
}

/* STATEMENTS as ACCOUNT through TCP; returns its status (its stderr in
 * P's file). */
static int as_account(struct h_proc *p, const char *name, const char *pw, const char *statements)
{
	char socket[300], password[64];

	/* Over the socket: a first login of a new account over TCP without
	 * TLS is refused by MySQL's caching_sha2_password. */
	snprintf(socket, sizeof(socket), "--socket=%s", getenv("LR_DB_SOCKET"));
	snprintf(password, sizeof(password), "-p%s", pw);
	h_start(p,
		(const char *const[]){"mariadb", "--no-defaults", socket, "-u", name, password, getenv("LR_DB_NAME"),
				      "-e", statements, NULL},
		NULL);
	return h_finish(p, 30000);
}

#define AS_SUITE(p, sql) as_account(p, getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), sql)

Test(fence, leaderruns_account_can_neither_write_the_fence_nor_move_it_back_or_past_the_lease)
{
	struct h_proc p, s;
	const char *lease = h_lease("noforge");
	char sql[512];

	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* Back to a stale term, or naming any session: no write grant. */
	snprintf(sql, sizeof(sql), "UPDATE leaderrun_fence SET term = 0, fenced_by = 1 WHERE lease = '%s'", lease);
	cr_assert_eq(AS_SUITE(&s, sql), 1);
	cr_assert(strstr(h_slurp(s.err), "command denied"), "%s", h_slurp(s.err));
	snprintf(sql, sizeof(sql), "INSERT INTO leaderrun_fence (lease, slot, term) VALUES ('%s-x', 0, 1)", lease);
	cr_assert_eq(AS_SUITE(&s, sql), 1);
	cr_assert(strstr(h_slurp(s.err), "command denied"), "%s", h_slurp(s.err));
	/* The move, to terms that do not hold the lease (it expired; term
	 * 0, term 2^64-1): refused, the fence where it was. */
	snprintf(sql, sizeof(sql),
		 "CALL leaderrun_fence_move('%s', 0, 1, NULL); CALL leaderrun_fence_move('%s', 0, 0, NULL); "
		 "CALL leaderrun_fence_move('%s', 0, 18446744073709551615, NULL)",
		 lease, lease, lease);
	cr_assert_eq(AS_SUITE(&s, sql), 1);
	cr_assert(strstr(h_slurp(s.err), "the term does not hold the lease"), "%s", h_slurp(s.err));
	cr_assert_eq(fence_term(lease), 1);
}

Test(fence, fence_end_with_a_term_that_does_not_hold_the_lease_ends_nobody)
{
	struct h_proc a, s;
	const char *lease = h_lease("endnobody");
	char job[1024], sql[512];

	rows_table();
	/* Term 1's live job, fenced and open for 6 s. */
	LR(&a, "-t", "10s", "-l", lease, "--", "sh", "-c", fenced(job, sizeof(job), 0, "$LEADERRUN_TERM", "live", "6"));
	wait_for_sleeper();
	snprintf(sql, sizeof(sql),
		 "CALL leaderrun_fence_end('%s', 0, 2); CALL leaderrun_fence_end('%s', 0, 18446744073709551615)", lease,
		 lease);
	cr_assert_eq(AS_SUITE(&s, sql), 1);
	cr_assert(strstr(h_slurp(s.err), "the term does not hold the lease"), "%s", h_slurp(s.err));
	/* Its own term holds the lease, and the fence is not older. */
	snprintf(sql, sizeof(sql), "CALL leaderrun_fence_end('%s', 0, 1); SELECT @leaderrun_fence_ended", lease);
	cr_assert_eq(AS_SUITE(&s, sql), 0, "%s", h_slurp(s.err));
	cr_assert(strstr(h_slurp(s.out), "NULL"), "%s", h_slurp(s.out));
	cr_assert_eq(h_finish(&a, 20000), 0, "the live job was ended: %s", h_slurp(a.err));
	cr_assert_str_eq(committed(lease), "1:live");
}

Test(fence, another_account_cannot_fence_a_lease_nor_hold_up_its_job)
{
	struct h_proc p, other;
	const char *lease = h_lease("otheracct");
	char job[1100], tx[1024], sql[512];

	rows_table();
	account("lr_other", "other-pw", "EXECUTE ON PROCEDURE", "leaderrun_fence");
	/* Term 1's job fences 2 s into its run; before that, another
	 * account fences term 1 of its lease and keeps its session open. */
	snprintf(job, sizeof(job), "sleep 2; %s", fenced(tx, sizeof(tx), 0, "$LEADERRUN_TERM", "cur", "0"));
	LR(&p, "-t", "5s", "-l", lease, "--", "sh", "-c", job);
	wait_for_fence(lease, 1);
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1); SELECT SLEEP(8)", lease);
	cr_assert_eq(as_account(&other, "lr_other", "other-pw", sql), 1);
	cr_assert(strstr(h_slurp(other.err), "may not be fenced by account 'lr_other'"), "%s", h_slurp(other.err));
	cr_assert_null(strstr(h_slurp(other.err), "term"), "a refusal told a term: %s", h_slurp(other.err));
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(committed(lease), "1:cur");
}

Test(fence, fence_user_names_the_jobs_own_account_and_only_it)
{
	struct h_proc p;
	const char *lease = h_lease("fenceuser");
	char job[1024], mine[1024];

	rows_table();
	account("lr_job", "job-pw", "EXECUTE ON PROCEDURE", "leaderrun_fence");
	account("lr_job", "job-pw", "INSERT ON", "fenced_rows");
	snprintf(job, sizeof(job),
		 "mariadb --no-defaults --socket=%s -ulr_job -pjob-pw %s -e \"START "
		 "TRANSACTION; CALL leaderrun_fence('$LEADERRUN_LEASE', $LEADERRUN_TERM); INSERT INTO fenced_rows "
		 "VALUES ('$LEADERRUN_LEASE', $LEADERRUN_TERM, 'job'); COMMIT\"",
		 getenv("LR_DB_SOCKET"), getenv("LR_DB_NAME"));
	LR(&p, "-n", "--fence-user", "lr_job", "-l", lease, "--", "sh", "-c", job);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* leaderrun's own account, the default's, is refused then. */
	LR(&p, "-n", "--fence-user", "lr_job", "-l", lease, "--", "sh", "-c",
	   fenced(mine, sizeof(mine), 0, "$LEADERRUN_TERM", "mine", "0"));
	cr_assert_eq(h_finish(&p, 20000), 1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "may not be fenced by account"), "%s", h_slurp(p.err));
	cr_assert_str_eq(committed(lease), "1:job");
}

Test(fence, a_refused_serializable_fence_left_open_holds_no_lock_on_any_lease)
{
	struct h_proc p, stale;
	const char *lease = h_lease("serial"), *never = h_lease("serial-never");
	char sql[512];

	for (int k = 1; k <= 2; k++) {
		LR(&p, "-n", "-l", lease, "--", "true");
		cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	}
	/* SERIALIZABLE turns every read into a locking one: a stale fence
	 * of a fenced lease, and one of a lease never fenced (its row's
	 * place), left open by a host cut off. */
	snprintf(sql, sizeof(sql),
		 "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;\nSTART TRANSACTION;\nCALL leaderrun_fence('%s', 1);\n"
		 "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;\nSTART TRANSACTION;\nCALL leaderrun_fence('%s', 7);\n"
		 "SELECT SLEEP(60);",
		 lease, never);
	cut_off_session(&stale, sql);
	wait_for_sleeper();
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "conflict"), "%s", h_slurp(p.err));
	LR(&p, "-n", "-l", never, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "conflict"), "%s", h_slurp(p.err));
	kill(stale.pid, SIGTERM);
	h_finish(&stale, 10000);
}

Test(fence, a_branch_without_a_session_that_names_a_live_session_gets_nobody_ended)
{
	struct h_proc p, innocent;
	const char *lease = h_lease("xaname");
	char id[32];

	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* A live session of the fencer's account with a transaction open. */
	session(&innocent, 0, "START TRANSACTION; SELECT COUNT(*) FROM leaderrun_lease; SELECT SLEEP(15); COMMIT");
	wait_for_sleeper();
	snprintf(id, sizeof(id), "%s",
		 h_sql("SELECT ID FROM information_schema.PROCESSLIST WHERE USER='%s' AND INFO LIKE 'SELECT SLEEP%%'",
		       getenv("LR_DB_USER")));
	/* A prepared branch whose session is gone holds the fence, naming
	 * that session's id: as a branch recovered after a restart may, once
	 * ids start again from 1. */
	h_sql("XA START 'xaname'; UPDATE leaderrun_fence SET fences = fences + 1, fenced_by = %s WHERE lease = '%s'; "
	      "XA END 'xaname'; XA PREPARE 'xaname'",
	      id, lease);
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "XA RECOVER"), "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "ended session"), "%s", h_slurp(p.err));
	h_sql("XA ROLLBACK 'xaname'");
	cr_assert_eq(h_finish(&innocent, 20000), 0, "the innocent session was ended: %s", h_slurp(innocent.err));
}

/* --init as root for TABLE; its status, its stderr in ERR. */
static int init_as_root(const char *table, char *err, size_t errlen)
{
	struct h_proc p;
	int rc;

	h_start(&p, (const char *const[]){h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL}, NULL);
	rc = h_finish(&p, 30000);
	snprintf(err, errlen, "%s", h_slurp(p.err));
	return rc;
}

Test(fence, init_refuses_a_procedure_planted_under_the_fences_name_and_never_runs_it)
{
	char err[4096];

	h_sql("CREATE USER IF NOT EXISTS 'lr_planter'@'localhost' IDENTIFIED BY 'planter-pw'");
	cr_assert_eq(init_as_root("plant_lease", err, sizeof(err)), 0, "%s", err);
	/* An account that once had CREATE ROUTINE left its own in place of
	 * one of the fence's: it grants it everything when the fence runs. */
	h_sql("DROP PROCEDURE plant_fence_slot");
	h_sql("CREATE DEFINER='lr_planter'@'localhost' PROCEDURE plant_fence_slot(IN p_lease VARCHAR(191), IN p_slot "
	      "SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED) SQL SECURITY INVOKER GRANT ALL ON *.* TO "
	      "'lr_planter'@'localhost' WITH GRANT OPTION");
	cr_assert_eq(init_as_root("plant_lease", err, sizeof(err)), 78, "%s", err);
	cr_assert(strstr(err, "DROP PROCEDURE `plant_fence_slot`") && strstr(err, "SQL SECURITY INVOKER"), "%s", err);
	/* The same with its definer's rights, and a body of its own. */
	h_sql("DROP PROCEDURE plant_fence_slot");
	h_sql("CREATE DEFINER='lr_planter'@'localhost' PROCEDURE plant_fence_slot(IN p_lease VARCHAR(191), IN p_slot "
	      "SMALLINT UNSIGNED, IN p_term BIGINT UNSIGNED) SQL SECURITY DEFINER DO 0");
	cr_assert_eq(init_as_root("plant_lease", err, sizeof(err)), 78, "%s", err);
	cr_assert(strstr(err, "its body is not the one leaderrun writes"), "%s", err);
	cr_assert_null(strstr(h_sql("SHOW GRANTS FOR 'lr_planter'@'localhost'"), "ALL PRIVILEGES"),
		       "the planted procedure ran");
	/* Dropped, it is made again, leaderrun's own. */
	h_sql("DROP PROCEDURE plant_fence_slot");
	cr_assert_eq(init_as_root("plant_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "made 1 of the fence's procedures"), "%s", err);
	cr_assert_eq(init_as_root("plant_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "nothing to do"), "%s", err);
}

Test(fence, init_refuses_a_trigger_on_the_fence)
{
	char err[4096];

	cr_assert_eq(init_as_root("trig_lease", err, sizeof(err)), 0, "%s", err);
	/* Every move would keep the old term. */
	h_sql("CREATE TRIGGER trig_fence_keep BEFORE UPDATE ON trig_fence FOR EACH ROW SET NEW.term = OLD.term");
	cr_assert_eq(init_as_root("trig_lease", err, sizeof(err)), 78, "%s", err);
	cr_assert(strstr(err, "trigger trig_fence_keep stands on trig_fence"), "%s", err);
	h_sql("DROP TRIGGER trig_fence_keep");
	cr_assert_eq(init_as_root("trig_lease", err, sizeof(err)), 0, "%s", err);
}

Test(fence, init_by_an_account_that_cannot_end_sessions_warns)
{
	struct h_proc p;
	char dsn[512];
	const char *db = getenv("LR_DB_NAME");

	h_sql("CREATE USER IF NOT EXISTS 'lr_weak'@'localhost' IDENTIFIED BY 'weak-pw'");
	h_sql("GRANT ALL ON %s.* TO 'lr_weak'@'localhost'", db);
	snprintf(dsn, sizeof(dsn), "mysql://lr_weak:weak-pw@localhost/%s?socket=%s", db, getenv("LR_DB_SOCKET"));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--table", "weak_lease", "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "may not end other accounts' sessions"), "%s", h_slurp(p.err));
	/* Its grant on the whole database lets it write the fence: an
	 * administrator's --init says so. */
	{
		char err[4096];
		cr_assert_eq(init_as_root("weak_lease", err, sizeof(err)), 0, "%s", err);
		cr_assert(strstr(err, "'lr_weak'@'localhost' may write or create in the fence's whole database"), "%s",
			  err);
	}
}

Test(fence, init_without_the_fences_grants_names_them)
{
	struct h_proc p;
	char dsn[512];
	const char *db = getenv("LR_DB_NAME");

	/* The grants of schema 5: the lease table and the history only. */
	h_sql("CREATE USER IF NOT EXISTS 'lr_old'@'localhost' IDENTIFIED BY 'old-pw'");
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s.leaderrun_lease TO 'lr_old'@'localhost'", db);
	h_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON %s.leaderrun_history TO 'lr_old'@'localhost'", db);
	snprintf(dsn, sizeof(dsn), "mysql://lr_old:old-pw@localhost/%s?socket=%s", db, getenv("LR_DB_SOCKET"));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 77, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "EXECUTE on its procedures (sql/grants.sql)"), "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "needs CREATE"), "%s", h_slurp(p.err));
	/* A run says the same of the fence it cannot move. */
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "-n", "-l", h_lease("oldgrants"), "--", "true", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "grant this account EXECUTE on its procedures leaderrun_fence_move"), "%s",
		  h_slurp(p.err));
}

/* Schema 6's fence for TABLE_lease, as sql/upgrade-5-to-6.sql made it, its
 * procedures' definer the application's account when OWNER is set. */
static void schema6_fence(const char *prefix)
{
	char cmd[1024];
	struct h_proc p;

	snprintf(cmd, sizeof(cmd),
		 "sed 's/leaderrun_/%s_/g' \"$LR_UPGRADE_DIR/../../sql/upgrade-5-to-6.sql\" | mariadb --no-defaults "
		 "-uroot --socket=\"$LR_DB_SOCKET\" \"$LR_DB_NAME\"",
		 prefix);
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
}

Test(fence, init_upgrades_a_schema_6_fence_keeping_execute_and_taking_writes_away)
{
	char err[4096];
	const char *db = getenv("LR_DB_NAME");

	h_sql("CREATE TABLE IF NOT EXISTS six_lease LIKE leaderrun_lease");
	h_sql("CREATE TABLE IF NOT EXISTS six_history LIKE leaderrun_history");
	schema6_fence("six");
	/* Schema 6's grants for the application's account (lr_six) and a
	 * job's (lr_sixjob). */
	h_sql("CREATE USER IF NOT EXISTS 'lr_six'@'localhost' IDENTIFIED BY 'six-pw'");
	h_sql("CREATE USER IF NOT EXISTS 'lr_sixjob'@'localhost' IDENTIFIED BY 'six-pw'");
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s.six_fence TO 'lr_six'@'localhost'", db);
	h_sql("GRANT EXECUTE ON PROCEDURE %s.six_fence_end TO 'lr_six'@'localhost'", db);
	h_sql("GRANT EXECUTE ON PROCEDURE %s.six_fence TO 'lr_sixjob'@'localhost'", db);
	cr_assert_eq(init_as_root("six_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "from schema 6 to 7"), "%s", err);
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
			       "TABLE_NAME = 'six_fence' AND COLUMN_NAME = 'fencer'"),
			 "1");
	cr_assert_str_eq(h_sql("SELECT Table_priv FROM mysql.tables_priv WHERE User = 'lr_six' AND Table_name = "
			       "'six_fence'"),
			 "Select");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(Routine_name ORDER BY Routine_name) FROM mysql.procs_priv WHERE "
			       "User = 'lr_six' AND Proc_priv = 'Execute'"),
			 "six_fence_end,six_fence_move");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(Routine_name) FROM mysql.procs_priv WHERE User = 'lr_sixjob' AND "
			       "Proc_priv = 'Execute'"),
			 "six_fence");
	/* What it made, it trusts. */
	cr_assert_eq(init_as_root("six_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "nothing to do"), "%s", err);
}

/* SCRIPT of sql/ applied as root to database DB. */
static void apply_as_root(const char *script, const char *db)
{
	char cmd[1024];
	struct h_proc p;

	snprintf(cmd, sizeof(cmd),
		 "mariadb --no-defaults -uroot --socket=\"$LR_DB_SOCKET\" %s < \"$LR_UPGRADE_DIR/../../sql/%s\"", db,
		 script);
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s: %s", script, h_slurp(p.err));
}

Test(fence, the_upgrade_script_from_schema_6_keeps_execute_and_takes_writes_away)
{
	char dsn[512];
	struct h_proc p;

	/* A database of schema 6, its grants as sql/grants.sql of 0.6.0 gave
	 * them, and a job's. */
	h_sql("DROP DATABASE IF EXISTS lr_upg67");
	h_sql("CREATE DATABASE lr_upg67");
	h_sql("CREATE TABLE lr_upg67.leaderrun_lease LIKE leaderrun_lease");
	h_sql("CREATE TABLE lr_upg67.leaderrun_history LIKE leaderrun_history");
	apply_as_root("upgrade-5-to-6.sql", "lr_upg67");
	h_sql("CREATE USER IF NOT EXISTS 'lr_u67'@'localhost' IDENTIFIED BY 'u67-pw'");
	h_sql("CREATE USER IF NOT EXISTS 'lr_u67job'@'localhost' IDENTIFIED BY 'u67-pw'");
	h_sql("GRANT SELECT, INSERT, UPDATE ON lr_upg67.leaderrun_fence TO 'lr_u67'@'localhost'");
	h_sql("GRANT EXECUTE ON PROCEDURE lr_upg67.leaderrun_fence_end TO 'lr_u67'@'localhost'");
	h_sql("GRANT EXECUTE ON PROCEDURE lr_upg67.leaderrun_fence_slot TO 'lr_u67job'@'localhost'");
	apply_as_root("upgrade-6-to-7.sql", "lr_upg67");
	cr_assert_str_eq(h_sql("SELECT Table_priv FROM mysql.tables_priv WHERE User = 'lr_u67' AND Db = 'lr_upg67'"),
			 "Select");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(Routine_name ORDER BY Routine_name) FROM mysql.procs_priv WHERE "
			       "User = 'lr_u67' AND Db = 'lr_upg67' AND Proc_priv = 'Execute'"),
			 "leaderrun_fence_end,leaderrun_fence_move");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(Routine_name) FROM mysql.procs_priv WHERE User = 'lr_u67job' AND "
			       "Db = 'lr_upg67' AND Proc_priv = 'Execute'"),
			 "leaderrun_fence_slot");
	/* --init finds the script's procedures its own: it makes only the
	 * optional standbys' table, which no upgrade script has. */
	snprintf(dsn, sizeof(dsn), "mysql://root@localhost/lr_upg67?socket=%s", getenv("LR_DB_SOCKET"));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "is current (schema 7); made the standbys' table"), "%s", h_slurp(p.err));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "nothing to do"), "%s", h_slurp(p.err));
	h_sql("DROP DATABASE lr_upg67");
}

Test(fence, an_account_that_is_not_the_fencer_never_takes_nor_waits_for_the_fences_lock)
{
	struct h_proc job, other;
	const char *lease = h_lease("nolock");
	char tx[1024], sql[512];
	int64_t t0;

	rows_table();
	account("lr_other", "other-pw", "EXECUTE ON PROCEDURE", "leaderrun_fence");
	/* The lease's own job holds its fence, open for 6 s. */
	LR(&job, "-t", "10s", "-l", lease, "--", "sh", "-c", fenced(tx, sizeof(tx), 0, "$LEADERRUN_TERM", "own", "6"));
	wait_for_sleeper();
	/* Another account's fence is refused at once, from what it reads:
	 * had it locked the row, it would wait for the job (and a CALL cut
	 * short in that lock, by max_statement_time or KILL QUERY, would
	 * keep it past its refusal). */
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', 1)", lease);
	t0 = h_now_ms();
	cr_assert_eq(as_account(&other, "lr_other", "other-pw", sql), 1);
	cr_assert(strstr(h_slurp(other.err), "may not be fenced by account 'lr_other'"), "%s", h_slurp(other.err));
	cr_assert_lt(h_now_ms() - t0, 3000, "the refusal waited %lld ms for the row", (long long)(h_now_ms() - t0));
	cr_assert_eq(h_finish(&job, 30000), 0, "%s", h_slurp(job.err));
	cr_assert_str_eq(committed(lease), "1:own");
}

Test(fence, init_refuses_a_lease_table_that_is_a_view)
{
	char err[4096];

	/* An account that could create views put one, over a table of its
	 * own, where the lease table should be: the procedures would read
	 * it with their definer's rights. */
	h_sql("CREATE TABLE IF NOT EXISTS viewed_real LIKE leaderrun_lease");
	h_sql("CREATE OR REPLACE SQL SECURITY INVOKER VIEW viewed_lease AS SELECT * FROM viewed_real");
	cr_assert_eq(init_as_root("viewed_lease", err, sizeof(err)), 78, "%s", err);
	cr_assert(strstr(err, "viewed_lease is a VIEW, not a table"), "%s", err);
	h_sql("DROP VIEW viewed_lease");
}

Test(fence, init_refuses_a_body_that_hides_code_in_a_string_between_comment_markers)
{
	char err[4096], cmd[2048];
	struct h_proc p;

	if (h_server_mysql())
		cr_skip_test("MariaDB's executable comments: MySQL keeps none in a body");
	cr_assert_eq(init_as_root("hide_lease", err, sizeof(err)), 0, "%s", err);
	/* hide_fence again, as SHOW CREATE gives it, with a statement of its
	 * own put between a string holding the comment's opening marker and
	 * one holding its close: read without the strings' meaning, the body
	 * is leaderrun's. */
	snprintf(
	    cmd, sizeof(cmd),
	    "set -e; m() { mariadb --no-defaults -uroot --socket=\"$LR_DB_SOCKET\" \"$LR_DB_NAME\" \"$@\"; }; "
	    "def=$(m -N -r -e \"SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = "
	    "DATABASE() AND ROUTINE_NAME = 'hide_fence'\"); "
	    "new=$(printf '%%s' \"$def\" | sed \"s|SET msg = CONCAT('leaderrun_fence: lease ', q, msg);|SET msg = "
	    "CONCAT('leaderrun_fence: lease /*M!'); SET @hidden_ran = 1; SET msg = CONCAT('*/', q, msg);|\"); "
	    "[ \"$new\" != \"$def\" ]; "
	    "{ echo 'DROP PROCEDURE hide_fence;'; echo 'DELIMITER ;;'; echo 'CREATE PROCEDURE hide_fence(IN p_lease "
	    "VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, IN p_term BIGINT UNSIGNED) MODIFIES SQL DATA "
	    "SQL SECURITY DEFINER'; printf '%%s;;\\n' \"$new\"; echo 'DELIMITER ;'; } | m");
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	cr_assert_eq(init_as_root("hide_lease", err, sizeof(err)), 78, "%s", err);
	cr_assert(strstr(err, "its body is not the one leaderrun writes"), "%s", err);
	h_sql("DROP PROCEDURE hide_fence");
}

/* ---- Issue 47: whoever defined the fence's procedures, a stale fencer of
 * its own account is ended at the takeover. Three definers: an
 * administrator (root: PROCESS and CONNECTION ADMIN), the application's
 * account with ALL on its database and nothing global, and the least an
 * account needs to make the procedures itself: sql/grants.sql's grants,
 * CREATE ROUTINE on the database and INSERT, UPDATE on the fence's table,
 * which its procedures write with its rights. In each, leaderrun and the
 * job connect as the application's account (with the administrator's
 * fence, one with sql/grants.sql's grants). Seen failing on 0fe1266 for
 * the two definers without PROCESS: the end failed with error 1227, the
 * next holder waited for the held COMMIT (20 s), which then committed. */

/* The next holder starts this soon after the release, at most: the move's
 * lock wait (1 s), the end, a retry; room for a busy machine. */
#define TAKEOVER_BOUND_MS 10000

enum definer_kind { DEFINER_ADMIN, DEFINER_APP, DEFINER_LEAST };

/* USER@'%' (password "USER-pw"), with GRANT ... TO it for each of the
 * statements' fragments (NULL-ended). One account for the socket and TCP,
 * as an application has: MariaDB and MySQL show and let end, without
 * PROCESS and CONNECTION ADMIN, the sessions of one's own account only
 * (user and host), not of one's user name from another host. */
static void kind_grant(const char *user, const char *const *grants)
{
	h_sql("CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s-pw'", user, user);
	for (int g = 0; grants[g]; g++)
		h_sql("GRANT %s TO '%s'@'%%'", grants[g], user);
}

/* sql/grants.sql's grants on PREFIX's tables and procedures, as text. */
static void grants_sql(const char *prefix, char out[9][160])
{
	const char *db = getenv("LR_DB_NAME");

	snprintf(out[0], 160, "SELECT, INSERT, UPDATE ON %s.%s_lease", db, prefix);
	snprintf(out[1], 160, "SELECT, INSERT, UPDATE, DELETE ON %s.%s_history", db, prefix);
	snprintf(out[2], 160, "SELECT, INSERT, UPDATE, DELETE ON %s.%s_standby", db, prefix);
	snprintf(out[3], 160, "SELECT ON %s.%s_fence", db, prefix);
	snprintf(out[4], 160, "EXECUTE ON PROCEDURE %s.%s_fence_move", db, prefix);
	snprintf(out[5], 160, "EXECUTE ON PROCEDURE %s.%s_fence_end", db, prefix);
	snprintf(out[6], 160, "EXECUTE ON PROCEDURE %s.%s_fence", db, prefix);
	snprintf(out[7], 160, "EXECUTE ON PROCEDURE %s.%s_fence_slot", db, prefix);
	snprintf(out[8], 160, "SELECT, INSERT ON %s.fenced_rows", db);
}

/* --init for PREFIX_lease as USER over the socket (the definer is then
 * USER@%); its stderr in ERR. */
static int init_as(const char *user, const char *prefix, char *err, size_t errlen)
{
	char dsn[512], table[64];
	struct h_proc p;
	int rc;

	snprintf(dsn, sizeof(dsn), "mysql://%s:%s-pw@localhost/%s?socket=%s", user, user, getenv("LR_DB_NAME"),
		 getenv("LR_DB_SOCKET"));
	snprintf(table, sizeof(table), "%s_lease", prefix);
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--table", table, "--init", NULL}, NULL);
	rc = h_finish(&p, 30000);
	snprintf(err, errlen, "%s", h_slurp(p.err));
	return rc;
}

/* The fence of PREFIX made by a definer of KIND; returns the account that
 * leaderrun and the job use. */
static const char *fence_by(enum definer_kind kind, const char *prefix)
{
	char g[10][160], err[4096];
	const char *gp[11];
	const char *db = getenv("LR_DB_NAME");
	const char *user = kind == DEFINER_ADMIN ? "lr_k_adm" : kind == DEFINER_APP ? "lr_k_app" : "lr_k_least";

	rows_table();
	grants_sql(prefix, g);
	/* MySQL: without PROCESS, the end ends a session only when no
	 * prepared XA branch can have left it (xa_detach_on_prepare OFF). */
	if (h_server_mysql())
		h_sql("SET GLOBAL xa_detach_on_prepare = OFF");
	if (kind == DEFINER_APP) {
		snprintf(g[0], 160, "ALL ON %s.*", db);
		kind_grant(user, (const char *const[]){g[0], NULL});
		cr_assert_eq(init_as(user, prefix, err, sizeof(err)), 0, "%s", err);
		return user;
	}
	if (kind == DEFINER_ADMIN) {
		char table[64];
		snprintf(table, sizeof(table), "%s_lease", prefix);
		cr_assert_eq(init_as_root(table, err, sizeof(err)), 0, "%s", err);
	} else {
		/* The tables, as sql/leaderrun.sql makes them, by an
		 * administrator; the procedures by the account. */
		h_sql("CREATE TABLE IF NOT EXISTS %s_lease LIKE leaderrun_lease", prefix);
		h_sql("CREATE TABLE IF NOT EXISTS %s_history LIKE leaderrun_history", prefix);
		h_sql("CREATE TABLE IF NOT EXISTS %s_standby LIKE leaderrun_standby", prefix);
		h_sql("CREATE TABLE IF NOT EXISTS %s_fence LIKE leaderrun_fence", prefix);
		snprintf(g[4], 160, "CREATE ROUTINE ON %s.*", db);
		snprintf(g[5], 160, "INSERT, UPDATE ON %s.%s_fence", db, prefix);
		kind_grant(user, (const char *const[]){g[0], g[1], g[2], g[3], g[4], g[5], g[8], NULL});
		cr_assert_eq(init_as(user, prefix, err, sizeof(err)), 0, "%s", err);
		cr_assert(strstr(err, "made 4 of the fence's procedures") &&
			      strstr(err, "neither on MySQL with xa_detach_on_prepare ON (its default) nor on Galera"),
			  "%s", err);
		grants_sql(prefix, g);
	}
	for (int k = 0; k < 9; k++)
		gp[k] = g[k];
	gp[9] = NULL;
	kind_grant(user, gp);
	return user;
}

/* USER's DSN over TCP (after --init's login over the socket, MySQL's
 * caching_sha2_password lets the job's client in over TCP). */
static const char *tcp_dsn(char *buf, size_t len, const char *user)
{
	snprintf(buf, len, "mysql://%s:%s-pw@127.0.0.1:%s/%s", user, user, getenv("LR_DB_PORT"), getenv("LR_DB_NAME"));
	return buf;
}

/* USER's transaction of term 1 of LEASE through PORT: fences with FENCE
 * and writes its row, says "fenced", and sends its COMMIT when a line
 * arrives on the FIFO GO. */
static void held_commit_start(struct h_proc *p, int port, const char *user, const char *fence, const char *lease,
			      const char *go)
{
	char sh[2048];

	cr_assert_eq(mkfifo(go, 0600), 0, "mkfifo %s: %s", go, strerror(errno));
	snprintf(sh, sizeof(sh),
		 "{ echo \"START TRANSACTION; CALL %s('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, 'stale'); "
		 "SELECT 'fenced';\"; read -r _ < %s; echo \"COMMIT; SELECT 'committed';\"; } | mariadb --no-defaults "
		 "--unbuffered --protocol=TCP -h127.0.0.1 -P%d -u%s -p%s-pw %s",
		 fence, lease, lease, go, port, user, user, getenv("LR_DB_NAME"));
	h_start(p, (const char *const[]){"timeout", "60", "/bin/sh", "-c", sh, NULL}, NULL);
	for (int k = 0; k < 2000 && !strstr(h_slurp(p->out), "fenced") && h_wait(p, 0) < 0; k++)
		h_sleep_ms(10);
	cr_assert(strstr(h_slurp(p->out), "fenced"), "the term-1 transaction never fenced:\n%s", h_slurp(p->err));
}

/* The scenario of issue 47 with the fence of PREFIX made by KIND. */
static void stale_commit_held_in_the_network(enum definer_kind kind, const char *prefix)
{
	struct h_proc a, b, stale, rel;
	const char *user = fence_by(kind, prefix);
	const char *lease = h_lease(prefix);
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	char dsn[512], table[64], fence[64], go[256], job[1024];
	const char *rows;
	int64_t t0, took;

	snprintf(table, sizeof(table), "%s_lease", prefix);
	snprintf(fence, sizeof(fence), "%s_fence", prefix);
	tcp_dsn(dsn, sizeof(dsn), user);
	h_start(&a,
		(const char *const[]){h_bin(), "-d", dsn, "--table", table, "-t", "3s", "-l", lease, "--", "sleep",
				      "60", NULL},
		NULL);
	for (int k = 0;
	     k < 200 && atoi(h_sql("SELECT COUNT(*) FROM %s WHERE lease='%s' AND term=1", fence, lease)) == 0; k++)
		h_sleep_ms(50);
	snprintf(go, sizeof(go), "%s/go-%s", getenv("LR_DB_DIR"), lease);
	held_commit_start(&stale, proxy_port(proxy), user, fence, lease, go);
	/* The next holder's job writes its row, fenced with its term. */
	snprintf(job, sizeof(job),
		 "echo started; mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P%s -u%s -p%s-pw %s -e \"START "
		 "TRANSACTION; CALL %s('$LEADERRUN_LEASE', $LEADERRUN_TERM); INSERT INTO fenced_rows VALUES "
		 "('$LEADERRUN_LEASE', $LEADERRUN_TERM, 'new'); COMMIT\"",
		 getenv("LR_DB_PORT"), user, user, getenv("LR_DB_NAME"), fence);
	h_start(&b,
		(const char *const[]){h_bin(), "-d", dsn, "--table", table, "-t", "3s", "-l", lease, "--", "sh", "-c",
				      job, NULL},
		NULL);
	/* The COMMIT, held in the network for 20 s. */
	proxy_set_delay(proxy, 20000);
	proxy_set_mode(proxy, PROXY_DELAY);
	h_fifo_go(go);
	h_start(&rel, (const char *const[]){h_bin(), "-d", dsn, "--table", table, "--release", lease, NULL}, NULL);
	cr_assert_eq(h_finish(&rel, 20000), 0, "%s", h_slurp(rel.err));
	/* The holder sees the revocation at its next renewal (1 s), stops
	 * its command and lets go: from then on, the bound. */
	h_finish(&a, 20000);
	t0 = h_now_ms();
	cr_assert(h_wait_file(b.out, "started", 30000), "the next holder never started:\n%s", h_slurp(b.err));
	took = h_now_ms() - t0;
	cr_log_info("%s: the next holder started %lld ms after the release", prefix, (long long)took);
	cr_assert_eq(h_finish(&b, 30000), 0, "%s", h_slurp(b.err));
	cr_assert_neq(h_finish(&stale, 40000), 0, "the stale transaction ended well:\n%s", h_slurp(stale.out));
	cr_assert_null(strstr(h_slurp(stale.out), "committed"), "%s", h_slurp(stale.out));
	rows = committed(lease);
	cr_assert(strcmp(rows, "2:new") == 0 || strcmp(rows, "3:new") == 0, "committed: %s\n%s", rows, h_slurp(b.err));
	cr_assert(strstr(h_slurp(b.err), "ended session"), "%s", h_slurp(b.err));
	cr_assert_lt(took, TAKEOVER_BOUND_MS, "the next holder started %lld ms after the release:\n%s", (long long)took,
		     h_slurp(b.err));
	unlink(go);
}

Test(fence, a_stale_commit_held_in_the_network_is_ended_with_an_administrators_fence)
{
	stale_commit_held_in_the_network(DEFINER_ADMIN, "k_adm");
}

Test(fence, a_stale_commit_held_in_the_network_is_ended_with_the_applications_own_fence)
{
	stale_commit_held_in_the_network(DEFINER_APP, "k_app");
}

Test(fence, a_stale_commit_held_in_the_network_is_ended_with_the_least_privileged_definers_fence)
{
	stale_commit_held_in_the_network(DEFINER_LEAST, "k_least");
}

/* A fence of 0.7.0 to 0.10.2, whose end needs PROCESS: --init replaces
 * its move and end, keeps who may execute them, and trusts the result. */
Test(fence, init_replaces_the_move_and_end_of_an_older_leaderrun_keeping_execute)
{
	char err[4096], cmd[1024];
	struct h_proc p;

	cr_assert_eq(init_as_root("old10_lease", err, sizeof(err)), 0, "%s", err);
	snprintf(
	    cmd, sizeof(cmd),
	    "{ echo 'DROP PROCEDURE old10_fence_end; DROP PROCEDURE old10_fence_move;'; sed 's/`leaderrun_/`old10_/g' "
	    "\"$LR_UPGRADE_DIR/fence-0.10.sql\"; } | mariadb --no-defaults -uroot --socket=\"$LR_DB_SOCKET\" "
	    "\"$LR_DB_NAME\"");
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	kind_grant("lr_old10", (const char *const[]){NULL});
	h_sql("GRANT EXECUTE ON PROCEDURE %s.old10_fence_end TO 'lr_old10'@'%%'", getenv("LR_DB_NAME"));
	h_sql("GRANT EXECUTE ON PROCEDURE %s.old10_fence_move TO 'lr_old10'@'%%'", getenv("LR_DB_NAME"));
	cr_assert_eq(init_as_root("old10_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "replaced 2 of the fence's procedures made by an older leaderrun"), "%s", err);
	cr_assert_null(strstr(h_sql("SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = "
				    "DATABASE() AND ROUTINE_NAME = 'old10_fence_end'"),
			      "JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id\n      WHERE"),
		       "the old end stands");
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(Routine_name ORDER BY Routine_name) FROM mysql.procs_priv WHERE "
			       "User = 'lr_old10' AND Proc_priv = 'Execute'"),
			 "old10_fence_end,old10_fence_move");
	cr_assert_eq(init_as_root("old10_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "nothing to do"), "%s", err);
}

/* Without PROCESS the end cannot tell a stale fence written before the
 * server's last start from an XA branch recovered by it: PREFIX's stale
 * fence, its mark forged by FORGE (an UPDATE's SET of fences), gets
 * nobody ended, and the message names PROCESS, the definer and SAID. */
static void forged_fence_ends_nobody(const char *prefix, const char *forge, const char *said)
{
	struct h_proc p, stale;
	const char *user = fence_by(DEFINER_LEAST, prefix);
	const char *lease = h_lease(prefix);
	char dsn[512], sql[512], table[64];

	snprintf(table, sizeof(table), "%s_lease", prefix);
	tcp_dsn(dsn, sizeof(dsn), user);
	/* --check-server names the definer and what it lacks. */
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--table", table, "--check-server", NULL}, NULL);
	h_finish(&p, 20000);
	cr_assert(strstr(h_slurp(p.out), "defined by lr_k_least@%, without PROCESS or CONNECTION ADMIN") &&
		      strstr(h_slurp(p.out), "xa_detach_on_prepare ON nor on a cluster"),
		  "%s", h_slurp(p.out));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--table", table, "-n", "-l", lease, "--", "true", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	h_sql("UPDATE %s_fence SET fences = %s WHERE lease = '%s'", prefix, forge, lease);
	snprintf(sql, sizeof(sql),
		 "START TRANSACTION; CALL %s_fence('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, 'stale'); "
		 "SELECT SLEEP(20); COMMIT",
		 prefix, lease, lease);
	snprintf(dsn, sizeof(dsn), "-p%s-pw", user);
	h_start(&stale,
		(const char *const[]){"mariadb", "--no-defaults", "-S", getenv("LR_DB_SOCKET"), "-u", user, dsn,
				      getenv("LR_DB_NAME"), "-e", sql, NULL},
		NULL);
	for (int k = 0; k < 200 && atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s' AND "
					      "INFO LIKE 'SELECT SLEEP%%'",
					      user)) == 0;
	     k++)
		h_sleep_ms(50);
	tcp_dsn(dsn, sizeof(dsn), user);
	h_start(&p,
		(const char *const[]){h_bin(), "-d", dsn, "--table", table, "-n", "-l", lease, "--", "echo", "ran",
				      NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 30000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "lacks PROCESS") && strstr(h_slurp(p.err), "lr_k_least@%") &&
		      strstr(h_slurp(p.err), said),
		  "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "ended session"), "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&stale, 30000), 0, "the stale session was ended: %s", h_slurp(stale.err));
}

/* A row last moved by an older leaderrun's move (0 in the high bits, as
 * forged here): no start to compare, and the message says so. */
Test(fence, without_process_a_fence_moved_before_the_servers_start_gets_nobody_ended)
{
	forged_fence_ends_nobody("k_rst", "fences & 4294967295", "moved by an older leaderrun");
}

/* A job of another account than the definer's (--fence-user), with the
 * least definer: its stale session is one the definer may neither see nor
 * end; nobody is ended, and the message says whose grant is missing. */
Test(fence, without_process_another_accounts_stale_fence_gets_nobody_ended_and_says_whose_grant)
{
	struct h_proc p, stale;
	const char *user = fence_by(DEFINER_LEAST, "k_oth");
	const char *lease = h_lease("k_oth");
	char dsn[512], sql[512];

	kind_grant("lr_k_job", (const char *const[]){NULL});
	h_sql("GRANT EXECUTE ON PROCEDURE %s.k_oth_fence TO 'lr_k_job'@'%%'", getenv("LR_DB_NAME"));
	tcp_dsn(dsn, sizeof(dsn), user);
	h_start(&p,
		(const char *const[]){h_bin(), "-d", dsn, "--table", "k_oth_lease", "--fence-user", "lr_k_job", "-n",
				      "-l", lease, "--", "true", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	snprintf(sql, sizeof(sql), "START TRANSACTION; CALL k_oth_fence('%s', 1); SELECT SLEEP(20); COMMIT", lease);
	h_start(&stale,
		(const char *const[]){"mariadb", "--no-defaults", "-S", getenv("LR_DB_SOCKET"), "-u", "lr_k_job",
				      "-plr_k_job-pw", getenv("LR_DB_NAME"), "-e", sql, NULL},
		NULL);
	for (int k = 0;
	     k < 200 && atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='lr_k_job' "
				   "AND INFO LIKE 'SELECT SLEEP%%'")) == 0;
	     k++)
		h_sleep_ms(50);
	h_start(&p,
		(const char *const[]){h_bin(), "-d", dsn, "--table", "k_oth_lease", "--fence-user", "lr_k_job", "-n",
				      "-l", lease, "--", "echo", "ran", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 30000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "no session of k_oth_fence_end's definer's account lr_k_least@%") &&
		      strstr(h_slurp(p.err), "PROCESS and CONNECTION ADMIN"),
		  "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&stale, 30000), 0, "the stale session was ended: %s", h_slurp(stale.err));
}

/* A session of USER running STATEMENTS over the socket, and a wait until
 * it runs its SLEEP. */
static void user_session(struct h_proc *p, const char *user, const char *statements)
{
	char pw[160];

	snprintf(pw, sizeof(pw), "-p%s-pw", user);
	h_start(p,
		(const char *const[]){"mariadb", "--no-defaults", "-S", getenv("LR_DB_SOCKET"), "-u", user, pw,
				      getenv("LR_DB_NAME"), "-e", statements, NULL},
		NULL);
	for (int k = 0; k < 200 && atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s' AND "
					      "INFO LIKE 'SELECT SLEEP%%'",
					      user)) == 0;
	     k++)
		h_sleep_ms(50);
}

/* Review S5: on MySQL a prepared XA branch leaves its connection
 * (xa_detach_on_prepare, ON by default), which a pool then gives other
 * work. Without PROCESS the end cannot see the branch: it must end
 * nobody, and say that XA is why. On MariaDB the branch stays with its
 * session, which can run nothing else, until that session ends. */
Test(fence, without_process_a_prepared_xa_branch_that_fenced_gets_its_connections_other_work_spared)
{
	struct h_proc p, pool;
	const char *user = fence_by(DEFINER_LEAST, "k_xa");
	const char *lease = h_lease("k_xa");
	char dsn[512], sql[768];

	if (h_server_mysql())
		h_sql("SET GLOBAL xa_detach_on_prepare = ON");
	tcp_dsn(dsn, sizeof(dsn), user);
	h_start(
	    &p,
	    (const char *const[]){h_bin(), "-d", dsn, "--table", "k_xa_lease", "-n", "-l", lease, "--", "true", NULL},
	    NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	snprintf(sql, sizeof(sql),
		 "XA START '%s'; CALL k_xa_fence('%s', 1); INSERT INTO fenced_rows VALUES ('%s', 1, 'xa'); XA END "
		 "'%s'; XA PREPARE '%s'; SELECT SLEEP(15) AS other_work",
		 lease, lease, lease, lease, lease);
	user_session(&pool, user, sql);
	h_start(&p,
		(const char *const[]){h_bin(), "-d", dsn, "--table", "k_xa_lease", "-n", "-l", lease, "--", "echo",
				      "ran", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 30000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "XA RECOVER"), "%s", h_slurp(p.err));
	if (h_server_mysql()) {
		cr_assert(strstr(h_slurp(p.err), "xa_detach_on_prepare"), "%s", h_slurp(p.err));
		cr_assert_null(strstr(h_slurp(p.err), "ended session"), "%s", h_slurp(p.err));
		cr_assert_eq(h_finish(&pool, 30000), 0, "the connection's other work was ended: %s",
			     h_slurp(pool.err));
		h_sql("SET GLOBAL xa_detach_on_prepare = OFF");
	} else {
		kill(pool.pid, SIGTERM);
		h_finish(&pool, 30000);
	}
	h_sql("XA ROLLBACK '%s'", lease);
	cr_assert_str_eq(committed(lease), "");
}

/* Review C4: a fence marked with another run's start (a server restarted
 * since, with a clock that was ahead then: the mark is later than this
 * run's start) gets nobody ended. The move's wall second, compared with
 * the start as before, let the end kill a session whose id is this run's
 * only by chance. */
Test(fence, without_process_a_fence_marked_with_another_runs_start_gets_nobody_ended)
{
	forged_fence_ends_nobody("k_clk", "fences + (100000 << 32)", "before the server's last start");
}

/* Review S6: on a Group Replication member an applier's open fence names
 * another member's connection id, which a session here may have. Without
 * PROCESS the end ends nobody on such a server (group_replication_group_name
 * set), and names PROCESS. MySQL only: a MariaDB server without a Galera
 * provider cannot turn wsrep_on ON. */
Test(fence, without_process_a_group_replication_member_gets_nobody_ended)
{
	if (!h_server_mysql())
		return;
	if (atoi(h_sql("SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'group_replication'")) == 0)
		h_sql("INSTALL PLUGIN group_replication SONAME 'group_replication.so'");
	h_sql("SET GLOBAL group_replication_group_name = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa'");
	forged_fence_ends_nobody("k_grp", "fences", "Galera or Group Replication");
	h_sql("UNINSTALL PLUGIN group_replication");
}

/* PREFIX's fence made by an administrator, with 0.11.0's move and end in
 * place of this build's (defined by root, who has PROCESS and CONNECTION
 * ADMIN). */
static void fence_of_0_11(const char *prefix)
{
	char err[4096], cmd[1024], table[64];
	struct h_proc p;

	snprintf(table, sizeof(table), "%s_lease", prefix);
	cr_assert_eq(init_as_root(table, err, sizeof(err)), 0, "%s", err);
	snprintf(cmd, sizeof(cmd),
		 "{ echo 'DROP PROCEDURE %s_fence_end; DROP PROCEDURE %s_fence_move;'; sed 's/`leaderrun_/`%s_/g' "
		 "\"$LR_UPGRADE_DIR/fence-0.11.sql\"; } | mariadb --no-defaults -uroot --socket=\"$LR_DB_SOCKET\" "
		 "\"$LR_DB_NAME\"",
		 prefix, prefix, prefix);
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
}

static const char *definers(const char *prefix)
{
	return h_sql("SELECT GROUP_CONCAT(DISTINCT DEFINER) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = "
		     "DATABASE() AND ROUTINE_NAME LIKE '%s\\_fence%%'",
		     prefix);
}

/* Review C6: --init run by the application's account (ALL on its
 * database, and sight of routines' bodies), say from an entrypoint, must not replace an
 * administrator's procedures with its own, which could end nobody's
 * session but its own account's: it refuses in one line naming who runs
 * it instead, and drops nothing. An administrator replaces them. */
Test(fence, init_by_an_account_without_the_old_definers_rights_leaves_its_procedures)
{
	char err[4096], dsn[512];
	struct h_proc p;
	char was[512];

	fence_of_0_11("k_dg");
	kind_grant("lr_k_dg", (const char *const[]){NULL});
	h_sql("GRANT ALL ON %s.* TO 'lr_k_dg'@'%%'", getenv("LR_DB_NAME"));
	/* It sees the procedures' bodies (else it leaves them alone). */
	if (h_server_mysql())
		h_sql("GRANT SHOW_ROUTINE ON *.* TO 'lr_k_dg'@'%%'");
	else
		h_sql("GRANT SELECT ON mysql.proc TO 'lr_k_dg'@'%%'");
	snprintf(was, sizeof(was), "%s", definers("k_dg"));
	snprintf(dsn, sizeof(dsn), "mysql://lr_k_dg:lr_k_dg-pw@localhost/%s?socket=%s", getenv("LR_DB_NAME"),
		 getenv("LR_DB_SOCKET"));
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "--table", "k_dg_lease", "--init", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 78, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "run leaderrun --init as root@"), "%s", h_slurp(p.err));
	cr_assert_str_eq(definers("k_dg"), was);
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() "
			       "AND ROUTINE_NAME LIKE 'k\\_dg\\_fence%%'"),
			 "4");
	cr_assert_eq(init_as_root("k_dg_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "replaced 2 of the fence's procedures made by an older leaderrun"), "%s", err);
	cr_assert_eq(init_as_root("k_dg_lease", err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(err, "nothing to do"), "%s", err);
}
