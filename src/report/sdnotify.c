#include "sdnotify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"

struct sdnotify {
	int fd;
	struct sockaddr_un sa;
	socklen_t len;
	int64_t watchdog_us;
	bool ready_sent, stopping, failure_logged;
	char status[512]; /* the last STATUS= sent */
};

int sdnotify_address(const char *value, struct sockaddr_un *sa, socklen_t *len, char *err, size_t errlen)
{
	size_t n = value ? strlen(value) : 0;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* sd_notify(3): "/" a file system socket, "@" the abstract namespace.
	 * systemd also knows "vsock:CID:PORT" (a VM's manager); not a case
	 * for a lock runner on the host. */
	if (n < 2 || (value[0] != '/' && value[0] != '@')) {
		snprintf(err, errlen, "NOTIFY_SOCKET=%s is not an absolute path or an @abstract socket name",
			 value ? value : "");
		return -1;
	}
	/* A path needs its terminating NUL; an abstract name does not. */
	if (n > sizeof(sa->sun_path) - (value[0] == '/')) {
		snprintf(err, errlen, "NOTIFY_SOCKET is %zu bytes long; a socket address holds at most %zu", n,
			 sizeof(sa->sun_path) - (value[0] == '/'));
		return -1;
	}
	memcpy(sa->sun_path, value, n);
	if (value[0] == '@') {
		/* The name is the bytes after the NUL, exactly as long as the
		 * address length says: no terminating NUL is counted. */
		sa->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

/* A decimal number without sign or spaces, as systemd writes them. */
static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

int64_t sdnotify_watchdog_usec(const char *usec, const char *pid, pid_t self, char *err, size_t errlen)
{
	uint64_t us, p;

	if (!usec || !*usec)
		return 0;
	if (parse_u64(usec, &us) < 0 || us == 0 || us > (uint64_t)INT64_MAX / 2) {
		snprintf(err, errlen, "WATCHDOG_USEC=%s is not a positive number of microseconds", usec);
		return -1;
	}
	/* The variables are inherited: a process that is not the one the
	 * manager started (WATCHDOG_PID names it) must not keep the unit's
	 * watchdog fed. */
	if (pid && *pid) {
		if (parse_u64(pid, &p) < 0 || p == 0 || p > INT32_MAX) {
			snprintf(err, errlen, "WATCHDOG_PID=%s is not a process id", pid);
			return -1;
		}
		if ((pid_t)p != self)
			return 0;
	}
	return (int64_t)us;
}

struct sdnotify *sdnotify_open(const char *socket_path, const char *usec, const char *pid)
{
	struct sdnotify *sd;
	char err[256];
	int64_t wd;

	if (!socket_path || !*socket_path)
		return NULL;
	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		log_warn("out of memory; not notifying systemd");
		return NULL;
	}
	sd->fd = -1;
	if (sdnotify_address(socket_path, &sd->sa, &sd->len, err, sizeof(err)) < 0) {
		log_warn("%s; not notifying systemd", err);
		goto fail;
	}
	wd = sdnotify_watchdog_usec(usec, pid, getpid(), err, sizeof(err));
	if (wd < 0)
		/* sd_watchdog_enabled(3) fails the same way: no keep-alives,
		 * and the unit's watchdog says so soon enough. */
		log_warn("%s; not sending watchdog keep-alives", err);
	sd->watchdog_us = wd > 0 ? wd : 0;
	/* Close-on-exec: COMMAND never gets a way to speak for the unit. */
	sd->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sd->fd < 0) {
		log_warn("NOTIFY_SOCKET: socket: %s; not notifying systemd", strerror(errno));
		goto fail;
	}
	return sd;
fail:
	free(sd);
	return NULL;
}

int64_t sdnotify_watchdog(const struct sdnotify *sd)
{
	return sd ? sd->watchdog_us : 0;
}

static void sd_send(struct sdnotify *sd, const char *msg)
{
	/* Never blocks: a full receive queue (or a manager that went away)
	 * costs this message, not a renew or a kill. */
	if (sendto(sd->fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT, (const struct sockaddr *)&sd->sa, sd->len) >=
	    0)
		return;
	if (!sd->failure_logged)
		log_info("systemd notification failed (%s); further failures are not logged", strerror(errno));
	sd->failure_logged = true;
}

static void sd_status(struct sdnotify *sd, const char *first, const char *fmt, va_list ap)
{
	char raw[sizeof(sd->status)], text[sizeof(sd->status)], msg[sizeof(sd->status) + 32];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* One line (the protocol separates assignments with newlines), and no
	 * control character from a hostile row for systemctl status to show
	 * raw: a holder and paused_by reach these lines. */
	escape_text(text, sizeof(text), raw);
	if (!first && strcmp(text, sd->status) == 0)
		return;
	snprintf(sd->status, sizeof(sd->status), "%s", text);
	snprintf(msg, sizeof(msg), "%sSTATUS=%s", first ? first : "", text);
	sd_send(sd, msg);
}

void sdnotify_status(struct sdnotify *sd, bool ready, const char *fmt, ...)
{
	va_list ap;

	if (!sd)
		return;
	ready = ready && !sd->ready_sent && !sd->stopping;
	sd->ready_sent = sd->ready_sent || ready;
	va_start(ap, fmt);
	sd_status(sd, ready ? "READY=1\n" : NULL, fmt, ap);
	va_end(ap);
}

void sdnotify_stopping(struct sdnotify *sd, const char *fmt, ...)
{
	bool first;
	va_list ap;

	if (!sd)
		return;
	first = !sd->stopping;
	sd->stopping = true;
	va_start(ap, fmt);
	sd_status(sd, first ? "STOPPING=1\n" : NULL, fmt, ap);
	va_end(ap);
}

bool sdnotify_is_stopping(const struct sdnotify *sd)
{
	return sd && sd->stopping;
}

void sdnotify_keepalive(struct sdnotify *sd)
{
	if (sd)
		sd_send(sd, "WATCHDOG=1");
}

void sdnotify_close(struct sdnotify *sd)
{
	if (!sd)
		return;
	close(sd->fd);
	free(sd);
}
