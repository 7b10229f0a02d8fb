#include "harness.h"

#include "lease/lease.h"
#include "procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char sandbox_dir[256];

static const char *env_or_die(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v) {
		fprintf(stderr, "harness: %s is not set (run the suite through meson test)\n", name);
		exit(2);
	}
	return v;
}

/* Runs a command to completion, output to the given fd (or inherited). */
static int run_argv(char *const argv[], int outfd)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	if (outfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, outfd, 1);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void set_env(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	setenv(name, value, 1);
}

/* LEADERRUN_TEST_SERVER=mysql runs a suite that would start MariaDB
 * (scripts/sandbox-db) against Oracle MySQL instead: scripts/sandbox-mysql,
 * beside it, with the same commands and output. LR_SANDBOX is rewritten so
 * that h_sandbox and the tests that call the script themselves use the same
 * one. The cluster sandboxes are left alone. */
static void sandbox_choose(void)
{
	const char *server = getenv("LEADERRUN_TEST_SERVER");
	const char *script = env_or_die("LR_SANDBOX");
	const char *base = strrchr(script, '/');
	char mysql[PATH_MAX];

	if (!server || !*server || strcmp(server, "mariadb") == 0)
		return;
	if (strcmp(server, "mysql") != 0) {
		fprintf(stderr, "harness: LEADERRUN_TEST_SERVER='%s' is not a server here: use mariadb or mysql\n",
			server);
		exit(2);
	}
	base = base ? base + 1 : script;
	if (strcmp(base, "sandbox-db") != 0)
		return;
	snprintf(mysql, sizeof(mysql), "%.*ssandbox-mysql", (int)(base - script), script);
	setenv("LR_SANDBOX", mysql, 1);
}

static void sandbox_start(void)
{
	const char *script;
	char envfile[300];

	sandbox_choose();
	script = env_or_die("LR_SANDBOX");

	snprintf(sandbox_dir, sizeof(sandbox_dir), "/tmp/lrt.XXXXXX");
	if (!mkdtemp(sandbox_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	if (run_argv((char *[]){(char *)script, "start", sandbox_dir, NULL}, open("/dev/null", O_WRONLY | O_CLOEXEC)) !=
	    0) {
		fprintf(stderr, "harness: %s start %s failed\n", script, sandbox_dir);
		exit(2);
	}
	snprintf(envfile, sizeof(envfile), "%s/env", sandbox_dir);
	if (procs_load_env(envfile, set_env, NULL) < 0) {
		perror(envfile);
		exit(2);
	}
	/* The cluster sandboxes name their directory otherwise; h_dir needs it. */
	setenv("LR_DB_DIR", sandbox_dir, 0);
}

int h_main_bare(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	char dir[] = "/tmp/lrt.XXXXXX";
	int result = 0;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	setenv("LR_DB_DIR", dir, 1);
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	run_argv((char *[]){"/bin/rm", "-rf", "--", dir, NULL}, -1);
	return result;
}

int h_run(const char *const argv[], char *out, size_t outlen)
{
	char path[300];
	int fd, rc;
	size_t n;

	snprintf(path, sizeof(path), "%s/run.out", h_dir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	rc = run_argv((char *const *)argv, fd);
	close(fd);
	if (out) {
		snprintf(out, outlen, "%s", h_slurp(path));
		n = strlen(out);
		while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = '\0';
	}
	return rc;
}

/* libfaketime leaves its shared memory in /dev/shm, named after the pid of
 * the process that made it. The clock tests run leaderrun and servers under
 * it: remove what processes that are gone left, so that a test run leaves
 * nothing behind. A live process's files stay. */
static void sweep_faketime_shm(void)
{
	static const char *const prefixes[] = {"faketime_shm_", "sem.faketime_sem_"};
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t n = strlen(prefixes[i]);
			char *end, path[300];
			long pid;
			if (strncmp(e->d_name, prefixes[i], n) != 0)
				continue;
			pid = strtol(e->d_name + n, &end, 10);
			if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

int h_main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	bool own = !getenv("LR_DB_SOCKET");
	int result = 0;

	if (own)
		sandbox_start();
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	if (own)
		run_argv((char *[]){(char *)env_or_die("LR_SANDBOX"), "stop", sandbox_dir, NULL}, -1);
	sweep_faketime_shm();
	return result;
}

const char *h_dir(void)
{
	static char dir[256];
	/* Inside the suite's sandbox directory, which goes with the sandbox:
	 * a test run leaves nothing behind in /tmp. */
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/test.XXXXXX", env_or_die("LR_DB_DIR"));
		cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
	}
	return dir;
}

const char *h_path(const char *name)
{
	static char bufs[8][300];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, 300, "%s/%s", h_dir(), name);
	return b;
}

const char *h_bin(void)
{
	return env_or_die("LEADERRUN_BIN");
}

const char *h_probe(void)
{
	return env_or_die("LR_PROBE");
}

const char *h_dsn(void)
{
	return h_dsn_port(atoi(env_or_die("LR_DB_PORT")));
}

const char *h_dsn_port(int port)
{
	static char dsn[512];
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%d/%s", env_or_die("LR_DB_USER"),
		 env_or_die("LR_DB_PASSWORD"), port, env_or_die("LR_DB_NAME"));
	return dsn;
}

