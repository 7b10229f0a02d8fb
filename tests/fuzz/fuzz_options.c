/* libFuzzer target: options_parse, the whole command line.
 *
 * Input: arguments separated by NUL or newline bytes (at most 31; a
 * trailing separator ends the last argument), run as
 * "leaderrun ARG...". Every LEADERRUN_* variable and MYSQL_PWD are unset.
 *
 * scripts/fuzz compiles src/cli/options.c and options_*.c with
 * -Dopen=fuzz_open -Dclose=fuzz_close -Daccess=fuzz_access, so that
 * --password-file, --defaults-file and --ssl-ca/-cert/-key only ever see
 * the fixture files in tests/fuzz/files/ (relative paths, resolved
 * there), /dev/null and /dev/zero; everything else is ENOENT. An open for
 * writing is a failure.
 *
 * Checks, besides memory safety, leaks and UBSan:
 *  - every file options*.c opens is closed again;
 *  - argv is changed only by overwriting bytes with 'x', never before
 *    argv[1] or from COMMAND on, nor in the argument that holds -c's
 *    STRING;
 *  - OPTIONS_OK: after a --dsn, no argument before COMMAND still holds a
 *    DSN password that dsn_password_span finds (options.h: the password
 *    is wiped from argv); the result is consistent: lease, holder and
 *    table valid, timing resolved and safe (renew <= ttl - margin -
 *    grace), durations >= 0 (wait timeout -1 = forever), retry >= 10ms,
 *    a stopping signal, an exit code 0..255, a COMMAND in run mode and
 *    none with --init, any lease or holder a mode stores valid, -c's
 *    STRING run as /bin/sh -c STRING with nothing after it, a positive
 *    --max-runtime only for a run,
 *    a TLS mode with what it needs (a CA to verify, a key with a
 *    certificate, no certificates when disabled), a valid NAME_history
 *    table, and --format, --json, --limit, --history-keep and
 *    --metrics-file only in the modes they go with;
 *  - OPTIONS_USAGE: a one-line message, and nothing left allocated.
 *
 * FUZZ_DEBUG=1 prints every argv and its result, e.g. to replay a corpus:
 *   FUZZ_DEBUG=1 build-fuzz/fuzz_options -runs=0 tests/fuzz/corpus/options */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "fuzz_common.h"
#include "lease/lease.h"

#define MAX_ARGS 32  /* argv[0] included */
#define ERRLEN	 512 /* what main.c passes */

#ifndef FUZZ_FILES_DIR
#define FUZZ_FILES_DIR ""
#endif

static FILE *devnull;
static bool debug; /* FUZZ_DEBUG=1: print each result (for replaying inputs) */
static char files_dir[PATH_MAX];
static long open_fds;
static unsigned long opens;

int fuzz_open(const char *path, int flags, ...);
int fuzz_close(int fd);
int fuzz_access(const char *path, int mode);

static const char *sandboxed(const char *path, char *buf, size_t len)
{
	if (strcmp(path, "/dev/null") == 0 || strcmp(path, "/dev/zero") == 0)
		return path;
	if (!files_dir[0] || !path[0] || path[0] == '/' || strstr(path, ".."))
		return NULL;
	if ((size_t)snprintf(buf, len, "%s/%s", files_dir, path) >= len)
		return NULL;
	return buf;
}

int fuzz_open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	const char *real;
	int fd;

	FUZZ_CHECK((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC | O_APPEND)),
		   "options*.c opens '%s' with flags %#x, not read-only", path, (unsigned)flags);
	opens++;
	real = sandboxed(path, buf, sizeof(buf));
	if (!real) {
		errno = ENOENT;
		return -1;
	}
	fd = open(real, flags);
	if (fd >= 0)
		open_fds++;
	return fd;
}

int fuzz_close(int fd)
{
	open_fds--;
	return close(fd);
}

int fuzz_access(const char *path, int mode)
{
	char buf[PATH_MAX];
	const char *real = sandboxed(path, buf, sizeof(buf));

	if (!real) {
		errno = ENOENT;
		return -1;
	}
	return access(real, mode);
}

/* glibc's getopt keeps a pointer into the previous argv (the rest of a
 * bundle like "-hv") that options_parse's optind = 1 does not clear; the
 * previous argv is freed by now. optind = 0 reinitialises it fully, and
 * the "+" makes that initialisation the one options_parse's first call
 * would do. */
