/* What operators reach for: --status, --release, --check, --min-hold,
 * pings and webhooks (against a real HTTP receiver on loopback), JSON logs
 * and the readiness file. */
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"
#include "httpd.h"

HARNESS_MAIN

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

static int run(struct h_proc *p, const char *const args[])
{
	h_leaderrun(p, args);
	return h_finish(p, 30000);
}

Test(operator, status_lists_leases_and_json_has_the_fields)
{
	struct h_proc holder, p;
	const char *lease = h_lease("st");
	char job[600];

	/* Held until the statuses are read, not for a time a busy machine
	 * may outlast. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go"));
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	cr_assert_eq(run(&p, (const char *const[]){"--status", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "LEASE"), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), lease), "%s", h_slurp(p.out));
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "\"state\": \"held\""), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"expires_in_ms\": "), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"term\": "), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"holder\": \""), "%s", h_slurp(p.out));
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
	cr_assert_eq(run(&p, (const char *const[]){"--status", "--json", lease, NULL}), 0);
	cr_assert(strstr(h_slurp(p.out), "\"state\": \"free\""), "%s", h_slurp(p.out));
	cr_assert(strstr(h_slurp(p.out), "\"last_exit\": 0"), "%s", h_slurp(p.out));
}

Test(operator, status_of_an_unknown_lease_exits_1)
{
	struct h_proc p;
	cr_assert_eq(run(&p, (const char *const[]){"--status", "no-such-lease-anywhere", NULL}), 1);
	cr_assert(strstr(h_slurp(p.err), "no lease named"), "%s", h_slurp(p.err));
}

Test(operator, release_stops_the_holder_and_the_next_term_is_larger)
{
	struct h_proc holder, p, next;
	const char *lease = h_lease("rel");
	unsigned long long t1, t2;

	LR(&holder, "-t", "3s", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM; exec sleep 30");
	cr_assert(h_wait_file(holder.out, "\n", 10000));
	sscanf(h_slurp(holder.out), "%llu", &t1);
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.out), "held by"), "%s", h_slurp(p.out));
	cr_assert_eq(h_finish(&holder, 5000), 76, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.err), ": error: lease revoked by 'leaderrun --release'; sending SIGTERM to the "
					      "command, SIGKILL in "),
		  "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(holder.err), ": error: command stopped: lease revoked (term "), "%s",
		  h_slurp(holder.err));
	LR(&next, "-n", "-l", lease, "--", "sh", "-c", "echo $LEADERRUN_TERM");
	cr_assert_eq(h_finish(&next, 10000), 0, "%s", h_slurp(next.err));
	sscanf(h_slurp(next.out), "%llu", &t2);
	cr_assert_gt(t2, t1);
}

Test(operator, check_inside_the_command_follows_the_lease)
{
	struct h_proc holder, p;
	const char *lease = h_lease("chk");
	char script[1024], pwfile[300];
	FILE *f;

	/* The command gets no password; --check brings its own. */
	snprintf(pwfile, sizeof(pwfile), "%s", h_path("pw"));
	f = fopen(pwfile, "w");
	fputs(getenv("LR_DB_PASSWORD"), f);
	fclose(f);
	snprintf(script, sizeof(script),
		 "%s --password-file %s --check && echo first-ok; "
		 "while [ ! -e %s ]; do sleep 0.05; done; "
		 "if %s --password-file %s --check; then echo second-ok; else echo second-lost; fi; sleep 5",
		 h_bin(), pwfile, h_path("go"), h_bin(), pwfile);
	LR(&holder, "-t", "3s", "-l", lease, "--", "sh", "-c", script);
	cr_assert(h_wait_file(holder.out, "first-ok", 10000), "%s\n%s", h_slurp(holder.out), h_slurp(holder.err));
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0);
	f = fopen(h_path("go"), "w");
	fclose(f);
	cr_assert(h_wait_file(holder.out, "second-", 10000), "%s", h_slurp(holder.out));
	cr_assert(strstr(h_slurp(holder.out), "second-lost"), "%s", h_slurp(holder.out));
	h_finish(&holder, 10000);
	/* Explicit arguments instead of the environment. */
	cr_assert_eq(
	    run(&p, (const char *const[]){"--check", "--lease", lease, "--holder", "nobody", "--term", "1", NULL}), 1);
}

