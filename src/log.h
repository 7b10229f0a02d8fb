/* One line per event on stderr, "leaderrun[PID]: lease NAME: message".
 * stdout belongs to the child. */
#ifndef LEADERRUN_LOG_H
#define LEADERRUN_LOG_H

enum log_level {
	LOG_ERROR = 0, /* shown unless -q */
	LOG_WARN = 1,  /* shown by default */
	LOG_INFO = 2,  /* -v */
	LOG_DEBUG = 3, /* -vv */
};

/* Set once by main before anything logs: VERBOSITY is -1 for -q, 0 by
 * default, +1 per -v. LEASE may be NULL and is borrowed, not copied. */
void log_init(int verbosity, const char *lease);

int log_enabled(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
