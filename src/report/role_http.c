/* --role-http's server (role_http.h): libmicrohttpd's own thread serves,
 * ours cuts the connections whose request did not come whole in time. */
#include "role_http.h"

#include <dlfcn.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "base/bgthread.h"
#include "base/dlib.h"
#include "base/duration.h"
#include "base/listenaddr.h"
#include "base/timing.h"
#include "config.h"

/* libmicrohttpd is loaded only by a run with --role-http, as libcurl is
 * by one that notifies (dlib.h): linked in, it and the TLS stack Debian
 * builds it with would cost every run its start-up. The static build links
 * it in, built without HTTPS. */
#define MHD_API(X)                                                                                                     \
	X(MHD_start_daemon)                                                                                            \
	X(MHD_stop_daemon)                                                                                             \
	X(MHD_get_daemon_info)                                                                                         \
	X(MHD_get_connection_info)                                                                                     \
	X(MHD_create_response_from_buffer)                                                                             \
	X(MHD_add_response_header)                                                                                     \
	X(MHD_queue_response)                                                                                          \
	X(MHD_destroy_response)

/* Written once, by the first role_http_start, before the server's thread
 * exists; read-only after. */
static struct {
	MHD_API(DLIB_FIELD)
} lib;

static int role_http_library(char *err, size_t errlen)
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

/* Issue 51: 64 connections that each sent a header byte every 2 s held
 * every slot (libmicrohttpd's timeout is an idle one, which each byte
 * renews), and every other GET /leader timed out. Now a connection holds
 * its slot ROLE_HTTP_REQUEST_MS at most, and the slots are many: a client
 * that wants to keep the checker out must hold all of them, opening
 * hundreds of connections a second.
 *
 * Each connection is a descriptor. ROLE_HTTP_FD_RESERVE of them stay for
 * the rest of leaderrun (its database connections, the watcher's pipe, the
 * pidfds a kill takes), which no client may take; ROLE_HTTP_CONNECTIONS is
 * what the usual soft limit (ulimit -n 1024) leaves, and a lower limit
 * gets fewer. One address gets ROLE_HTTP_PER_ADDRESS, leaving the rest to
 * the others (a checker elsewhere); it is more than half so that a checker
 * that shares its address with many clients (a NAT, a node's own pods)
 * still finds one. */
#define ROLE_HTTP_FD_RESERVE   128
#define ROLE_HTTP_CONNECTIONS  896
#define ROLE_HTTP_PER_ADDRESS  512
#define ROLE_HTTP_IDLE_S       2
#define ROLE_HTTP_MIN_CONNECTS 16

/* A connection being served, until its deadline; on the server's list in
 * the order of their deadlines, which is that of their accepts. */
struct role_http_conn {
	struct role_http_conn *prev, *next;
	int fd;
	bool cut; /* off the list: its socket is shut down */
	int64_t deadline;
};

struct role_http {
	struct MHD_Daemon *d;
	role_http_reply_fn *reply;
	void *ctx;
	int port;
	struct bgthread cutter;
	/* Guarded by cutter's lock: written by libmicrohttpd's thread when a
	 * connection comes and goes, read by the cutter. */
	struct role_http_conn *head, *tail;
};

static unsigned role_http_capacity(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= ROLE_HTTP_CONNECTIONS + ROLE_HTTP_FD_RESERVE)
		return ROLE_HTTP_CONNECTIONS;
	if (rl.rlim_cur < ROLE_HTTP_FD_RESERVE + ROLE_HTTP_MIN_CONNECTS)
		return ROLE_HTTP_MIN_CONNECTS;
	return (unsigned)(rl.rlim_cur - ROLE_HTTP_FD_RESERVE);
}

static void role_http_unlink(struct role_http *h, struct role_http_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		h->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		h->tail = c->prev;
	c->prev = c->next = NULL;
}

/* libmicrohttpd's word on a connection: started (its deadline set) or
 * closed (forgotten). It closes the socket only after this returns for
 * "closed", so a socket the cutter finds on the list is still this one.
 * Without the memory for its entry a connection has libmicrohttpd's idle
 * timeout alone. */
