#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

/* Written once by log_init before any other thread exists, read-only after:
 * configuration of the process, not option state passed around. */
static int log_verbosity;
static const char *log_lease;
static bool log_json;

void log_init(int verbosity, const char *lease, bool json)
{
	log_verbosity = verbosity;
	log_lease = lease;
	log_json = json;
}

int log_enabled(enum log_level level)
{
	if (level == LOG_NOTICE)
		return log_verbosity >= 0;
	return (int)level <= log_verbosity + 1;
}

static void log_write(char *line, size_t n)
{
	line[n++] = '\n';
	/* One write per line, so lines from concurrent leaderruns sharing a
	 * stderr do not interleave. */
	(void)!write(STDERR_FILENO, line, n);
}

void log_event(enum log_level level, const char *event, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "", ""};
	static const char *const names[] = {"error", "warning", "info", "debug", "notice"};
	char msg[768], line[2048];
	int n, saved = errno;
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (log_json) {
		char qmsg[1600], qlease[800] = "null", ts[40];
		struct timespec now;
		struct tm tm;

		/* Wall-clock time for the reader; no interval is measured with it. */
		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		n = (int)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(ts + n, sizeof(ts) - (size_t)n, ".%03ldZ", now.tv_nsec / 1000000);
		json_quote(qmsg, sizeof(qmsg), msg);
		if (log_lease)
			json_quote(qlease, sizeof(qlease), log_lease);
		n = snprintf(line, sizeof(line) - 1,
			     "{\"ts\":\"%s\",\"level\":\"%s\",\"pid\":%ld,\"lease\":%s,\"msg\":%s%s%s%s}", ts,
			     names[level], (long)getpid(), qlease, qmsg, event ? ",\"event\":\"" : "",
			     event ? event : "", event ? "\"" : "");
	} else if (log_lease)
		n = snprintf(line, sizeof(line) - 1, "leaderrun[%ld]: lease %s: %s%s", (long)getpid(), log_lease,
			     prefix[level], msg);
	else
		n = snprintf(line, sizeof(line) - 1, "leaderrun[%ld]: %s%s", (long)getpid(), prefix[level], msg);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	log_write(line, (size_t)n);
	errno = saved;
}
