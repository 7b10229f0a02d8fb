#include "admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "duration.h"
#include "json.h"
#include "lease.h"
#include "log.h"
#include "runmode.h"

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

/* "KEY": "TIME", or null for a time the row does not have yet. */
static void print_time(const char *key, const char *t)
{
	if (t[0])
		printf("\"%s\": \"%s\", ", key, t);
	else
		printf("\"%s\": null, ", key);
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

static const char *state_of(const struct lease_row *w)
{
	if (w->paused_until[0])
		return w->revoked ? "revoked+paused" : w->held ? "held+paused" : "paused";
	return w->revoked ? "revoked" : w->held ? "held" : "free";
}

static void print_json(const struct rows *r, const char *server)
{
	char q[4 * LEASE_HOLDER_MAX + 8];

	fputs("[", stdout);
	for (size_t i = 0; i < r->n; i++) {
		const struct lease_row *w = &r->v[i];
		json_quote(q, sizeof(q), w->name);
		printf("%s\n  {\"name\": %s, ", i ? "," : "", q);
		json_quote(q, sizeof(q), w->holder);
		printf("\"holder\": %s, \"term\": %" PRIu64 ", \"state\": \"%s\", \"expires_in_ms\": %" PRId64 ", ", q,
		       w->term, w->held ? "held" : "free", w->held ? w->expires_in_us / 1000 : (int64_t)0);
		printf("\"expires_at\": \"%s\", ", w->expires_at);
		print_time("renewed_at", w->renewed_at);
		print_time("acquired_at", w->acquired_at);
		if (w->has_exit)
			printf("\"last_exit\": %d, ", w->last_exit);
		else
			fputs("\"last_exit\": null, ", stdout);
		print_time("finished_at", w->finished_at);
		printf("\"revoked\": %s, \"paused\": %s, ", w->revoked ? "true" : "false",
		       w->paused_until[0] ? "true" : "false");
		print_time("paused_until", w->paused_until);
		if (w->paused_until[0]) {
			json_quote(q, sizeof(q), w->paused_by);
			printf("\"paused_by\": %s, ", q);
		} else
			fputs("\"paused_by\": null, ", stdout);
		print_time("last_slot", w->last_slot);
		json_quote(q, sizeof(q), server);
		printf("\"db_now\": \"%s\", \"server\": %s}", w->now, q);
	}
	fputs(r->n ? "\n]\n" : "]\n", stdout);
}

static void print_table(const struct rows *r, const char *server)
{
	enum { NCOL = 10 };
	static const char *const head[NCOL] = {"LEASE",	  "STATE",    "HOLDER",	   "TERM",     "EXPIRES_IN",
					       "RENEWED", "ACQUIRED", "LAST_EXIT", "FINISHED", "NOTE"};
	int w[NCOL];
	char cell[NCOL][2 * LEASE_HOLDER_MAX + 64], until[48];

	for (int k = 0; k < NCOL; k++)
		w[k] = (int)strlen(head[k]);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			for (int k = 0; k < NCOL; k++)
				printf(k < NCOL - 1 ? "%-*s  " : "%.*s\n", w[k], head[k]);
		for (size_t i = 0; i < r->n; i++) {
			const struct lease_row *x = &r->v[i];
			snprintf(cell[0], sizeof(cell[0]), "%s", x->name);
			snprintf(cell[1], sizeof(cell[1]), "%s", state_of(x));
			snprintf(cell[2], sizeof(cell[2]), "%s", or_dash(x->holder));
			snprintf(cell[3], sizeof(cell[3]), "%" PRIu64, x->term);
			if (x->held)
				duration_format(x->expires_in_us, cell[4], sizeof(cell[4]));
			else
				snprintf(cell[4], sizeof(cell[4]), "-");
			snprintf(cell[5], sizeof(cell[5]), "%s", or_dash(x->renewed_at));
			snprintf(cell[6], sizeof(cell[6]), "%s", or_dash(x->acquired_at));
			if (x->has_exit)
				snprintf(cell[7], sizeof(cell[7]), "%d", x->last_exit);
			else
				snprintf(cell[7], sizeof(cell[7]), "-");
			snprintf(cell[8], sizeof(cell[8]), "%s", or_dash(x->finished_at));
			/* What an operator did to it, and the last --once-per slot. */
			snprintf(cell[9], sizeof(cell[9]), "%s%s%s%s%s%s%s", x->revoked ? "revoked; " : "",
				 x->paused_until[0] ? "paused " : "",
				 x->paused_until[0] ? pause_end(x->paused_until, until, sizeof(until)) : "",
				 x->paused_until[0] ? " by " : "", x->paused_until[0] ? x->paused_by : "",
				 x->last_slot[0] ? (x->paused_until[0] ? "; slot " : "slot ") : "", x->last_slot);
			if (!cell[9][0])
				snprintf(cell[9], sizeof(cell[9]), "-");
			for (int k = 0; k < NCOL; k++) {
				if (pass == 0 && (int)strlen(cell[k]) > w[k])
					w[k] = (int)strlen(cell[k]);
				if (pass == 1)
					printf(k < NCOL - 1 ? "%-*s  " : "%.*s\n",
					       k < NCOL - 1 ? w[k] : (int)sizeof(cell[k]), cell[k]);
			}
		}
	}
	if (r->n)
		printf("(times are the database's, UTC; now %s; server %s)\n", r->v[0].now, server);
}