static void role_http_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode toe)
{
	struct role_http *h = cls;
	struct role_http_conn *rc = *ctx;
	const union MHD_ConnectionInfo *info;

	bgthread_lock(&h->cutter);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED && rc) {
		if (!rc->cut)
			role_http_unlink(h, rc);
		free(rc);
		*ctx = NULL;
	} else if (toe == MHD_CONNECTION_NOTIFY_STARTED &&
		   (info = lib.MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) != NULL &&
		   (rc = calloc(1, sizeof(*rc))) != NULL) {
		rc->fd = info->connect_fd;
		rc->deadline = timing_now() + ROLE_HTTP_REQUEST_MS * USEC_PER_MSEC;
		rc->prev = h->tail;
		if (h->tail)
			h->tail->next = rc;
		else {
			h->head = rc;
			bgthread_wake(&h->cutter);
		}
		h->tail = rc;
		*ctx = rc;
	}
	bgthread_unlock(&h->cutter);
}

/* The cutter: shuts down each connection at its deadline. libmicrohttpd's
 * thread then reads its end and closes it, as it would a client's hang-up;
 * the client sees its connection closed. */
static void *role_http_cutter(void *arg)
{
	struct role_http *h = arg;

	bgthread_lock(&h->cutter);
	while (!h->cutter.quit) {
		struct role_http_conn *c = h->head;

		if (c && timing_now() >= c->deadline) {
			shutdown(c->fd, SHUT_RDWR);
			role_http_unlink(h, c);
			c->cut = true;
			continue;
		}
		bgthread_wait(&h->cutter, c ? c->deadline : 0);
	}
	bgthread_unlock(&h->cutter);
	return NULL;
}

static enum MHD_Result role_http_answer(struct MHD_Connection *c, unsigned status, const char *type, const char *body)
{
	struct MHD_Response *resp =
	    lib.MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	lib.MHD_add_response_header(resp, "Content-Type", type);
	/* A proxy's cache must not say "leader" for us. */
	lib.MHD_add_response_header(resp, "Cache-Control", "no-store");
	/* One request a connection: its deadline, from the accept, is that
	 * of the request. */
	lib.MHD_add_response_header(resp, "Connection", "close");
	ret = lib.MHD_queue_response(c, status, resp);
	lib.MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result role_http_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
					 const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct role_http *h = cls;
	char body[ROLE_HTTP_BODY_MAX];
	const char *type;
	unsigned status;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	status = h->reply(h->ctx, method, url, body, sizeof(body), &type);
	return role_http_answer(c, status, type, body);
}

static int role_http_listen(struct role_http *h, const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;

	if (listenaddr_parse(addr, &ss, &len, err, errlen) < 0 || role_http_library(err, errlen) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* MHD_USE_AUTO: epoll, whose cost does not grow with the connections
	 * that wait. */
	h->d = lib.MHD_start_daemon(flags, 0, NULL, NULL, role_http_request, h, MHD_OPTION_SOCK_ADDR,
				    (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, role_http_capacity(),
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)ROLE_HTTP_PER_ADDRESS,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)ROLE_HTTP_IDLE_S,
				    MHD_OPTION_NOTIFY_CONNECTION, role_http_notify, h, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--role-http %s: cannot listen there (in use, or not an address of this host)",
			 addr);
		return -1;
	}
	info = lib.MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	return 0;
}

struct role_http *role_http_start(const char *addr, role_http_reply_fn *reply, void *ctx, char *err, size_t errlen)
{
	struct role_http *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->reply = reply;
	h->ctx = ctx;
	bgthread_init(&h->cutter);
	if (bgthread_start(&h->cutter, role_http_cutter, h) < 0) {
		snprintf(err, errlen, "--role-http: cannot start a thread");
		role_http_stop(h);
		return NULL;
	}
	if (role_http_listen(h, addr, err, errlen) < 0) {
		role_http_stop(h);
		return NULL;
	}
	return h;
}

int role_http_bound_port(const struct role_http *h)
{
	return h ? h->port : 0;
}

void role_http_stop(struct role_http *h)
{
	if (!h)
		return;
	/* The server first: its last "closed" words need the list. */
	if (h->d)
		lib.MHD_stop_daemon(h->d);
	bgthread_lock(&h->cutter);
	bgthread_quit(&h->cutter);
	bgthread_unlock(&h->cutter);
	bgthread_join(&h->cutter);
	bgthread_destroy(&h->cutter);
	free(h);
}
