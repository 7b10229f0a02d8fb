#include "lease.h"

#include <stdio.h>
#include <string.h>

#include "timing.h"

/* Statement slots on a connection (see db_exec). */
enum { SLOT_ACQUIRE, SLOT_RENEW, SLOT_RELEASE, SLOT_READ, SLOT_INSERT };

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

static enum lease_outcome lease_try(struct db *db, const struct lease_sql *sql, const char *name,
				    const char *holder, int64_t ttl_us, struct lease_info *info, int64_t *sent_at,
				    enum db_status *st, char *err, size_t errlen)
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
	if (*st != DB_OK)
		return LEASE_ERROR;
	o = lease_try(db, sql, name, holder, ttl_us, info, sent_at, st, err, errlen);
	if (o == LEASE_BUSY && *st == DB_OK &&
	    lease_read(db, sql, name, info, &exists, st, err, errlen) != LEASE_OK)
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

	*sent_at = timing_now();
	*st = db_exec(db, SLOT_RENEW, sql->renew, p, 4, NULL, 0, &r, err, errlen);
	return lease_outcome_of(*st, r.affected, 0);
}

enum lease_outcome lease_release(struct db *db, const struct lease_sql *sql, const char *name, const char *holder,
				 uint64_t term, enum db_status *st, char *err, size_t errlen)
{
	struct db_value p[] = {
		{.type = DB_STR, .str = name},
		{.type = DB_STR, .str = holder},
		{.type = DB_U64, .u64 = term},
	};
	struct db_result r;

	*st = db_exec(db, SLOT_RELEASE, sql->release, p, 3, NULL, 0, &r, err, errlen);
	return lease_outcome_of(*st, r.affected, 0);
}

enum db_status lease_create_table(struct db *db, const struct lease_sql *sql, char *err, size_t errlen)
{
	return db_query(db, sql->create, err, errlen);
}
