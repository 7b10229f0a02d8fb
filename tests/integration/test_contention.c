/* Contending leaderruns: mutual exclusion, skip, time out, wait then run. */
#include <signal.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

Test(contention, waiting_contenders_run_one_at_a_time_with_growing_terms)
{
	struct h_proc p[3];
	const char *lease = h_lease("mutex");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	unsigned long long terms[3];

	for (int i = 0; i < 3; i++)
		LR(&p[i], "-l", lease, "--retry-interval", "100ms", "--", h_probe(), log, lock, "0.5");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&p[i], 30000), 0, "%s", h_slurp(p[i].err));
	cr_assert_eq(h_probe_check(log, NULL, terms, 3), 3);
}

Test(contention, no_wait_loser_does_not_run)
{
	struct h_proc holder, loser;
	const char *lease = h_lease("skip");
	char job[600];

	/* Held until the test is done with it, not for a time that a busy
	 * machine may outlast. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go"));
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	LR(&loser, "-n", "-l", lease, "--", "sh", "-c", "echo ran");
	cr_assert_eq(h_finish(&loser, 10000), 75);
	cr_assert_str_eq(h_slurp(loser.out), "");
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
}

Test(contention, waiter_runs_after_the_holder_finishes)
{
	struct h_proc holder, waiter;
	const char *lease = h_lease("then");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	int64_t ns[2];

	LR(&holder, "-l", lease, "--", h_probe(), log, lock, "1");
	cr_assert(h_wait_file(log, "start", 10000));
	LR(&waiter, "-l", lease, "--", h_probe(), log, lock, "0");
	cr_assert_eq(h_finish(&holder, 10000), 0);
	cr_assert_eq(h_finish(&waiter, 10000), 0);
	cr_assert_eq(h_probe_check(log, ns, NULL, 2), 2);
	cr_assert_geq(ns[1] - ns[0], 1000000000LL, "the waiter started before the holder's 1 s job ended");
}

Test(contention, wait_timeout_gives_up_without_running)
{
	struct h_proc holder, waiter;
	const char *lease = h_lease("wto");
	char job[600];

	/* Held until the test is done with it, not for a time that a busy
	 * machine may outlast. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go"));
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	LR(&waiter, "-w", "500ms", "-l", lease, "--", "sh", "-c", "echo ran");
	cr_assert_eq(h_finish(&waiter, 10000), 75);
	cr_assert_str_eq(h_slurp(waiter.out), "");
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
}

Test(contention, term_is_exported_and_grows)
{
	struct h_proc p;
	const char *lease = h_lease("term");
	unsigned long long a, b;

	LR(&p, "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM $LEADERRUN_LEASE");
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert_eq(sscanf(h_slurp(p.out), "%llu", &a), 1);
	{
		char want[160];
		snprintf(want, sizeof(want), " %s\n", lease);
		cr_assert(strstr(h_slurp(p.out), want), "LEADERRUN_LEASE not exported: %s", h_slurp(p.out));
	}
	LR(&p, "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert_eq(sscanf(h_slurp(p.out), "%llu", &b), 1);
	cr_assert_gt(b, a);
}

Test(contention, default_lease_name_comes_from_the_command)
{
	struct h_proc p;
	char arg[64];

	snprintf(arg, sizeof(arg), "x%ld", (long)getpid());
	LR(&p, "--", "sh", "-c", "echo \"$LEADERRUN_LEASE\"", arg);
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert(strstr(h_slurp(p.out), arg), "%s", h_slurp(p.out));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name LIKE '%%%s%%'", arg), "1");
}

Test(contention, renew_that_finds_the_row_taken_kills_at_once)
{
	struct h_proc holder;
	const char *lease = h_lease("taken");
	pid_t child;
	int64_t t0;

	/* The command ignores SIGTERM: only SIGKILL, sent at once, ends it. */
	LR(&holder, "-t", "3s", "-l", lease, "--", "sh", "-c", "trap '' TERM; echo $$; exec sleep 30");
	cr_assert(h_wait_file(holder.out, "\n", 10000));
	cr_assert_eq(sscanf(h_slurp(holder.out), "%d", &child), 1);
	/* Someone else's acquisition, as after a forced expiry. */
	h_sql("UPDATE leaderrun_lease SET holder='intruder', term=term+1, "
	      "expires_at=UTC_TIMESTAMP(6) + INTERVAL 60 SECOND WHERE name='%s'",
	      lease);
	t0 = h_now_ms();
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	/* The next renew is at most 1 s away (ttl/3). */
	cr_assert_lt(h_now_ms() - t0, 2500);
	cr_assert(!h_alive(child), "command %d survived the lost lease", (int)child);
	cr_assert(strstr(h_slurp(holder.err), "lease lost"), "%s", h_slurp(holder.err));
}

Test(contention, wait_timeout_zero_still_tries_once)
{
	struct h_proc p;

	LR(&p, "-w", "0", "-l", h_lease("w0"), "--", "sh", "-c", "echo ran");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "ran\n");
}

