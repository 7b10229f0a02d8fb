#include "lease.h"

#include <stdio.h>
#include <string.h>

#include "timing.h"

/* Statement slots on a connection (see db_exec). */
enum {
	SLOT_ACQUIRE,
	SLOT_RENEW,
	SLOT_RELEASE,
	SLOT_READ,
	SLOT_INSERT,
	SLOT_STATUS,
	SLOT_FORCE,
	SLOT_CHECK,
	SLOT_COLUMNS,
	SLOT_HINT_TAKE,
	SLOT_HINT_WAIT,
	SLOT_HINT_DROP,
	SLOT_ACQUIRE_SLOT,
	SLOT_RENEW_WHY,
	SLOT_REVOKE,
	SLOT_PAUSE,
	SLOT_RESUME,
};
/* Other statements sent on a connection that also runs these take slots
 * from 20 on: the run history's (history.c, on the lease's connection after
 * the release) and --history's and --status's (admin.c). */
_Static_assert(SLOT_RESUME < 20, "lease.c's statement slots stay below 20");

/* Reads the row NAME into INFO; PERIOD_US > 0 also asks the server for the
 * --once-per slot its clock is in now (INFO->slot_us). */
static enum lease_outcome lease_read(struct db *db, const struct lease_sql *sql, const char *name, int64_t period_us,
				     struct lease_info *info, bool *exists, enum db_status *st, char *err,
				     size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = period_us / 2},
	    {.type = DB_I64, .i64 = period_us},
	    {.type = DB_I64, .i64 = period_us},
	    {.type = DB_STR, .str = name},
	};
	struct db_value c[] = {
	    {.type = DB_STR, .buf = info->holder, .cap = sizeof(info->holder)},
	    {.type = DB_U64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = info->expires_at, .cap = sizeof(info->expires_at)},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = info->paused_until, .cap = sizeof(info->paused_until)},
	    {.type = DB_STR, .buf = info->paused_by, .cap = sizeof(info->paused_by)},
	    {.type = DB_I64},
	    {.type = DB_U64},
	    {.type = DB_I64},
	};
	struct db_result r;

	*st = db_exec(db, SLOT_READ, sql->read, p, 4, c, 11, &r, err, errlen);
	if (*st != DB_OK)
		return LEASE_ERROR;
	*exists = r.have_row;
	if (!r.have_row)
		return LEASE_OK;
	info->term = c[1].u64;
	info->expires_in_us = c[2].is_null ? 0 : c[2].i64;
	if (c[3].i64 != 0) {
		snprintf(err, errlen,
			 "the server is read-only (@@read_only=1): a replica or demoted primary cannot grant a "
			 "lease; point the DSN at the primary");
		*st = DB_READ_ONLY;
		return LEASE_ERROR;
	}
	info->paused_in_us = c[5].is_null ? 0 : c[5].i64;
	info->last_slot_us = c[8].is_null ? -1 : c[8].i64;
	info->slot_term = c[9].is_null ? 0 : c[9].u64;
	if (period_us > 0 && !c[10].is_null && info->slot_us == 0)
		info->slot_us = c[10].i64;
	return LEASE_OK;
}

/* Why the row as read keeps a contender out. A used slot wins: it ends a
 * wait, where a pause or a holder only prolongs it. */
static enum lease_busy lease_why(const struct lease_info *info, int64_t period_us)
{
	if (period_us > 0 && info->last_slot_us >= 0 && info->last_slot_us >= info->slot_us)
		return BUSY_SLOT_USED;
	if (info->paused_in_us > 0)
		return BUSY_PAUSED;
	return BUSY_HELD;
}

static enum lease_outcome lease_try(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				    int64_t ttl_us, int64_t period_us, struct lease_info *info, int64_t *sent_at,
				    enum db_status *st, char *err, size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = holder},	    {.type = DB_I64, .i64 = ttl_us},
	    {.type = DB_I64, .i64 = info->slot_us}, {.type = DB_STR, .str = name},
	    {.type = DB_I64, .i64 = info->slot_us},
	};
	struct db_value plain[] = {p[0], p[1], p[3]};
	struct db_result r;
	enum lease_outcome o;

	*sent_at = timing_now();
	if (period_us > 0)
		*st = db_exec(db, SLOT_ACQUIRE_SLOT, sql->acquire_slot, p, 5, NULL, 0, &r, err, errlen);
	else
		*st = db_exec(db, SLOT_ACQUIRE, sql->acquire, plain, 3, NULL, 0, &r, err, errlen);
	o = lease_outcome_of(*st, r.affected, 1);
	if (o == LEASE_OK) {
		/* The term comes only from the statement that matched exactly one
		 * row: after 0 rows LAST_INSERT_ID() may hold a stranger's term. */
		if (r.insert_id == 0) {
			snprintf(err, errlen, "the server returned no term for the acquire");
			*st = DB_NO_TABLE;
			return LEASE_ERROR;
		}
		info->term = r.insert_id;
		snprintf(info->holder, sizeof(info->holder), "%s", holder);
		info->expires_in_us = ttl_us;
	}
	return o;
}

