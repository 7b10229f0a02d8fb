/* Observability as an operator sees it: the per-process metrics file while
 * holding, waiting and after exit; the fleet's metrics from --status; the
 * run history after exits, signals, losses and a vanished holder; and the
 * failures of both that must cost the command nothing. */
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

/* promtool check metrics on FILE (Debian package prometheus). */
static void promtool_accepts(const char *file)
{
	struct h_proc p;
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s'", file);
	h_start(&p, (const char *const[]){"sh", "-c", cmd, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 20000), 0, "promtool (scripts/install-deps test) rejected %s: %s %s\n%s", file,
		     h_slurp(p.out), h_slurp(p.err), h_slurp(file));
}

/* A command that runs until the file GO exists: held as long as the test
 * needs, not for a time that a busy machine may outlast. */
static const char *until_go(const char *go)
{
	static char cmd[700];

	snprintf(cmd, sizeof(cmd), "echo up; until [ -e '%s' ]; do sleep 0.05; done", go);
	return cmd;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Waits up to TIMEOUT_MS for FILE to show SAMPLE (a metric and its labels)
 * with a value of at least MIN: a file rewritten at every renew may be
 * past any one value by the time it is read. */
static bool wait_sample_at_least(const char *file, const char *sample, double min, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;

	for (;;) {
		const char *at = strstr(h_slurp(file), sample);
		if (at && strtod(at + strlen(sample), NULL) >= min)
			return true;
		if (h_now_ms() >= end)
			return false;
		h_sleep_ms(10);
	}
}

/* The words of a run's steps, pinned: JSON lines with their event name, and
 * the text that follows "lease NAME: " in text logs. */
Test(observe, a_runs_steps_are_one_json_line_each_with_event_and_words)
{
	struct h_proc p;
	const char *err;

	LR(&p, "-v", "--log-format", "json", "--holder", "pin", "--kill-grace", "1s", "-l", h_lease("words"), "--",
	   "sh", "-c", "sleep 30 & exit 3");
	cr_assert_eq(h_finish(&p, 20000), 3, "%s", h_slurp(p.err));
	err = h_slurp(p.err);
	cr_assert(strstr(err, "\"msg\":\"acquired term 1 as pin on "), "%s", err);
	cr_assert(strstr(err, "\",\"event\":\"acquired\"}\n"), "%s", err);
	cr_assert(strstr(err, "\"msg\":\"command exited with status 3\",\"event\":\"exited\"}\n"), "%s", err);
	cr_assert(strstr(err, "\"msg\":\"the command left processes behind; sending SIGTERM\"}\n"), "%s", err);
	cr_assert(strstr(err, "\"msg\":\"released term 1\",\"event\":\"released\"}\n"), "%s", err);
	LR(&p, "-v", "-l", h_lease("words"), "--", "sh", "-c", "kill -USR1 $$");
	cr_assert_eq(h_finish(&p, 20000), 128 + SIGUSR1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), ": command killed by signal USR1\n"), "%s", h_slurp(p.err));
}

Test(observe, metrics_file_while_holding_waiting_and_after_exit)
{
	struct h_proc holder, waiter;
	const char *lease = h_lease("met");
	char pattern[600], hold_file[600], wait_file[600], line[400];

	snprintf(pattern, sizeof(pattern), "%s/h-%%l.prom", h_dir());
	snprintf(hold_file, sizeof(hold_file), "%s/h-%s.prom", h_dir(), lease);
	snprintf(wait_file, sizeof(wait_file), "%s/w.prom", h_dir());
	LR(&holder, "-t", "3s", "-l", lease, "--metrics-file", pattern, "--", "sh", "-c", until_go(h_path("go")));
	snprintf(line, sizeof(line), "leaderrun_process_holds_lease{lease=\"%s\"} 1", lease);
	cr_assert(h_wait_file(hold_file, line, 10000), "%s", h_slurp(hold_file));
	LR(&waiter, "-t", "3s", "-w", "30s", "-l", lease, "--metrics-file", wait_file, "--", "true");
	snprintf(line, sizeof(line), "leaderrun_lease_waiting{lease=\"%s\"} 1", lease);
	cr_assert(h_wait_file(wait_file, line, 10000), "%s", h_slurp(wait_file));
	promtool_accepts(wait_file);
	/* At least one renew (every second) shows in the histogram. */
	snprintf(line, sizeof(line), "leaderrun_lease_renew_duration_seconds_count{lease=\"%s\"} ", lease);
	cr_assert(wait_sample_at_least(hold_file, line, 1, 10000), "%s", h_slurp(hold_file));
	cr_assert(strstr(h_slurp(hold_file), "leaderrun_lease_deadline_margin_seconds"), "%s", h_slurp(hold_file));
	promtool_accepts(hold_file);
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&waiter, 20000), 0, "%s", h_slurp(waiter.err));
	/* After exit: not held, the exit and the release are there. */
	snprintf(line, sizeof(line), "leaderrun_process_holds_lease{lease=\"%s\"} 0", lease);
	cr_assert(strstr(h_slurp(hold_file), line), "%s", h_slurp(hold_file));
	snprintf(line, sizeof(line), "leaderrun_command_last_exit_status{lease=\"%s\"} 0", lease);
	cr_assert(strstr(h_slurp(hold_file), line), "%s", h_slurp(hold_file));
	snprintf(line, sizeof(line), "leaderrun_lease_releases_total{lease=\"%s\"} 1", lease);
	cr_assert(strstr(h_slurp(hold_file), line), "%s", h_slurp(hold_file));
	snprintf(line, sizeof(line), "leaderrun_process_holds_lease{lease=\"%s\"} 0", lease);
	cr_assert(strstr(h_slurp(wait_file), line), "%s", h_slurp(wait_file));
	snprintf(line, sizeof(line), "leaderrun_lease_acquisitions_total{lease=\"%s\"} 1", lease);
	cr_assert(strstr(h_slurp(wait_file), line), "the waiter ran after the holder: %s", h_slurp(wait_file));
	promtool_accepts(hold_file);
}

