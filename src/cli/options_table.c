/* The table of options, once: each option's name, the modes it goes
 * with, and how it stores its value (options_store). Below every other
 * options*.c file: they read the table, none of them is called from here. */
#include "options.h"

#include <errno.h>
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
#include "options_int.h"

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

static int set_kill_signal(struct parse *p, const char *arg)
{
	p->o->kill_signal = options_parse_signal(arg);
	if (p->o->kill_signal < 0)
		FAIL("--kill-signal '%s' is not a signal; use a name like TERM or INT, or a number", SHOWN(arg));
	if (!signal_stops_process(p->o->kill_signal))
		FAIL("--kill-signal %s does not stop a process; use TERM, INT, HUP, QUIT or KILL", SHOWN(arg));
	return 0;
}

/* --priority N: stored, and given (a run with it keeps its claim). */
static int set_priority(struct parse *p, const char *arg)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || n < -1000000 || n > 1000000)
		FAIL("--priority '%s' must be a whole number from -1000000 to 1000000 (higher wins)", SHOWN(arg));
	p->o->priority = (int)n;
	p->o->priority_given = true;
	return 0;
}

/* --preempt, or --preempt=DELAY (the value only with '='). */
static int set_preempt(struct parse *p, const char *arg)
{
	char why[160];

	p->o->preempt = true;
	if (!arg)
		return 0;
	if (duration_parse(arg, &p->o->preempt_us, why, sizeof(why)) < 0)
		FAIL("--preempt=%s: %s; give a delay like --preempt=30s, or --preempt alone", SHOWN(arg), SHOWN(why));
	return 0;
}

/* --next N: a mode of its own, with its count. */
static int set_next(struct parse *p, const char *arg)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || n < 1 || n > 10000)
		FAIL("--next '%s' must be a number of slots from 1 to 10000", SHOWN(arg));
	p->o->next_count = (int)n;
	p->o->mode = MODE_NEXT;
	p->modes++;
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

/* --help and --version: printed once argv is read (options_parse). */
static int set_help(struct parse *p, const char *arg)
{
	(void)arg;
	p->show = SHOW_HELP;
	return OPT_DONE;
}

