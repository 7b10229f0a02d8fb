/* soak: random faults against contending leaderruns, Jepsen style.
 *
 * Starts a throwaway MariaDB (scripts/sandbox-db) and N contenders for one
 * lease, each connected through its own loopback proxy and each running the
 * overlap probe (tests/integration/probe.sh: an exclusive flock held for as
 * long as any process of the job lives). Then, episode after episode, it
 * picks a fault at random, injects it into the current holder (or the
 * database), waits for the outcome, checks it, and repairs the world:
 *
 *   kill9      SIGKILL of the holder: its command dies, another takes over
 *   blackhole  the holder's connection swallows everything: it stops, 76
 *   noreply    the server's replies are lost: it stops, 76
 *   slow       every packet late by more than the renew budget: it stops, 76
 *   killconn   server-side KILL of every session: nobody overlaps
 *   dbshort    database kill -9 and restart well within the margin: the
 *              command is untouched
 *   dblong     database down longer than the ttl: the holder stops, 76, and
 *              leadership resumes after the restart
 *   freeze     leaderrun and its command's group stopped past the ttl, then
 *              thawed: the watcher has killed the command at the deadline
 *              (the window after the thaw is measured; a freeze of the
 *              watcher too is the unpreventable case, see the fault suite)
 *   stoplr     leaderrun alone stopped past the ttl: the watcher stops the
 *              command at the deadline; leaderrun exits 76 when thawed
 *   release    `leaderrun --release` (an operator's, not --force): the holder
 *              stops its command at its next renew, releases after the
 *              reap and exits 76; nobody else's command starts before that
 *   clockrate  the holder is stopped (SIGTERM, a clean handover) and started
 *              again with its clocks running fast or slow (libfaketime, a
 *              rate within the man page's bound: 0.9x to 1.1x); it keeps
 *              that rate, and contends on
 *   dbhint     the database killed (-9) and restarted, within the margin,
 *              while a follower is blocked on the wake-up hint: as dbshort,
 *              and the table counts how often a follower blocked on the
 *              hint again within a few ttls of the restart
 *   escape     the holder's command leaves an escaper (probe.sh: setsid,
 *              SIGTERM ignored, a child of its own, both keeping the
 *              probe's lock), then the run ends one of three ways: the
 *              command exits 0 (leaderrun exits 0), an operator's --release
 *              or a blackholed connection (76). An escaper alive when the
 *              next command starts is an overlap (the lock), and one alive
 *              after the takeover is a survivor. Not with -S or -g.
 *   cut        the holder's host cut off with its job's fenced transaction
 *              open: the proxy swallows everything and keeps the server's
 *              side of every connection open after the client died, so the
 *              server still thinks the job's session alive; the holder
 *              stops, 76, and the takeover must end that session (the fence's
 *              lock wait, then leaderrun_fence_end)
 *   late       the holder's connections delayed by more than the ttl (the
 *              ttl + 2 s), the job's transaction open (its commit is then
 *              what arrives late) or between two (its next fence arrives
 *              late): the holder stops, 76, and the statements it had sent
 *              reach the server after the takeover
 *   preempt    a waiting contender started again with a --priority above
 *              the holder's (0) and --preempt (at once, after 300 ms or
 *              1 s): the holder stops its command at its next renew and
 *              exits 76, as for release; the preemptor leads a larger
 *              term, the old command dead before its starts, and both
 *              logs say so. Then the preemptor hands over (SIGTERM, 143),
 *              its command dead before the next starts, and contends on
 *              as an ordinary contender
 *   switchover `leaderrun --release LEASE --to NAME`, an operator's,
 *              naming a waiting contender (each run has a holder id of its
 *              own, --holder soak-cI-G): it exits 0 once NAME holds the
 *              lease under a larger term (judged by the term it prints,
 *              NAME's history row of that term begun before the exit and
 *              NAME's log, not by the row afterwards); the holder stops its
 *              command, 76, and its log says it was switched over
 *
 * preempt and switchover need one server and no -S (priorities ride on one
 * server's named locks, and not with --slots).
 *
 * Fenced writes (LR_FENCED_JOB, one server, not with -S): every command is
 * tests/soak/fenced-job.sh, the probe plus a writer in the job's group that
 * runs transactions which fence with the job's term (CALL leaderrun_fence
 * through soak_write) and commit a row of that term stamped with the server's
 * time at the commit (soak_commit), each open 0 to 1.5 s, so that every fault
 * above lands in some. At the end the checker reads the committed rows back
 * with the terms' start times (fenced-job.sh's, by the real clock: the probe's
 * date runs faked under clockrate; one host, the server's clock too)
 * and counts the rows of a term committed after a newer term's command
 * began: any is a failure. The table adds the fenced transactions
 * committed, refused as stale (45000, recorded by soak_write even when the
 * job is dead by then) and ended at a takeover (leaderrun's "ended session").
 *
 * With -g the database is a 3-node Galera cluster (scripts/sandbox-galera,
 * LR_SANDBOX_GALERA), each contender lists the nodes starting with its own,
 * and the faults are kill9, freeze and stoplr as above, and:
 *
 *   nodekill   SIGKILL of the node the holder uses, restarted afterwards
 *   nodepart   that node cut off from the others with iptables (root
 *              only), healed afterwards
 *
 * after which the holder either keeps its lease through another node or
 * exits 76, and nobody else's command starts while its runs.
 *
 * With -G the same with a 3-member single-primary MySQL Group Replication
 * group (scripts/sandbox-gr, LR_SANDBOX_GR) for the cluster: nodekill and
 * nodepart hit the member the holder uses, the primary; the others elect
 * a new one (10 to 25 s), and the operator's --release lists every member.
 *
 * With -S N the contenders run with --slots N (N+1 of them unless -n says
 * more, so that one always waits), each command is tests/soak/slot-probe.sh
 * (LR_SLOT_PROBE), and every check holds per slot. The probe holds two
 * flocks for as long as any process of its job lives: its slot's (two
 * commands in one slot at once are an overlap) and the first free of N seats
 * (a command that finds all N taken is one more than N at once; the seats do
 * not trust LEADERRUN_SLOT). Each episode waits until all N slots are held,
 * picks one holder at random and injects the fault into it: its slot must be
 * taken over (a term above its last, in that slot), its old command must be
 * dead, and the other slots' commands untouched (same pid, same term). A
 * database fault hits every holder: dblong stops all N, each slot taken over
 * afterwards; --release names the slot (--slot K). Terms grow per slot. Not
 * with -g.
 *
 * With -V the contenders run --service (LR_SERVICE, tests/integration/
 * service.sh, and its hooks): leading, from the promote's start to the
 * demote's end, takes the probe's lock. The faults: kill9, freeze, stoplr,
 * blackhole, release, hangdemote (the demote hangs: killed, 76),
 * failpromote (the standbys' next promotes fail, in that episode: the
 * flags no promote took are cleared once another leads), and preempt and
 * switchover, after which the old leader demotes and stands by, its
 * service the same process. No standby's service restarts. Each promote
 * starts a background worker (service.sh worker): no worker's line is
 * stamped after a newer term's start (workers_check).
 *
 * At the end it prints a summary table and exits 1 if any check failed:
 * an overlap (the probe's flock saw two jobs), a term that did not grow, a
 * holder that exited with the wrong status, a descendant that survived, or
 * a lease that was never acquired again, or a stale fenced commit.
 *
 * Usage: soak [-g | -S SLOTS] [-e EPISODES] [-d SECONDS] [-n CONTENDERS] [-t TTL_MS] [-s SEED] [-f FAULT]
 * Environment: LEADERRUN_BIN, LR_SANDBOX, LR_SANDBOX_GALERA (with -g),
 * LR_PROBE (set by meson and scripts/soak), LR_SLOT_PROBE (with -S; set by
 * scripts/soak), LR_FENCED_JOB (fenced writes; set by meson and
 * scripts/soak).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/procs.h"
#include "../integration/proxy.h"
#include "soak_util.h"

extern char **environ;

enum fault {
	F_KILL9,
	F_BLACKHOLE,
	F_NOREPLY,
	F_SLOW,
	F_KILLCONN,
	F_DBSHORT,
	F_DBLONG,
	F_FREEZE,
	F_STOPLR,
	F_NODEKILL,
	F_NODEPART,
	F_RELEASE,
	F_CLOCKRATE,
	F_DBHINT,
	F_ESCAPE,
	F_CUT,
	F_LATE,
	F_HANGDEMOTE,
	F_FAILPROMOTE,
	F_PREEMPT,
	F_SWITCHOVER,
	F_COUNT
};
static const char *const fault_names[F_COUNT] = {
    "kill9",  "blackhole", "noreply",  "slow",	     "killconn",    "dbshort",	 "dblong",
    "freeze", "stoplr",	   "nodekill", "nodepart",   "release",	    "clockrate", "dbhint",
    "escape", "cut",	   "late",     "hangdemote", "failpromote", "preempt",	 "switchover"};
/* The faults of each mode. */
static const enum fault single_faults[] = {F_KILL9,  F_BLACKHOLE, F_NOREPLY, F_SLOW,	F_KILLCONN,  F_DBSHORT,
					   F_DBLONG, F_FREEZE,	  F_STOPLR,  F_RELEASE, F_CLOCKRATE, F_DBHINT,
					   F_ESCAPE, F_CUT,	  F_LATE,    F_PREEMPT, F_SWITCHOVER};
static const enum fault galera_faults[] = {F_KILL9, F_FREEZE, F_STOPLR, F_NODEKILL, F_NODEPART, F_RELEASE};
/* -V: a service's faults: the leader killed, frozen, cut off, released,
 * its demote hanging, a standby's promote failing, preempted, switched
 * over. */
static const enum fault service_faults[] = {F_KILL9,	  F_FREEZE,	 F_STOPLR,  F_BLACKHOLE, F_RELEASE,
					    F_HANGDEMOTE, F_FAILPROMOTE, F_PREEMPT, F_SWITCHOVER};

#define MAX_CONTENDERS 5
#define MAX_SLOTS      (MAX_CONTENDERS - 1) /* -S: one contender waits at least */
#define LEASE	       "soak"

struct contender {
	pid_t pid;
	struct proxy *proxy;
	int restarts;
	char faketime[32]; /* a libfaketime spec it runs under, or "" */
	/* --holder: soak-cI-G, a new G at every start, so that a switch-over
	 * can name it and no two runs share a holder id. */
	char holder[32];
	int gen;
	/* The next start only (preempt): --priority and --preempt=DELAY. */
	int priority;
	char preempt[16];
};

struct stats {
	int episodes, takeovers, failures, failed_episodes;
	int kept, lost; /* node faults: the holder kept its lease, or exited 76 */
	int per_fault[F_COUNT];
	int64_t failover_ms[4096];
	int nfailover;
	int64_t max_stale_ms;
	int hint_back, hint_restarts;  /* dbhint: followers blocked on the hint again / restarts */
	int slot_takeovers[MAX_SLOTS]; /* -S: takeovers per slot */
	/* Each episode's start by the wall clock (µs, the server's clock on
	 * this host too), the term it faulted, its fault and whether a check
	 * failed in it: a stale commit's episode. */
	int64_t ep_us[4096];
	unsigned long long ep_term[4096];
	unsigned char ep_fault[4096];
	bool ep_failed[4096];
	/* Fenced writes: transactions committed, refused as stale (45000),
	 * ended at a takeover, and rows committed after a newer term began. */
	long fenced_committed, fenced_refused, fenced_ended, fenced_stale;
	/* -V: demotes that ended leading ("stop" lines), contenders that
	 * exited 76 (a demote killed), promotes that failed, and standbys
	 * whose service did not survive a failover they stood by through. */
	int demotes, demotes_killed, promotes_failed, standby_restarts;
};

