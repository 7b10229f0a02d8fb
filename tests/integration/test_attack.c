/* Attacks on the hostile-input hardening that got through (the attacker's report,
 * ranked there). Each test pins the behaviour the promise asks for and
 * fails on the code it was written against:
 *   - SIGKILL keeps going to the command's process group ID after that
 *     group is gone, to whatever group takes the number next;
 *   - COMMAND reads the password in /proc/$PPID/environ;
 *   - an option file FIFO past the checker's depth or file budget hangs the
 *     start;
 *   - a bidi override or a line separator in a row reaches the terminal. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

HARNESS_MAIN

#define EXIT_USAGE 64
#define NOBODY	   65534

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static bool file_has(const char *path, const char *needle, size_t n)
{
	char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; len > 0 && i + (ssize_t)n <= len; i++)
		if (memcmp(buf + i, needle, n) == 0)
			return true;
	return false;
}

/* ---- the process group ID outlives the group ------------------------- */

/* A process of NOBODY's that leads process group PGID, the command's old
 * group ID, or 0 when the number could not be had (ns_last_pid races with
 * every fork on the machine: a few tries). */
static pid_t victim_at(pid_t pgid)
{
	for (int i = 0; i < 50; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t pid;

		if (!f)
			return 0;
		fprintf(f, "%d", (int)pgid - 1);
		fclose(f);
		pid = fork();
		if (pid == 0) {
			setpgid(0, 0);
			if (setresgid(NOBODY, NOBODY, NOBODY) != 0 || setresuid(NOBODY, NOBODY, NOBODY) != 0)
				_exit(1);
			pause();
			_exit(0);
		}
		if (pid == pgid)
			return pid;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return 0;
}

static pid_t read_pid(const char *path)
{
	return (pid_t)atoi(h_slurp(path));
}

/* An unprivileged leaderrun whose command leaves behind a process it may
 * not signal (sudo's command; here a set-user-ID helper) keeps sending
 * SIGKILL every 50 ms to the command's process group ID and to the
 * descendants, as the man page says. But the group is empty once the
 * command exits: its ID is free, and the next process to lead a group
 * under that number (any of the user's shells or jobs: the kernel hands
 * numbers out in turn, 32768 of them by default) is killed, and as long as
 * one of the same user lives there, leaderrun waits for it. */
Test(attack, an_unkillable_leftover_does_not_turn_sigkill_on_a_stranger_that_takes_the_group_id)
{
	char dir[] = "/tmp/lratk.XXXXXX", helper[64], bin[64], cmd[512], dsn[512];
	struct h_proc p;
	pid_t cpid, victim, left;
	int st;

	if (geteuid() != 0 || access("/proc/sys/kernel/ns_last_pid", W_OK) != 0)
		cr_skip_test("needs root (a set-user-ID helper, another user, ns_last_pid)");
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 01777);
	snprintf(helper, sizeof(helper), "%s/suid", dir);
	h_start(&p, (const char *const[]){"install", "-m", "4755", getenv("LR_SUID_HELPER"), helper, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 10000), 0, "install: %s", h_slurp(p.err));
	/* A copy that nobody may run: the build tree may sit where nobody
	 * cannot go (/root/project in a fresh machine's CI). */
	snprintf(bin, sizeof(bin), "%s/leaderrun", dir);
	h_start(&p, (const char *const[]){"install", "-m", "755", h_bin(), bin, NULL}, NULL);
	cr_assert_eq(h_finish(&p, 10000), 0, "install: %s", h_slurp(p.err));
	/* The helper sleeps 6 s, then leaderrun may finish. */
	snprintf(cmd, sizeof(cmd), "%s 6 & echo $! > %s/helper; echo $$ > %s/cmd; sleep 0.3", helper, dir, dir);
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", h_dsn());
	h_start(&p,
		(const char *const[]){"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", dsn, bin,
				      "-l", h_lease("pgid"), "-t", "3s", "--kill-grace", "200ms", "-c", cmd, NULL},
		NULL);
	snprintf(cmd, sizeof(cmd), "%s/cmd", dir);
	h_wait_file(cmd, "\n", 10000);
	cpid = read_pid(cmd);
	cr_assert_gt(cpid, 0, "the command never wrote its pid; stderr: %s", h_slurp(p.err));
	snprintf(cmd, sizeof(cmd), "%s/helper", dir);
	left = read_pid(cmd);
	/* The command's group is gone (the helper left it): the ID is free. */
	cr_assert(h_wait_gone(cpid, 5000), "the command did not exit");
	h_sleep_ms(500);
	victim = victim_at(cpid);
	if (!victim) {
		kill(left, SIGKILL);
		h_finish(&p, 20000);
		h_start(&p, (const char *const[]){"rm", "-rf", dir, NULL}, NULL);
		h_finish(&p, 10000);
		cr_skip_test("could not get pid %d for the stranger", (int)cpid);
	}
	h_sleep_ms(1000);
	cr_expect(h_alive(victim),
		  "leaderrun SIGKILLed pid %d, a stranger's process group that took the number of "
		  "the command's old group",
		  (int)victim);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	st = h_wait(&p, 15000);
	if (st < 0) {
		kill(p.pid, SIGKILL);
		h_wait(&p, 5000);
	}
	kill(left, SIGKILL);
	/* No set-user-ID root file left lying in /tmp. */
	h_start(&p, (const char *const[]){"rm", "-rf", dir, NULL}, NULL);
	h_finish(&p, 10000);
}

