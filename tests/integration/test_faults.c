/* Database faults while a command runs. This suite runs its tests one at a
 * time on its own server, since they cut, kill and restart it. */
#include <signal.h>

#include "harness.h"
#include "proxy.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* The holder runs a long probe through the proxy, a standby waits directly;
 * the proxy then fails in MODE. The holder must stop its command and exit
 * 76 before the standby's command starts (the probe's flock would see it). */
static void cut_holder_off_by(enum proxy_mode mode, int delay_ms)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc holder, standby;
	const char *lease = h_lease("cut");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	cr_assert_not_null(proxy);
	h_leaderrun_via(&holder, proxy_port(proxy),
			(const char *const[]){"-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60", NULL});
	cr_assert(h_wait_file(log, "start", 10000), "%s", h_slurp(holder.err));
	LR(&standby, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	h_sleep_ms(500);
	proxy_set_delay(proxy, delay_ms);
	proxy_set_mode(proxy, mode);

	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&standby, 20000), 0, "%s", h_slurp(standby.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
	cr_assert(strstr(h_slurp(holder.err), "lease"), "%s", h_slurp(holder.err));
}

static void cut_holder_off(enum proxy_mode mode)
{
	cut_holder_off_by(mode, 0);
}

TestSuite(faults, .timeout = 120);

Test(faults, blackholed_connection_stops_the_command_before_takeover)
{
	cut_holder_off(PROXY_BLACKHOLE);
}

Test(faults, lost_replies_stop_the_command_before_takeover)
{
	/* The server applies the renewals, the holder never learns it: it
	 * must not trust them. */
	cut_holder_off(PROXY_DROP_REPLIES);
}

Test(faults, database_slower_than_the_renew_budget_stops_the_command_before_takeover)
{
	/* ttl 2 s: renew every 667 ms, each attempt cut off after 333 ms.
	 * With every packet 400 ms late no renew can succeed. */
	cut_holder_off_by(PROXY_DELAY, 400);
}

Test(faults, server_side_kill_of_the_connection_does_not_overlap)
{
	struct h_proc holder, standby;
	const char *lease = h_lease("kill");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	LR(&holder, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "3");
	cr_assert(h_wait_file(log, "start", 10000));
	LR(&standby, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	/* A killed session is reopened only at the next renew, so a round
	 * may find none: count the kills over all rounds. */
	int killed = 0;
	for (int i = 0; i < 3; i++) {
		h_sleep_ms(500);
		killed += h_kill_connections("leaderrun");
	}
	cr_assert_gt(killed, 0);
	/* Killed connections are reopened at the next renew: the command
	 * finishes its 3 s undisturbed, then the standby runs. */
	cr_assert_eq(h_finish(&holder, 15000), 0, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&standby, 15000), 0, "%s", h_slurp(standby.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}

Test(faults, short_database_restart_leaves_the_command_alone)
{
	struct h_proc holder;
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	/* ttl 10s: the command is asked to stop 10 - 1 - 2.5 = 6.5 s after the
	 * last renew; a crash and restart of well under that must not matter. */
	LR(&holder, "-t", "10s", "-l", h_lease("restart"), "--", h_probe(), log, lock, "4");
	cr_assert(h_wait_file(log, "start", 10000));
	h_sleep_ms(500);
	h_sandbox("kill");
	h_sleep_ms(500);
	h_sandbox("restart");
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(log), "stop"), "the command did not finish: %s", h_slurp(log));
}

Test(faults, long_outage_stops_the_command_and_leadership_resumes)
{
	struct h_proc holder, after;
	const char *lease = h_lease("outage");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	unsigned long long terms[2];
	int64_t t0, took;

	LR(&holder, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60");
	cr_assert(h_wait_file(log, "start", 10000));
	h_sandbox("kill");
	t0 = h_now_ms();
	/* ttl 2 s: stop signal within 2 - 0.4 - 0.5 = 1.1 s of the last renew,
	 * SIGKILL by 1.6 s. */
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	took = h_now_ms() - t0;
	cr_assert_lt(took, 2000, "the command outlived the lease: %lld ms", (long long)took);
	h_sleep_ms(1500);
	h_sandbox("restart");
	LR(&after, "-n", "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0");
	cr_assert_eq(h_finish(&after, 10000), 0, "%s", h_slurp(after.err));
	cr_assert_eq(h_probe_check(log, NULL, terms, 2), 2);
}

Test(faults, kill_grace_is_honoured_when_renewing_fails)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc holder;

	/* ttl 3 s: SIGTERM 1.65 s after the last renew, SIGKILL 0.75 s later.
	 * The command needs 0.3 s to shut down cleanly, and must get them. */
	h_leaderrun_via(&holder, proxy_port(proxy),
			(const char *const[]){"-t", "3s", "-l", h_lease("grace"), "--", "sh", "-c",
					      "trap 'echo term; sleep 0.3; echo clean; exit 0' TERM; echo up; "
					      "while :; do sleep 0.05; done",
					      NULL});
	cr_assert(h_wait_file(holder.out, "up", 10000));
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.out), "clean"), "SIGKILLed before --kill-grace ran out:\n%s\n%s",
		  h_slurp(holder.out), h_slurp(holder.err));
}

