/* --schedule: every instance keeps the schedule, and each slot runs once,
 * on one of them. With --catch-up a slot whose run was lost (its holder
 * killed) runs again on another instance, under a larger term, once the
 * lost one can no longer run; without it, the slot stays lost. The job
 * logs "start SCHEDULED ATTEMPT TERM" and "stop SCHEDULED ATTEMPT TERM",
 * holding an flock throughout: two runs at once would be seen. */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

TestSuite(schedule, .timeout = 180);

/* "sh -c SCRIPT": the job, SECS long. */
static const char *job(char *buf, size_t len, const char *secs)
{
	snprintf(buf, len,
		 "d=%s; exec 9>>$d/job.lock; "
		 "flock -n 9 || { echo violation >>$d/jobs.log; exit 99; }; "
		 "echo \"start $LEADERRUN_SCHEDULED $LEADERRUN_ATTEMPT $LEADERRUN_TERM\" >>$d/jobs.log; "
		 "sleep %s; "
		 "echo \"stop $LEADERRUN_SCHEDULED $LEADERRUN_ATTEMPT $LEADERRUN_TERM\" >>$d/jobs.log",
		 h_dir(), secs);
	return buf;
}

struct run {
	char scheduled[32];
	unsigned attempt;
	unsigned long long term;
};

/* The log's "start" lines, in order, into R (at most MAX); fails on a
 * violation. */
static int starts(struct run *r, int max)
{
	const char *log = h_slurp(h_path("jobs.log"));
	int n = 0;

	cr_assert_null(strstr(log, "violation"), "two runs at once:\n%s", log);
	for (const char *l = log; n < max && (l = strstr(l, "start ")) != NULL; l++, n++)
		cr_assert_eq(sscanf(l, "start %31s %u %llu", r[n].scheduled, &r[n].attempt, &r[n].term), 3, "%s", log);
	return n;
}

static int count_of(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Which of the instances in C (N of them) runs the job now: the one whose
 * leaderrun has a child besides its watcher, as the row names it. */
static int holder_of(struct h_proc *c, int n, const char *lease)
{
	const char *holder = h_sql("SELECT holder FROM leaderrun_lease WHERE name='%s'", lease);

	for (int i = 0; i < n; i++) {
		char needle[32];
		snprintf(needle, sizeof(needle), ":%d:", (int)c[i].pid);
		if (strstr(holder, needle))
			return i;
	}
	cr_assert_fail("no instance holds %s: %s", lease, holder);
	return -1;
}

Test(schedule, three_instances_on_an_every_schedule_run_each_slot_once)
{
	const char *lease = h_lease("every");
	struct h_proc c[3];
	struct run r[16];
	char script[1024];
	int n;

	job(script, sizeof(script), "0.2");
	for (int i = 0; i < 3; i++)
		LR(&c[i], "-l", lease, "--schedule", "@every 2s", "--", "sh", "-c", script);
	for (int64_t end = h_now_ms() + 60000; count_of(h_slurp(h_path("jobs.log")), "stop ") < 5; h_sleep_ms(100))
		cr_assert(h_now_ms() < end, "five slots did not run in 60 s:\n%s", h_slurp(h_path("jobs.log")));
	for (int i = 0; i < 3; i++)
		kill(c[i].pid, SIGTERM);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(h_finish(&c[i], 15000), 0, "a SIGTERM stops a schedule with 0: %s", h_slurp(c[i].err));
	n = starts(r, 16);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(r[i].attempt, 1, "%s", h_slurp(h_path("jobs.log")));
		if (i == 0)
			continue;
		cr_assert_gt(strcmp(r[i].scheduled, r[i - 1].scheduled), 0, "a slot ran twice, or out of order:\n%s",
			     h_slurp(h_path("jobs.log")));
		cr_assert_gt(r[i].term, r[i - 1].term, "%s", h_slurp(h_path("jobs.log")));
	}
	/* The slots are the even seconds, as UTC times. */
	for (int i = 0; i < n; i++)
		cr_assert_eq((r[i].scheduled[18] - '0') % 2, 0, "%s is no slot of @every 2s", r[i].scheduled);
}

/* Two instances, a 20 s period; the holder is SIGKILLed a moment into its
 * run. Returns the index of the survivor; R[0] is the lost attempt. */