/* ---- the command reads leaderrun's environment ------------------------ */

/* The man page: "no secret of leaderrun's reaches COMMAND". COMMAND's own
 * environment is cleaned, but leaderrun's stays readable to it (same
 * user) in /proc/$PPID/environ, and so does the watcher's, which is a copy. */
Test(attack, the_command_cannot_read_the_password_from_leaderrun_s_proc_environ)
{
	const char *pw = getenv("LR_DB_PASSWORD");
	char cmd[512], dsn[512], dsnenv[600], pwenv[300], mypwd[300];
	struct h_proc p;

	snprintf(cmd, sizeof(cmd),
		 "cat /proc/$PPID/environ > %s; for w in $(cat /proc/$PPID/task/*/children); do "
		 "cat /proc/$w/environ; done > %s",
		 h_path("leaderrun.env"), h_path("watcher.env"));
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%s/%s", getenv("LR_DB_USER"), pw, getenv("LR_DB_PORT"),
		 getenv("LR_DB_NAME"));
	snprintf(dsnenv, sizeof(dsnenv), "LEADERRUN_DSN=%s", dsn);
	snprintf(pwenv, sizeof(pwenv), "LEADERRUN_PASSWORD=%s", pw);
	snprintf(mypwd, sizeof(mypwd), "MYSQL_PWD=%s", pw);
	h_start(&p, (const char *const[]){h_bin(), "-n", "-l", h_lease("environ"), "-c", cmd, NULL},
		(const char *const[]){dsnenv, pwenv, mypwd, NULL});
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_assert(h_slurp(h_path("leaderrun.env"))[0],
		  "the command could not read /proc/$PPID/environ at all (fine, but then this test proves nothing)");
	for (int k = 0; k < 2; k++) {
		const char *f = h_path(k ? "watcher.env" : "leaderrun.env");
		cr_expect(!file_has(f, dsnenv, strlen(dsnenv)), "%s holds the DSN with its password",
			  k ? "the watcher's /proc/PID/environ" : "leaderrun's /proc/PID/environ");
		cr_expect(!file_has(f, pwenv, strlen(pwenv)), "%s holds LEADERRUN_PASSWORD",
			  k ? "the watcher's /proc/PID/environ" : "leaderrun's /proc/PID/environ");
		cr_expect(!file_has(f, mypwd, strlen(mypwd)), "%s holds MYSQL_PWD",
			  k ? "the watcher's /proc/PID/environ" : "leaderrun's /proc/PID/environ");
	}
}

/* ---- option files: a FIFO past the checker's reach --------------------- */

static int run_bounded(const char *const argv[], struct h_proc *p)
{
	int st;

	h_start(p, argv, (const char *const[]){"LEADERRUN_DSN=", NULL});
	st = h_wait(p, 10000);
	if (st < 0) {
		kill(p->pid, SIGKILL);
		h_wait(p, 5000);
		cr_assert_fail("leaderrun hung on a FIFO among the option files; stderr: %s", h_slurp(p->err));
	}
	return st;
}

