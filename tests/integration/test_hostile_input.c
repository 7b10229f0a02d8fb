/* Input that tries leaderrun's discretion and patience: a
 * password with the characters URLs reserve, mistyped options holding a
 * secret, and option files that name a FIFO. No secret may reach stderr or
 * /proc/PID/cmdline, and no file may hang the start. */
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"

HARNESS_MAIN

#define EXIT_USAGE 64

/* A password that holds every character the DSN grammar could stumble
 * over: '?', '@', '/', '#' and ':'. */
#define HOSTILE_USER	 "lr_hostile"
#define HOSTILE_PASSWORD "Sup3r?Se@cr/et#1:z"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	chmod(path, 0600);
}

/* The hostile user, with the grants of the test user. */
static void hostile_user(void)
{
	h_sql("CREATE USER IF NOT EXISTS '" HOSTILE_USER "'@'%%' IDENTIFIED BY '" HOSTILE_PASSWORD "';"
	      "GRANT SELECT, INSERT, UPDATE, CREATE, ALTER ON `%s`.* TO '" HOSTILE_USER "'@'%%'",
	      getenv("LR_DB_NAME"));
}

static const char *hostile_dsn(void)
{
	static char dsn[512];
	snprintf(dsn, sizeof(dsn), "mysql://" HOSTILE_USER ":" HOSTILE_PASSWORD "@127.0.0.1:%s/%s",
		 getenv("LR_DB_PORT"), getenv("LR_DB_NAME"));
	return dsn;
}

/* Fails the test when TEXT holds any piece of the hostile password (its
 * parts between the reserved characters, which a parser may cut it at). */
static void assert_no_secret(const char *text, const char *where)
{
	static const char *const pieces[] = {"Sup3r", "Se@", "cr/", "et#1", "#1:z", ":z@"};

	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
		cr_assert_null(strstr(text, pieces[i]), "%s holds '%s' of the password: %s", where, pieces[i], text);
}

/* Runs ARGV with ENV (no LEADERRUN_DSN unless ENV sets it). */
static int run(const char *const argv[], const char *const env[], struct h_proc *p)
{
	h_start(p, argv, env);
	return h_finish(p, 20000);
}

static void assert_refused_quietly(struct h_proc *p, int status, const char *what)
{
	const char *err = h_slurp(p->err);

	cr_assert_eq(status, EXIT_USAGE, "%s: exit %d, wanted the usage code; stderr: %s", what, status, err);
	cr_assert_neq(err[0], '\0', "%s: refused without a word", what);
	assert_no_secret(err, what);
}

Test(hostile_input, a_dsn_password_with_reserved_characters_logs_in)
{
	struct h_proc p;

	hostile_user();
	cr_assert_eq(
	    run((const char *const[]){h_bin(), "-d", hostile_dsn(), "-n", "-l", h_lease("qm"), "--", "true", NULL},
		(const char *const[]){"LEADERRUN_DSN=", NULL}, &p),
	    0, "%s", h_slurp(p.err));
}

Test(hostile_input, a_rejected_dsn_never_prints_its_password)
{
	/* Each is wrong somewhere else than the password: the message must
	 * say what, and keep the password out of it. */
	static const char *const dsns[] = {
	    "mysql://u:" HOSTILE_PASSWORD "@127.0.0.1:99999/db",
	    "mysql://u:" HOSTILE_PASSWORD "@127.0.0.1/db?host-order=sideways",
	    /* A '?' followed by a parameter is read as the parameters' start:
	     * the rest cannot parse, and must not be shown. */
	    "mysql://u:Sup3r?ssl-mode=Se@cr/et#1:z@127.0.0.1/db",
	    "mysql://u:" HOSTILE_PASSWORD "@[::1/db",
	};
	struct h_proc p;

	for (size_t i = 0; i < sizeof(dsns) / sizeof(dsns[0]); i++) {
		char env[600], what[600];

		snprintf(what, sizeof(what), "--dsn %s", dsns[i]);
		assert_refused_quietly(&p,
				       run((const char *const[]){h_bin(), "--dsn", dsns[i], "-n", "--", "true", NULL},
					   (const char *const[]){"LEADERRUN_DSN=", NULL}, &p),
				       what);
		snprintf(env, sizeof(env), "LEADERRUN_DSN=%s", dsns[i]);
		snprintf(what, sizeof(what), "%s", env);
		assert_refused_quietly(
		    &p,
		    run((const char *const[]){h_bin(), "-n", "--", "true", NULL}, (const char *const[]){env, NULL}, &p),
		    what);
	}
}