Test(observe, two_processes_on_one_metrics_file_do_not_take_turns)
{
	struct h_proc a, b;
	const char *lease = h_lease("same");
	const char *file = h_path("same.prom");

	char held[300];

	snprintf(held, sizeof(held), "leaderrun_process_holds_lease{lease=\"%s\"} 1", lease);
	LR(&a, "-t", "3s", "-l", lease, "--metrics-file", file, "--", "sh", "-c", until_go(h_path("go")));
	cr_assert(h_wait_file(file, held, 10000), "%s", h_slurp(file));
	LR(&b, "-t", "3s", "-n", "-l", lease, "--metrics-file", file, "--", "true");
	cr_assert_eq(h_finish(&b, 20000), 75, "%s", h_slurp(b.err));
	cr_assert(strstr(h_slurp(b.err), "is written by another leaderrun"), "%s", h_slurp(b.err));
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&a, 20000), 0, "%s", h_slurp(a.err));
	cr_assert(strstr(h_slurp(file), "leaderrun_lease_releases_total"), "%s", h_slurp(file));
}

Test(observe, status_prometheus_shows_the_fleet_by_the_database_clock)
{
	struct h_proc p, holder;
	const char *ok = h_lease("ok"), *held = h_lease("held");
	const char *out = h_path("fleet.prom");
	char line[400];
	FILE *f;

	cr_assert_eq(run(&p, (const char *const[]){"-l", ok, "--", "true", NULL}), 0, "%s", h_slurp(p.err));
	LR(&holder, "-t", "5s", "-l", held, "--", "sh", "-c", until_go(h_path("go")));
	cr_assert(h_wait_file(holder.out, "up", 10000), "%s", h_slurp(holder.err));
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--format", "prometheus", NULL}), 0, "%s",
		     h_slurp(p.err));
	f = fopen(out, "w");
	fputs(h_slurp(p.out), f);
	fputc('\n', f);
	fclose(f);
	promtool_accepts(out);
	snprintf(line, sizeof(line), "leaderrun_lease_held{lease=\"%s\"} 1", held);
	cr_assert(strstr(h_slurp(out), line), "%s", h_slurp(out));
	snprintf(line, sizeof(line), "leaderrun_lease_held{lease=\"%s\"} 0", ok);
	cr_assert(strstr(h_slurp(out), line), "%s", h_slurp(out));
	snprintf(line, sizeof(line), "leaderrun_lease_last_success_timestamp_seconds{lease=\"%s\"} ", ok);
	cr_assert(strstr(h_slurp(out), line), "%s", h_slurp(out));
	snprintf(line, sizeof(line), "leaderrun_lease_holder_info{lease=\"%s\",holder=", held);
	cr_assert(strstr(h_slurp(out), line), "%s", h_slurp(out));
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 20000), 0);
}

