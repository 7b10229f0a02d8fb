/* --slots N: at most N holders of one lease run at once, each in a slot of
 * its own with its own terms, and every safety rule holds per slot. Each
 * job holds an flock named for its slot (two jobs in one slot would see
 * each other) and counts the jobs running (more than N would be seen). */
#include <signal.h>

#include "harness.h"
#include "httpd.h"
#include "proxy.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

TestSuite(slots, .timeout = 120);

/* The job: "sh -c SCRIPT" that logs "start SLOT TERM NS RUNNING" and
 * "stop SLOT TERM NS" to LOG, holding DIR/slot-SLOT.lock throughout, and
 * logs "violation" if its slot's lock is taken or more than MAX run. */
static const char *job(char *buf, size_t len, int max, const char *secs)
{
	snprintf(buf, len,
		 "d=%s; exec 9>>$d/slot-$LEADERRUN_SLOT.lock; "
		 "flock -n 9 || { echo \"violation slot $LEADERRUN_SLOT\" >>$d/jobs.log; exit 99; }; "
		 "mkdir -p $d/running; touch $d/running/$$; n=$(ls $d/running | wc -l); "
		 "[ $n -le %d ] || echo \"violation running $n\" >>$d/jobs.log; "
		 "echo \"start $LEADERRUN_SLOT $LEADERRUN_TERM $(date +%%s%%N) $n\" >>$d/jobs.log; "
		 "sleep %s; rm -f $d/running/$$; "
		 "echo \"stop $LEADERRUN_SLOT $LEADERRUN_TERM $(date +%%s%%N)\" >>$d/jobs.log",
		 h_dir(), max, secs);
	return buf;
}

/* Counts the log's starts; fails on a violation, a slot out of range, or a
 * slot whose terms do not grow. *MOST: the most jobs seen running. */
static int check_log(unsigned slots, int *most)
{
	const char *log = h_slurp(h_path("jobs.log"));
	unsigned long long last[8] = {0};
	int starts = 0;

	cr_assert_null(strstr(log, "violation"), "jobs overlapped:\n%s", log);
	*most = 0;
	for (const char *l = log; (l = strstr(l, "start ")) != NULL; l++) {
		unsigned slot;
		unsigned long long term, ns;
		int n;
		cr_assert_eq(sscanf(l, "start %u %llu %llu %d", &slot, &term, &ns, &n), 4, "%s", log);
		cr_assert_lt(slot, slots, "slot %u of %u:\n%s", slot, slots, log);
		cr_assert_gt(term, last[slot], "slot %u: term %llu after %llu:\n%s", slot, term, last[slot], log);
		last[slot] = term;
		if (n > *most)
			*most = n;
		starts++;
	}
	return starts;
}

static int running_now(void)
{
	return atoi(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name='%s' AND expires_at > UTC_TIMESTAMP(6)",
			  h_lease("six")));
}

Test(slots, three_slots_and_six_contenders_run_three_at_once_never_more)
{
	struct h_proc c[6];
	const char *lease = h_lease("six");
	char script[1024];
	int most, running;

	job(script, sizeof(script), 3, "2");
	for (int i = 0; i < 6; i++)
		LR(&c[i], "--slots", "3", "-w", "60s", "-t", "3s", "--retry-interval", "200ms", "-l", lease, "--", "sh",
		   "-c", script);
	/* Three run while three wait. */
	cr_assert(h_wait_file(h_path("jobs.log"), "start", 10000));
	for (int64_t end = h_now_ms() + 10000; (running = running_now()) != 3 && h_now_ms() < end;)
		h_sleep_ms(50);
	cr_assert_eq(running, 3, "%s", h_slurp(h_path("jobs.log")));
	for (int i = 0; i < 6; i++)
		cr_assert_eq(h_finish(&c[i], 30000), 0, "%s", h_slurp(c[i].err));
	cr_assert_eq(check_log(3, &most), 6);
	cr_assert_eq(most, 3, "never three at once:\n%s", h_slurp(h_path("jobs.log")));
}

/* Slot, term and pid of a job that printed "SLOT TERM PID" first. */
static void job_ids(struct h_proc *p, unsigned *slot, unsigned long long *term, pid_t *pid)
{
	int pd = 0;

	cr_assert(h_wait_file(p->out, "\n", 10000), "%s", h_slurp(p->err));
	cr_assert_eq(sscanf(h_slurp(p->out), "%u %llu %d", slot, term, &pd), 3, "%s", h_slurp(p->out));
	*pid = pd;
}

#define SAY_IDS "echo $LEADERRUN_SLOT $LEADERRUN_TERM $$; exec sleep 60"

