/* A new build on a table that --init has not upgraded yet: a fleet rolls
 * its binaries before it runs --init, and the upgraded hosts must keep
 * running their leases, without the features the table lacks, with one
 * warning that names the fix. A feature asked
 * for that needs the new schema fails with one clear line, exit 78.
 *
 * Each table is built from the schema as it was (tests/upgrade/schema-N.sql,
 * from the git history of sql/leaderrun.sql). */
#include <signal.h>

#include "harness.h"

HARNESS_MAIN

/* The table of SCHEMA under names of this test's own; TABLE and HISTORY
 * receive them. */
static void old_table(int schema, char *table, size_t tlen, char *history, size_t hlen)
{
	char path[512], sql[4096], *out = sql;
	const char *src, *p;
	size_t left = sizeof(sql);

	snprintf(table, tlen, "s%d_%ld_lease", schema, (long)getpid());
	snprintf(history, hlen, "s%d_%ld_history", schema, (long)getpid());
	snprintf(path, sizeof(path), "%s/schema-%d.sql", getenv("LR_UPGRADE_DIR"), schema);
	src = h_slurp(path);
	cr_assert(strstr(src, "CREATE TABLE"), "no fixture %s", path);
	/* Comment lines out (the client's -e takes the rest), names in. */
	for (p = src; *p && left > 200;) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
		if (strncmp(p, "--", 2) != 0) {
			const char *lt = strstr(p, "`leaderrun_lease`"), *ht = strstr(p, "`leaderrun_history`");
			int k;
			if (lt && lt < p + n)
				k = snprintf(out, left, "%.*s`%s`%.*s", (int)(lt - p), p, table,
					     (int)(n - (size_t)(lt - p) - 17), lt + 17);
			else if (ht && ht < p + n)
				k = snprintf(out, left, "%.*s`%s`%.*s", (int)(ht - p), p, history,
					     (int)(n - (size_t)(ht - p) - 19), ht + 19);
			else
				k = snprintf(out, left, "%.*s", (int)n, p);
			out += k;
			left -= (size_t)k;
		}
		p += n;
	}
	h_sql("%s", sql);
}