const char *h_dsn_socket(void)
{
	static char dsn[512];
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@localhost/%s?socket=%s", env_or_die("LR_DB_USER"),
		 env_or_die("LR_DB_PASSWORD"), env_or_die("LR_DB_NAME"), env_or_die("LR_DB_SOCKET"));
	return dsn;
}

const char *h_dsn_root(void)
{
	static char dsn[512];
	snprintf(dsn, sizeof(dsn), "mysql://root@localhost/%s?socket=%s", env_or_die("LR_DB_NAME"),
		 env_or_die("LR_DB_SOCKET"));
	return dsn;
}

const char *h_lease(const char *base)
{
	static char bufs[4][128];
	static int k;
	char *b = bufs[k++ % 4];
	snprintf(b, 128, "%s-%ld", base, (long)getpid());
	return b;
}

void h_start(struct h_proc *p, const char *const argv[], const char *const env[])
{
	static int seq;
	posix_spawn_file_actions_t fa;
	size_t n = 0, m = 0;
	char **envp;
	int rc;

	memset(p, 0, sizeof(*p));
	p->status = -1;
	snprintf(p->out, sizeof(p->out), "%s/p%d.out", h_dir(), seq);
	snprintf(p->err, sizeof(p->err), "%s/p%d.err", h_dir(), seq++);
	while (environ[n])
		n++;
	while (env && env[m])
		m++;
	envp = calloc(n + m + 1, sizeof(*envp));
	/* Extra entries first: getenv finds the first match. */
	for (size_t i = 0; i < m; i++)
		envp[i] = (char *)env[i];
	for (size_t i = 0; i < n; i++)
		envp[m + i] = environ[i];

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, p->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = posix_spawnp(&p->pid, argv[0], &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	cr_assert_eq(rc, 0, "spawn %s: %s", argv[0], strerror(rc));
}

static void h_leaderrun_at(struct h_proc *p, const char *url, const char *const args[])
{
	const char *argv[64];
	char dsn[600];
	size_t n = 0;

	argv[n++] = h_bin();
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", url);
	h_start(p, argv, (const char *const[]){dsn, NULL});
}

void h_leaderrun(struct h_proc *p, const char *const args[])
{
	h_leaderrun_at(p, h_dsn(), args);
}

void h_leaderrun_via(struct h_proc *p, int port, const char *const args[])
{
	h_leaderrun_at(p, h_dsn_port(port), args);
}

int h_wait(struct h_proc *p, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;
	int st;

	if (p->status >= 0)
		return p->status;
	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);
		if (r == p->pid) {
			p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return p->status;
		}
		if (h_now_ms() >= end)
			return -1;
		h_sleep_ms(5);
	}
}

int h_finish(struct h_proc *p, int timeout_ms)
{
	int st = h_wait(p, timeout_ms);
	if (st < 0) {
		kill(p->pid, SIGKILL);
		h_wait(p, 5000);
		cr_assert_fail("pid %d did not exit within %d ms; stderr:\n%s", (int)p->pid, timeout_ms,
			       h_slurp(p->err));
	}
	return st;
}

const char *h_slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

bool h_wait_file(const char *path, const char *needle, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;

	for (;;) {
		const char *s = h_slurp(path);
		if (needle ? strstr(s, needle) != NULL : s[0] != '\0')
			return true;
		if (h_now_ms() >= end)
			return false;
		h_sleep_ms(10);
	}
}

