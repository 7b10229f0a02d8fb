/* --release --to (switchover.h): the standby found and chosen, the
 * holder's term revoked, then the lease watched until a later term shows
 * whether the standby took one (switchover_judge.h). The holder stops (or
 * demotes) at its next renew, and releases; the chosen standby is woken by
 * the release, and every other candidate's acquisition refuses while the
 * choice runs (choose.h). */
#include "switchover.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/duration.h"
#include "base/timing.h"
#include "lease/choose.h"
#include "lease/history_sql.h"
#include "lease/stmt.h"
#include "report/escape.h"
#include "report/log.h"
#include "run/runmode.h"
#include "switchover_judge.h"

/* The lease's slot 0 as it is now. */
struct switchover_look {
	bool found, held;
	uint64_t term;
	char holder[LEASE_HOLDER_MAX + 1];
	int64_t expires_in_us;
};

static void switchover_on_row(void *ctx, const struct lease_row *row)
{
	struct switchover_look *l = ctx;

	if (row->slot != 0)
		return;
	l->found = true;
	l->held = row->held;
	l->term = row->term;
	l->expires_in_us = row->expires_in_us;
	snprintf(l->holder, sizeof(l->holder), "%s", row->holder);
}

static enum db_status switchover_look(struct db *db, struct lease_sql *sql, const char *lease,
				      struct switchover_look *l, struct db_err *err)
{
	const struct lease_req q = {.name = lease, .on_row = switchover_on_row, .ctx = l};
	struct lease_res res = {0};

	memset(l, 0, sizeof(*l));
	return lease_status(db, sql, &q, &res, err);
}

/* "WHAT LEASE to/by HOLDER REST", the row's text escaped. */
static void switchover_say(const char *what, const char *holder, const char *lease, const char *rest)
{
	char h[ESCAPE_TEXT_MAX(LEASE_HOLDER_MAX)], l[ESCAPE_TEXT_MAX(LEASE_NAME_MAX)];

	escape_text(h, sizeof(h), holder);
	escape_text(l, sizeof(l), lease);
	printf("%s %s %s %s%s\n", what, l, strcmp(what, "revoked lease") == 0 ? "held by" : "to", h, rest);
}

/* The standby the name means, or why none: OUT set and false. */
static bool switchover_target(const struct options *o, struct db *db, struct lease_sql *sql, struct choose_target *t,
			      struct outcome *out)
{
	struct db_err err;
	char n[ESCAPE_TEXT_MAX(LEASE_HOLDER_MAX)];
	const struct choose_at at = {db, sql, o->lease};
	enum db_status st = choose_find(&at, o->release_to, t, &err);

