#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/signame.h"
#include "config.h"
#include "db/tlspolicy.h"
#include "leasename.h"
#include "optfile.h"
#include "revision.h"

#define PASSWORD_FILE_MAX 4096

/* User input as a message may quote it: a DSN's password hidden wherever
 * it turns up (a value given to the wrong option, a forgotten -d). Every
 * message that echoes input goes through it (issue 25). */
static const char *options_shown(const char *value, char *buf, size_t len)
{
	dsn_redact_all(value ? value : "", buf, len);
	return buf;
}
#define SHOWN_MAX 256
#define SHOWN(v)  options_shown((v), (char[SHOWN_MAX]){""}, SHOWN_MAX)

int options_parse_signal(const char *text)
{
	const char *name = text;
	char *end;
	long n;

	if (!text || !*text)
		return -1;
	if (*text >= '0' && *text <= '9') {
		errno = 0;
		n = strtol(text, &end, 10);
		if (errno || *end || n < 1 || n >= NSIG)
			return -1;
		return (int)n;
	}
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (int s = 1; s < NSIG; s++) {
		const char *abbrev = signame_abbrev(s);
		if (abbrev && strcasecmp(abbrev, name) == 0)
			return s;
	}
	return -1;
}

static bool signal_stops_process(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGURG:
	case SIGWINCH:
		return false;
	default:
		return true;
	}
}

static int read_password_file(const char *path, char **out, char *err, size_t errlen)
{
	char buf[PASSWORD_FILE_MAX + 1];
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errlen, "--password-file %s: %s", SHOWN(path), strerror(errno));
		return -1;
	}
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "--password-file %s: %s", SHOWN(path), strerror(errno));
			close(fd);
			explicit_bzero(buf, sizeof(buf));
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	if (n > PASSWORD_FILE_MAX) {
		snprintf(err, errlen, "--password-file %s is longer than %d bytes; is it the right file?", SHOWN(path),
			 PASSWORD_FILE_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	/* "echo secret > file" adds a newline that is not part of the secret;
	 * a Kubernetes Secret has none. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (memchr(buf, '\0', n) || memchr(buf, '\n', n)) {
		snprintf(err, errlen, "--password-file %s holds more than one line", SHOWN(path));
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	*out = strndup(buf, n);
	explicit_bzero(buf, sizeof(buf));
	return *out ? 0 : -1;
}

/* A DSN typed on the command line is visible to every local user in
 * /proc/PID/cmdline; overwrite its password in place, as mysql(1) does.
 * Every argument before COMMAND is searched, so repeated, bundled (-nd...)
 * and abbreviated (--ds=...) forms are covered too; but not argv[SHELL_AT],
 * which holds -c's STRING (0: none): that is COMMAND, its bytes its own.
 * The widest span that may be a password goes (dsn_secret_span), not only
 * what the parser took: a DSN it misreads or refuses keeps no secret in
 * view either (issue 25). */
static void wipe_argv_passwords(char *argv[], int end, int shell_at)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};

	for (int i = 1; i < end; i++) {
		if (i == shell_at)
			continue;
		for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
			for (char *p = argv[i]; (p = strstr(p, schemes[k])); p++) {
				size_t off, len;
				if (dsn_secret_span(p, &off, &len))
					memset(p + off, 'x', len);
			}
	}
}

static int set_name(const char *what, char *dst, size_t cap, const char *value, size_t max, char *err, size_t errlen)
{
	size_t off, len;

	/* A forgotten -d (leaderrun --status mysql://app:pw@db/ops) would
	 * print, log and store the password as a name. */
	if (dsn_secret_span(value, &off, &len)) {
		snprintf(err, errlen, "the %s looks like a DSN with a password; give a DSN with -d/--dsn", what);
		return -1;
	}
	if (lease_name_validate(what, value, max, err, errlen) < 0)
		return -1;
	snprintf(dst, cap, "%s", value);
	return 0;
}

/* What the command line gave, before it is checked as a whole: the values
 * that later steps combine (a DSN with the option files, a lease name with
 * the mode) wait here; the rest go straight into the options. */
#define DEFS_MAX 64 /* the table's rows, at most */

struct parse {
	struct options *o;
	FILE *out;
	char *err;
	size_t errlen;
	char **argv;
	int command_at;	      /* argv's index of COMMAND, where getopt stopped */
	bool given[DEFS_MAX]; /* by the table's index: given on the command line */
	const char *dsn_text, *table, *password_file;
	int dsn_rc;	   /* dsn_parse's, when dsn_text was parsed */
	char dsn_why[512]; /* its message, when it failed */
	const char *ssl_mode, *ssl_ca, *ssl_cert, *ssl_key;
	const char *mode_lease; /* --release, --pause, --resume, --history LEASE */
	const char *term_text, *log_format;
	const char *lease_arg, *holder_arg, *fence_user;
	const char *format, *limit_text, *keep_text;
	const char *shell; /* -c STRING */
	int shell_at;	   /* the index in argv of the argument that holds it */
	const char *slots_text, *slot_text;
	bool quiet;
	int modes;
};

/* An option's effect: 0, -1 with p->err filled (a usage error), or
 * OPT_DONE when it printed what was asked (--help, --version). */
#define OPT_DONE 1
typedef int opt_set_fn(struct parse *p, const char *arg);

#define FAIL(...)                                                                                                      \
	do {                                                                                                           \
		snprintf(p->err, p->errlen, __VA_ARGS__);                                                              \
		return -1;                                                                                             \
	} while (0)

/* OPTIONS_DURATION: "--NAME: why" when it is no duration, "--NAME VALUE
 * out_of_range" when it is not one of the row's. */
static int store_duration(struct parse *p, const struct options_def *d, const char *arg, int64_t *out)
{
	char why[160];

	if (duration_parse(arg, out, why, sizeof(why)) < 0)
		FAIL("--%s: %s", d->name, SHOWN(why));
	if (d->store.out_of_range && (*out < d->store.min || *out > d->store.max))
		FAIL("--%s %s %s", d->name, SHOWN(arg), d->store.out_of_range);
	return 0;
}

/* OPTIONS_NUMBER: a decimal int from min to max. */
static int store_number(struct parse *p, const struct options_def *d, const char *arg, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || n < d->store.min || n > d->store.max)
		FAIL("--%s '%s' must be a number from %" PRId64 " to %" PRId64, d->name, SHOWN(arg), d->store.min,
		     d->store.max);
	*out = (int)n;
	return 0;
}

/* Stores an option's value as its row's store column says. Returns what
 * the row's set function returns, or 0 or -1 (a usage error). */
static int options_store(struct parse *p, const struct options_def *d, const char *arg)
{
	const struct options_store *s = &d->store;
	void *at = (s->place == OPTIONS_IN_PARSE ? (char *)p : (char *)p->o) + s->offset;

	switch (s->kind) {
	case OPTIONS_CALL:
		return d->set(p, arg);
	case OPTIONS_FLAG:
		*(bool *)at = true;
		return 0;
	case OPTIONS_COUNT:
		(*(int *)at)++;
		return 0;
	case OPTIONS_TEXT:
		*(const char **)at = arg;
		return 0;
	case OPTIONS_DURATION:
		return store_duration(p, d, arg, at);
	case OPTIONS_NUMBER:
		return store_number(p, d, arg, at);
	case OPTIONS_SELECT_MODE:
		p->o->mode = s->mode;
		p->modes++;
		if (d->takes_value)
			p->mode_lease = arg;
		return 0;
	}
	FAIL("--%s: no way to store it", d->name);
}

