#include "admin.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "history_sql.h"
#include "duration.h"
#include "json.h"
#include "lease.h"
#include "log.h"
#include "runmode.h"
#include "signame.h"

/* Statement slots of the history on the admin connection (after lease.c's). */
enum { SLOT_A_LIST = LEASE_STMT_SLOTS_END, SLOT_A_SUCCESS };

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
		printf("\"slot\": %u, \"slots\": %u, ", w->slot, w->slots);
		json_quote(q, sizeof(q), server);
		printf("\"db_now\": \"%s\", \"server\": %s}", w->now, q);
	}
	fputs(r->n ? "\n]\n" : "]\n", stdout);
}

/* The two passes of a text table: pass 0 widens the columns W to fit the
 * N cells (STRIDE bytes apart from CELL), pass 1 prints them, the last one
 * unpadded. */
static void table_row(int pass, int n, int w[], const char *cell, size_t stride)
{
	for (int k = 0; k < n; k++) {
		const char *c = cell + (size_t)k * stride;
		if (pass == 0 && (int)strlen(c) > w[k])
			w[k] = (int)strlen(c);
		else if (pass == 1 && k < n - 1)
			printf("%-*s  ", w[k], c);
		else if (pass == 1)
			printf("%s\n", c);
	}
}

static void table_head(int n, int w[], const char *const head[], bool print)
{
	for (int k = 0; k < n; k++)
		if (!print)
			w[k] = (int)strlen(head[k]);
		else if (k < n - 1)
			printf("%-*s  ", w[k], head[k]);
		else
			printf("%s\n", head[k]);
}

static void print_table(const struct rows *r, const char *server)
{
	enum { NCOL = 11 };
	static const char *const with_slot[NCOL] = {"LEASE",	 "SLOT",       "STATE",	  "HOLDER",
						    "TERM",	 "EXPIRES_IN", "RENEWED", "ACQUIRED",
						    "LAST_EXIT", "FINISHED",   "NOTE"};
	static const char *const without[NCOL - 1] = {"LEASE",	 "STATE",    "HOLDER",	  "TERM",     "EXPIRES_IN",
						      "RENEWED", "ACQUIRED", "LAST_EXIT", "FINISHED", "NOTE"};
	int w[NCOL], ncol = NCOL - 1;
	char cell[NCOL][2 * LEASE_HOLDER_MAX + 64], until[48];
	const char *const *head = without;

	/* A SLOT column only where some lease has several (--slots): the
	 * table of one-slot leases reads as it always has. */
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].slots > 1) {
			head = with_slot;
			ncol = NCOL;
		}
	table_head(ncol, w, head, false);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			table_head(ncol, w, head, true);
		for (size_t i = 0; i < r->n; i++) {
			const struct lease_row *x = &r->v[i];
			char(*c)[sizeof(cell[0])] = cell + (ncol == NCOL ? 1 : 0);
			snprintf(cell[0], sizeof(cell[0]), "%s", x->name);
			snprintf(cell[1], sizeof(cell[1]), "%u of %u", x->slot, x->slots);
			snprintf(c[1], sizeof(c[1]), "%s", state_of(x));
			snprintf(c[2], sizeof(c[2]), "%s", or_dash(x->holder));
			snprintf(c[3], sizeof(c[3]), "%" PRIu64, x->term);
			if (x->held)
				duration_format(x->expires_in_us, c[4], sizeof(c[4]));
			else
				snprintf(c[4], sizeof(c[4]), "-");
			snprintf(c[5], sizeof(c[5]), "%s", or_dash(x->renewed_at));
			snprintf(c[6], sizeof(c[6]), "%s", or_dash(x->acquired_at));
			if (x->has_exit)
				snprintf(c[7], sizeof(c[7]), "%d", x->last_exit);
			else
				snprintf(c[7], sizeof(c[7]), "-");
			snprintf(c[8], sizeof(c[8]), "%s", or_dash(x->finished_at));
			/* What an operator did to it, and the last --once-per slot. */
			snprintf(c[9], sizeof(c[9]), "%s%s%s%s%s%s%s", x->revoked ? "revoked; " : "",
				 x->paused_until[0] ? "paused " : "",
				 x->paused_until[0] ? pause_end(x->paused_until, until, sizeof(until)) : "",
				 x->paused_until[0] ? " by " : "", x->paused_until[0] ? x->paused_by : "",
				 x->last_slot[0] ? (x->paused_until[0] ? "; slot " : "slot ") : "", x->last_slot);
			if (!c[9][0])
				snprintf(c[9], sizeof(c[9]), "-");
			table_row(pass, ncol, w, cell[0], sizeof(cell[0]));
		}
	}
	if (r->n)
		printf("(times are the database's, UTC; now %s; server %s)\n", r->v[0].now, server);
}

