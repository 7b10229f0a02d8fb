/* The scheduled soak (scripts/soak --schedule): three instances run
 * `leaderrun --schedule '@every 3s' --catch-up 30s` on one lease, each
 * through its own loopback proxy, with tests/soak/sched-job.sh as the job
 * (two flocks: any two runs at once, or two attempts of one slot, are a
 * violation; "start" and "end" lines with the slot, attempt and term; it
 * runs 1.5 s). Then, episode after episode, it waits for a slot's run to
 * start and picks a fault at random, aimed at the instance that runs it:
 *
 *   kill9    SIGKILL of the holder (its watcher kills the job); restarted
 *   freeze   the holder and its job stopped (SIGSTOP) past the deadline
 *            (its watcher kills the job), then thawed: it keeps its schedule
 *   cut      the holder's host cut off (the proxy swallows everything and
 *            keeps the server's side open) until the rerun starts
 *   term     SIGTERM of the holder: it stops its run and exits 0 (a lost
 *            run); restarted
 *
 * after each of which another instance reruns the slot (attempt + 1, a
 * larger term) once the lost run's lease ran out, and
 *
 *   alldown  every instance stopped (SIGTERM) between two runs, for one to
 *            three whole slots, then all started again: the latest slot
 *            missed is run once, late (attempt 1), the older ones never
 *
 * At the end (schedule_check.c) every slot of the soak's span is judged
 * from the job's log and the instances' stderr (their "skipped" lines); the
 * table prints each check, and any failure fails the soak (exit 1).
 *
 * Usage: soak-schedule [-e EPISODES | -d SECONDS] [-t TTL_MS] [-s SEED] [-f FAULT]
 * Environment: LEADERRUN_BIN, LR_SANDBOX, LR_SCHED_JOB (set by meson and
 * scripts/soak). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/procs.h"
#include "../integration/proxy.h"
#include "schedule.h"
#include "soak_util.h"

extern char **environ;

const char *const sk_fault_names[SK_FAULTS] = {"kill9", "freeze", "cut", "term", "alldown"};

static uint64_t rnd(struct sk *s)
{
	return soak_rnd(&s->rng);
}

void sk_fail(struct sk *s, const char *fmt, ...)
{
	va_list ap;

	s->st.failures++;
	fprintf(stderr, "soak: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int64_t sk_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleeps until the wall clock reaches AT_US. */
static void sleep_until(int64_t at_us)
{
	int64_t now = sk_wall_us();

	if (at_us > now)
		procs_sleep_ms((int)((at_us - now + 999) / 1000));
}

/* Runs SQL as root; the output, trimmed, into OUT. */
static int sql(struct sk *s, const char *q, char *out, size_t len)
{
	char path[340];

	snprintf(path, sizeof(path), "%s/sql.out", s->dir);
	return soak_sql(s->socket, s->dbname, path, q, out, len);
}

static void set_setting(void *ctx, const char *name, const char *val)
{
	struct sk *s = ctx;

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
}

/* Instance I again, as soak-cI-G (a new G each start: the row's holder
 * names the run's instance). Its stderr is appended to DIR/instanceI.err. */
static void start_instance(struct sk *s, int i)
{
	char dsn[512], ttl[32], errpath[320], secs[] = "1.5";
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;

	snprintf(s->c[i].holder, sizeof(s->c[i].holder), "soak-c%d-%d", i, s->c[i].gen++);
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%d/%s", s->user, s->password, proxy_port(s->c[i].proxy),
		 s->dbname);
	snprintf(ttl, sizeof(ttl), "%dms", s->ttl_ms);
	snprintf(errpath, sizeof(errpath), "%s/instance%d.err", s->dir, i);
	char *args[] = {(char *)s->bin,
			"-v",
			"-d",
			dsn,
			"-t",
			ttl,
			"--retry-interval",
			"200ms",
			"-l",
			SK_LEASE,
			"--holder",
			s->c[i].holder,
			"--schedule",
			"@every 3s",
			"--catch-up",
			"30s",
			"--",
			(char *)s->job,
			s->dir,
			secs,
			NULL};
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	/* A group of its own: a frozen instance in the soak's group would get
	 * SIGHUP whenever that group is orphaned (see soak.c). */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	if (posix_spawn(&s->c[i].pid, s->bin, &fa, &attr, args, environ) != 0) {
		fprintf(stderr, "soak: cannot start %s\n", s->bin);
		exit(2);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
}