Test(faults, sigstop_of_leaderrun_alone_still_stops_the_command_at_the_deadline)
{
	struct h_proc holder;
	const char *lease = h_lease("stop1");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	LR(&holder, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60");
	cr_assert(h_wait_file(log, "start", 10000));
	/* leaderrun frozen, its command running on: the watcher must stop the
	 * command at the deadline, before the lease can expire. */
	h_frozen_holders_command_stops_at_the_deadline(&holder, lease, log, lock);
}

Test(faults, whole_freeze_past_the_ttl_kills_the_stale_command_on_thaw)
{
	struct h_proc holder;
	struct h_vm vm;
	int64_t t0, window;

	LR(&holder, "-t", "2s", "-l", h_lease("freeze"), "--", "sh", "-c", "echo $$; exec sleep 60");
	h_vm_of(&holder, &vm);

	/* A paused VM: leaderrun, its watcher and the command all stop. */
	h_vm_signal(&vm, SIGSTOP);
	h_sleep_ms(3000);
	t0 = h_now_ms();
	h_vm_signal(&vm, SIGCONT);
	cr_assert(h_wait_gone(vm.command, 5000), "stale command %d survived the thaw", (int)vm.command);
	window = h_now_ms() - t0;
	cr_log_info("stale command killed %lld ms after the thaw", (long long)window);
	/* At once: tens of ms; bounded generously for a busy machine. */
	cr_assert_lt(window, 2000, "stale command ran %lld ms after the thaw", (long long)window);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
}

static void make_writable(void)
{
	h_sql("SET GLOBAL read_only = 0");
}

Test(faults, read_only_server_refuses_to_lead, .fini = make_writable)
{
	struct h_proc p;
	const char *argv[] = {h_bin(), "-n", "-d", h_dsn_root(), "-l", h_lease("ro"),
			      "--",    "sh", "-c", "echo ran",	 NULL};

	h_sql("SET GLOBAL read_only = 1");
	/* The least-privileged user is refused by the server... */
	LR(&p, "-n", "-l", h_lease("ro"), "--", "sh", "-c", "echo ran");
	cr_assert_eq(h_finish(&p, 10000), 69, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "read-only"), "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	/* ...and a privileged one, whom read_only does not bind, by leaderrun. */
	h_start(&p, argv, NULL);
	cr_assert_eq(h_finish(&p, 10000), 69, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "read-only"), "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
}

Test(faults, server_turning_read_only_ends_the_lease, .fini = make_writable)
{
	struct h_proc holder;
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	const char *argv[] = {h_bin(), "-d",	  h_dsn_root(), "-t", "2s", "-l", h_lease("demote"),
			      "--",    h_probe(), log,		lock, "60", NULL};

	/* As root: the renew itself would succeed on a read-only server. */
	h_start(&holder, argv, NULL);
	cr_assert(h_wait_file(log, "start", 10000));
	h_sql("SET GLOBAL read_only = 1");
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
}

/* The database down at a scheduled slot's time: the slot is missed, one
 * line says so, and the schedule goes on: the next slot runs once the
 * database is back. */
Test(faults, a_schedule_outlives_a_database_down_over_a_slot)
{
	struct h_proc c;
	const char *log = h_path("sched.log");
	char script[512];

	snprintf(script, sizeof(script), "echo \"$LEADERRUN_SCHEDULED\" >>%s", log);
	LR(&c, "-t", "2s", "-l", h_lease("sched-down"), "--schedule", "@every 3s", "--", "sh", "-c", script);
	cr_assert(h_wait_file(log, "Z", 15000), "no slot ran: %s", h_slurp(c.err));
	h_sandbox("kill");
	/* Down over at least one slot and its 2 s window. */
	cr_assert(h_wait_file(c.err, "is missed: the database stayed unavailable", 15000), "%s", h_slurp(c.err));
	h_sandbox("restart");
	{
		int before = 0;
		for (const char *p = h_slurp(log); (p = strchr(p, '\n')) != NULL; p++)
			before++;
		for (int64_t end = h_now_ms() + 20000;; h_sleep_ms(100)) {
			int now = 0;
			for (const char *p = h_slurp(log); (p = strchr(p, '\n')) != NULL; p++)
				now++;
			if (now > before)
				break;
			cr_assert(h_now_ms() < end, "no slot ran after the restart: %s", h_slurp(c.err));
		}
	}
	cr_assert(h_alive(c.pid), "%s", h_slurp(c.err));
	kill(c.pid, SIGTERM);
	cr_assert_eq(h_finish(&c, 15000), 0, "%s", h_slurp(c.err));
	/* One line a missed slot: no retry warnings. */
	cr_assert_null(strstr(h_slurp(c.err), "retrying"), "%s", h_slurp(c.err));
}