/* Prometheus label values escape backslash, double quote and newline. */
static void prom_label(char *out, size_t len, const char *v)
{
	size_t k = 0;

	for (; *v && k + 2 < len; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			out[k++] = '\\';
			out[k++] = *v == '\n' ? 'n' : *v;
		} else
			out[k++] = *v;
	}
	out[k] = '\0';
}

/* "2024-01-02T03:04:05.123456Z" (the database's UTC) as Unix seconds. */
static double iso_seconds(const char *t)
{
	struct tm tm = {0};
	double frac = 0;
	const char *rest;

	if (!t[0])
		return 0;
	rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return 0;
	if (*rest == '.')
		frac = strtod(rest, NULL);
	return (double)timegm(&tm) + frac;
}

struct success {
	char lease[LEASE_NAME_MAX + 1];
	int64_t at_us;
};
struct successes {
	struct success *v;
	size_t n, cap;
};

static void collect_success(void *ctx, const struct db_value *c)
{
	struct successes *r = ctx;

	if (c[1].is_null)
		return;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct success *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return;
		r->v = v;
		r->cap = cap;
	}
	snprintf(r->v[r->n].lease, sizeof(r->v[r->n].lease), "%s", c[0].buf);
	r->v[r->n++].at_us = c[1].i64;
}

/* --status --format prometheus: every lease as metrics, all times by the
 * database's clock, for one scrape (cron into a textfile, or a sidecar)
 * that watches the whole fleet. */
