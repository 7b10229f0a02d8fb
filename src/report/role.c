/* The role board: a snapshot under a mutex, the role file, and the HTTP
 * endpoint that answers from the snapshot (role.h). */
#include "role.h"

#include <inttypes.h>
#include <dlfcn.h>
#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomicfile.h"
#include "base/dlib.h"
#include "base/listenaddr.h"
#include "base/timing.h"
#include "config.h"
#include "json.h"

/* libmicrohttpd is loaded only by a run with --role-http, as libcurl is
 * by one that notifies (dlib.h): linked in, it and the TLS stack Debian
 * builds it with would cost every run its start-up. The static build links
 * it in, built without HTTPS. */
#define MHD_API(X)                                                                                                     \
	X(MHD_start_daemon)                                                                                            \
	X(MHD_stop_daemon)                                                                                             \
	X(MHD_get_daemon_info)                                                                                         \
	X(MHD_create_response_from_buffer)                                                                             \
	X(MHD_add_response_header)                                                                                     \
	X(MHD_queue_response)                                                                                          \
	X(MHD_destroy_response)

/* Written once, by the first role_open with an address, before the
 * server's thread exists; read-only after. */
static struct {
	MHD_API(DLIB_FIELD)
} lib;

static int role_library(char *err, size_t errlen)
{
	if (lib.MHD_start_daemon)
		return 0;
#if LEADERRUN_LAZY_LOAD
	{
		static const struct dlib_sym syms[] = {MHD_API(DLIB_SYM)};
		char why[512];
		if (!dlib_load("libmicrohttpd.so.12", RTLD_NOW, "libmicrohttpd", syms, sizeof(syms) / sizeof(syms[0]),
			       why, sizeof(why))) {
			snprintf(err, errlen, "--role-http: %s (apt-get install libmicrohttpd12)", why);
			return -1;
		}
	}
#else
	MHD_API(DLIB_LINK)
#endif
	return 0;
}

/* A hostile or stuck client cannot pin the endpoint: few connections, each
 * dropped after a few idle seconds. */
#define ROLE_HTTP_CONNECTIONS 64
#define ROLE_HTTP_TIMEOUT_S   5

struct role {
	pthread_mutex_t lock;
	struct role_view v;
	char lease[LEASE_NAME_MAX + 1], holder[LEASE_HOLDER_MAX + 1];
	char *file;
	char line[LEASE_HOLDER_MAX + 32]; /* what the file says */
	struct MHD_Daemon *http;
	int port;
};

const char *role_name(enum role_kind k)
{
	static const char *const names[] = {"standby", "promoting", "leader", "demoting"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "standby";
}

void role_file_line(const struct role_view *v, const char *holder, char *buf, size_t len)
{
	if (v->role == ROLE_LEADER)
		snprintf(buf, len, "leader %" PRIu64 "\n", v->term);
	else if (v->role != ROLE_STANDBY)
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

static enum MHD_Result role_answer(struct MHD_Connection *c, unsigned status, const char *type, const char *body)
{
	struct MHD_Response *resp =
	    lib.MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	lib.MHD_add_response_header(resp, "Content-Type", type);
	/* A proxy's cache must not say "leader" for us. */
	lib.MHD_add_response_header(resp, "Cache-Control", "no-store");
	ret = lib.MHD_queue_response(c, status, resp);
	lib.MHD_destroy_response(resp);
	return ret;
}

/* GET /leader: 200 on the leader, 503 elsewhere; GET /role: the JSON. */
static enum MHD_Result role_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				    const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct role *r = cls;
	struct role_view v;
	char body[JSON_QUOTE_MAX(LEASE_NAME_MAX) + 2 * JSON_QUOTE_MAX(LEASE_HOLDER_MAX) + 128];

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return role_answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET or HEAD only\n");
	role_now(r, timing_now(), &v);
	if (strcmp(url, "/leader") == 0) {
		snprintf(body, sizeof(body), "%s\n", role_name(v.role));
		return role_answer(c, v.role == ROLE_LEADER ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
				   body);
	}
	if (strcmp(url, "/role") == 0) {
		role_json(&v, r->lease, r->holder, body, sizeof(body));
		return role_answer(c, MHD_HTTP_OK, "application/json", body);
	}
	return role_answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "GET /leader or /role\n");
}

static int role_listen(struct role *r, const char *http, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;

	if (listenaddr_parse(http, &ss, &len, err, errlen) < 0 || role_library(err, errlen) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	r->http =
	    lib.MHD_start_daemon(flags, 0, NULL, NULL, role_request, r, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned)ROLE_HTTP_CONNECTIONS,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)ROLE_HTTP_TIMEOUT_S, MHD_OPTION_END);
	if (!r->http) {
		snprintf(err, errlen, "--role-http %s: cannot listen there (in use, or not an address of this host)",
			 http);
		return -1;
	}
	info = lib.MHD_get_daemon_info(r->http, MHD_DAEMON_INFO_BIND_PORT);
	r->port = info ? info->port : 0;
	return 0;
}

/* The file, when what it says changed: 0, or -1 with ERR. */
static int role_write(struct role *r, const struct role_view *v, char *err, size_t errlen)
{
	char line[sizeof(r->line)], why[PATH_MAX + 64];

	if (!r->file)
		return 0;
	role_file_line(v, r->holder, line, sizeof(line));
	if (strcmp(line, r->line) == 0)
		return 0;
	if (atomicfile_write(r->file, line, strlen(line), why, sizeof(why)) != 0) {
		snprintf(err, errlen, "--role-file: %s", why);
		return -1;
	}
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
	if (role_write(r, &r->v, err, errlen) < 0 || (http && role_listen(r, http, err, errlen) < 0)) {
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

void role_extend(struct role *r, int64_t until)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->v.until = until;
	pthread_mutex_unlock(&r->lock);
}

int role_http_port(const struct role *r)
{
	return r ? r->port : 0;
}

void role_close(struct role *r)
{
	char err[PATH_MAX + 80];

	if (!r)
		return;
	if (r->http)
		lib.MHD_stop_daemon(r->http);
	(void)role_write(r, &(struct role_view){.role = ROLE_STANDBY}, err, sizeof(err));
	free(r->file);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