static int sql_run(const char *sql, bool force, char *out, size_t outlen)
{
	char outpath[300], sock[300];
	int fd, rc;
	size_t n;

	snprintf(outpath, sizeof(outpath), "%s/sql.out", h_dir());
	snprintf(sock, sizeof(sock), "--socket=%s", env_or_die("LR_DB_SOCKET"));
	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = run_argv((char *[]){"/usr/bin/mariadb", "--no-defaults", sock, "-uroot", "-N", "-B",
				 force ? "--force" : "--skip-force", (char *)env_or_die("LR_DB_NAME"), "-e",
				 (char *)sql, NULL},
		      fd);
	close(fd);
	snprintf(out, outlen, "%s", h_slurp(outpath));
	n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return rc;
}

int h_kill_connections(const char *user)
{
	char ids[8192], sql[16384], *save = NULL, junk[256];
	size_t len = 0;
	int n = 0;

	snprintf(sql, sizeof(sql), "SELECT id FROM information_schema.PROCESSLIST WHERE USER='%s'", user);
	cr_assert_eq(sql_run(sql, false, ids, sizeof(ids)), 0);
	sql[0] = '\0';
	for (char *id = strtok_r(ids, "\n", &save); id; id = strtok_r(NULL, "\n", &save), n++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "KILL CONNECTION %s;", id);
	/* --force: a connection may close between the SELECT and its KILL. */
	if (n)
		sql_run(sql, true, junk, sizeof(junk));
	return n;
}

long h_follower_session(const char *lease)
{
	struct lease_sql sql;
	long id;

	lease_hint_name(&sql, LEASE_DEFAULT_TABLE, lease);
	/* Not this query itself, whose text matches the pattern too. */
	id = atol(h_sql("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%%GET_LOCK(%%''%s:%%' "
			"AND ID <> CONNECTION_ID() LIMIT 1",
			sql.hint_name));
	cr_assert_gt(id, 0, "the follower does not block on the hint");
	return id;
}

long h_follower_statements(const char *lease, int window_s)
{
	long id = h_follower_session(lease), n;

	h_sql("SET GLOBAL log_output='TABLE', general_log=1");
	h_sleep_ms(window_s * 1000);
	h_sql("SET GLOBAL general_log=0");
	n = atol(h_sql("SELECT COUNT(*) FROM mysql.general_log WHERE thread_id=%ld AND command_type IN "
		       "('Query', 'Execute', 'Prepare')",
		       id));
	h_sql("TRUNCATE mysql.general_log");
	return n;
}

int h_hint_waiters(const char *lease)
{
	struct lease_sql sql;
	int most = 0;

	/* The lock's name, as leaderrun derives it: other tests' followers
	 * wait on theirs at the same time. */
	lease_hint_name(&sql, LEASE_DEFAULT_TABLE, lease);
	for (int i = 0; i < 20; i++, h_sleep_ms(50)) {
		int n = atoi(h_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='%s' AND "
				   "INFO LIKE '%%GET_LOCK(%%''%s:%%'",
				   env_or_die("LR_DB_USER"), sql.hint_name));
		most = n > most ? n : most;
	}
	return most;
}

