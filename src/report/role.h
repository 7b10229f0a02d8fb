/* This instance's role in its lease, published for readers that must not
 * query the database: --role-file (replaced atomically) and --role-http
 * (GET /leader, GET /role, served by role_http.c from its own thread).
 * Both answer from what the lease loop last said (role_set), never from a
 * guess: "leader" only between a promote's success and a demote's start,
 * and never past the lease's local deadline (role_now turns it into
 * "standby" then, whatever the loop said last). The file's "leader" line
 * carries that deadline by the wall clock, moved by each renew, so that a
 * file nobody was left to replace (the whole cgroup killed) is seen to be
 * stale. */
#ifndef LEADERRUN_ROLE_H
#define LEADERRUN_ROLE_H

#include <stdint.h>

#include "lease/lease.h"
#include "json.h"

enum role_kind { ROLE_STANDBY, ROLE_PROMOTING, ROLE_LEADER, ROLE_DEMOTING };

struct role_view {
	enum role_kind role;
	uint64_t term; /* ours while promoting, leading or demoting; else the leader's as seen (0: unknown) */
	char leader[LEASE_HOLDER_MAX + 1]; /* the lease's holder as last seen; "": none or unknown */
	int64_t until;			   /* ROLE_LEADER: the local deadline (CLOCK_BOOTTIME us) */
};

struct role;

/* A board for LEASE and this instance's HOLDER, writing FILE and serving
 * HTTP (ADDR:PORT) when they are not NULL. The file says "standby" at once:
 * one left by a leaderrun that was killed must not say "leader". NULL with
 * ERR when the file cannot be written or the address cannot be listened on,
 * or when out of memory. */
struct role *role_open(const char *lease, const char *holder, const char *file, const char *http, char *err,
		       size_t errlen);

/* The lease loop's word on the role; the file is replaced when what it says
 * changes. A write that fails is said once, until one succeeds again: the
 * return is -1 with ERR filled (the caller logs it), 0 otherwise. NULL R:
 * nothing. */
int role_set(struct role *r, const struct role_view *v, char *err, size_t errlen);

/* A renew moved the deadline to UNTIL: a leader's file is replaced with
 * the new end (a file write each renew, no statement). Returns as
 * role_set. */
int role_extend(struct role *r, int64_t until, char *err, size_t errlen);

/* What is true at NOW: the view, leader turned standby once UNTIL passed. */
void role_now(struct role *r, int64_t now, struct role_view *out);

/* The port --role-http listens on (the one chosen for port 0), or 0. */
int role_http_port(const struct role *r);

/* Stops the server and leaves the file saying "standby"; frees R. */
void role_close(struct role *r);

/* "standby", "promoting", "leader", "demoting". */
const char *role_name(enum role_kind k);

/* The role file's line for V, into BUF (LEN bytes): "leader TERM until
 * TIME", TIME being V's deadline plus WALL_OFFSET (CLOCK_REALTIME less
 * CLOCK_BOOTTIME, us) in UTC to the millisecond; "standby [HOLDER]". */
void role_file_line(const struct role_view *v, const char *holder, int64_t wall_offset, char *buf, size_t len);

/* /role's JSON for V, into BUF (LEN bytes). */
void role_json(const struct role_view *v, const char *lease, const char *holder, char *buf, size_t len);

/* What URL answers to METHOD now: its HTTP status, BODY (LEN bytes, at
 * least ROLE_REPLY_MAX) and its content TYPE. */
#define ROLE_REPLY_MAX (JSON_QUOTE_MAX(LEASE_NAME_MAX) + 2 * JSON_QUOTE_MAX(LEASE_HOLDER_MAX) + 128)
unsigned role_reply(struct role *r, const char *method, const char *url, char *body, size_t len, const char **type);

#endif