Test(slots, a_killed_holders_slot_is_taken_after_its_expiry_and_the_others_untouched)
{
	struct h_proc h[3], waiter;
	const char *lease = h_lease("kill");
	unsigned slot[3], wslot;
	unsigned long long term[3], wterm;
	pid_t pid[3], wpid;
	char expiry[64];

	for (int i = 0; i < 3; i++) {
		LR(&h[i], "--slots", "3", "-n", "-t", "3s", "-l", lease, "--", "sh", "-c", SAY_IDS);
		job_ids(&h[i], &slot[i], &term[i], &pid[i]);
	}
	cr_assert_neq(slot[0], slot[1]);
	cr_assert_neq(slot[1], slot[2]);
	cr_assert_neq(slot[0], slot[2]);
	LR(&waiter, "--slots", "3", "-w", "30s", "-t", "3s", "--retry-interval", "200ms", "-l", lease, "--", "sh", "-c",
	   SAY_IDS);
	h_sleep_ms(500);
	/* SIGKILL leaves the row as it was: only its expiry frees the slot. */
	snprintf(expiry, sizeof(expiry), "%s",
		 h_sql("SELECT expires_at FROM leaderrun_lease WHERE name='%s' AND slot=%u", lease, slot[1]));
	kill(h[1].pid, SIGKILL);
	h_wait(&h[1], 5000);
	cr_assert(h_wait_gone(pid[1], 5000), "the killed holder's command outlived it");
	job_ids(&waiter, &wslot, &wterm, &wpid);
	cr_assert_eq(wslot, slot[1], "the waiter took slot %u, not the freed %u", wslot, slot[1]);
	cr_assert_eq(wterm, term[1] + 1);
	cr_assert_str_eq(
	    h_sql("SELECT acquired_at >= '%s' FROM leaderrun_lease WHERE name='%s' AND slot=%u", expiry, lease, wslot),
	    "1", "slot %u taken before its expiry %s", wslot, expiry);
	/* The other two ran on, unaware. */
	for (int i = 0; i < 3; i += 2) {
		cr_assert(h_alive(pid[i]));
		cr_assert_eq(
		    strtoull(h_sql("SELECT term FROM leaderrun_lease WHERE name='%s' AND slot=%u", lease, slot[i]),
			     NULL, 10),
		    term[i]);
		kill(h[i].pid, SIGTERM);
		cr_assert_eq(h_finish(&h[i], 10000), 143, "%s", h_slurp(h[i].err));
	}
	kill(waiter.pid, SIGTERM);
	cr_assert_eq(h_finish(&waiter, 10000), 143, "%s", h_slurp(waiter.err));
}

Test(slots, a_partitioned_holder_stops_its_command_before_its_slot_can_be_taken)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc cut, other, waiter;
	const char *lease = h_lease("part");
	char script[1024];
	unsigned cslot, oslot;
	unsigned long long cterm, oterm;
	pid_t cpid, opid;
	int most;

	cr_assert_not_null(proxy);
	h_leaderrun_via(
	    &cut, proxy_port(proxy),
	    (const char *const[]){"--slots", "2", "-t", "2s", "-l", lease, "--", "sh", "-c",
				  "echo $LEADERRUN_SLOT $LEADERRUN_TERM $$; exec 9>>$0/slot-$LEADERRUN_SLOT.lock; "
				  "flock -n 9 || exit 99; exec sleep 60",
				  h_dir(), NULL});
	job_ids(&cut, &cslot, &cterm, &cpid);
	LR(&other, "--slots", "2", "-t", "2s", "-l", lease, "--", "sh", "-c", SAY_IDS);
	job_ids(&other, &oslot, &oterm, &opid);
	/* The waiter's job takes its slot's lock: were the cut-off command
	 * still alive in that slot, it would find it held. */
	job(script, sizeof(script), 2, "0.2");
	LR(&waiter, "--slots", "2", "-w", "30s", "-t", "2s", "--retry-interval", "200ms", "-l", lease, "--", "sh", "-c",
	   script);
	h_sleep_ms(300);
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	cr_assert_eq(h_finish(&cut, 10000), 76, "%s", h_slurp(cut.err));
	cr_assert_eq(h_finish(&waiter, 20000), 0, "%s", h_slurp(waiter.err));
	cr_assert_eq(check_log(2, &most), 1);
	cr_assert(strstr(h_slurp(h_path("jobs.log")), "start 0 ") || strstr(h_slurp(h_path("jobs.log")), "start 1 "));
	cr_assert(!h_alive(cpid), "the cut-off command still runs");
	cr_assert(h_alive(opid), "the other slot's command was touched");
	kill(other.pid, SIGTERM);
	cr_assert_eq(h_finish(&other, 10000), 143, "%s", h_slurp(other.err));
	proxy_set_mode(proxy, PROXY_PASS);
}