/* Instance I's exit status once it exited (reaped), else -1. */
static int instance_status(struct sk *s, int i, int timeout_ms)
{
	return soak_status(s->c[i].pid, timeout_ms);
}

/* SIGTERM to instance I (SEND: sent here; else sent to all at once
 * already): it stops its run (if any) and exits 0. */
static void stop_instance(struct sk *s, int i, const char *why, bool send)
{
	int st;

	if (send)
		kill(s->c[i].pid, SIGTERM);
	if ((st = instance_status(s, i, s->ttl_ms * 3 + 15000)) < 0) {
		sk_fail(s, "%s: instance %d (%d) did not exit on SIGTERM", why, i, (int)s->c[i].pid);
		kill(s->c[i].pid, SIGKILL);
		instance_status(s, i, 5000);
	} else if (st != 0)
		sk_fail(s, "%s: instance %d (%d) exited %d on SIGTERM, want 0", why, i, (int)s->c[i].pid, st);
}

/* The instance whose holder id runs TERM (the lease row's), or -1. */
static int holder_of(struct sk *s, unsigned long long term)
{
	char q[256], out[256];

	snprintf(q, sizeof(q), "SELECT holder FROM leaderrun_lease WHERE name='" SK_LEASE "' AND term=%llu", term);
	if (sql(s, q, out, sizeof(out)) != 0)
		return -1;
	for (int i = 0; i < SK_INSTANCES; i++)
		if (strcmp(s->c[i].holder, out) == 0)
			return i;
	return -1;
}

/* Waits for a "start" line after the first SEEN ones: into *L. */
static bool wait_start(struct sk *s, int seen, struct sk_line *l, int timeout_ms)
{
	static struct sk_line lines[SK_MAX];
	int64_t end = procs_now_ms() + timeout_ms;

	for (;;) {
		int n = sk_read_log(s, lines, SK_MAX), starts = 0;
		for (int k = 0; k < n; k++)
			if (!strcmp(lines[k].what, "start") && ++starts > seen) {
				*l = lines[k];
				return true;
			}
		if (procs_now_ms() >= end)
			return false;
		procs_sleep_ms(20);
	}
}

/* "start" lines in the log so far. */
static int starts_seen(const struct sk *s)
{
	static struct sk_line lines[SK_MAX];
	int n = sk_read_log(s, lines, SK_MAX), starts = 0;

	for (int k = 0; k < n; k++)
		starts += !strcmp(lines[k].what, "start");
	return starts;
}

/* Whether the log has a WHAT line of slot SLOT with an attempt of at least
 * ATTEMPT. */
static bool logged(const struct sk *s, const char *what, int64_t slot, unsigned attempt)
{
	static struct sk_line lines[SK_MAX];
	int n = sk_read_log(s, lines, SK_MAX);

	for (int k = 0; k < n; k++)
		if (!strcmp(lines[k].what, what) && lines[k].slot_us == slot && lines[k].attempt >= attempt)
			return true;
	return false;
}

/* After a fault on run R: the slot's next attempt starts (its start, wall
 * clock ns; the line into S->rerun), or R had ended before the fault (0),
 * or neither in time (-1). */