static void print_prometheus(const struct rows *r, const struct successes *ok, bool have_history)
{
	char l[4 * LEASE_NAME_MAX + 8], lab[4 * LEASE_NAME_MAX + 40], hl[4 * LEASE_HOLDER_MAX + 8];
	struct {
		const char *name, *type, *help;
	} fam[] = {
	    {"leaderrun_lease_held", "gauge",
	     "Whether somebody holds the lease now (1) or not (0), by the database's clock."},
	    {"leaderrun_lease_holder_info", "gauge", "The lease's current or last holder, as a label; always 1."},
	    {"leaderrun_lease_term", "gauge", "The lease's fencing term: it grows by one per acquisition."},
	    {"leaderrun_lease_expiry_seconds", "gauge", "Seconds until the lease expires; 0 when not held."},
	    {"leaderrun_lease_revoked", "gauge", "Whether the lease is held but revoked by --release (1) or not (0)."},
	    {"leaderrun_lease_paused", "gauge", "Whether the lease is paused (1) or not (0)."},
	    {"leaderrun_lease_last_exit_status", "gauge", "Exit status of the last run's command (128+N: signal N)."},
	    {"leaderrun_lease_last_finish_timestamp_seconds", "gauge",
	     "Unix time the last run finished (database clock)."},
	    {"leaderrun_lease_last_success_timestamp_seconds", "gauge",
	     "Unix time the last run that exited 0 finished (database clock; from the run history)."},
	};
	enum { NFAM = sizeof(fam) / sizeof(fam[0]) };

	for (int f = 0; f < NFAM; f++) {
		if (f == NFAM - 1 && !have_history)
			continue;
		printf("# HELP %s %s\n# TYPE %s %s\n", fam[f].name, fam[f].help, fam[f].name, fam[f].type);
		for (size_t i = 0; i < r->n; i++) {
			const struct lease_row *w = &r->v[i];
			prom_label(l, sizeof(l), w->name);
			/* A lease with several slots: a series a slot. */
			if (w->slots > 1)
				snprintf(lab, sizeof(lab), "lease=\"%s\",slot=\"%u\"", l, w->slot);
			else
				snprintf(lab, sizeof(lab), "lease=\"%s\"", l);
			switch (f) {
			case 0:
				printf("%s{%s} %d\n", fam[f].name, lab, w->held ? 1 : 0);
				break;
			case 1:
				prom_label(hl, sizeof(hl), w->holder);
				printf("%s{%s,holder=\"%s\"} 1\n", fam[f].name, lab, hl);
				break;
			case 2:
				printf("%s{%s} %" PRIu64 "\n", fam[f].name, lab, w->term);
				break;
			case 3:
				printf("%s{%s} %.6f\n", fam[f].name, lab,
				       w->held && w->expires_in_us > 0 ? (double)w->expires_in_us / 1e6 : 0.0);
				break;
			case 4:
				printf("%s{%s} %d\n", fam[f].name, lab, w->revoked ? 1 : 0);
				break;
			case 5:
				printf("%s{%s} %d\n", fam[f].name, lab, w->paused_until[0] ? 1 : 0);
				break;
			case 6:
				if (w->has_exit)
					printf("%s{%s} %d\n", fam[f].name, lab, w->last_exit);
				break;
			case 7:
				if (w->finished_at[0])
					printf("%s{%s} %.6f\n", fam[f].name, lab, iso_seconds(w->finished_at));
				break;
			case 8:
				/* The lease's, not a slot's: once, by lease. */
				for (size_t k = 0; k < ok->n && w->slot == 0; k++)
					if (strcmp(ok->v[k].lease, w->name) == 0)
						printf("%s{lease=\"%s\"} %.6f\n", fam[f].name, l,
						       (double)ok->v[k].at_us / 1e6);
				break;
			}
		}
	}
	printf("# HELP leaderrun_status_history_available Whether the run history table could be read (1) or not "
	       "(0).\n# TYPE leaderrun_status_history_available gauge\nleaderrun_status_history_available %d\n",
	       have_history ? 1 : 0);
}

/* The last successful run of each lease, from the history. False (and a
 * warning) when the history cannot be read: a schema-3 database. */
