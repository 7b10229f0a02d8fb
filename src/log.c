#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Written once by log_init before any other thread exists, read-only after:
 * configuration of the process, not option state passed around. */
static int log_verbosity;
static const char *log_lease;

void log_init(int verbosity, const char *lease)
{
	log_verbosity = verbosity;
	log_lease = lease;
}

int log_enabled(enum log_level level)
{
	return (int)level <= log_verbosity + 1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", ""};
	char line[1024];
	int n, saved = errno;
	va_list ap;

	if (!log_enabled(level))
		return;
	if (log_lease)
		n = snprintf(line, sizeof(line), "leaderrun[%ld]: lease %s: %s", (long)getpid(), log_lease,
			     prefix[level]);
	else
		n = snprintf(line, sizeof(line), "leaderrun[%ld]: %s", (long)getpid(), prefix[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write per line, so lines from concurrent leaderruns sharing a
	 * stderr do not interleave. */
	(void)!write(STDERR_FILENO, line, (size_t)n);
	errno = saved;
}