Test(operator, min_hold_keeps_a_fast_job_from_running_twice)
{
	struct h_proc p;
	const char *lease = h_lease("cron");

	cr_assert_eq(run(&p, (const char *const[]){"-n", "--min-hold", "3s", "-l", lease, "--", "true", NULL}), 0, "%s",
		     h_slurp(p.err));
	/* A host whose cron fired a little late skips. */
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", lease, "--", "sh", "-c", "echo ran-twice", NULL}), 75);
	cr_assert_str_eq(h_slurp(p.out), "");
	/* Until the minimum hold has passed, by the server's clock. */
	for (int64_t end = h_now_ms() + 15000;
	     strcmp(h_sql("SELECT COUNT(*) FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)",
			  lease),
		    "0") != 0;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the minimum hold never ended");
	cr_assert_eq(run(&p, (const char *const[]){"-n", "-l", lease, "--", "true", NULL}), 0, "%s", h_slurp(p.err));
}

Test(operator, ping_start_and_exit_status_only_from_the_leader)
{
	struct h_proc holder, loser;
	const char *lease = h_lease("ping");
	char url[128], job[600];
	int port = httpd_start(h_path("http.log"), 200);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ping/abc", port);
	/* Held until the loser has tried, however long that takes. */
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done; exit 3", h_path("go"));
	LR(&holder, "--ping", url, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	LR(&loser, "--ping", url, "-n", "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&loser, 10000), 75);
	fclose(fopen(h_path("go"), "w"));
	cr_assert_eq(h_finish(&holder, 20000), 3, "%s", h_slurp(holder.err));
	cr_assert(strstr(h_slurp(h_path("http.log")), "GET /ping/abc/start"), "%s", h_slurp(h_path("http.log")));
	cr_assert(strstr(h_slurp(h_path("http.log")), "GET /ping/abc/3"), "%s", h_slurp(h_path("http.log")));
	/* Two requests, both the leader's. */
	{
		int lines = 0;
		for (const char *s = h_slurp(h_path("http.log")); *s; s++)
			lines += *s == '\n';
		cr_assert_eq(lines, 2, "%s", h_slurp(h_path("http.log")));
	}
}

Test(operator, ping_fail_when_the_lease_is_lost)
{
	struct h_proc holder, p;
	const char *lease = h_lease("pingfail");
	char url[128];
	int port = httpd_start(h_path("http.log"), 200);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hc", port);
	LR(&holder, "--ping", url, "-t", "1s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 30");
	cr_assert(h_wait_file(holder.out, "up", 10000));
	cr_assert_eq(run(&p, (const char *const[]){"--release", lease, NULL}), 0);
	cr_assert_eq(h_finish(&holder, 20000), 76);
	cr_assert(strstr(h_slurp(h_path("http.log")), "GET /hc/fail"), "%s", h_slurp(h_path("http.log")));
	/* /fail is the last word: the killed command's status does not follow. */
	cr_assert_null(strstr(h_slurp(h_path("http.log")), "GET /hc/137"), "%s", h_slurp(h_path("http.log")));
}

Test(operator, notify_posts_json_events)
{
	struct h_proc p;
	char url[128], url2[128];
	int port = httpd_start(h_path("http.log"), 200), port2 = httpd_start(h_path("http2.log"), 200);
	const char *log;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	snprintf(url2, sizeof(url2), "http://127.0.0.1:%d/second", port2);
	cr_assert_eq(run(&p, (const char *const[]){"--notify", url, "--notify", url2, "-l", h_lease("hook"), "--", "sh",
						   "-c", "exit 4", NULL}),
		     4, "%s", h_slurp(p.err));
	log = h_slurp(h_path("http.log"));
	cr_assert(strstr(log, "POST /hook {\"event\":\"acquired\""), "%s", log);
	cr_assert(strstr(log, "\"event\":\"exited\""), "%s", log);
	cr_assert(strstr(log, "\"exit_status\":4"), "%s", log);
	cr_assert(strstr(log, "\"event\":\"released\""), "%s", log);
	cr_assert(strstr(log, "\"duration_ms\":"), "%s", log);
	cr_assert(strstr(log, "\"host\":"), "%s", log);
	cr_assert(strstr(log, "\"ts\":\""), "%s", log);
	cr_assert(strstr(log, "\"holder\":"), "%s", log);
	cr_assert(strstr(h_slurp(h_path("http2.log")), "\"event\":\"released\""), "second URL missed");
}

Test(operator, failing_receiver_never_changes_the_exit_status_nor_leaks_secrets)
{
	struct h_proc p;
	char url[160];
	int port = httpd_start(h_path("http.log"), 500);

	snprintf(url, sizeof(url), "http://user:s3cretpw@127.0.0.1:%d/hook?token=s3crettoken", port);
	cr_assert_eq(run(&p, (const char *const[]){"--notify", url, "-l", h_lease("hook500"), "--", "true", NULL}), 0);
	cr_assert(strstr(h_slurp(p.err), "HTTP 500"), "%s", h_slurp(p.err));
	cr_assert_null(strstr(h_slurp(p.err), "s3cret"), "secret logged: %s", h_slurp(p.err));
}

Test(operator, json_logs_one_object_per_line)
{
	struct h_proc p;
	const char *err;

	cr_assert_eq(
	    run(&p, (const char *const[]){"-v", "--log-format", "json", "-l", h_lease("jl"), "--", "true", NULL}), 0);
	err = h_slurp(p.err);
	cr_assert(strstr(err, "\"event\":\"acquired\""), "%s", err);
	cr_assert(strstr(err, "\"event\":\"released\""), "%s", err);
	for (const char *line = err; *line; line = strchr(line, '\n') + 1) {
		cr_assert_eq(*line, '{', "not a JSON object: %s", line);
		cr_assert(strstr(line, "\"ts\":") && strstr(line, "\"level\":") && strstr(line, "\"msg\":") &&
			      strstr(line, "\"lease\":"),
			  "%s", line);
		if (!strchr(line, '\n'))
			break;
	}
}

Test(operator, ready_file_exists_only_while_the_command_runs)
{
	struct h_proc p, holder;
	const char *ready = h_path("ready"), *lease = h_lease("ready"), *go = h_path("go");
	char job[700];
	struct stat st;
	FILE *f;

	/* A stale file, as a SIGKILLed leaderrun leaves it, goes at start:
	 * a follower is not ready. The holder's job lasts until the follower
	 * has been seen waiting (30 s at most). */
	snprintf(job, sizeof(job),
		 "echo up; i=0; until [ -e '%s' ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i + 1)); done", go);
	LR(&holder, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(holder.out, "up", 10000));
	f = fopen(ready, "w");
	fclose(f);
	snprintf(job, sizeof(job), "echo up; until [ -e '%s' ]; do sleep 0.05; done", h_path("go2"));
	LR(&p, "-v", "--ready-file", ready, "-l", lease, "--", "sh", "-c", job);
	cr_assert(h_wait_file(p.err, "waiting: held by", 10000), "%s", h_slurp(p.err));
	cr_assert_neq(stat(ready, &st), 0, "a waiting follower looks ready");
	fclose(fopen(go, "w"));
	cr_assert_eq(h_finish(&holder, 10000), 0);
	cr_assert(h_wait_file(p.out, "up", 10000));
	/* Written right after the spawn: the command may print first. It
	 * runs until seen. */
	cr_assert(h_wait_file(ready, NULL, 10000), "no ready file while the command runs");
	fclose(fopen(h_path("go2"), "w"));
	cr_assert_eq(h_finish(&p, 10000), 0);
	cr_assert_neq(stat(ready, &st), 0, "ready file left behind");
}

/* Runs the bash completion for the words of LINE (ending in the word being
 * completed) and returns the candidates, space separated. */
static const char *complete(const char *line)
{
	char script[2048];
	struct h_proc p;

	snprintf(script, sizeof(script),
		 "source /usr/share/bash-completion/bash_completion; source \"$LR_COMPLETION\"; "
		 "COMP_LINE='%s'; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< \"$COMP_LINE\"; "
		 "[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
		 "_leaderrun; echo \"${COMPREPLY[*]}\"",
		 line);
	h_start(&p, (const char *const[]){"bash", "-c", script, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	return h_slurp(p.out);
}

Test(operator, bash_completion_knows_options_and_their_values)
{
	cr_assert(strstr(complete("leaderrun --min"), "--min-hold"), "%s", complete("leaderrun --min"));
	cr_assert(strstr(complete("leaderrun --ssl-mode VERIFY_"), "VERIFY_IDENTITY"), "%s",
		  complete("leaderrun --ssl-mode VERIFY_"));
	cr_assert(strstr(complete("leaderrun --log-format j"), "json"), "%s", complete("leaderrun --log-format j"));
	/* After "--" it completes commands. */
	cr_assert(strstr(complete("leaderrun -l x -- sleep"), "sleep"), "%s", complete("leaderrun -l x -- sleep"));
}

/* Issue 27: a deploy script runs --init on every start, as the
 * application's own user (sql/grants.sql: no CREATE, no ALTER). On a
 * table that is current there is nothing to do and nothing to deny. */
Test(operator, init_by_the_application_user_on_a_current_table_exits_0_and_says_current)
{
	struct h_proc p;

	cr_assert_eq(run(&p, (const char *const[]){"--init", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "is current"), "%s", h_slurp(p.err));
}

/* Only a table to create or upgrade needs the privileges, and the one
 * error line says which privilege, on which table. */
static void assert_init_denied(const char *table, const char *privilege, const char *on)
{
	struct h_proc p;
	char want[256];
	const char *e;

	cr_assert_eq(run(&p, (const char *const[]){"--table", table, "--init", NULL}), 77, "%s", h_slurp(p.err));
	e = h_slurp(p.err);
	snprintf(want, sizeof(want), "%s on %s.%s;", privilege, getenv("LR_DB_NAME"), on);
	cr_assert(strstr(e, want), "stderr lacks '%s':\n%s", want, e);
	cr_assert_eq(strchr(e, '\n'), e + strlen(e) - 1, "want exactly one line:\n%s", e);
}

Test(operator, init_by_the_application_user_names_the_privilege_a_change_needs)
{
	char table[64], history[80], user[128];

	snprintf(table, sizeof(table), "lp_%ld", (long)getpid());
	assert_init_denied(table, "CREATE", table);
	/* A schema-3 table the user may use (and a current history): the
	 * upgrade needs ALTER on the lease table, and the rows stay. */
	h_sql("CREATE TABLE %s (name VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
	      "holder VARCHAR(255) NOT NULL DEFAULT '', term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
	      "acquired_at DATETIME(6) NULL, renewed_at DATETIME(6) NULL, "
	      "expires_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00', last_exit INT NULL, "
	      "finished_at DATETIME(6) NULL, revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
	      "paused_until DATETIME(6) NULL, paused_by VARCHAR(255) NOT NULL DEFAULT '', "
	      "last_slot DATETIME(6) NULL, slot_term BIGINT UNSIGNED NULL, PRIMARY KEY (name))",
	      table);
	h_sql("INSERT INTO %s (name, term) VALUES ('kept', 7)", table);
	snprintf(user, sizeof(user), "'%s'@'localhost', '%s'@'127.0.0.1'", getenv("LR_DB_USER"), getenv("LR_DB_USER"));
	h_sql("GRANT SELECT, INSERT, UPDATE ON %s TO %s", table, user);
	assert_init_denied(table, "ALTER, CREATE and INSERT", table);
	cr_assert_str_eq(h_sql("SELECT term FROM %s WHERE name='kept'", table), "7");
	/* Upgraded by an administrator, but the history's table missing:
	 * CREATE on that one. */
	h_sql("ALTER TABLE %s ADD COLUMN slot SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER name, "
	      "ADD COLUMN slots SMALLINT UNSIGNED NOT NULL DEFAULT 1 AFTER slot, DROP PRIMARY KEY, "
	      "ADD PRIMARY KEY (name, slot)",
	      table);
	snprintf(history, sizeof(history), "%s_history", table);
	assert_init_denied(table, "CREATE", history);
}

/* --status's standbys, as all three formats say them. */
static const char *status_of(const char *lease, const char *format)
{
	static char out[8192];
	const char *argv[] = {h_bin(), "-d", h_dsn(), "--status", "--format", format, lease, NULL};

	cr_assert_eq(h_run(argv, out, sizeof(out)), 0);
	return out;
}

/* Waits until --status (text) lists N standbys of LEASE. */
static void wait_standbys(const char *lease, int n)
{
	int64_t end = h_now_ms() + 10000;
	char want[64];

	snprintf(want, sizeof(want), "leaderrun_lease_standbys{lease=\"%s\"} %d", lease, n);
	while (!strstr(status_of(lease, "prometheus"), want)) {
		cr_assert(h_now_ms() < end, "not %d standbys:\n%s", n, status_of(lease, "text"));
		h_sleep_ms(100);
	}
}

Test(operator, status_lists_each_waiting_standby_with_host_and_health)
{
	const char *lease = h_lease("standbys");
	struct h_proc a, b, c;
	char host[256] = "", line[512];

	gethostname(host, sizeof(host) - 1);
	LR(&a, "-t", "3s", "-l", lease, "--holder", "A", "--", "sleep", "30");
	for (int64_t end = h_now_ms() + 10000;
	     strcmp(
		 h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease),
		 "A") != 0;
	     h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "A does not hold the lease:\n%s", h_slurp(a.err));
	LR(&b, "-t", "3s", "-l", lease, "--holder", "B", "--", "sleep", "30");
	LR(&c, "-t", "3s", "-l", lease, "--holder", "C", "--health-cmd", "false", "--", "sleep", "30");
	wait_standbys(lease, 2);
	snprintf(line, sizeof(line), "  %s  B on %s, since ", lease, host);
	cr_assert(strstr(status_of(lease, "text"), line), "%s", status_of(lease, "text"));
	cr_assert(strstr(status_of(lease, "text"), ", unhealthy"), "%s", status_of(lease, "text"));
	cr_assert(strstr(status_of(lease, "json"), "\"holder\": \"C\", \"host\": "), "%s", status_of(lease, "json"));
	cr_assert(strstr(status_of(lease, "json"), "\"healthy\": false, \"priority\": 0, \"chosen\": false}"), "%s",
		  status_of(lease, "json"));
	snprintf(
	    line, sizeof(line),
	    "leaderrun_lease_standby_info{lease=\"%s\",holder=\"B\",host=\"%s\",healthy=\"true\",priority=\"0\"} 1",
	    lease, host);
	cr_assert(strstr(status_of(lease, "prometheus"), line), "%s", status_of(lease, "prometheus"));
	/* The holder is no standby. */
	cr_assert_null(strstr(status_of(lease, "json"), "\"holder\": \"A\", \"host\""));

	/* A standby killed drops off at once: its session ended. */
	kill(c.pid, SIGKILL);
	h_wait(&c, 5000);
	wait_standbys(lease, 1);

	/* One that takes the lease leaves the list. */
	kill(a.pid, SIGTERM);
	h_finish(&a, 10000);
	wait_standbys(lease, 0);
	kill(b.pid, SIGTERM);
	h_finish(&b, 10000);
}
