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
	SLOT_HINT_DROP
};

static enum lease_outcome lease_read(struct db *db, const struct lease_sql *sql, const char *name,
				     struct lease_info *info, bool *exists, enum db_status *st, char *err,
				     size_t errlen)
{
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_value c[] = {
	    {.type = DB_STR, .buf = info->holder, .cap = sizeof(info->holder)},
	    {.type = DB_U64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	};
	struct db_result r;

	*st = db_exec(db, SLOT_READ, sql->read, p, 1, c, 4, &r, err, errlen);
	if (*st != DB_OK)
		return LEASE_ERROR;
	*exists = r.have_row;
	if (r.have_row) {
		info->term = c[1].u64;
		info->expires_in_us = c[2].is_null ? 0 : c[2].i64;
		if (c[3].i64 != 0) {
			snprintf(err, errlen,
				 "the server is read-only (@@read_only=1): a replica or demoted primary cannot grant a "
				 "lease; point the DSN at the primary");
			*st = DB_READ_ONLY;
			return LEASE_ERROR;
		}
	}
	return LEASE_OK;
}

static enum lease_outcome lease_try(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				    int64_t ttl_us, struct lease_info *info, int64_t *sent_at, enum db_status *st,
				    char *err, size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = holder},
	    {.type = DB_I64, .i64 = ttl_us},
	    {.type = DB_STR, .str = name},
	};
	struct db_result r;
	enum lease_outcome o;

	*sent_at = timing_now();
	*st = db_exec(db, SLOT_ACQUIRE, sql->acquire, p, 3, NULL, 0, &r, err, errlen);
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

enum lease_outcome lease_acquire(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				 int64_t ttl_us, struct lease_info *info, int64_t *sent_at, enum db_status *st,
				 char *err, size_t errlen)
{
	enum lease_outcome o;
	bool exists;

	memset(info, 0, sizeof(*info));
	o = lease_try(db, sql, name, holder, ttl_us, info, sent_at, st, err, errlen);
	if (o != LEASE_BUSY || *st != DB_OK)
		return o;
	/* Busy or no row at all: look, so that a follower knows whom it waits
	 * for and until when, and so that a first use creates the row. */
	if (lease_read(db, sql, name, info, &exists, st, err, errlen) != LEASE_OK)
		return LEASE_ERROR;
	if (exists)
		return LEASE_BUSY;

	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_result r;
	*st = db_exec(db, SLOT_INSERT, sql->insert, p, 1, NULL, 0, &r, err, errlen);
	/* On Galera two first uses through different nodes both insert the
	 * row, and the one certified second fails with a deadlock: the row is
	 * there all the same, and the compare-and-set decides as always. */
	if (*st != DB_OK && *st != DB_CONFLICT)
		return LEASE_ERROR;
	o = lease_try(db, sql, name, holder, ttl_us, info, sent_at, st, err, errlen);
	if (o == LEASE_BUSY && *st == DB_OK && lease_read(db, sql, name, info, &exists, st, err, errlen) != LEASE_OK)
		return LEASE_ERROR;
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
	struct db_result r;

	enum lease_outcome o;
	int64_t read_only;

	*sent_at = timing_now();
	*st = db_exec(db, SLOT_RENEW, sql->renew, p, 4, NULL, 0, &r, err, errlen);
	o = lease_outcome_of(*st, r.affected, 0);
	/* No row matched: lost, unless this server has just turned read-only
	 * (a primary demoted for a switchover), where the row proves nothing.
	 * Then it is a failed attempt, and the next goes to another host: only
	 * a writable server that holds the row can extend it, and until one
	 * does, the deadline runs as for any failure. */
	if (o == LEASE_LOST && db_query_int(db, "SELECT @@global.read_only", &read_only, err, errlen) == DB_OK &&
	    read_only != 0) {
		snprintf(err, errlen, "the server turned read-only (a replica or demoted primary)");
		*st = DB_READ_ONLY;
		return LEASE_ERROR;
	}
	return o;
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
	sc->on_row(sc->ctx, &row);
}