struct soak {
	const char *bin, *sandbox, *probe, *slot_probe, *faketime_lib;
	const char *fenced_job; /* LR_FENCED_JOB: the jobs write fenced rows (one server, no -S) */
	char dir[256], dbdir[300], log[320], lock[320];
	char socket[300], port[16], user[64], password[128], dbname[64];
	int ncont;
	int slots; /* -S: --slots N; 0 without */
	int ttl_ms;
	bool galera, root;
	bool gr; /* -G: the cluster is a Group Replication group (galera set too) */
	int node_port[3];
	struct contender c[MAX_CONTENDERS];
	struct stats st;
	uint64_t rng;
	int only; /* -f: the one fault to inject; -1: the whole mix */
	/* -V: the contenders run --service with LR_SERVICE (service.sh) and
	 * its hooks, which fail or hang when a flag file says so. */
	const char *service;
	char promote[2048], demote[1024];
};

static uint64_t rnd(struct soak *s)
{
	return soak_rnd(&s->rng);
}

static void fail(struct soak *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct soak *s, const char *fmt, ...)
{
	va_list ap;

	s->st.failures++;
	fprintf(stderr, "soak: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void sandbox(struct soak *s, const char *cmd)
{
	if (soak_run_quiet((char *[]){(char *)s->sandbox, (char *)cmd, s->dbdir, NULL}, NULL) != 0) {
		fprintf(stderr, "soak: %s %s failed\n", s->sandbox, cmd);
		exit(2);
	}
}

/* scripts/sandbox-galera CMD DIR NODE */
static void cluster(struct soak *s, const char *cmd, int node)
{
	char n[12]; /* any int: GCC 16 checks (-Wformat-truncation) */

	snprintf(n, sizeof(n), "%d", node);
	if (soak_run_quiet((char *[]){(char *)s->sandbox, (char *)cmd, s->dbdir, n, NULL}, NULL) != 0) {
		fprintf(stderr, "soak: %s %s %d failed\n", s->sandbox, cmd, node);
		exit(2);
	}
}

/* Runs SQL as root; output (trimmed) into OUT. */
static int sql(struct soak *s, const char *q, char *out, size_t len)
{
	char path[340];

	snprintf(path, sizeof(path), "%s/sql.out", s->dir);
	return soak_sql(s->socket, s->dbname, path, q, out, len);
}

static void start_contender(struct soak *s, int i)
{
	char dsn[512], ttl[32], errpath[320], slots[16], port[16], prio[16], preempt[32];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *args[40];
	int na = 0;

	/* Every mode's start, then its holder id, a preemptor's priority,
	 * then the mode's own options and command. */
	snprintf(s->c[i].holder, sizeof(s->c[i].holder), "soak-c%d-%d", i, s->c[i].gen++);
	args[na++] = (char *)s->bin;
	args[na++] = "-v";
	args[na++] = "-d";
	args[na++] = dsn;
	args[na++] = "-t";
	args[na++] = ttl;
	args[na++] = "--retry-interval";
	args[na++] = "200ms";
	args[na++] = "-l";
	args[na++] = LEASE;
	args[na++] = "--holder";
	args[na++] = s->c[i].holder;
	if (s->c[i].priority) {
		snprintf(prio, sizeof(prio), "%d", s->c[i].priority);
		snprintf(preempt, sizeof(preempt), "--preempt=%s", s->c[i].preempt);
		args[na++] = "--priority";
		args[na++] = prio;
		args[na++] = preempt;
		/* This start only: a restart is an ordinary contender. */
		s->c[i].priority = 0;
	}
	if (s->service) {
		args[na++] = "--service";
		args[na++] = "--on-promote";
		args[na++] = s->promote;
		args[na++] = "--on-demote";
		args[na++] = s->demote;
		args[na++] = "--";
		args[na++] = (char *)s->service;
		args[na++] = s->log;
		args[na++] = s->lock;
		args[na++] = s->dir;
	} else if (s->slots) {
		args[na++] = "--slots";
		args[na++] = slots;
		args[na++] = "--";
		args[na++] = (char *)s->slot_probe;
		args[na++] = s->dir;
		args[na++] = slots;
		args[na++] = "3600";
	} else if (s->fenced_job) {
		args[na++] = "--fence-user";
		args[na++] = "soakjob";
		args[na++] = "--";
		args[na++] = (char *)s->fenced_job;
		args[na++] = port;
		args[na++] = s->dbname;
		args[na++] = (char *)s->probe;
		args[na++] = s->log;
		args[na++] = s->lock;
		args[na++] = "3600";
	} else {
		args[na++] = "--";
		args[na++] = (char *)s->probe;
		args[na++] = s->log;
		args[na++] = s->lock;
		args[na++] = "3600";
	}
	args[na] = NULL;

	if (s->galera) {
		/* Each contender its own node first, the others after. */
		int k = i % 3;
		snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/%s", s->user,
			 s->password, s->node_port[k], s->node_port[(k + 1) % 3], s->node_port[(k + 2) % 3], s->dbname);
	} else
		snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%d/%s", s->user, s->password,
			 proxy_port(s->c[i].proxy), s->dbname);
	snprintf(ttl, sizeof(ttl), "%dms", s->ttl_ms);
	snprintf(slots, sizeof(slots), "%d", s->slots);
	/* The job's session goes through the contender's proxy: the host's
	 * network faults are its too. */
	snprintf(port, sizeof(port), "%d", s->galera ? 0 : proxy_port(s->c[i].proxy));
	snprintf(errpath, sizeof(errpath), "%s/contender%d.err", s->dir, i);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	/* A process group of its own. In the soak's group, a contender that
	 * the freeze fault stopped would get SIGHUP from the kernel whenever a
	 * child of the soak exits while that group is orphaned (meson starts
	 * tests in a session of their own, and so does a detached shell), and
	 * would forward it to its command. */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	if (s->c[i].faketime[0]) {
		/* The whole environment plus the faker: leaderrun and its
		 * command see the faked clocks. No shared memory: it would
		 * outlive the run in /dev/shm. */
		size_t n = 0;
		while (environ[n])
			n++;
		char **env = calloc(n + 4, sizeof(*env));
		static char preload[320], spec[64];
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", s->faketime_lib);
		snprintf(spec, sizeof(spec), "FAKETIME=%s", s->c[i].faketime);
		memcpy(env, environ, n * sizeof(*env));
		env[n++] = preload;
		env[n++] = spec;
		env[n++] = "FAKETIME_DISABLE_SHM=1";
		if (posix_spawn(&s->c[i].pid, s->bin, &fa, &attr, args, env) != 0) {
			fprintf(stderr, "soak: cannot start %s\n", s->bin);
			exit(2);
		}
		free(env);
	} else if (posix_spawn(&s->c[i].pid, s->bin, &fa, &attr, args, environ) != 0) {
		fprintf(stderr, "soak: cannot start %s\n", s->bin);
		exit(2);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
}

/* Exit status of contender I if it has exited (reaped now), else -1. */
static int contender_status(struct soak *s, int i, int timeout_ms)
{
	return soak_status(s->c[i].pid, timeout_ms);
}

struct probe_state {
	int starts, violations;
	unsigned long long last_term;
	int64_t last_start_ns;
	pid_t last_pid;
	bool terms_grew; /* with -S: per slot */
	/* -S: the last start in each slot ("start TERM NS PID SLOT SEAT"). */
	struct {
		int starts;
		unsigned long long term;
		pid_t pid;
	} slot[MAX_SLOTS];
	int bad_starts;		  /* -S: a start without a slot or a seat in 0..N-1 */
	int most;		  /* -S: the highest seat taken plus one, the most commands seen at once */
	int doubled, over, range; /* -S: violations: a slot's lock held, every seat held, a slot not in 0..N-1 */
};

static struct probe_state probe_read(struct soak *s)
{
	struct probe_state p = {.terms_grew = true};
	char line[256];
	FILE *f = fopen(s->log, "r");

	if (!f)
		return p;
	while (fgets(line, sizeof(line), f)) {
		char what[16];
		unsigned long long term;
		long long ns;
		int pid = 0, slot = -1, seat = -1;
		/* Whatever follows (the term is "?" without LEADERRUN_TERM). */
		if (strncmp(line, "violation ", 10) == 0) {
			p.violations++;
			if (s->slots && sscanf(line, "violation %*s %*s %*s %15s", what) == 1) {
				p.doubled += strcmp(what, "slot") == 0;
				p.over += strcmp(what, "seats") == 0;
				p.range += strcmp(what, "range") == 0;
			}
			continue;
		}
		if (sscanf(line, "%15s %llu %lld %d %d %d", what, &term, &ns, &pid, &slot, &seat) < 3)
			continue;
		if (strcmp(what, "start") != 0)
			continue;
		p.starts++;
		p.last_start_ns = ns;
		p.last_pid = pid;
		if (!s->slots) {
			if (term <= p.last_term)
				p.terms_grew = false;
			p.last_term = term;
			continue;
		}
		p.last_term = term;
		if (slot < 0 || slot >= s->slots || seat < 0 || seat >= s->slots) {
			p.bad_starts++;
			continue;
		}
		if (term <= p.slot[slot].term)
			p.terms_grew = false;
		p.slot[slot].starts++;
		p.slot[slot].term = term;
		p.slot[slot].pid = pid;
		if (seat + 1 > p.most)
			p.most = seat + 1;
	}
	fclose(f);
	return p;
}

/* The contender whose holder id HOLDER is (the live run's), or -1. */
static int contender_named(struct soak *s, const char *holder)
{
	for (int i = 0; i < s->ncont; i++)
		if (strcmp(s->c[i].holder, holder) == 0)
			return i;
	return -1;
}

/* The contender whose command runs now (by the lease row's holder id),
 * once its probe has logged the start of that term: between the acquire and
 * that line the episode would not know which command to watch. */
static int current_holder(struct soak *s, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;
	char out[512];

	for (;;) {
		if (sql(s,
			"SELECT term, holder FROM leaderrun_lease WHERE name='" LEASE
			"' AND expires_at > UTC_TIMESTAMP(6)",
			out, sizeof(out)) == 0 &&
		    out[0]) {
			unsigned long long term = strtoull(out, NULL, 10);
			char *tab = strchr(out, '\t');
			int i = tab ? contender_named(s, tab + 1) : -1;
			if (i >= 0 && probe_read(s).last_term == term)
				return i;
		}
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(50);
	}
}

/* -S: the contender in each slot (HOLD[K], by the rows' holder ids), once
 * every one of the N slots is held and each slot's probe has logged the
 * start of its term. Returns 0, or -1 if that did not happen in time. */
static int slot_holders(struct soak *s, int timeout_ms, int hold[MAX_SLOTS])
{
	int64_t end = procs_now_ms() + timeout_ms;
	char out[2048];

	for (;;) {
		if (sql(s,
			"SELECT slot, term, holder FROM leaderrun_lease WHERE name='" LEASE
			"' AND expires_at > UTC_TIMESTAMP(6) ORDER BY slot",
			out, sizeof(out)) == 0) {
			struct probe_state p = probe_read(s);
			int held = 0;
			for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
				unsigned slot;
				unsigned long long term;
				char *tab = strrchr(l, '\t');
				int i = tab ? contender_named(s, tab + 1) : -1;
				if (sscanf(l, "%u %llu", &slot, &term) != 2 || slot >= (unsigned)s->slots ||
				    p.slot[slot].term != term || i < 0)
					continue;
				hold[slot] = i;
				held++;
			}
			if (held == s->slots)
				return 0;
		}
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(50);
	}
}