/* The options that do more than store a value. */
static int set_defaults_file(struct parse *p, const char *arg)
{
	struct stat st;

	if (access(arg, R_OK) != 0)
		FAIL("--defaults-file %s: %s", SHOWN(arg), strerror(errno));
	/* The client library would read a device like /dev/zero for ever. */
	if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode))
		FAIL("--defaults-file %s: not a regular file", SHOWN(arg));
	p->o->defaults_file = arg;
	return 0;
}
static int set_metrics_file(struct parse *p, const char *arg)
{
	if (!*arg)
		FAIL("--metrics-file needs a path");
	p->o->metrics_file = arg;
	return 0;
}
static int set_notify(struct parse *p, const char *arg)
{
	if (p->o->nnotify == OPTIONS_MAX_NOTIFY)
		FAIL("at most %d --notify URLs", OPTIONS_MAX_NOTIFY);
	p->o->notify_urls[p->o->nnotify++] = arg;
	return 0;
}
/* "a FIFO" when PATH exists and is a FIFO, device or socket (stat does
 * not block), else NULL. */
static const char *options_special_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return NULL;
	return S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
}
static int set_kill_signal(struct parse *p, const char *arg)
{
	p->o->kill_signal = options_parse_signal(arg);
	if (p->o->kill_signal < 0)
		FAIL("--kill-signal '%s' is not a signal; use a name like TERM or INT, or a number", SHOWN(arg));
	if (!signal_stops_process(p->o->kill_signal))
		FAIL("--kill-signal %s does not stop a process; use TERM, INT, HUP, QUIT or KILL", SHOWN(arg));
	return 0;
}
static int set_command(struct parse *p, const char *arg)
{
	if (p->shell)
		FAIL("-c given twice; join the commands in one STRING (-c 'cmd1 && cmd2')");
	if (!*arg)
		FAIL("-c needs a command STRING; -c '' runs nothing");
	p->shell = arg;
	/* getopt has stepped past the argument that held it ("-c STRING",
	 * "-cSTRING", "--command=STRING"). */
	p->shell_at = optind - 1;
	return 0;
}
static int show_help(struct parse *p, const char *arg);
static int show_version(struct parse *p, const char *arg)
{
	fprintf(p->out, "leaderrun %s (git %s, %s)\n", LEADERRUN_VERSION, LEADERRUN_REVISION, LEADERRUN_CLIENT);
	return OPT_DONE;
}

/* The columns that say how a row stores its value: its set function, its
 * store, and whether it takes a value (set, store, takes_value). A field
 * is named with its type: a field of another type fails the build
 * (_Generic has no association for it), not the run. */
/* (clang-format would take STORE's braces for a block.) */
/* clang-format off */
#define IN_OPTIONS(field, type) \
	OPTIONS_IN_OPTIONS, _Generic(((struct options *)NULL)->field, type: offsetof(struct options, field))
#define IN_PARSE(field, type) \
	OPTIONS_IN_PARSE, _Generic(((struct parse *)NULL)->field, type: offsetof(struct parse, field))
#define STORE(kind, at, mode, min, max, out_of_range) NULL, {kind, at, mode, min, max, out_of_range}
#define CALL(fn, takes_value) fn, {OPTIONS_CALL, OPTIONS_IN_OPTIONS, 0, MODE_RUN, 0, 0, NULL}, takes_value
#define FLAG(in, field)  STORE(OPTIONS_FLAG, in(field, bool), MODE_RUN, 0, 0, NULL), false
#define COUNT(in, field) STORE(OPTIONS_COUNT, in(field, int), MODE_RUN, 0, 0, NULL), false
#define TEXT(in, field)  STORE(OPTIONS_TEXT, in(field, const char *), MODE_RUN, 0, 0, NULL), true
/* A duration outside MIN..MAX is refused with "--NAME VALUE OUT_OF_RANGE". */
#define DURATION_IN(field, min, max, out_of_range) \
	STORE(OPTIONS_DURATION, IN_OPTIONS(field, int64_t), MODE_RUN, min, max, out_of_range), true