/* Reads the row, creating it on first use. */
static enum lease_outcome lease_look(struct db *db, const struct lease_sql *sql, const char *name, int64_t period_us,
				     struct lease_info *info, enum db_status *st, char *err, size_t errlen)
{
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_result r;
	bool exists;

	if (lease_read(db, sql, name, period_us, info, &exists, st, err, errlen) != LEASE_OK)
		return LEASE_ERROR;
	if (exists)
		return LEASE_OK;
	*st = db_exec(db, SLOT_INSERT, sql->insert, p, 1, NULL, 0, &r, err, errlen);
	/* On Galera two first uses through different nodes both insert the
	 * row, and the one certified second fails with a deadlock: the row is
	 * there all the same, and the compare-and-set decides as always. */
	if (*st != DB_OK && *st != DB_CONFLICT)
		return LEASE_ERROR;
	if (lease_read(db, sql, name, period_us, info, &exists, st, err, errlen) != LEASE_OK)
		return LEASE_ERROR;
	if (!exists) {
		snprintf(err, errlen, "the lease row was not there after its insert");
		*st = DB_UNAVAILABLE;
		return LEASE_ERROR;
	}
	return LEASE_OK;
}

/* Is the row, as read, free for this contender now? */
static bool lease_free(const struct lease_info *info, int64_t period_us)
{
	return lease_why(info, period_us) == BUSY_HELD && info->expires_in_us <= 0;
}

enum lease_outcome lease_acquire(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				 int64_t ttl_us, int64_t period_us, bool look_first, int64_t *slot_us,
				 struct lease_info *info, int64_t *sent_at, enum db_status *st, char *err,
				 size_t errlen)
{
	enum lease_outcome o;

	memset(info, 0, sizeof(*info));
	info->last_slot_us = -1;
	info->slot_us = period_us > 0 ? *slot_us : 0;
	/* --once-per: the first look fixes the slot, by the server's clock,
	 * and a slot already taken ends the attempt without a write. A waiter
	 * that was not woken looks first too: while the lease is held, one
	 * statement a look. */
	if (look_first || (period_us > 0 && info->slot_us == 0)) {
		if (lease_look(db, sql, name, period_us, info, st, err, errlen) != LEASE_OK)
			return LEASE_ERROR;
		if (period_us > 0 && info->slot_us == 0) {
			snprintf(err, errlen, "the server did not say which --once-per slot it is in");
			*st = DB_UNAVAILABLE;
			return LEASE_ERROR;
		}
		if (period_us > 0)
			*slot_us = info->slot_us;
		info->why = lease_why(info, period_us);
		/* Held, paused or its slot used: the compare-and-set could only
		 * fail. */
		if (!lease_free(info, period_us))
			return LEASE_BUSY;
	}
	o = lease_try(db, sql, name, holder, ttl_us, period_us, info, sent_at, st, err, errlen);
	if (o != LEASE_BUSY || *st != DB_OK)
		return o;
	/* Busy or no row at all: look, so that a follower knows whom it waits
	 * for, until when and why, and so that a first use creates the row. */
	if (lease_look(db, sql, name, period_us, info, st, err, errlen) != LEASE_OK)
		return LEASE_ERROR;
	info->why = lease_why(info, period_us);
	if (!lease_free(info, period_us))
		return LEASE_BUSY;
	/* Free now (a new row, or one that expired in between): once more. */
	o = lease_try(db, sql, name, holder, ttl_us, period_us, info, sent_at, st, err, errlen);
	if (o == LEASE_BUSY && *st == DB_OK) {
		if (lease_look(db, sql, name, period_us, info, st, err, errlen) != LEASE_OK)
			return LEASE_ERROR;
		info->why = lease_why(info, period_us);
	}
	return o;
}