Test(observe, history_records_exits_signals_losses_and_vanished_holders)
{
	struct h_proc p, lost, gone;
	const char *lease = h_lease("hist");
	const char *out;
	int open_rows = 0;

	cr_assert_eq(run(&p, (const char *const[]){"-l", lease, "--", "sh", "-c", "exit 3", NULL}), 3);
	cr_assert_eq(run(&p, (const char *const[]){"-l", lease, "--", "sh", "-c", "kill -9 $$", NULL}), 137);
	/* Lost: the row is taken from under the holder. */
	LR(&lost, "-t", "3s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 30");
	cr_assert(h_wait_file(lost.out, "up", 10000), "%s", h_slurp(lost.err));
	h_sql("UPDATE leaderrun_lease SET holder='thief', term=term+1, expires_at=UTC_TIMESTAMP(6) + INTERVAL 1 "
	      "SECOND WHERE name='%s'",
	      lease);
	cr_assert_eq(h_finish(&lost, 20000), 76, "%s", h_slurp(lost.err));
	h_sleep_ms(1200);
	/* Vanished: leaderrun itself is SIGKILLed. */
	LR(&gone, "-t", "2s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 30");
	cr_assert(h_wait_file(gone.out, "up", 10000), "%s", h_slurp(gone.err));
	/* Its run's row is written once the run has lasted 100 ms, by the
	 * history's own thread: killed before that, it would leave no trace
	 * to judge. */
	for (int64_t end = h_now_ms() + 10000; h_now_ms() < end; h_sleep_ms(20))
		if ((open_rows = atoi(h_sql("SELECT COUNT(*) FROM leaderrun_history h JOIN leaderrun_lease l ON "
					    "l.name = h.lease AND l.term = h.term WHERE h.lease='%s' AND "
					    "h.ended_at IS NULL",
					    lease))) == 1)
			break;
	cr_assert_eq(open_rows, 1, "no history row for the running command: %s", h_slurp(gone.err));
	kill(gone.pid, SIGKILL);
	h_wait(&gone, 5000);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	out = h_slurp(p.out);
	cr_assert(strstr(out, "\"outcome\": \"running\"") || strstr(out, "\"outcome\": \"vanished\""), "%s", out);
	h_sleep_ms(2500);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--json", NULL}), 0, "%s", h_slurp(p.err));
	out = h_slurp(p.out);
	cr_assert(strstr(out, "\"outcome\": \"vanished\""), "%s", out);
	cr_assert(strstr(out, "\"outcome\": \"lost\""), "%s", out);
	cr_assert(strstr(out, "\"outcome\": \"signaled\", \"exit_status\": null, \"signal\": 9"), "%s", out);
	cr_assert(strstr(out, "\"outcome\": \"exited\", \"exit_status\": 3"), "%s", out);
	cr_assert(strstr(out, "\"host\": "), "%s", out);
	/* Newest first. */
	cr_assert(strstr(out, "vanished") < strstr(out, "\"exited\""), "%s", out);
	cr_assert_eq(run(&p, (const char *const[]){"--history", lease, "--limit", "1", NULL}), 0);
	cr_assert_eq(count(h_slurp(p.out), "vanished"), 1, "%s", h_slurp(p.out));
	cr_assert(!strstr(h_slurp(p.out), "lost"), "one run only: %s", h_slurp(p.out));
}

Test(observe, history_keeps_the_last_n_runs)
{
	struct h_proc p;
	const char *lease = h_lease("keep");

	for (int i = 0; i < 5; i++)
		cr_assert_eq(run(&p, (const char *const[]){"-l", lease, "--history-keep", "2", "--", "true", NULL}), 0);
	/* The last run's pruning may land on the server after it exited. */
	for (int64_t end = h_now_ms() + 10000;
	     strcmp(h_sql("SELECT GROUP_CONCAT(term ORDER BY term) FROM leaderrun_history WHERE lease='%s'", lease),
		    "4,5") != 0;
	     h_sleep_ms(50))
		cr_assert(
		    h_now_ms() < end, "kept: %s",
		    h_sql("SELECT GROUP_CONCAT(term ORDER BY term) FROM leaderrun_history WHERE lease='%s'", lease));
	cr_assert_str_eq(h_sql("SELECT term FROM leaderrun_lease WHERE name='%s'", lease), "5");
}

