/* One line per event on stderr: "leaderrun[PID]: lease NAME: message", or
 * with --log-format json one object per line: ts, level, pid, lease, role
 * (once a run has one), msg and, for the lease's events, event. stdout belongs to the child. */
#ifndef LEADERRUN_LOG_H
#define LEADERRUN_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level {
	LOG_ERROR = 0,	/* shown unless -q */
	LOG_WARN = 1,	/* shown by default */
	LOG_INFO = 2,	/* -v */
	LOG_DEBUG = 3,	/* -vv */
	LOG_NOTICE = 4, /* shown by default, like a warning, but nothing is wrong: why a run was skipped on purpose */
};

/* Set once by main before anything logs: VERBOSITY is -1 for -q, 0 by
 * default, +1 per -v. LEASE may be NULL and is borrowed, not copied. */
void log_init(int verbosity, const char *lease, bool json);

int log_enabled(enum log_level level);

/* A run's JSON lines say this instance's role from now on: ROLE, a string
 * that lives for ever (role_name's), or NULL for none. Any thread. */
void log_set_role(const char *role);

/* EVENT (NULL for none) names a step of the lease's life in JSON logs:
 * waiting, acquired, renew_failed, server (moved to another host), lost,
 * timed_out (--max-runtime), exited, released. */
void log_event(enum log_level level, const char *event, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A message is cut at LOG_MSG_MAX bytes (at a character boundary); a
 * line of either format then always fits LOG_LINE_MAX, escapes included,
 * so a JSON line is never cut and always parses. */
#define LOG_MSG_MAX  1024
#define LOG_LINE_MAX 8192

struct log_line {
	enum log_level level;
	const char *event; /* NULL for none */
	const char *lease; /* NULL for none */
	const char *role;  /* JSON only: this instance's role (log_set_role); NULL for none */
	const char *msg;
	const char *ts; /* JSON only: ISO 8601 UTC */
	long pid;
	bool json;
};

/* L as one line without its newline, into BUF of LOG_LINE_MAX bytes
 * (NUL-terminated); returns its length. Text shows the control characters
 * of the lease and message escaped (escape_text); JSON quotes them
 * (json_quote). Pure, for the fuzzer. */
size_t log_render(const struct log_line *l, char *buf);

#define log_error(...) log_event(LOG_ERROR, NULL, __VA_ARGS__)
#define log_warn(...)  log_event(LOG_WARN, NULL, __VA_ARGS__)
#define log_info(...)  log_event(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_event(LOG_DEBUG, NULL, __VA_ARGS__)

#endif