#define DURATION(field) DURATION_IN(field, 0, INT64_MAX, NULL)
#define NUMBER(field, min, max) STORE(OPTIONS_NUMBER, IN_OPTIONS(field, int), MODE_RUN, min, max, NULL), true
/* An operator mode; with TAKES_VALUE, its LEASE. */
#define SELECT(m, takes_value) \
	STORE(OPTIONS_SELECT_MODE, IN_OPTIONS(mode, enum options_mode), MODE_##m, 0, 0, NULL), takes_value
/* clang-format on */

/* Every option, once: getopt_long's table and short options, --help, the
 * check of the modes each goes with (options_check_modes), and the tests
 * that hold the man page and the bash completion to it are all made from
 * this. The order is --help's. The columns after the help: how the value
 * is stored (the macros above), the modes the option goes with, and the
 * line that refuses it in any other (ANY_MODE, NULL: it is accepted in
 * every mode). */
#define MODE(m)	 OPTIONS_MODE(MODE_##m)
#define ANY_MODE OPTIONS_ANY_MODE
static const struct options_def defs[] = {
    {"dsn", 'd', "DSN", "Connection",
     "mysql://USER[:PASS]@HOST[:PORT][,HOST[:PORT]...]/DB[?PARAM=VALUE&...]\n"
     "(socket, connect-timeout, host-order=random, ssl-*)",
     TEXT(IN_PARSE, dsn_text), ANY_MODE, NULL},
    {"password-file", 0, "FILE", NULL, "read the password from FILE", TEXT(IN_PARSE, password_file), ANY_MODE, NULL},
    {"defaults-file", 0, "FILE", NULL, "MySQL option file (groups [client] and [leaderrun])",
     CALL(set_defaults_file, true), ANY_MODE, NULL},
    {"table", 0, "NAME", NULL, "lease table (default leaderrun_lease)", TEXT(IN_PARSE, table), ANY_MODE, NULL},
    {"ssl-mode", 0, "MODE", NULL,
     "DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY\n"
     "(default: VERIFY_IDENTITY for any host but the socket,\n"
     "localhost, 127.0.0.0/8 and ::1)",
     TEXT(IN_PARSE, ssl_mode), ANY_MODE, NULL},
    {"ssl-ca", 0, "FILE", NULL,
     "CA certificate(s) to verify the server with (default: the\n"
     "system's bundle, or $SSL_CERT_FILE)",
     TEXT(IN_PARSE, ssl_ca), ANY_MODE, NULL},
    {"ssl-cert", 0, "FILE", NULL, "client certificate; --ssl-key FILE: its key", TEXT(IN_PARSE, ssl_cert), ANY_MODE,
     NULL},
    {"ssl-key", 0, "FILE", NULL, NULL, TEXT(IN_PARSE, ssl_key), ANY_MODE, NULL},
    {"init", 0, NULL, NULL, "create (or upgrade) the lease table, then exit", SELECT(INIT, false), ANY_MODE, NULL},
    {"status", 0, "[LEASE]", "Operator", "show every lease, or one (--json for JSON)", SELECT(STATUS, false), ANY_MODE,
     NULL},
    {"release", 0, "LEASE", NULL, "revoke it: the holder stops its command, then lets go", SELECT(RELEASE, true),
     ANY_MODE, NULL},
    {"force", 0, NULL, NULL,
     "with --release: free it at once (the old command may\n"
     "still run until its next renew)",
     FLAG(IN_OPTIONS, force), MODE(RELEASE), "--force goes with --release"},
    {"pause", 0, "LEASE", NULL, "nobody acquires it until --resume (or --for D)", SELECT(PAUSE, true), ANY_MODE, NULL},
    {"for", 0, "D", NULL, NULL,
     DURATION_IN(pause_for_us, 1, INT64_MAX, "is not a time to pause for; give a positive duration"), MODE(PAUSE),
     "--for goes with --pause"},
    {"resume", 0, "LEASE", NULL, "end a pause", SELECT(RESUME, true), ANY_MODE, NULL},
    {"check", 0, NULL, NULL, "exit 0 while LEADERRUN_LEASE/HOLDER/TERM still lead", SELECT(CHECK, false), ANY_MODE,
     NULL},
    {"check-server", 0, NULL, NULL,
     "does every server of the DSN keep what SAFETY assumes?\n"
     "(durable commits, replication, proxy, table, clock)",
     SELECT(CHECK_SERVER, false), ANY_MODE, NULL},
    {"history", 0, "LEASE", NULL, "its last runs: term, holder, host, start, end, outcome", SELECT(HISTORY, true),
     ANY_MODE, NULL},
    {"limit", 0, "N", NULL, "with --history: the newest N runs only", TEXT(IN_PARSE, limit_text), MODE(HISTORY),
     "--limit goes with --history"},
    {"format", 0, "F", NULL,
     "text (default), json, or for --status prometheus (the\n"
     "fleet's metrics); --json is --format json",
     TEXT(IN_PARSE, format), MODE(STATUS) | MODE(HISTORY) | MODE(CHECK_SERVER),
     "--format goes with --status, --history or --check-server (for JSON logs: --log-format json)"},
    {"json", 0, NULL, NULL, NULL, FLAG(IN_OPTIONS, json), MODE(STATUS) | MODE(HISTORY) | MODE(CHECK_SERVER),
     "--json goes with --status, --history or --check-server (for JSON logs: --log-format json)"},
    {"term", 0, "N", NULL, NULL, TEXT(IN_PARSE, term_text), MODE(CHECK), "--term goes with --check"},
    {"slot", 0, "K", NULL,
     "with --check: the slot (default $LEADERRUN_SLOT, else 0);\n"
     "with --release: that slot only (default: every slot)",
     TEXT(IN_PARSE, slot_text), MODE(CHECK) | MODE(RELEASE), "--slot goes with --check or --release"},
    {"lease", 'l', "NAME", "Lease", "lease name (default: derived from COMMAND)", TEXT(IN_PARSE, lease_arg), ANY_MODE,
     NULL},
    {"holder", 0, "ID", NULL, "holder identity (default HOST:PID:RANDOM)", TEXT(IN_PARSE, holder_arg), ANY_MODE, NULL},
    {"fence-user", 0, "USER", NULL,
     "the database account whose transactions may fence with\n"
     "this run's term (default: leaderrun's own)",
     TEXT(IN_PARSE, fence_user), MODE(RUN), "--fence-user goes with a COMMAND to run"},
    {"ttl", 't', "DURATION", NULL, "lease time to live (default 15s)", DURATION(timing.ttl_us), ANY_MODE, NULL},
    {"renew-interval", 0, "D", NULL, "renew period (default ttl/3)", DURATION(timing.renew_us), ANY_MODE, NULL},
    {"kill-grace", 0, "D", NULL, "kill signal to SIGKILL (default min(3s, ttl/4))", DURATION(timing.grace_us), ANY_MODE,
     NULL},
    {"kill-signal", 0, "SIG", NULL, "signal that asks COMMAND to stop (default TERM)", CALL(set_kill_signal, true),
     ANY_MODE, NULL},
    {"command", 'c', "STRING", "Command",
     "run /bin/sh -c STRING as COMMAND (the lease name is\n"
     "derived from STRING)",
     CALL(set_command, true), MODE(RUN),
     "-c is a command to run; it does not go with --init, --status, --history, --release, --check, "
     "--check-server, --pause or --resume"},
    {"max-runtime", 0, "D", NULL,
     "stop COMMAND after D of running, as on a lost lease\n"
     "(kill signal, --kill-grace, SIGKILL); exit 124",
     DURATION_IN(max_runtime_us, 1, INT64_MAX, "is no time to run for; give a positive duration, like 30m"), MODE(RUN),
     "--max-runtime goes with a COMMAND to run"},
    {"no-wait", 'n', NULL, "Waiting", "try once; exit 75 if the lease is held", FLAG(IN_OPTIONS, no_wait), ANY_MODE,
     NULL},
    {"wait-timeout", 'w', "D", NULL, "give up waiting after D; exit 75", DURATION(wait_timeout_us), ANY_MODE, NULL},
    {"retry-interval", 0, "D", NULL, "how often a follower looks (default 1s)",
     DURATION_IN(retry_us, 10 * USEC_PER_MSEC, INT64_MAX, "is too short; use at least 10ms"), ANY_MODE, NULL},
    {"no-wake-hint", 0, NULL, NULL, "poll; do not block on the GET_LOCK hint (for proxies)",
     FLAG(IN_OPTIONS, no_wake_hint), ANY_MODE, NULL},
    {"busy-exit-code", 'E', "N", NULL, "exit status when not acquired (default 75)", NUMBER(busy_exit, 0, 255),
     ANY_MODE, NULL},
    {"min-hold", 0, "D", NULL, "keep the lease until acquisition + D (cron dedupe)", DURATION(min_hold_us), ANY_MODE,
     NULL},
    /* A second at least: slots are cron's, and a period past a year is
     * surely a typo (and keeps the arithmetic far from overflowing). */
    {"once-per", 0, "PERIOD", NULL, "run at most once per PERIOD slot (cron); exit 75 if done",
     DURATION_IN(once_per_us, USEC_PER_SEC, 366 * 24 * 3600 * USEC_PER_SEC,
		 "is out of range; use 1s to 366 days (as 8784h)"),
     MODE(RUN), "--once-per goes with a COMMAND to run"},
    {"slots", 0, "N", NULL, "at most N holders run at once, a slot each (default 1)", TEXT(IN_PARSE, slots_text),
     MODE(RUN), "--slots goes with a COMMAND to run"},
    {"ping", 0, "URL", "Notifications", "Healthchecks-style pings: URL/start, URL/STATUS, URL/fail",
     TEXT(IN_OPTIONS, ping_url), ANY_MODE, NULL},
    {"notify", 0, "URL", NULL, "POST a JSON event (acquired, lost, timed_out, exited,\nreleased, ...)",
     CALL(set_notify, true), ANY_MODE, NULL},
    {"ready-file", 0, "PATH", NULL, "exists while the command runs (readiness probe)", TEXT(IN_OPTIONS, ready_file),
     ANY_MODE, NULL},
    {"metrics-file", 0, "PATH", NULL,
     "Prometheus textfile of this process's lease (%l: the\n"
     "lease name), replaced atomically",
     CALL(set_metrics_file, true), MODE(RUN),
     "--metrics-file goes with a COMMAND to run (for the fleet: --status --format prometheus)"},
    {"history-keep", 0, "N", NULL, "runs kept in the history per lease (default 100; 0: none)",
     TEXT(IN_PARSE, keep_text), MODE(RUN), "--history-keep goes with a COMMAND to run"},
    {"verbose", 'v', NULL, "Output", "more messages (repeatable)", COUNT(IN_OPTIONS, verbosity), ANY_MODE, NULL},
    {"quiet", 'q', NULL, NULL, "errors only", FLAG(IN_PARSE, quiet), ANY_MODE, NULL},
    {"log-format", 0, "F", NULL, "text (default) or json", TEXT(IN_PARSE, log_format), ANY_MODE, NULL},
    {"help", 'h', NULL, NULL, "this help", CALL(show_help, false), ANY_MODE, NULL},
    {"version", 'V', NULL, NULL, "version", CALL(show_version, false), ANY_MODE, NULL},
};
#undef MODE
#undef ANY_MODE
#define NDEFS (sizeof(defs) / sizeof(defs[0]))
_Static_assert(NDEFS <= DEFS_MAX, "struct parse's given[] needs DEFS_MAX raised");

const struct options_def *options_table(size_t *n)
{
	*n = NDEFS;
	return defs;
}

/* The left column of --help: "  -d, --dsn DSN" or "      --table NAME". */
#define HELP_COLUMN 27

static int show_help(struct parse *p, const char *arg)
{
	FILE *f = p->out;

	fputs("Usage: leaderrun [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       leaderrun [OPTIONS] -c STRING\n"
	      "       leaderrun [CONNECTION OPTIONS] --init\n"
	      "       leaderrun [CONNECTION OPTIONS] --status [--json | --format prometheus] [LEASE]\n"
	      "       leaderrun [CONNECTION OPTIONS] --release LEASE [--slot K] [--force]\n"
	      "       leaderrun [CONNECTION OPTIONS] --pause LEASE [--for DURATION] | --resume LEASE\n"
	      "       leaderrun [CONNECTION OPTIONS] --check [--lease L --holder H --term N] [--slot K]\n"
	      "       leaderrun [CONNECTION OPTIONS] --history LEASE [--json] [--limit N]\n"
	      "       leaderrun [CONNECTION OPTIONS] --check-server [--json]\n"
	      "\n"
	      "Run COMMAND only while holding a lease row in MySQL/MariaDB: at most one\n"
	      "copy (N with --slots N) runs across all hosts, and it is stopped before\n"
	      "anyone else can take its lease.\n"
	      "\n",
	      f);
	for (size_t i = 0; i < NDEFS; i++) {
		const struct options_def *d = &defs[i];
		char left[64];
		int n;

		if (d->section)
			fprintf(f, "%s:\n", d->section);
		/* Options described in another's line (--ssl-key, --for, ...). */
		if (!d->help)
			continue;
		if (d->short_name)
			n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", d->short_name, d->name, d->arg ? " " : "",
				     d->arg ? d->arg : "");
		else
			n = snprintf(left, sizeof(left), "      --%s%s%s", d->name, d->arg ? " " : "",
				     d->arg ? d->arg : "");
		fprintf(f, "%-*s", HELP_COLUMN - 1, left);
		fputc(' ', f);
		(void)n;
		for (const char *h = d->help; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
		fputc('\n', f);
	}
	fputs("\n"
	      "DURATION: a number with unit ms, s, m or h (500ms, 15s, 1.5m); bare numbers are seconds.\n"
	      "Exit status: COMMAND's, or 75 busy, 76 lease lost, 124 --max-runtime reached,\n"
	      "64 usage, 69 database unavailable, 77 access denied or server not verified (TLS),\n"
	      "78 lease table missing, 126/127 COMMAND not executable/not found.\n"
	      "See leaderrun(1).\n",
	      f);
	return OPT_DONE;
}

/* getopt_long's view of the table: the long options, and the short ones
 * as "+:d:l:...". An option's getopt value is its short letter, or 256
 * plus its index. */
static void options_getopt_table(struct option *longs, char *shorts, size_t shortcap)
{
	size_t k = 0;

	/* '+': stop at the first non-option, so COMMAND's options stay its
	 * own. ':' first: report missing arguments ourselves, in one line. */
	shorts[k++] = '+';
	shorts[k++] = ':';
	for (size_t i = 0; i < NDEFS; i++) {
		longs[i] = (struct option){defs[i].name, defs[i].takes_value ? required_argument : no_argument, NULL,
					   defs[i].short_name ? defs[i].short_name : 256 + (int)i};
		if (defs[i].short_name && k + 3 < shortcap) {
			shorts[k++] = (char)defs[i].short_name;
			if (defs[i].takes_value)
				shorts[k++] = ':';
		}
	}
	longs[NDEFS] = (struct option){NULL, 0, NULL, 0};
	shorts[k] = '\0';
}

static const struct options_def *options_def_of(int c)
{
	if (c >= 256 && c < 256 + (int)NDEFS)
		return &defs[c - 256];
	for (size_t i = 0; i < NDEFS; i++)
		if (defs[i].short_name && defs[i].short_name == c)
			return &defs[i];
	return NULL;
}

/* The name as written when --password-file was given as --password (or
 * shorter), else NULL: getopt_long takes any unique prefix, and
 * "--password SECRET" would be read as a file name, then printed as one
 * that does not exist. */
static const char *options_password_abbrev(char *argv[], const char *value)
{
	/* "--pass FILE" leaves optind past FILE, "--pass=FILE" past itself. */
	const char *written = value == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];

	return strcspn(written + 2, "=") < strlen("password-") ? written : NULL;
}