Test(hostile_input, a_mistyped_option_prints_its_name_and_not_its_value)
{
	static const char *const typos[] = {
	    "--dns=mysql://u:" HOSTILE_PASSWORD "@h/db", /* unknown */
	    "--d=mysql://u:" HOSTILE_PASSWORD "@h/db",	 /* ambiguous: --dsn, --defaults-file */
	    "--password=" HOSTILE_PASSWORD,		 /* no such option */
	    "--init=" HOSTILE_PASSWORD,			 /* a flag that takes no value */
	    "--pass=" HOSTILE_PASSWORD,			 /* an abbreviated --password-file */
	};
	struct h_proc p;

	for (size_t i = 0; i < sizeof(typos) / sizeof(typos[0]); i++) {
		int st = run((const char *const[]){h_bin(), typos[i], "-n", "--", "true", NULL}, NULL, &p);
		assert_refused_quietly(&p, st, typos[i]);
		cr_assert(strstr(h_slurp(p.err), "option '--"), "%s: the option is not named: %s", typos[i],
			  h_slurp(p.err));
	}
}

Test(hostile_input, a_password_given_to_password_abbreviated_is_not_taken_for_a_file)
{
	/* getopt_long takes --password as --password-file: the secret
	 * became a file name, printed as missing. */
	struct h_proc p;
	int st =
	    run((const char *const[]){h_bin(), "--password", HOSTILE_PASSWORD, "-n", "--", "true", NULL}, NULL, &p);

	assert_refused_quietly(&p, st, "--password SECRET");
}

Test(hostile_input, a_dsn_given_where_a_mode_takes_none_is_not_echoed)
{
	/* A forgotten -d: the DSN lands where a lease name or nothing goes. */
	char dsn[512];
	struct h_proc p;

	snprintf(dsn, sizeof(dsn), "mysql://u:" HOSTILE_PASSWORD "@h/db");
	assert_refused_quietly(&p, run((const char *const[]){h_bin(), "--init", dsn, NULL}, NULL, &p), "--init DSN");
	assert_refused_quietly(&p, run((const char *const[]){h_bin(), "--status", "x", dsn, NULL}, NULL, &p),
			       "--status LEASE DSN");
	assert_refused_quietly(&p, run((const char *const[]){h_bin(), "-c", "true", dsn, NULL}, NULL, &p),
			       "-c STRING DSN");
}

/* Starts leaderrun with ARGV (its DSN in it), waits until its command
 * runs, and returns what /proc/PID/cmdline shows, NULs as spaces. */
static const char *cmdline_while_running(const char *const argv[], const char *started)
{
	static char text[4096];
	struct h_proc p;
	char path[64];
	FILE *f;
	size_t n;

	h_start(&p, argv, (const char *const[]){"LEADERRUN_DSN=", NULL});
	if (!h_wait_file(started, NULL, 20000)) {
		kill(p.pid, SIGKILL);
		h_wait(&p, 5000);
		cr_assert_fail("the command never started; stderr: %s", h_slurp(p.err));
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p.pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		if (text[i] == '\0')
			text[i] = ' ';
	text[n] = '\0';
	kill(p.pid, SIGTERM);
	cr_assert_eq(h_finish(&p, 20000), 128 + SIGTERM, "%s", h_slurp(p.err));
	return text;
}

Test(hostile_input, proc_cmdline_never_shows_the_password_in_any_argv_form)
{
	const char *dsn;
	char joined[600], short_joined[600], abbrev[600], started[300], cmd[400];

	hostile_user();
	dsn = hostile_dsn();
	snprintf(joined, sizeof(joined), "--dsn=%s", dsn);
	snprintf(short_joined, sizeof(short_joined), "-nd%s", dsn);
	snprintf(abbrev, sizeof(abbrev), "--ds=%s", dsn);
	const char *const forms[][3] = {
	    {"--dsn", dsn, NULL},	{"-d", dsn, NULL},    {joined, NULL, NULL},
	    {short_joined, NULL, NULL}, {abbrev, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *argv[16];
		size_t n = 0;

		snprintf(started, sizeof(started), "%s/started-%zu", h_dir(), i);
		snprintf(cmd, sizeof(cmd), "echo started > %s && exec sleep 60", started);
		argv[n++] = h_bin();
		for (size_t k = 0; k < 2 && forms[i][k]; k++)
			argv[n++] = forms[i][k];
		argv[n++] = "-l";
		argv[n++] = h_lease("cmdline");
		argv[n++] = "-c";
		argv[n++] = cmd;
		argv[n] = NULL;
		assert_no_secret(cmdline_while_running(argv, started), forms[i][0]);
	}
}

Test(hostile_input, the_commands_leaderrun_dsn_has_no_password)
{
	struct h_proc p;
	char env[600], cmd[400];

	hostile_user();
	snprintf(env, sizeof(env), "LEADERRUN_DSN=%s", hostile_dsn());
	snprintf(cmd, sizeof(cmd), "printf %%s \"$LEADERRUN_DSN\" > %s", h_path("dsn"));
	cr_assert_eq(run((const char *const[]){h_bin(), "-n", "-l", h_lease("env"), "-c", cmd, NULL},
			 (const char *const[]){env, NULL}, &p),
		     0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(h_path("dsn")), "@127.0.0.1:"), "no DSN reached the command: %s",
		  h_slurp(h_path("dsn")));
	assert_no_secret(h_slurp(h_path("dsn")), "the command's LEADERRUN_DSN");
}

/* Option files naming a FIFO nobody writes to: opening one for reading
 * blocks until a writer comes, for ever. */

static const char *option_file_with(const char *line)
{
	static char text[1024];
	snprintf(text, sizeof(text), "[client]\nuser=%s\npassword=%s\nsocket=%s\ndatabase=%s\n%s\n",
		 getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), getenv("LR_DB_SOCKET"), getenv("LR_DB_NAME"), line);
	return text;
}