/* -S: waits until a command with a term above TERM has started in SLOT.
 * Returns the time of its start (CLOCK_MONOTONIC ms), or -1. */
static int64_t wait_slot_start(struct soak *s, int slot, unsigned long long term, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;

	for (;;) {
		if (probe_read(s).slot[slot].term > term)
			return procs_now_ms();
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(10);
	}
}

/* Waits until a command with a term above TERM has started. Returns the
 * time of its start (CLOCK_MONOTONIC ms), or -1. */
static int64_t wait_new_start(struct soak *s, unsigned long long term, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;

	for (;;) {
		struct probe_state p = probe_read(s);
		if (p.last_term > term)
			return procs_now_ms();
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(10);
	}
}

static void expect_exit(struct soak *s, int i, int want, const char *fault)
{
	int st = contender_status(s, i, s->ttl_ms * 3 + 5000);

	if (st < 0) {
		fail(s, "%s: holder %d did not exit", fault, (int)s->c[i].pid);
		kill(s->c[i].pid, SIGKILL);
		contender_status(s, i, 5000);
	} else if (st != want)
		fail(s, "%s: holder %d exited %d, want %d", fault, (int)s->c[i].pid, st, want);
}

/* The node (1-3) contender I last said it uses ("acquired ... on
 * 127.0.0.1:PORT", "now using database server 127.0.0.1:PORT"), or 0;
 * *MOVES counts the second kind. */
static int holder_node(struct soak *s, int i, int *moves)
{
	char path[340], line[1024];
	int port = 0;
	FILE *f;

	*moves = 0;
	snprintf(path, sizeof(path), "%s/contender%d.err", s->dir, i);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *a = strstr(line, "acquired term "),
			   *b = strstr(line, "now using database server 127.0.0.1:");
		if (a && (a = strstr(a, " on 127.0.0.1:")))
			port = atoi(a + strlen(" on 127.0.0.1:"));
		else if (b) {
			port = atoi(b + strlen("now using database server 127.0.0.1:"));
			++*moves;
		}
	}
	fclose(f);
	for (int n = 0; n < 3; n++)
		if (s->node_port[n] == port)
			return n + 1;
	return 0;
}

/* Sessions of the test user blocked in the hint's GET_LOCK now. */
static int hint_blocked(struct soak *s)
{
	char q[256], out[64];

	snprintf(q, sizeof(q),
		 "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s' AND INFO LIKE '%%GET_LOCK%%'",
		 s->user);
	if (sql(s, q, out, sizeof(out)) != 0)
		return 0;
	return atoi(out);
}

/* Waits up to TIMEOUT_MS for a follower blocked on the hint. */
static bool wait_hint_blocked(struct soak *s, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;

	while (hint_blocked(s) == 0) {
		if (procs_now_ms() >= end)
			return false;
		procs_sleep_ms(100);
	}
	return true;
}

static void restart(struct soak *s, int i)
{
	start_contender(s, i);
	s->c[i].restarts++;
}

/* -S: after a fault that stopped slot HS's holder (every holder if ALL):
 * each such slot is taken over with a larger term, its old command dead by
 * then (the probe's slot lock says so to the instant; this is the soak's own
 * look), and every other slot's command ran on untouched throughout. */
static void check_slots_after(struct soak *s, enum fault f, const struct probe_state *before, int hs, bool all,
			      int64_t t0)
{
	struct probe_state p;

	for (int k = 0; k < s->slots; k++) {
		pid_t old = before->slot[k].pid;
		int64_t t1;
		if (!all && k != hs)
			continue;
		t1 = wait_slot_start(s, k, before->slot[k].term, s->ttl_ms * 4 + 15000);
		if (t1 < 0)
			fail(s, "%s: slot %d was never acquired again", fault_names[f], k);
		else if (s->st.nfailover < (int)(sizeof(s->st.failover_ms) / sizeof(s->st.failover_ms[0]))) {
			s->st.takeovers++;
			s->st.slot_takeovers[k]++;
			s->st.failover_ms[s->st.nfailover++] = t1 - t0;
		}
		if (old > 0 && procs_alive(old))
			fail(s, "%s: slot %d's old command %d survived", fault_names[f], k, (int)old);
	}
	p = probe_read(s);
	for (int k = 0; k < s->slots && !all; k++) {
		pid_t old = before->slot[k].pid;
		if (k != hs && (p.slot[k].term != before->slot[k].term || !procs_alive(old)))
			fail(s, "%s on slot %d touched slot %d: term %llu -> %llu, its command %d %s", fault_names[f],
			     hs, k, before->slot[k].term, p.slot[k].term, (int)old,
			     procs_alive(old) ? "alive" : "gone");
	}
}

/* An operator's DSN: straight to the server, not through a contender's
 * proxy. */
static void operator_dsn(struct soak *s, char *dsn, size_t len)
{
	if (s->gr)
		/* Only the primary takes writes: the DSN finds it. */
		snprintf(dsn, len, "mysql://%s:%s@127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/%s", s->user, s->password,
			 s->node_port[0], s->node_port[1], s->node_port[2], s->dbname);
	else if (s->galera)
		snprintf(dsn, len, "mysql://%s:%s@127.0.0.1:%d/%s", s->user, s->password, s->node_port[0], s->dbname);
	else
		snprintf(dsn, len, "mysql://%s:%s@127.0.0.1:%s/%s", s->user, s->password, s->port, s->dbname);
}

/* `leaderrun --release` of the lease (-S: of slot HS alone), straight to
 * the server, not through a contender's proxy, as an operator would. */
static void operator_release(struct soak *s, int hs)
{
	char dsn[512], out[512], slot[16];

	operator_dsn(s, dsn, sizeof(dsn));
	snprintf(out, sizeof(out), "%s/release.out", s->dir);
	snprintf(slot, sizeof(slot), "%d", hs);
	if (soak_run_quiet(s->slots ? (char *[]){(char *)s->bin, "-d", dsn, "--release", LEASE, "--slot", slot, NULL}
				    : (char *[]){(char *)s->bin, "-d", dsn, "--release", LEASE, NULL},
			   out) != 0)
		fail(s, "release: leaderrun --release failed");
}

/* ---- Choosing the leader: preempt and switchover ---- */

/* A contender other than H, at random: one that waits. */
static int other_contender(struct soak *s, int h)
{
	return (h + 1 + (int)(rnd(s) % (uint64_t)(s->ncont - 1))) % s->ncont;
}

/* Waits up to TIMEOUT_MS until contender I stands by: its standby row,
 * healthy, its named lock held (the session alive). */
static bool wait_standby(struct soak *s, int i, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;
	char q[512], out[64];

	snprintf(q, sizeof(q),
		 "SELECT COUNT(*) FROM leaderrun_standby WHERE lease='" LEASE
		 "' AND holder='%s' AND healthy AND IS_USED_LOCK(lock_name) IS NOT NULL",
		 s->c[i].holder);
	for (;;) {
		if (sql(s, q, out, sizeof(out)) == 0 && atoi(out) > 0)
			return true;
		if (procs_now_ms() >= end)
			return false;
		procs_sleep_ms(50);
	}
}

/* Lines of contender I's log (all its runs') that contain NEEDLE. */
static int log_count(struct soak *s, int i, const char *needle)
{
	char path[340], line[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/contender%d.err", s->dir, i);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* After a preemption or a switch-over: the holder H stopped for it. A job's
 * leaderrun exits 76, as for --release, and starts again; a service's
 * demotes and stands by, the same process, its service too. */
static void handover_holder(struct soak *s, int h, enum fault f, pid_t svc)
{
	int st;

	if (!s->service) {
		expect_exit(s, h, 76, fault_names[f]);
		restart(s, h);
		return;
	}
	if ((st = contender_status(s, h, 0)) >= 0) {
		fail(s, "%s: the leader %d exited %d instead of standing by", fault_names[f], (int)s->c[h].pid, st);
		restart(s, h);
	} else if (svc > 0 && !procs_alive(svc))
		fail(s, "%s: the old leader's service %d did not survive its demote", fault_names[f], (int)svc);
}

/* After a preemption or a switch-over: contender W leads a term above
 * BEFORE's (the row's holder, the probe's last start), and the old
 * command is dead (a job's; a service's lives on, standing by). Returns
 * when W's command started (CLOCK_MONOTONIC ms), or -1. */
static int64_t handover_check(struct soak *s, int w, enum fault f, const struct probe_state *before)
{
	int64_t t1 = wait_new_start(s, before->last_term, s->ttl_ms * 4 + 15000);
	int j;

	if (t1 < 0) {
		fail(s, "%s: contender %d (%s) never led", fault_names[f], w, s->c[w].holder);
		return -1;
	}
	if ((j = current_holder(s, 5000)) != w)
		fail(s, "%s: contender %d leads term %llu, not contender %d (%s)", fault_names[f], j,
		     probe_read(s).last_term, w, s->c[w].holder);
	if (!s->service && before->last_pid > 0 && procs_alive(before->last_pid))
		fail(s, "%s: the old command %d survived", fault_names[f], (int)before->last_pid);
	return t1;
}

/* The preempt fault: a waiting contender W comes back with a priority
 * above the holder H's (0) and --preempt (at once, or after a short
 * wait); H stops its command or demotes, and W leads a larger term. Then
 * back to normal: W hands over (SIGTERM), its command dies before
 * another starts, and it contends on as an ordinary contender. SVC: H's
 * service (-V). *PREEMPTOR: W. Returns when W's command started, or -1. */
static int64_t preempt(struct soak *s, int h, const struct probe_state *before, pid_t svc, int *preemptor)
{
	static const char *const delays[] = {"0", "0", "300ms", "1s"};
	int w = other_contender(s, h), st;
	struct probe_state p;
	int64_t t1;

	char hname[32], said[64];
	int said_before = log_count(s, h, "lease preempted by ");

	*preemptor = w;
	snprintf(hname, sizeof(hname), "%s", s->c[h].holder);
	kill(s->c[w].pid, SIGTERM);
	if (contender_status(s, w, 10000) < 0) {
		fail(s, "preempt: the waiting contender %d did not exit on SIGTERM", (int)s->c[w].pid);
		kill(s->c[w].pid, SIGKILL);
		contender_status(s, w, 5000);
	}
	s->c[w].priority = 1 + (int)(rnd(s) % 9);
	snprintf(s->c[w].preempt, sizeof(s->c[w].preempt), "%s", delays[rnd(s) % 4]);
	printf("soak: preempt: contender %d again with --priority %d --preempt=%s\n", w, s->c[w].priority,
	       s->c[w].preempt);
	fflush(stdout);
	restart(s, w);
	handover_holder(s, h, F_PREEMPT, svc);
	if ((t1 = handover_check(s, w, F_PREEMPT, before)) < 0)
		return -1;
	/* Their logs say it: a preemption, not some other end. */
	snprintf(said, sizeof(said), "preempting %s ", hname);
	if (log_count(s, h, "lease preempted by ") == said_before)
		fail(s, "preempt: the holder %s's log does not say it was preempted", hname);
	if (log_count(s, w, said) == 0)
		fail(s, "preempt: the preemptor %s's log does not say '%s'", s->c[w].holder, said);
	/* Back to normal: the preemptor hands over as any holder may. */
	p = probe_read(s);
	kill(s->c[w].pid, SIGTERM);
	if ((st = contender_status(s, w, s->ttl_ms * 3 + 5000)) < 0) {
		fail(s, "preempt: the preemptor %d did not exit on SIGTERM", (int)s->c[w].pid);
		kill(s->c[w].pid, SIGKILL);
		contender_status(s, w, 5000);
	} else if (!s->service && st != 143)
		/* The probe dies of the forwarded SIGTERM: 128 + 15. */
		fail(s, "preempt: the preemptor %d exited %d on SIGTERM, want 143", (int)s->c[w].pid, st);
	if (wait_new_start(s, p.last_term, s->ttl_ms * 4 + 15000) < 0)
		fail(s, "preempt: nobody led after the preemptor handed over");
	if (p.last_pid > 0 && procs_alive(p.last_pid))
		fail(s, "preempt: the preemptor's %s %d survived it", s->service ? "service" : "command",
		     (int)p.last_pid);
	restart(s, w);
	return t1;
}

/* The term `leaderrun --release --to` says W took ("switched over lease
 * LEASE to W (term N) in D", in OUT), or 0. */
static unsigned long long switchover_said(struct soak *s, int w, const char *out)
{
	char line[512], want[128];
	unsigned long long term = 0;
	FILE *f = fopen(out, "r");

	snprintf(want, sizeof(want), "switched over lease " LEASE " to %s (term ", s->c[w].holder);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, want, strlen(want)) == 0)
			term = strtoull(line + strlen(want), NULL, 10);
	if (f)
		fclose(f);
	return term;
}

