/* A fleet is upgraded host by host (schema 4): a build of the
 * commit before the observability work (schema 3, no run history) and this
 * build contend for one lease on an upgraded database. Exclusion holds
 * (the overlap probe), terms grow across the versions, and both builds read
 * --status and revoke each other's holders.
 *
 * The old build comes from tests/upgrade/old-leaderrun.sh: git archive of
 * OLD_COMMIT, built once and cached in the build directory. Without it (no
 * git checkout, or a shallow clone) every test is skipped, and so is the
 * suite (77). */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"

/* The last commit before the run history (schema 4) and the metrics. */
#define OLD_COMMIT "fc27d31"

/* Builds (or finds cached) the old leaderrun before the suite starts:
 * LR_OLD_BIN then names it, or LR_OLD_SKIP / LR_OLD_FAIL say why not. */
static void old_build(void)
{
	char out[8192] = "", *last;
	size_t n = 0;
	struct timespec t0, t1;
	FILE *f;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	setenv("LR_OLD_COMMIT", OLD_COMMIT, 1);
	f = popen("exec \"$LR_OLD_BUILD\" \"$LR_SOURCE_ROOT\" \"$LR_OLD_COMMIT\" \"$LR_OLD_DIR\" 2>&1", "r");
	if (!f) {
		setenv("LR_OLD_FAIL", "popen failed", 1);
		return;
	}
	while (n < sizeof(out) - 1) {
		size_t k = fread(out + n, 1, sizeof(out) - 1 - n, f);
		if (k == 0)
			break;
		n += k;
	}
	out[n] = '\0';
	st = pclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (st == 77) {
		setenv("LR_OLD_SKIP", out, 1);
	} else if (st != 0) {
		setenv("LR_OLD_FAIL", out, 1);
	} else {
		last = strrchr(out, '\n');
		setenv("LR_OLD_BIN", last ? last + 1 : out, 1);
		if (last) {
			*last = '\0';
			fprintf(stderr, "%s\n", out);
		}
	}
	fprintf(stderr, "old leaderrun %s: ready in %.1f s\n", OLD_COMMIT,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int main(int argc, char *argv[])
{
	int rc;

	old_build();
	rc = h_main(argc, argv);
	if (rc == 0 && getenv("LR_OLD_SKIP")) {
		fprintf(stderr, "skipped: %s\n", getenv("LR_OLD_SKIP"));
		return 77;
	}
	return rc;
}

static const char *old_bin(void)
{
	if (getenv("LR_OLD_SKIP"))
		cr_skip_test("no leaderrun of %s: %s", OLD_COMMIT, getenv("LR_OLD_SKIP"));
	cr_assert_null(getenv("LR_OLD_FAIL"), "the old build failed:\n%s", getenv("LR_OLD_FAIL"));
	return getenv("LR_OLD_BIN");
}

/* BIN with "-d DSN" and ARGS (NULL-terminated). */
static void lr(struct h_proc *p, const char *bin, const char *dsn, const char *const args[])
{
	const char *argv[64];
	size_t n = 0;

	argv[n++] = bin;
	argv[n++] = "-d";
	argv[n++] = dsn;
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	h_start(p, argv, NULL);
}

#define LR(p, bin, dsn, ...) lr(p, bin, dsn, (const char *const[]){__VA_ARGS__, NULL})

static int run(const char *bin, const char *dsn, const char *const args[], struct h_proc *p)
{
	lr(p, bin, dsn, args);
	return h_finish(p, 30000);
}

/* The probe's job, its term first appended to TAGS: which build ran which
 * term. */
#define TAGGED(tags, log, lock, secs)                                                                                  \
	"sh", "-c", "echo \"$LEADERRUN_TERM\" >>\"$1\"; shift; exec \"$@\"", "sh", tags, h_probe(), log, lock, secs

/* The terms in a tags file, in order; returns how many. */
static int tags_read(const char *path, unsigned long long *terms, int max)
{
	const char *s = h_slurp(path);
	int n = 0;
	char *end;

	while (n < max) {
		unsigned long long t = strtoull(s, &end, 10);
		if (end == s)
			break;
		terms[n++] = t;
		s = end;
	}
	return n;
}

static bool has_term(const unsigned long long *terms, int n, unsigned long long t)
{
	for (int i = 0; i < n; i++)
		if (terms[i] == t)
			return true;
	return false;
}

static bool table_exists(const char *name)
{
	return strcmp(h_sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=DATABASE() AND "
			    "TABLE_NAME='%s'",
			    name),
		      "1") == 0;
}

Test(upgrade, old_holder_new_waiters_across_an_init_that_upgrades_the_table)
{
	const char *old = old_bin(), *new = h_bin(), *root = h_dsn_root();
	const char *lease = h_lease("up");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	const char *old_tags = h_path("old.tags"), *new_tags = h_path("new.tags");
	struct h_proc holder, w[3], p;
	char table[64], history[64], want[64];
	unsigned long long terms[8], olds[8], news[8];
	int n, nold, nnew;

	snprintf(table, sizeof(table), "fleet%ld_lease", (long)getpid());
	snprintf(history, sizeof(history), "fleet%ld_history", (long)getpid());
	/* The database as the old fleet made it: schema 3. */
	cr_assert_eq(run(old, root, (const char *const[]){"--table", table, "--init", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(!table_exists(history));
	LR(&holder, old, root, "--table", table, "-t", "3s", "-l", lease, "--holder", "old-holder", "--",
	   TAGGED(old_tags, log, lock, "2.5"));
	cr_assert(h_wait_file(log, "start", 10000), "%s", h_slurp(holder.err));
	/* The upgrade, while an old holder runs: it adds the history table
	 * and the lease table's slot columns (schema 5), and leaves the rows
	 * (and the holder) alone. */
	cr_assert_eq(run(new, root, (const char *const[]){"--table", table, "--init", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "from schema 3 to 7"), "%s", h_slurp(p.err));
	cr_assert(table_exists(history));
	/* New hosts, and one not upgraded yet, wait their turn. */
	for (int i = 0; i < 2; i++)
		LR(&w[i], new, root, "--table", table, "-w", "30s", "-t", "3s", "-l", lease, "--",
		   TAGGED(new_tags, log, lock, "0.5"));
	LR(&w[2], old, root, "--table", table, "-w", "30s", "-t", "3s", "-l", lease, "--",
	   TAGGED(old_tags, log, lock, "0.5"));
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&w[i], 30000), 0, "waiter %d: %s", i, h_slurp(w[i].err));
	/* No two at once, terms grow from one start to the next whichever
	 * build took them, and the old holder's term came first. */
	n = h_probe_check(log, NULL, terms, 8);
	cr_assert_eq(n, 4, "%s", h_slurp(log));
	nold = tags_read(old_tags, olds, 8);
	nnew = tags_read(new_tags, news, 8);
	cr_assert_eq(nold, 2, "%s", h_slurp(old_tags));
	cr_assert_eq(nnew, 2, "%s", h_slurp(new_tags));
	cr_assert_eq(terms[0], olds[0], "the old holder's term %llu is not the first: %s", olds[0], h_slurp(log));
	for (int i = 0; i < n; i++)
		cr_assert(has_term(olds, nold, terms[i]) != has_term(news, nnew, terms[i]), "term %llu", terms[i]);
	cr_assert_eq(strtoull(h_sql("SELECT term FROM %s WHERE name='%s'", table, lease), NULL, 10), terms[3]);
	/* Both builds read the upgraded table. */
	cr_assert_eq(run(old, root, (const char *const[]){"--table", table, "--status", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), lease), "%s", h_slurp(p.out));
	cr_assert_eq(run(new, root, (const char *const[]){"--table", table, "--status", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), lease), "%s", h_slurp(p.out));
	/* The history holds the new build's runs, and only those. */
	snprintf(want, sizeof(want), "%llu,%llu", news[0] < news[1] ? news[0] : news[1],
		 news[0] < news[1] ? news[1] : news[0]);
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(term ORDER BY term) FROM %s WHERE lease='%s'", history, lease),
			 want);
	cr_assert_eq(run(new, root, (const char *const[]){"--table", table, "--history", lease, NULL}, &p), 0, "%s",
		     h_slurp(p.err));
}

Test(upgrade, new_holder_old_waiters_and_both_read_status_meanwhile)
{
	const char *old = old_bin(), *new = h_bin();
	const char *lease = h_lease("down");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	const char *old_tags = h_path("old.tags"), *new_tags = h_path("new.tags");
	char dsn[600], want[300];
	struct h_proc holder, w[3], p;
	unsigned long long terms[8], olds[8], news[8];
	int n;

	/* The suite's table (schema 5 from sql/leaderrun.sql), and the user
	 * with only sql/grants.sql's rights. */
	snprintf(dsn, sizeof(dsn), "%s", h_dsn());
	LR(&holder, new, dsn, "-t", "3s", "-l", lease, "--holder", "new-holder", "--",
	   TAGGED(new_tags, log, lock, "5"));
	cr_assert(h_wait_file(log, "start", 10000), "%s", h_slurp(holder.err));
	for (int i = 0; i < 2; i++)
		LR(&w[i], old, dsn, "-w", "30s", "-t", "3s", "-l", lease, "--", TAGGED(old_tags, log, lock, "0.5"));
	LR(&w[2], new, dsn, "-w", "30s", "-t", "3s", "-l", lease, "--", TAGGED(new_tags, log, lock, "0.5"));
	/* While the new build holds (5 s: the checks below take well under
	 * that on a loaded machine), both see it held, by whom, in what term. */
	snprintf(want, sizeof(want), "\"name\": \"%s\", \"holder\": \"new-holder\", \"term\": %s, \"state\": \"held\"",
		 lease, h_sql("SELECT term FROM leaderrun_lease WHERE name='%s'", lease));
	cr_assert_eq(run(old, dsn, (const char *const[]){"--status", "--json", lease, NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), want), "old --status lacks %s:\n%s", want, h_slurp(p.out));
	cr_assert_eq(run(new, dsn, (const char *const[]){"--status", "--json", lease, NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), want), "new --status lacks %s:\n%s", want, h_slurp(p.out));
	cr_assert_eq(run(old, dsn, (const char *const[]){"--status", NULL}, &p), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "new-holder"), "%s", h_slurp(p.out));
	cr_assert_eq(run(new, dsn, (const char *const[]){"--status", "--format", "prometheus", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	snprintf(want, sizeof(want), "leaderrun_lease_held{lease=\"%s\"} 1", lease);
	cr_assert(strstr(h_slurp(p.out), want), "%s", h_slurp(p.out));
	cr_assert_eq(h_wait(&holder, 0), -1, "the holder's 5 s job ended before the --status checks did");

	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&w[i], 30000), 0, "waiter %d: %s", i, h_slurp(w[i].err));
	n = h_probe_check(log, NULL, terms, 8);
	cr_assert_eq(n, 4, "%s", h_slurp(log));
	cr_assert_eq(tags_read(old_tags, olds, 8), 2, "%s", h_slurp(old_tags));
	cr_assert_eq(tags_read(new_tags, news, 8), 2, "%s", h_slurp(new_tags));
	cr_assert_eq(terms[0], news[0], "the new holder's term %llu is not the first: %s", news[0], h_slurp(log));
	/* The old build's runs leave the history alone: the new ones are
	 * there, closed. */
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_history WHERE lease='%s' AND outcome='exited' AND term "
			       "IN (%llu, %llu)",
			       lease, news[0], news[1]),
			 "2");
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_history WHERE lease='%s'", lease), "2");
}

