/* --service: the service runs on every instance, one leads, and leading
 * (from --on-promote's start to --on-demote's end) never overlaps: checked
 * by service.sh's flock, as probe.sh checks a job's command. */
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"
#include "proxy.h"

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* The service's stand-in and the hooks that make it lead and stop. */
struct svc {
	char log[256], lock[256], dir[256];
	char promote[1536], demote[1024];
	char service[256];
};

static void svc_init(struct svc *s)
{
	snprintf(s->service, sizeof(s->service), "%s/service.sh", getenv("LR_SERVICE_DIR"));
	snprintf(s->log, sizeof(s->log), "%s", h_path("lead.log"));
	snprintf(s->lock, sizeof(s->lock), "%s", h_path("lead.lock"));
	snprintf(s->dir, sizeof(s->dir), "%s", h_dir());
	/* The leader's work in the background too (service.sh worker): it
	 * logs a violation if another term's still lives as it starts. */
	snprintf(s->promote, sizeof(s->promote),
		 "%s worker %s %s $LEADERRUN_TERM & "
		 "echo $LEADERRUN_TERM > %s/term.$LEADERRUN_SERVICE_PID; kill -USR1 $LEADERRUN_SERVICE_PID; "
		 "while [ ! -e %s/led.$LEADERRUN_SERVICE_PID ]; do sleep 0.01; done",
		 s->service, s->log, s->dir, s->dir, s->dir);
	snprintf(s->demote, sizeof(s->demote),
		 "kill -USR2 $LEADERRUN_SERVICE_PID; while [ -e %s/led.$LEADERRUN_SERVICE_PID ]; do sleep 0.01; done",
		 s->dir);
}

/* The instance whose service logged the last start: its index in P[N]. */
static int svc_leader(const struct svc *s, const struct h_proc *p, int n)
{
	const char *log = h_slurp(s->log), *last = NULL, *at = log;
	char path[512];
	int spid = 0, lpid = 0;

	while ((at = strstr(at, "start ")) != NULL)
		last = at++;
	cr_assert(last, "no instance leads:\n%s", log);
	cr_assert(sscanf(last, "start %*s %*s %d", &spid) == 1);
	snprintf(path, sizeof(path), "%s/service.%d", s->dir, spid);
	cr_assert(sscanf(h_slurp(path), "%*d %d", &lpid) == 1, "no %s", path);
	for (int i = 0; i < n; i++)
		if (p[i].pid == lpid)
			return i;
	cr_assert_fail("service %d of leaderrun %d is none of ours", spid, lpid);
	return -1;
}

/* The service of leaderrun LPID, from the files service.sh leaves; 0:
 * none yet. */
static pid_t svc_of(const struct svc *s, pid_t lpid)
{
	char cmd[512], out[64];

	snprintf(cmd, sizeof(cmd), "grep -l ' %d$' %s/service.* 2>/dev/null | head -1 | sed 's/.*service\\.//'",
		 (int)lpid, s->dir);
	if (h_run((const char *const[]){"/bin/sh", "-c", cmd, NULL}, out, sizeof(out)) != 0)
		return 0;
	return (pid_t)atoi(out);
}

/* Waits until the log holds N "start" lines. */
static void svc_wait_starts(const struct svc *s, int n, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;

	for (;;) {
		const char *at = h_slurp(s->log);
		int k = 0;
		while ((at = strstr(at, "start ")) != NULL) {
			k++;
			at++;
		}
		if (k >= n)
			return;
		cr_assert(h_now_ms() < end, "%d starts, not %d:\n%s", k, n, h_slurp(s->log));
		h_sleep_ms(50);
	}
}

static void svc_start(struct h_proc *p, const struct svc *s, const char *lease, const char *holder, const char *demote)
{
	LR(p, "-t", "2s", "-l", lease, "--holder", holder, "--service", "--on-promote", s->promote, "--on-demote",
	   demote ? demote : s->demote, "--", s->service, s->log, s->lock, s->dir);
}

/* Waits until HOLDER stands by for LEASE: its standby's row, alive (its
 * lock held) and as HEALTHY as said, so that it takes the lease when
 * offered, or is seen not to compete. */
static void svc_wait_standby(const char *lease, const char *holder, int healthy)
{
	for (int64_t end = h_now_ms() + 15000;
	     atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND holder = '%s' AND healthy = %d "
			"AND IS_USED_LOCK(lock_name) IS NOT NULL",
			lease, holder, healthy)) != 1;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "%s does not stand by", holder);
}

/* Waits until P holds LEASE (its row live). */
static void svc_wait_held(const char *lease, const struct h_proc *p)
{
	for (int64_t end = h_now_ms() + 15000;
	     strcmp(
		 h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease),
		 "") == 0;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the lease is not held:\n%s", h_slurp(p->err));
}

Test(service, leading_never_overlaps_across_release_sigkill_and_freeze)
{
	const char *lease = h_lease("svc");
	struct h_proc p[3];
	struct svc s;
	int lead;

	svc_init(&s);
	svc_start(&p[0], &s, lease, "A", NULL);
	svc_start(&p[1], &s, lease, "B", NULL);
	svc_start(&p[2], &s, lease, "C", NULL);
	svc_wait_starts(&s, 1, 15000);

	/* A planned hand-over: the leader demotes, another promotes. */
	lead = svc_leader(&s, p, 3);
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	svc_wait_starts(&s, 2, 15000);
	cr_assert(h_alive(p[lead].pid), "the released leader's leaderrun ended:\n%s", h_slurp(p[lead].err));

	/* The leader's leaderrun SIGKILLed: its watcher kills its service. */
	lead = svc_leader(&s, p, 3);
	kill(p[lead].pid, SIGKILL);
	h_wait(&p[lead], 5000);
	svc_wait_starts(&s, 3, 20000);

	/* The new leader frozen: its service is killed at the deadline, and
	 * only then does another lead. */
	lead = svc_leader(&s, p, 3);
	kill(p[lead].pid, SIGSTOP);
	svc_wait_starts(&s, 4, 20000);
	kill(p[lead].pid, SIGCONT);

	cr_assert_geq(h_probe_check(s.log, NULL, NULL, 0), 4);
	for (int i = 0; i < 3; i++) {
		kill(p[i].pid, SIGTERM);
		h_wait(&p[i], 10000);
	}
	cr_assert_geq(h_probe_check(s.log, NULL, NULL, 0), 4);
}

