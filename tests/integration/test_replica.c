/* Primary/replica failover with scripts/sandbox-replica: the primary dies
 * or stops under a holder that renews through a two-host DSN, the replica
 * is promoted, and contenders keep the same DSN. Each test starts its own
 * pair (a promotion cannot be undone). */
#include "harness.h"

HARNESS_MAIN_BARE

struct pair {
	char dir[300];
	char dsn[512];	       /* both hosts, the primary first */
	char replica_dsn[512]; /* the replica alone */
	char replica_port[16];
};

/* Value of NAME in the pair's env file (export NAME='value' lines). */
static void env_value(const char *dir, const char *name, char *out, size_t len)
{
	char path[400], pat[80];
	const char *s, *v;

	snprintf(path, sizeof(path), "%s/env", dir);
	snprintf(pat, sizeof(pat), "export %s='", name);
	s = h_slurp(path);
	v = strstr(s, pat);
	cr_assert_not_null(v, "%s not in %s", name, path);
	v += strlen(pat);
	snprintf(out, len, "%.*s", (int)strcspn(v, "'"), v);
}

static void pair_cmd(const struct pair *p, const char *subcommand, const char *arg)
{
	const char *argv[] = {getenv("LR_SANDBOX_REPLICA"), subcommand, p->dir, arg, NULL};
	char out[4096];
	int rc = h_run(argv, out, sizeof(out));
	cr_assert_eq(rc, 0, "sandbox-replica %s %s failed (%d): %s", subcommand, arg ? arg : "", rc, out);
	if (strcmp(subcommand, "promote") == 0)
		cr_log_info("sandbox-replica %s: %s", subcommand, out);
}

/* The pair this test started and has not stopped: a test that fails
 * half-way leaves it to the suite's .fini, not running for ever. */
static char running[300];

static void stop_running_pair(void)
{
	if (running[0]) {
		const char *argv[] = {getenv("LR_SANDBOX_REPLICA"), "stop", running, NULL};
		h_run(argv, NULL, 0);
		running[0] = '\0';
	}
}

TestSuite(replica, .timeout = 240, .fini = stop_running_pair);

static void pair_start(struct pair *p, const char *mode)
{
	snprintf(p->dir, sizeof(p->dir), "%s", h_path("pair"));
	snprintf(running, sizeof(running), "%s", p->dir);
	pair_cmd(p, "start", mode);
	env_value(p->dir, "LR_REPL_DSN", p->dsn, sizeof(p->dsn));
	env_value(p->dir, "LR_REPL_REPLICA_PORT", p->replica_port, sizeof(p->replica_port));
	snprintf(p->replica_dsn, sizeof(p->replica_dsn), "%s", p->dsn);
	/* mysql://U:P@127.0.0.1:PRIMARY,127.0.0.1:REPLICA/DB: drop the first host. */
	char *at = strchr(p->replica_dsn, '@'), *comma = at ? strchr(at, ',') : NULL;
	cr_assert_not_null(comma, "%s", p->dsn);
	memmove(at + 1, comma + 1, strlen(comma + 1) + 1);
}

static void pair_stop(struct pair *p)
{
	pair_cmd(p, "stop", NULL);
	running[0] = '\0';
}

static void lr_dsn(struct h_proc *proc, const char *dsn, const char *const args[])
{
	const char *argv[32];
	char env[600];
	size_t n = 0;

	argv[n++] = h_bin();
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(env, sizeof(env), "LEADERRUN_DSN=%s", dsn);
	h_start(proc, argv, (const char *const[]){env, NULL});
}

#define LR(proc, pair, ...)	    lr_dsn(proc, (pair)->dsn, (const char *const[]){__VA_ARGS__, NULL})
#define LR_REPLICA(proc, pair, ...) lr_dsn(proc, (pair)->replica_dsn, (const char *const[]){__VA_ARGS__, NULL})

/* What a probe log shows: the terms of the first two starts, and whether
 * a command found another still running. */
struct seen {
	unsigned long long terms[2];
	int starts;
	bool overlap;
};