static int kill_the_holder(struct h_proc *c, const char *lease, const char *catch_up, struct run *r)
{
	char script[1024];
	int h;

	job(script, sizeof(script), "6");
	for (int i = 0; i < 2; i++) {
		if (catch_up)
			LR(&c[i], "-vv", "-t", "3s", "-l", lease, "--schedule", "@every 20s", "--catch-up", catch_up,
			   "--", "sh", "-c", script);
		else
			LR(&c[i], "-t", "3s", "-l", lease, "--schedule", "@every 20s", "--", "sh", "-c", script);
	}
	cr_assert(h_wait_file(h_path("jobs.log"), "start ", 45000), "no slot ran in 45 s");
	h = holder_of(c, 2, lease);
	cr_assert_eq(starts(r, 1), 1);
	kill(c[h].pid, SIGKILL);
	h_wait(&c[h], 5000);
	return 1 - h;
}

Test(schedule, a_holder_killed_mid_run_is_run_again_elsewhere_with_catch_up_under_a_larger_term)
{
	const char *lease = h_lease("rerun");
	struct h_proc c[2];
	struct run r[4];
	int other = kill_the_holder(c, lease, "15s", r);

	/* The lost attempt's lease runs out within its ttl (3 s): the rerun
	 * starts then, not before. */
	if (!h_wait_file(h_path("jobs.log"), " 2 ", 15000)) {
		char log[4096];
		snprintf(log, sizeof(log), "%s", h_slurp(h_path("jobs.log")));
		cr_assert_fail("no rerun:\n%s\n%s", log, h_slurp(c[other].err));
	}
	cr_assert_eq(starts(r, 4), 2, "%s", h_slurp(h_path("jobs.log")));
	cr_assert_str_eq(r[1].scheduled, r[0].scheduled, "the rerun is the same slot's");
	cr_assert_eq(r[0].attempt, 1);
	cr_assert_eq(r[1].attempt, 2);
	cr_assert_gt(r[1].term, r[0].term, "the rerun's term is larger");
	cr_assert(h_wait_file(h_path("jobs.log"), "stop ", 20000), "the rerun did not end");
	kill(c[other].pid, SIGTERM);
	cr_assert_eq(h_finish(&c[other], 15000), 0, "%s", h_slurp(c[other].err));
}

Test(schedule, without_catch_up_a_killed_holders_slot_is_not_run_again)
{
	const char *lease = h_lease("norerun");
	struct h_proc c[2];
	struct run r[4];
	int other = kill_the_holder(c, lease, NULL, r);
	int64_t until = h_now_ms() + 8000;

	/* Well past the lost attempt's ttl, and before the next slot. */
	while (h_now_ms() < until) {
		cr_assert_eq(starts(r, 4), 1, "the lost slot ran again:\n%s", h_slurp(h_path("jobs.log")));
		h_sleep_ms(200);
	}
	kill(c[other].pid, SIGTERM);
	cr_assert_eq(h_finish(&c[other], 15000), 0, "%s", h_slurp(c[other].err));
}

Test(schedule, a_run_longer_than_its_period_skips_the_next_slot_and_its_instance_says_so)
{
	const char *lease = h_lease("long");
	struct h_proc c[2];
	struct run r[8];
	char script[1024];
	int n;

	job(script, sizeof(script), "3");
	for (int i = 0; i < 2; i++)
		LR(&c[i], "-l", lease, "--schedule", "@every 2s", "--", "sh", "-c", script);
	for (int64_t end = h_now_ms() + 60000; count_of(h_slurp(h_path("jobs.log")), "stop ") < 2; h_sleep_ms(100))
		cr_assert(h_now_ms() < end, "two runs did not end in 60 s:\n%s", h_slurp(h_path("jobs.log")));
	for (int i = 0; i < 2; i++)
		kill(c[i].pid, SIGTERM);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(h_finish(&c[i], 15000), 0, "%s", h_slurp(c[i].err));
	n = starts(r, 8);
	/* A 3 s run of a 2 s schedule: the slot after each start is skipped
	 * (the flock saw no overlap), not run late. */
	for (int i = 1; i < n; i++)
		cr_assert_gt(strcmp(r[i].scheduled, r[i - 1].scheduled), 0, "%s", h_slurp(h_path("jobs.log")));
	cr_assert(strstr(h_slurp(c[0].err), "slot was skipped: the run of the") ||
		      strstr(h_slurp(c[1].err), "slot was skipped: the run of the"),
		  "nobody said that a slot was skipped:\n%s\n%s", h_slurp(c[0].err), h_slurp(c[1].err));
}

