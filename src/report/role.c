/* The role board: a snapshot under a mutex, the role file, and what the
 * HTTP endpoint (role_http.c) answers from the snapshot (role.h). */
#include "role.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomicfile.h"
#include "base/duration.h"
#include "base/timing.h"
#include "json.h"
#include "role_http.h"

struct role {
	pthread_mutex_t lock;
	struct role_view v;
	char lease[LEASE_NAME_MAX + 1], holder[LEASE_HOLDER_MAX + 1];
	char *file;
	char line[LEASE_HOLDER_MAX + 32]; /* what the file says */
	bool failing;			  /* the last write of the file failed */
	struct role_http *http;
};

const char *role_name(enum role_kind k)
{
	static const char *const names[] = {"standby", "promoting", "leader", "demoting"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "standby";
}

/* WALL_US (CLOCK_REALTIME us) as "2026-12-07T20:15:03.250Z", rounded
 * down: a reader that judges by it never thinks a file fresh for longer
 * than it is. "" when it has no calendar date. */
static void role_utc(int64_t wall_us, char *buf, size_t len)
{
	time_t sec = (time_t)(wall_us / USEC_PER_SEC - (wall_us % USEC_PER_SEC < 0));
	int ms = (int)((wall_us - (int64_t)sec * USEC_PER_SEC) / USEC_PER_MSEC);
	struct tm tm;
	char day[32];

	buf[0] = '\0';
	if (gmtime_r(&sec, &tm) && strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) > 0)
		snprintf(buf, len, "%s.%03dZ", day, ms);
}

void role_file_line(const struct role_view *v, const char *holder, int64_t wall_offset, char *buf, size_t len)
{
	char until[48];

	if (v->role == ROLE_LEADER) {
		role_utc(wall_offset > 0 && v->until > INT64_MAX - wall_offset ? INT64_MAX : v->until + wall_offset,
			 until, sizeof(until));
		snprintf(buf, len, "leader %" PRIu64 "%s%s\n", v->term, until[0] ? " until " : "", until);
	} else if (v->role != ROLE_STANDBY)
		/* The lease is ours, but this instance does not lead. */
		snprintf(buf, len, "standby %s\n", holder);
	else if (v->leader[0])
		snprintf(buf, len, "standby %s\n", v->leader);
	else
		snprintf(buf, len, "standby\n");
}

void role_json(const struct role_view *v, const char *lease, const char *holder, char *buf, size_t len)
{
	char ql[JSON_QUOTE_MAX(LEASE_NAME_MAX)], qh[JSON_QUOTE_MAX(LEASE_HOLDER_MAX)];
	char qleader[JSON_QUOTE_MAX(LEASE_HOLDER_MAX)] = "null";
	const char *leader = v->role == ROLE_STANDBY ? v->leader : holder;

	json_quote(ql, sizeof(ql), lease);
	json_quote(qh, sizeof(qh), holder);
	if (leader[0])
		json_quote(qleader, sizeof(qleader), leader);
	snprintf(buf, len, "{\"lease\":%s,\"role\":\"%s\",\"term\":%" PRIu64 ",\"holder\":%s,\"leader\":%s}\n", ql,
		 role_name(v->role), v->term, qh, qleader);
}

void role_now(struct role *r, int64_t now, struct role_view *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->v;
	pthread_mutex_unlock(&r->lock);
	/* Past the deadline the lease may be someone else's: no word of
	 * ours may say otherwise, whatever the loop last said. */
	if (out->role == ROLE_LEADER && now >= out->until) {
		out->role = ROLE_STANDBY;
		out->leader[0] = '\0';
	}
}

unsigned role_reply(struct role *r, const char *method, const char *url, char *body, size_t len, const char **type)
{
	struct role_view v;

	*type = "text/plain";
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		snprintf(body, len, "GET or HEAD only\n");
		return 405;
	}
	role_now(r, timing_now(), &v);
	if (strcmp(url, "/leader") == 0) {
		snprintf(body, len, "%s\n", role_name(v.role));
		return v.role == ROLE_LEADER ? 200 : 503;
	}
	if (strcmp(url, "/role") == 0) {
		*type = "application/json";
		role_json(&v, r->lease, r->holder, body, len);
		return 200;
	}
	snprintf(body, len, "GET /leader or /role\n");
	return 404;
}

/* CLOCK_REALTIME less CLOCK_BOOTTIME, now: what turns a local deadline
 * into the wall-clock time a reader of the file can compare with its own.
 * Read at each write, so that a step of the wall clock reaches the file
 * with the next renew. */
/* role_reply as the HTTP server calls it, on its thread, into a buffer of
 * the server's. */
_Static_assert(ROLE_REPLY_MAX <= ROLE_HTTP_BODY_MAX, "--role-http's body cannot hold the longest answer");
static unsigned role_answer(void *ctx, const char *method, const char *url, char *body, size_t len, const char **type)
{
	return role_reply(ctx, method, url, body, len, type);
}

static int64_t role_wall_offset(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000 - timing_now();
}

/* The file, when what it says changed: 0, or -1 with ERR. */
static int role_write(struct role *r, const struct role_view *v, char *err, size_t errlen)
{
	char line[sizeof(r->line)], why[PATH_MAX + 64];

	if (!r->file)
		return 0;
	role_file_line(v, r->holder, role_wall_offset(), line, sizeof(line));
	if (strcmp(line, r->line) == 0)
		return 0;
	if (atomicfile_write(r->file, line, strlen(line), why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--role-file: %s", why);
		/* Said once, not at every renew while it keeps failing. */
		if (r->failing)
			return 0;
		r->failing = true;
		return -1;
	}
	r->failing = false;
	snprintf(r->line, sizeof(r->line), "%s", line);
	return 0;
}

struct role *role_open(const char *lease, const char *holder, const char *file, const char *http, char *err,
		       size_t errlen)
{
	struct role *r = calloc(1, sizeof(*r));

	if (!r || (file && !(r->file = strdup(file)))) {
		snprintf(err, errlen, "out of memory");
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	snprintf(r->lease, sizeof(r->lease), "%s", lease);
	snprintf(r->holder, sizeof(r->holder), "%s", holder);
	if (role_write(r, &r->v, err, errlen) < 0 ||
	    (http && !(r->http = role_http_start(http, role_answer, r, err, errlen)))) {
		free(r->file);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return NULL;
	}
	return r;
}

int role_set(struct role *r, const struct role_view *v, char *err, size_t errlen)
{
	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	r->v = *v;
	pthread_mutex_unlock(&r->lock);
	return role_write(r, v, err, errlen);
}

int role_extend(struct role *r, int64_t until, char *err, size_t errlen)
{
	struct role_view v;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	r->v.until = until;
	v = r->v;
	pthread_mutex_unlock(&r->lock);
	return role_write(r, &v, err, errlen);
}

int role_http_port(const struct role *r)
{
	return r ? role_http_bound_port(r->http) : 0;
}

void role_close(struct role *r)
{
	char err[PATH_MAX + 80];

	if (!r)
		return;
	role_http_stop(r->http);
	(void)role_write(r, &(struct role_view){.role = ROLE_STANDBY}, err, sizeof(err));
	free(r->file);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