static void connection_file(const char *path, const char *include)
{
	char text[2048];

	snprintf(text, sizeof(text), "[client]\nuser=%s\npassword=%s\nsocket=%s\ndatabase=%s\n!include %s\n",
		 getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), getenv("LR_DB_SOCKET"), getenv("LR_DB_NAME"), include);
	write_file(path, text);
}

/* optfile.c stops checking below !include depth 10 (OPTFILE_MAX_DEPTH); the
 * client library goes on, opens the FIFO and waits for ever. */
Test(attack, a_fifo_included_fourteen_levels_deep_is_refused_promptly)
{
	char name[64], next[64], line[600];
	struct h_proc p;
	int st;

	cr_assert_eq(mkfifo(h_path("fifo"), 0600), 0);
	for (int i = 13; i >= 1; i--) {
		snprintf(name, sizeof(name), "n%d.cnf", i);
		snprintf(next, sizeof(next), "n%d.cnf", i + 1);
		snprintf(line, sizeof(line), "!include %s\n", i == 13 ? h_path("fifo") : h_path(next));
		write_file(h_path(name), line);
	}
	connection_file(h_path("my.cnf"), h_path("n1.cnf"));
	st = run_bounded((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l",
					       h_lease("deep"), "--", "true", NULL},
			 &p);
	cr_assert_eq(st, EXIT_USAGE, "exit %d; stderr: %s", st, h_slurp(p.err));
}

/* optfile.c checks 64 files (OPTFILE_MAX_FILES) and takes the rest on trust. */
Test(attack, a_fifo_included_from_the_seventy_first_option_file_is_refused_promptly)
{
	char name[64], text[65536] = "", line[600];
	struct h_proc p;
	size_t n = 0;
	int st;

	cr_assert_eq(mkfifo(h_path("fifo"), 0600), 0);
	/* The FIFO's !include sits in the 71st file, which is never read. */
	snprintf(line, sizeof(line), "!include %s\n", h_path("fifo"));
	for (int i = 0; i <= 70; i++) {
		snprintf(name, sizeof(name), "w%d.cnf", i);
		write_file(h_path(name), i == 70 ? line : "");
		n += (size_t)snprintf(text + n, sizeof(text) - n, "!include %s\n", h_path(name));
	}
	write_file(h_path("wide.cnf"), text);
	snprintf(line, sizeof(line), "%s", h_path("wide.cnf"));
	connection_file(h_path("my.cnf"), line);
	st = run_bounded((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l",
					       h_lease("wide"), "--", "true", NULL},
			 &p);
	cr_assert_eq(st, EXIT_USAGE, "exit %d; stderr: %s", st, h_slurp(p.err));
}

/* ---- Unicode format characters in a row -------------------------------- */

/* A holder with U+202E RIGHT-TO-LEFT OVERRIDE (reverses the rest of the
 * line on screen: the term and expiry columns can be made to read as
 * anything) and U+2028 LINE SEPARATOR (a line break to many viewers).
 * escape_text passes both raw (ESCAPE_PLAIN). */
Test(attack, status_shows_a_bidi_override_and_a_line_separator_escaped)
{
	struct h_proc p;
	const char *lease = h_lease("bidi");

	h_leaderrun(&p, (const char *const[]){"-n", "-l", lease, "--", "true", NULL});
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	h_sql("UPDATE leaderrun_lease SET holder=CONVERT(UNHEX('6f6be280ae6c69766520e280a8666f7267656420726f77') "
	      "USING utf8mb4), expires_at=UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE name='%s'",
	      lease);
	h_leaderrun(&p, (const char *const[]){"--status", lease, NULL});
	cr_assert_eq(h_finish(&p, 20000), 0, "%s", h_slurp(p.err));
	cr_expect(!file_has(p.out, "\xe2\x80\xae", 3), "--status printed U+202E raw: %s", h_slurp(p.out));
	cr_expect(!file_has(p.out, "\xe2\x80\xa8", 3), "--status printed U+2028 raw: %s", h_slurp(p.out));
	h_leaderrun(&p, (const char *const[]){"-n", "-l", lease, "--", "true", NULL});
	h_finish(&p, 20000);
	cr_expect(!file_has(p.err, "\xe2\x80\xae", 3), "the busy message printed U+202E raw: %s", h_slurp(p.err));
}