enum db_status lease_status(struct db *db, const struct lease_sql *sql, const char *name,
			    void (*on_row)(void *ctx, const struct lease_row *row), void *ctx, char *err, size_t errlen)
{
	char bufs[7][LEASE_HOLDER_MAX + 1];
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
	};
	struct status_ctx sc = {on_row, ctx};
	struct db_result r;

	return name ? db_exec_each(db, SLOT_STATUS, sql->status_one, p, 1, c, 11, status_row, &sc, &r, err, errlen)
		    : db_exec_each(db, SLOT_STATUS, sql->status, NULL, 0, c, 11, status_row, &sc, &r, err, errlen);
}

enum db_status lease_force_release(struct db *db, const struct lease_sql *sql, const char *name, struct lease_info *was,
				   bool *found, bool *was_held, char *err, size_t errlen)
{
	struct db_value p[] = {{.type = DB_STR, .str = name}, {.type = DB_U64}};
	struct db_result r;
	enum db_status st;

	memset(was, 0, sizeof(*was));
	*found = *was_held = false;
	if (lease_read(db, sql, name, was, found, &st, err, errlen) != LEASE_OK)
		return st;
	if (!*found || was->expires_in_us <= 0)
		return DB_OK;
	/* Compare-and-set on the term just read: a newer holder that took
	 * over in between is not released by accident. */
	p[1].u64 = was->term;
	st = db_exec(db, SLOT_FORCE, sql->force_release, p, 2, NULL, 0, &r, err, errlen);
	*was_held = st == DB_OK && r.affected == 1;
	return st;
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

enum db_status lease_create_table(struct db *db, const struct lease_sql *sql, const char *table, bool *upgraded,
				  char *err, size_t errlen)
{
	const char *dot = strchr(table, '.');
	char schema[65] = "";
	struct db_value p[] = {{.type = DB_STR, .str = NULL}, {.type = DB_STR, .str = dot ? dot + 1 : table}};
	struct db_value c[] = {{.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	*upgraded = false;
	st = db_query(db, sql->create, err, errlen);
	if (st != DB_OK)
		return st;
	if (dot) {
		snprintf(schema, sizeof(schema), "%.*s", (int)(dot - table), table);
		p[0].str = schema;
	}
	/* A table from an older leaderrun lacks the columns of --min-hold's
	 * bookkeeping; add them in place. */
	st = db_exec(db, SLOT_COLUMNS, sql->columns, p, 2, c, 1, &r, err, errlen);
	if (st != DB_OK || (r.have_row && c[0].i64 == 2))
		return st;
	st = db_query(db, sql->upgrade, err, errlen);
	*upgraded = st == DB_OK;
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

enum db_status lease_hint_take(struct db *db, const struct lease_sql *sql, bool *got, char *err, size_t errlen)
{
	char q[96];

	snprintf(q, sizeof(q), "SELECT GET_LOCK('%s', 0)", sql->hint_name);
	return hint_query(db, q, got, err, errlen);
}

enum db_status lease_hint_wait(struct db *db, const struct lease_sql *sql, unsigned timeout_s, enum lease_hint *how,
			       char *err, size_t errlen)
{
	char q[160];
	int64_t v;
	enum db_status st;

	/* A free lock is not taken: a leader that could not take the hint
	 * (a follower held it at that moment) takes it at its next renew, and
	 * a follower that grabbed it meanwhile would wake for nothing. */
	snprintf(q, sizeof(q), "SELECT IF(IS_USED_LOCK('%s') IS NULL, 2, GET_LOCK('%s', %u))", sql->hint_name,
		 sql->hint_name, timeout_s);
	st = db_query_int(db, q, &v, err, errlen);
	*how = v == 1 ? HINT_WOKEN : v == 2 ? HINT_UNHELD : HINT_TIMED_OUT;
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