/* A long option getopt_long refused: unknown, ambiguous, or a flag given
 * a value (--init=1). Named up to its '=' only: the value may be a secret
 * (--dns=mysql://app:pw@db/ops, a typo of --dsn). */
static int options_unknown_long(struct parse *p, const char *arg)
{
	const char *name = arg + 2;
	size_t n = strcspn(name, "="), matches = 0;
	const struct options_def *d = NULL;

	for (size_t i = 0; i < NDEFS; i++)
		if (strncmp(defs[i].name, name, n) == 0) {
			if (strlen(defs[i].name) == n) {
				d = &defs[i];
				matches = 1;
				break;
			}
			d = &defs[i];
			matches++;
		}
	if (matches > 1)
		FAIL("option '--%.*s' is ambiguous; write it out in full (see leaderrun --help)", (int)n, name);
	if (matches == 1 && !d->takes_value && name[n] == '=')
		FAIL("option '--%s' takes no value; see leaderrun --help", d->name);
	FAIL("unknown option '--%.*s'; see leaderrun --help", (int)n, name);
}

/* Reads the options up to COMMAND into P. Returns 0, -1 (usage) or
 * OPT_DONE. */
static int options_read(struct parse *p, int argc, char *argv[])
{
	struct option longs[NDEFS + 1];
	char shorts[2 * NDEFS + 3];
	int c;

	options_getopt_table(longs, shorts, sizeof(shorts));
	opterr = 0;
	/* 0, not 1: glibc's full reset, which also forgets a half-read
	 * bundle (-Vv) of an earlier call. */
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct options_def *d = options_def_of(c);
		int rc;

		if (d) {
			const char *w =
			    strcmp(d->name, "password-file") == 0 ? options_password_abbrev(argv, optarg) : NULL;
			if (w)
				FAIL("unknown option '%.*s': there is no --password (a password in argv shows in "
				     "ps); write --password-file FILE in full, or use LEADERRUN_PASSWORD",
				     (int)strcspn(w, "="), w);
			p->given[d - defs] = true;
			rc = options_store(p, d, optarg);
			if (rc != 0)
				return rc;
			continue;
		}
		if (c == ':')
			FAIL("option '%s' needs a value; see leaderrun --help", SHOWN(argv[optind - 1]));
		if (strncmp(argv[optind - 1], "--", 2) == 0)
			return options_unknown_long(p, argv[optind - 1]);
		if (optopt)
			FAIL("unknown option '-%c'; see leaderrun --help", optopt);
		FAIL("unknown option '%.2s'; see leaderrun --help", argv[optind - 1]);
	}
	return 0;
}

