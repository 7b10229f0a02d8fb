/* --role-http's server: libmicrohttpd (loaded with dlopen) on a thread of
 * its own, which no client can pin. Each connection gets one request,
 * whole within ROLE_HTTP_REQUEST_MS of its accept or it is cut; at most so
 * many connections at once, fewer from one address (role_http.c says how
 * many, and why). What a URL answers is its caller's (role.c's role_reply),
 * so that this file knows HTTP and nothing of roles. Only this file's .c
 * includes <microhttpd.h>. */
#ifndef LEADERRUN_ROLE_HTTP_H
#define LEADERRUN_ROLE_HTTP_H

#include <stddef.h>

struct role_http;

/* The largest answer's body. */
#define ROLE_HTTP_BODY_MAX 8192

/* The answer to METHOD URL: its HTTP status, BODY (LEN bytes at most, LEN being
 * ROLE_HTTP_BODY_MAX) and
 * its content *TYPE. Called on the server's thread. */
typedef unsigned role_http_reply_fn(void *ctx, const char *method, const char *url, char *body, size_t len,
				    const char **type);

/* A connection's whole request, from its accept: a health checker sends
 * it in one segment, a slow client is cut here. */
#define ROLE_HTTP_REQUEST_MS 2000

/* Listens on ADDR (ADDR:PORT) and answers with REPLY(CTX, ...); CTX
 * outlives the server. NULL with ERR: a bad address, one that cannot be
 * listened on, libmicrohttpd missing, or no memory or thread. */
struct role_http *role_http_start(const char *addr, role_http_reply_fn *reply, void *ctx, char *err, size_t errlen);

/* The port listened on (the one chosen for port 0). */
int role_http_bound_port(const struct role_http *h);

/* Stops the server: every connection closed, the thread joined. */
void role_http_stop(struct role_http *h);

#endif