/* An instance with --priority P (and --preempt=1s when PREEMPT). */
static void svc_start_prio(struct h_proc *p, const struct svc *s, const char *lease, const char *holder,
			   const char *prio, bool preempt)
{
	LR(p, "-t", "2s", "-l", lease, "--holder", holder, "--priority", prio, preempt ? "--preempt=1s" : "-v",
	   "--service", "--on-promote", s->promote, "--on-demote", s->demote, "--", s->service, s->log, s->lock,
	   s->dir);
}

Test(service, a_preferred_instance_takes_over_and_fails_back_and_a_switch_over_moves_the_lead)
{
	const char *lease = h_lease("svc_prio");
	struct h_proc p[3], op;
	struct svc s;

	svc_init(&s);
	svc_start_prio(&p[1], &s, lease, "B", "1", false);
	svc_wait_starts(&s, 1, 15000);
	/* The favourite arrives: after a second waiting it preempts B, which
	 * demotes (its service runs on) before A promotes. */
	svc_start_prio(&p[0], &s, lease, "A", "10", true);
	svc_wait_starts(&s, 2, 15000);
	cr_assert_eq(svc_leader(&s, p, 2), 0);
	cr_assert(h_alive(p[1].pid), "the preempted instance ended:\n%s", h_slurp(p[1].err));
	/* A dies: B leads; A comes back, and the lead fails back to it. */
	kill(p[0].pid, SIGKILL);
	h_wait(&p[0], 5000);
	svc_wait_starts(&s, 3, 20000);
	cr_assert_eq(svc_leader(&s, p, 2), 1);
	svc_start_prio(&p[2], &s, lease, "A", "10", true);
	svc_wait_starts(&s, 4, 20000);
	cr_assert_eq(svc_leader(&s, p, 3), 2);
	/* A planned switch-over to B: B leads, until A's --preempt takes the
	 * lead back a second later. */
	for (int64_t end = h_now_ms() + 15000;
	     atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND holder = 'B' AND "
			"IS_USED_LOCK(lock_name) IS NOT NULL",
			lease)) != 1;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "B does not stand by");
	h_start(&op, (const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, "--to", "B", NULL}, NULL);
	cr_assert_eq(h_finish(&op, 30000), 0, "%s%s", h_slurp(op.out), h_slurp(op.err));
	svc_wait_starts(&s, 6, 20000);
	cr_assert_eq(svc_leader(&s, p, 3), 2);
	for (int i = 1; i < 3; i++) {
		kill(p[i].pid, SIGTERM);
		h_wait(&p[i], 10000);
	}
	cr_assert_geq(h_probe_check(s.log, NULL, NULL, 0), 6);
}

Test(service, a_standby_keeps_its_service_across_failovers)
{
	const char *lease = h_lease("svc_pid");
	struct h_proc p[2];
	struct svc s;
	int lead;
	pid_t standby_service = 0;

	svc_init(&s);
	svc_start(&p[0], &s, lease, "A", NULL);
	svc_wait_starts(&s, 1, 15000);
	svc_start(&p[1], &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	lead = svc_leader(&s, p, 2);
	cr_assert_eq(lead, 0);
	/* B's service, started at once although B stands by. */
	for (int i = 0; i < 50 && !standby_service; i++, h_sleep_ms(100))
		standby_service = svc_of(&s, p[1].pid);
	cr_assert_gt(standby_service, 0, "B's service does not run while it stands by");

	/* Two hand-overs: B leads, then A again; neither service restarts. */
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	svc_wait_starts(&s, 2, 15000);
	cr_assert_eq(svc_leader(&s, p, 2), 1);
	cr_assert(h_alive(standby_service), "B's service was restarted to lead");
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	svc_wait_starts(&s, 3, 15000);
	cr_assert(h_alive(standby_service), "B's service did not survive its demote");
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 3);
	for (int i = 0; i < 2; i++) {
		kill(p[i].pid, SIGTERM);
		cr_assert_eq(h_finish(&p[i], 10000), 0, "the service's own status, 0 on SIGTERM");
	}
}

Test(service, a_hanging_demote_gets_the_service_killed_and_exits_76)
{
	const char *lease = h_lease("svc_hang");
	struct h_proc p[2];
	struct svc s;
	int64_t t0;

	svc_init(&s);
	svc_start(&p[0], &s, lease, "A", "sleep 600");
	svc_wait_starts(&s, 1, 15000);
	svc_start(&p[1], &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	t0 = h_now_ms();
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	cr_assert_eq(h_finish(&p[0], 10000), 76, "%s", h_slurp(p[0].err));
	cr_assert(strstr(h_slurp(p[0].err), "--on-demote did not exit in time"), "%s", h_slurp(p[0].err));
	/* --kill-grace (500 ms at ttl 2s) after the revoke is noticed: about
	 * 1.5 s; bounded generously for a busy machine. */
	cr_assert_lt(h_now_ms() - t0, 8000);
	svc_wait_starts(&s, 2, 15000);
	cr_assert_eq(svc_leader(&s, p, 2), 1);
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 2);
	kill(p[1].pid, SIGTERM);
	h_finish(&p[1], 10000);
}