Test(contention, graceful_handover_wakes_a_waiter_without_polling)
{
	struct h_proc holder, waiters[3];
	const char *lease = h_lease("wake");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock"), *go = h_path("go");
	char job[1200];
	int64_t ns[4];
	int blocked;

	/* The holder's job starts when the waiters block on its hint. A
	 * waiter whose first try fell between the holder's release of the
	 * row and of the hint would lead without the hint until its first
	 * renew, and the others would poll: slower, not what this tests. */
	snprintf(job, sizeof(job),
		 "echo up; i=0; until [ -e '%s' ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i + 1)); done; "
		 "exec '%s' '%s' '%s' 0.3",
		 go, h_probe(), log, lock);
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	/* A 30 s retry interval: a polling follower would wait that long. */
	for (int i = 0; i < 3; i++)
		LR(&waiters[i], "-l", lease, "--retry-interval", "30s", "--", h_probe(), log, lock, "0.3");
	for (int64_t end = h_now_ms() + 20000; (blocked = h_hint_waiters(lease)) != 3 && h_now_ms() < end;)
		continue; /* each look samples for a second */
	cr_assert_eq(blocked, 3, "the waiters block on the holder's hint");
	fclose(fopen(go, "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0, "%s", h_slurp(holder.err));
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&waiters[i], 15000), 0, "%s", h_slurp(waiters[i].err));
	cr_assert_eq(h_probe_check(log, ns, NULL, 4), 4);
	/* Each handover well under the 30 s a poll would take. */
	for (int i = 1; i < 4; i++)
		cr_assert_lt(ns[i] - ns[i - 1], 5000000000LL, "handover %d took %lld ms", i,
			     (long long)((ns[i] - ns[i - 1]) / 1000000));
}

Test(contention, no_wake_hint_polls_and_still_excludes)
{
	struct h_proc p[2];
	const char *lease = h_lease("nohint");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	for (int i = 0; i < 2; i++)
		LR(&p[i], "--no-wake-hint", "--retry-interval", "100ms", "-l", lease, "--", h_probe(), log, lock,
		   "0.3");
	for (int i = 0; i < 2; i++)
		cr_assert_eq(h_finish(&p[i], 15000), 0, "%s", h_slurp(p[i].err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 2), 2);
}

/* The pid of LEASE's holder, from the row ("HOST:PID:NONCE"). */
static pid_t holder_pid(const char *lease)
{
	const char *holder = h_sql("SELECT holder FROM leaderrun_lease WHERE name='%s'", lease);
	const char *colon = strchr(holder, ':');

	cr_assert_not_null(colon, "holder '%s'", holder);
	return (pid_t)atol(colon + 1);
}

Test(contention, after_a_crash_failover_followers_wait_on_the_new_leaders_hint)
{
	/* The leader dies: its hint lock goes with its session, and a
	 * follower wakes while the row is still held. That follower must
	 * give the lock back, so that whoever wins the row next holds it and
	 * the other follower blocks on it again, instead of polling (a
	 * graceful handover would then take a retry interval, not
	 * milliseconds). Which follower wins is chance: four rounds. The
	 * same holds when contenders start at once. */
	const char *lease = h_lease("crash");
	const char *const args[] = {"-t", "2s", "-l", lease, "--", "sleep", "120", NULL};
	struct h_proc p[7];
	int n = 0, waiting = 0;

	/* Started at once, as from cron: a follower may ask for the hint
	 * before the leader takes it, and must not keep it. */
	for (int i = 0; i < 3; i++)
		h_leaderrun(&p[n++], args);
	for (int64_t end = h_now_ms() + 10000; (waiting = h_hint_waiters(lease)) != 2 && h_now_ms() < end;)
		continue; /* each look samples for a second */
	cr_assert_eq(waiting, 2, "both followers wait on the first leader's hint");
	for (int round = 0; round < 4; round++) {
		pid_t leader = holder_pid(lease);
		int waiters;

		cr_assert_eq(kill(leader, SIGKILL), 0, "round %d: no leader %d", round, (int)leader);
		for (int i = 0; i < n; i++)
			if (p[i].pid == leader)
				h_wait(&p[i], 5000);
		/* The row expires within the 2 s ttl; a follower takes it, and
		 * the other blocks on its hint within a few seconds' looks. */
		for (int64_t end = h_now_ms() + 15000; holder_pid(lease) == leader; h_sleep_ms(50))
			cr_assert(h_now_ms() < end, "round %d: nobody took over from %d", round, (int)leader);
		for (int k = 0; (waiters = h_hint_waiters(lease)) != 1 && k < 3; k++)
			continue;
		cr_assert_eq(waiters, 1, "round %d: the other follower waits on the new leader's hint (%d waiting)",
			     round, waiters);
		h_leaderrun(&p[n++], args);
	}
	for (int i = 0; i < n; i++)
		if (p[i].status < 0)
			kill(p[i].pid, SIGTERM);
	for (int i = 0; i < n; i++)
		h_finish(&p[i], 20000);
}

/* Many first uses at once, each of its own lease: every one is free, so
 * every -n run leads. The fence's first move of a lease (its row not yet
 * there) locked the gap in the fence's table until its acquisition
 * committed, and two such moves inserting into one gap deadlocked: the
 * rolled-back acquisition was read as "busy", and a -n run exited 75
 * with nobody holding its lease (about one run in a hundred here). */
Test(contention, first_uses_of_many_leases_at_once_all_lead)
{
	enum { ROUNDS = 12, AT_ONCE = 16 };
	struct h_proc p[AT_ONCE];
	char names[AT_ONCE][96];

	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < AT_ONCE; i++) {
			/* Names that sort next to each other: one gap. */
			snprintf(names[i], sizeof(names[i]), "%s-%02d-%02d", h_lease("first"), r, i);
			LR(&p[i], "-n", "-l", names[i], "--", "true");
		}
		for (int i = 0; i < AT_ONCE; i++)
			cr_assert_eq(h_finish(&p[i], 20000), 0, "round %d, lease %s: %s", r, names[i],
				     h_slurp(p[i].err));
	}
}