const char *h_sql(const char *fmt, ...)
{
	static char out[65536];
	char sql[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	rc = sql_run(sql, false, out, sizeof(out));
	cr_assert_eq(rc, 0, "SQL failed (%d): %s", rc, sql);
	return out;
}

bool h_server_mysql(void)
{
	const char *script = getenv("LR_SANDBOX");
	const char *base = script ? strrchr(script, '/') : NULL;
	return base && strcmp(base, "/sandbox-mysql") == 0;
}

bool h_client_oracle(void)
{
	char version[256];

	h_run((const char *const[]){h_bin(), "--version", NULL}, version, sizeof(version));
	return strstr(version, "libmysqlclient") != NULL;
}

void h_sandbox(const char *subcommand)
{
	int rc = run_argv(
	    (char *[]){(char *)env_or_die("LR_SANDBOX"), (char *)subcommand, (char *)env_or_die("LR_DB_DIR"), NULL},
	    open("/dev/null", O_WRONLY));
	cr_assert_eq(rc, 0, "%s %s failed", env_or_die("LR_SANDBOX"), subcommand);
}

bool h_alive(pid_t pid)
{
	return procs_alive(pid);
}

bool h_wait_gone(pid_t pid, int timeout_ms)
{
	int64_t end = h_now_ms() + timeout_ms;
	while (h_alive(pid)) {
		if (h_now_ms() >= end)
			return false;
		h_sleep_ms(5);
	}
	return true;
}

int64_t h_now_ms(void)
{
	return procs_now_ms();
}

void h_sleep_ms(int ms)
{
	procs_sleep_ms(ms);
}

void h_sigkill_takes_the_tree(struct h_proc *p)
{
	pid_t child, grandchild;

	cr_assert(h_wait_file(p->out, " ", 10000), "the command never ran: %s", h_slurp(p->err));
	cr_assert_eq(sscanf(h_slurp(p->out), "%d %d", &child, &grandchild), 2);
	kill(p->pid, SIGKILL);
	h_finish(p, 5000);
	cr_assert(h_wait_gone(child, 2000), "child %d outlived leaderrun", (int)child);
	cr_assert(h_wait_gone(grandchild, 2000), "grandchild %d outlived leaderrun", (int)grandchild);
}

void h_frozen_holders_command_stops_at_the_deadline(struct h_proc *p, const char *lease, const char *log,
						    const char *lock)
{
	struct h_proc standby;

	h_leaderrun(&standby, (const char *const[]){"-t", "2s", "-l", lease, "--", h_probe(), log, lock, "0.2", NULL});
	h_sleep_ms(300);
	kill(p->pid, SIGSTOP);
	cr_assert_eq(h_finish(&standby, 15000), 0, "%s", h_slurp(standby.err));
	kill(p->pid, SIGCONT);
	cr_assert_eq(h_finish(p, 10000), 76, "%s", h_slurp(p->err));
	cr_assert_eq(h_probe_check(log, NULL, NULL, 0), 2);
}

int h_probe_check(const char *log, int64_t *start_ns, unsigned long long *terms, int max)
{
	char copy[65536], *save = NULL;
	unsigned long long last = 0;
	int starts = 0;

	snprintf(copy, sizeof(copy), "%s", h_slurp(log));
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char what[16];
		unsigned long long term;
		long long ns;
		if (sscanf(line, "%15s %llu %lld", what, &term, &ns) != 3)
			cr_assert_fail("bad probe line '%s'", line);
		cr_assert_str_neq(what, "violation", "two commands ran at once (term %llu):\n%s", term, h_slurp(log));
		if (strcmp(what, "start") != 0)
			continue;
		cr_assert_gt(term, last, "term %llu started after term %llu:\n%s", term, last, h_slurp(log));
		last = term;
		if (starts < max) {
			if (start_ns)
				start_ns[starts] = ns;
			if (terms)
				terms[starts] = term;
		}
		starts++;
	}
	return starts;
}

const char *h_unshare_propagation(void)
{
	static int plain = -1;

	if (plain < 0) {
		const char *argv[] = {"unshare", "-m", "true", NULL};
		plain = h_run(argv, NULL, 0) == 0;
	}
	return plain ? "private" : "unchanged";
}

int h_cluster_port(const struct h_cluster *c, int n)
{
	char ports[128], *save = NULL, *tok;

	snprintf(ports, sizeof(ports), "%s", getenv(c->ports_var));
	tok = strtok_r(ports, " ", &save);
	for (int i = 1; tok && i < n; i++)
		tok = strtok_r(NULL, " ", &save);
	cr_assert_not_null(tok, "no port for member %d in %s='%s'", n, c->ports_var, getenv(c->ports_var));
	return atoi(tok);
}

