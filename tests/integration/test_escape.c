/* What a hostile command or local user tries to get past leaderrun (issue
 * 25). Descendants that try to outlive the lease: a grandchild that leaves
 * the command's process group (setsid) and ignores SIGTERM, with a child of
 * its own that is orphaned only when its parent dies. Whatever ends the run
 * (the command's own exit, a revoke, a partition), every such process must
 * be dead before anyone else can take the lease over. And files leaderrun
 * writes while leading, which must not follow what was planted meanwhile. */
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"
#include "proxy.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* The escaper: "mid" leaves the group and ignores SIGTERM, and so does its
 * child "deep"; deep becomes an orphan of leaderrun only once mid is
 * killed, after any scan that found mid. Then the command exits (exit) or
 * keeps running (hold). */
static const char *escaper(void)
{
	const char *path = h_path("escaper.sh");
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\n"
		   "d=$1\n"
		   "setsid sh -c 'trap \"\" TERM; sleep 300 & echo $! > \"$1/deep.tmp\"; "
		   "mv \"$1/deep.tmp\" \"$1/deep\"; wait' sh \"$d\" &\n"
		   "echo $! > \"$d/mid\"\n"
		   "while [ ! -s \"$d/deep\" ]; do sleep 0.02; done\n"
		   "echo ready\n"
		   "[ \"$2\" = exit ] && exit 0\n"
		   "trap '' TERM\n"
		   "while :; do sleep 1; done\n");
	fclose(f);
	cr_assert_eq(chmod(path, 0755), 0);
	return path;
}

static pid_t pid_in(const char *name)
{
	int pid = 0;
	cr_assert_eq(sscanf(h_slurp(h_path(name)), "%d", &pid), 1, "no pid in %s", name);
	return (pid_t)pid;
}

/* A contender's command that says whether the escaped processes are alive
 * when it starts: the promise is that they are not. */
static void contend(struct h_proc *p, const char *lease, const char *extra)
{
	static char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "for f in mid deep; do s=$(cut -d' ' -f3 /proc/$(cat %s/$f)/stat 2>/dev/null); "
		 "[ -n \"$s\" ] && [ \"$s\" != Z ] && echo \"$f alive at term $LEADERRUN_TERM\"; done; "
		 "echo started",
		 h_dir());
	if (extra)
		LR(p, "-l", lease, extra, "--", "sh", "-c", cmd);
	else
		LR(p, "-l", lease, "--", "sh", "-c", cmd);
}

static void assert_escapers_dead_at_start(const struct h_proc *c)
{
	const char *out = h_slurp(c->out);
	cr_assert(strstr(out, "started"), "the contender never ran: %s\n%s", out, h_slurp(c->err));
	cr_assert_null(strstr(out, "alive"), "a second copy ran beside an escaped descendant: %s", out);
}

static void assert_escapers_dead(void)
{
	cr_assert(!h_alive(pid_in("mid")), "the setsid grandchild survived leaderrun");
	cr_assert(!h_alive(pid_in("deep")), "the grandchild's own child survived leaderrun");
}

Test(escape, escaped_grandchild_dies_after_the_command_exits)
{
	struct h_proc holder, next;
	const char *lease = h_lease("esc-exit");

	LR(&holder, "-t", "3s", "--kill-grace", "500ms", "-l", lease, "--", escaper(), h_dir(), "exit");
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	assert_escapers_dead();
	contend(&next, lease, "-n");
	cr_assert_eq(h_finish(&next, 10000), 0, "%s", h_slurp(next.err));
	assert_escapers_dead_at_start(&next);
}

