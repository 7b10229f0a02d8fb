/* The command line and its environment fallbacks, parsed once into a struct
 * that the rest of the program reads as const. */
#ifndef LEADERRUN_OPTIONS_H
#define LEADERRUN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/timing.h"
#include "db/db.h"
#include "dsn.h"
#include "lease/lease.h"
#include "schedule/schedule.h"

enum options_mode {
	MODE_RUN,
	MODE_INIT,
	MODE_STATUS,
	MODE_RELEASE,
	MODE_CHECK,
	MODE_PAUSE,
	MODE_RESUME,
	MODE_HISTORY,
	MODE_CHECK_SERVER,
	MODE_NEXT, /* --schedule SPEC --next N: its slots, printed */
};

/* What --status and --history print. */
enum out_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROMETHEUS };

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

#define OPTIONS_MAX_NOTIFY 8

struct options {
	enum options_mode mode;
	struct dsn dsn; /* all NULL/0 when no DSN was given */
	bool have_dsn;
	char *password;				 /* owned; NULL: from the DSN, option files or none */
	const char *defaults_file;		 /* borrowed from argv or environ */
	enum db_tls tls;			 /* --ssl-mode, else the DSN's ssl-mode */
	const char *ssl_ca, *ssl_cert, *ssl_key; /* borrowed: argv, o->dsn or o->optfile_ca */
	/* The system's CA bundle, when a host verifies without --ssl-ca. */
	char system_ca[1024];
	char optfile_ca[1024]; /* ssl-ca of the option files */
	char optfile_mode[64]; /* ssl-mode of the option files */
	/* Some host is networked and --ssl-mode DISABLED: warn at start. */
	const char *unverified_host;
	char table[LEASE_TABLE_MAX + 1];
	char lease[LEASE_NAME_MAX + 1];
	bool lease_derived; /* the name came from the command line */
	char holder[LEASE_HOLDER_MAX + 1];
	char fence_user[LEASE_ACCOUNT_MAX + 1]; /* --fence-user; "": leaderrun's own account */
	struct timing timing;
	int64_t retry_us;
	int64_t wait_timeout_us; /* -1: wait forever */
	bool no_wait;
	bool no_wake_hint; /* poll instead of blocking on the GET_LOCK hint */
	int kill_signal;
	int busy_exit;
	int verbosity;	/* -1 quiet, 0 default, +1 per -v */
	char **command; /* NULL-terminated, borrowed from argv; or shell_argv */
	/* -c STRING: {"/bin/sh", "-c", STRING, NULL}, owned (STRING is
	 * argv's); NULL without -c. */
	char **shell_argv;
	int64_t max_runtime_us; /* --max-runtime; 0: no limit */

	/* Operator modes. */
	bool json;				  /* --json, or --format json */
	enum out_format format;			  /* --status, --history */
	char history_table[LEASE_TABLE_MAX + 16]; /* the runs of the lease table's leases */
	unsigned history_limit;			  /* --history --limit; 0: all kept */
	unsigned history_keep;			  /* --history-keep: runs kept per lease; 0: none recorded */
	const char *metrics_file;		  /* --metrics-file, "%l" not yet replaced */
	bool all_leases;			  /* --status without a name */
	uint64_t check_term;			  /* --check: --term or LEADERRUN_TERM */
	bool force;				  /* --release --force: free at once instead of revoking */
	int64_t pause_for_us;			  /* --pause --for; -1: until --resume */

	/* Cron and notifications. */
	int64_t min_hold_us;
	int64_t once_per_us; /* --once-per; 0: off */
	int64_t catch_up_us; /* --catch-up: a scheduled slot's window for reruns; 0: none */
	unsigned slots;	     /* --slots: holders that may run at once (default 1) */
	int slot;	     /* --check, --release: --slot or LEADERRUN_SLOT; -1: every slot (--release) */
	const char *ping_url;
	const char *notify_urls[OPTIONS_MAX_NOTIFY];
	int nnotify;
	enum log_format log_format;
	const char *ready_file;

