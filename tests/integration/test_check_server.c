/* --check-server: each assumption of SAFETY and REPLICATION,
 * held, not held or unknown, on every host of the DSN; and the run's
 * warning at start, in the same words. The tests change the server's
 * global settings, so they run one at a time (meson.build: --jobs=1),
 * each from the safe settings. */
#include "harness.h"

HARNESS_MAIN

static void safe_settings(void)
{
	h_sql("SET GLOBAL innodb_flush_log_at_trx_commit=1");
	h_sql("SET GLOBAL read_only=OFF");
}

TestSuite(check_server, .init = safe_settings, .fini = safe_settings);

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

/* Runs leaderrun with exactly ARGV (its own DSN). */
static int run_argv(struct h_proc *p, const char *const argv[])
{
	h_start(p, argv, NULL);
	return h_finish(p, 30000);
}

static int count_of(const char *s, const char *needle)
{
	int n = 0;

	for (const char *at = s; (at = strstr(at, needle)) != NULL; at += strlen(needle))
		n++;
	return n;
}

/* The line of TEXT that holds NEEDLE, without its newline (static). */
static const char *line_with(const char *text, const char *needle)
{
	static char line[2048];
	const char *at = strstr(text, needle), *start, *end;

	cr_assert_not_null(at, "no line with '%s' in:\n%s", needle, text);
	for (start = at; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(at, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
	return line;
}

static const char *const checks[] = {"durable commits", "binary log",  "writable", "replication",
				     "proxy",		"lease table", "clock"};
#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

Test(check_server, a_safe_server_holds_every_assumption_and_exits_0)
{
	struct h_proc p;
	char want[64], n[16];
	const char *out;

	cr_assert_eq(run(&p, (const char *const[]){"--check-server", NULL}), 0, "%s%s", h_slurp(p.out), h_slurp(p.err));
	out = h_slurp(p.out);
	for (size_t i = 0; i < NCHECKS; i++) {
		snprintf(want, sizeof(want), ": %s: held: ", checks[i]);
		cr_assert_eq(count_of(out, want), 1, "want one '%s' line:\n%s", want, out);
	}
	cr_assert_eq(count_of(out, "\n"), (int)NCHECKS, "one line a check:\n%s", out);
	cr_assert_str_eq(h_slurp(p.err), "", "quiet on stderr");
	/* --json: one document, as --status --json, that parses. */
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", "--json", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(count_of(h_slurp(p.out), "\"state\": \"held\""), (int)NCHECKS, "%s", h_slurp(p.out));
	cr_assert_eq(h_run((const char *const[]){"/usr/bin/python3", "-c",
						 "import json, sys; d = json.load(open(sys.argv[1])); "
						 "print(len([c for c in d if c['fix'] is None and c['host']]))",
						 p.out, NULL},
			   n, sizeof(n)),
		     0, "not JSON:\n%s", h_slurp(p.out));
	snprintf(want, sizeof(want), "%zu", NCHECKS);
	cr_assert_str_eq(n, want, "%s", h_slurp(p.out));
}

Test(check_server, commits_not_durable_are_not_held_and_a_run_warns_once_in_the_same_words)
{
	struct h_proc p;
	const char *line;

	h_sql("SET GLOBAL innodb_flush_log_at_trx_commit=2");
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", NULL}), 1, "%s%s", h_slurp(p.out), h_slurp(p.err));
	line = line_with(h_slurp(p.out), ": durable commits: not held: innodb_flush_log_at_trx_commit=2: ");
	cr_assert(strstr(line, "; set innodb_flush_log_at_trx_commit=1"), "what to change is missing: %s", line);
	cr_assert_eq(count_of(h_slurp(p.out), ": not held: "), 1, "only that one:\n%s", h_slurp(p.out));
	/* A run says it too, once, and runs (it is a warning). */
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", h_lease("durable"), "--", "true", NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert_eq(count_of(h_slurp(p.err), line), 1, "want the line once:\n%s\nin:\n%s", line, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "warning: "), "%s", h_slurp(p.err));
}

Test(check_server, a_read_only_server_in_the_dsn_is_not_held)
{
	struct h_proc p;
	const char *line;

	h_sql("SET GLOBAL read_only=ON");
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", NULL}), 1, "%s%s", h_slurp(p.out), h_slurp(p.err));
	line = line_with(h_slurp(p.out), ": writable: not held: read_only=ON");
	cr_assert(strstr(line, "; take it out of the DSN"), "%s", line);
	/* Read as rows of SHOW GLOBAL VARIABLES: MariaDB has no
	 * super_read_only, and its absence is no error. */
	if (h_server_mysql())
		cr_assert(strstr(line, "super_read_only=OFF"), "%s", line);
	else
		cr_assert_null(strstr(line, "super_read_only"), "%s", line);
	cr_assert_eq(count_of(h_slurp(p.out), ": not held: "), 1, "only that one:\n%s", h_slurp(p.out));
}

Test(check_server, every_host_is_checked_and_one_unreachable_is_unknown)
{
	struct h_proc p;
	char dsn[512], dead[512];

	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:1,127.0.0.1:%s/%s", getenv("LR_DB_USER"),
		 getenv("LR_DB_PASSWORD"), getenv("LR_DB_PORT"), getenv("LR_DB_NAME"));
	cr_assert_eq(run_argv(&p, (const char *const[]){h_bin(), "-d", dsn, "--check-server", NULL}), 1, "%s%s",
		     h_slurp(p.out), h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "127.0.0.1:1: connection: unknown: "), "%s", h_slurp(p.out));
	cr_assert_eq(count_of(h_slurp(p.out), ": held: "), (int)NCHECKS, "the other host's lines:\n%s", h_slurp(p.out));
	/* No host at all: the status of any mode that cannot connect. */
	snprintf(dead, sizeof(dead), "mysql://%s:%s@127.0.0.1:1/%s", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"),
		 getenv("LR_DB_NAME"));
	cr_assert_eq(run_argv(&p, (const char *const[]){h_bin(), "-d", dead, "--check-server", NULL}), 69, "%s%s",
		     h_slurp(p.out), h_slurp(p.err));
}

Test(check_server, a_missing_lease_table_is_not_held)
{
	struct h_proc p;
	char table[64];
	const char *line;

	snprintf(table, sizeof(table), "nosuch_%ld", (long)getpid());
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", "--table", table, NULL}), 1, "%s%s",
		     h_slurp(p.out), h_slurp(p.err));
	line = line_with(h_slurp(p.out), ": lease table: not held: ");
	cr_assert(strstr(line, "missing; run leaderrun --init"), "%s", line);
}

Test(check_server, takes_no_command_and_no_other_mode)
{
	struct h_proc p;

	cr_assert_eq(run(&p, (const char *const[]){"--check-server", "--", "true", NULL}), 64);
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", "--status", NULL}), 64);
	cr_assert(strstr(h_slurp(p.err), "--check-server, --pause, --resume and --next are modes of their own"), "%s",
		  h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"--check-server", "--format", "prometheus", NULL}), 64);
}