static void reset_getopt(void)
{
	static char name[] = "fuzz";
	char *v[] = {name, NULL};

	opterr = 0;
	optind = 0;
	(void)getopt(1, v, "+:");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const vars[] = {"LEADERRUN_DSN",    "LEADERRUN_TABLE",    "LEADERRUN_LEASE",
					   "LEADERRUN_HOLDER", "LEADERRUN_PASSWORD", "MYSQL_PWD",
					   "LEADERRUN_TERM"};
	const char *dir = getenv("FUZZ_FILES");
	char a0[] = "leaderrun", a1[] = "--password-file", a2[] = "pw", a3[] = "true";
	char *probe[] = {a0, a1, a2, a3, NULL};
	struct options o;
	char err[ERRLEN];

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	/* And any LEADERRUN_* added since; unsetenv reshuffles environ, so
	 * start over after each. */
	for (bool again = true; again;) {
		again = false;
		for (char **e = environ; !again && *e; e++)
			if (strncmp(*e, "LEADERRUN_", 10) == 0) {
				char name[256];
				snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
				unsetenv(name);
				again = true;
			}
	}
	debug = getenv("FUZZ_DEBUG") && *getenv("FUZZ_DEBUG") == '1';
	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull, "cannot open /dev/null");
	snprintf(files_dir, sizeof(files_dir), "%s", dir && *dir ? dir : FUZZ_FILES_DIR);

	/* options*.c must have been built with the file sandbox. */
	reset_getopt();
	if (options_parse(4, probe, devnull, &o, err, sizeof(err)) == OPTIONS_OK)
		options_free(&o);
	FUZZ_CHECK(opens == 1, "src/cli/options*.c were not compiled with -Dopen=fuzz_open (see scripts/fuzz)");
	if (!files_dir[0] || access(files_dir, R_OK) != 0)
		fprintf(stderr, "fuzz_options: no fixture files (FUZZ_FILES='%s'); every --password-file is ENOENT\n",
			files_dir);
	return 0;
}

static bool only_x_changes(const char *now, const char *was)
{
	if (strlen(now) != strlen(was))
		return false;
	for (size_t i = 0; now[i]; i++)
		if (now[i] != was[i] && now[i] != 'x')
			return false;
	return true;
}

/* No DSN in S with a password span that is not all 'x'. */
static bool no_password_left(const char *s)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};

	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
		for (const char *p = s; (p = strstr(p, schemes[k])); p++) {
			size_t off, len;
			if (dsn_password_span(p, &off, &len))
				for (size_t i = 0; i < len; i++)
					if (p[off + i] != 'x')
						return false;
		}
	return true;
}

static bool stops_process(int sig)
{
	return sig != SIGCHLD && sig != SIGCONT && sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN &&
	       sig != SIGTTOU && sig != SIGURG && sig != SIGWINCH;
}

/* The argument of ARGV that holds -c's STRING (O->shell_argv[2]), or 0. */
static int shell_index(const struct options *o, char **argv, int argc)
{
	uintptr_t s = o->shell_argv ? (uintptr_t)o->shell_argv[2] : 0;

	for (int i = 1; s && i < argc; i++)
		if (s >= (uintptr_t)argv[i] && s <= (uintptr_t)argv[i] + strlen(argv[i]))
			return i;
	return 0;
}