	escape_text(n, sizeof(n), o->release_to);
	if (st != DB_OK) {
		log_error("--release --to: %s: %s%s", dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it makes the standbys' table)" : "");
		out->kind = runmode_outcome_of(st);
		return false;
	}
	out->kind = OUTCOME_BUSY;
	if (t->matches == 0)
		log_error("no standby '%s' waits for lease %s (a holder id, or the host of one standby: see "
			  "'leaderrun --status %s'); nothing changed",
			  n, o->lease, o->lease);
	else if (t->matches > 1) {
		log_error("host '%s' has %d standbys of lease %s; name one by its holder id (see 'leaderrun --status "
			  "%s'); nothing changed",
			  n, t->matches, o->lease, o->lease);
		out->kind = OUTCOME_USAGE;
	} else if (!t->healthy)
		log_error("standby %s of lease %s is unhealthy (its --health-cmd fails): it would not take the lease; "
			  "nothing changed",
			  n, o->lease);
	return t->matches == 1 && t->healthy;
}

/* The chosen standby's first term above FROM_TERM by the run history, in
 * *TERM; ABSENT when the history cannot tell (an older schema: no table). */
static enum switchover_history switchover_took(const struct options *o, struct db *db, const char *holder,
					       uint64_t from_term, uint64_t *term)
{
	struct history_sql h;
	struct db_err err;
	const struct db_value p[] = {
	    {.type = DB_STR, .str = o->lease}, {.type = DB_STR, .str = holder}, {.type = DB_U64, .u64 = from_term}};
	struct db_value c = {.type = DB_U64};
	struct db_result r = {0};
	enum db_status st;

	history_sql_render(&h, o->history_table, o->table);
	st = db_exec(db, &(struct db_call){STMT_HISTORY_TOOK, h.took, p, 3, &c, 1, NULL, NULL, &r}, &err);
	if (st != DB_OK) {
		if (st != DB_NO_TABLE)
			log_warn(
			    "--release --to: the run history %s cannot be read (%s: %s): the lease row alone tells",
			    o->history_table, dberr_name(st), err.msg);
		return SWITCHOVER_HISTORY_ABSENT;
	}
	if (!r.have_row || c.is_null)
		return SWITCHOVER_HISTORY_NONE;
	*term = c.u64;
	return SWITCHOVER_HISTORY_FOUND;
}

/* Says what NEXT (neither a wait nor a read) found: TOOK is the
 * standby's term, L the row as the last look read it. */
/* A switch-over under way: to standby T, from the term FROM_TERM, begun
 * at START; its outcome into OUT. */
struct switchover {
	const struct options *o;
	struct db *db;
	struct lease_sql *sql;
	const struct choose_target *t;
	uint64_t from_term;
	int64_t start;
	struct outcome *out;
};

static void switchover_end(const struct switchover *sw, const struct switchover_look *l, enum switchover_next next,
			   uint64_t took)
{
	const struct options *o = sw->o;
	const struct choose_target *t = sw->t;
	uint64_t from_term = sw->from_term;
	int64_t start = sw->start;
	struct outcome *out = sw->out;
	char rest[64], d[32], now[LEASE_HOLDER_MAX + 16];

	snprintf(now, sizeof(now), "%s%s", l->held ? "held by " : "free", l->held ? l->holder : "");
	if (next == SWITCHOVER_HOLDS || next == SWITCHOVER_LET_GO) {
		duration_format(timing_now() - start, d, sizeof(d));
		snprintf(rest, sizeof(rest), " (term %" PRIu64 ") in %s", took, d);
		switchover_say("switched over lease", t->holder, o->lease, rest);
		fflush(stdout);
		if (next == SWITCHOVER_LET_GO)
			log_warn("standby %s has since let go of lease %s: %s, term %" PRIu64, t->holder, o->lease, now,
				 l->term);
		out->kind = OUTCOME_INIT_DONE;
		return;
	}
	if (next == SWITCHOVER_NOT_TAKEN)
		log_error("standby %s did not take lease %s (the run history has no term of its above %" PRIu64
			  "): %s, term %" PRIu64,
			  t->holder, o->lease, from_term, now, l->term);
	else
		log_error("standby %s did not take lease %s in time; the choice ran out, and any candidate may take it "
			  "now",
			  t->holder, o->lease);
	out->kind = OUTCOME_NO;
}

/* Watches the lease until a term above FROM_TERM shows whether T took
 * one, or until UNTIL (CLOCK_BOOTTIME us): one look at the row each
 * step, the history read once, when the row cannot tell. */
static void switchover_wait(const struct switchover *sw, int64_t until)
{
	const struct options *o = sw->o;
	struct db *db = sw->db;
	struct lease_sql *sql = sw->sql;
	const struct choose_target *t = sw->t;
	uint64_t from_term = sw->from_term;
	struct outcome *out = sw->out;
	const struct timespec step = {0, 100 * 1000 * 1000};
	enum switchover_history history = SWITCHOVER_HISTORY_UNREAD;
	uint64_t took = 0;
	struct switchover_look l;
	struct db_err err;

	for (;;) {
		enum db_status st = switchover_look(db, sql, o->lease, &l, &err);
		if (st != DB_OK) {
			log_error("--release --to: %s: %s", dberr_name(st), err.msg);
			out->kind = runmode_outcome_of(st);
			return;
		}
		const struct switchover_row row = {.held = l.held, .term = l.term, .holder = l.holder};
		bool time_up = timing_now() >= until;
		enum switchover_next next = switchover_judge(from_term, t->holder, &row, history, time_up);
		if (next == SWITCHOVER_READ_HISTORY) {
			history = switchover_took(o, db, t->holder, from_term, &took);
			next = switchover_judge(from_term, t->holder, &row, history, time_up);
		}
		if (next != SWITCHOVER_WAIT) {
			switchover_end(sw, &l, next, history == SWITCHOVER_HISTORY_FOUND ? took : l.term);
			return;
		}
		nanosleep(&step, NULL);
	}
}

void switchover_run(const struct options *o, struct db *db, struct lease_sql *sql, struct outcome *out)
{
	struct choose_target t;
	struct switchover_look before;
	struct db_err err;
	bool chosen = false;
	enum db_status st;
	const struct lease_req q = {.name = o->lease, .slot = 0};
	struct lease_res res = {0};

	if (!switchover_target(o, db, sql, &t, out))
		return;
	if ((st = switchover_look(db, sql, o->lease, &before, &err)) != DB_OK ||
	    (st = choose_set(&(struct choose_at){db, sql, o->lease}, t.holder, SWITCHOVER_WINDOW_US, &chosen, &err)) !=
		DB_OK) {
		log_error("--release --to: %s: %s%s", dberr_name(st), err.msg,
			  st == DB_NO_TABLE ? "; run 'leaderrun --init' (it upgrades the standbys' table)" : "");
		out->kind = runmode_outcome_of(st);
		return;
	}
	if (!chosen) {
		log_error("standby %s stopped waiting for lease %s; nothing changed", t.holder, o->lease);
		out->kind = OUTCOME_BUSY;
		return;
	}
	/* The holder stops at its next renew, then releases; a lease not
	 * held is the chosen one's at its next look. */
	if ((st = lease_revoke(db, sql, &q, &res, &err)) != DB_OK) {
		log_error("--release --to: %s: %s", dberr_name(st), err.msg);
		out->kind = runmode_outcome_of(st);
		return;
	}
	if (res.held) {
		char rest[64];
		snprintf(rest, sizeof(rest), " (term %" PRIu64 "): it stops at its next renew", res.info.term);
		switchover_say("revoked lease", res.info.holder, o->lease, rest);
	}
	fflush(stdout);
	const struct switchover sw = {o, db, sql, &t, before.term, timing_now(), out};
	switchover_wait(&sw, sw.start + (before.expires_in_us > 0 ? before.expires_in_us : 0) + SWITCHOVER_WINDOW_US +
				 USEC_PER_SEC);
}
