/* Every documented exit status, produced the way users meet it. */
#include <string.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static int run(const char *const args[], struct h_proc *p)
{
	h_leaderrun(p, args);
	return h_finish(p, 20000);
}

static void assert_one_line_error(const struct h_proc *p, const char *needle)
{
	const char *e = h_slurp(p->err);
	cr_assert(strstr(e, needle), "stderr lacks '%s':\n%s", needle, e);
	cr_assert_eq(strchr(e, '\n'), e + strlen(e) - 1, "want exactly one line:\n%s", e);
}

Test(exit_status, command_status_passes_through)
{
	struct h_proc p;
	cr_assert_eq(run((const char *const[]){"-l", h_lease("st"), "--", "sh", "-c", "exit 3", NULL}, &p), 3);
	cr_assert_str_eq(h_slurp(p.err), "", "quiet on the success path");
}

Test(exit_status, signal_death_is_128_plus_n)
{
	struct h_proc p;
	cr_assert_eq(run((const char *const[]){"-l", h_lease("sig"), "--", "sh", "-c", "kill -USR1 $$", NULL}, &p),
		     128 + 10);
}

Test(exit_status, busy_with_no_wait_is_75_and_E_changes_it)
{
	struct h_proc holder, p;
	const char *lease = h_lease("busy");
	char job[600];

	/* Held until the test is done with it, not for a time that a busy
	 * machine may outlast. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go"));
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	cr_assert_eq(run((const char *const[]){"-n", "-l", lease, "--", "sh", "-c", "echo ran", NULL}, &p), 75);
	cr_assert_str_eq(h_slurp(p.out), "", "the loser must not run the command");
	cr_assert_eq(run((const char *const[]){"-n", "-E", "0", "-l", lease, "--", "true", NULL}, &p), 0);
	cr_assert_str_eq(h_slurp(p.err), "", "a busy skip is quiet");
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
}

Test(exit_status, wait_timeout_is_75_after_the_timeout)
{
	struct h_proc holder, p;
	const char *lease = h_lease("wt");
	int64_t t0;

	LR(&holder, "-l", lease, "--", "sh", "-c", "echo up; sleep 4");
	cr_assert(h_wait_file(holder.out, "up", 10000));
	t0 = h_now_ms();
	cr_assert_eq(run((const char *const[]){"-w", "1s", "-l", lease, "--", "true", NULL}, &p), 75);
	cr_assert_geq(h_now_ms() - t0, 900);
	/* About 1.1 s; bounded generously for a busy machine (a wait past the
	 * holder's end would have run and exited 0). */
	cr_assert_lt(h_now_ms() - t0, 4000);
	cr_assert_eq(h_finish(&holder, 10000), 0);
}

Test(exit_status, usage_error_is_64_with_one_line)
{
	struct h_proc p;
	cr_assert_eq(run((const char *const[]){"--ttl", "fast", "--", "true", NULL}, &p), 64);
	assert_one_line_error(&p, "--ttl: 'fast' is not a duration");
	cr_assert_eq(run((const char *const[]){"--ttl", "3s", "--kill-grace", "3s", "--", "true", NULL}, &p), 64);
	assert_one_line_error(&p, "--kill-grace");
	cr_assert_eq(run((const char *const[]){"--kill-signal", "NOPE", "--", "true", NULL}, &p), 64);
	assert_one_line_error(&p, "not a signal");
}

Test(exit_status, unreachable_database_is_69)
{
	struct h_proc p;
	/* Port 1 on loopback: nothing listens, the connect is refused. */
	const char *argv[] = {h_bin(), "-n", "-d", "mysql://u@127.0.0.1:1/db", "--", "true", NULL};
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 69);
	assert_one_line_error(&p, "database unavailable");
}

Test(exit_status, unknown_host_is_69)
{
	struct h_proc p;
	const char *argv[] = {h_bin(), "-n", "-d", "mysql://u@no-such-host.invalid/db", "--", "true", NULL};
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 30000), 69);
	assert_one_line_error(&p, "no-such-host.invalid");
}

Test(exit_status, wrong_password_is_77_and_never_echoed)
{
	struct h_proc p;
	char dsn[512];
	const char *argv[] = {h_bin(), "-n", "-d", dsn, "--", "true", NULL};

	snprintf(dsn, sizeof(dsn), "mysql://%s:WrongPass123@127.0.0.1:%s/%s", getenv("LR_DB_USER"),
		 getenv("LR_DB_PORT"), getenv("LR_DB_NAME"));
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 77);
	assert_one_line_error(&p, "access denied");
	cr_assert_null(strstr(h_slurp(p.err), "WrongPass123"), "password echoed: %s", h_slurp(p.err));
}

Test(exit_status, missing_table_is_78_and_says_init)
{
	struct h_proc p;
	/* A user with rights on the whole database learns that the table is
	 * missing; one with table grants only is told "denied" by the server. */
	const char *argv[] = {h_bin(), "-n", "-d", h_dsn_root(), "--table", "no_such_table", "--", "true", NULL};
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 78);
	assert_one_line_error(&p, "leaderrun --init");
}