/* What no slot would fix ends a schedule at once, not at its first slot
 * (a day away here), with the statuses of any run. */
Test(schedule, a_missing_table_or_a_denied_account_ends_a_schedule_at_start)
{
	struct h_proc p;
	char dsn[512];
	int64_t t0 = h_now_ms();

	LR(&p, "--table", "no_such_table", "-l", h_lease("start"), "--schedule", "@daily", "--", "true");
	cr_assert_eq(h_finish(&p, 15000), 78, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "no_such_table"), "%s", h_slurp(p.err));
	snprintf(dsn, sizeof(dsn), "%s", h_dsn());
	/* The same account with a wrong password. */
	{
		char *at = strchr(dsn, '@'), *colon = strchr(dsn + 8, ':');
		cr_assert(at && colon && colon < at, "%s", dsn);
		memmove(colon + 4, at, strlen(at) + 1);
		memcpy(colon, ":bad", 4);
	}
	h_start(&p,
		(const char *const[]){h_bin(), "-d", dsn, "-l", h_lease("start"), "--schedule", "@daily", "--", "true",
				      NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 15000), 77, "%s", h_slurp(p.err));
	cr_assert_lt(h_now_ms() - t0, 15000);
}

/* The slot runs at its time by the server's clock, not before: the job
 * reads the server's clock as it starts. */
Test(schedule, a_slot_starts_at_its_time_by_the_servers_clock)
{
	const char *lease = h_lease("ontime");
	struct h_proc c;
	char script[1024];
	const char *log = h_path("clock.log");

	snprintf(script, sizeof(script),
		 "echo \"$LEADERRUN_SCHEDULED $(mariadb --no-defaults --socket=%s -uroot -N -e "
		 "'SELECT DATE_FORMAT(UTC_TIMESTAMP(6), \"%%Y-%%m-%%dT%%H:%%i:%%s.%%f\")')\" >>%s",
		 getenv("LR_DB_SOCKET"), log);
	LR(&c, "-l", lease, "--schedule", "@every 2s", "--", "sh", "-c", script);
	for (int64_t end = h_now_ms() + 30000; count_of(h_slurp(log), "\n") < 3; h_sleep_ms(100))
		cr_assert(h_now_ms() < end, "three slots did not run in 30 s: %s", h_slurp(c.err));
	kill(c.pid, SIGTERM);
	cr_assert_eq(h_finish(&c, 15000), 0, "%s", h_slurp(c.err));
	for (const char *l = h_slurp(log); *l; l = strchr(l, '\n') + 1) {
		char slot[32], now[40];
		cr_assert_eq(sscanf(l, "%31s %39s", slot, now), 2, "%s", h_slurp(log));
		/* "...T12:00:02Z" against "...T12:00:02.123456": the server's
		 * clock is at or past the slot, to the second. */
		slot[19] = '\0';
		cr_assert_geq(strncmp(now, slot, 19), 0, "the %s slot started at %s by the server's clock", slot, now);
	}
}

/* The sockets PID has open: its connections to the server (a schedule
 * without --role-http or --notify opens no other). */
static int sockets_of(pid_t pid)
{
	char dir[64], link[PATH_MAX], target[128];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	cr_assert_not_null(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		ssize_t len;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += strncmp(target, "socket:", 7) == 0;
		}
	}
	closedir(d);
	return n;
}

/* Between slots an instance holds no connection (and so sends nothing):
 * its sessions end with each slot's run. */
Test(schedule, between_slots_an_instance_holds_no_connection)
{
	const char *lease = h_lease("idle");
	struct h_proc c;
	char script[1024];
	int64_t end;

	job(script, sizeof(script), "0.1");
	LR(&c, "-l", lease, "--schedule", "@every 10s", "--", "sh", "-c", script);
	cr_assert(h_wait_file(h_path("jobs.log"), "stop ", 30000), "no slot ran in 30 s: %s", h_slurp(c.err));
	/* The run's release and its threads' ends take a moment. */
	for (end = h_now_ms() + 5000; sockets_of(c.pid) > 0; h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the instance kept a connection after its slot's run");
	/* And keeps none while it sleeps to the next slot. */
	for (end = h_now_ms() + 3000; h_now_ms() < end; h_sleep_ms(100))
		cr_assert_eq(sockets_of(c.pid), 0, "a connection between slots");
	kill(c.pid, SIGTERM);
	cr_assert_eq(h_finish(&c, 15000), 0, "%s", h_slurp(c.err));
}