Test(upgrade, old_and_new_contenders_take_turns_without_overlap)
{
	const char *old = old_bin(), *new = h_bin();
	const char *lease = h_lease("mix");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	char loop[1024], dsn_env[600];
	struct h_proc c[4];
	unsigned long long terms[16];
	int n;

	/* Four hosts, two per build, each running the job three times in a
	 * row and waiting for the lease each time: every run must get its
	 * turn (exit 0), and no two run at once. */
	snprintf(dsn_env, sizeof(dsn_env), "LEADERRUN_DSN=%s", h_dsn());
	snprintf(loop, sizeof(loop), "for i in 1 2 3; do \"$0\" -w 60s -t 3s -l %s -- %s %s %s 0.3 || exit $?; done",
		 lease, h_probe(), log, lock);
	for (int i = 0; i < 4; i++)
		h_start(&c[i], (const char *const[]){"sh", "-c", loop, i % 2 ? old : new, NULL},
			(const char *const[]){dsn_env, NULL});
	for (int i = 0; i < 4; i++)
		cr_assert_eq(h_finish(&c[i], 90000), 0, "%s contender %d: %s", i % 2 ? "old" : "new", i,
			     h_slurp(c[i].err));
	n = h_probe_check(log, NULL, terms, 16);
	cr_assert_eq(n, 12, "%s", h_slurp(log));
}