Test(service, a_failing_demote_gets_the_service_killed_and_exits_76)
{
	const char *lease = h_lease("svc_fail");
	struct h_proc p;
	struct svc s;

	svc_init(&s);
	svc_start(&p, &s, lease, "A", "exit 3");
	svc_wait_starts(&s, 1, 15000);
	kill(p.pid, SIGTERM);
	cr_assert_eq(h_finish(&p, 10000), 76, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "--on-demote exited with status 3"), "%s", h_slurp(p.err));
	/* Said as what happened, not as a lost lease: the lease was released. */
	cr_assert(strstr(h_slurp(p.err), "service killed: --on-demote failed or did not end in time"), "%s",
		  h_slurp(p.err));
	cr_assert_str_eq(
	    h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease), "",
	    "the lease was not released");
}

Test(service, a_failing_promote_steps_down_and_another_instance_leads)
{
	const char *lease = h_lease("svc_promote");
	struct h_proc bad, good;
	struct svc s;

	svc_init(&s);
	LR(&bad, "-t", "2s", "-l", lease, "--holder", "bad", "--service", "--on-promote", "exit 1", "--on-demote",
	   "true", "--", s.service, s.log, s.lock, s.dir);
	cr_assert(h_wait_file(bad.err, "--on-promote exited with status 1", 10000), "%s", h_slurp(bad.err));
	svc_start(&good, &s, lease, "good", NULL);
	svc_wait_starts(&s, 1, 15000);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){bad, good}, 2), 1);
	cr_assert(h_alive(bad.pid), "a failed promote ended the run:\n%s", h_slurp(bad.err));
	kill(bad.pid, SIGTERM);
	kill(good.pid, SIGTERM);
	cr_assert_eq(h_finish(&bad, 10000), 0);
	cr_assert_eq(h_finish(&good, 10000), 0);
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 1);
}

Test(service, sigterm_to_the_leader_demotes_and_releases_before_the_service_stops)
{
	const char *lease = h_lease("svc_term");
	struct h_proc p[2];
	struct svc s;

	svc_init(&s);
	svc_start(&p[0], &s, lease, "A", NULL);
	svc_wait_starts(&s, 1, 15000);
	svc_start(&p[1], &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	kill(p[0].pid, SIGTERM);
	cr_assert_eq(h_finish(&p[0], 10000), 0, "%s", h_slurp(p[0].err));
	/* Released, not left to expire: A's row is not live once A has exited
	 * (a clock-free check; a time bound misses on a busy machine). */
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name = '%s' AND holder = 'A' AND "
			       "expires_at > UTC_TIMESTAMP(6)",
			       lease),
			 "0", "the lease was left to expire");
	svc_wait_starts(&s, 2, 15000);
	cr_assert(strstr(h_slurp(s.log), "stop "), "A never stopped leading:\n%s", h_slurp(s.log));
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 2);
	kill(p[1].pid, SIGTERM);
	h_finish(&p[1], 10000);
}

Test(service, a_service_that_exits_ends_the_run_with_its_status)
{
	const char *lease = h_lease("svc_exit");
	struct h_proc p;

	LR(&p, "-t", "2s", "-l", lease, "--service", "--", "/bin/sh", "-c", "sleep 0.5; exit 7");
	cr_assert_eq(h_finish(&p, 10000), 7, "%s", h_slurp(p.err));
}

Test(service, the_role_is_the_same_in_the_file_the_metrics_and_the_logs)
{
	const char *lease = h_lease("svc_role");
	const char *metrics = h_path("m.prom"), *role = h_path("role");
	struct h_proc a, b;
	struct svc s;
	char line[256];

	svc_init(&s);
	LR(&a, "-t", "2s", "-l", lease, "--holder", "A", "--service", "--on-promote", s.promote, "--on-demote",
	   s.demote, "--metrics-file", metrics, "--role-file", role, "--log-format", "json", "-v", "--", s.service,
	   s.log, s.lock, s.dir);
	svc_wait_starts(&s, 1, 15000);
	cr_assert(h_wait_file(role, "leader 1", 5000), "%s", h_slurp(role));
	snprintf(line, sizeof(line), "leaderrun_role{lease=\"%s\",role=\"leader\"} 1", lease);
	cr_assert(h_wait_file(metrics, line, 5000), "%s", h_slurp(metrics));
	/* Each output is written as the role changes, in no set order. */
	cr_assert(h_wait_file(a.err, "\"role\":\"leader\",\"msg\":\"leader of term 1", 5000), "%s", h_slurp(a.err));
	LR(&b, "-t", "2s", "-l", lease, "--holder", "B", "--service", "--role-file", h_path("role-b"), "--", s.service,
	   s.log, s.lock, s.dir);
	cr_assert(h_wait_file(h_path("role-b"), "standby A", 5000), "%s", h_slurp(h_path("role-b")));
	kill(a.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_str_eq(h_slurp(role), "standby\n");
	snprintf(line, sizeof(line), "leaderrun_role{lease=\"%s\",role=\"leader\"} 0", lease);
	cr_assert(strstr(h_slurp(metrics), line), "%s", h_slurp(metrics));
	cr_assert(strstr(h_slurp(a.err), "\"role\":\"demoting\""), "%s", h_slurp(a.err));
	kill(b.pid, SIGTERM);
	h_finish(&b, 10000);
}

/* Cut off from the database, the leader demotes in time and stands by;
 * its release cannot reach the server and waits up to the deadline. Its
 * service must survive that: leading ended with the demote, and the
 * watcher has no deadline to keep any more. */
Test(service, a_cut_off_leader_demotes_and_its_service_survives_the_release_it_cannot_send)
{
	const char *lease = h_lease("svc_cut");
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc a, b;
	struct svc s;
	pid_t service = 0;

	cr_assert(proxy);
	svc_init(&s);
	h_leaderrun_via(&a, proxy_port(proxy),
			(const char *const[]){"-t", "2s", "-l", lease, "--holder", "A", "--service", "--on-promote",
					      s.promote, "--on-demote", s.demote, "--", s.service, s.log, s.lock, s.dir,
					      NULL});
	svc_wait_starts(&s, 1, 15000);
	service = svc_of(&s, a.pid);
	cr_assert_gt(service, 0);
	svc_start(&b, &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	svc_wait_starts(&s, 2, 15000);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1);
	/* Past A's deadline and its release's give-up time. */
	h_sleep_ms(2500);
	proxy_set_mode(proxy, PROXY_PASS);
	cr_assert(h_alive(a.pid), "the cut-off leader ended:\n%s", h_slurp(a.err));
	cr_assert(h_alive(service), "the cut-off leader's service was killed after its demote:\n%s", h_slurp(a.err));
	/* And it competes again: a standby, alive, in --status. */
	for (int64_t end = h_now_ms() + 15000;; h_sleep_ms(100)) {
		const char *argv[] = {h_bin(), "-d", h_dsn(), "--status", "--json", lease, NULL};
		char out[8192];
		if (h_run(argv, out, sizeof(out)) == 0 && strstr(out, "\"standbys\": [{\"holder\": \"A\""))
			break;
		cr_assert(h_now_ms() < end, "the cut-off leader never competes again:\n%s\n%s", out, h_slurp(a.err));
	}
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 2);
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_eq(h_finish(&b, 10000), 0);
}