const char *h_cluster_dsn(const struct h_cluster *c, const char *order)
{
	static char bufs[4][512];
	static int k;
	char *b = bufs[k++ % 4];
	int n = snprintf(b, 512, "LEADERRUN_DSN=mysql://%s:%s@", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"));

	for (const char *o = order; *o; o++)
		n += snprintf(b + n, 512 - (size_t)n, "%s127.0.0.1:%d", o == order ? "" : ",",
			      h_cluster_port(c, *o - '0'));
	snprintf(b + n, 512 - (size_t)n, "/%s", getenv("LR_DB_NAME"));
	return b;
}

void h_cluster_do(const struct h_cluster *c, const char *subcommand, const char *arg)
{
	char out[4096];
	const char *argv[] = {getenv("LR_SANDBOX"), subcommand, getenv(c->dir_var), arg, NULL};
	int rc = h_run(argv, out, sizeof(out));

	cr_assert_eq(rc, 0, "%s %s %s failed (%d): %s", argv[0], subcommand, arg ? arg : "", rc, out);
}

void h_cluster_lr(const struct h_cluster *c, struct h_proc *p, const char *order, const char *const args[])
{
	const char *argv[32];
	size_t n = 0;

	argv[n++] = h_bin();
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	h_start(p, argv, (const char *const[]){h_cluster_dsn(c, order), NULL});
}

void h_cluster_race(const struct h_cluster *c, int rounds, const char *hold)
{
	for (int round = 0; round < rounds; round++) {
		char lease[64];
		struct h_proc a, b;
		int ra, rb;

		snprintf(lease, sizeof(lease), "race-%d-%d", (int)getpid(), round);
		h_cluster_lr(c, &a, "12", (const char *const[]){"-n", "-l", lease, "--", "sleep", hold, NULL});
		h_cluster_lr(c, &b, "21", (const char *const[]){"-n", "-l", lease, "--", "sleep", hold, NULL});
		ra = h_finish(&a, 30000);
		rb = h_finish(&b, 30000);
		cr_assert((ra == 0 && rb == 75) || (ra == 75 && rb == 0), "round %d: exits %d and %d\n%s\n%s", round,
			  ra, rb, h_slurp(a.err), h_slurp(b.err));
	}
}

void h_cluster_slot_race(const struct h_cluster *c, int rounds, const char *const orders[6], const char *hold)
{
	enum { N = 6 };

	for (int round = 0; round < rounds; round++) {
		char lease[64], why[4096];
		struct h_proc p[N];
		int ran = 0, busy = 0, n = 0;

		snprintf(lease, sizeof(lease), "slots-%d-%d", (int)getpid(), round);
		for (int i = 0; i < N; i++)
			h_cluster_lr(
			    c, &p[i], orders[i],
			    (const char *const[]){"--slots", "2", "-n", "-l", lease, "--", "sleep", hold, NULL});
		for (int i = 0; i < N; i++) {
			int rc = h_finish(&p[i], 30000);
			ran += rc == 0;
			busy += rc == 75;
			if (rc != 0 && rc != 75 && n < (int)sizeof(why))
				n += snprintf(why + n, sizeof(why) - (size_t)n, "\n%d: exit %d: %s", i, rc,
					      h_slurp(p[i].err));
		}
		why[n < (int)sizeof(why) ? n : (int)sizeof(why) - 1] = '\0';
		cr_assert(ran == 2 && busy == N - 2, "round %d: %d ran, %d busy%s", round, ran, busy, n ? why : "");
	}
}

/* ------------------------------------------------------------------ */
/* Fenced writes across members. The jobs are the mariadb CLI as
 * the suite's user, writing one row per committed transaction into
 * fenced_rows: its term, who wrote it, and for a new term's command how
 * many rows of older terms it saw committed when it began. */

const char *h_cluster_sql(const struct h_cluster *c, int n, const char *fmt, ...)
{
	static char out[4096];
	char sql[2048], full[2304], arg[12];
	const char *argv[] = {getenv("LR_SANDBOX"), "sql", getenv(c->dir_var), arg, "-N", "-B", "-e", full, NULL};
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	snprintf(arg, sizeof(arg), "%d", n);
	snprintf(full, sizeof(full), "%s; %s", c->causal, sql);
	rc = h_run(argv, out, sizeof(out));
	cr_assert_eq(rc, 0, "member %d: %s: exit %d: %s", n, sql, rc, out);
	return out;
}

static void fence_rows_table(const struct h_cluster *c)
{
	char hosts[512], *save = NULL;

	h_cluster_sql(c, 1,
		      "CREATE TABLE IF NOT EXISTS fenced_rows (lease VARCHAR(64) NOT NULL, term BIGINT UNSIGNED NOT "
		      "NULL, who VARCHAR(16) NOT NULL, saw INT NULL, PRIMARY KEY (lease, term, who))");
	/* The sandbox makes the user once per host it may come from. */
	snprintf(hosts, sizeof(hosts), "%s",
		 h_cluster_sql(c, 1, "SELECT host FROM mysql.user WHERE user='%s'", getenv("LR_DB_USER")));
	for (char *host = strtok_r(hosts, "\n", &save); host; host = strtok_r(NULL, "\n", &save))
		h_cluster_sql(c, 1, "GRANT SELECT, INSERT ON fenced_rows TO '%s'@'%s'", getenv("LR_DB_USER"), host);
	/* A causal read on every member: the table and the grants are there. */
	for (int n = 1; n <= 3; n++)
		h_cluster_sql(c, n, "SELECT COUNT(*) FROM fenced_rows WHERE lease = ''");
}

/* The suite's user's mariadb CLI to member N: a shell command prefix. */
static const char *fence_client(char *buf, size_t len, const struct h_cluster *c, int n)
{
	snprintf(buf, len, "mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P%d -u%s -p%s -N -B --unbuffered %s",
		 h_cluster_port(c, n), getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), getenv("LR_DB_NAME"));
	return buf;
}