static bool read_successes(const struct options *o, struct db *db, struct successes *ok)
{
	struct history_sql h;
	char lease[LEASE_NAME_MAX + 1], err[512];
	struct db_value c[] = {{.type = DB_STR, .buf = lease, .cap = sizeof(lease)}, {.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	history_sql_render(&h, o->history_table, o->table);
	st = db_exec_each(db, SLOT_A_SUCCESS, h.last_success, NULL, 0, c, 2, collect_success, ok, &r, err, sizeof(err));
	if (st == DB_OK)
		return true;
	log_warn("--status: no last success times: the run history %s cannot be read (%s: %s)%s", o->history_table,
		 dberr_name(st), err,
		 st == DB_NO_TABLE ? "; 'leaderrun --init' creates it"
		 : st == DB_DENIED ? "; a schema-3 database ('leaderrun --init' creates it) or no grant on it "
				     "(sql/grants.sql)"
				   : "");
	return false;
}

static void admin_status(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
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
		if (o->format == FORMAT_PROMETHEUS) {
			struct successes ok = {0};
			bool have = read_successes(o, db, &ok);
			print_prometheus(&r, &ok, have);
			free(ok.v);
		} else if (o->json)
			print_json(&r, server);
		else
			print_table(&r, server);
		out->kind = OUTCOME_INIT_DONE;
	}
	free(r.v);
}

/* --release of one slot: "lease L" or "lease L slot K". Returns -1 on a
 * database error (logged, OUT set). */
static int admin_release_slot(const struct options *o, struct db *db, struct lease_sql *sql, unsigned slot,
			      bool *found, unsigned *slots, bool *any_held, struct outcome *out)
{
	struct lease_info was;
	bool held;
	char err[512], what[LEASE_NAME_MAX + 32];
	enum db_status st = lease_revoke(db, sql, o->lease, slot, o->force, &was, found, &held, err, sizeof(err));

	if (st != DB_OK) {
		log_error("--release: %s: %s%s", dberr_name(st), err,
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
		printf("released lease %s by force, held by %s (term %" PRIu64 "): it is free now, and the old "
		       "command may still run until its holder's next renew, at the latest until %s\n",
		       what, was.holder, was.term, was.expires_at);
	else if (held)
		printf("revoked lease %s, held by %s (term %" PRIu64 "); it stops at its next renew, at the latest by "
		       "%s\n",
		       what, was.holder, was.term, was.expires_at);
	else if (o->slot >= 0 || was.slots == 1)
		printf("lease %s was not held (last holder %s, term %" PRIu64 ")\n", what, or_dash(was.holder),
		       was.term);
	return 0;
}

/* --release: the slot named by --slot, or every slot of the lease. */
static void admin_release(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	unsigned slots = o->slot >= 0 ? (unsigned)o->slot + 1 : 1; /* until the first look says */
	bool found = false, any = false;

	out->kind = OUTCOME_INIT_DONE;
	for (unsigned k = o->slot >= 0 ? (unsigned)o->slot : 0; k < slots; k++) {
		if (admin_release_slot(o, db, sql, k, &found, &slots, &any, out) < 0)
			return;
		if (!found || o->slot >= 0)
			break;
	}
	if (!found) {
		log_error("no lease named '%s' in table %s", o->lease, o->table);
		out->kind = OUTCOME_NO;
	} else if (o->slot >= 0 && (unsigned)o->slot >= slots) {
		log_error("lease %s has %u slot%s (0 to %u); there is no slot %d", o->lease, slots,
			  slots == 1 ? "" : "s", slots - 1, o->slot);
		out->kind = OUTCOME_NO;
	} else if (o->slot < 0 && slots > 1 && !any)
		printf("lease %s: none of its %u slots was held\n", o->lease, slots);
}

static void admin_pause(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
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

static void admin_check(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	bool held;
	char err[512];
	enum db_status st =
	    lease_check(db, sql, o->lease, (unsigned)o->slot, o->holder, o->check_term, &held, err, sizeof(err));

	if (st != DB_OK) {
		log_error("--check: %s: %s", dberr_name(st), err);
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

struct run {
	unsigned slot;
	uint64_t term;
	char holder[LEASE_HOLDER_MAX + 1], host[256], started[32], ended[32], outcome[16];
	bool has_exit, has_signal, has_duration;
	int exit_status, signo;
	int64_t duration_us;
};
struct runs {
	struct run *v;
	size_t n, cap;
	bool oom;
};

static void collect_run(void *ctx, const struct db_value *c)
{
	struct runs *r = ctx;
	struct run *x;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct run *v = realloc(r->v, cap * sizeof(*v));
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

static void print_runs_json(const struct runs *r)
{
	char q[4 * LEASE_HOLDER_MAX + 8];

	fputs("[", stdout);
	for (size_t i = 0; i < r->n; i++) {
		const struct run *x = &r->v[i];
		printf("%s\n  {\"slot\": %u, \"term\": %" PRIu64 ", ", i ? "," : "", x->slot, x->term);
		json_quote(q, sizeof(q), x->holder);
		printf("\"holder\": %s, ", q);
		json_quote(q, sizeof(q), x->host);
		printf("\"host\": %s, ", q);
		print_time("started", x->started);
		print_time("ended", x->ended);
		printf("\"outcome\": \"%s\", ", x->outcome);
		if (x->has_exit)
			printf("\"exit_status\": %d, ", x->exit_status);
		else
			fputs("\"exit_status\": null, ", stdout);
		if (x->has_signal)
			printf("\"signal\": %d, \"signal_name\": \"SIG%s\", ", x->signo,
			       signame_abbrev(x->signo) ? signame_abbrev(x->signo) : "?");
		else
			fputs("\"signal\": null, ", stdout);
		if (x->has_duration)
			printf("\"duration_ms\": %" PRId64 "}", x->duration_us / 1000);
		else
			fputs("\"duration_ms\": null}", stdout);
	}
	fputs(r->n ? "\n]\n" : "]\n", stdout);
}

static void print_runs_table(const struct runs *r)
{
	enum { NCOL = 7 };
	static const char *const head[NCOL] = {"TERM", "OUTCOME", "HOST", "HOLDER", "STARTED", "ENDED", "DURATION"};
	char cell[NCOL][LEASE_HOLDER_MAX + 64];
	int w[NCOL];
	bool slots = false;

	/* A run of a lease with several slots is a slot's term: "2/41". */
	for (size_t i = 0; i < r->n; i++)
		slots = slots || r->v[i].slot > 0;
	table_head(NCOL, w, head, false);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			table_head(NCOL, w, head, true);
		for (size_t i = 0; i < r->n; i++) {
			const struct run *x = &r->v[i];
			if (slots)
				snprintf(cell[0], sizeof(cell[0]), "%u/%" PRIu64, x->slot, x->term);
			else
				snprintf(cell[0], sizeof(cell[0]), "%" PRIu64, x->term);
			if (x->has_signal)
				snprintf(cell[1], sizeof(cell[1]), "%s (SIG%s)", x->outcome,
					 signame_abbrev(x->signo) ? signame_abbrev(x->signo) : "?");
			else if (x->has_exit)
				snprintf(cell[1], sizeof(cell[1]), "%s (%d)", x->outcome, x->exit_status);
			else
				snprintf(cell[1], sizeof(cell[1]), "%s", x->outcome);
			snprintf(cell[2], sizeof(cell[2]), "%s", or_dash(x->host));
			snprintf(cell[3], sizeof(cell[3]), "%s", or_dash(x->holder));
			snprintf(cell[4], sizeof(cell[4]), "%s", or_dash(x->started));
			snprintf(cell[5], sizeof(cell[5]), "%s", or_dash(x->ended));
			if (x->has_duration)
				duration_format(x->duration_us, cell[6], sizeof(cell[6]));
			else
				snprintf(cell[6], sizeof(cell[6]), "-");
			table_row(pass, NCOL, w, cell[0], sizeof(cell[0]));
		}
	}
	if (r->n)
		puts("(times are the database's, UTC)");
}

static void admin_history(const struct options *o, struct db *db, struct outcome *out)
{
	struct history_sql h;
	char b[6][LEASE_HOLDER_MAX + 1], err[512];
	struct db_value p[] = {{.type = DB_STR, .str = o->lease},
			       {.type = DB_U64, .u64 = o->history_limit ? o->history_limit : UINT64_C(1000000000)}};
	struct db_value c[] = {
	    {.type = DB_I64},
	    {.type = DB_U64},
	    {.type = DB_STR, .buf = b[0], .cap = sizeof(b[0])},
	    {.type = DB_STR, .buf = b[1], .cap = sizeof(b[1])},
	    {.type = DB_STR, .buf = b[2], .cap = 32},
	    {.type = DB_STR, .buf = b[3], .cap = 32},
	    {.type = DB_STR, .buf = b[4], .cap = 16},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	};
	struct runs r = {0};
	struct db_result res;
	enum db_status st;

	history_sql_render(&h, o->history_table, o->table);
	st = db_exec_each(db, SLOT_A_LIST, h.list, p, 2, c, 10, collect_run, &r, &res, err, sizeof(err));
	if (st != DB_OK) {
		log_error("--history: %s: %s%s", dberr_name(st), err,
			  st == DB_NO_TABLE ? "; 'leaderrun --init' creates the history table (schema 4)"
			  : st == DB_DENIED ? "; a schema-3 database ('leaderrun --init' creates the history table) "
					      "or no grant on it (sql/grants.sql)"
					    : "");
		out->kind = runmode_outcome_of(st);
	} else if (r.oom) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
	} else {
		if (o->json)
			print_runs_json(&r);
		else if (r.n)
			print_runs_table(&r);
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
	else if (o->mode == MODE_RELEASE)
		admin_release(o, db, &sql, out);
	else if (o->mode == MODE_PAUSE || o->mode == MODE_RESUME)
		admin_pause(o, db, &sql, out);
	else
		admin_check(o, db, &sql, out);
	runmode_close(db);
}
