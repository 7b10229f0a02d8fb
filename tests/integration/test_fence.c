/* Fenced writes (issue 28): a job's transaction proves its term with CALL
 * leaderrun_fence, and the database refuses it once a newer term took the
 * lease over. The jobs here are real SQL clients (the mariadb CLI, as the
 * suite's least-privileged user) writing rows tagged with their term into
 * a table of the test's; the check reads back what committed. */
#include <signal.h>

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

	/* Refused with "the current term is none": only older builds have
	 * taken this lease. Its locks cover the row's place in the table. */
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
	/* Its session is ended; the prepared transaction outlives it. */
	LR(&p, "-n", "-l", lease, "--", "echo", "ran");
	cr_assert_eq(h_finish(&p, 20000), 69, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "XA RECOVER"), "%s", h_slurp(p.err));
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
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = 0"),
			 "0", "a branch without a session outlived the refusal");
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