static int64_t wait_rerun(struct sk *s, const struct sk_line *r)
{
	static struct sk_line lines[SK_MAX];
	int64_t end = procs_now_ms() + s->ttl_ms * 4 + 20000;

	for (;;) {
		int n = sk_read_log(s, lines, SK_MAX);
		for (int k = 0; k < n; k++)
			if (!strcmp(lines[k].what, "start") && lines[k].slot_us == r->slot_us &&
			    lines[k].attempt > r->attempt) {
				s->rerun = lines[k];
				s->has_rerun = true;
				return lines[k].ns;
			}
		if (logged(s, "end", r->slot_us, r->attempt))
			return 0;
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(10);
	}
}

/* The fault F on instance H, which runs R (its job's group: R's pid). */
static void fault_holder(struct sk *s, enum sk_fault f, int h, const struct sk_line *r)
{
	int64_t t0 = sk_wall_us() * 1000, t1 = -1;
	int st;

	switch (f) {
	case SK_KILL9:
		kill(s->c[h].pid, SIGKILL);
		instance_status(s, h, 5000);
		start_instance(s, h);
		t1 = wait_rerun(s, r);
		break;
	case SK_TERM:
		stop_instance(s, h, "term", true);
		start_instance(s, h);
		t1 = wait_rerun(s, r);
		break;
	case SK_FREEZE:
		kill(s->c[h].pid, SIGSTOP);
		kill(-r->pid, SIGSTOP);
		procs_sleep_ms(s->ttl_ms + 1000);
		kill(-r->pid, SIGCONT);
		kill(s->c[h].pid, SIGCONT);
		t1 = wait_rerun(s, r);
		if (procs_alive(r->pid))
			sk_fail(s, "freeze: the frozen run's job %d outlived its deadline", r->pid);
		break;
	case SK_CUT:
		proxy_set_mode(s->c[h].proxy, PROXY_CUT);
		t1 = wait_rerun(s, r);
		proxy_set_mode(s->c[h].proxy, PROXY_PASS);
		if (s->st.ncut < SK_MAX) {
			s->st.cut[s->st.ncut].term = r->term;
			s->st.cut[s->st.ncut].from_ns = t0;
			s->st.cut[s->st.ncut++].to_ns = sk_wall_us() * 1000;
		}
		break;
	default:
		break;
	}
	if (t1 == 0)
		s->st.no_run++;
	else if (t1 < 0)
		sk_fail(s, "%s: the slot's run (attempt %u, term %llu) was not run again in time", sk_fault_names[f],
			r->attempt, r->term);
	else if (s->st.nrerun < SK_MAX)
		s->st.rerun_ms[s->st.nrerun++] = (t1 - t0) / 1000000;
	if (t1 > 0 && procs_alive(r->pid))
		sk_fail(s, "%s: the lost run's job %d lives on after the rerun began", sk_fault_names[f], r->pid);
	/* Frozen and cut instances keep their schedule. */
	if ((f == SK_FREEZE || f == SK_CUT) && (st = instance_status(s, h, 0)) >= 0) {
		sk_fail(s, "%s: instance %d exited %d instead of keeping its schedule", sk_fault_names[f], h, st);
		start_instance(s, h);
	}
}

/* Waits (up to 30 s) for a moment between two runs: the latest slot's run
 * ended and the next slot at least 0.5 s away. Returns the moment (wall
 * clock µs), or -1. */
static int64_t quiet_moment(struct sk *s)
{
	int64_t end = procs_now_ms() + 30000;

	while (procs_now_ms() < end) {
		int64_t now = sk_wall_us(), slot = now - now % SK_PERIOD_US;
		if (now - slot <= SK_PERIOD_US - 500000 && logged(s, "end", slot, 1))
			return sk_wall_us();
		procs_sleep_ms(20);
	}
	return -1;
}

/* alldown: every instance stopped between two runs, for 1 to 3 whole slots;
 * all started again just after a slot, so that the latest slot missed is
 * the one in progress as they start. */