enum lease_outcome lease_renew(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
			       uint64_t term, int64_t ttl_us, int64_t *sent_at, enum db_status *st, char *err,
			       size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = ttl_us},
	    {.type = DB_STR, .str = name},
	    {.type = DB_STR, .str = holder},
	    {.type = DB_U64, .u64 = term},
	};
	struct db_value c[] = {{.type = DB_I64}, {.type = DB_I64}};
	struct db_result r;
	enum lease_outcome o;

	*sent_at = timing_now();
	*st = db_exec(db, SLOT_RENEW, sql->renew, p, 4, NULL, 0, &r, err, errlen);
	o = lease_outcome_of(*st, r.affected, 0);
	if (o != LEASE_LOST)
		return o;
	/* No row matched. Revoked by --release: still ours until we release
	 * it, so the command is stopped the normal way. A server that has just
	 * turned read-only (a primary demoted for a switchover) proves nothing
	 * about the row: a failed attempt, and the next goes to another host;
	 * only a writable server that holds the row can extend it, and until
	 * one does, the deadline runs as for any failure. Anything else: lost.
	 * A failed question leaves the answer at lost, the safe side. */
	if (db_exec(db, SLOT_RENEW_WHY, sql->renew_why, p + 1, 3, c, 2, &r, err, errlen) != DB_OK || !r.have_row)
		return LEASE_LOST;
	if (c[0].i64 != 0) {
		snprintf(err, errlen, "the server turned read-only (a replica or demoted primary)");
		*st = DB_READ_ONLY;
		return LEASE_ERROR;
	}
	return c[1].i64 == 1 ? LEASE_REVOKED : LEASE_LOST;
}

enum lease_outcome lease_release(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				 uint64_t term, int64_t min_hold_us, int exit_status, enum db_status *st, char *err,
				 size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = min_hold_us}, {.type = DB_I64, .i64 = exit_status, .is_null = exit_status < 0},
	    {.type = DB_STR, .str = name},	  {.type = DB_STR, .str = holder},
	    {.type = DB_U64, .u64 = term},
	};
	struct db_result r;

	*st = db_exec(db, SLOT_RELEASE, sql->release, p, 5, NULL, 0, &r, err, errlen);
	return lease_outcome_of(*st, r.affected, 0);
}

struct status_ctx {
	void (*on_row)(void *ctx, const struct lease_row *row);
	void *ctx;
};

static void status_row(void *arg, const struct db_value *c)
{
	struct status_ctx *sc = arg;
	struct lease_row row;

	memset(&row, 0, sizeof(row));
	snprintf(row.name, sizeof(row.name), "%s", c[0].buf);
	snprintf(row.holder, sizeof(row.holder), "%s", c[1].buf);
	row.term = c[2].u64;
	row.held = c[3].i64 != 0;
	row.expires_in_us = c[4].is_null ? 0 : c[4].i64;
	snprintf(row.expires_at, sizeof(row.expires_at), "%s", c[5].buf);
	snprintf(row.renewed_at, sizeof(row.renewed_at), "%s", c[6].buf);
	snprintf(row.acquired_at, sizeof(row.acquired_at), "%s", c[7].buf);
	row.has_exit = !c[8].is_null;
	row.last_exit = (int)c[8].i64;
	snprintf(row.finished_at, sizeof(row.finished_at), "%s", c[9].buf);
	snprintf(row.now, sizeof(row.now), "%s", c[10].buf);
	row.revoked = c[11].i64 == 1;
	snprintf(row.paused_until, sizeof(row.paused_until), "%s", c[12].buf);
	snprintf(row.paused_by, sizeof(row.paused_by), "%s", c[13].buf);
	snprintf(row.last_slot, sizeof(row.last_slot), "%s", c[14].buf);
	sc->on_row(sc->ctx, &row);
}