/* man leaderrun(1), CONNECTIONS AND LOAD: a hinted waiter sends at most
 * two statements (a look and the blocked GET_LOCK) per ttl minus renew
 * interval: 0.2 a second at the default ttl of 15 s. A standing-by
 * service, with its standby's row and a health check, costs the same:
 * the row is written once, before the window. Counted per session in the
 * general log. */
Test(service, a_standby_service_waits_at_no_more_than_two_statements_a_cycle, .timeout = 120)
{
	const char *lease = h_lease("svc_cost");
	struct h_proc holder, f;
	const int window_s = 30;
	long n;

	LR(&holder, "-l", lease, "--service", "--", "sleep", "120");
	svc_wait_held(lease, &holder);
	LR(&f, "-l", lease, "--service", "--health-cmd", "true", "--", "sleep", "120");
	/* Its row written (healthy) and blocked on the hint before the window. */
	for (int64_t end = h_now_ms() + 15000;
	     atoi(h_sql("SELECT COUNT(*) FROM leaderrun_standby WHERE lease = '%s' AND healthy = 1 AND "
			"IS_USED_LOCK(lock_name) IS NOT NULL",
			lease)) != 1 ||
	     h_hint_waiters(lease) < 1;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the standby never waits on the hint:\n%s", h_slurp(f.err));
	n = h_follower_statements(lease, window_s);
	/* ttl 15 s, renew 5 s: a cycle is at least 10 s; one in flight at
	 * each end of the window. */
	cr_assert_leq(n, 2 * (window_s / 10 + 1), "%ld statements in %d s", n, window_s);
	cr_assert_geq(n, 2, "the standby never looked: %ld", n);
	printf("service standby: %ld statements in %d s\n", n, window_s);
	kill(f.pid, SIGTERM);
	kill(holder.pid, SIGTERM);
	h_finish(&f, 10000);
	h_finish(&holder, 10000);
}

/* The role file of a leader that can no longer lead says so: its watcher
 * kills the service and replaces the file, when leaderrun is SIGKILLed and
 * when it is frozen past the deadline. */
Test(service, the_role_file_says_standby_once_a_killed_or_frozen_leader_cannot_lead)
{
	const char *lease = h_lease("svc_rolefile");
	const char *role = h_path("role");
	struct h_proc a;
	int64_t t0;

	LR(&a, "-t", "2s", "-l", lease, "--service", "--role-file", role, "--", "sleep", "60");
	cr_assert(h_wait_file(role, "leader", 10000), "%s", h_slurp(role));
	kill(a.pid, SIGKILL);
	h_wait(&a, 5000);
	cr_assert(h_wait_file(role, "standby", 10000), "a SIGKILLed leader's file says: %s", h_slurp(role));

	LR(&a, "-t", "2s", "-l", lease, "--service", "--role-file", role, "--", "sleep", "60");
	cr_assert(h_wait_file(role, "leader", 10000), "%s", h_slurp(role));
	t0 = h_now_ms();
	kill(a.pid, SIGSTOP);
	cr_assert(h_wait_file(role, "standby", 10000), "a frozen leader's file says: %s", h_slurp(role));
	/* Not before the deadline: ttl 2 s less the margin and the grace. */
	cr_assert_geq(h_now_ms() - t0, 500);
	kill(a.pid, SIGCONT);
	h_finish(&a, 10000);
}

/* A --service instance whose --health-cmd passes while FLAG exists. */
static void svc_start_checked(struct h_proc *p, const struct svc *s, const char *lease, const char *holder,
			      const char *check)
{
	LR(p, "-t", "2s", "-l", lease, "--holder", holder, "--service", "--on-promote", s->promote, "--on-demote",
	   s->demote, "--health-cmd", check, "--health-interval", "200ms", "--health-retries", "2", "--", s->service,
	   s->log, s->lock, s->dir);
}

Test(service, an_unhealthy_standby_does_not_compete)
{
	const char *lease = h_lease("svc_sick_standby");
	struct h_proc a, b;
	struct svc s;
	char check[600];

	svc_init(&s);
	svc_start(&a, &s, lease, "A", NULL);
	svc_wait_starts(&s, 1, 15000);
	snprintf(check, sizeof(check), "test -e %s/b-healthy", s.dir);
	svc_start_checked(&b, &s, lease, "B", check);
	svc_wait_standby(lease, "B", 0);
	/* A steps back a second after a release: B would take the lease. */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0),
			     0);
		svc_wait_starts(&s, 2 + i, 15000);
		cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 0, "the unhealthy standby led:\n%s",
			     h_slurp(s.log));
	}
	/* Healthy: it competes, and leads at the next release. */
	fclose(fopen(h_path("b-healthy"), "w"));
	/* Passing from the next check on (200 ms). */
	svc_wait_standby(lease, "B", 1);
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	svc_wait_starts(&s, 4, 15000);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1, "%s", h_slurp(s.log));
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 4);
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	h_finish(&a, 10000);
	h_finish(&b, 10000);
}