/* A count from MIN to MAX (--limit, --history-keep, --slots, --slot). */
static int parse_count(const char *opt, const char *text, unsigned min, unsigned max, unsigned *out, char *err,
		       size_t errlen)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || end == text || *end || *text == '-' || n < min || n > max) {
		snprintf(err, errlen, "%s '%s' must be a number from %u to %u", opt, SHOWN(text), min, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* What holds when nothing on the command line or in the environment says
 * otherwise; first, so that every later step can override it. */
static void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->timing.ttl_us = 15 * USEC_PER_SEC;
	o->timing.renew_us = -1;
	o->timing.grace_us = -1;
	o->retry_us = USEC_PER_SEC;
	o->wait_timeout_us = -1;
	o->kill_signal = SIGTERM;
	o->busy_exit = 75;
	o->pause_for_us = -1;
	o->history_keep = 100;
	o->slots = 1;
}

/* Reads argv up to COMMAND, then parses the DSN and wipes argv. The DSN
 * is parsed before the wipe because its text may lie in argv; the wipe
 * comes before any other check can fail, because even a refused command
 * line must not linger with the secret. A refused one (a typo,
 * --dns=...) is wiped all through: nothing runs, and the rest was never
 * parsed. The DSN's own errors wait for options_take_dsn. Returns 0, -1
 * (usage) or OPT_DONE. */
static int options_read_argv(struct parse *p, int argc, char *argv[])
{
	int rc = options_read(p, argc, argv);

	p->argv = argv;
	p->command_at = optind;
	if (rc == 0 && p->dsn_text && *p->dsn_text)
		p->dsn_rc = dsn_parse(p->dsn_text, &p->o->dsn, p->dsn_why, sizeof(p->dsn_why));
	wipe_argv_passwords(argv, rc < 0 ? argc : optind, p->shell_at);
	return rc;
}

static int options_take_verbosity(struct parse *p)
{
	if (!p->quiet)
		return 0;
	if (p->o->verbosity > 0)
		FAIL("-q and -v contradict each other; give one");
	p->o->verbosity = -1;
	return 0;
}

/* Whether the option NAME was on the command line. */
static bool options_given(const struct parse *p, const char *name)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (strcmp(defs[i].name, name) == 0)
			return p->given[i];
	return false;
}

/* The DSN of --dsn, else of LEADERRUN_DSN, as options_read_argv parsed
 * it. */
static int options_take_dsn(struct parse *p)
{
	if (!p->dsn_text || !*p->dsn_text)
		return 0;
	if (p->dsn_rc < 0)
		FAIL("%s: %s", options_given(p, "dsn") ? "--dsn" : "LEADERRUN_DSN", p->dsn_why);
	p->o->have_dsn = true;
	return 0;
}

static const struct options_def *options_def_by_set(opt_set_fn *set)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (defs[i].set == set)
			return &defs[i];
	return NULL;
}

/* The table's modes column for one option: refused with its row's line
 * when given in a mode it does not go with. */
static int options_goes_with_mode(struct parse *p, const struct options_def *d)
{
	if (p->given[d - defs] && !(d->modes & OPTIONS_MODE(p->o->mode)))
		FAIL("%s", d->modes_error);
	return 0;
}

/* Every option against the mode, the first refused in --help's order.
 * After options_check_shape: with two modes given, "the mode" would be
 * the last one only. */
static int options_check_modes(struct parse *p)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (options_goes_with_mode(p, &defs[i]) < 0)
			return -1;
	return 0;
}

/* COMMAND: argv's rest, or -c STRING as /bin/sh -c STRING. Before the
 * shape of the command line is checked, which looks at COMMAND. */
static int options_take_command(struct parse *p)
{
	struct options *o = p->o;

	o->command = p->argv + p->command_at;
	if (!p->shell)
		return 0;
	/* -c's row of the modes column, ahead of the other rows: in another
	 * mode, options_check_shape would take its STRING for a COMMAND
	 * that the mode does not take. */
	if (options_goes_with_mode(p, options_def_by_set(set_command)) < 0)
		return -1;
	/* As flock -c: the string is the whole command; words after it
	 * would be a second one, or meant as its arguments. */
	if (o->command[0])
		FAIL("-c STRING and COMMAND '%s' contradict each other; give one: -c 'STRING' or -- COMMAND [ARG...]",
		     SHOWN(o->command[0]));
	o->shell_argv = calloc(4, sizeof(*o->shell_argv));
	if (!o->shell_argv)
		FAIL("out of memory");
	/* The shell's absolute path, not "sh" from PATH: a crontab's PATH
	 * is short, and flock(1) runs $SHELL or /bin/sh. */
	o->shell_argv[0] = "/bin/sh";
	o->shell_argv[1] = "-c";
	o->shell_argv[2] = (char *)p->shell;
	o->command = o->shell_argv;
	return 0;
}

/* One mode, and the operands it takes after the options. */
static int options_check_shape(struct parse *p)
{
	const struct options *o = p->o;

	if (p->modes > 1)
		FAIL("--init, --status, --history, --release, --check, --check-server, --pause and --resume are modes "
		     "of their own; give one");
	if (o->mode != MODE_RUN && o->mode != MODE_STATUS && o->command[0])
		FAIL("unexpected argument '%s'; this mode takes no COMMAND", SHOWN(o->command[0]));
	if (o->mode == MODE_STATUS && o->command[0] && o->command[1])
		FAIL("--status takes at most one LEASE, not '%s'", SHOWN(o->command[1]));
	return 0;
}