/* Its exit 0 says W held the lease, under a term above BEFORE's, when it
 * looked: judged from that moment's records, not from the row read
 * afterwards (W may have stepped down since, and a neighbour taken the
 * lease). The term it printed is above BEFORE's and no newer than the row
 * (EXIT_AT, the server's time at the exit, and ROW_TERM, the row's term
 * then); W's history row of that term began before the exit; W's own log
 * says it acquired that term. */
static void switchover_judge(struct soak *s, int w, const struct probe_state *before, const char *out,
			     const char *exit_at, unsigned long long row_term)
{
	unsigned long long term = switchover_said(s, w, out);
	int64_t end = procs_now_ms() + s->ttl_ms * 3 + 10000;
	char q[512], n[64] = "", said[128];

	if (term <= before->last_term || term > row_term) {
		fail(s, "switchover: its exit 0 says term %llu, not one above term %llu and at most the row's %llu",
		     term, before->last_term, row_term);
		return;
	}
	/* The history is written beside the lease loop, a moment later. */
	snprintf(q, sizeof(q),
		 "SELECT COUNT(*) FROM leaderrun_history WHERE lease='" LEASE
		 "' AND slot=0 AND term=%llu AND holder='%s' AND started_at <= '%s'",
		 term, s->c[w].holder, exit_at);
	while (!(sql(s, q, n, sizeof(n)) == 0 && atoi(n) > 0) && procs_now_ms() < end)
		procs_sleep_ms(100);
	if (atoi(n) == 0)
		fail(s, "switchover: no history row says %s took term %llu before its exit 0 (%s)", s->c[w].holder,
		     term, exit_at);
	snprintf(said, sizeof(said), "acquired term %llu as %s ", term, s->c[w].holder);
	if (log_count(s, w, said) == 0)
		fail(s, "switchover: %s's log does not say '%s'", s->c[w].holder, said);
}

/* The switchover fault: `leaderrun --release LEASE --to NAME` names a
 * waiting contender W; it exits 0 once W holds the lease, under a term
 * above the holder H's, and H stops its command or demotes. SVC: H's
 * service (-V). *T0: when the switch-over began. Returns when W's command
 * started, or -1. */
static int64_t switchover(struct soak *s, int h, const struct probe_state *before, pid_t svc, int64_t *t0)
{
	int w = other_contender(s, h), rc, said_before = log_count(s, h, "lease switched over to ");
	char dsn[512], out[340], row[512] = "";
	int64_t t1;
	FILE *f;

	if (!wait_standby(s, w, s->ttl_ms * 3 + 10000)) {
		fail(s, "switchover: contender %d (%s) never stood by", w, s->c[w].holder);
		return -1;
	}
	operator_dsn(s, dsn, sizeof(dsn));
	snprintf(out, sizeof(out), "%s/switchover.out", s->dir);
	printf("soak: switchover to contender %d (%s)\n", w, s->c[w].holder);
	fflush(stdout);
	*t0 = procs_now_ms();
	rc = soak_run_quiet((char *[]){(char *)s->bin, "-d", dsn, "--release", LEASE, "--to", s->c[w].holder, NULL},
			    out);
	if (rc != 0) {
		if ((f = fopen(out, "r"))) {
			if (!fgets(row, sizeof(row), f))
				row[0] = '\0';
			fclose(f);
		}
		row[strcspn(row, "\n")] = '\0';
		fail(s, "switchover: leaderrun --release " LEASE " --to %s exited %d, want 0 (%s)", s->c[w].holder, rc,
		     row);
	} else if (sql(s, "SELECT UTC_TIMESTAMP(6), term FROM leaderrun_lease WHERE name='" LEASE "'", row,
		       sizeof(row)) != 0 ||
		   !strchr(row, '\t'))
		fail(s, "switchover: cannot read the server's time after its exit (%s)", row);
	else {
		*strchr(row, '\t') = '\0';
		switchover_judge(s, w, before, out, row, strtoull(row + strlen(row) + 1, NULL, 10));
	}
	handover_holder(s, h, F_SWITCHOVER, svc);
	t1 = handover_check(s, w, F_SWITCHOVER, before);
	if (log_count(s, h, "lease switched over to ") == said_before)
		fail(s, "switchover: the holder's log does not say it was switched over");
	return t1;
}

/* The escapers' pids (the setsid'd shells) in the probe log, the first
 * MAX into PIDS; returns how many there are. */
static int escapers(struct soak *s, pid_t *pids, int max)
{
	char line[256];
	int n = 0;
	FILE *f = fopen(s->log, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int pid;
		if (sscanf(line, "escaped %*s %*s %d", &pid) != 1)
			continue;
		if (n < max)
			pids[n] = (pid_t)pid;
		n++;
	}
	fclose(f);
	return n;
}

/* The escape fault: the holder's command leaves an escaper (SIGUSR1, or
 * SIGUSR2 to exit 0 at once), forwarded by leaderrun to its group, then
 * the run ends by the command's exit, a revoke or a partition. */
static void escape(struct soak *s, int h)
{
	pid_t pids[2048];
	int before = escapers(s, pids, 2048), how = (int)(rnd(s) % 3);
	int64_t end = procs_now_ms() + 5000;
	static const char *const hows[] = {"exit", "release", "blackhole"};

	printf("soak: escape, then %s\n", hows[how]);
	fflush(stdout);
	kill(s->c[h].pid, how == 0 ? SIGUSR2 : SIGUSR1);
	while (escapers(s, pids, 2048) == before && procs_now_ms() < end)
		procs_sleep_ms(5);
	if (escapers(s, pids, 2048) == before) {
		fail(s, "escape: the command left no escaper");
		return;
	}
	if (how == 1)
		operator_release(s, 0);
	else if (how == 2)
		proxy_set_mode(s->c[h].proxy, PROXY_BLACKHOLE);
	expect_exit(s, h, how == 0 ? 0 : 76, "escape");
	proxy_set_mode(s->c[h].proxy, PROXY_PASS);
	restart(s, h);
}

/* Whether PID is still the escaper it was: its command line says so. A
 * pid is soon another process's (pid_max is 32768 here): a check by
 * number alone took an unrelated ld for a survivor, and killed it. */
static bool is_escaper(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, "sleep 3600 & wait") != NULL && procs_alive(pid);
}

/* After an episode: no escaper it left alive (the lock's violations say
 * whether one overlapped a new command; this says it survived). FROM: the
 * escapers logged before the episode. */
static void check_escapers(struct soak *s, int from)
{
	pid_t pids[2048];
	int n = escapers(s, pids, 2048);

	for (int i = from; i < n && i < 2048; i++)
		if (is_escaper(pids[i])) {
			fail(s, "escape: escaper %d survived its leaderrun", (int)pids[i]);
			kill(pids[i], SIGKILL);
		}
}

/* How long ago the holders' last renew was (the longest of them, -S),
 * by the server's clock, in ms; 0 if the row cannot be read. */
static int64_t renew_phase_ms(struct soak *s)
{
	char out[64];

	if (sql(s,
		"SELECT COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, renewed_at, UTC_TIMESTAMP(6))), 0) DIV 1000 FROM "
		"leaderrun_lease WHERE name='" LEASE "' AND expires_at > UTC_TIMESTAMP(6)",
		out, sizeof(out)) != 0)
		return 0;
	return strtoll(out, NULL, 10);
}

/* ---- Fenced writes (LR_FENCED_JOB) ---- */

/* The server's wall clock in µs at the moment of the call (SYSDATE, not
 * NOW: in a procedure NOW is the CALL's start). */
#define SOAK_NOW_US "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)"

/* The job's tables, its procedures and its own account (soakjob, which may
 * only call them, and which the contenders name to the fence with
 * --fence-user: its session's account, whatever the procedure's
 * definer). soak_write opens the transaction, fences and writes in one
 * statement, so that a statement delivered late is the whole fence; a
 * refusal is recorded in a MyISAM table, which the job's rollback leaves
 * alone. soak_commit stamps the row and commits in one statement too: the
 * stamp is the commit's time, not the time of some statement before it. */