enum db_status lease_status(struct db *db, const struct lease_sql *sql, const char *name,
			    void (*on_row)(void *ctx, const struct lease_row *row), void *ctx, char *err, size_t errlen)
{
	char bufs[10][LEASE_HOLDER_MAX + 1];
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_value c[] = {
	    {.type = DB_STR, .buf = bufs[0], .cap = sizeof(bufs[0])},
	    {.type = DB_STR, .buf = bufs[1], .cap = sizeof(bufs[1])},
	    {.type = DB_U64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = bufs[2], .cap = 32},
	    {.type = DB_STR, .buf = bufs[3], .cap = 32},
	    {.type = DB_STR, .buf = bufs[4], .cap = 32},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = bufs[5], .cap = 32},
	    {.type = DB_STR, .buf = bufs[6], .cap = 32},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = bufs[7], .cap = 32},
	    {.type = DB_STR, .buf = bufs[8], .cap = sizeof(bufs[8])},
	    {.type = DB_STR, .buf = bufs[9], .cap = 32},
	};
	struct status_ctx sc = {on_row, ctx};
	struct db_result r;

	return name ? db_exec_each(db, SLOT_STATUS, sql->status_one, p, 1, c, 15, status_row, &sc, &r, err, errlen)
		    : db_exec_each(db, SLOT_STATUS, sql->status, NULL, 0, c, 15, status_row, &sc, &r, err, errlen);
}

enum db_status lease_revoke(struct db *db, const struct lease_sql *sql, const char *name, bool force,
			    struct lease_info *was, bool *found, bool *was_held, char *err, size_t errlen)
{
	struct db_value p[] = {{.type = DB_STR, .str = name}, {.type = DB_U64}};
	struct db_result r;
	enum db_status st;

	memset(was, 0, sizeof(*was));
	*found = *was_held = false;
	if (lease_read(db, sql, name, 0, was, found, &st, err, errlen) != LEASE_OK)
		return st;
	if (!*found || was->expires_in_us <= 0)
		return DB_OK;
	/* Compare-and-set on the term just read: a newer holder that took
	 * over in between is neither revoked nor freed by accident. */
	p[1].u64 = was->term;
	if (force)
		st = db_exec(db, SLOT_FORCE, sql->force_release, p, 2, NULL, 0, &r, err, errlen);
	else
		st = db_exec(db, SLOT_REVOKE, sql->revoke, p, 2, NULL, 0, &r, err, errlen);
	*was_held = st == DB_OK && r.affected == 1;
	return st;
}

enum db_status lease_pause(struct db *db, const struct lease_sql *sql, const char *name, int64_t for_us, const char *by,
			   struct lease_info *info, char *err, size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = for_us},
	    {.type = DB_I64, .i64 = for_us < 0 ? 0 : for_us},
	    {.type = DB_STR, .str = by},
	    {.type = DB_STR, .str = name},
	};
	struct db_result r;
	enum db_status st;

	memset(info, 0, sizeof(*info));
	if (lease_look(db, sql, name, 0, info, &st, err, errlen) != LEASE_OK)
		return st;
	st = db_exec(db, SLOT_PAUSE, sql->pause, p, 4, NULL, 0, &r, err, errlen);
	if (st != DB_OK)
		return st;
	bool exists;
	if (lease_read(db, sql, name, 0, info, &exists, &st, err, errlen) != LEASE_OK)
		return st;
	return DB_OK;
}

enum db_status lease_resume(struct db *db, const struct lease_sql *sql, const char *name, bool *found,
			    struct lease_info *was, char *err, size_t errlen)
{
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_result r;
	enum db_status st;

	memset(was, 0, sizeof(*was));
	if (lease_read(db, sql, name, 0, was, found, &st, err, errlen) != LEASE_OK)
		return st;
	if (!*found)
		return DB_OK;
	return db_exec(db, SLOT_RESUME, sql->resume, p, 1, NULL, 0, &r, err, errlen);
}

enum db_status lease_check(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
			   uint64_t term, bool *held, char *err, size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = name},
	    {.type = DB_STR, .str = holder},
	    {.type = DB_U64, .u64 = term},
	};
	struct db_value c[] = {{.type = DB_I64}};
	struct db_result r;
	enum db_status st = db_exec(db, SLOT_CHECK, sql->check, p, 3, c, 1, &r, err, errlen);

	*held = st == DB_OK && r.have_row && c[0].i64 == 1;
	return st;
}