static void admin_status(const struct options *o, struct db *db, const struct lease_sql *sql, struct outcome *out)
{
	struct rows r = {0};
	char err[512];
	enum db_status st = lease_status(db, sql, o->all_leases ? NULL : o->lease, collect, &r, err, sizeof(err));
	struct db_server srv = {.name = "?"};
	char server[sizeof(srv.name) + 32];

	/* Which server answered, and whether the read was causal. */
	db_server_info(db, &srv);
	snprintf(server, sizeof(server), "%s%s", srv.name, srv.galera ? " (Galera, causal read)" : "");

	if (st != DB_OK) {
		log_error("--status: %s: %s%s", dberr_name(st), err,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
	} else if (r.oom) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
	} else if (!o->all_leases && r.n == 0) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else {
		if (o->json)
			print_json(&r, server);
		else
			print_table(&r, server);
		out->kind = OUTCOME_INIT_DONE;
	}
	free(r.v);
}

static void admin_release(const struct options *o, struct db *db, const struct lease_sql *sql, struct outcome *out)
{
	struct lease_info was;
	bool found, held;
	char err[512];
	enum db_status st = lease_revoke(db, sql, o->lease, o->force, &was, &found, &held, err, sizeof(err));

	if (st != DB_OK) {
		log_error("--release: %s: %s%s", dberr_name(st), err,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
		return;
	}
	if (!found) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
		return;
	}
	if (held && o->force)
		printf("released lease %s by force, held by %s (term %" PRIu64 "): it is free now, and the old "
		       "command may still run until its holder's next renew, at the latest until %s\n",
		       o->lease, was.holder, was.term, was.expires_at);
	else if (held)
		printf("revoked lease %s, held by %s (term %" PRIu64 "); it stops at its next renew, at the latest by "
		       "%s\n",
		       o->lease, was.holder, was.term, was.expires_at);
	else
		printf("lease %s was not held (last holder %s, term %" PRIu64 ")\n", o->lease, or_dash(was.holder),
		       was.term);
	out->kind = OUTCOME_INIT_DONE;
}

static void admin_pause(const struct options *o, struct db *db, const struct lease_sql *sql, struct outcome *out)
{
	struct lease_info info;
	bool found = true;
	char err[512];
	enum db_status st = o->mode == MODE_PAUSE
				? lease_pause(db, sql, o->lease, o->pause_for_us, o->holder, &info, err, sizeof(err))
				: lease_resume(db, sql, o->lease, &found, &info, err, sizeof(err));
	const char *what = o->mode == MODE_PAUSE ? "--pause" : "--resume";
	char until[48];

	if (st != DB_OK) {
		log_error("%s: %s: %s%s", what, dberr_name(st), err,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it also upgrades an older table)" : "");
		out->kind = runmode_outcome_of(st);
		return;
	}
	out->kind = OUTCOME_INIT_DONE;
	if (!found) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else if (o->mode == MODE_RESUME && info.paused_in_us > 0)
		printf("resumed lease %s (paused by %s %s)\n", o->lease, or_dash(info.paused_by),
		       pause_end(info.paused_until, until, sizeof(until)));
	else if (o->mode == MODE_RESUME)
		printf("lease %s was not paused\n", o->lease);
	else if (info.expires_in_us > 0)
		printf("paused lease %s %s; its holder %s (term %" PRIu64 ") keeps running: 'leaderrun --release "
		       "%s' stops it\n",
		       o->lease, pause_end(info.paused_until, until, sizeof(until)), info.holder, info.term, o->lease);
	else
		printf("paused lease %s %s\n", o->lease, pause_end(info.paused_until, until, sizeof(until)));
}

static void admin_check(const struct options *o, struct db *db, const struct lease_sql *sql, struct outcome *out)
{
	bool held;
	char err[512];
	enum db_status st = lease_check(db, sql, o->lease, o->holder, o->check_term, &held, err, sizeof(err));

	if (st != DB_OK) {
		log_error("--check: %s: %s", dberr_name(st), err);
		out->kind = runmode_outcome_of(st);
		return;
	}
	if (!held)
		log_info("%s no longer holds lease %s with term %" PRIu64, o->holder, o->lease, o->check_term);
	out->kind = held ? OUTCOME_INIT_DONE : OUTCOME_NO;
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
	else if (o->mode == MODE_RELEASE)
		admin_release(o, db, &sql, out);
	else if (o->mode == MODE_PAUSE || o->mode == MODE_RESUME)
		admin_pause(o, db, &sql, out);
	else
		admin_check(o, db, &sql, out);
	runmode_close(db);
}
