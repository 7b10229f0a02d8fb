/* What the command inherits, and process hygiene around it. */
#include <signal.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

Test(process, no_descriptor_but_stdio_reaches_the_command)
{
	struct h_proc p;

	/* The test process has more descriptors open; none may leak, and
	 * neither may the database socket. */
	LR(&p, "-l", h_lease("fd"), "--", "sh", "-c", "ls /proc/$$/fd");
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert_str_eq(h_slurp(p.out), "0\n1\n2\n");
}

Test(process, command_gets_default_signals_and_an_empty_mask)
{
	struct h_proc p;

	LR(&p, "-l", h_lease("sig"), "--", "grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status");
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert_str_eq(h_slurp(p.out), "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

Test(process, password_is_not_visible_in_cmdline)
{
	struct h_proc p;
	char path[64], cmdline[4096];
	FILE *f;
	size_t n;
	const char *argv[] = {h_bin(), "-d", h_dsn(), "-l", h_lease("pw"), "--", "sh", "-c", "echo up; sleep 1", NULL};

	h_start(&p, argv, NULL);
	cr_assert(h_wait_file(p.out, "up", 10000));
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p.pid);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(cmdline, 1, sizeof(cmdline) - 1, f);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		if (cmdline[i] == '\0')
			cmdline[i] = ' ';
	cmdline[n] = '\0';
	cr_assert(strstr(cmdline, "-d mysql://"), "%s", cmdline);
	cr_assert_null(strstr(cmdline, getenv("LR_DB_PASSWORD")), "password visible: %s", cmdline);
	cr_assert_eq(h_finish(&p, 10000), 0);
}

Test(process, secrets_do_not_reach_the_command)
{
	struct h_proc p;
	char env1[600], env2[128];

	snprintf(env1, sizeof(env1), "LEADERRUN_DSN=%s", h_dsn());
	snprintf(env2, sizeof(env2), "LEADERRUN_PASSWORD=%s", getenv("LR_DB_PASSWORD"));
	h_start(&p,
		(const char *const[]){h_bin(), "-l", h_lease("env"), "--", "sh", "-c",
				      "echo \"$LEADERRUN_DSN|$LEADERRUN_PASSWORD|$LEADERRUN_HOLDER\"", NULL},
		(const char *const[]){env1, env2, NULL});
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.out), getenv("LR_DB_PASSWORD")), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "mysql://leaderrun@127.0.0.1"), "%s", h_slurp(p.out));
}

Test(process, stragglers_are_stopped_and_reaped_before_release)
{
	struct h_proc p, next;
	const char *lease = h_lease("strag");
	pid_t bg, stubborn;

	/* One straggler dies on SIGTERM, one ignores it and needs SIGKILL. */
	LR(&p, "-t", "2s", "-l", lease, "--", "sh", "-c",
	   "sleep 30 & a=$!; (trap '' TERM; exec sleep 30) & echo $a $!; exit 0");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_eq(sscanf(h_slurp(p.out), "%d %d", &bg, &stubborn), 2);
	cr_assert(!h_alive(bg), "straggler %d survived leaderrun", (int)bg);
	cr_assert(!h_alive(stubborn), "TERM-ignoring straggler %d survived leaderrun", (int)stubborn);
	LR(&next, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&next, 10000), 0, "lease not released after reaping");
}

Test(process, escaped_descendants_are_reaped_too)
{
	struct h_proc p;
	pid_t escaped;

	/* setsid leaves the command's process group; as a subreaper
	 * leaderrun still finds it once it is orphaned. */
	LR(&p, "-t", "2s", "-l", h_lease("setsid"), "--", "sh", "-c", "setsid sleep 30 & echo $!; sleep 0.2; exit 0");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_eq(sscanf(h_slurp(p.out), "%d", &escaped), 1);
	cr_assert(!h_alive(escaped), "escaped descendant %d survived", (int)escaped);
}

Test(process, as_pid_1_it_reaps_orphans)
{
	struct h_proc p;
	char env[600];

	if (geteuid() != 0)
		cr_skip_test("needs root for unshare --pid");
	snprintf(env, sizeof(env), "LEADERRUN_DSN=%s", h_dsn());
	/* The subshell's sleep is orphaned to PID 1; after it exits, a zombie
	 * would remain unless leaderrun reaps it. */
	h_start(&p,
		/* --propagation unchanged: a chroot's / is no mount point, and
		 * unshare could not make it private. */
		(const char *const[]){"unshare", "--pid", "--fork", "--mount-proc", "--propagation", "unchanged",
				      h_bin(), "-l", h_lease("pid1"), "--", "sh", "-c",
				      "(sleep 0.2 &); sleep 1; cat /proc/1/comm; "
				      "grep -l '^[0-9]* ([^)]*) Z' /proc/[0-9]*/stat | wc -l",
				      NULL},
		(const char *const[]){env, NULL});
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "leaderrun\n0\n");
}

/* The host pid of PID's first child (unshare --fork's leaderrun). */
static pid_t first_child(pid_t pid)
{
	char path[96];
	long c = 0;
	FILE *f;
	int64_t end = h_now_ms() + 5000;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	while (c == 0 && h_now_ms() < end) {
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &c) != 1)
				c = 0;
			fclose(f);
		}
		if (c == 0)
			h_sleep_ms(10);
	}
	return (pid_t)c;
}

Test(process, as_pid_1_sigterm_stops_the_command_and_exits_with_its_status)
{
	struct h_proc p;
	char env[600];
	pid_t init;

	if (geteuid() != 0)
		cr_skip_test("needs root for unshare --pid");
	snprintf(env, sizeof(env), "LEADERRUN_DSN=%s", h_dsn());
	h_start(&p,
		(const char *const[]){"unshare", "--pid", "--fork", h_bin(), "-l", h_lease("pid1t"), "--", "sh", "-c",
				      "trap 'echo bye; exit 3' TERM; echo up; while :; do sleep 0.05; done", NULL},
		(const char *const[]){env, NULL});
	cr_assert(h_wait_file(p.out, "up", 10000));
	init = first_child(p.pid);
	cr_assert_gt(init, 0);
	/* From outside the namespace, as the kubelet does: PID 1 gets only
	 * the signals it takes, and leaderrun must take SIGTERM. */
	kill(init, SIGTERM);
	cr_assert_eq(h_finish(&p, 10000), 3, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "bye"), "%s", h_slurp(p.out));
}