Test(service, an_unhealthy_leader_steps_down_and_stays_out_until_it_passes)
{
	const char *lease = h_lease("svc_sick_leader");
	struct h_proc a, b;
	struct svc s;
	char check[600];

	svc_init(&s);
	fclose(fopen(h_path("a-healthy"), "w"));
	snprintf(check, sizeof(check), "test -e %s/a-healthy", s.dir);
	svc_start_checked(&a, &s, lease, "A", check);
	svc_wait_starts(&s, 1, 15000);
	svc_start(&b, &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	unlink(h_path("a-healthy"));
	/* Two failed checks (400 ms), the demote, the release: B leads. */
	svc_wait_starts(&s, 2, 15000);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1);
	cr_assert(h_wait_file(a.err, "--health-cmd failed 2 times in a row", 5000), "%s", h_slurp(a.err));
	/* A stays out while unhealthy, whatever the lease does. */
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	svc_wait_starts(&s, 3, 15000);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1);
	cr_assert(h_alive(a.pid));
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 3);
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_eq(h_finish(&b, 10000), 0);
}

Test(service, a_flapping_check_does_not_make_the_lease_flap)
{
	const char *lease = h_lease("svc_flap");
	struct h_proc a, b;
	struct svc s;
	char check[600];

	svc_init(&s);
	/* Passes, fails, passes, ...: never two failures in a row. */
	snprintf(check, sizeof(check), "f=%s/flip; if [ -e $f ]; then rm $f; exit 1; else : > $f; fi", s.dir);
	svc_start_checked(&a, &s, lease, "A", check);
	svc_wait_starts(&s, 1, 15000);
	svc_start(&b, &s, lease, "B", NULL);
	svc_wait_standby(lease, "B", 1);
	h_sleep_ms(4000);
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 1, "the lease flapped:\n%s", h_slurp(s.log));
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 0);
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	h_finish(&a, 10000);
	h_finish(&b, 10000);
}

Test(service, a_job_whose_check_fails_is_stopped_released_and_exits_76)
{
	const char *lease = h_lease("job_sick");
	const char *flag = h_path("healthy");
	struct h_proc p;
	char check[600];

	fclose(fopen(flag, "w"));
	snprintf(check, sizeof(check), "test -e %s", flag);
	LR(&p, "-t", "2s", "-l", lease, "--health-cmd", check, "--health-interval", "200ms", "--health-retries", "2",
	   "--", "sleep", "60");
	/* Held before the check fails: a standby would wait, not exit. */
	svc_wait_held(lease, &p);
	unlink(flag);
	cr_assert_eq(h_finish(&p, 10000), 76, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "--health-cmd failed"), "%s", h_slurp(p.err));
	cr_assert_str_eq(
	    h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease), "",
	    "the lease was not released");
}

/* A promote that never ends (issue 51, finding 2), with a worker of its
 * own in the background: A, with the promote and the timeout ARGS (NULL:
 * the default), holds the lease; B stands by. Returns when the promote
 * runs, its worker's pid in *WORKER, the time it was seen in *T0. */
static void svc_hanging_promote(struct h_proc *a, struct h_proc *b, const struct svc *s, const char *lease,
				const char *timeout, pid_t *worker, int64_t *t0)
{
	char promote[600];

	snprintf(promote, sizeof(promote), "sleep 600 & echo $! > %s/worker; wait", s->dir);
	if (timeout)
		LR(a, "-t", "2s", "-l", lease, "--holder", "A", "--service", "--promote-timeout", timeout,
		   "--on-promote", promote, "--on-demote", "true", "--", s->service, s->log, s->lock, s->dir);
	else
		LR(a, "-t", "2s", "-l", lease, "--holder", "A", "--service", "--on-promote", promote, "--on-demote",
		   "true", "--", s->service, s->log, s->lock, s->dir);
	cr_assert(h_wait_file(h_path("worker"), "\n", 15000), "the promote never ran:\n%s", h_slurp(a->err));
	*t0 = h_now_ms();
	*worker = (pid_t)atoi(h_slurp(h_path("worker")));
	cr_assert_gt(*worker, 0);
	svc_start(b, s, lease, "B", NULL);
}

/* --promote-timeout: a promote still running at D is killed with its
 * group (its background worker too), the instance steps down as after a
 * failed promote and stands by, and B leads: the lease was held with
 * nobody leading for D and a renew at most (ttl 2 s: renew 0.67 s). */
Test(service, a_promote_past_promote_timeout_is_killed_with_its_group_and_another_leads)
{
	const char *lease = h_lease("svc_promote_timeout");
	struct h_proc a, b;
	struct svc s;
	pid_t worker;
	int64_t t0, took;

	svc_init(&s);
	svc_hanging_promote(&a, &b, &s, lease, "1s", &worker, &t0);
	svc_wait_starts(&s, 1, 15000);
	took = h_now_ms() - t0;
	printf("--promote-timeout 1s: B led %lld ms after A's promote began\n", (long long)took);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1);
	cr_assert_geq(took, 700, "the promote was cut short after %lld ms", (long long)took);
	cr_assert_lt(took, 1000 + 667 + 2500, "B led %lld ms after A's promote began", (long long)took);
	cr_assert(h_wait_gone(worker, 2000), "the promote's worker outlived its promote");
	cr_assert(strstr(h_slurp(a.err), "--promote-timeout"), "%s", h_slurp(a.err));
	cr_assert(h_alive(a.pid), "a timed-out promote ended the run:\n%s", h_slurp(a.err));
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_eq(h_finish(&b, 10000), 0);
	cr_assert_eq(h_probe_check(s.log, NULL, NULL, 0), 1);
}