/* Runs ARGV and gives it 10 s (the harness's start and a refused file
 * take milliseconds); a hang fails the test after killing it. */
static int run_bounded(const char *const argv[], const char *const env[], struct h_proc *p)
{
	int st;

	h_start(p, argv, env);
	st = h_wait(p, 10000);
	if (st < 0) {
		kill(p->pid, SIGKILL);
		h_wait(p, 5000);
		cr_assert_fail("leaderrun hung on a FIFO; stderr: %s", h_slurp(p->err));
	}
	return st;
}

Test(hostile_input, a_fifo_included_from_an_option_file_is_refused_promptly)
{
	char line[400];
	struct h_proc p;
	int st;

	cr_assert_eq(mkfifo(h_path("fifo"), 0600), 0);
	snprintf(line, sizeof(line), "!include %s", h_path("fifo"));
	write_file(h_path("my.cnf"), option_file_with(line));
	st = run_bounded((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l",
					       h_lease("fifo"), "--", "true", NULL},
			 (const char *const[]){"LEADERRUN_DSN=", NULL}, &p);
	cr_assert_eq(st, EXIT_USAGE, "exit %d; stderr: %s", st, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), h_path("fifo")), "the FIFO is not named: %s", h_slurp(p.err));
}

Test(hostile_input, a_fifo_in_an_included_directory_is_refused_promptly)
{
	char line[400];
	struct h_proc p;
	int st;

	cr_assert_eq(mkdir(h_path("conf.d"), 0700), 0);
	cr_assert_eq(mkfifo(h_path("conf.d/z.cnf"), 0600), 0);
	snprintf(line, sizeof(line), "!includedir %s", h_path("conf.d"));
	write_file(h_path("my.cnf"), option_file_with(line));
	st = run_bounded((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l",
					       h_lease("fifodir"), "--", "true", NULL},
			 (const char *const[]){"LEADERRUN_DSN=", NULL}, &p);
	cr_assert_eq(st, EXIT_USAGE, "exit %d; stderr: %s", st, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "z.cnf"), "the FIFO is not named: %s", h_slurp(p.err));
}

Test(hostile_input, a_fifo_at_home_my_cnf_is_refused_promptly)
{
	struct h_proc p;
	char home[300];
	int st;

	cr_assert_eq(mkfifo(h_path(".my.cnf"), 0600), 0);
	snprintf(home, sizeof(home), "HOME=%s", h_dir());
	st = run_bounded((const char *const[]){h_bin(), "-n", "-l", h_lease("fifohome"), "--", "true", NULL},
			 (const char *const[]){home, "LEADERRUN_DSN=", NULL}, &p);
	cr_assert_eq(st, EXIT_USAGE, "exit %d; stderr: %s", st, h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), ".my.cnf"), "the FIFO is not named: %s", h_slurp(p.err));
}

Test(hostile_input, a_password_file_may_be_a_pipe)
{
	/* --password-file <(pass show db): a FIFO with a writer is a
	 * legitimate source, and must keep working. */
	struct h_proc p;
	char dsn[512], script[1400];

	snprintf(dsn, sizeof(dsn), "mysql://%s@127.0.0.1:%s/%s", getenv("LR_DB_USER"), getenv("LR_DB_PORT"),
		 getenv("LR_DB_NAME"));
	cr_assert_eq(mkfifo(h_path("pwpipe"), 0600), 0);
	snprintf(script, sizeof(script),
		 "printf '%%s\\n' \"$LR_DB_PASSWORD\" > %s & exec %s -d %s --password-file %s -n -l %s -- true",
		 h_path("pwpipe"), h_bin(), dsn, h_path("pwpipe"), h_lease("pipe"));
	cr_assert_eq(run_bounded((const char *const[]){"/bin/sh", "-c", script, NULL},
				 (const char *const[]){"LEADERRUN_DSN=", NULL}, &p),
		     0, "%s", h_slurp(p.err));
}