Test(exit_status, table_without_grants_is_77_and_points_at_grants)
{
	struct h_proc p;
	cr_assert_eq(run((const char *const[]){"-n", "--table", "no_such_table", "--", "true", NULL}, &p), 77);
	assert_one_line_error(&p, "sql/grants.sql");
}

Test(exit_status, missing_database_is_78)
{
	struct h_proc p;
	char dsn[512];
	const char *argv[] = {h_bin(), "-n", "-d", dsn, "--", "true", NULL};

	snprintf(dsn, sizeof(dsn), "mysql://root@localhost/no_such_db?socket=%s", getenv("LR_DB_SOCKET"));
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 78);
	assert_one_line_error(&p, "no_such_db");
}

Test(exit_status, command_not_found_is_127_without_taking_a_term)
{
	struct h_proc p;
	const char *lease = h_lease("nf");

	cr_assert_eq(run((const char *const[]){"-l", lease, "--", "/no/such/command", NULL}, &p), 127);
	assert_one_line_error(&p, "command not found");
	cr_assert_eq(run((const char *const[]){"-l", lease, "--", "no-such-command-xyz", NULL}, &p), 127);
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name='%s'", lease), "0");
}

Test(exit_status, command_not_executable_is_126)
{
	struct h_proc p;
	FILE *f = fopen(h_path("noexec.sh"), "w");

	fputs("#!/bin/sh\necho hi\n", f);
	fclose(f);
	cr_assert_eq(run((const char *const[]){"-l", h_lease("nx"), "--", h_path("noexec.sh"), NULL}, &p), 126);
	assert_one_line_error(&p, "noexec.sh");
}

Test(exit_status, init_creates_the_table_twice_fine)
{
	struct h_proc p;
	char table[64];
	const char *argv[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};

	snprintf(table, sizeof(table), "init_%ld", (long)getpid());
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME='%s'", table), "15");
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME='%s_history'", table),
			 "10");
}

Test(exit_status, init_upgrades_a_schema_1_table_in_place)
{
	struct h_proc p;
	char table[64];
	const char *init[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "--init", NULL};
	const char *use[] = {h_bin(), "-d", h_dsn_root(), "--table", table, "-n", "-l", "up", "--", "true", NULL};

	snprintf(table, sizeof(table), "old_%ld", (long)getpid());
	h_sql("CREATE TABLE %s (name VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "holder VARCHAR(255) NOT NULL DEFAULT '', term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
	      "acquired_at DATETIME(6) NULL, renewed_at DATETIME(6) NULL, "
	      "expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00', PRIMARY KEY (name))",
	      table);
	h_sql("INSERT INTO %s (name, term) VALUES ('up', 41)", table);
	/* Before the upgrade a run still runs, and says what to do (issue
	 * 25: a fleet rolls its binaries before anyone runs --init)... */
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
	/* ...after it, the row and its term are still there and grow. */
	h_start(&p, init, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "upgraded in place from schema 1 to 7"), "%s", h_slurp(p.err));
	h_start(&p, use, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	/* 41, 42 (the run before the upgrade), 43. */
	cr_assert_str_eq(h_sql("SELECT CONCAT(term, ' ', last_exit) FROM %s WHERE name='up'", table), "43 0");
	/* Up to schema 7: the run history's table too, with this run, and the
	 * fence, moved by it. */
	cr_assert_str_eq(
	    h_sql("SELECT CONCAT(term, ' ', outcome, ' ', exit_status) FROM %s_history WHERE lease='up'", table),
	    "43 exited 0");
	cr_assert_str_eq(h_sql("SELECT term FROM %.*s_fence WHERE lease='up'", (int)strlen(table), table), "43");
}

Test(exit_status, init_without_create_privilege_is_77)
{
	struct h_proc p;
	cr_assert_eq(run((const char *const[]){"--table", "not_allowed", "--init", NULL}, &p), 77);
	assert_one_line_error(&p, "needs CREATE on");
}

Test(exit_status, malformed_inputs_are_64_with_one_line_each)
{
	struct h_proc p;
	char name[300];
	const char *dsn_argv[] = {h_bin(), "-d", "mysql//app@db/ops", "--", "true", NULL};

	h_start(&p, dsn_argv, NULL);
	cr_assert_eq(h_finish(&p, 10000), 64);
	assert_one_line_error(&p, "must start with mysql://");

	cr_assert_eq(run((const char *const[]){"--ttl", "-3s", "--", "true", NULL}, &p), 64);
	assert_one_line_error(&p, "negative");

	memset(name, 'n', 250);
	name[250] = '\0';
	cr_assert_eq(run((const char *const[]){"-l", name, "--", "true", NULL}, &p), 64);
	assert_one_line_error(&p, "the limit is 191");
}