static int set_version(struct parse *p, const char *arg)
{
	(void)arg;
	p->show = SHOW_VERSION;
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
#define MODE(m) OPTIONS_MODE(MODE_##m)

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
    {"service", 0, NULL, "Service",
     "COMMAND runs at once on every instance and keeps\n"
     "running; the lease's holder leads (see SERVICES)",
     FLAG(IN_OPTIONS, service), MODE(RUN), "--service goes with a COMMAND to run"},
    {"on-promote", 0, "CMD", NULL, "with --service: sh -c CMD once the lease is ours; it\nleads once CMD exits 0",
     TEXT(IN_OPTIONS, on_promote), MODE(RUN), "--on-promote goes with --service and a COMMAND to run"},
    {"promote-timeout", 0, "D", NULL,
     "with --service: kill --on-promote still running after D\n"
     "(default 20s); it steps down as after a failed promote",
     DURATION_IN(promote_timeout_us, 1, INT64_MAX, "is no time for a promote; give a positive duration, like 20s"),
     MODE(RUN), "--promote-timeout goes with --service and a COMMAND to run"},
    {"on-demote", 0, "CMD", NULL,
     "with --service: sh -c CMD to stop leading; it must exit 0\n"
     "within --kill-grace (else the service is killed, exit 76)",
     TEXT(IN_OPTIONS, on_demote), MODE(RUN), "--on-demote goes with --service and a COMMAND to run"},
    {"health-cmd", 0, "CMD", "Health",
     "sh -c CMD every --health-interval: competes only while it\n"
     "passes; a leader steps down after --health-retries failures",
     TEXT(IN_OPTIONS, health_cmd), MODE(RUN), "--health-cmd goes with a COMMAND to run"},
    {"health-interval", 0, "D", NULL, "how often --health-cmd runs, and its time limit (default 5s)",
     DURATION_IN(health_interval_us, 100 * USEC_PER_MSEC, 3600 * USEC_PER_SEC, "is out of range; use 100ms to 1h"),
     MODE(RUN), "--health-interval goes with --health-cmd"},
    {"health-retries", 0, "N", NULL, "failures (and passes) in a row that change health\n(default 3)",
     NUMBER(health_retries, 1, 100), MODE(RUN), "--health-retries goes with --health-cmd"},
    {"priority", 0, "N", "Choosing the leader",
     "higher wins a free lease (default 0); the others wait up\n"
     "to max(2s, 2x --retry-interval) for the favourite to take it",
     CALL(set_priority, true), MODE(RUN), "--priority goes with a COMMAND to run"},
    {"preempt", 0, "[=D]", NULL,
     "after D (default 30s) waiting and healthy, take the lease\n"
     "from a holder of a lower --priority (it stops or demotes)",
     CALL(set_preempt, OPTIONS_VALUE_OPTIONAL), MODE(RUN), "--preempt goes with a COMMAND to run"},
    {"spread", 0, NULL, NULL, "spread many leases across the hosts that contend for them", FLAG(IN_OPTIONS, spread),
     MODE(RUN), "--spread goes with a COMMAND to run"},
    {"to", 0, "HOLDER", NULL,
     "with --release: switch over to that standby (a holder id,\n"
     "or a host with one standby); exit 75 if none such waits",
     TEXT(IN_OPTIONS, release_to), MODE(RELEASE), "--to goes with --release"},
    {"schedule", 0, "SPEC", "Schedule",
     "a crontab(5) time: five fields, @daily, @every 10m ...\n"
     "(see SCHEDULES)",
     TEXT(IN_PARSE, schedule_text), MODE(RUN) | MODE(NEXT), "--schedule goes with a COMMAND to run, or with --next N"},
    {"schedule-tz", 0, "ZONE", NULL, "SPEC's time zone, an IANA name (default UTC)", TEXT(IN_PARSE, schedule_tz),
     MODE(RUN) | MODE(NEXT), "--schedule-tz goes with --schedule SPEC"},
    {"catch-up", 0, "WINDOW", NULL, "run a lost or missed slot again within WINDOW",
     DURATION_IN(catch_up_us, USEC_PER_SEC, 366 * 24 * 3600 * USEC_PER_SEC,
		 "is out of range; use 1s to 366 days (as 8784h)"),
     MODE(RUN), "--catch-up goes with --schedule and a COMMAND to run"},
    {"next", 0, "N", NULL, "print SPEC's next N slots in UTC, then exit (no database)", CALL(set_next, true), ANY_MODE,
     NULL},
    {"from", 0, "TIME", NULL, "with --next: the slots after TIME, YYYY-MM-DDTHH:MM:SSZ\n(default: now)",
     TEXT(IN_PARSE, from_text), MODE(NEXT), "--from goes with --next N"},
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
    {"role-file", 0, "PATH", NULL, "says \"leader TERM\" or \"standby HOLDER\", replaced atomically",
     TEXT(IN_OPTIONS, role_file), MODE(RUN), "--role-file goes with a COMMAND to run"},
    {"role-http", 0, "ADDR:PORT", NULL, "GET /leader: 200 on the leader, 503 elsewhere; GET /role:\nJSON",
     TEXT(IN_OPTIONS, role_http), MODE(RUN), "--role-http goes with a COMMAND to run"},
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
    {"help", 'h', NULL, NULL, "this help", CALL(set_help, false), ANY_MODE, NULL},
    {"version", 'V', NULL, NULL, "version", CALL(set_version, false), ANY_MODE, NULL},
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

/* The row named NAME, or NULL. */
const struct options_def *options_row(const char *name)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (strcmp(defs[i].name, name) == 0)
			return &defs[i];
	return NULL;
}

/* Whether the row D's option was on the command line. */
bool options_given(const struct parse *p, const struct options_def *d)
{
	return d && p->given[d - defs];
}

/* Stores an option's value as its row's store column says, and that it
 * was given. Returns what the row's set function returns, or 0 or -1 (a
 * usage error). */
int options_store(struct parse *p, const struct options_def *d, const char *arg)
{
	const struct options_store *s = &d->store;
	void *at = (s->place == OPTIONS_IN_PARSE ? (char *)p : (char *)p->o) + s->offset;

	p->given[d - defs] = true;
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