static struct seen probe_seen(const char *log)
{
	struct seen v = {{0, 0}, 0, false};
	char copy[4096], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", h_slurp(log));
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long term;
		char what[16];
		if (sscanf(line, "%15s %llu", what, &term) != 2)
			continue;
		if (strcmp(what, "violation") == 0)
			v.overlap = true;
		if ((strcmp(what, "start") == 0 || strcmp(what, "violation") == 0) && v.starts < 2)
			v.terms[v.starts++] = term;
	}
	return v;
}

/* The primary goes (HOW: kill or shutdown) under a holder that renews
 * through both hosts; a standby waits through both; the replica, caught
 * up, is promoted. Semi-synchronous (MODE NULL): the replica has every
 * renew the holder was told about, so the holder keeps its lease through
 * it or exits 76 before the standby starts, and terms never repeat.
 * Asynchronous ("--async"): nothing promises that; what happened is
 * reported, and only leaderrun's own conduct is asserted. */
static void failover(const char *mode, const char *how)
{
	struct pair pair;
	const char *lease = "failover", *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc holder, standby;
	struct seen v;
	char moved[64];
	int rh, rs;

	pair_start(&pair, mode);
	LR(&holder, &pair, "-t", "9s", "-l", lease, "--", h_probe(), log, lock, "12");
	cr_assert(h_wait_file(log, "start", 20000), "%s", h_slurp(holder.err));
	LR(&standby, &pair, "-t", "9s", "-w", "90s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	h_sleep_ms(1500);
	pair_cmd(&pair, how, "primary");
	h_sleep_ms(1000);
	pair_cmd(&pair, "promote", NULL);

	rh = h_finish(&holder, 60000);
	cr_assert(rh == 0 || rh == 76, "holder exited %d:\n%s", rh, h_slurp(holder.err));
	rs = h_finish(&standby, 90000);
	snprintf(moved, sizeof(moved), "now using database server 127.0.0.1:%s", pair.replica_port);
	if (rh == 0)
		cr_assert(strstr(h_slurp(holder.err), moved), "%s", h_slurp(holder.err));
	v = probe_seen(log);
	cr_log_info("%s, primary %s: holder %s; terms %llu then %llu%s", mode ? "async" : "semi-sync", how,
		    rh == 0 ? "kept its lease through the promoted replica" : "exited 76", v.terms[0], v.terms[1],
		    v.overlap ? "; the commands overlapped" : "; no overlap");
	if (!mode) {
		cr_assert_eq(rs, 0, "%s", h_slurp(standby.err));
		cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
		cr_assert_gt(v.terms[1], v.terms[0]);
	} else
		/* 99: its probe found the holder's command still running. */
		cr_assert(rs == 0 || rs == 99, "standby exited %d:\n%s", rs, h_slurp(standby.err));
	pair_stop(&pair);
}

Test(replica, semisync_primary_killed_and_replica_promoted_no_overlap)
{
	failover(NULL, "kill");
}

Test(replica, semisync_primary_shut_down_and_replica_promoted_no_overlap)
{
	failover(NULL, "shutdown");
}

Test(replica, async_primary_killed_and_replica_promoted_reports_what_happened)
{
	failover("--async", "kill");
}

/* The operator's way: the primary is made read-only, the replica catches
 * up and is promoted. The holder's renews move with it, and its command is
 * never stopped. As ROOT, whom read_only does not bind, the renew on the
 * demoted primary matches no row (it asks for @@global.read_only = 0)
 * instead of failing with 1290: that is no proof of a lost lease either. */
static void switchover(bool root)
{
	struct pair pair;
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc holder;
	char moved[64], primary_port[16];

	pair_start(&pair, NULL);
	if (root) {
		env_value(pair.dir, "LR_REPL_PRIMARY_PORT", primary_port, sizeof(primary_port));
		snprintf(pair.dsn, sizeof(pair.dsn), "mysql://root@127.0.0.1:%s,127.0.0.1:%s/leaderrun_test",
			 primary_port, pair.replica_port);
	}
	/* ttl 20 s: a renew every 6.7 s, the stop signal 15 s after the last
	 * one; the switchover takes well under a second. */
	LR(&holder, &pair, "-t", "20s", "-l", "switchover", "--", h_probe(), log, lock, "10");
	cr_assert(h_wait_file(log, "start", 20000), "%s", h_slurp(holder.err));
	h_sleep_ms(1000);
	{
		const char *argv[] = {getenv("LR_SANDBOX_REPLICA"), "sql", pair.dir, "primary", "-e",
				      "SET GLOBAL read_only = 1",   NULL};
		cr_assert_eq(h_run(argv, NULL, 0), 0);
	}
	pair_cmd(&pair, "promote", NULL);
	cr_assert_eq(h_finish(&holder, 60000), 0, "%s", h_slurp(holder.err));
	snprintf(moved, sizeof(moved), "now using database server 127.0.0.1:%s", pair.replica_port);
	cr_assert(strstr(h_slurp(holder.err), moved), "%s", h_slurp(holder.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 1);
	pair_stop(&pair);
}

Test(replica, planned_switchover_keeps_the_lease_through_the_new_primary)
{
	switchover(false);
}

Test(replica, planned_switchover_keeps_the_lease_for_a_user_read_only_does_not_bind)
{
	switchover(true);
}

Test(replica, read_only_replica_is_passed_over_until_promoted)
{
	struct pair pair;
	struct h_proc p;

	pair_start(&pair, NULL);
	/* The replica alone: read-only, so nobody may lead through it. */
	LR_REPLICA(&p, &pair, "-n", "-l", "ro", "--", "true");
	cr_assert_eq(h_finish(&p, 30000), 69, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "read-only"), "%s", h_slurp(p.err));
	/* --check-server names it, and holds the semi-synchronous
	 * primary's replication. */
	LR(&p, &pair, "--check-server");
	cr_assert_eq(h_finish(&p, 30000), 1, "%s%s", h_slurp(p.out), h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), ": replication: held: semi-synchronous replication on"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), ": binary log: held: log_bin=ON, sync_binlog=1"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), ": writable: not held: read_only=ON: an asynchronous replica"), "%s",
		  h_slurp(p.out));
	pair_cmd(&pair, "promote", NULL);
	LR_REPLICA(&p, &pair, "-n", "-l", "ro", "--", "true");
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	pair_stop(&pair);
}