static void fence_setup(struct soak *s)
{
	static const char ddl[] =
	    "CREATE TABLE soak_rows (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL, "
	    "conn BIGINT UNSIGNED NOT NULL, written_us BIGINT NOT NULL, committed_us BIGINT NULL) ENGINE=InnoDB;\n"
	    "CREATE TABLE soak_refused (term BIGINT UNSIGNED NOT NULL, conn BIGINT UNSIGNED NOT NULL, "
	    "at_us BIGINT NOT NULL) ENGINE=MyISAM;\n"
	    "CREATE TABLE soak_starts (term BIGINT UNSIGNED PRIMARY KEY, start_us BIGINT NOT NULL) ENGINE=InnoDB;\n"
	    "DELIMITER ;;\n"
	    "CREATE PROCEDURE soak_write(IN p_lease VARCHAR(191), IN p_term BIGINT UNSIGNED)\n"
	    "BEGIN\n"
	    "  DECLARE EXIT HANDLER FOR SQLSTATE '45000' BEGIN\n"
	    "    INSERT INTO soak_refused VALUES (p_term, CONNECTION_ID(), " SOAK_NOW_US ");\n"
	    "    RESIGNAL;\n"
	    "  END;\n"
	    "  START TRANSACTION;\n"
	    "  CALL leaderrun_fence(p_lease, p_term);\n"
	    "  INSERT INTO soak_rows (term, conn, written_us) VALUES (p_term, CONNECTION_ID(), " SOAK_NOW_US ");\n"
	    "  SET @soak_row = LAST_INSERT_ID();\n"
	    "END;;\n"
	    "CREATE PROCEDURE soak_commit()\n"
	    "BEGIN\n"
	    "  UPDATE soak_rows SET committed_us = " SOAK_NOW_US " WHERE id = @soak_row;\n"
	    "  COMMIT;\n"
	    "END;;\n"
	    "DELIMITER ;\n";
	char hosts[1024], q[1024];

	if (sql(s, ddl, NULL, 0) != 0 ||
	    sql(s, "SELECT host FROM mysql.user WHERE user='leaderrun'", hosts, sizeof(hosts)) != 0 || !hosts[0]) {
		fprintf(stderr, "soak: cannot make the fenced job's tables, procedures or account\n");
		exit(2);
	}
	/* The account, from wherever leaderrun's may connect. */
	for (char *save = NULL, *host = strtok_r(hosts, "\n", &save); host; host = strtok_r(NULL, "\n", &save)) {
		snprintf(q, sizeof(q),
			 "CREATE USER IF NOT EXISTS 'soakjob'@'%s' IDENTIFIED BY 'soakjob'; GRANT EXECUTE ON PROCEDURE "
			 "soak_write TO 'soakjob'@'%s'; GRANT EXECUTE ON PROCEDURE soak_commit TO 'soakjob'@'%s'",
			 host, host, host);
		if (sql(s, q, NULL, 0) != 0) {
			fprintf(stderr, "soak: cannot make the fenced job's account soakjob@%s\n", host);
			exit(2);
		}
	}
}

/* Waits up to TIMEOUT_MS until a job's session has its transaction open
 * (OPEN), or is between two (connected, no transaction). */
static bool wait_job_tx(struct soak *s, bool open, int timeout_ms)
{
	const char *q =
	    open ? "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST "
		   "p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = 'soakjob'"
		 : "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'soakjob' AND COMMAND = "
		   "'Sleep' AND ID NOT IN (SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX)";
	int64_t end = procs_now_ms() + timeout_ms;
	char out[64];

	for (;;) {
		if (sql(s, q, out, sizeof(out)) == 0 && atoi(out) > 0)
			return true;
		if (procs_now_ms() >= end)
			return false;
		procs_sleep_ms(20);
	}
}

/* The cut and late faults: the holder's proxy in MODE (late: delayed
 * beyond the ttl) while its job's transaction is open, or for late at
 * random between two. The fault lasts until a newer command has started:
 * a close reaching the server earlier would end the session itself, and
 * the takeover would have nothing to wait for. */
static void fence_fault(struct soak *s, int h, enum fault f, unsigned long long term, int64_t *t0)
{
	bool open = f == F_CUT || rnd(s) % 2, found = wait_job_tx(s, open, 5000);

	printf("soak: %s with the job %s%s\n", fault_names[f], open ? "in a transaction" : "between transactions",
	       found ? "" : " (not seen in 5 s: at once)");
	fflush(stdout);
	/* The failover is timed from the fault, not from the wait. */
	*t0 = procs_now_ms();
	proxy_set_delay(s->c[h].proxy, s->ttl_ms + 2000);
	proxy_set_mode(s->c[h].proxy, f == F_CUT ? PROXY_CUT : PROXY_DELAY);
	expect_exit(s, h, 76, fault_names[f]);
	wait_new_start(s, term, s->ttl_ms * 4 + 15000);
	proxy_set_mode(s->c[h].proxy, PROXY_PASS);
	restart(s, h);
}

static long fence_count(struct soak *s, const char *q)
{
	char out[64];

	if (sql(s, q, out, sizeof(out)) != 0) {
		fail(s, "fenced writes: cannot read back: %s", q);
		return -1;
	}
	return atol(out);
}

/* The terms' start times (fenced-job.sh's began lines, ns, by the real
 * clock) into soak_starts. */
static void fence_load_starts(struct soak *s)
{
	size_t cap = 1 << 16, len;
	char *q = malloc(cap), line[256], path[340];
	FILE *f;

	snprintf(path, sizeof(path), "%s/began.log", s->dir);
	f = fopen(path, "r");
	if (!q || !f) {
		fail(s, "fenced writes: cannot read %s", path);
		free(q);
		if (f)
			fclose(f);
		return;
	}
	len = (size_t)snprintf(q, cap, "INSERT IGNORE INTO soak_starts VALUES (0, 0)");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long term;
		long long ns;
		if (sscanf(line, "began %llu %lld", &term, &ns) != 2)
			continue;
		if (len + 64 > cap && !(q = realloc(q, cap *= 2)))
			break;
		len += (size_t)snprintf(q + len, cap - len, ",(%llu,%lld)", term, ns / 1000);
	}
	fclose(f);
	if (!q || sql(s, q, NULL, 0) != 0)
		fail(s, "fenced writes: cannot load the terms' start times");
	free(q);
}

/* leaderrun's own word for a session it ended at a takeover. */
static long fence_ended(struct soak *s)
{
	char path[340], line[1024];
	long n = 0;

	for (int i = 0; i < s->ncont; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/contender%d.err", s->dir, i);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			n += strstr(line, "ended session ") != NULL;
		fclose(f);
	}
	return n;
}

/* The episode that faulted TERM, else the one under way at US (wall
 * clock), or -1. A stale commit can land in the episode after its own. */
static int fence_episode_of(const struct soak *s, unsigned long long term, int64_t us)
{
	int e = -1;

	for (int k = 0; k < s->st.episodes && k < 4096; k++)
		if (s->st.ep_term[k] == term)
			return k;
	for (int k = 0; k < s->st.episodes && k < 4096; k++)
		if (s->st.ep_us[k] <= us)
			e = k;
	return e;
}

/* The checker: every committed row read back against the terms' start
 * times; a row of a term committed after a newer term's command began is a
 * stale commit. Each is named with the episode it fell in. */
static void fence_check(struct soak *s)
{
	char out[4096];

	fence_load_starts(s);
	s->st.fenced_committed = fence_count(s, "SELECT COUNT(*) FROM soak_rows WHERE committed_us IS NOT NULL");
	s->st.fenced_refused = fence_count(s, "SELECT COUNT(*) FROM soak_refused");
	s->st.fenced_ended = fence_ended(s);
	s->st.fenced_stale = fence_count(s, "SELECT COUNT(*) FROM soak_rows r WHERE r.committed_us > (SELECT "
					    "MIN(t.start_us) FROM soak_starts t WHERE t.term > r.term)");
	if (s->st.fenced_stale <= 0)
		return;
	fail(s, "fenced writes: %ld rows of an older term committed after a newer term's command began",
	     s->st.fenced_stale);
	if (sql(s,
		"SELECT r.term, r.committed_us, MIN(t.term), MIN(t.start_us) FROM soak_rows r JOIN soak_starts t ON "
		"t.term > r.term AND t.start_us < r.committed_us GROUP BY r.id ORDER BY r.id LIMIT 20",
		out, sizeof(out)) != 0)
		return;
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long term, newer;
		long long at, began;
		int e;
		if (sscanf(l, "%llu %lld %llu %lld", &term, &at, &newer, &began) != 4)
			continue;
		e = fence_episode_of(s, term, at);
		fprintf(stderr,
			"soak: stale commit: a row of term %llu committed %lld ms after term %llu's command began "
			"(episode %d, %s)\n",
			term, (at - began) / 1000, newer, e + 1,
			e >= 0 ? fault_names[s->st.ep_fault[e]] : "before any");
		if (e >= 0 && !s->st.ep_failed[e]) {
			s->st.ep_failed[e] = true;
			s->st.failed_episodes++;
		}
	}
}

/* -V: the service of contender I (service.sh leaves DIR/service.PID
 * holding "PID LEADERRUN_PID"), or 0. */
static pid_t service_of(struct soak *s, int i)
{
	char cmd[512], out[64] = "";
	FILE *f;

	/* The live one: pids wrap, and a dead service's file may name an
	 * older leaderrun of the same pid. */
	snprintf(
	    cmd, sizeof(cmd),
	    "for f in $(grep -l ' %d$' %s/service.* 2>/dev/null); do p=${f##*.}; kill -0 $p 2>/dev/null && echo $p; "
	    "done | tail -1",
	    (int)s->c[i].pid, s->dir);
	if (!(f = popen(cmd, "r")))
		return 0;
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	return (pid_t)strtol(out, NULL, 10);
}

/* -V: the hooks, with the flag files that make them fail (the next
 * promote exits 1) or hang (the demote sleeps past the grace). */
static void service_hooks(struct soak *s)
{
	/* The leader's work starts first, in the background (service.sh
	 * worker): a promote that fails after it leaves it to the demote. */
	snprintf(s->promote, sizeof(s->promote),
		 "d=%s; p=$LEADERRUN_SERVICE_PID; %s worker %s $d $LEADERRUN_TERM & "
		 "if [ -e $d/failpromote.$p ]; then rm -f $d/failpromote.$p; exit 1; fi; "
		 "echo $LEADERRUN_TERM > $d/term.$p; kill -USR1 $p; while [ ! -e $d/led.$p ]; do sleep 0.01; done",
		 s->dir, s->service, s->log);
	snprintf(s->demote, sizeof(s->demote),
		 "d=%s; p=$LEADERRUN_SERVICE_PID; if [ -e $d/hang.$p ]; then sleep 3600; fi; "
		 "kill -USR2 $p; while [ -e $d/led.$p ]; do sleep 0.01; done",
		 s->dir);
}

/* -V: no promote's worker outlives its term: no line of DIR/work.log
 * (service.sh worker: "work TERM NS PID", every 20 ms while it lives) is
 * stamped after a newer term's start in the probe's log; and none lives
 * once every contender has exited. Returns the lines that were, with the
 * largest lead in *LATE_MS; *LINES: the lines read. */
static int workers_check(struct soak *s, long *lines, long long *late_ms)
{
	char path[400], line[256], cmd[600];
	unsigned long long *terms = NULL, t;
	long long *ns = NULL, at;
	size_t n = 0, cap = 0;
	int late = 0, pid;
	FILE *f = fopen(s->log, "r");

	*lines = 0;
	*late_ms = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "start %llu %lld", &t, &at) == 2) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				terms = realloc(terms, cap * sizeof(*terms));
				ns = realloc(ns, cap * sizeof(*ns));
			}
			terms[n] = t;
			ns[n++] = at;
		}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/work.log", s->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "work %llu %lld %d", &t, &at, &pid) != 3)
			continue;
		(*lines)++;
		/* Terms grow down the log: the first start of a newer term. */
		for (size_t i = 0; i < n; i++)
			if (terms[i] > t) {
				if (at > ns[i]) {
					late++;
					if ((at - ns[i]) / 1000000 > *late_ms)
						*late_ms = (at - ns[i]) / 1000000;
				}
				break;
			}
	}
	if (f)
		fclose(f);
	free(terms);
	free(ns);
	if (late)
		fail(s, "a promote's worker worked after a newer term began: %d lines, by up to %lld ms", late,
		     *late_ms);
	snprintf(cmd, sizeof(cmd),
		 "for f in %s/worker.*; do p=${f##*.}; grep -qa worker /proc/$p/cmdline 2>/dev/null && "
		 "! grep -q '^State:.Z' /proc/$p/status && exit 1; done; exit 0",
		 s->dir);
	if (soak_run_quiet((char *[]){"/bin/sh", "-c", cmd, NULL}, NULL) != 0)
		fail(s, "a promote's worker outlived every contender");
	return late;
}