/* Issue 51, finding 2, as it was found: no --promote-timeout given, and a
 * promote that hangs held the lease for good (30 s seen), nobody leading.
 * The default (20 s) ends it. */
Test(service, a_hanging_promote_ends_at_the_default_promote_timeout)
{
	const char *lease = h_lease("svc_promote_hang");
	struct h_proc a, b;
	struct svc s;
	pid_t worker;
	int64_t t0, took;

	svc_init(&s);
	svc_hanging_promote(&a, &b, &s, lease, NULL, &worker, &t0);
	svc_wait_starts(&s, 1, 40000);
	took = h_now_ms() - t0;
	printf("the default --promote-timeout: B led %lld ms after A's promote began\n", (long long)took);
	cr_assert_eq(svc_leader(&s, (struct h_proc[]){a, b}, 2), 1);
	cr_assert_geq(took, 19500, "the promote was cut short after %lld ms", (long long)took);
	cr_assert_lt(took, 20000 + 667 + 2500, "B led %lld ms after A's promote began", (long long)took);
	cr_assert(h_wait_gone(worker, 2000), "the promote's worker outlived its promote");
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_eq(h_finish(&b, 10000), 0);
}

/* Issue 51, finding 3: B (--priority 5) leads; A (--priority 10
 * --preempt=2s) has a promote that exits 1. A preempted B every few
 * seconds for good (6 and 7 demotes a minute at the default ttl). Each
 * failed promote in a row doubles the wait before A preempts again (2 s x
 * 2^n): after the first preemption, waits of at least 4, 8, 16 and 32 s,
 * which sum to more than the window, so B demotes at most 4 times in 60 s
 * (the bound leaderrun(1) states: one preemption per back-off). */
Test(service, a_favourite_whose_promote_keeps_failing_backs_off_its_preemption)
{
	const char *lease = h_lease("svc_flap_preempt");
	const int window_ms = 60000;
	struct h_proc a, b;
	struct svc s;
	const char *at;
	int demotes = 0;

	svc_init(&s);
	svc_start_prio(&b, &s, lease, "B", "5", false);
	svc_wait_starts(&s, 1, 15000);
	LR(&a, "-t", "2s", "-l", lease, "--holder", "A", "--priority", "10", "--preempt=2s", "--service",
	   "--on-promote", "exit 1", "--on-demote", "true", "--", s.service, s.log, s.lock, s.dir);
	h_sleep_ms(window_ms);
	for (at = h_slurp(b.err); (at = strstr(at, "demoted in")) != NULL; at++)
		demotes++;
	printf("B demoted %d times in %d s\n", demotes, window_ms / 1000);
	cr_assert_geq(demotes, 1, "A never preempted:\n%s", h_slurp(a.err));
	cr_assert_leq(demotes, 4, "B demoted %d times in %d s:\n%s", demotes, window_ms / 1000, h_slurp(b.err));
	cr_assert(h_alive(a.pid) && h_alive(b.pid));
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	cr_assert_eq(h_finish(&a, 10000), 0);
	cr_assert_eq(h_finish(&b, 10000), 0);
	cr_assert_geq(h_probe_check(s.log, NULL, NULL, 0), 1);
}

/* Issue 51: a promote that starts a background worker (`worker &`, in the
 * promote's group, or one that left it with setsid). The worker leads as
 * the service does: PROMOTE starts it (its pid in DIR/worker.HOLDER) after
 * noting in DIR/overlap any other instance's worker still alive (a zombie
 * is dead), the strict check that no two terms' workers overlap. */
struct hooked {
	char dir[256], promote[1400];
};

static void hooked_init(struct hooked *k, bool setsid)
{
	snprintf(k->dir, sizeof(k->dir), "%s", h_dir());
	snprintf(k->promote, sizeof(k->promote),
		 "d=%s; for f in $d/worker.*; do [ -e \"$f\" ] || continue; p=$(cat $f); "
		 "if [ -r /proc/$p/status ] && ! grep -q '^State:.Z' /proc/$p/status; then "
		 "echo \"$LEADERRUN_HOLDER saw $f alive\" >> $d/overlap; fi; done; "
		 "%s sh -c \"echo \\$\\$ > $d/worker.tmp.$LEADERRUN_HOLDER; "
		 "mv $d/worker.tmp.$LEADERRUN_HOLDER $d/worker.$LEADERRUN_HOLDER; exec sleep 600\" & "
		 "echo $LEADERRUN_TERM > $d/promoted.$LEADERRUN_HOLDER",
		 k->dir, setsid ? "setsid" : "");
}

static void hooked_start(struct h_proc *p, const struct hooked *k, const char *lease, const char *holder)
{
	LR(p, "-t", "2s", "-v", "-l", lease, "--holder", holder, "--service", "--on-promote", k->promote, "--on-demote",
	   "true", "--", "sleep", "600");
}

/* The pid of HOLDER's worker, once it wrote it. */
static pid_t hooked_worker(const struct hooked *k, const char *holder)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/worker.%s", k->dir, holder);
	cr_assert(h_wait_file(path, NULL, 10000), "%s's worker never started", holder);
	return (pid_t)atoi(h_slurp(path));
}

/* A frozen or SIGKILLed leader: B promotes, and A's worker must be dead
 * by then (B's promote looked); with SIGKILL, dead within a bound. */