/* ORDER: member FIRST, then the other two. */
static void fence_order(char order[4], int first)
{
	order[0] = (char)('0' + first);
	order[1] = (char)('0' + first % 3 + 1);
	order[2] = (char)('0' + (first + 1) % 3 + 1);
	order[3] = '\0';
}

/* A transaction of term 1 through member N, its statements read from a
 * pipe: it fences, writes its row, says "fenced" and stays open until a
 * line arrives on the FIFO GO (h_fifo_go); then it commits and says
 * "committed". The CLI stops at the first error, exit 1. */
static void fence_stale_start(const struct h_cluster *c, struct h_proc *p, int n, const char *lease, const char *go)
{
	char client[512], sh[2048];

	cr_assert_eq(mkfifo(go, 0600), 0, "mkfifo %s: %s", go, strerror(errno));
	snprintf(sh, sizeof(sh),
		 "{ echo \"START TRANSACTION; CALL leaderrun_fence('%s', 1); INSERT INTO fenced_rows (lease, term, "
		 "who) VALUES ('%s', 1, 'stale'); SELECT 'fenced';\"; read -r _ < %s; echo \"COMMIT; SELECT "
		 "'committed';\"; } | %s",
		 lease, lease, go, fence_client(client, sizeof(client), c, n));
	/* timeout ends the shell and its client with it (a process group)
	 * when a failed test never sends the COMMIT: an open transaction left
	 * behind would hold fenced_rows for the next test. */
	h_start(p, (const char *const[]){"timeout", "60", "/bin/sh", "-c", sh, NULL}, NULL);
	for (int k = 0; k < 2000 && !strstr(h_slurp(p->out), "fenced") && h_wait(p, 0) < 0; k++)
		h_sleep_ms(10);
	cr_assert(strstr(h_slurp(p->out), "fenced"), "the term-1 transaction never fenced:\n%s", h_slurp(p->err));
}

int h_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

void h_fifo_go(const char *go)
{
	int fd = -1;

	/* Its shell opens the FIFO right after its first statements. */
	for (int k = 0; k < 1000 && fd < 0; k++) {
		fd = open(go, O_WRONLY | O_NONBLOCK);
		if (fd < 0)
			h_sleep_ms(5);
	}
	cr_assert(fd >= 0, "nobody reads %s: %s", go, strerror(errno));
	cr_assert_eq(write(fd, "\n", 1), 1);
	close(fd);
}

/* The new term's command, through member N: its first action is a causal
 * read of the rows older terms committed so far; then it writes its own
 * row, fenced with its term. */
static const char *fence_new_command(char *buf, size_t len, const struct h_cluster *c, int n)
{
	char client[512];

	snprintf(buf, len,
		 "%s -e \"%s; SELECT COUNT(*) INTO @saw FROM fenced_rows WHERE lease = '$LEADERRUN_LEASE' AND term < "
		 "$LEADERRUN_TERM; START TRANSACTION; CALL leaderrun_fence('$LEADERRUN_LEASE', $LEADERRUN_TERM); "
		 "INSERT INTO fenced_rows VALUES ('$LEADERRUN_LEASE', $LEADERRUN_TERM, 'new', @saw); COMMIT\"",
		 fence_client(client, sizeof(client), c, n), c->causal);
	return buf;
}

/* LEASE's committed rows ("1:stale,2:new:1": term, who, and what a new
 * command saw), read causally on every member, which must agree. */