static void all_down(struct sk *s)
{
	int64_t d = quiet_moment(s), r;
	int k = 1 + (int)(rnd(s) % 3);

	if (d < 0) {
		sk_fail(s, "alldown: no moment between two runs in 30 s");
		return;
	}
	for (int i = 0; i < SK_INSTANCES; i++)
		kill(s->c[i].pid, SIGTERM);
	for (int i = 0; i < SK_INSTANCES; i++)
		stop_instance(s, i, "alldown", false);
	r = d - d % SK_PERIOD_US + k * SK_PERIOD_US + 300000 + (int64_t)(rnd(s) % 900) * 1000;
	printf("soak: alldown: down over %d slot%s\n", k, k > 1 ? "s" : "");
	fflush(stdout);
	sleep_until(r);
	s->down[s->ndown++] = (struct sk_down){d, sk_wall_us()};
	for (int i = 0; i < SK_INSTANCES; i++)
		start_instance(s, i);
}

static void episode(struct sk *s)
{
	enum sk_fault f = s->only >= 0 ? (enum sk_fault)s->only : (enum sk_fault)(rnd(s) % SK_FAULTS);
	struct sk_line r;
	int h;

	s->st.episodes++;
	s->st.per_fault[f]++;
	if (f == SK_ALLDOWN) {
		printf("soak: episode %d: alldown\n", s->st.episodes);
		fflush(stdout);
		all_down(s);
		return;
	}
	/* Half the time the last fault's rerun, if it runs on: its holder
	 * faulted too. Else a run that starts from now on, a moment into it.
	 * The job runs 1.5 s: a holder cut off stops it about 1.1 s (55% of
	 * the ttl) after its last renew, so a cut early in the run stops the
	 * job, one late in it lets the job end unrecorded (a 1 s job always
	 * ended first). */
	if (s->has_rerun && rnd(s) % 2 && !logged(s, "end", s->rerun.slot_us, s->rerun.attempt))
		r = s->rerun;
	else if (!wait_start(s, starts_seen(s), &r, 30000)) {
		sk_fail(s, "%s: no slot's run started in 30 s", sk_fault_names[f]);
		return;
	} else
		procs_sleep_ms((int)(rnd(s) % 1200));
	s->has_rerun = false;
	if ((h = holder_of(s, r.term)) < 0) {
		/* Ended already, or the row is not this term's any more. */
		s->st.no_run++;
		printf("soak: episode %d: %s: term %llu ended before the fault\n", s->st.episodes, sk_fault_names[f],
		       r.term);
		return;
	}
	printf("soak: episode %d: %s on instance %d (attempt %u, term %llu)\n", s->st.episodes, sk_fault_names[f], h,
	       r.attempt, r.term);
	fflush(stdout);
	fault_holder(s, f, h, &r);
}

static int usage(int rc)
{
	fprintf(stderr, "usage: soak-schedule [-e EPISODES | -d SECONDS] [-t TTL_MS] [-s SEED] [-f FAULT]\n"
			"  -f FAULT  inject only FAULT: kill9, freeze, cut, term or alldown\n");
	return rc;
}

/* Winds down between two runs (every slot before it ran), checks, prints
 * the table. Returns the exit status. */
static int finish(struct sk *s)
{
	int64_t d = quiet_moment(s);

	if (d < 0) {
		sk_fail(s, "wind-down: no moment between two runs in 30 s");
		d = sk_wall_us();
	}
	for (int i = 0; i < SK_INSTANCES; i++)
		kill(s->c[i].pid, SIGTERM);
	for (int i = 0; i < SK_INSTANCES; i++)
		stop_instance(s, i, "wind-down", false);
	s->down[s->ndown++] = (struct sk_down){d, INT64_MAX};
	sk_check(s);
	sk_table(s);
	/* The run history, for the logs kept: what each attempt recorded. */
	{
		char out[16], from[340], to[340];
		sql(s, "SELECT * FROM leaderrun_history WHERE lease='" SK_LEASE "' ORDER BY 1", out, sizeof(out));
		snprintf(from, sizeof(from), "%s/sql.out", s->dir);
		snprintf(to, sizeof(to), "%s/history.txt", s->dir);
		rename(from, to);
	}
	soak_run_quiet((char *[]){(char *)s->sandbox, "stop", s->dbdir, NULL}, NULL);
	if (s->st.failures)
		fprintf(stderr, "soak: logs kept in %s\n", s->dir);
	else
		soak_run_quiet((char *[]){"rm", "-rf", s->dir, NULL}, NULL);
	printf("soak: %d episodes, %d failed checks\n", s->st.episodes, s->st.failures);
	return s->st.failures ? 1 : 0;
}

