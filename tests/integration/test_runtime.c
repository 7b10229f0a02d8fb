/* --max-runtime and -c STRING, run as a user would: a command
 * past its time limit is stopped the way a lost lease stops it, and every
 * process of it is dead before anyone else can take the lease, which is
 * then released normally and exits 124; a shell string runs under
 * /bin/sh -c with the shell's quoting and status, and names its lease. */
#include <signal.h>

#include "harness.h"
#include "httpd.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

/* The line of LOG that holds NEEDLE, in a static buffer ("" if none). */
static const char *line_with(const char *log, const char *needle)
{
	static char line[4096];
	const char *at = strstr(log, needle), *from, *to;

	line[0] = '\0';
	if (!at)
		return line;
	for (from = at; from > log && from[-1] != '\n'; from--)
		;
	to = strchr(at, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(to ? to - from : (long)strlen(from)), from);
	return line;
}

Test(runtime, max_runtime_kills_the_whole_group_before_the_lease_passes_on)
{
	struct h_proc holder, waiter, p;
	const char *lease = h_lease("maxrt");
	const char *lock = h_path("job.lock"), *hooks = h_path("http.log");
	char job[512], check[512], hook[128], err[65536], out[256];
	const char *at;
	pid_t grandchild = 0;
	unsigned long long term = 0, next = 0;
	int64_t t0, took;
	int port = httpd_start(hooks, 200);

	snprintf(hook, sizeof(hook), "http://127.0.0.1:%d/hook", port);
	/* The job ignores SIGTERM, and so does the grandchild it leaves in its
	 * group (an ignored signal stays ignored across fork and exec); both
	 * hold the lock file, and only SIGKILL ends them. */
	snprintf(job, sizeof(job),
		 "trap '' TERM; exec 9>>'%s'; flock -n 9 || exit 99; sleep 60 & echo $! $LEADERRUN_TERM; wait", lock);
	t0 = h_now_ms();
	LR(&holder, "--max-runtime", "1s", "--kill-grace", "1s", "--log-format", "json", "--notify", hook, "-l", lease,
	   "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "\n", 10000), "the job did not start: %s", h_slurp(holder.err));
	cr_assert_eq(sscanf(h_slurp(holder.out), "%d %llu", &grandchild, &term), 2, "%s", h_slurp(holder.out));
	/* A contender that waits meanwhile: when it gets the lease, nothing of
	 * the old job may be left, not even unreaped. */
	snprintf(check, sizeof(check),
		 "exec 9>>'%s'; flock -n 9 && echo lock-free || echo lock-held; "
		 "kill -0 %d 2>/dev/null && echo grandchild-left; echo term $LEADERRUN_TERM",
		 lock, (int)grandchild);
	LR(&waiter, "-w", "30s", "-l", lease, "--", "sh", "-c", check);

	cr_assert_eq(h_finish(&holder, 20000), 124, "%s", h_slurp(holder.err));
	took = h_now_ms() - t0;
	snprintf(err, sizeof(err), "%s", h_slurp(holder.err));
	cr_log_info("exit 124 %lld ms after the start (--max-runtime 1s + --kill-grace 1s)", (long long)took);
	/* SIGKILL cannot come before the spawn + 1 s + 1 s. */
	cr_assert_geq(took, 2000, "stopped after %lld ms", (long long)took);
	cr_assert_lt(took, 10000, "stopped after %lld ms", (long long)took);
	cr_assert_not(h_alive(grandchild), "grandchild %d survived", (int)grandchild);

	cr_assert_eq(h_finish(&waiter, 15000), 0, "%s", h_slurp(waiter.err));
	snprintf(out, sizeof(out), "%s", h_slurp(waiter.out));
	cr_assert(strstr(out, "lock-free"), "the old job still held its lock when the lease passed on: %s", out);
	cr_assert_null(strstr(out, "grandchild-left"), "the grandchild outlived the release: %s", out);
	cr_assert(at = strstr(out, "term "), "%s", out);
	sscanf(at, "term %llu", &next);
	cr_assert_eq(next, term + 1, "released, then taken once: term %llu after %llu", next, term);

	/* One line at the default level, an error with the event timed_out;
	 * the lease was not lost, and was released. */
	cr_assert(strstr(line_with(err, "\"event\":\"timed_out\""), "\"level\":\"error\""), "%s", err);
	cr_assert(strstr(line_with(err, "\"event\":\"timed_out\""),
			 "command ran for 1s (--max-runtime); sending SIGTERM to its process group, SIGKILL in 1s"),
		  "%s", err);
	cr_assert_null(strstr(err, "\"event\":\"lost\""), "%s", err);
	cr_assert_null(strstr(err, "\"level\":\"warning\""), "%s", err);

	/* The webhook's events, in order. */
	snprintf(err, sizeof(err), "%s", h_slurp(hooks));
	cr_assert(strstr(err, "\"event\":\"acquired\""), "%s", err);
	cr_assert(strstr(err, "\"event\":\"timed_out\""), "%s", err);
	cr_assert(strstr(err, "\"event\":\"acquired\"") < strstr(err, "\"event\":\"timed_out\"") &&
		      strstr(err, "\"event\":\"timed_out\"") < strstr(err, "\"event\":\"exited\"") &&
		      strstr(err, "\"event\":\"exited\"") < strstr(err, "\"event\":\"released\""),
		  "%s", err);
	cr_assert_null(strstr(err, "\"event\":\"lost\""), "%s", err);

	/* The history and the row. */
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	snprintf(err, sizeof(err), "%s", h_slurp(p.out));
	cr_assert(strstr(err, "\"outcome\": \"timed_out\", \"exit_status\": null, \"signal\": 9"), "%s", err);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "timed_out (SIGKILL)"), "%s", h_slurp(p.out));
}