static void check_ok(const struct options *o, char **argv, int argc)
{
	const struct timing *t = &o->timing;
	char err[ERRLEN];
	int cmd, shell = shell_index(o, argv, argc);

	if (o->shell_argv) {
		/* -c STRING: the shell runs it, and nothing follows it. */
		FUZZ_CHECK(o->command == o->shell_argv && o->mode == MODE_RUN, "-c accepted in mode %d", (int)o->mode);
		FUZZ_CHECK(strcmp(o->command[0], "/bin/sh") == 0 && strcmp(o->command[1], "-c") == 0 &&
			       o->command[2][0] && !o->command[3],
			   "-c runs '%s' '%s' '%s'", o->command[0], o->command[1], o->command[2]);
		FUZZ_CHECK(shell > 0, "-c's STRING is not inside argv");
		cmd = argc;
	} else {
		FUZZ_CHECK(o->command >= argv + 1 && o->command <= argv + argc, "COMMAND is not inside argv");
		cmd = (int)(o->command - argv);
	}
	FUZZ_CHECK(o->max_runtime_us == 0 || (o->max_runtime_us > 0 && o->mode == MODE_RUN),
		   "--max-runtime %lld accepted in mode %d", (long long)o->max_runtime_us, (int)o->mode);
	/* Other modes (--status, --release, ...) have their own rules. */
	FUZZ_CHECK(o->mode != MODE_RUN || o->command[0], "run mode without a COMMAND");
	FUZZ_CHECK(o->mode != MODE_INIT || !o->command[0], "--init with COMMAND '%s'", o->command[0]);
	FUZZ_CHECK(lease_table_validate(o->table, err, sizeof(err)) == 0, "table '%s': %s", o->table, err);
	FUZZ_CHECK(!(o->dsn.password && o->password), "a password both in the DSN and from elsewhere");
	/* Without a DSN, hosts come only from an option file's host list. */
	FUZZ_CHECK(!o->have_dsn || o->dsn.nhosts || o->dsn.socket, "a DSN without a host or socket accepted");
	FUZZ_CHECK(o->wait_timeout_us == -1 || o->wait_timeout_us >= 0, "wait timeout %lld",
		   (long long)o->wait_timeout_us);
	FUZZ_CHECK(!(o->no_wait && o->wait_timeout_us >= 0), "--no-wait and --wait-timeout both accepted");
	FUZZ_CHECK(o->retry_us >= 10000, "retry interval %lld", (long long)o->retry_us);
	FUZZ_CHECK(o->kill_signal >= 1 && o->kill_signal < NSIG && stops_process(o->kill_signal), "kill signal %d",
		   o->kill_signal);
	FUZZ_CHECK(o->busy_exit >= 0 && o->busy_exit <= 255, "busy exit %d", o->busy_exit);
	FUZZ_CHECK(o->verbosity >= -1, "verbosity %d", o->verbosity);
	FUZZ_CHECK(o->tls >= DB_TLS_DEFAULT && o->tls <= DB_TLS_VERIFY_IDENTITY, "tls mode %d", (int)o->tls);
	FUZZ_CHECK(o->tls < DB_TLS_VERIFY_CA || o->ssl_ca || o->system_ca[0], "ssl mode %d without a CA", (int)o->tls);
	FUZZ_CHECK(!o->force || o->mode == MODE_RELEASE, "--force accepted outside --release");
	FUZZ_CHECK(o->pause_for_us == -1 || (o->pause_for_us > 0 && o->mode == MODE_PAUSE), "pause for %lld",
		   (long long)o->pause_for_us);
	FUZZ_CHECK(o->once_per_us == 0 ||
		       (o->mode == MODE_RUN && o->once_per_us >= 1000000 && o->once_per_us <= INT64_C(31622400000000)),
		   "--once-per %lld", (long long)o->once_per_us);
	FUZZ_CHECK(!o->ssl_cert == !o->ssl_key, "--ssl-cert without --ssl-key or the other way round");
	FUZZ_CHECK(o->tls != DB_TLS_DISABLED || (!o->ssl_ca && !o->ssl_cert), "TLS disabled with certificates");
	/* Issue 14: the history table is a valid name next to the lease
	 * table, and the observability options go with their modes. */
	FUZZ_CHECK(lease_table_validate(o->history_table, err, sizeof(err)) == 0, "history table '%s': %s",
		   o->history_table, err);
	FUZZ_CHECK(strlen(o->history_table) > 8 &&
		       strcmp(o->history_table + strlen(o->history_table) - 8, "_history") == 0,
		   "history table '%s' for table '%s'", o->history_table, o->table);
	FUZZ_CHECK(o->format == FORMAT_TEXT || o->mode == MODE_STATUS || o->mode == MODE_HISTORY,
		   "--format %d accepted in mode %d", (int)o->format, (int)o->mode);
	FUZZ_CHECK(o->format != FORMAT_PROMETHEUS || (o->mode == MODE_STATUS && !o->json),
		   "--format prometheus accepted in mode %d (json %d)", (int)o->mode, (int)o->json);
	FUZZ_CHECK(!o->json || o->format == FORMAT_JSON, "--json without the JSON format");
	FUZZ_CHECK(o->history_limit <= 1000000 && (o->history_limit == 0 || o->mode == MODE_HISTORY),
		   "--limit %u accepted in mode %d", o->history_limit, (int)o->mode);
	FUZZ_CHECK(o->history_keep <= 1000000 && (o->history_keep == 100 || o->mode == MODE_RUN),
		   "--history-keep %u accepted in mode %d", o->history_keep, (int)o->mode);
	FUZZ_CHECK(!o->metrics_file || (o->mode == MODE_RUN && o->metrics_file[0]),
		   "--metrics-file '%s' accepted in mode %d", o->metrics_file ? o->metrics_file : "", (int)o->mode);
	FUZZ_CHECK(o->mode != MODE_HISTORY || o->lease[0], "--history without a lease");

	if (o->mode != MODE_RUN) {
		/* Whatever names a mode stored must be valid too. */
		FUZZ_CHECK(!o->lease[0] ||
			       lease_name_validate("lease", o->lease, LEASE_NAME_MAX, err, sizeof(err)) == 0,
			   "lease name '%s' is invalid: %s", o->lease, err);
		FUZZ_CHECK(!o->holder[0] ||
			       lease_name_validate("holder", o->holder, LEASE_HOLDER_MAX, err, sizeof(err)) == 0,
			   "holder '%s' is invalid: %s", o->holder, err);
	} else {
		FUZZ_CHECK(lease_name_validate("lease", o->lease, LEASE_NAME_MAX, err, sizeof(err)) == 0,
			   "lease name '%s' (derived: %d) is invalid: %s", o->lease, o->lease_derived, err);
		FUZZ_CHECK(lease_name_validate("holder", o->holder, LEASE_HOLDER_MAX, err, sizeof(err)) == 0,
			   "holder '%s' is invalid: %s", o->holder, err);
		FUZZ_CHECK(t->ttl_us >= TIMING_MIN_TTL_US && t->renew_us > 0 && t->grace_us >= 0 && t->margin_us > 0,
			   "timing ttl %lld renew %lld grace %lld margin %lld", (long long)t->ttl_us,
			   (long long)t->renew_us, (long long)t->grace_us, (long long)t->margin_us);
		FUZZ_CHECK(t->ttl_us - t->margin_us - t->grace_us >= t->renew_us,
			   "unsafe timing accepted: ttl %lld renew %lld grace %lld margin %lld", (long long)t->ttl_us,
			   (long long)t->renew_us, (long long)t->grace_us, (long long)t->margin_us);
	}

	/* options.h: a password given in --dsn is wiped from argv. */
	if (o->have_dsn)
		for (int i = 1; i < cmd; i++)
			FUZZ_CHECK(i == shell || no_password_left(argv[i]), "argv[%d] '%s' still holds a DSN password",
				   i, argv[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 1], *was[MAX_ARGS + 1];
	char *err = fuzz_buffer(ERRLEN);
	struct options o;
	enum options_result rc;
	int argc = 1, cmd = 1, shell = 0;
	size_t start = 0;

	argv[0] = strdup("leaderrun");
	while (start < size && argc < MAX_ARGS) {
		size_t end = start;
		while (end < size && data[end] != '\0' && data[end] != '\n')
			end++;
		argv[argc] = fuzz_cstring(data + start, end - start); /* exact size: ASan sees overruns */
		argc++;
		start = end + 1;
	}
	argv[argc] = NULL;
	for (int i = 0; i < argc; i++)
		was[i] = strdup(argv[i]);

	reset_getopt();
	open_fds = 0;
	rc = options_parse(argc, argv, devnull, &o, err, ERRLEN);
	FUZZ_CHECK(open_fds == 0, "options_parse left %ld file(s) open", open_fds);
	if (debug) {
		fprintf(stderr, "options_parse(");
		for (int i = 1; i < argc; i++)
			fprintf(stderr, "%s'%s'", i > 1 ? ", " : "", argv[i]);
		fprintf(stderr, ") = %s%s\n",
			rc == OPTIONS_OK     ? "OK"
			: rc == OPTIONS_EXIT ? "EXIT"
					     : "USAGE: ",
			rc == OPTIONS_USAGE ? err : "");
	}

	switch (rc) {
	case OPTIONS_OK:
		check_ok(&o, argv, argc);
		cmd = o.shell_argv ? argc : (int)(o.command - argv);
		shell = shell_index(&o, argv, argc);
		break;
	case OPTIONS_USAGE:
		FUZZ_CHECK(fuzz_terminated(err, ERRLEN) && err[0], "usage error without a message");
		/* Arguments hold no newline here; a %0A in a DSN parameter is
		 * refused before anything echoes it. */
		FUZZ_CHECK(!strchr(err, '\n'), "usage error of more than one line: %s", err);
		FUZZ_CHECK(!o.password && !o.dsn.user && !o.dsn.password && !o.dsn.nhosts && !o.dsn.database &&
			       !o.dsn.socket && !o.shell_argv,
			   "usage error left memory in the options: %s", err);
		cmd = argc;
		break;
	case OPTIONS_EXIT:
		cmd = argc;
		break;
	default:
		FUZZ_CHECK(0, "options_parse returned %d", (int)rc);
	}

	FUZZ_CHECK(strcmp(argv[0], was[0]) == 0, "argv[0] changed");
	for (int i = 1; i < argc; i++) {
		if (i >= cmd || i == shell)
			FUZZ_CHECK(strcmp(argv[i], was[i]) == 0, "COMMAND argument %d changed: '%s' -> '%s'", i - cmd,
				   was[i], argv[i]);
		else
			FUZZ_CHECK(only_x_changes(argv[i], was[i]), "argv[%d] changed beyond wiping: '%s' -> '%s'", i,
				   was[i], argv[i]);
	}

	if (rc == OPTIONS_OK)
		options_free(&o);
	for (int i = 0; i < argc; i++) {
		free(argv[i]);
		free(was[i]);
	}
	free(err);
	return 0;
}