static const char *fence_rows(const struct h_cluster *c, const char *lease)
{
	static char rows[3][1024];

	for (int n = 1; n <= 3; n++)
		snprintf(rows[n - 1], sizeof(rows[0]), "%s",
			 h_cluster_sql(c, n,
				       "SELECT COALESCE(GROUP_CONCAT(CONCAT(term, ':', who, IFNULL(CONCAT(':', saw), "
				       "'')) ORDER BY term, who), '') FROM fenced_rows WHERE lease = '%s'",
				       lease));
	cr_assert(strcmp(rows[0], rows[1]) == 0 && strcmp(rows[0], rows[2]) == 0,
		  "the members disagree on what committed: '%s', '%s', '%s'", rows[0], rows[1], rows[2]);
	return rows[0];
}

/* The error code of a failed mariadb CLI ("ERROR 1213 (40001) at line 2:
 * ..."), 0 if none. */
static int fence_error(const struct h_proc *p)
{
	const char *e = strstr(h_slurp(p->err), "ERROR ");
	int code = 0;

	return e && sscanf(e, "ERROR %d", &code) == 1 ? code : 0;
}

static int fence_term(const struct h_cluster *c, const char *lease)
{
	return atoi(
	    h_cluster_sql(c, 1, "SELECT COALESCE(MAX(term), 0) FROM leaderrun_fence WHERE lease = '%s'", lease));
}

static void fence_wait_term(const struct h_cluster *c, const char *lease, int term)
{
	for (int k = 0; k < 200 && fence_term(c, lease) != term; k++)
		h_sleep_ms(50);
	cr_assert_eq(fence_term(c, lease), term, "the fence never reached term %d", term);
}

/* On every member, as the suite's user: the fence takes TERM inside a
 * transaction and refuses TERM - 1 with 45000, naming that term alone. */
static void fence_check_members(const struct h_cluster *c, const char *lease, int term)
{
	char client[512], sql[512], want[256];
	struct h_proc p;

	snprintf(want, sizeof(want), "(45000) at line 1: leaderrun_fence: lease '%s' term %d is stale\n", lease,
		 term - 1);
	for (int n = 1; n <= 3; n++) {
		fence_client(client, sizeof(client), c, n);
		for (int t = term; t >= term - 1; t--) {
			snprintf(sql, sizeof(sql), "START TRANSACTION; CALL leaderrun_fence('%s', %d); ROLLBACK", lease,
				 t);
			h_start(&p, (const char *const[]){"/bin/sh", "-c", "exec $0 -e \"$1\"", client, sql, NULL},
				NULL);
			if (t == term) {
				cr_assert_eq(h_finish(&p, 20000), 0, "member %d, term %d: %s", n, t, h_slurp(p.err));
			} else {
				cr_assert_eq(h_finish(&p, 20000), 1, "member %d took stale term %d", n, t);
				cr_assert(strstr(h_slurp(p.err), want), "member %d: want '%s' in:\n%s", n, want,
					  h_slurp(p.err));
			}
		}
	}
}

int h_cluster_fence_takeover(const struct h_cluster *c)
{
	const char *lease = h_lease("fence-takeover"), *go = h_path("go");
	struct h_proc holder, stale, next;
	char cmd[1024];
	int rc;

	fence_rows_table(c);
	h_cluster_lr(c, &holder, "123", (const char *const[]){"-l", lease, "--", "sleep", "2", NULL});
	fence_wait_term(c, lease, 1);
	fence_stale_start(c, &stale, 1, lease, go);
	h_cluster_lr(c, &next, "213",
		     (const char *const[]){"-w", "30s", "-l", lease, "--", "sh", "-c",
					   fence_new_command(cmd, sizeof(cmd), c, 2), NULL});
	cr_assert_eq(h_finish(&holder, 20000), 0, "%s", h_slurp(holder.err));
	cr_assert_eq(h_finish(&next, 30000), 0, "%s", h_slurp(next.err));
	/* The new term's command has committed its row: now term 1's. */
	h_fifo_go(go);
	rc = h_finish(&stale, 20000);
	cr_assert_null(strstr(h_slurp(stale.out), "committed"), "term 1 committed after the takeover: %s",
		       fence_rows(c, lease));
	cr_assert_eq(rc, 1, "the term-1 transaction exited %d:\n%s", rc, h_slurp(stale.err));
	cr_assert_str_eq(fence_rows(c, lease), "2:new:0");
	fence_check_members(c, lease, 2);
	return fence_error(&stale);
}