/* -V: touches DIR/NAME.PID. */
static void service_flag(struct soak *s, const char *name, pid_t pid)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%d", s->dir, name, (int)pid);
	if ((f = fopen(path, "w")))
		fclose(f);
}

/* -V: after a failpromote episode, the flags no promote took (another
 * contender led first): left, they would fail a later episode's promote,
 * a switch-over's chosen standby's say, moments after it took the lease. */
static void service_unflag_promotes(struct soak *s, int h, const pid_t *svc)
{
	char path[400];

	for (int i = 0; i < s->ncont; i++)
		if (i != h && svc[i] > 0) {
			snprintf(path, sizeof(path), "%s/failpromote.%d", s->dir, (int)svc[i]);
			unlink(path);
		}
}

/* -V: one fault on the service's leader H (a standby's promote for
 * failpromote); what must follow: another term leads, the leader's exit
 * where the fault ends its run (restarted then), and every standby keeps
 * its service (preempt and switchover: the old leader's too, standing
 * by; the preemptor's is new, started again twice). */
static void episode_service(struct soak *s, int h, enum fault f, const struct probe_state *before, int64_t t0)
{
	pid_t svc[MAX_CONTENDERS];
	int other = (h + 1) % s->ncont, st, w = -1;
	bool handover = f == F_PREEMPT || f == F_SWITCHOVER;
	int64_t t1 = -1;

	/* Every contender runs, each with its service: one that ended on
	 * its own (a standby that lost its service, say) is a failure. */
	for (int i = 0; i < s->ncont; i++) {
		if ((st = contender_status(s, i, 0)) >= 0) {
			fail(s, "contender %d (%d) ended on its own with status %d", i, (int)s->c[i].pid, st);
			restart(s, i);
		}
		svc[i] = service_of(s, i);
	}
	switch (f) {
	case F_KILL9:
		/* Its watcher kills the service, hook and all. */
		kill(s->c[h].pid, SIGKILL);
		contender_status(s, h, 5000);
		restart(s, h);
		break;
	case F_FREEZE:
	case F_STOPLR:
		/* Frozen past the deadline: the watcher kills the service;
		 * thawed, leaderrun finds it gone and ends (its status). */
		kill(s->c[h].pid, SIGSTOP);
		procs_sleep_ms(s->ttl_ms + 1000);
		kill(s->c[h].pid, SIGCONT);
		if (contender_status(s, h, s->ttl_ms * 3 + 5000) < 0) {
			fail(s, "%s: leader %d did not end after its service was killed", fault_names[f],
			     (int)s->c[h].pid);
			kill(s->c[h].pid, SIGKILL);
			contender_status(s, h, 5000);
		}
		restart(s, h);
		break;
	case F_BLACKHOLE:
		/* Cut off: its renews fail, it demotes in time and stands by. */
		proxy_set_mode(s->c[h].proxy, PROXY_BLACKHOLE);
		wait_new_start(s, before->last_term, s->ttl_ms * 4 + 15000);
		proxy_set_mode(s->c[h].proxy, PROXY_PASS);
		if ((st = contender_status(s, h, 0)) >= 0) {
			fail(s, "blackhole: the cut-off leader exited %d instead of standing by", st);
			restart(s, h);
		}
		break;
	case F_RELEASE:
		operator_release(s, 0);
		break;
	case F_HANGDEMOTE:
		service_flag(s, "hang", svc[h]);
		operator_release(s, 0);
		expect_exit(s, h, 76, fault_names[f]);
		s->st.demotes_killed++;
		restart(s, h);
		break;
	case F_FAILPROMOTE:
		/* Every standby's next promote fails once: the lease still
		 * finds a leader. */
		for (int i = 0; i < s->ncont; i++)
			if (i != h && svc[i] > 0)
				service_flag(s, "failpromote", svc[i]);
		s->st.promotes_failed++;
		operator_release(s, 0);
		break;
	case F_PREEMPT:
		/* The preemptor starts again twice: a new service. */
		t1 = preempt(s, h, before, svc[h], &w);
		svc[w] = 0;
		break;
	case F_SWITCHOVER:
		t1 = switchover(s, h, before, svc[h], &t0);
		break;
	default:
		break;
	}
	if (!handover)
		t1 = wait_new_start(s, before->last_term, s->ttl_ms * 4 + 20000);
	if (f == F_FAILPROMOTE)
		service_unflag_promotes(s, h, svc);
	if (t1 < 0) {
		if (!handover) /* preempt and switchover said why */
			fail(s, "%s: no instance led again", fault_names[f]);
	} else if (s->st.nfailover < (int)(sizeof(s->st.failover_ms) / sizeof(s->st.failover_ms[0]))) {
		s->st.takeovers++;
		s->st.failover_ms[s->st.nfailover++] = t1 - t0;
	}
	/* Every other contender stands by again, competing: alive in the
	 * standbys' table (a standby stuck after its term would leave the
	 * lease to one contender alone; the soak once ran so for minutes). */
	{
		int64_t end = procs_now_ms() + s->ttl_ms * 3 + 10000;
		char out[64] = "";
		for (;;) {
			if (sql(s,
				"SELECT COUNT(*) FROM leaderrun_standby sb WHERE sb.lease='" LEASE
				"' AND IS_USED_LOCK(sb.lock_name) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
				"leaderrun_lease l WHERE l.name=sb.lease AND l.holder=sb.holder AND l.expires_at > "
				"UTC_TIMESTAMP(6))",
				out, sizeof(out)) == 0 &&
			    atoi(out) >= s->ncont - 1)
				break;
			if (procs_now_ms() >= end) {
				fail(s, "%s: %s of %d standbys compete again", fault_names[f], out, s->ncont - 1);
				break;
			}
			procs_sleep_ms(100);
		}
	}
	/* A standby's service never restarts for a change of leader (nor,
	 * preempted or switched over, the old leader's: it stands by). */
	for (int i = 0; i < s->ncont; i++)
		if ((i != h || handover) && svc[i] > 0 && !procs_alive(svc[i])) {
			s->st.standby_restarts++;
			fail(s, "%s: standby %d's service %d did not survive", fault_names[f], i, (int)svc[i]);
		}
	(void)other;
}