Test(replica, async_failover_with_replication_behind_repeats_a_term)
{
	/* The risk the manual documents, shown: with asynchronous replication
	 * the promoted replica lacks the holder's acquire, so a standby is
	 * granted the same term again while the holder's command still runs,
	 * until the holder's next renew finds the row changed. */
	struct pair pair;
	const char *lease = "async", *log = h_path("probe.log"), *lock = h_path("probe.lock");
	struct h_proc first, holder, standby;
	struct seen v;
	int rh, rs;

	pair_start(&pair, "--async");
	/* A first use, replicated: the row exists on both. */
	LR(&first, &pair, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&first, 30000), 0, "%s", h_slurp(first.err));
	h_sleep_ms(500);
	pair_cmd(&pair, "lag", "on");
	LR(&holder, &pair, "-t", "9s", "-l", lease, "--", h_probe(), log, lock, "30");
	cr_assert(h_wait_file(log, "start", 20000), "%s", h_slurp(holder.err));
	pair_cmd(&pair, "kill", "primary");
	pair_cmd(&pair, "promote", "--no-catch-up");
	LR(&standby, &pair, "-t", "9s", "-w", "60s", "-l", lease, "--", h_probe(), log, lock, "0.5");
	rh = h_finish(&holder, 60000);
	/* 99: the standby's probe found the holder's still running. */
	rs = h_finish(&standby, 60000);
	cr_assert(rs == 0 || rs == 99, "standby exited %d:\n%s", rs, h_slurp(standby.err));
	/* The holder learns it at its next renew: the row is not its own. */
	cr_assert_eq(rh, 76, "%s", h_slurp(holder.err));

	v = probe_seen(log);
	cr_assert_eq(v.starts, 2, "%s", h_slurp(log));
	cr_assert_eq(v.terms[1], v.terms[0], "expected the lost acquire's term %llu to be granted again, got %llu\n%s",
		     v.terms[0], v.terms[1], h_slurp(log));
	cr_log_info("async, primary killed with the replica behind: term %llu granted twice%s", v.terms[0],
		    v.overlap ? ", and the two commands overlapped" : "");
	pair_stop(&pair);
}