Test(slots, contenders_with_another_count_are_refused_naming_the_count_in_force)
{
	struct h_proc holder, p;
	const char *lease = h_lease("count");

	LR(&holder, "--slots", "3", "-t", "5s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 60");
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	LR(&p, "--slots", "2", "-w", "10s", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 64, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "--slots 3"), "%s", h_slurp(p.err));
	cr_assert_eq(strchr(h_slurp(p.err), '\n'), strrchr(h_slurp(p.err), '\n'), "one line: %s", h_slurp(p.err));
	/* The default, one slot, is a count like any other. */
	LR(&p, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 64, "%s", h_slurp(p.err));
	kill(holder.pid, SIGTERM);
	cr_assert_eq(h_finish(&holder, 10000), 143, "%s", h_slurp(holder.err));
	/* No slot held: the next count takes over, and the terms of the slots
	 * it keeps go on growing. */
	LR(&p, "--slots", "2", "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_SLOT $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name='%s' AND slots=2", lease), "3",
			 "every row, the unused third too, takes the new count");
	cr_assert_str_eq(h_sql("SELECT MAX(term) >= 1 FROM leaderrun_lease WHERE name='%s'", lease), "1");
	cr_assert_eq(h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--slots", "0", "--", "true", NULL}, NULL, 0),
		     64);
	cr_assert_eq(
	    h_run((const char *const[]){h_bin(), "-d", h_dsn(), "--slots", "2", "--once-per", "1h", "--", "true", NULL},
		  NULL, 0),
	    64);
}

Test(slots, one_slot_runs_on_the_row_of_old)
{
	struct h_proc p;
	const char *lease = h_lease("one");

	LR(&p, "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_SLOT $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "0 1\n");
	cr_assert_str_eq(h_sql("SELECT COUNT(*), MIN(slot), MIN(slots) FROM leaderrun_lease WHERE name='%s'", lease),
			 "1\t0\t1");
	LR(&p, "--slots", "1", "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_SLOT $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_slurp(p.out), "0 2\n");
	/* A table of one-slot leases reads as before: no SLOT column. */
	LR(&p, "--status", lease);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.out), "SLOT"), "%s", h_slurp(p.out));
}

Test(slots, status_check_release_and_history_act_per_slot)
{
	struct h_proc h[2], p;
	const char *lease = h_lease("ops");
	unsigned slot[2];
	unsigned long long term[2];
	pid_t pid[2];
	char t[32], s[16], out[8192], url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", httpd_start(h_path("http.log"), 200));
	for (int i = 0; i < 2; i++) {
		LR(&h[i], "--slots", "2", "-t", "6s", "-l", lease, "--notify", url, "--", "sh", "-c", SAY_IDS);
		job_ids(&h[i], &slot[i], &term[i], &pid[i]);
	}
	LR(&p, "--status", lease);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "SLOT"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "0 of 2") && strstr(h_slurp(p.out), "1 of 2"), "%s", h_slurp(p.out));
	LR(&p, "--status", "--format", "json", lease);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "\"slot\": 1, \"slots\": 2"), "%s", h_slurp(p.out));
	LR(&p, "--status", "--format", "prometheus");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	snprintf(out, sizeof(out), "leaderrun_lease_held{lease=\"%s\",slot=\"1\"} 1", lease);
	cr_assert(strstr(h_slurp(p.out), out), "%s", h_slurp(p.out));

	/* --check names the slot: the term of one slot is not the other's. */
	snprintf(t, sizeof(t), "%llu", term[0]);
	snprintf(s, sizeof(s), "%u", slot[0]);
	LR(&p, "--check", "--lease", lease, "--holder", "x", "--term", t, "--slot", s);
	cr_assert_eq(h_finish(&p, 10000), 1, "%s", h_slurp(p.err));
	snprintf(out, sizeof(out), "%s",
		 h_sql("SELECT holder FROM leaderrun_lease WHERE name='%s' AND slot=%u", lease, slot[0]));
	LR(&p, "--check", "--lease", lease, "--holder", out, "--term", t, "--slot", s);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	snprintf(s, sizeof(s), "%u", slot[1]);
	LR(&p, "--check", "--lease", lease, "--holder", out, "--term", t, "--slot", s);
	cr_assert_eq(h_finish(&p, 10000), 1, "%s", h_slurp(p.err));

	/* --release --slot revokes that slot alone. */
	snprintf(s, sizeof(s), "%u", slot[1]);
	LR(&p, "--release", lease, "--slot", s);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "revoked lease"), "%s", h_slurp(p.out));
	cr_assert_eq(h_finish(&h[1], 15000), 76, "%s", h_slurp(h[1].err));
	cr_assert(h_alive(pid[0]), "the other slot's command was stopped too");
	/* --release without --slot: every slot held. */
	LR(&p, "--release", lease);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&h[0], 15000), 76, "%s", h_slurp(h[0].err));

	/* The webhooks say which slot: terms count per slot. */
	for (int i = 0; i < 2; i++) {
		snprintf(out, sizeof(out), "\"event\":\"acquired\",\"lease\":\"%s\",\"slot\":%u,", lease, slot[i]);
		cr_assert(h_wait_file(h_path("http.log"), out, 5000), "no %s in:\n%s", out,
			  h_slurp(h_path("http.log")));
		snprintf(out, sizeof(out), "\"event\":\"lost\",\"lease\":\"%s\",\"slot\":%u,", lease, slot[i]);
		cr_assert(h_wait_file(h_path("http.log"), out, 5000), "no %s in:\n%s", out,
			  h_slurp(h_path("http.log")));
	}

	/* The history has a run a slot's term. */
	LR(&p, "--history", lease, "--json");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	snprintf(out, sizeof(out), "\"slot\": %u, \"term\": %llu", slot[1], term[1]);
	cr_assert(strstr(h_slurp(p.out), out), "%s", h_slurp(p.out));
	snprintf(out, sizeof(out), "\"slot\": %u, \"term\": %llu", slot[0], term[0]);
	cr_assert(strstr(h_slurp(p.out), out), "%s", h_slurp(p.out));
}