Test(escape, escaped_grandchild_dies_before_a_revoked_lease_is_taken)
{
	struct h_proc holder, waiter, rel;
	const char *lease = h_lease("esc-rev");

	LR(&holder, "-t", "3s", "--kill-grace", "500ms", "-l", lease, "--", escaper(), h_dir(), "hold");
	cr_assert(h_wait_file(holder.out, "ready", 10000), "%s", h_slurp(holder.err));
	/* A waiter is there from the start: it takes over the moment it can. */
	contend(&waiter, lease, "--retry-interval=100ms");
	h_leaderrun(&rel, (const char *const[]){"--release", lease, NULL});
	cr_assert_eq(h_finish(&rel, 10000), 0, "%s", h_slurp(rel.err));
	cr_assert_eq(h_finish(&holder, 20000), 76, "%s", h_slurp(holder.err));
	assert_escapers_dead();
	cr_assert_eq(h_finish(&waiter, 20000), 0, "%s", h_slurp(waiter.err));
	assert_escapers_dead_at_start(&waiter);
}

Test(escape, escaped_grandchild_dies_before_a_partitioned_lease_is_taken)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc holder, waiter;
	const char *lease = h_lease("esc-cut");

	h_leaderrun_via(&holder, proxy_port(proxy),
			(const char *const[]){"-t", "3s", "--kill-grace", "500ms", "-l", lease, "--", escaper(),
					      h_dir(), "hold", NULL});
	cr_assert(h_wait_file(holder.out, "ready", 10000), "%s", h_slurp(holder.err));
	contend(&waiter, lease, "--retry-interval=100ms");
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	cr_assert_eq(h_finish(&waiter, 30000), 0, "%s", h_slurp(waiter.err));
	assert_escapers_dead_at_start(&waiter);
	cr_assert_eq(h_finish(&holder, 20000), 76, "%s", h_slurp(holder.err));
	assert_escapers_dead();
}

Test(escape, descendants_forked_during_the_kill_are_killed_too)
{
	struct h_proc holder;
	char script[512];

	/* A fork bomb in slow motion outside the group: each generation
	 * ignores SIGTERM and leaves a child before it can be killed. */
	snprintf(script, sizeof(script),
		 "setsid sh -c 'trap \"\" TERM; while :; do sleep 300 & echo $! >> %s/kids; sleep 0.05; done' & "
		 "echo $! > %s/mid; sleep 0.5; exit 0",
		 h_dir(), h_dir());
	LR(&holder, "-t", "3s", "--kill-grace", "300ms", "-l", h_lease("esc-fork"), "--", "sh", "-c", script);
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	cr_assert(!h_alive(pid_in("mid")), "the forking grandchild survived");
	{
		FILE *f = fopen(h_path("kids"), "r");
		int pid, n = 0;
		cr_assert_not_null(f);
		while (fscanf(f, "%d", &pid) == 1) {
			n++;
			cr_assert(!h_alive((pid_t)pid), "child %d of the forking grandchild survived", pid);
		}
		fclose(f);
		cr_assert_gt(n, 0);
	}
}

/* Runs leaderrun ARGS (NULL-terminated) under strace -f, every openat
 * into TRACE; its exit status. Skips the test without strace. Under
 * scripts/check-memory's ASan build, without LeakSanitizer, which cannot
 * run under ptrace (its fatal error would be the exit status); ASan's
 * later options win. */