/* The command line and the environment into S. Returns -1, or the exit
 * status when the soak is not to run. */
static int parse(int argc, char *argv[], struct sk *s, int *episodes, int *duration_s)
{
	unsigned long long seed = 0;
	int opt;

	s->ttl_ms = 2000;
	s->only = -1;
	while ((opt = getopt(argc, argv, "e:d:t:s:f:h")) != -1) {
		switch (opt) {
		case 'e':
			*episodes = atoi(optarg);
			break;
		case 'd':
			*duration_s = atoi(optarg);
			break;
		case 't':
			s->ttl_ms = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'f':
			for (int k = 0; k < SK_FAULTS; k++)
				if (!strcmp(optarg, sk_fault_names[k]))
					s->only = k;
			if (s->only < 0) {
				fprintf(stderr, "soak: -f: no fault named '%s'\n", optarg);
				return 64;
			}
			break;
		default:
			return usage(opt == 'h' ? 0 : 64);
		}
	}
	/* The ttl under the period: a lost run's lease runs out before the
	 * next slot, so its rerun can start. */
	if ((!*episodes && !*duration_s) || s->ttl_ms < 500 || s->ttl_ms > 2500)
		return usage(64);
	s->bin = getenv("LEADERRUN_BIN");
	s->sandbox = getenv("LR_SANDBOX");
	s->job = getenv("LR_SCHED_JOB");
	if (!s->bin || !s->sandbox || !s->job) {
		fprintf(stderr, "soak: LEADERRUN_BIN, LR_SANDBOX and LR_SCHED_JOB must be set (use scripts/soak)\n");
		return 64;
	}
	s->rng = seed ? seed : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 16;
	return -1;
}

int main(int argc, char *argv[])
{
	static struct sk s;
	int episodes = 0, duration_s = 0, rc = parse(argc, argv, &s, &episodes, &duration_s);
	char path[340];
	int64_t start;

	if (rc >= 0)
		return rc;
	printf("soak: seed %llu, %d instances, ttl %d ms, --schedule '@every 3s' --catch-up 30s, one server\n",
	       (unsigned long long)s.rng, SK_INSTANCES, s.ttl_ms);
	snprintf(s.dir, sizeof(s.dir), "/tmp/lrsoak.XXXXXX");
	if (!mkdtemp(s.dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(s.dbdir, sizeof(s.dbdir), "%s/db", s.dir);
	snprintf(s.log, sizeof(s.log), "%s/jobs.log", s.dir);
	if (soak_run_quiet((char *[]){(char *)s.sandbox, "start", s.dbdir, NULL}, NULL) != 0) {
		fprintf(stderr, "soak: %s start %s failed\n", s.sandbox, s.dbdir);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/env", s.dbdir);
	if (procs_load_env(path, set_setting, &s) < 0) {
		perror(path);
		return 2;
	}
	/* Before the first start every instance was down. */
	s.down[s.ndown++] = (struct sk_down){INT64_MIN, sk_wall_us()};
	for (int i = 0; i < SK_INSTANCES; i++) {
		if (!(s.c[i].proxy = proxy_start(atoi(s.port)))) {
			fprintf(stderr, "soak: cannot start a proxy\n");
			return 2;
		}
		start_instance(&s, i);
	}
	start = procs_now_ms();
	while ((episodes && s.st.episodes < episodes) || (duration_s && procs_now_ms() - start < duration_s * 1000LL))
		episode(&s);
	return finish(&s);
}
