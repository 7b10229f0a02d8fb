#include "admin.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/signame.h"
#include "db/db.h"
#include "lease/history_sql.h"
#include "lease/lease.h"
#include "lease/standby.h"
#include "report/escape.h"
#include "report/log.h"
#include "report/report.h"
#include "run/runmode.h"
#include "switchover.h"

struct rows {
	struct lease_row *v;
	size_t n, cap;
	bool oom;
};

static void collect(void *ctx, const struct lease_row *row)
{
	struct rows *r = ctx;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct lease_row *v = realloc(r->v, cap * sizeof(*v));
		if (!v) {
			r->oom = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *row;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* A pause's end as people read it: a pause without --for lasts until
 * --resume, and is stored as the end of time. */
static const char *pause_end(const char *until, char *buf, size_t len)
{
	if (strncmp(until, "9999-", 5) == 0)
		return "until --resume";
	snprintf(buf, len, "until %s", until);
	return buf;
}

struct successes {
	struct report_success *v;
	size_t n, cap;
};

static void collect_success(void *ctx, const struct db_value *c)
{
	struct successes *r = ctx;

	if (c[1].is_null)
		return;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct report_success *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return;
		r->v = v;
		r->cap = cap;
	}
	snprintf(r->v[r->n].lease, sizeof(r->v[r->n].lease), "%s", c[0].buf);
	r->v[r->n++].at_us = c[1].i64;
}

/* The last successful run of each lease, from the history. False (and a
 * warning) when the history cannot be read: a schema-3 database. */
static bool read_successes(const struct options *o, struct db *db, struct successes *ok)
{
	struct history_sql h;
	char lease[LEASE_NAME_MAX + 1];
	struct db_err err;
	struct db_value c[] = {{.type = DB_STR, .buf = lease, .cap = sizeof(lease)}, {.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	history_sql_render(&h, o->history_table, o->table);
	st = db_exec(
	    db, &(struct db_call){STMT_HISTORY_LAST_SUCCESS, h.last_success, NULL, 0, c, 2, collect_success, ok, &r},
	    &err);
	if (st == DB_OK)
		return true;
	log_warn("--status: no last success times: the run history %s cannot be read (%s: %s)%s", o->history_table,
		 dberr_name(st), err.msg,
		 st == DB_NO_TABLE ? "; 'leaderrun --init' creates it"
		 : st == DB_DENIED ? "; a schema-3 database ('leaderrun --init' creates it) or no grant on it "
				     "(sql/grants.sql)"
				   : "");
	return false;
}

/* The warning of a lease call that found the table older than this build,
 * before what the call's outcome says. */
static void admin_say_older(struct lease_sql *sql)
{
	char msg[512];

	if (lease_sql_older(sql, msg, sizeof(msg)))
		log_warn("%s", msg);
}

struct standbys {
	struct standby_row *v;
	size_t n, cap;
};

static void collect_standby(void *ctx, const struct standby_row *row)
{
	struct standbys *r = ctx;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct standby_row *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *row;
}

/* The leases as read, with their standbys (none when the table is not
 * there: a database not --init'ed by this version), in O's format. */
static void admin_status_print(const struct options *o, struct db *db, struct lease_sql *sql, const struct rows *r,
			       const char *server)
{
	struct standbys sb = {0};
	struct db_err err;
	enum db_status st =
	    standby_list(db, sql, o->all_leases ? NULL : o->lease, &(struct standby_each){collect_standby, &sb}, &err);

	if (st != DB_OK && st != DB_NO_TABLE && st != DB_DENIED)
		log_warn("--status: the standbys cannot be read (%s: %s)", dberr_name(st), err.msg);
	if (o->format == FORMAT_PROMETHEUS) {
		struct successes ok = {0};
		bool have = read_successes(o, db, &ok);
		report_status_prometheus(stdout, r->v, r->n, ok.v, ok.n, have);
		report_standbys_prometheus(stdout, r->v, r->n, sb.v, sb.n);
		free(ok.v);
	} else if (o->json)
		report_status_json_with(stdout, r->v, r->n, server, sb.v, sb.n);
	else {
		report_status_table(stdout, r->v, r->n, server);
		report_standbys_table(stdout, sb.v, sb.n);
	}
	free(sb.v);
}

static void admin_status(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	struct rows r = {0};
	struct db_err err;
	const struct lease_req q = {.name = o->all_leases ? NULL : o->lease, .on_row = collect, .ctx = &r};
	struct lease_res res = {0};
	enum db_status st = lease_status(db, sql, &q, &res, &err);
	struct db_server srv = {.name = "?"};
	char server[sizeof(srv.name) + 32];

	admin_say_older(sql);
	/* Which server answered, and whether the read was causal. */
	db_server_info(db, &srv);
	snprintf(server, sizeof(server), "%s%s", srv.name, srv.galera ? " (Galera, causal read)" : "");

	if (st != DB_OK) {
		log_error("--status: %s: %s%s", dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
	} else if (r.oom) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
	} else if (!o->all_leases && r.n == 0) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else {
		admin_status_print(o, db, sql, &r, server);
		out->kind = OUTCOME_INIT_DONE;
	}
	free(r.v);
}

/* One line of an operator mode's report. It quotes rows (holders, who
 * paused), which anybody can write: their control characters are shown
 * escaped, never sent to the terminal. */
static void admin_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void admin_say(const char *fmt, ...)
{
	char msg[2048], shown[ESCAPE_TEXT_MAX(sizeof(msg))];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape_text(shown, sizeof(shown), msg);
	puts(shown);
}

/* What --release saw of the lease so far: whether it has rows, its slot
 * count, whether any slot was held; its outcome into OUT. */
struct admin_releasing {
	bool found, any_held;
	unsigned slots;
	struct outcome *out;
};

/* --release of one slot: "lease L" or "lease L slot K". Returns -1 on a
 * database error (logged, R->out set). */
static int admin_release_slot(const struct options *o, struct db *db, struct lease_sql *sql, unsigned slot,
			      struct admin_releasing *r)
{
	bool *found = &r->found, *any_held = &r->any_held;
	unsigned *slots = &r->slots;
	struct outcome *out = r->out;
	struct db_err err;
	char what[LEASE_NAME_MAX + 32];
	const struct lease_req q = {.name = o->lease, .slot = slot, .force = o->force};
	struct lease_res res = {0};
	enum db_status st = lease_revoke(db, sql, &q, &res, &err);
	const struct lease_info was = res.info;
	bool held = res.held;

	*found = res.found;

	admin_say_older(sql);
	if (st != DB_OK) {
		log_error("--release: %s: %s%s", dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
		return -1;
	}
	*slots = was.slots;
	if (!*found || slot >= was.slots)
		return 0;
	if (was.slots > 1 || slot > 0)
		snprintf(what, sizeof(what), "%s slot %u", o->lease, slot);
	else
		snprintf(what, sizeof(what), "%s", o->lease);
	*any_held = *any_held || held;
	if (held && o->force)
		admin_say("released lease %s by force, held by %s (term %" PRIu64 "): it is free now, and the old "
			  "command may still run until its holder's next renew, at the latest until %s",
			  what, was.holder, was.term, was.expires_at);
	else if (held)
		admin_say("revoked lease %s, held by %s (term %" PRIu64 "); it stops at its next renew, at the latest "
			  "by %s",
			  what, was.holder, was.term, was.expires_at);
	else if (o->slot >= 0 || was.slots == 1)
		admin_say("lease %s was not held (last holder %s, term %" PRIu64 ")", what, or_dash(was.holder),
			  was.term);
	return 0;
}

/* --release: the slot named by --slot, or every slot of the lease. */
static void admin_release(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	/* The slot count until the first look says. */
	struct admin_releasing r = {.slots = o->slot >= 0 ? (unsigned)o->slot + 1 : 1, .out = out};
	unsigned slots;
	bool found, any;

	out->kind = OUTCOME_INIT_DONE;
	for (unsigned k = o->slot >= 0 ? (unsigned)o->slot : 0; k < r.slots; k++) {
		if (admin_release_slot(o, db, sql, k, &r) < 0)
			return;
		if (!r.found || o->slot >= 0)
			break;
	}
	slots = r.slots;
	found = r.found;
	any = r.any_held;
	if (!found) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else if (o->slot >= 0 && (unsigned)o->slot >= slots) {
		log_error("lease %s has %u slot%s (0 to %u); there is no slot %d", o->lease, slots,
			  slots == 1 ? "" : "s", slots - 1, o->slot);
		out->kind = OUTCOME_NO;
	} else if (o->slot < 0 && slots > 1 && !any)
		admin_say("lease %s: none of its %u slots was held", o->lease, slots);
}

static void admin_pause(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	struct db_err err;
	const struct lease_req q = {.name = o->lease, .holder = o->holder, .for_us = o->pause_for_us};
	struct lease_res res = {0};
	enum db_status st =
	    o->mode == MODE_PAUSE ? lease_pause(db, sql, &q, &res, &err) : lease_resume(db, sql, &q, &res, &err);
	const struct lease_info info = res.info;
	/* --pause makes the row it pauses. */
	bool found = o->mode == MODE_PAUSE || res.found;
	const char *what = o->mode == MODE_PAUSE ? "--pause" : "--resume";
	char until[48];

	admin_say_older(sql);
	if (st != DB_OK) {
		log_error("%s: %s: %s%s", what, dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
		return;
	}
	out->kind = OUTCOME_INIT_DONE;
	if (!found) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else if (o->mode == MODE_RESUME && info.paused_in_us > 0)
		admin_say("resumed lease %s (paused by %s %s)", o->lease, or_dash(info.paused_by),
			  pause_end(info.paused_until, until, sizeof(until)));
	else if (o->mode == MODE_RESUME)
		admin_say("lease %s was not paused", o->lease);
	else if (info.expires_in_us > 0)
		admin_say("paused lease %s %s; its holder %s (term %" PRIu64 ") keeps running: 'leaderrun --release "
			  "%s' stops it",
			  o->lease, pause_end(info.paused_until, until, sizeof(until)), info.holder, info.term,
			  o->lease);
	else
		admin_say("paused lease %s %s", o->lease, pause_end(info.paused_until, until, sizeof(until)));
}

static void admin_check(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	struct db_err err;
	const struct lease_req q = {
	    .name = o->lease, .slot = (unsigned)o->slot, .holder = o->holder, .term = o->check_term};
	struct lease_res res = {0};
	enum db_status st = lease_check(db, sql, &q, &res, &err);
	bool held = res.held;

	admin_say_older(sql);
	if (st != DB_OK) {
		log_error("--check: %s: %s", dberr_name(st), err.msg);
		out->kind = runmode_outcome_of(st);
		return;
	}
	if (!held && o->slot > 0)
		log_info("%s no longer holds slot %d of lease %s with term %" PRIu64, o->holder, o->slot, o->lease,
			 o->check_term);
	else if (!held)
		log_info("%s no longer holds lease %s with term %" PRIu64, o->holder, o->lease, o->check_term);
	out->kind = held ? OUTCOME_INIT_DONE : OUTCOME_NO;
}

/* ---- --history ---------------------------------------------------------- */

struct runs {
	struct report_run *v;
	size_t n, cap;
	bool oom;
};

static void collect_run(void *ctx, const struct db_value *c)
{
	struct runs *r = ctx;
	struct report_run *x;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct report_run *v = realloc(r->v, cap * sizeof(*v));
		if (!v) {
			r->oom = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	x = &r->v[r->n++];
	memset(x, 0, sizeof(*x));
	x->slot = (unsigned)c[0].i64;
	c++;
	x->term = c[0].u64;
	snprintf(x->holder, sizeof(x->holder), "%s", c[1].buf);
	snprintf(x->host, sizeof(x->host), "%s", c[2].buf);
	snprintf(x->started, sizeof(x->started), "%s", c[3].is_null ? "" : c[3].buf);
	snprintf(x->ended, sizeof(x->ended), "%s", c[4].is_null ? "" : c[4].buf);
	snprintf(x->outcome, sizeof(x->outcome), "%s", c[5].buf);
	x->has_exit = !c[6].is_null;
	x->exit_status = (int)c[6].i64;
	x->has_signal = !c[7].is_null;
	x->signo = (int)c[7].i64;
	x->has_duration = !c[8].is_null;
	x->duration_us = c[8].i64;
}

static void admin_history(const struct options *o, struct db *db, struct outcome *out)
{
	struct history_sql h;
	char b[6][LEASE_HOLDER_MAX + 1];
	struct db_err err;
	struct db_value p[] = {{.type = DB_STR, .str = o->lease},
			       {.type = DB_U64, .u64 = o->history_limit ? o->history_limit : UINT64_C(1000000000)}};
	struct db_value c[] = {
	    {.type = DB_I64},
	    {.type = DB_U64},
	    {.type = DB_STR, .buf = b[0], .cap = sizeof(b[0])},
	    {.type = DB_STR, .buf = b[1], .cap = sizeof(b[1])},
	    {.type = DB_STR, .buf = b[2], .cap = 32},
	    {.type = DB_STR, .buf = b[3], .cap = 32},
	    {.type = DB_STR, .buf = b[4], .cap = sizeof(((struct report_run *)0)->outcome)},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	};
	struct runs r = {0};
	struct db_result res;
	enum db_status st;

	history_sql_render(&h, o->history_table, o->table);
	st = db_exec(db, &(struct db_call){STMT_HISTORY_LIST, h.list, p, 2, c, 10, collect_run, &r, &res}, &err);
	if (st != DB_OK) {
		log_error("--history: %s: %s%s", dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; 'leaderrun --init' creates the history table, or upgrades an older one"
			  : st == DB_DENIED ? "; a schema-3 database ('leaderrun --init' creates the history table) "
					      "or no grant on it (sql/grants.sql)"
					    : "");
		out->kind = runmode_outcome_of(st);
	} else if (r.oom) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
	} else {
		if (o->json)
			report_runs_json(stdout, r.v, r.n);
		else if (r.n)
			report_runs_table(stdout, r.v, r.n);
		else
			printf("no runs of lease %s in %s\n", o->lease, o->history_table);
		out->kind = OUTCOME_INIT_DONE;
	}
	free(r.v);
}

void admin_run(const struct options *o, struct outcome *out)
{
	struct lease_sql sql;
	struct db *db = runmode_open(o, out);

	if (!db)
		return;
	lease_sql_render(&sql, o->table);
	if (o->mode == MODE_STATUS)
		admin_status(o, db, &sql, out);
	else if (o->mode == MODE_HISTORY)
		admin_history(o, db, out);
	else if (o->mode == MODE_RELEASE && o->release_to)
		switchover_run(o, db, &sql, out);
	else if (o->mode == MODE_RELEASE)
		admin_release(o, db, &sql, out);
	else if (o->mode == MODE_PAUSE || o->mode == MODE_RESUME)
		admin_pause(o, db, &sql, out);
	else
		admin_check(o, db, &sql, out);
	runmode_close(db);
}