static int traced(const char *trace, const char *const args[])
{
	const char *argv[40] = {"strace", "-f", "-e", "trace=openat", "-o", trace, h_bin()};
	const char *asan = getenv("ASAN_OPTIONS");
	char dsn[600], noleaks[1024];
	struct h_proc p;
	size_t n = 7;

	if (access("/usr/bin/strace", X_OK) != 0)
		cr_skip_test("strace is missing (scripts/install-deps test)");
	for (size_t i = 0; args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", h_dsn());
	snprintf(noleaks, sizeof(noleaks), "ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "", asan ? ":" : "");
	h_start(&p, argv, (const char *const[]){dsn, noleaks, NULL});
	return h_finish(&p, 30000);
}

/* The first line of TRACE that opens /proc itself (the list of every
 * process) or /proc/PID/... with PID all digits (ONLY: that PID's alone;
 * 0: any); NULL when there is none. /proc/self/... is leaderrun's own. */
static const char *proc_opened(const char *trace, pid_t only)
{
	static char line[1024];
	char digits[32];
	FILE *f = fopen(trace, "r");
	const char *hit = NULL;

	cr_assert_not_null(f, "no strace output in %s", trace);
	snprintf(digits, sizeof(digits), "\"/proc/%d/", (int)only);
	while (!hit && fgets(line, sizeof(line), f)) {
		const char *q = strstr(line, "\"/proc");
		if (!q)
			continue;
		if (q[6] == '"' || (only ? strstr(line, digits) != NULL : (q[6] == '/' && q[7] >= '0' && q[7] <= '9')))
			hit = line;
	}
	fclose(f);
	return hit;
}

/* Issue 34: the end of a run that left nothing behind costs the same on a
 * machine of a million processes as on an idle one. It used to read
 * /proc/PID/stat of every process there. */
Test(escape, a_run_that_left_nothing_looks_at_no_other_process)
{
	const char *trace = h_path("strace");
	const char *hit;

	cr_assert_eq(traced(trace, (const char *const[]){"-n", "-l", h_lease("walk-none"), "--", "true", NULL}), 0);
	hit = proc_opened(trace, 0);
	cr_assert_null(hit, "a run whose command left nothing looked into /proc: %s", hit);
}

/* Issue 34: what a command leaves behind is found by walking the tree below
 * leaderrun, not by reading every process on the machine: a process that
 * is not leaderrun's is never looked at, and the setsid grandchild and
 * its own child die all the same. */
Test(escape, the_kill_reads_no_process_outside_leaderrun)
{
	const char *trace = h_path("strace");
	const char *hit;
	struct h_proc outsider;

	h_start(&outsider, (const char *const[]){"sleep", "60", NULL}, NULL);
	cr_assert_eq(traced(trace, (const char *const[]){"-t", "3s", "--kill-grace", "500ms", "-l", h_lease("walk"),
							 "--", escaper(), h_dir(), "exit", NULL}),
		     0, "leaderrun under strace failed (trace: %s)", trace);
	assert_escapers_dead();
	hit = proc_opened(trace, outsider.pid);
	kill(outsider.pid, SIGKILL);
	h_wait(&outsider, 5000);
	cr_assert_null(hit, "the kill looked at a process outside leaderrun's tree (pid %d): %s", (int)outsider.pid,
		       hit);
}

Test(escape, kill_grace_0_warns_only_when_something_was_left)
{
	struct h_proc p;

	LR(&p, "--kill-grace", "0", "-l", h_lease("grace0"), "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "outlived"), "a false warning: %s", h_slurp(p.err));
}

Test(escape, ready_file_replaces_a_symlink_planted_during_the_wait)
{
	struct h_proc holder, p;
	const char *lease = h_lease("ready-sym");
	char ready[512], victim[512], go[512], job[1024];
	struct stat st;

	snprintf(ready, sizeof(ready), "%s", h_path("ready"));
	snprintf(victim, sizeof(victim), "%s", h_path("victim"));
	snprintf(go, sizeof(go), "%s", h_path("go"));
	snprintf(job, sizeof(job),
		 "echo up; i=0; until [ -e '%s' ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i + 1)); done", go);
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go2"));
	LR(&p, "-v", "--ready-file", ready, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(p.err, "waiting: held by", 10000), "%s", h_slurp(p.err));
	/* The attacker's move: a symlink to a file only root may write. */
	FILE *f = fopen(victim, "w");
	cr_assert_not_null(f);
	fputs("precious\n", f);
	fclose(f);
	cr_assert_eq(symlink(victim, ready), 0);
	fclose(fopen(go, "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
	cr_assert(h_wait_file(p.out, "up", 10000));
	/* The command runs until seen, not for a time a busy machine may
	 * outlast. */
	cr_assert(h_wait_file(ready, " ", 10000), "no ready file while the command runs");
	cr_assert_eq(lstat(ready, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the ready file is still the planted symlink");
	cr_assert_str_eq(h_slurp(victim), "precious\n", "the symlink's target was overwritten");
	fclose(fopen(h_path("go2"), "w"));
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(victim), "precious\n");
}