Test(runtime, max_runtime_stop_is_told_apart_in_text_logs_and_pings)
{
	struct h_proc holder, next;
	const char *lease = h_lease("maxping");
	const char *log = h_path("http.log");
	char ping[128], err[8192], body[128];
	unsigned long long term = 0, term2 = 0;
	int64_t t0, took;
	int port = httpd_start(log, 200);

	snprintf(ping, sizeof(ping), "http://127.0.0.1:%d/hc", port);
	/* sleep dies of SIGTERM: no wait for the 10 s grace. */
	t0 = h_now_ms();
	LR(&holder, "-t", "30s", "--max-runtime", "500ms", "--kill-grace", "10s", "--ping", ping, "-l", lease, "--",
	   "sh", "-c", "echo $LEADERRUN_TERM; exec sleep 60");
	cr_assert_eq(h_finish(&holder, 20000), 124, "%s", h_slurp(holder.err));
	took = h_now_ms() - t0;
	cr_log_info("a command that stops on SIGTERM: exit 124 %lld ms after the start (--max-runtime 500ms)",
		    (long long)took);
	cr_assert_geq(took, 500);
	cr_assert_lt(took, 8000, "waited for the grace: %lld ms", (long long)took);
	sscanf(h_slurp(holder.out), "%llu", &term);
	snprintf(err, sizeof(err), "%s", h_slurp(holder.err));
	cr_assert(strstr(err, "lease "), "%s", err);
	cr_assert(strstr(err, ": error: command ran for 500ms (--max-runtime); sending SIGTERM to its process group, "
			      "SIGKILL in 10s\n"),
		  "%s", err);
	/* Only errors and warnings show by default: that line alone. */
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);

	/* The check gets leaderrun's status, 124, with a body that says why,
	 * and not the command's own 143 after it. */
	snprintf(body, sizeof(body), "POST /hc/124 leaderrun: lease %s, term %llu: timed out", lease, term);
	cr_assert(strstr(h_slurp(log), "GET /hc/start"), "%s", h_slurp(log));
	cr_assert(strstr(h_slurp(log), body), "%s", h_slurp(log));
	cr_assert(strstr(h_slurp(log), "--max-runtime 500ms"), "%s", h_slurp(log));
	cr_assert_null(strstr(h_slurp(log), "/hc/143"), "%s", h_slurp(log));
	cr_assert_null(strstr(h_slurp(log), "/hc/fail"), "%s", h_slurp(log));

	/* Released after the stop: a -n contender right after runs, with the
	 * next term. */
	LR(&next, "-n", "-l", lease, "-c", "echo $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&next, 10000), 0, "%s", h_slurp(next.err));
	sscanf(h_slurp(next.out), "%llu", &term2);
	cr_assert_eq(term2, term + 1);
}