static void hooked_leader_stopped(int sig)
{
	const char *lease = h_lease(sig == SIGKILL ? "svc_worker_kill" : "svc_worker_stop");
	struct h_proc a, b;
	struct hooked k;
	char promoted[400];
	pid_t worker;

	hooked_init(&k, false);
	hooked_start(&a, &k, lease, "A");
	worker = hooked_worker(&k, "A");
	hooked_start(&b, &k, lease, "B");
	h_sleep_ms(500);
	kill(a.pid, sig);
	if (sig == SIGKILL)
		cr_assert(h_wait_gone(worker, 2000), "A's worker %d outlived A's SIGKILL", (int)worker);
	snprintf(promoted, sizeof(promoted), "%s/promoted.B", k.dir);
	cr_assert(h_wait_file(promoted, NULL, 15000), "B never promoted:\n%s", h_slurp(b.err));
	cr_assert(h_wait_file(h_path("worker.B"), NULL, 5000));
	cr_assert_str_eq(h_slurp(h_path("overlap")), "", "two terms' workers at once");
	/* Frozen, A cannot reap it: a zombie, dead all the same. */
	cr_assert(!h_alive(worker), "A's worker %d still works", (int)worker);
	if (sig == SIGSTOP) {
		kill(a.pid, SIGCONT);
		h_wait(&a, 10000);
	}
	kill(b.pid, SIGTERM);
	h_finish(&b, 10000);
}

Test(service, a_frozen_leaders_promote_worker_is_dead_before_the_next_promote)
{
	hooked_leader_stopped(SIGSTOP);
}

Test(service, a_sigkilled_leaders_promote_worker_dies_with_it)
{
	hooked_leader_stopped(SIGKILL);
}

/* A term ends when what its hooks started is gone, in their group or not
 * (setsid): the demote is said done, and the lease released, only then. */
static void hooked_demote_kills(bool setsid)
{
	const char *lease = h_lease(setsid ? "svc_worker_setsid" : "svc_worker_group");
	struct h_proc a, b;
	struct hooked k;
	pid_t worker;

	hooked_init(&k, setsid);
	hooked_start(&a, &k, lease, "A");
	worker = hooked_worker(&k, "A");
	hooked_start(&b, &k, lease, "B");
	h_sleep_ms(500);
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--release", lease, NULL}, NULL, 0), 0);
	cr_assert(h_wait_file(a.err, "demoted in", 10000), "%s", h_slurp(a.err));
	cr_assert(!h_alive(worker), "A's worker %d outlived its term:\n%s", (int)worker, h_slurp(a.err));
	cr_assert(h_wait_file(h_path("promoted.B"), NULL, 15000), "B never promoted:\n%s", h_slurp(b.err));
	cr_assert(h_wait_file(h_path("worker.B"), NULL, 5000));
	cr_assert_str_eq(h_slurp(h_path("overlap")), "", "two terms' workers at once");
	cr_assert(h_alive(a.pid), "A's run ended:\n%s", h_slurp(a.err));
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	h_finish(&a, 10000);
	h_finish(&b, 10000);
}

Test(service, a_promote_worker_in_the_hooks_group_dies_with_the_term)
{
	hooked_demote_kills(false);
}

Test(service, a_promote_worker_that_left_the_group_dies_with_the_term)
{
	hooked_demote_kills(true);
}

/* A service that exits as soon as its demote begins, the demote running
 * on after it: the demote's own exit decides, every time. */
static int svc_exits_in_demote(const char *demote_end, char *err, size_t errlen)
{
	const char *lease = h_lease("svc_exit_demote");
	char service[600], demote[600];
	struct h_proc p;
	int rc;

	snprintf(service, sizeof(service), "trap '' TERM; while [ ! -e %s/demoting ]; do sleep 0.01; done; exit 5",
		 h_dir());
	/* Well within --kill-grace (1 s at ttl 4 s). */
	snprintf(demote, sizeof(demote), "touch %s/demoting; sleep 0.3; %s", h_dir(), demote_end);
	LR(&p, "-t", "4s", "-v", "-l", lease, "--service", "--on-promote", "true", "--on-demote", demote, "--", "sh",
	   "-c", service);
	cr_assert(h_wait_file(p.err, "leader of term", 10000), "%s", h_slurp(p.err));
	kill(p.pid, SIGTERM);
	rc = h_finish(&p, 10000);
	snprintf(err, errlen, "%s", h_slurp(p.err));
	cr_assert(strstr(err, "service exited with status 5 during --on-demote"), "%s", err);
	cr_assert_str_eq(
	    h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease), "",
	    "the lease was not released");
	return rc;
}

Test(service, a_service_that_exits_during_a_good_demote_ends_with_its_status)
{
	char err[4096];

	cr_assert_eq(svc_exits_in_demote("true", err, sizeof(err)), 5, "%s", err);
	cr_assert(strstr(err, "demoted in"), "%s", err);
}

Test(service, a_service_that_exits_during_a_failing_demote_exits_76)
{
	char err[4096];

	cr_assert_eq(svc_exits_in_demote("exit 3", err, sizeof(err)), 76, "%s", err);
	cr_assert(strstr(err, "--on-demote exited with status 3"), "%s", err);
}

/* Review S2: the service exits during a demote that runs on; the watcher
 * must stay while the term is open, or a SIGKILL of leaderrun then leaves
 * the demote and a promote's `worker &` running for good. */
Test(service, a_sigkilled_leader_whose_service_exited_in_its_demote_takes_the_hooks_along)
{
	const char *lease = h_lease("svc_exit_demote_kill");
	char service[600], promote[600], demote[600];
	struct h_proc p;
	pid_t worker, hook;

	snprintf(service, sizeof(service), "trap '' TERM; while [ ! -e %s/demoting ]; do sleep 0.01; done; exit 5",
		 h_dir());
	snprintf(promote, sizeof(promote),
		 "d=%s; sh -c \"echo \\$\\$ > $d/w.tmp; mv $d/w.tmp $d/worker; exec sleep 600\" &", h_dir());
	snprintf(demote, sizeof(demote),
		 "d=%s; echo $$ > $d/d.tmp; mv $d/d.tmp $d/demote; touch $d/demoting; sleep 600", h_dir());
	LR(&p, "-t", "9s", "--kill-grace", "3s", "-v", "-l", lease, "--service", "--on-promote", promote, "--on-demote",
	   demote, "--", "sh", "-c", service);
	cr_assert(h_wait_file(p.err, "leader of term", 10000), "%s", h_slurp(p.err));
	cr_assert(h_wait_file(h_path("worker"), NULL, 5000), "no worker:\n%s", h_slurp(p.err));
	worker = (pid_t)atoi(h_slurp(h_path("worker")));
	kill(p.pid, SIGTERM);
	cr_assert(h_wait_file(p.err, "during --on-demote", 5000), "%s", h_slurp(p.err));
	hook = (pid_t)atoi(h_slurp(h_path("demote")));
	/* The passes after the service's exit, where the watcher went. */
	h_sleep_ms(300);
	cr_assert(h_alive(hook), "the demote ended early:\n%s", h_slurp(p.err));
	kill(p.pid, SIGKILL);
	h_wait(&p, 5000);
	cr_assert(h_wait_gone(worker, 3000), "the promote's worker %d outlived leaderrun", (int)worker);
	cr_assert(h_wait_gone(hook, 3000), "the demote %d outlived leaderrun", (int)hook);
}

