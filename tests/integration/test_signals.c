/* Signals: forwarding, exiting while waiting, SIGKILL of leaderrun, failover. */
#include <signal.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

Test(signals, sigterm_is_forwarded_the_lease_released_and_status_passed_on)
{
	struct h_proc holder, next;
	const char *lease = h_lease("fwd");

	LR(&holder, "-v", "-l", lease, "--", "sh", "-c",
	   "trap 'echo got TERM; exit 7' TERM; echo up; while :; do sleep 0.05; done");
	cr_assert(h_wait_file(holder.out, "up", 10000));
	kill(holder.pid, SIGTERM);
	cr_assert_eq(h_finish(&holder, 10000), 7, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.out), "got TERM"));
	cr_assert(strstr(h_slurp(holder.err), ": forwarding SIGTERM to the command\n"), "%s", h_slurp(holder.err));
	/* Released, not left to expire: the next one gets it at once. */
	LR(&next, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&next, 10000), 0, "lease not released: %s", h_slurp(next.err));
}

Test(signals, other_signals_reach_the_command)
{
	struct h_proc p;

	LR(&p, "-l", h_lease("usr1"), "--", "sh", "-c",
	   "trap 'echo got USR1; exit 0' USR1; trap 'echo got HUP' HUP; echo up; while :; do sleep 0.05; done");
	cr_assert(h_wait_file(p.out, "up", 10000));
	kill(p.pid, SIGHUP);
	cr_assert(h_wait_file(p.out, "got HUP", 5000));
	kill(p.pid, SIGUSR1);
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert(strstr(h_slurp(p.out), "got USR1"));
}

Test(signals, sigterm_while_waiting_exits_promptly_without_running)
{
	struct h_proc holder, waiter;
	const char *lease = h_lease("wterm");
	char job[600];
	int64_t t0;

	/* Held until the waiter is done with, however long that takes. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go"));
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	LR(&waiter, "-v", "-l", lease, "--", "sh", "-c", "echo ran");
	cr_assert(h_wait_file(waiter.err, "waiting", 10000));
	t0 = h_now_ms();
	kill(waiter.pid, SIGTERM);
	cr_assert_eq(h_finish(&waiter, 5000), 128 + SIGTERM);
	/* At once, not at a look (15 s): bounded generously for a busy
	 * machine. */
	cr_assert_lt(h_now_ms() - t0, 3000);
	cr_assert_str_eq(h_slurp(waiter.out), "");
	cr_assert(strstr(h_slurp(waiter.err), ": got SIGTERM while waiting; exiting without running the command\n"),
		  "%s", h_slurp(waiter.err));
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
}

Test(signals, sigkill_of_leaderrun_kills_child_and_grandchildren)
{
	struct h_proc p;

	LR(&p, "-l", h_lease("k9"), "--", H_TREE_CMD);
	h_sigkill_takes_the_tree(&p);
}

Test(signals, failover_after_sigkill_of_the_holder)
{
	struct h_proc holder, standby;
	const char *lease = h_lease("fo");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	int64_t t0, took;

	LR(&holder, "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "30");
	cr_assert(h_wait_file(log, "start", 10000));
	LR(&standby, "-t", "3s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	h_sleep_ms(300);
	t0 = h_now_ms();
	kill(holder.pid, SIGKILL);
	h_finish(&holder, 5000);
	cr_assert(h_wait_file(log, "stop", 15000), "no takeover:\n%s", h_slurp(standby.err));
	took = h_now_ms() - t0;
	cr_assert_eq(h_finish(&standby, 10000), 0);
	/* The flock in the probe proves the old child was dead first. */
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
	/* ttl 3 s plus the 1 s retry interval, generously bounded (a busy
	 * machine); the overlap check above is the strict part. */
	cr_assert_lt(took, 10000, "takeover took %lld ms", (long long)took);
}