/* Counts a refusal's error CODE in R. */
static void fence_count(struct h_fence_race *r, int code)
{
	for (int i = 0; i < 4; i++) {
		if (r->codes[i] == code || r->counts[i] == 0) {
			r->codes[i] = code;
			r->counts[i]++;
			return;
		}
	}
	cr_assert_fail("more than four error codes: %d", code);
}

/* One round of h_cluster_fence_race: term 1 through member S, term 2
 * through member M, the COMMIT sent OFFSET ms after term 2's holder starts
 * (before it, when negative). */
static void fence_round(const struct h_cluster *c, int round, int s, int m, int offset, struct h_fence_race *r)
{
	char lease[64], go[32], order[4], cmd[1024];
	struct h_proc first, stale, next;
	const char *rows;
	int rs;

	snprintf(lease, sizeof(lease), "fence-race-%d-%d", (int)getpid(), round);
	snprintf(go, sizeof(go), "go%d", round);
	fence_order(order, s);
	h_cluster_lr(c, &first, order, (const char *const[]){"-n", "-l", lease, "--", "true", NULL});
	cr_assert_eq(h_finish(&first, 20000), 0, "%s", h_slurp(first.err));
	fence_stale_start(c, &stale, s, lease, h_path(go));
	if (offset < 0) {
		h_fifo_go(h_path(go));
		h_sleep_ms(-offset);
	}
	fence_order(order, m);
	h_cluster_lr(c, &next, order,
		     (const char *const[]){"-n", "-l", lease, "--", "sh", "-c",
					   fence_new_command(cmd, sizeof(cmd), c, m), NULL});
	if (offset >= 0) {
		h_sleep_ms(offset);
		h_fifo_go(h_path(go));
	}
	rs = h_finish(&stale, 30000);
	cr_assert_eq(h_finish(&next, 30000), 0, "round %d: %s", round, h_slurp(next.err));
	rows = fence_rows(c, lease);
	if (rs == 0) {
		/* Committed: before the move, so before the new command's read. */
		cr_assert_str_eq(rows, "1:stale,2:new:1",
				 "round %d (term 1 through member %d, term 2 through %d, commit at %+d ms): term 1 "
				 "committed after term 2's command began (committed: %s)",
				 round, s, m, offset, rows);
		r->committed_first++;
	} else {
		cr_assert_eq(rs, 1, "round %d: the term-1 transaction exited %d: %s", round, rs, h_slurp(stale.err));
		cr_assert_str_eq(rows, "2:new:0", "round %d: refused (%s), yet committed: %s", round,
				 h_slurp(stale.err), rows);
		fence_count(r, fence_error(&stale));
		r->refused++;
	}
	r->rounds++;
}

void h_cluster_fence_race(const struct h_cluster *c, int rounds, struct h_fence_race *r)
{
	memset(r, 0, sizeof(*r));
	fence_rows_table(c);
	for (int k = 0; k < rounds; k++) {
		/* Term 1 through each member in turn, term 2 through each of the
		 * other two. The commit goes from 10 ms before the holder starts
		 * to 120 ms after, some 7 ms apart: around its move (15 to 30 ms
		 * after its start), and past its command's first read (30 to
		 * 90 ms), before which a late commit would go unseen. */
		int s = 1 + k % 3, m = 1 + (s + k / 3 % 2) % 3;

		fence_round(c, k, s, m, -10 + k * 47 % 130, r);
	}
}

void h_vm_of(const struct h_proc *p, struct h_vm *vm)
{
	pid_t kids[8];
	int n;

	memset(vm, 0, sizeof(*vm));
	vm->leaderrun = p->pid;
	cr_assert(h_wait_file(p->out, "\n", 10000), "the command never said its pid");
	cr_assert_eq(sscanf(h_slurp(p->out), "%d", &vm->command), 1);
	n = procs_children_of(p->pid, kids, 8);
	for (int i = 0; i < n; i++)
		if (kids[i] != vm->command)
			vm->watcher = kids[i];
	cr_assert_gt(vm->watcher, 0, "no watcher process found");
}

void h_vm_signal(const struct h_vm *vm, int sig)
{
	if (sig == SIGCONT) {
		kill(-vm->command, SIGCONT);
		kill(vm->watcher, SIGCONT);
		kill(vm->leaderrun, SIGCONT);
		return;
	}
	kill(vm->leaderrun, sig);
	kill(vm->watcher, sig);
	kill(-vm->command, sig);
}