Test(upgrade, each_build_revokes_the_others_holder)
{
	const char *old = old_bin(), *new = h_bin();
	const char *lock = h_path("probe.lock");
	const char *bins[2][2] = {{old, new}, {new, old}}; /* holder, releaser */
	char dsn[600];
	struct h_proc holder, waiter, p;

	snprintf(dsn, sizeof(dsn), "%s", h_dsn());
	for (int k = 0; k < 2; k++) {
		const char *lease = h_lease(k ? "revnew" : "revold");
		const char *log = h_path(k ? "probe-new.log" : "probe-old.log");
		LR(&holder, bins[k][0], dsn, "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "60");
		cr_assert(h_wait_file(log, "start", 10000), "%s", h_slurp(holder.err));
		LR(&waiter, bins[k][1], dsn, "-w", "30s", "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "0.2");
		h_sleep_ms(300);
		cr_assert_eq(run(bins[k][1], dsn, (const char *const[]){"--release", lease, NULL}, &p), 0, "%s",
			     h_slurp(p.err));
		cr_assert(strstr(h_slurp(p.out), "revoked lease"), "%s", h_slurp(p.out));
		cr_assert_eq(h_finish(&holder, 15000), 76, "%s", h_slurp(holder.err));
		cr_assert_eq(h_finish(&waiter, 15000), 0, "%s", h_slurp(waiter.err));
		cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2, "%s", h_slurp(log));
	}
}

/* Issue 25: the fleet rolls its binaries before anyone runs --init. On the
 * table the old fleet made (schema 3), old and new builds contend, each
 * running the job three times and waiting for the lease each time: every
 * run gets its turn, no two run at once, and each new one warns once. */
Test(upgrade, old_and_new_builds_take_turns_on_a_table_not_upgraded_yet)
{
	const char *old = old_bin(), *new = h_bin(), *root = h_dsn_root();
	const char *lease = h_lease("notyet");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	char table[64], loop[1024], dsn_env[600];
	struct h_proc c[4], p;
	unsigned long long terms[16];

	snprintf(table, sizeof(table), "notyet%ld_lease", (long)getpid());
	cr_assert_eq(run(old, root, (const char *const[]){"--table", table, "--init", NULL}, &p), 0, "%s",
		     h_slurp(p.err));
	snprintf(dsn_env, sizeof(dsn_env), "LEADERRUN_DSN=%s", root);
	snprintf(loop, sizeof(loop),
		 "for i in 1 2 3; do \"$0\" --table %s -w 60s -t 3s -l %s -- %s %s %s 0.3 || exit $?; done", table,
		 lease, h_probe(), log, lock);
	for (int i = 0; i < 4; i++)
		h_start(&c[i], (const char *const[]){"sh", "-c", loop, i % 2 ? old : new, NULL},
			(const char *const[]){dsn_env, NULL});
	for (int i = 0; i < 4; i++)
		cr_assert_eq(h_finish(&c[i], 90000), 0, "%s contender %d: %s", i % 2 ? "old" : "new", i,
			     h_slurp(c[i].err));
	cr_assert_eq(h_probe_check(log, NULL, terms, 16), 12, "%s", h_slurp(log));
	for (int i = 0; i < 4; i += 2) {
		const char *err = h_slurp(c[i].err);
		const char *w = strstr(err, "older than this leaderrun");
		cr_assert(w, "new contender %d did not warn: %s", i, err);
		cr_assert_null(strstr(err, "Unknown column"), "%s", err);
	}
	/* The table is as the old fleet made it: nothing upgraded it. */
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=DATABASE() AND "
			       "TABLE_NAME='%s' AND COLUMN_NAME='slot'",
			       table),
			 "0");
}