Test(slots, a_slot_past_the_count_is_out_of_reach_of_older_builds)
{
	struct h_proc holder, p;
	const char *lease = h_lease("shrink");
	char before[32];

	/* Two slots once, then one: slot 1's row stays (its terms), past the
	 * count. */
	LR(&p, "--slots", "2", "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	LR(&holder, "-t", "5s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 60");
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	cr_assert_str_eq(h_sql("SELECT GROUP_CONCAT(CONCAT(slot, ':', slots) ORDER BY slot) FROM leaderrun_lease "
			       "WHERE name='%s'",
			       lease),
			 "0:1,1:1");
	/* An acquire as leaderrun 0.2 (schema 4) sends it, naming no slot,
	 * while this build holds slot 0: it must match nothing. */
	cr_assert_str_eq(h_sql("UPDATE leaderrun_lease SET holder='old', term=LAST_INSERT_ID(term+1), "
			       "expires_at=UTC_TIMESTAMP(6) + INTERVAL 5 SECOND WHERE name='%s' AND expires_at <= "
			       "UTC_TIMESTAMP(6) AND (paused_until IS NULL OR paused_until <= UTC_TIMESTAMP(6)) AND "
			       "@@global.read_only = 0; SELECT ROW_COUNT()",
			       lease),
			 "0");
	/* Nor is it anybody's to release. */
	LR(&p, "--release", lease, "--slot", "1");
	cr_assert_eq(h_finish(&p, 10000), 1, "%s", h_slurp(p.err));
	cr_assert(h_alive(holder.pid));
	kill(holder.pid, SIGTERM);
	cr_assert_eq(h_finish(&holder, 10000), 143, "%s", h_slurp(holder.err));
	/* Back to two: slot 1 is free again, and its term goes on. */
	snprintf(before, sizeof(before), "%s",
		 h_sql("SELECT term FROM leaderrun_lease WHERE name='%s' AND slot=1", lease));
	LR(&p, "--slots", "2", "-n", "-l", lease, "--", "sh", "-c", "sleep 1 & echo $LEADERRUN_SLOT; wait");
	LR(&holder, "--slots", "2", "-n", "-l", lease, "--", "sh", "-c", "sleep 1 & echo $LEADERRUN_SLOT; wait");
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	cr_assert_eq(h_finish(&holder, 10000), 0, "%s", h_slurp(holder.err));
	cr_assert_eq(atoi(h_slurp(p.out)) + atoi(h_slurp(holder.out)), 1, "slots %s and %s", h_slurp(p.out),
		     h_slurp(holder.out));
	cr_assert_eq(strtoull(h_sql("SELECT term FROM leaderrun_lease WHERE name='%s' AND slot=1", lease), NULL, 10),
		     strtoull(before, NULL, 10) + 1);
}