/* Review S1: a hook's group number, free once the hook is reaped and its
 * group empty, may be taken by anyone's new group; neither leaderrun nor
 * its watcher may signal it then. In a pid namespace of its own (a user
 * namespace gives the right to set ns_last_pid), the promote's number is
 * handed to a new session (setsid) as soon as the promote was reaped;
 * leaderrun's SIGKILL, the watcher's kills done, must leave it alive. */
Test(service, a_reused_hook_group_number_is_never_signalled)
{
	const char *lease = h_lease("svc_reused_group");
	char script[3000];
	struct h_proc p;

	if (h_run((const char *const[]){"/usr/bin/unshare", "-Urpf", "--mount-proc", "true", NULL}, NULL, 0) != 0)
		cr_skip_test("no user and pid namespaces here");
	snprintf(script, sizeof(script),
		 "d=%s; %s -d '%s' -t 4s -v -l %s --service "
		 "--on-promote \"echo \\$\\$ > $d/p.tmp; mv $d/p.tmp $d/promote\" "
		 "--on-demote true -- sleep 600 2> $d/lr.err & lr=$!; "
		 "i=0; until grep -q 'leader of term' $d/lr.err; "
		 "do i=$((i+1)); [ $i -lt 1000 ] || exit 3; sleep 0.01; done; "
		 /* The promote reaped, its group empty: its number is free. */
		 "g=$(cat $d/promote); "
		 "i=0; while [ -e /proc/$g ]; do i=$((i+1)); [ $i -lt 1000 ] || exit 4; sleep 0.01; done; "
		 "echo $((g - 1)) > /proc/sys/kernel/ns_last_pid; "
		 "setsid sh -c \"touch $d/session; exec sleep 600\" & inn=$!; "
		 "i=0; until [ -e $d/session ]; do i=$((i+1)); [ $i -lt 1000 ] || exit 6; sleep 0.01; done; "
		 "kill -9 $lr; "
		 /* The watcher's kills done: no leaderrun process is left. */
		 "i=0; while cat /proc/[0-9]*/stat 2>/dev/null | "
		 "awk '$2 == \"(leaderrun)\" && $3 != \"Z\" {f = 1} END {exit !f}'; "
		 "do i=$((i+1)); [ $i -lt 500 ] || exit 5; sleep 0.01; done; "
		 /* A zombie is dead: killed, it waits for this shell's reap. */
		 "if grep -q '^State:.[^Z]' /proc/$inn/status; then v=alive; else v=killed; fi; "
		 "echo \"$v: promote $g, new session $inn\" > $d/verdict; kill -9 $inn 2>/dev/null; true",
		 h_dir(), h_bin(), h_dsn(), lease);
	h_start(&p, (const char *const[]){"unshare", "-Urpf", "--mount-proc", "sh", "-c", script, NULL}, NULL);
	cr_assert_eq(h_wait(&p, 30000), 0, "%s\n%s", h_slurp(p.err), h_slurp(h_path("lr.err")));
	cr_assert(strncmp(h_slurp(h_path("verdict")), "alive", 5) == 0, "%s\n%s", h_slurp(h_path("verdict")),
		  h_slurp(h_path("lr.err")));
}

/* Review C3: the service exits while a promote that ignores SIGTERM runs,
 * and --promote-timeout falls within the kill grace: the timeout acts
 * once, and kills the promote itself (it was said and counted on every
 * pass, the loop spinning, and the promote lived on to the grace's end). */
Test(service, a_promote_timeout_after_the_service_exited_acts_once)
{
	const char *lease = h_lease("svc_timeout_once");
	char service[600], promote[600];
	const char *at, *err;
	struct h_proc p;
	int said = 0;
	pid_t hook;

	snprintf(service, sizeof(service), "while [ ! -e %s/promoting ]; do sleep 0.01; done; exit 5", h_dir());
	snprintf(promote, sizeof(promote),
		 "trap '' TERM; echo $$ > %s/p.tmp; mv %s/p.tmp %s/promoting; while :; do sleep 0.05; done", h_dir(),
		 h_dir(), h_dir());
	LR(&p, "-t", "12s", "--kill-grace", "6s", "--promote-timeout", "1s", "-v", "-l", lease, "--service",
	   "--on-promote", promote, "--on-demote", "true", "--", "sh", "-c", service);
	cr_assert(h_wait_file(h_path("promoting"), NULL, 10000), "%s", h_slurp(p.err));
	hook = (pid_t)atoi(h_slurp(h_path("promoting")));
	/* Killed at the timeout, well before the grace's SIGKILL (6 s). */
	cr_assert(h_wait_gone(hook, 4000), "the promote %d outlived --promote-timeout:\n%s", (int)hook, h_slurp(p.err));
	h_finish(&p, 15000);
	err = h_slurp(p.err);
	for (at = err; (at = strstr(at, "--promote-timeout")) != NULL; at++)
		said++;
	cr_assert_eq(said, 1, "--promote-timeout said %d times:\n%.3000s", said, err);
}

HARNESS_MAIN