	/* --service: COMMAND runs on every instance; the lease's holder leads,
	 * from --on-promote's success to --on-demote's end (shell strings,
	 * borrowed from argv; NULL: none). A promote still running after
	 * --promote-timeout is killed, as a failed one. */
	bool service;
	const char *on_promote, *on_demote;
	int64_t promote_timeout_us;
	/* --health-cmd (NULL: none), every --health-interval, stepping down
	 * after --health-retries failures in a row (health.h). */
	const char *health_cmd;
	int64_t health_interval_us;
	int health_retries;
	/* --role-file PATH, --role-http ADDR:PORT (checked); NULL: none. */
	const char *role_file, *role_http;

	/* Choosing the leader (lease/choose.h): --priority N (given: the run
	 * keeps its standby row from the start, and its claim counts),
	 * --preempt[=DELAY], --spread; --release --to HOLDER. */
	int priority;
	bool priority_given;
	bool preempt;
	int64_t preempt_us;
	bool spread;
	const char *release_to;

	/* --schedule SPEC in --schedule-tz ZONE, read (schedule.h); --next N
	 * prints its next N slots after --from TIME (default: now). */
	bool have_schedule;
	struct schedule schedule;
	int next_count;
	int64_t from_us;
};

enum options_result {
	OPTIONS_OK,    /* run in o->mode */
	OPTIONS_EXIT,  /* --help or --version was printed: exit 0 */
	OPTIONS_USAGE, /* ERR says what was wrong: exit 64 */
};

/* Parses ARGV (and LEADERRUN_* from the environment). Wipes a password
 * given in -d/--dsn from ARGV so it does not stay in /proc/PID/cmdline.
 * Help and version go to OUT. */
enum options_result options_parse(int argc, char *argv[], FILE *out, struct options *o, char *err, size_t errlen);

void options_free(struct options *o);

/* An options_def's modes: a bit per enum options_mode it goes with. */
#define OPTIONS_MODE(m)	 (1u << (m))
#define OPTIONS_ANY_MODE (~0u)

/* How a row of the table stores its value: most store it into one field
 * (a column of the row, not a function each), the rest call their own. */
enum options_store_kind {
	OPTIONS_CALL,	     /* the row's set function does it all */
	OPTIONS_FLAG,	     /* bool: true */
	OPTIONS_COUNT,	     /* int: one more (-v -v) */
	OPTIONS_TEXT,	     /* const char *: the value itself, borrowed from argv */
	OPTIONS_DURATION,    /* int64_t microseconds: a DURATION from min to max */
	OPTIONS_NUMBER,	     /* int: a decimal number from min to max */
	OPTIONS_SELECT_MODE, /* the mode (o->mode), and its LEASE when it takes one */
};

/* Where the field is: in struct options, or in the parse's own record of
 * what waits for a later step (a value only checked against others). */
enum options_store_place { OPTIONS_IN_OPTIONS, OPTIONS_IN_PARSE };

struct options_store {
	enum options_store_kind kind;
	enum options_store_place place;
	size_t offset;		  /* of the field, in its place */
	enum options_mode mode;	  /* OPTIONS_SELECT_MODE: the mode the option selects */
	int64_t min, max;	  /* OPTIONS_DURATION, OPTIONS_NUMBER: the values accepted */
	const char *out_of_range; /* OPTIONS_DURATION: "--NAME VALUE " and this, outside min..max */
};

/* One option of the table that drives parsing, --help, the check of the
 * modes each option goes with, and the tests that hold the man page and
 * the bash completion to it. */
struct parse;
#define OPTIONS_VALUE_OPTIONAL 2
struct options_def {
	const char *name;    /* long name, without "--" */
	int short_name;	     /* 0: none */
	const char *arg;     /* its value as --help shows it; NULL: none */
	const char *section; /* --help starts this section here */
	const char *help;    /* NULL: described in another option's line */
	int (*set)(struct parse *p, const char *arg);
	struct options_store store; /* OPTIONS_CALL: set stores it */
	int takes_value;	    /* 0 no, 1 yes, OPTIONS_VALUE_OPTIONAL: --NAME[=VALUE] (set gets NULL) */
	unsigned modes;		    /* OPTIONS_MODE bits, or OPTIONS_ANY_MODE */
	const char *modes_error;    /* the usage error when given in another mode */
};

/* The table, in --help's order. */
const struct options_def *options_table(size_t *n);

/* Parses a signal name (TERM, SIGTERM, term) or number. Returns the
 * number, or -1. */
int options_parse_signal(const char *text);

#endif