/* --format's value; before options_check_modes, so that a format that
 * does not exist is named as such in any mode. */
static int options_take_format(struct parse *p)
{
	if (!p->format)
		return 0;
	if (strcmp(p->format, "json") == 0)
		p->o->json = true;
	else if (strcmp(p->format, "prometheus") == 0)
		p->o->format = FORMAT_PROMETHEUS;
	else if (strcmp(p->format, "text") != 0)
		FAIL("--format '%s' is not a format; use text, json or prometheus", SHOWN(p->format));
	return 0;
}

/* What --status and --history print, and the runs kept: after the modes,
 * which decide whether these go at all. */
static int options_take_observe(struct parse *p)
{
	struct options *o = p->o;

	if (o->format == FORMAT_PROMETHEUS && o->mode != MODE_STATUS)
		FAIL("--format prometheus goes with --status");
	if (o->json && o->format == FORMAT_PROMETHEUS)
		FAIL("--json and --format prometheus contradict each other; give one");
	if (o->json)
		o->format = FORMAT_JSON;
	if (p->limit_text &&
	    parse_count("--limit", p->limit_text, 0, 1000000, &o->history_limit, p->err, p->errlen) < 0)
		return -1;
	if (p->keep_text &&
	    parse_count("--history-keep", p->keep_text, 0, 1000000, &o->history_keep, p->err, p->errlen) < 0)
		return -1;
	return 0;
}

/* --slots for a run; --slot (or the command's LEADERRUN_SLOT) for --check
 * and --release. After the modes: the default slot depends on the mode. */
static int options_take_slots(struct parse *p)
{
	struct options *o = p->o;
	const char *slot = p->slot_text, *slot_from = "--slot";
	unsigned k = 0;

	o->slot = o->mode == MODE_RELEASE ? -1 : 0;
	if (p->slots_text) {
		if (parse_count("--slots", p->slots_text, 1, LEASE_SLOTS_MAX, &o->slots, p->err, p->errlen) < 0)
			return -1;
		/* A slot a period is another feature; one run a period across
		 * the fleet is what --once-per promises. */
		if (o->slots > 1 && o->once_per_us)
			FAIL("--once-per runs one command a period; it does not go with --slots %u", o->slots);
	}
	if (!slot && o->mode == MODE_CHECK && (slot = getenv("LEADERRUN_SLOT")) != NULL)
		slot_from = "LEADERRUN_SLOT";
	if (slot) {
		if (parse_count(slot_from, slot, 0, LEASE_SLOTS_MAX - 1, &k, p->err, p->errlen) < 0)
			return -1;
		o->slot = (int)k;
	}
	return 0;
}

/* --log-format, or LEADERRUN_LOG_FORMAT. */
static int options_take_log_format(struct parse *p)
{
	if (!p->log_format || !*p->log_format)
		return 0;
	if (strcmp(p->log_format, "json") == 0)
		p->o->log_format = LOG_FORMAT_JSON;
	else if (strcmp(p->log_format, "text") != 0)
		FAIL("--log-format '%s' is not a format; use text or json", SHOWN(p->log_format));
	return 0;
}