Test(runtime, a_lease_lost_while_stopping_for_max_runtime_exits_76)
{
	struct h_proc holder, p;
	const char *lease = h_lease("maxlost");
	char err[8192];

	/* The job ignores SIGTERM: the time limit's grace (4 s) outlasts the
	 * next renew (3 s after the acquire), which finds the row taken. One
	 * stop, overtaken by the loss: SIGKILL at once, and 76. */
	LR(&holder, "-t", "9s", "--kill-grace", "4s", "--max-runtime", "300ms", "-l", lease, "--", "sh", "-c",
	   "trap '' TERM; echo up; sleep 60 & wait");
	cr_assert(h_wait_file(holder.err, "--max-runtime", 10000), "%s", h_slurp(holder.err));
	h_sql("UPDATE leaderrun_lease SET holder='thief', term=term+1, expires_at=UTC_TIMESTAMP(6) + INTERVAL 30 "
	      "SECOND WHERE name='%s'",
	      lease);
	cr_assert_eq(h_finish(&holder, 20000), 76, "%s", h_slurp(holder.err));
	snprintf(err, sizeof(err), "%s", h_slurp(holder.err));
	cr_assert(strstr(err, "command ran for 300ms (--max-runtime)"), "%s", err);
	cr_assert(strstr(err, "lease lost: the row is no longer ours"), "%s", err);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "\"outcome\": \"lost\""), "%s", h_slurp(p.out));
}

Test(runtime, max_runtime_release_keeps_min_hold)
{
	struct h_proc p;
	const char *lease = h_lease("maxhold");

	/* The run happened: --min-hold keeps the lease after the stop, as
	 * after any other end. */
	cr_assert_eq(run(&p, (const char *const[]){"--max-runtime", "200ms", "--min-hold", "30s", "-l", lease, "--",
						   "sleep", "60", NULL}),
		     124, "%s", h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", lease, "--", "true", NULL}), 75, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT CONCAT(last_exit, ' ', expires_at > UTC_TIMESTAMP(6) + INTERVAL 20 SECOND) "
			       "FROM leaderrun_lease WHERE name='%s'",
			       lease),
			 "143 1", "the release records the command's own status and keeps --min-hold");
}

Test(runtime, a_command_that_ends_before_max_runtime_keeps_its_status)
{
	struct h_proc p;
	const char *lease = h_lease("maxok");

	cr_assert_eq(run(&p, (const char *const[]){"--max-runtime", "30s", "-l", lease, "-c", "exit 3", NULL}), 3, "%s",
		     h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.err), "");
	cr_assert_eq(run(&p, (const char *const[]){"--max-runtime", "30s", "-l", lease, "-c", "kill -TERM $$", NULL}),
		     143, "%s", h_slurp(p.err));
	/* Stragglers of a command that ended in time are stopped as ever,
	 * not as a time-out. */
	cr_assert_eq(
	    run(&p, (const char *const[]){"--max-runtime", "30s", "-l", lease, "-c", "sleep 60 & exit 0", NULL}), 0,
	    "%s", h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.out), "timed_out"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"outcome\": \"exited\", \"exit_status\": 3"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"outcome\": \"signaled\", \"exit_status\": null, \"signal\": 15"), "%s",
		  h_slurp(p.out));
}

Test(runtime, shell_string_quoting_and_status_are_the_shells)
{
	struct h_proc p;
	char cmd[512];
	const char *file = h_path("out.txt");

	snprintf(cmd, sizeof(cmd), "printf \"%%s|\" \"a b\" c > '%s'; exit 3", file);
	cr_assert_eq(run(&p, (const char *const[]){"-l", h_lease("quote"), "-c", cmd, NULL}), 3, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(file), "a b|c|");
}

