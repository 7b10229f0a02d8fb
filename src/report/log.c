#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "json.h"

/* Written once by log_init before any other thread exists, read-only after:
 * configuration of the process, not option state passed around. */
static int log_verbosity;
static const char *log_lease;
static bool log_json;
/* The one thing that changes: this instance's role, a string literal the
 * lease loop swaps in (log_set_role), read by any thread's JSON line. */
static _Atomic(const char *) log_role;

void log_set_role(const char *role)
{
	atomic_store_explicit(&log_role, role, memory_order_relaxed);
}

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

/* The lease name is checked, but a log line promises valid output for any
 * input: it is cut like a message. */
#define LOG_LEASE_MAX 256

size_t log_render(const struct log_line *l, char *buf)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "", ""};
	static const char *const names[] = {"error", "warning", "info", "debug", "notice"};
	char msg[LOG_MSG_MAX + 1], lease[LOG_LEASE_MAX + 1];
	int n;

	/* Cut at a character boundary: no half character turns into an
	 * escape of its own. */
	snprintf(msg, sizeof(msg), "%.*s", (int)escape_boundary(l->msg, LOG_MSG_MAX), l->msg);
	if (l->lease)
		snprintf(lease, sizeof(lease), "%.*s", (int)escape_boundary(l->lease, LOG_LEASE_MAX), l->lease);
	if (l->json) {
		char qmsg[JSON_QUOTE_MAX(LOG_MSG_MAX)], qlease[JSON_QUOTE_MAX(LOG_LEASE_MAX)] = "null", qev[64] = "";
		char qrole[48] = "";
		if (l->lease)
			json_quote(qlease, sizeof(qlease), lease);
		json_quote(qmsg, sizeof(qmsg), msg);
		if (l->event) {
			memcpy(qev, ",\"event\":", 9);
			json_quote(qev + 9, sizeof(qev) - 10, l->event);
		}
		if (l->role) {
			memcpy(qrole, ",\"role\":", 8);
			json_quote(qrole + 8, sizeof(qrole) - 9, l->role);
		}
		n = snprintf(buf, LOG_LINE_MAX,
			     "{\"ts\":\"%s\",\"level\":\"%s\",\"pid\":%ld,\"lease\":%s%s,\"msg\":%s%s}", l->ts,
			     names[l->level], l->pid, qlease, qrole, qmsg, qev);
	} else {
		char emsg[ESCAPE_TEXT_MAX(LOG_MSG_MAX)], elease[ESCAPE_TEXT_MAX(LOG_LEASE_MAX)];
		escape_text(emsg, sizeof(emsg), msg);
		if (l->lease) {
			escape_text(elease, sizeof(elease), lease);
			n = snprintf(buf, LOG_LINE_MAX, "leaderrun[%ld]: lease %s: %s%s", l->pid, elease,
				     prefix[l->level], emsg);
		} else
			n = snprintf(buf, LOG_LINE_MAX, "leaderrun[%ld]: %s%s", l->pid, prefix[l->level], emsg);
	}
	/* Cannot happen with the sizes above; a cut line is still a line. */
	if (n < 0)
		n = 0;
	if ((size_t)n >= LOG_LINE_MAX)
		n = LOG_LINE_MAX - 1;
	return (size_t)n;
}

void log_event(enum log_level level, const char *event, const char *fmt, ...)
{
	/* Room for a message cut at a character boundary beyond LOG_MSG_MAX,
	 * and the newline log_write adds. */
	char msg[LOG_MSG_MAX + 8], line[LOG_LINE_MAX + 1], ts[40] = "";
	struct log_line l = {.level = level,
			     .event = event,
			     .lease = log_lease,
			     .role = atomic_load_explicit(&log_role, memory_order_relaxed),
			     .msg = msg,
			     .ts = ts,
			     .pid = (long)getpid(),
			     .json = log_json};
	int saved = errno;
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_json) {
		struct timespec now;
		struct tm tm;
		size_t n;

		/* Wall-clock time for the reader; no interval is measured with it. */
		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000);
	}
	log_write(line, log_render(&l, line));
	errno = saved;
}