/* leaderrun -d ROOT --table TABLE ARGS... */
static void lr(struct h_proc *p, const char *table, const char *const args[])
{
	const char *argv[48];
	size_t n = 0;

	argv[n++] = h_bin();
	argv[n++] = "-d";
	argv[n++] = h_dsn_root();
	argv[n++] = "--table";
	argv[n++] = table;
	for (size_t i = 0; args[i] && n < 47; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	h_start(p, argv, NULL);
}

#define LR(p, table, ...) lr(p, table, (const char *const[]){__VA_ARGS__, NULL})

static int lr_run(const char *table, const char *const args[], struct h_proc *p)
{
	lr(p, table, args);
	return h_finish(p, 30000);
}

#define LR_RUN(p, table, ...) lr_run(table, (const char *const[]){__VA_ARGS__, NULL}, p)

static int count_of(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A feature the table cannot hold, asked for: exit 78, one line that
 * names it and 'leaderrun --init', no raw SQL error. */
static void refused(struct h_proc *p, int rc, const char *what)
{
	const char *err = h_slurp(p->err);

	cr_assert_eq(rc, 78, "%s: exit %d: %s", what, rc, err);
	cr_assert(strstr(err, what), "%s not named: %s", what, err);
	cr_assert(strstr(err, "leaderrun --init"), "%s: the fix is not named: %s", what, err);
	cr_assert_null(strstr(err, "Unknown column"), "%s: a raw SQL error: %s", what, err);
}

/* Acquire, run, renew past the renew interval, release; a -n contender
 * meanwhile gets 75 and --status shows the holder; one warning. */
static void runs_leases_on(int schema)
{
	char table[64], history[64];
	const char *lease = h_lease("old"), *up = h_path("up");
	struct h_proc holder, p;
	const char *err;
	int rc;

	old_table(schema, table, sizeof(table), history, sizeof(history));
	/* ttl 3 s: a renew every second, three of them in the 3.5 s job. */
	LR(&holder, table, "-t", "3s", "-l", lease, "--holder", "new-holder", "--", "sh", "-c",
	   "echo up >\"$0\"; sleep 3.5", up);
	cr_assert(h_wait_file(up, "up", 15000), "the new build did not run on schema %d: %s", schema,
		  h_slurp(holder.err));
	cr_assert_eq(LR_RUN(&p, table, "-n", "-t", "3s", "-l", lease, "--", "true"), 75, "%s", h_slurp(p.err));
	cr_assert_eq(LR_RUN(&p, table, "--status", lease), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "new-holder"), "%s", h_slurp(p.out));
	cr_assert_eq(LR_RUN(&p, table, "--status", "--json"), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), lease), "%s", h_slurp(p.out));

	rc = h_finish(&holder, 20000);
	err = h_slurp(holder.err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(count_of(err, "older than this leaderrun"), 1, "not one warning: %s", err);
	cr_assert_eq(count_of(err, "leaderrun --init"), 1, "%s", err);
	cr_assert_null(strstr(err, "run history off"), "a second warning: %s", err);
	/* Released (the row's expiry is past), one term, renewed. */
	cr_assert_str_eq(h_sql("SELECT CONCAT(term, ' ', expires_at <= UTC_TIMESTAMP(6), ' ', "
			       "renewed_at > acquired_at + INTERVAL 2 SECOND) FROM %s WHERE name='%s'",
			       table, lease),
			 "1 1 1");
	if (schema >= 2)
		cr_assert_str_eq(h_sql("SELECT last_exit FROM %s WHERE name='%s'", table, lease), "0");

	/* What the table cannot hold. */
	refused(&p, LR_RUN(&p, table, "-n", "--slots", "2", "-l", lease, "--", "true"), "--slots");
	if (schema < 3) {
		refused(&p, LR_RUN(&p, table, "-n", "--once-per", "1h", "-l", lease, "--", "true"), "--once-per");
		refused(&p, LR_RUN(&p, table, "--pause", lease), "--pause");
		refused(&p, LR_RUN(&p, table, "--resume", lease), "--resume");
		refused(&p, LR_RUN(&p, table, "--release", lease), "--release");
		cr_assert_eq(LR_RUN(&p, table, "--force", "--release", lease), 0, "%s", h_slurp(p.err));
	} else {
		cr_assert_eq(LR_RUN(&p, table, "--pause", lease), 0, "%s", h_slurp(p.err));
		cr_assert_eq(LR_RUN(&p, table, "-n", "-l", lease, "--", "true"), 75, "paused: %s", h_slurp(p.err));
		cr_assert_eq(LR_RUN(&p, table, "--resume", lease), 0, "%s", h_slurp(p.err));
	}
	/* And the next run takes the next term. */
	cr_assert_eq(LR_RUN(&p, table, "-n", "-l", lease, "--", "true"), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT term FROM %s WHERE name='%s'", table, lease), "2");
}

Test(old_schema, new_build_runs_leases_on_schema_1)
{
	runs_leases_on(1);
}

Test(old_schema, new_build_runs_leases_on_schema_2)
{
	runs_leases_on(2);
}

Test(old_schema, new_build_runs_leases_on_schema_3)
{
	runs_leases_on(3);
}

Test(old_schema, new_build_runs_leases_on_schema_4)
{
	runs_leases_on(4);
}

/* Two new builds on one old table wait their turn (-w): exclusion by the
 * row, handover by the release. */
Test(old_schema, waiters_on_an_old_table_take_turns_without_overlap)
{
	char table[64], history[64];
	const char *lease = h_lease("turns");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc c[3];

	old_table(2, table, sizeof(table), history, sizeof(history));
	for (int i = 0; i < 3; i++)
		LR(&c[i], table, "-w", "60s", "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "1.2");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&c[i], 60000), 0, "contender %d: %s", i, h_slurp(c[i].err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 3, "%s", h_slurp(log));
}