static int options_check_urls(struct parse *p)
{
	const struct options *o = p->o;

	for (int i = -1; i < o->nnotify; i++) {
		const char *u = i < 0 ? o->ping_url : o->notify_urls[i];
		if (u && strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
			FAIL("%s URL must start with http:// or https://", i < 0 ? "--ping" : "--notify");
	}
	return 0;
}

/* A run needs a COMMAND, and one way to wait. */
static int options_check_run(struct parse *p)
{
	const struct options *o = p->o;

	if (o->mode == MODE_RUN && !o->command[0])
		FAIL("no COMMAND given; usage: leaderrun [OPTIONS] -- COMMAND [ARG...], or -c STRING");
	if (o->no_wait && o->wait_timeout_us >= 0)
		FAIL("--no-wait and --wait-timeout contradict each other; give one");
	return 0;
}

/* NAME=... names NAME. */
static bool env_named(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The environment leaderrun started with stays readable in
 * /proc/PID/environ (and in the watcher's, a copy) to every process of its
 * user, COMMAND among them, however clean COMMAND's own environment is
 * (issue 25). Once the password is copied, overwrite it in place, as the
 * argv wipe does; child_env_build still drops these variables and cuts
 * the DSN's password span, now of x's. */
static void wipe_environ_passwords(void)
{
	for (char **e = environ; *e; e++) {
		char *v = strchr(*e, '=');
		size_t off, len;

		if (!v)
			continue;
		if (env_named(*e, "LEADERRUN_PASSWORD") || env_named(*e, "MYSQL_PWD"))
			memset(v + 1, 'x', strlen(v + 1));
		else if (env_named(*e, "LEADERRUN_DSN") && dsn_secret_span(v + 1, &off, &len))
			memset(v + 1 + off, 'x', len);
	}
}

/* --password-file, else LEADERRUN_PASSWORD or MYSQL_PWD, unless the DSN
 * holds one: after options_take_dsn. */
static int options_find_password(struct parse *p)
{
	struct options *o = p->o;
	const char *env;

	if (p->password_file) {
		if (o->dsn.password)
			FAIL("the DSN already holds a password; drop it or --password-file");
		return read_password_file(p->password_file, &o->password, p->err, p->errlen);
	}
	if (o->dsn.password)
		return 0;
	env = getenv("LEADERRUN_PASSWORD");
	if (!env)
		env = getenv("MYSQL_PWD");
	if (env && !(o->password = strdup(env)))
		FAIL("out of memory");
	return 0;
}

/* The password, then no copy of it left in the environment. */
static int options_take_password(struct parse *p)
{
	int rc = options_find_password(p);

	wipe_environ_passwords();
	return rc;
}

/* The option files, when the client library will read them too: after
 * options_take_password, as whether it reads them depends on the
 * password (runmode_db_config). */
static int options_read_files(struct parse *p)
{
	struct options *o = p->o;
	char host[1024], *w = host, why[512];
	const char *at;

	/* A FIFO among them would hang the library's connect, and us first. */
	if ((o->defaults_file || !o->have_dsn || (!o->dsn.password && !o->password)) &&
	    optfile_check(o->defaults_file, p->err, p->errlen) < 0)
		return -1;
	/* A host in the option files ([client] host=h1,h2:3307) is
	 * leaderrun's to walk, as one in the DSN: the library would take a
	 * list for one host name (or, Connector/C 3.3, walk it without
	 * asking whether a host is writable); and even a single host must be
	 * known here to choose its TLS (issue 20). Only without a DSN, which
	 * always names its host or socket. Blanks around the commas go: no
	 * host name holds one. */
	if (o->have_dsn)
		return 0;
	if (optfile_host(o->defaults_file, host, sizeof(host))) {
		for (const char *r = host; *r; r++)
			if (*r != ' ' && *r != '\t')
				*w++ = *r;
		*w = '\0';
	}
	if (w == host || dsn_parse_hosts(host, strlen(host), &o->dsn, why, sizeof(why)) == 0)
		return 0;
	/* A host holds no '@': what comes before one may be a password
	 * (host=app:pw@db), as in dsn_parse_hosts. */
	at = strrchr(host, '@');
	FAIL("option file host=%s%s: %s", at ? "***" : "", at ? at : host, why);
}

/* TLS: the command line over the DSN's parameters over the option files'
 * (those only when the library reads the files too: see
 * runmode_db_config). After options_read_files, which checked them. */
static int options_tls_sources(struct parse *p)
{
	struct options *o = p->o;
	int m;

	if (!o->have_dsn || (!o->dsn.password && !o->password)) {
		if (!p->ssl_mode && !o->dsn.ssl_mode &&
		    optfile_get(o->defaults_file, "ssl-mode", o->optfile_mode, sizeof(o->optfile_mode)))
			p->ssl_mode = o->optfile_mode;
		if (!p->ssl_ca && !o->dsn.ssl_ca &&
		    optfile_get(o->defaults_file, "ssl-ca", o->optfile_ca, sizeof(o->optfile_ca)))
			p->ssl_ca = o->optfile_ca;
	}
	if (!p->ssl_mode)
		p->ssl_mode = o->dsn.ssl_mode;
	if (p->ssl_mode) {
		if ((m = db_tls_parse(p->ssl_mode)) < 0)
			FAIL("--ssl-mode '%s' is not a mode; use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or "
			     "VERIFY_IDENTITY",
			     SHOWN(p->ssl_mode));
		o->tls = (enum db_tls)m;
	}
	o->ssl_ca = p->ssl_ca ? p->ssl_ca : o->dsn.ssl_ca;
	o->ssl_cert = p->ssl_cert ? p->ssl_cert : o->dsn.ssl_cert;
	o->ssl_key = p->ssl_key ? p->ssl_key : o->dsn.ssl_key;
	return 0;
}

/* The certificate files, wherever options_tls_sources found them. */
static int options_tls_files(struct parse *p)
{
	const struct options *o = p->o;
	const char *const files[][2] = {
	    {"--ssl-ca", o->ssl_ca}, {"--ssl-cert", o->ssl_cert}, {"--ssl-key", o->ssl_key}};

	for (size_t i = 0; i < 3; i++) {
		const char *kind = files[i][1] ? options_special_file(files[i][1]) : NULL;
		if (files[i][1] && access(files[i][1], R_OK) != 0)
			FAIL("%s %s: %s", files[i][0], SHOWN(files[i][1]), strerror(errno));
		/* The TLS library reads them at every connect: a FIFO would
		 * hang the first and be empty for the next. */
		if (kind)
			FAIL("%s %s is %s, not a regular file", files[i][0], SHOWN(files[i][1]), kind);
	}
	if (!o->ssl_cert != !o->ssl_key)
		FAIL("--ssl-cert and --ssl-key go together; give both or neither");
	if (o->tls == DB_TLS_DISABLED && (o->ssl_ca || o->ssl_cert))
		FAIL("--ssl-mode DISABLED contradicts --ssl-ca/--ssl-cert; give one");
	return 0;
}

/* Each host's TLS (tlspolicy_mode): a host that verifies needs a CA (the
 * system's when --ssl-ca is not given) and an environment that does not
 * switch verification off inside the client library; a networked host
 * with DISABLED is remembered for the warning at start. Last of the TLS
 * steps: it needs the hosts, the mode and the CA settled. */
static int options_tls_hosts(struct parse *p)
{
	struct options *o = p->o;
	unsigned n = o->dsn.nhosts ? o->dsn.nhosts : 1;
	const char *verifying = NULL, *envvar;
	enum db_tls mode = DB_TLS_DEFAULT;

	for (unsigned i = 0; i < n; i++) {
		/* No host: the socket, or the library's localhost. */
		const char *host = o->dsn.nhosts ? o->dsn.hosts[i].name : NULL;
		enum db_tls m = tlspolicy_mode(o->tls, host);
		if (tlspolicy_verifies(m) && !verifying) {
			verifying = host ? host : "localhost";
			mode = m;
		}
		if (m == DB_TLS_DISABLED && !tlspolicy_host_is_local(host) && !o->unverified_host)
			o->unverified_host = host;
	}
	if (!verifying)
		return 0;
	/* Refused, not overridden: unsetting it would take it from COMMAND
	 * too, which may want it; and a warning scrolls by unseen. */
	if ((envvar = tlspolicy_env_disabling(getenv)))
		FAIL("%s is set: it would switch off the verification of %s (--ssl-mode %s); unset it (COMMAND "
		     "can still get it: env %s=1 COMMAND), or give --ssl-mode=DISABLED, which accepts forgeable "
		     "lease replies",
		     envvar, verifying, tlspolicy_mode_name(mode), envvar);
	if (!o->ssl_ca && !tlspolicy_system_ca(o->system_ca, sizeof(o->system_ca)))
		FAIL("no system CA bundle (/etc/ssl/certs/ca-certificates.crt and the like, or $SSL_CERT_FILE) to "
		     "verify %s with; " TLSPOLICY_WAYS_OUT,
		     verifying);
	return 0;
}

/* --table, or LEADERRUN_TABLE, or the default. */
static int options_take_table(struct parse *p)
{
	const char *table = p->table && *p->table ? p->table : LEASE_DEFAULT_TABLE;

	if (strlen(table) > LEASE_TABLE_MAX)
		FAIL("--table name is longer than %d characters", LEASE_TABLE_MAX);
	if (lease_table_validate(table, p->err, p->errlen) < 0)
		return -1;
	snprintf(p->o->table, sizeof(p->o->table), "%s", table);
	return 0;
}

/* The history table and the fence sit next to the lease table, in the same
 * database (lease_sql_sibling: leaderrun_lease -> leaderrun_history,
 * leaderrun_fence). After options_name_listed, whose message comes first
 * when both fail. */
static int options_take_history_table(struct parse *p)
{
	struct options *o = p->o;
	char fence[LEASE_TABLE_MAX + 16];

	if (lease_sql_sibling(o->table, "_history", o->history_table, sizeof(o->history_table)) < 0)
		FAIL("--table %s: the name is too long to add _history for its history table; use at most 56 "
		     "characters",
		     o->table);
	/* The longest of the fence's names is its procedure NAME_fence_slot. */
	if (lease_sql_sibling(o->table, "_fence_slot", fence, sizeof(fence)) < 0)
		FAIL("--table %s: the name is too long to add _fence_slot for its fence's procedures; use at most 53 "
		     "characters (without a _lease suffix)",
		     o->table);
	return 0;
}

static int options_lease_name(struct parse *p, const char *value)
{
	return set_name("lease name", p->o->lease, sizeof(p->o->lease), value, LEASE_NAME_MAX, p->err, p->errlen);
}

static int options_holder_name(struct parse *p, const char *value)
{
	return set_name("holder", p->o->holder, sizeof(p->o->holder), value, LEASE_HOLDER_MAX, p->err, p->errlen);
}

/* The LEASE of --status (none: every lease), --release and --history. */
static int options_name_listed(struct parse *p)
{
	struct options *o = p->o;

	if (o->mode == MODE_STATUS) {
		o->all_leases = !o->command[0];
		return o->command[0] ? options_lease_name(p, o->command[0]) : 0;
	}
	if (o->mode == MODE_RELEASE || o->mode == MODE_HISTORY)
		return options_lease_name(p, p->mode_lease);
	return 0;
}

/* --pause and --resume: the LEASE, and who paused it, for --status and
 * the skipped runs' messages: --holder, else user@host. */
static int options_name_pause(struct parse *p)
{
	struct options *o = p->o;

	if (o->mode != MODE_PAUSE && o->mode != MODE_RESUME)
		return 0;
	if (options_lease_name(p, p->mode_lease) < 0)
		return -1;
	if (p->holder_arg && *p->holder_arg)
		return options_holder_name(p, p->holder_arg);
	leasename_operator(o->holder, sizeof(o->holder));
	return 0;
}

/* --check: the lease, holder and term to check. The command's own
 * environment names the lease it runs under: here LEADERRUN_TERM is the
 * input, not a sign of nesting. */
static int options_name_check(struct parse *p)
{
	struct options *o = p->o;
	const char *l = p->lease_arg ? p->lease_arg : getenv("LEADERRUN_LEASE");
	const char *h = p->holder_arg ? p->holder_arg : getenv("LEADERRUN_HOLDER");
	const char *t = p->term_text ? p->term_text : getenv("LEADERRUN_TERM");
	char *end;

	if (o->mode != MODE_CHECK)
		return 0;
	if (!l || !h || !t)
		FAIL("--check needs the lease, holder and term: run it inside leaderrun's command, or give --lease, "
		     "--holder and --term");
	if (options_lease_name(p, l) < 0 || options_holder_name(p, h) < 0)
		return -1;
	errno = 0;
	o->check_term = strtoull(t, &end, 10);
	if (errno || end == t || *end || *t == '-')
		FAIL("--term '%s' is not a term number", SHOWN(t));
	return 0;
}

/* A run's lease and holder: given, from the environment, or made up. */
static int options_name_run(struct parse *p)
{
	struct options *o = p->o;
	/* Inside a leaderrun's command (LEADERRUN_TERM is set) these
	 * variables describe the outer lease: a nested leaderrun taking them
	 * as defaults would wait for its own parent forever. */
	bool nested = getenv("LEADERRUN_TERM") != NULL;
	const char *lease = p->lease_arg ? p->lease_arg : nested ? NULL : getenv("LEADERRUN_LEASE");
	const char *holder = p->holder_arg ? p->holder_arg : nested ? NULL : getenv("LEADERRUN_HOLDER");

	if (o->mode != MODE_RUN)
		return 0;
	if (lease && *lease) {
		if (options_lease_name(p, lease) < 0)
			return -1;
	} else {
		if (p->shell)
			leasename_from_string(p->shell, o->lease, sizeof(o->lease));
		else
			leasename_from_argv(o->command, o->lease, sizeof(o->lease));
		o->lease_derived = true;
	}
	if (holder && *holder)
		return options_holder_name(p, holder);
	leasename_holder(o->holder, sizeof(o->holder));
	return 0;
}

/* A run's timing, the last check: --ttl, --renew-interval and --kill-grace
 * are judged together, with the defaults that scale with ttl. */
static int options_check_timing(struct parse *p)
{
	if (p->o->mode != MODE_RUN)
		return 0;
	return timing_resolve(&p->o->timing, p->err, p->errlen);
}

/* What options_parse does once argv is read (options_read_argv), in this
 * order. Each step may use what the ones before it settled; and where one
 * command line is wrong twice, the order decides which message the user
 * sees. Each entry says why it stands where it does. */
typedef int options_step_fn(struct parse *p);
/* --fence-user: an account's name, as the fence row keeps it (the
 * server's own rules on names are its to enforce). */
static int options_name_fence_user(struct parse *p)
{
	if (!p->fence_user)
		return 0;
	if (lease_name_validate("--fence-user", p->fence_user, LEASE_ACCOUNT_MAX, p->err, p->errlen) < 0)
		return -1;
	snprintf(p->o->fence_user, sizeof(p->o->fence_user), "%s", p->fence_user);
	return 0;
}

static options_step_fn *const options_steps[] = {
    /* Needs nothing; -q -v is named before any later fault. */
    options_take_verbosity,
    /* The DSN options_read_argv parsed: have_dsn, which the password,
     * option file and TLS steps read. */
    options_take_dsn,
    /* COMMAND or -c: before the shape, which counts COMMAND's words. */
    options_take_command,
    /* One mode and its operands: before the modes column, which judges
     * every option by the one mode. */
    options_check_shape,
    /* A --format that does not exist is named as such, in any mode. */
    options_take_format,
    /* The table's modes column: before the values that only some modes
     * use are parsed. */
    options_check_modes,
    /* --format's relations, --limit, --history-keep: their mode is right. */
    options_take_observe,
    /* --slots, --slot: the default slot depends on the mode. */
    options_take_slots,
    options_take_log_format,
    options_check_urls,
    /* A run's COMMAND, -n or -w: after the options' own faults, so that
     * "leaderrun --force" names --force, not the missing COMMAND. */
    options_check_run,
    /* After the DSN, which may hold the password. */
    options_take_password,
    /* After the password: whether the client library reads the option
     * files depends on it. */
    options_read_files,
    /* After the option files, whose ssl-mode and ssl-ca count. */
    options_tls_sources,
    options_tls_files,
    /* Last of TLS: it needs the hosts (the DSN's or the option files'),
     * the mode and the CA settled. */
    options_tls_hosts,
    options_take_table,
    /* The LEASE of --status, --release and --history, then the history
     * table: a bad LEASE is named before a --table too long for it. */
    options_name_listed,
    options_take_history_table,
    options_name_pause,
    options_name_check,
    options_name_run,
    options_name_fence_user,
    /* Last: a run's ttl, renew and grace, judged together. */
    options_check_timing,
};

enum options_result options_parse(int argc, char *argv[], FILE *out, struct options *o, char *err, size_t errlen)
{
	/* The environment's fallbacks, which the command line overrides. */
	struct parse p = {
	    .o = o,
	    .out = out,
	    .err = err,
	    .errlen = errlen,
	    .dsn_text = getenv("LEADERRUN_DSN"),
	    .table = getenv("LEADERRUN_TABLE"),
	    .log_format = getenv("LEADERRUN_LOG_FORMAT"),
	};
	int rc;

	options_defaults(o);
	rc = options_read_argv(&p, argc, argv);
	if (rc == OPT_DONE)
		return OPTIONS_EXIT;
	for (size_t i = 0; rc == 0 && i < sizeof(options_steps) / sizeof(options_steps[0]); i++)
		rc = options_steps[i](&p);
	if (rc < 0) {
		options_free(o);
		return OPTIONS_USAGE;
	}
	return OPTIONS_OK;
}

void options_free(struct options *o)
{
	if (o->command == o->shell_argv)
		o->command = NULL;
	free(o->shell_argv);
	o->shell_argv = NULL;
	dsn_free(&o->dsn);
	if (o->password) {
		explicit_bzero(o->password, strlen(o->password));
		free(o->password);
		o->password = NULL;
	}
}