Test(observe, metrics_file_that_cannot_be_written_costs_the_command_nothing)
{
	struct h_proc p;
	const char *lease = h_lease("nodir");
	char dir[600], file[700], cmd[900];

	/* A directory that appears while the command runs: one warning,
	 * then the recovery, and the failures counted. */
	snprintf(dir, sizeof(dir), "%s/later", h_dir());
	snprintf(file, sizeof(file), "%s/m.prom", dir);
	snprintf(cmd, sizeof(cmd), "sleep 1; mkdir '%s'; sleep 2.5; exit 7", dir);
	LR(&p, "-t", "3s", "-l", lease, "--metrics-file", file, "--", "sh", "-c", cmd);
	cr_assert_eq(h_finish(&p, 20000), 7, "%s", h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "--metrics-file: cannot write"), 1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "is written again"), "%s", h_slurp(p.err));
	snprintf(cmd, sizeof(cmd), "leaderrun_metrics_write_failures_total{lease=\"%s\"} ", lease);
	cr_assert(wait_sample_at_least(file, cmd, 1, 0), "the failed writes are not counted: %s", h_slurp(file));
	cr_assert(strstr(h_slurp(file), "leaderrun_command_last_exit_status"), "%s", h_slurp(file));
	/* Read-only: /proc takes no files. */
	LR(&p, "-l", lease, "--metrics-file", "/proc/lr.prom", "--", "sh", "-c", "exit 5");
	cr_assert_eq(h_finish(&p, 20000), 5, "%s", h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "cannot write"), 1, "%s", h_slurp(p.err));
	/* Full: a 64 KiB tmpfs that a file already fills (root, own mount
	 * namespace). */
	if (geteuid() == 0) {
		char full[1400], dsn_env[600];
		snprintf(dsn_env, sizeof(dsn_env), "LEADERRUN_DSN=%s", h_dsn());
		snprintf(full, sizeof(full),
			 "mkdir -p '%s/full' && mount -t tmpfs -o size=64k tmpfs '%s/full' && "
			 "dd if=/dev/zero of='%s/full/fill' bs=4k count=64 2>/dev/null; "
			 "exec \"$LEADERRUN_BIN\" -l %s --metrics-file '%s/full/m.prom' -- sh -c 'exit 9'",
			 h_dir(), h_dir(), h_dir(), lease, h_dir());
		h_start(&p,
			(const char *const[]){"unshare", "-m", "--propagation", h_unshare_propagation(), "sh", "-c",
					      full, NULL},
			(const char *const[]){dsn_env, NULL});
		cr_assert_eq(h_finish(&p, 20000), 9, "%s", h_slurp(p.err));
		cr_assert(strstr(h_slurp(p.err), "cannot write"), "%s", h_slurp(p.err));
	}
}

Test(observe, history_that_cannot_be_written_costs_the_command_nothing)
{
	struct h_proc p, locker;
	const char *lease = h_lease("nohist");
	char lock_sql[600];

	/* Table missing (a schema-3 database): the run goes on, one warning
	 * naming the fix. */
	h_sql("RENAME TABLE leaderrun_history TO leaderrun_history_away");
	LR(&p, "-l", lease, "--", "sh", "-c", "exit 4");
	cr_assert_eq(h_finish(&p, 20000), 4, "%s", h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "run history off"), 1, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "leaderrun --init"), "%s", h_slurp(p.err));
	/* The same for a short --no-wait run, whose row goes out on the
	 * lease's connection after the release. */
	LR(&p, "-n", "-l", lease, "--", "sh", "-c", "exit 4");
	cr_assert_eq(h_finish(&p, 20000), 4, "%s", h_slurp(p.err));
	h_sql("RENAME TABLE leaderrun_history_away TO leaderrun_history");
	cr_assert_eq(count(h_slurp(p.err), "run history off"), 1, "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT expires_at <= UTC_TIMESTAMP(6) FROM leaderrun_lease WHERE name='%s'", lease),
			 "1", "released: %s", h_slurp(p.err));
	/* Locked: another session holds the lease's history rows for longer
	 * than the lock wait; the start fails, the end writes the whole run. */
	snprintf(lock_sql, sizeof(lock_sql),
		 "BEGIN; SELECT COUNT(*) FROM leaderrun_history WHERE lease='%s' FOR UPDATE; SELECT SLEEP(2.5); "
		 "COMMIT;",
		 lease);
	h_start(&locker,
		(const char *const[]){"mariadb", "-uroot", "-S", getenv("LR_DB_SOCKET"), getenv("LR_DB_NAME"), "-e",
				      lock_sql, NULL},
		NULL);
	/* The rows locked: its SLEEP runs. */
	for (int64_t end = h_now_ms() + 10000;
	     strcmp(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(2.5)%%'"),
		    "0") == 0;
	     h_sleep_ms(20))
		cr_assert(h_now_ms() < end, "the locker never locked: %s", h_slurp(locker.err));
	LR(&p, "-t", "3s", "-l", lease, "--", "sh", "-c", "sleep 3; exit 6");
	cr_assert_eq(h_finish(&p, 20000), 6, "%s", h_slurp(p.err));
	h_finish(&locker, 10000);
	cr_assert(strstr(h_slurp(p.err), "run history: a write failed"), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "written again"), "%s", h_slurp(p.err));
	cr_assert_str_eq(h_sql("SELECT CONCAT(outcome, ' ', exit_status) FROM leaderrun_history WHERE lease='%s' "
			       "ORDER BY term DESC LIMIT 1",
			       lease),
			 "exited 6");
}
