/* What the files of options_parse share (options*.c): the record of a
 * parse, its steps, and how a message quotes what the user typed. Not for
 * use outside src/cli. */
#ifndef LEADERRUN_OPTIONS_INT_H
#define LEADERRUN_OPTIONS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"

/* What the command line gave, before it is checked as a whole: the values
 * that later steps combine (a DSN with the option files, a lease name with
 * the mode) wait here; the rest go straight into the options. */
#define DEFS_MAX 80 /* the table's rows, at most */

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
	const char *schedule_text, *schedule_tz, *from_text; /* --schedule, --schedule-tz, --from */
	bool quiet;
	int modes;
	/* --help or --version, which options_parse prints once argv is read. */
	enum { SHOW_NONE, SHOW_HELP, SHOW_VERSION } show;
};

/* An option's effect: 0, -1 with p->err filled (a usage error), or
 * OPT_DONE when it asked for something to print (--help, --version). */
#define OPT_DONE 1

/* Fills p->err and returns -1: a usage error. */
#define FAIL(...)                                                                                                      \
	do {                                                                                                           \
		snprintf(p->err, p->errlen, __VA_ARGS__);                                                              \
		return -1;                                                                                             \
	} while (0)

/* VALUE as a message may quote it: a DSN's password in it hidden
 * (options_secret.c). Each SHOWN has a buffer of its own, so one message
 * may show several values. */
const char *options_shown(const char *value, char *buf, size_t len);
#define SHOWN_MAX 256
#define SHOWN(v)  options_shown((v), (char[SHOWN_MAX]){""}, SHOWN_MAX)

/* options_table.c: the table's row named NAME (NULL: none), and whether its
 * option was on the command line. */
const struct options_def *options_row(const char *name);
bool options_given(const struct parse *p, const struct options_def *d);
/* Stores ARG as the row D says; 0, -1 (usage) or OPT_DONE. */
int options_store(struct parse *p, const struct options_def *d, const char *arg);

/* options_argv.c: reads argv up to COMMAND into P, parses the DSN and
 * wipes its password from argv; 0, -1 (usage) or OPT_DONE. */
int options_read_argv(struct parse *p, int argc, char *argv[]);

/* options_help.c: --help and --version, printed by options_parse when a
 * row asked for them (p->show). */
int options_show_help(struct parse *p, const char *arg);
int options_show_version(struct parse *p, const char *arg);

/* options_secret.c: the DSN passwords in argv[1] to argv[END - 1]
 * overwritten (but not argv[SHELL_AT], -c's STRING); the password found,
 * and no copy of it left in the environment. */
void options_wipe_argv(char *argv[], int end, int shell_at);
int options_take_password(struct parse *p);

/* The steps after argv is read, in options_parse's order (options.c says
 * why each stands where it does). Each returns 0, or -1 with p->err. */
/* options_check.c: the mode, COMMAND, and the options against each other. */
int options_take_verbosity(struct parse *p);
int options_check_modes(struct parse *p);
int options_take_command(struct parse *p);
int options_check_shape(struct parse *p);
int options_take_format(struct parse *p);
int options_take_observe(struct parse *p);
int options_take_slots(struct parse *p);
int options_take_log_format(struct parse *p);
int options_check_urls(struct parse *p);
int options_check_service(struct parse *p);
int options_check_choose(struct parse *p);
int options_check_role(struct parse *p);
int options_check_health(struct parse *p);
int options_take_schedule(struct parse *p);
int options_check_run(struct parse *p);
int options_check_timing(struct parse *p);
/* options_server.c: the DSN, the option files' hosts, TLS. */
int options_take_dsn(struct parse *p);
int options_read_files(struct parse *p);
int options_tls_sources(struct parse *p);
int options_tls_files(struct parse *p);
int options_tls_hosts(struct parse *p);
/* options_names.c: the tables, the lease, the holder, --fence-user. */
int options_take_table(struct parse *p);
int options_name_listed(struct parse *p);
int options_take_history_table(struct parse *p);
int options_name_pause(struct parse *p);
int options_name_check(struct parse *p);
int options_name_run(struct parse *p);
int options_name_fence_user(struct parse *p);

#endif