enum db_status lease_create_table(struct db *db, const struct lease_sql *sql, const char *table, int *from, char *err,
				  size_t errlen)
{
	const char *dot = strchr(table, '.');
	char schema[65] = "";
	struct db_value p[] = {{.type = DB_STR, .str = NULL}, {.type = DB_STR, .str = dot ? dot + 1 : table}};
	struct db_value c[] = {{.type = DB_I64}, {.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	*from = LEASE_ROWS_SCHEMA;
	st = db_query(db, sql->create, err, errlen);
	if (st != DB_OK)
		return st;
	if (dot) {
		snprintf(schema, sizeof(schema), "%.*s", (int)(dot - table), table);
		p[0].str = schema;
	}
	/* A table from an older leaderrun lacks some columns: add them in
	 * place, one schema step at a time, as sql/upgrade-*.sql do. */
	st = db_exec(db, SLOT_COLUMNS, sql->columns, p, 2, c, 2, &r, err, errlen);
	if (st != DB_OK || !r.have_row)
		return st;
	*from = c[1].i64 > 0 ? 3 : c[0].i64 > 0 ? 2 : 1;
	for (int v = *from; v < LEASE_ROWS_SCHEMA && st == DB_OK; v++)
		st = db_query(db, sql->upgrade[v - 1], err, errlen);
	return st;
}

/* The hint's statements go as text: the lock name is leaderrun's own hex
 * ("leaderrun:" and 16 hex digits, see lease_hint_name), never user data,
 * and a prepare would cost a round trip each. */
static enum db_status hint_query(struct db *db, const char *q, bool *one, char *err, size_t errlen)
{
	int64_t v;
	enum db_status st = db_query_int(db, q, &v, err, errlen);

	*one = st == DB_OK && v == 1;
	return st;
}

enum db_status lease_hint_take(struct db *db, const struct lease_sql *sql, uint64_t term, bool *got, char *err,
			       size_t errlen)
{
	char q[160];
	int64_t v;
	enum db_status st;

	/* Both: the hint, and the term's mark, which says to followers that
	 * the hint's holder is this term's leader (the mark is never taken
	 * by anyone else: terms are unique). */
	snprintf(q, sizeof(q), "SELECT GET_LOCK('%s:%llu', 0) + 2 * GET_LOCK('%s', 0)", sql->hint_name,
		 (unsigned long long)term, sql->hint_name);
	st = db_query_int(db, q, &v, err, errlen);
	*got = st == DB_OK && v == 3;
	return st;
}

enum db_status lease_hint_wait(struct db *db, const struct lease_sql *sql, uint64_t term, int64_t timeout_us,
			       enum lease_hint *how, char *err, size_t errlen)
{
	char q[512];
	int64_t v = 0, ms = timeout_us <= 0 ? 0 : (timeout_us + 999) / 1000;
	enum db_status st;

	/* Only a hint that TERM's leader holds is worth blocking on: it lets
	 * go when that leader does, or dies with it. A free lock is not
	 * taken (a leader that could not take the hint takes it at its next
	 * renew, and a follower that grabbed it would wake for nothing); one
	 * held by somebody else (a follower woken by a dead leader, or a
	 * leader frozen out of its term) would not wake us when TERM's leader
	 * lets go.
	 * No table in this statement: a follower blocks here for up to a ttl,
	 * and a statement that kept the lease table open that long would hold
	 * its metadata lock, so that an ALTER TABLE queued behind it would
	 * stall the leader's renews (measured on MariaDB 10.11). The timeout
	 * has millisecond steps (MariaDB takes fractions; MySQL rounds). */
	snprintf(q, sizeof(q),
		 "SELECT CASE WHEN IS_USED_LOCK('%s') IS NULL THEN 2 "
		 "WHEN NOT IS_USED_LOCK('%s') <=> IS_USED_LOCK('%s:%llu') THEN 3 "
		 "ELSE GET_LOCK('%s', %lld.%03lld) + 10 * (IS_USED_LOCK('%s:%llu') IS NULL) END",
		 sql->hint_name, sql->hint_name, sql->hint_name, (unsigned long long)term, sql->hint_name,
		 (long long)(ms / 1000), (long long)(ms % 1000), sql->hint_name, (unsigned long long)term);
	st = db_query_int(db, q, &v, err, errlen);
	/* Woken, and the mark gone too: the leader's session ended (it let go,
	 * or died with the lease unreleased). Woken with the mark still held:
	 * somebody else handed the lock on, and the leader lives. */
	*how = v == 11	? HINT_WOKEN
	       : v == 1 ? HINT_PASSED
	       : v == 2 ? HINT_UNHELD
	       : v == 3 ? HINT_NOT_LEADERS
			: HINT_TIMED_OUT;
	return st;
}

enum db_status lease_hint_drop(struct db *db, const struct lease_sql *sql, char *err, size_t errlen)
{
	bool released;

	/* All of this session's named locks: a follower woken by the hint took
	 * it once more when it won the row, and named locks count. */
	(void)sql;
	return hint_query(db, "SELECT RELEASE_ALL_LOCKS() > 0", &released, err, errlen);
}