static void episode(struct soak *s)
{
	int hold[MAX_SLOTS] = {0}, hs = 0; /* -S: the contender in each slot; the slot faulted */
	int h = s->slots ? (slot_holders(s, s->ttl_ms * 4 + 10000, hold) == 0 ? 0 : -1)
			 : current_holder(s, s->ttl_ms * 4 + 10000);
	/* Without root no partition: pick again rather than skew the mix. */
	enum fault f;
	do
		f = s->service	? service_faults[rnd(s) % (sizeof(service_faults) / sizeof(service_faults[0]))]
		    : s->galera ? galera_faults[rnd(s) % (sizeof(galera_faults) / sizeof(galera_faults[0]))]
				: single_faults[rnd(s) % (sizeof(single_faults) / sizeof(single_faults[0]))];
	while ((f == F_NODEPART && !s->root) || ((f == F_ESCAPE || f == F_PREEMPT || f == F_SWITCHOVER) && s->slots) ||
	       ((f == F_CUT || f == F_LATE) && !s->fenced_job) || (s->only >= 0 && f != (enum fault)s->only));
	struct probe_state before;
	int64_t t0, t1, outage_ms = 0, phase_ms = 0;
	int failures_before, restarts_before, escapers_before;
	pid_t command;

	if (h < 0) {
		/* Counted, or a soak of N episodes would never end. */
		if (s->st.episodes < 4096)
			s->st.ep_failed[s->st.episodes] = true;
		s->st.episodes++;
		s->st.failed_episodes++;
		if (s->slots)
			fail(s, "not all %d slots are held", s->slots);
		else
			fail(s, "nobody holds the lease");
		return;
	}
	if (s->slots) {
		/* One of the holders, at random. */
		hs = (int)(rnd(s) % (uint64_t)s->slots);
		h = hold[hs];
	}
	before = probe_read(s);
	escapers_before = escapers(s, NULL, 0);
	command = s->slots ? before.slot[hs].pid : before.last_pid;
	restarts_before = s->c[h].restarts;
	failures_before = s->st.failures;
	if (s->st.episodes < 4096) {
		struct timespec now;
		/* The wall clock: compared with the server's stamps. */
		clock_gettime(CLOCK_REALTIME, &now);
		s->st.ep_us[s->st.episodes] = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
		s->st.ep_fault[s->st.episodes] = (unsigned char)f;
		s->st.ep_term[s->st.episodes] = s->slots ? 0 : before.last_term;
	}
	s->st.episodes++;
	s->st.per_fault[f]++;
	if (s->slots)
		printf("soak: episode %d: %s on contender %d (slot %d, term %llu)\n", s->st.episodes, fault_names[f], h,
		       hs, before.slot[hs].term);
	else
		printf("soak: episode %d: %s on contender %d (term %llu)\n", s->st.episodes, fault_names[f], h,
		       before.last_term);

	fflush(stdout);
	t0 = procs_now_ms();

	if (s->service) {
		episode_service(s, h, f, &before, t0);
		goto checks;
	}
	switch (f) {
	case F_KILL9:
		kill(s->c[h].pid, SIGKILL);
		contender_status(s, h, 5000);
		start_contender(s, h);
		break;
	case F_BLACKHOLE:
	case F_NOREPLY:
	case F_SLOW:
		proxy_set_delay(s->c[h].proxy, s->ttl_ms / 4);
		proxy_set_mode(s->c[h].proxy, f == F_BLACKHOLE ? PROXY_BLACKHOLE
					      : f == F_NOREPLY ? PROXY_DROP_REPLIES
							       : PROXY_DELAY);
		expect_exit(s, h, 76, fault_names[f]);
		proxy_set_mode(s->c[h].proxy, PROXY_PASS);
		restart(s, h);
		break;
	case F_KILLCONN: {
		char ids[4096], q[8192];
		size_t len = 0;
		sql(s, "SELECT id FROM information_schema.PROCESSLIST WHERE USER='leaderrun'", ids, sizeof(ids));
		q[0] = '\0';
		for (char *save = NULL, *id = strtok_r(ids, "\n", &save); id; id = strtok_r(NULL, "\n", &save))
			len += (size_t)snprintf(q + len, sizeof(q) - len, "KILL CONNECTION %s;", id);
		if (len)
			sql(s, q, NULL, 0);
		procs_sleep_ms(s->ttl_ms);
		break;
	}
	case F_DBSHORT:
		phase_ms = renew_phase_ms(s);
		sandbox(s, "kill");
		procs_sleep_ms(100);
		sandbox(s, "restart");
		outage_ms = procs_now_ms() - t0;
		procs_sleep_ms(s->ttl_ms);
		break;
	case F_DBLONG:
		sandbox(s, "kill");
		expect_exit(s, h, 76, fault_names[f]);
		/* -S: every holder loses its slot. */
		for (int k = 0; k < s->slots; k++)
			if (k != hs)
				expect_exit(s, hold[k], 76, fault_names[f]);
		procs_sleep_ms(s->ttl_ms / 2);
		sandbox(s, "restart");
		restart(s, h);
		for (int k = 0; k < s->slots; k++)
			if (k != hs)
				restart(s, hold[k]);
		break;
	case F_FREEZE:
		kill(s->c[h].pid, SIGSTOP);
		kill(-command, SIGSTOP);
		procs_sleep_ms(s->ttl_ms + 1000);
		t1 = procs_now_ms();
		kill(-command, SIGCONT);
		kill(s->c[h].pid, SIGCONT);
		while (procs_alive(command) && procs_now_ms() - t1 < 5000)
			procs_sleep_ms(1);
		if (procs_now_ms() - t1 > s->st.max_stale_ms)
			s->st.max_stale_ms = procs_now_ms() - t1;
		expect_exit(s, h, 76, fault_names[f]);
		restart(s, h);
		break;
	case F_STOPLR:
		kill(s->c[h].pid, SIGSTOP);
		procs_sleep_ms(s->ttl_ms + 1000);
		kill(s->c[h].pid, SIGCONT);
		expect_exit(s, h, 76, fault_names[f]);
		restart(s, h);
		break;
	case F_NODEKILL:
	case F_NODEPART: {
		/* Long enough for the cluster to drop the node (evs.suspect_
		 * timeout) and for a stalled holder to run out of lease. */
		int moves_before, moves_after, st, node = holder_node(s, h, &moves_before);
		if (!node) {
			fail(s, "%s: cannot tell which node contender %d uses", fault_names[f], h);
			break;
		}
		cluster(s, f == F_NODEKILL ? "kill" : "partition", node);
		st = contender_status(s, h, s->ttl_ms + 8000);
		cluster(s, f == F_NODEKILL ? "restart" : "heal", node);
		if (st < 0 && probe_read(s).last_term == before.last_term) {
			/* Its node was gone: it can only have renewed elsewhere. */
			holder_node(s, h, &moves_after);
			if (moves_after == moves_before)
				fail(s, "%s: the holder kept its lease but never left node %d", fault_names[f], node);
			s->st.kept++;
			break;
		}
		if (st < 0)
			st = contender_status(s, h, s->ttl_ms * 3 + 5000);
		if (st != 76)
			fail(s, "%s: holder %d exited %d, want 76 or to keep its lease", fault_names[f],
			     (int)s->c[h].pid, st);
		s->st.lost++;
		restart(s, h);
		break;
	}
	case F_RELEASE:
		operator_release(s, hs);
		expect_exit(s, h, 76, fault_names[f]);
		restart(s, h);
		break;
	case F_ESCAPE:
		escape(s, h);
		break;
	case F_CUT:
	case F_LATE:
		fence_fault(s, h, f, before.last_term, &t0);
		break;
	case F_HANGDEMOTE:
	case F_FAILPROMOTE:
		/* -V's alone (episode_service). */
		break;
	case F_PREEMPT: {
		int w;
		t1 = preempt(s, h, &before, 0, &w);
		break;
	}
	case F_SWITCHOVER:
		t1 = switchover(s, h, &before, 0, &t0);
		break;
	case F_CLOCKRATE: {
		static const char *const rates[] = {"+0 x0.9", "+0 x0.95", "+0 x1.05", "+0 x1.1"};
		if (!s->faketime_lib) {
			fail(s, "clockrate: libfaketime is not installed (scripts/install-deps test)");
			break;
		}
		kill(s->c[h].pid, SIGTERM);
		/* The probe dies of the forwarded SIGTERM: 128 + 15. */
		expect_exit(s, h, 143, fault_names[f]);
		snprintf(s->c[h].faketime, sizeof(s->c[h].faketime), "%s", rates[rnd(s) % 4]);
		printf("soak: contender %d now runs at %s\n", h, s->c[h].faketime);
		restart(s, h);
		break;
	}
	case F_DBHINT:
		if (!wait_hint_blocked(s, s->ttl_ms * 3)) {
			fail(s, "dbhint: no follower blocked on the hint within %d ms", s->ttl_ms * 3);
			break;
		}
		phase_ms = renew_phase_ms(s);
		sandbox(s, "kill");
		procs_sleep_ms(100);
		sandbox(s, "restart");
		outage_ms = procs_now_ms() - t0;
		s->st.hint_restarts++;
		if (wait_hint_blocked(s, s->ttl_ms * 3))
			s->st.hint_back++;
		break;
	case F_COUNT:
		break;
	}

	/* Outcomes. */
	if (f == F_PREEMPT || f == F_SWITCHOVER) {
		/* Checked as they went: the takeover is the preemptor's, or the
		 * named standby's. */
		if (t1 >= 0 && s->st.nfailover < (int)(sizeof(s->st.failover_ms) / sizeof(s->st.failover_ms[0]))) {
			s->st.takeovers++;
			s->st.failover_ms[s->st.nfailover++] = t1 - t0;
		}
	} else if ((f == F_NODEKILL || f == F_NODEPART) && s->c[h].restarts == restarts_before) {
		/* Kept through another node: the same command still runs. */
		if (!procs_alive(command))
			fail(s, "%s: the holder kept its lease but its command %d is gone", fault_names[f],
			     (int)command);
	} else if (f == F_KILLCONN || f == F_DBSHORT || f == F_DBHINT) {
		struct probe_state p = probe_read(s);
		/* The promise: the command is not disturbed as long as a renew
		 * succeeds within ttl - margin - grace (55% of the ttl with the
		 * defaults) of the last successful one. The outage began
		 * PHASE_MS after that renew (up to a renew interval), so it may
		 * last that much less, and one retry step (1/30 of the ttl) and a
		 * round trip less again. A restart that a loaded machine made
		 * slower is no such outage. (The budget once left the phase out:
		 * an outage of 733 ms, 0.9 s after a renew, stopped the command
		 * rightly, and the check failed.) */
		int64_t budget = s->ttl_ms * 55 / 100 - phase_ms - s->ttl_ms / 30 - 20;
		/* -S: the same per slot; every holder went through the outage. A
		 * KILL of the sessions is no outage at all: note a slot that
		 * changed hands, and put its holder back. */
		for (int k = 0; k < s->slots; k++) {
			if (p.slot[k].term == before.slot[k].term)
				continue;
			if (f == F_KILLCONN)
				printf("soak: killconn: slot %d went from term %llu to %llu\n", k, before.slot[k].term,
				       p.slot[k].term);
			else if (outage_ms < budget)
				fail(s,
				     "%s: an outage of %lld ms (budget %lld ms) disturbed slot %d's command (term "
				     "%llu -> %llu)",
				     fault_names[f], (long long)outage_ms, (long long)budget, k, before.slot[k].term,
				     p.slot[k].term);
			else
				printf("soak: %s took %lld ms, over the %lld ms budget: a long outage after all\n",
				       fault_names[f], (long long)outage_ms, (long long)budget);
			expect_exit(s, hold[k], 76, fault_names[f]);
			restart(s, hold[k]);
		}
		if (!s->slots && (f == F_DBSHORT || f == F_DBHINT) && p.last_term != before.last_term) {
			if (outage_ms < budget)
				fail(s,
				     "%s: an outage of %lld ms (budget %lld ms) disturbed the command (term %llu "
				     "-> %llu)",
				     fault_names[f], (long long)outage_ms, (long long)budget, before.last_term,
				     p.last_term);
			else
				printf("soak: %s took %lld ms, over the %lld ms budget: a long outage after all\n",
				       fault_names[f], (long long)outage_ms, (long long)budget);
			/* Either way the holder stopped: it must have said 76. */
			expect_exit(s, h, 76, fault_names[f]);
			restart(s, h);
		}
	} else if (s->slots) {
		check_slots_after(s, f, &before, hs, f == F_DBLONG, t0);
	} else {
		t1 = wait_new_start(s, before.last_term, s->ttl_ms * 4 + 15000);
		if (t1 < 0)
			fail(s, "%s: the lease was never acquired again", fault_names[f]);
		else if (s->st.nfailover < (int)(sizeof(s->st.failover_ms) / sizeof(s->st.failover_ms[0]))) {
			s->st.takeovers++;
			s->st.failover_ms[s->st.nfailover++] = t1 - t0;
		}
		if (command > 0 && procs_alive(command))
			fail(s, "%s: the old command %d survived", fault_names[f], (int)command);
	}
checks : {
	struct probe_state p = probe_read(s);
	if (p.violations)
		fail(s, "%s: overlap: %d violations in the probe log", fault_names[f], p.violations);
	if (!p.terms_grew)
		fail(s, "%s: a term did not grow", fault_names[f]);
	if (p.bad_starts)
		fail(s, "%s: %d commands started without a slot and a seat in 0..%d", fault_names[f], p.bad_starts,
		     s->slots - 1);
}
	check_escapers(s, escapers_before);
	if (s->st.failures > failures_before) {
		s->st.failed_episodes++;
		if (s->st.episodes <= 4096)
			s->st.ep_failed[s->st.episodes - 1] = true;
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void set_setting(void *ctx, const char *name, const char *val)
{
	struct soak *s = ctx;

	if (!strcmp(name, "LR_DB_SOCKET"))
		snprintf(s->socket, sizeof(s->socket), "%s", val);
	else if (!strcmp(name, "LR_DB_PORT"))
		snprintf(s->port, sizeof(s->port), "%s", val);
	else if (!strcmp(name, "LR_DB_USER"))
		snprintf(s->user, sizeof(s->user), "%s", val);
	else if (!strcmp(name, "LR_DB_PASSWORD"))
		snprintf(s->password, sizeof(s->password), "%s", val);
	else if (!strcmp(name, "LR_DB_NAME"))
		snprintf(s->dbname, sizeof(s->dbname), "%s", val);
	else if (!strcmp(name, "LR_GALERA_SOCKETS") || !strcmp(name, "LR_GR_SOCKETS"))
		/* Root's SQL goes to node 1, which every episode starts with. */
		snprintf(s->socket, sizeof(s->socket), "%.*s", (int)strcspn(val, " "), val);
	else if (!strcmp(name, "LR_GALERA_PORTS") || !strcmp(name, "LR_GR_PORTS"))
		sscanf(val, "%d %d %d", &s->node_port[0], &s->node_port[1], &s->node_port[2]);
}

static void load_env(struct soak *s)
{
	char path[340];

	snprintf(path, sizeof(path), "%s/env", s->dbdir);
	if (procs_load_env(path, set_setting, s) < 0) {
		perror(path);
		exit(2);
	}
}

int main(int argc, char *argv[])
{
	struct soak s;
	int episodes = 0, duration_s = 0, opt, rc, workers_late = 0;
	long work_lines = 0;
	long long work_late_ms = 0;
	unsigned long long seed = 0;
	int64_t start;
	bool ncont_given = false, slots_given = false;

	memset(&s, 0, sizeof(s));
	s.ncont = 3;
	s.ttl_ms = 0;
	s.only = -1;
	while ((opt = getopt(argc, argv, "gGVe:d:n:t:s:S:f:h")) != -1) {
		switch (opt) {
		case 'f':
			for (int k = 0; k < F_COUNT; k++)
				if (strcmp(optarg, fault_names[k]) == 0)
					s.only = k;
			if (s.only < 0) {
				fprintf(stderr, "soak: -f: no fault named '%s'\n", optarg);
				return 64;
			}
			break;
		case 'g':
			s.galera = true;
			break;
		case 'G':
			s.galera = s.gr = true;
			break;
		case 'e':
			episodes = atoi(optarg);
			break;
		case 'd':
			duration_s = atoi(optarg);
			break;
		case 'n':
			s.ncont = atoi(optarg);
			ncont_given = true;
			break;
		case 'S':
			s.slots = atoi(optarg);
			slots_given = true;
			break;
		case 't':
			s.ttl_ms = atoi(optarg);
			break;
		case 'V':
			s.service = getenv("LR_SERVICE");
			if (!s.service) {
				fprintf(stderr, "soak: -V needs LR_SERVICE (use scripts/soak --service)\n");
				return 64;
			}
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr,
				"usage: soak [-g | -G | -S SLOTS] [-e EPISODES] [-d SECONDS] [-n CONTENDERS 2-5] "
				"[-t TTL_MS] [-s SEED] [-f FAULT]\n"
				"  -f FAULT  inject only FAULT (one of the mode's, as named above)\n"
				"  -S SLOTS  the contenders run with --slots SLOTS (1-%d; SLOTS+1 contenders\n"
				"            unless -n says more), and every check holds per slot\n",
				MAX_SLOTS);
			return opt == 'h' ? 0 : 64;
		}
	}
	if (slots_given) {
		/* One contender waits at least: a freed slot is always taken
		 * over by someone else, as a freed lease is. */
		if (!ncont_given)
			s.ncont = s.slots + 1;
		if (s.slots < 1 || s.slots > MAX_SLOTS || s.ncont <= s.slots || s.galera) {
			fprintf(stderr, "soak: -S needs 1-%d slots, more contenders than slots, and no -g\n",
				MAX_SLOTS);
			return 64;
		}
	}
	/* On Galera the default ttl leaves room for a membership change
	 * (evs.suspect_timeout 5 s + a renew interval). */
	if (!s.ttl_ms)
		s.ttl_ms = s.galera ? 15000 : 3000;
	if (s.ncont < 2 || s.ncont > MAX_CONTENDERS || s.ttl_ms < 500 || (!episodes && !duration_s)) {
		fprintf(stderr, "soak: need -e or -d, 2-5 contenders and a ttl of at least 500 ms\n");
		return 64;
	}
	s.bin = getenv("LEADERRUN_BIN");
	s.sandbox = getenv(s.gr ? "LR_SANDBOX_GR" : s.galera ? "LR_SANDBOX_GALERA" : "LR_SANDBOX");
	s.root = geteuid() == 0;
	s.probe = getenv("LR_PROBE");
	s.slot_probe = getenv("LR_SLOT_PROBE");
	/* Fenced writes on one server: the slots' and the clusters' jobs are
	 * the probes alone. */
	s.fenced_job = s.slots || s.galera || s.service ? NULL : getenv("LR_FENCED_JOB");
	if ((s.only == F_PREEMPT || s.only == F_SWITCHOVER) && (s.galera || s.slots)) {
		/* Priorities need one server's named locks, and no --slots. */
		fprintf(stderr, "soak: -f %s: one server, no -S\n", fault_names[s.only]);
		return 64;
	}
	if ((s.only == F_CUT || s.only == F_LATE) && !s.fenced_job) {
		fprintf(stderr, "soak: -f %s needs fenced writes: LR_FENCED_JOB, one server, no -S\n",
			fault_names[s.only]);
		return 64;
	}
	{
		static const char *const libs[] = {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
						   "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
						   "/usr/lib/faketime/libfaketimeMT.so.1"};
		for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !s.faketime_lib; i++)
			if (access(libs[i], R_OK) == 0)
				s.faketime_lib = libs[i];
	}
	if (!s.bin || !s.sandbox || !s.probe) {
		fprintf(stderr, "soak: LEADERRUN_BIN, LR_SANDBOX%s and LR_PROBE must be set (use scripts/soak)\n",
			s.gr	   ? "_GR"
			: s.galera ? "_GALERA"
				   : "");
		return 64;
	}
	if (s.slots && !s.slot_probe) {
		fprintf(stderr, "soak: -S needs LR_SLOT_PROBE set (use scripts/soak --slots)\n");
		return 64;
	}
	s.rng = seed ? seed : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 16;
	if (!s.rng)
		s.rng = 1;
	printf("soak: seed %llu, %d contenders, ttl %d ms, %s\n", (unsigned long long)s.rng, s.ncont, s.ttl_ms,
	       s.gr	  ? "3-member Group Replication group, single-primary"
	       : s.galera ? (s.root ? "3-node Galera cluster" : "3-node Galera cluster, no partitions (not root)")
			  : "one server");
	if (s.slots)
		printf("soak: --slots %d: %d run at once, %d wait\n", s.slots, s.slots, s.ncont - s.slots);

	snprintf(s.dir, sizeof(s.dir), "/tmp/lrsoak.XXXXXX");
	if (!mkdtemp(s.dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(s.dbdir, sizeof(s.dbdir), "%s/db", s.dir);
	snprintf(s.log, sizeof(s.log), "%s/probe.log", s.dir);
	if (s.service) {
		service_hooks(&s);
		printf("soak: --service: every contender runs its service; leading is promote to demote\n");
	}
	snprintf(s.lock, sizeof(s.lock), "%s/probe.lock", s.dir);
	sandbox(&s, "start");
	load_env(&s);
	if (s.fenced_job)
		fence_setup(&s);

	for (int i = 0; i < s.ncont; i++) {
		/* Galera's faults are the nodes'; no proxies there. */
		s.c[i].proxy = s.galera ? NULL : proxy_start(atoi(s.port));
		if (!s.galera && !s.c[i].proxy) {
			fprintf(stderr, "soak: cannot start a proxy\n");
			return 2;
		}
		start_contender(&s, i);
	}

	start = procs_now_ms();
	while ((episodes && s.st.episodes < episodes) || (duration_s && procs_now_ms() - start < duration_s * 1000LL))
		episode(&s);

	/* Wind down: every contender gets SIGTERM; the holder passes it on. */
	for (int i = 0; i < s.ncont; i++)
		kill(s.c[i].pid, SIGTERM);
	for (int i = 0; i < s.ncont; i++)
		if (contender_status(&s, i, 15000) < 0) {
			fail(&s, "contender %d did not exit on SIGTERM", (int)s.c[i].pid);
			kill(s.c[i].pid, SIGKILL);
		}
	{
		struct probe_state p = probe_read(&s);
		if (p.violations)
			fail(&s, "overlap: %d violations in the probe log", p.violations);
		if (p.last_pid > 0 && procs_alive(p.last_pid))
			fail(&s, "the last command %d survived", (int)p.last_pid);
		for (int k = 0; k < s.slots; k++)
			if (p.slot[k].pid > 0 && procs_alive(p.slot[k].pid))
				fail(&s, "slot %d's last command %d survived", k, (int)p.slot[k].pid);
		if (p.bad_starts)
			fail(&s, "%d commands started without a slot and a seat in 0..%d", p.bad_starts, s.slots - 1);
	}
	if (s.fenced_job)
		fence_check(&s);
	if (s.service)
		workers_late = workers_check(&s, &work_lines, &work_late_ms);

	qsort(s.st.failover_ms, (size_t)s.st.nfailover, sizeof(int64_t), cmp64);
	printf("\n| soak | value |\n|---|---|\n");
	printf("| episodes | %d |\n", s.st.episodes);
	printf("| takeovers | %d |\n", s.st.takeovers);
	printf("| overlaps | %d |\n", probe_read(&s).violations);
	if (s.service) {
		printf(
		    "| --service: promotes (leading began) / demotes killed (76) / failed-promote faults | %d / %d / "
		    "%d |\n",
		    probe_read(&s).starts, s.st.demotes_killed, s.st.promotes_failed);
		printf("| --service: a standby's service restarted by a failover | %d |\n", s.st.standby_restarts);
		printf("| --service: promotes' workers' lines / stamped after a newer term began (max ms) | %ld / %d "
		       "(%lld) |\n",
		       work_lines, workers_late, work_late_ms);
	}
	printf("| failover median | %lld ms |\n",
	       s.st.nfailover ? (long long)s.st.failover_ms[s.st.nfailover / 2] : 0LL);
	printf("| failover max | %lld ms |\n", s.st.nfailover ? (long long)s.st.failover_ms[s.st.nfailover - 1] : 0LL);
	printf("| largest stale-command window after a thaw | %lld ms |\n", (long long)s.st.max_stale_ms);
	printf("| ttl | %d ms |\n", s.ttl_ms);
	if (s.slots) {
		struct probe_state p = probe_read(&s);
		printf("| slots | %d, %d contenders |\n", s.slots, s.ncont);
		printf("| overlaps: two commands in one slot / more than %d at once / a slot not in 0..%d | %d / %d / "
		       "%d |\n",
		       s.slots, s.slots - 1, p.doubled, p.over, p.range);
		printf("| most commands at once (seats taken) | %d |\n", p.most);
		printf("| takeovers per slot |");
		for (int k = 0; k < s.slots; k++)
			printf("%s %d: %d", k ? "," : "", k, s.st.slot_takeovers[k]);
		printf(" |\n| starts per slot |");
		for (int k = 0; k < s.slots; k++)
			printf("%s %d: %d", k ? "," : "", k, p.slot[k].starts);
		printf(" |\n");
	}
	if (s.galera)
		printf("| node faults: holder kept its lease via another node / exited 76 | %d / %d |\n", s.st.kept,
		       s.st.lost);
	if (s.st.hint_restarts)
		printf("| dbhint: a follower blocked on the hint again after the restart | %d of %d |\n",
		       s.st.hint_back, s.st.hint_restarts);
	printf("| faults |");
	for (int f = 0, first = 1; f < F_COUNT; f++)
		if (s.st.per_fault[f]) {
			printf("%s %s %d", first ? "" : ",", fault_names[f], s.st.per_fault[f]);
			first = 0;
		}
	printf(" |\n");
	if (s.fenced_job) {
		printf("| fenced writes: committed / refused stale (45000) / ended at a takeover | %ld / %ld / %ld |\n",
		       s.st.fenced_committed, s.st.fenced_refused, s.st.fenced_ended);
		printf("| fenced rows of an older term committed after a newer term's command began | %ld |\n",
		       s.st.fenced_stale);
	}
	printf("| failed checks | %d |\n", s.st.failures);

	soak_run_quiet((char *[]){(char *)s.sandbox, "stop", s.dbdir, NULL}, NULL);
	rc = s.st.failures ? 1 : 0;
	if (rc == 0)
		soak_run_quiet((char *[]){"rm", "-rf", s.dir, NULL}, NULL);
	else
		fprintf(stderr, "soak: logs kept in %s\n", s.dir);
	if (s.fenced_job)
		printf(
		    "soak: fenced writes: %ld committed, %ld refused stale, %ld ended at takeover, %ld stale commits "
		    "after a newer term began\n",
		    s.st.fenced_committed, s.st.fenced_refused, s.st.fenced_ended, s.st.fenced_stale);
	printf("soak: %d passed, %d failed\n", s.st.episodes - s.st.failed_episodes, s.st.failed_episodes);
	return rc;
}