Test(runtime, shell_string_sees_the_lease_environment)
{
	struct h_proc p;
	char string[128], out[256];

	/* No -l: the lease is named after the string, here unique to this
	 * test process. */
	snprintf(string, sizeof(string), "echo \"$LEADERRUN_TERM|$LEADERRUN_LEASE\" #%s", h_lease("env"));
	cr_assert_eq(run(&p, (const char *const[]){"-c", string, NULL}), 0, "%s", h_slurp(p.err));
	snprintf(out, sizeof(out), "%s", h_slurp(p.out));
	cr_assert(strchr(out, '\n'), "%s", out);
	*strchr(out, '\n') = '\0';
	cr_assert(strstr(out, string), "LEADERRUN_LEASE is the string itself: %s", out);
	/* The term the row holds, and the lease named as the string. */
	cr_assert_str_eq(h_sql("SELECT CONCAT(term, '|', name) FROM leaderrun_lease WHERE name='%s'", string), out);
}

Test(runtime, default_lease_name_follows_the_string)
{
	struct h_proc holder, p;
	char same[128], other[128];

	snprintf(same, sizeof(same), "echo up; exec sleep 30 #%s", h_lease("name"));
	snprintf(other, sizeof(other), "true #%s", h_lease("name"));
	LR(&holder, "-c", same);
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	/* The same string: the same lease, held. */
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-c", same, NULL}), 75, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "");
	/* Another string: another lease, free. */
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-c", other, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name IN ('%s', '%s')", same, other), "2");
	kill(holder.pid, SIGTERM);
	cr_assert_eq(h_finish(&holder, 10000), 143, "%s", h_slurp(holder.err));
}

Test(runtime, shell_string_with_a_command_is_a_usage_error)
{
	struct h_proc p;

	cr_assert_eq(run(&p, (const char *const[]){"-c", "echo a", "--", "echo", "b", NULL}), 64);
	cr_assert_str_eq(h_slurp(p.out), "");
	cr_assert(strstr(h_slurp(p.err), "contradict each other"), "%s", h_slurp(p.err));
	cr_assert_eq(strchr(h_slurp(p.err), '\n'), h_slurp(p.err) + strlen(h_slurp(p.err)) - 1, "one line: %s",
		     h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"-c", "", NULL}), 64);
	cr_assert(strstr(h_slurp(p.err), "runs nothing"), "%s", h_slurp(p.err));
	cr_assert_eq(run(&p, (const char *const[]){"--max-runtime", "0", "--", "true", NULL}), 64);
	cr_assert(strstr(h_slurp(p.err), "--max-runtime 0 is no time to run for"), "%s", h_slurp(p.err));
}

/* A libcurl.so.4 first on the library path that lacks functions leaderrun
 * calls: --ping is disabled, as the warning says, and the run goes on. The
 * table of libcurl's functions was left half filled, so the ping thread
 * went ahead and called a null pointer. */
Test(runtime, a_libcurl_missing_functions_disables_pings_without_crashing)
{
	struct h_proc p;
	const char *lease = h_lease("badcurl");
	char libs[600], dsn[600];
	const char *err;
	int status;

	snprintf(libs, sizeof(libs), "LD_LIBRARY_PATH=%s", getenv("LR_FAKE_CURL_DIR"));
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", h_dsn());
	h_start(
	    &p,
	    (const char *const[]){h_bin(), "--ping", "http://127.0.0.1:9/hc", "-n", "-l", lease, "--", "true", NULL},
	    (const char *const[]){libs, dsn, NULL});
	status = h_finish(&p, 20000);
	err = h_slurp(p.err);
	cr_assert_eq(status, 0, "exit status %d (a signal: 128 + N):\n%s", status, err);
	cr_assert(strstr(err, "cannot load libcurl"), "no warning that pings are off:\n%s", err);
}
