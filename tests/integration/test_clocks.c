/* Clocks that lie. This suite's server runs 15% fast (SANDBOX_DB_FAKETIME,
 * set in meson.build), and the holder runs under libfaketime with its wall
 * clock jumped or its clocks' rate changed. leaderrun's deadlines come from
 * the kernel's CLOCK_BOOTTIME and the server's UTC_TIMESTAMP, so neither
 * fools it; the margin (here 20% of the ttl) absorbs the server's rate. */
#include <signal.h>

#include "harness.h"
#include "proxy.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static const char *faketime_lib(void)
{
	static const char *const paths[] = {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
					    "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
					    "/usr/lib/faketime/libfaketimeMT.so.1"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	cr_assert_fail("libfaketime is not installed (scripts/install-deps test installs it)");
	return NULL;
}

/* The holder under FAKETIME=SPEC, through a proxy that then blackholes;
 * a standby with true clocks must not start before the holder's command is
 * dead, and the holder must exit 76. */
static void lying_holder_is_cut_off(const char *spec)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc holder, standby;
	const char *lease = h_lease("clock");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");
	const char *dsn = h_dsn_port(proxy_port(proxy));
	char preload[256], faketime[64];

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", faketime_lib());
	snprintf(faketime, sizeof(faketime), "FAKETIME=%s", spec);
	h_start(
	    &holder,
	    (const char *const[]){h_bin(), "-d", dsn, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60", NULL},
	    (const char *const[]){preload, faketime, NULL});
	cr_assert(h_wait_file(log, "start", 10000), "%s", h_slurp(holder.err));
	LR(&standby, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	/* Long enough for a few renews on the lying clocks. */
	h_sleep_ms(1500);
	cr_assert_eq(h_wait(&holder, 0), -1, "the holder ended early:\n%s", h_slurp(holder.err));
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&standby, 20000), 0, "%s", h_slurp(standby.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}

TestSuite(clocks, .timeout = 120);

Test(clocks, wall_clock_an_hour_ahead)
{
	lying_holder_is_cut_off("+1h");
}

Test(clocks, wall_clock_a_day_behind)
{
	lying_holder_is_cut_off("-1d");
}

Test(clocks, wall_clock_at_a_fixed_future_date)
{
	lying_holder_is_cut_off("@2031-01-01 00:00:00");
}

Test(clocks, clocks_running_twice_as_fast)
{
	lying_holder_is_cut_off("+0 x2");
}

Test(clocks, clocks_running_at_half_speed)
{
	lying_holder_is_cut_off("+0 x0.5");
}

Test(clocks, fast_server_clock_within_the_margin_keeps_failover_safe)
{
	struct h_proc holder, standby;
	const char *lease = h_lease("fastsrv");
	const char *log = h_path("probe.log"), *lock = h_path("probe.lock");

	/* Server 15% fast, ttl 2 s, margin 0.4 s: the server expires the lease
	 * 1.74 s after a renew, leaderrun's SIGKILL comes at 1.6 s. */
	LR(&holder, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "60");
	cr_assert(h_wait_file(log, "start", 10000));
	LR(&standby, "-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0.2");
	h_sleep_ms(300);
	kill(holder.pid, SIGSTOP); /* the watcher alone keeps the deadline */
	cr_assert_eq(h_finish(&standby, 20000), 0, "%s", h_slurp(standby.err));
	kill(holder.pid, SIGCONT);
	cr_assert_eq(h_finish(&holder, 10000), 76, "%s", h_slurp(holder.err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}
