/* The fence (schema 6): moved to each new term before its command starts,
 * so that the database itself refuses a stale job's transaction (the
 * procedures are in sql/leaderrun.sql; the guarantee in
 * leaderrun-safety(7), FENCED WRITES).
 *
 * A transaction that fenced holds the fence's row until it ends, so the
 * move waits for it: on one server as a lock wait (1 s, the session's
 * innodb_lock_wait_timeout); on Galera and Group Replication the
 * certification fails whichever of the two commits second. A transaction
 * still open after the wait belongs to a command that is dead or frozen,
 * since its term had expired before this one began: its session is ended
 * (leaderrun_fence_end, with its definer's rights) and the move tried
 * again. */
#include <stdio.h>
#include <string.h>

#include "base/duration.h"
#include "base/timing.h"
#include "lease.h"
#include "stmt.h"

/* The lock wait that one attempt of the move may spend (the session's
 * innodb_lock_wait_timeout, db.c), with room for the round trips. */
#define FENCE_ATTEMPT_US (1500 * USEC_PER_MSEC)

/* One attempt: forward only, the row made on first use. */
static enum lease_fence fence_try(struct db *db, const struct lease_sql *sql, const char *name, unsigned slot,
				  uint64_t term, enum db_status *st, char *err, size_t errlen)
{
	struct db_value move[] = {{.type = DB_U64, .u64 = term},
				  {.type = DB_STR, .str = name},
				  {.type = DB_I64, .i64 = slot},
				  {.type = DB_U64, .u64 = term}};
	struct db_result r;

	*st = db_exec(db, STMT_FENCE_MOVE, sql->fence_move, move, 4, NULL, 0, &r, err, errlen);
	if (*st == DB_OK && r.affected == 0)
		*st = db_exec(db, STMT_FENCE_INSERT, sql->fence_insert, move + 1, 3, NULL, 0, &r, err, errlen);
	if (*st == DB_OK)
		return r.affected == 1 ? FENCE_MOVED : FENCE_NEWER;
	/* No such table (an older schema) or no grant on it: the lease runs
	 * as before, and the caller says the fence is off, unless the lease
	 * table's own warning (lease_sql_older) names it already. */
	if (*st == DB_NO_TABLE || *st == DB_DENIED)
		return sql->older ? FENCE_OFF_OLDER : FENCE_UNAVAILABLE;
	return FENCE_FAILED;
}

/* A lock wait ran out: ends the session whose transaction fenced with an
 * older term. Returns its connection id, or 0 with ERR. */
static uint64_t fence_end(struct db *db, const struct lease_sql *sql, const char *name, unsigned slot, uint64_t term,
			  char *err, size_t errlen)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = name}, {.type = DB_I64, .i64 = slot}, {.type = DB_U64, .u64 = term}};
	struct db_value c[] = {{.type = DB_U64}};
	struct db_result r;

	if (db_exec(db, STMT_FENCE_END, sql->fence_end, p, 3, NULL, 0, &r, err, errlen) != DB_OK)
		return 0;
	if (db_exec(db, STMT_FENCE_ENDED, sql->fence_ended, NULL, 0, c, 1, &r, err, errlen) != DB_OK)
		return 0;
	if (!r.have_row || c[0].is_null) {
		snprintf(err, errlen, "no session of an older term found on the fence");
		return 0;
	}
	return c[0].u64;
}

enum lease_fence lease_fence_move(struct db *db, const struct lease_sql *sql, const char *name, unsigned slot,
				  uint64_t term, int64_t give_up, uint64_t *ended, enum db_status *st, char *err,
				  size_t errlen)
{
	char why[256] = "";

	*ended = 0;
	for (;;) {
		enum lease_fence f = fence_try(db, sql, name, slot, term, st, err, errlen);
		bool lock_wait = *st == DB_CONFLICT && strstr(err, "(error 1205)");

		/* A certification conflict (Galera 1213, Group Replication
		 * 3101, or 1180 with the handler's deadlock: dberr.c) means a
		 * stale transaction committed first: before the move, so
		 * before the command. Try again. */
		if (*st != DB_CONFLICT)
			return f;
		/* Ended even when no time is left for another attempt: the
		 * next acquisition finds the fence free. */
		if (lock_wait && !*ended) {
			*ended = fence_end(db, sql, name, slot, term, why, sizeof(why));
			if (!*ended && !db_connected(db))
				break;
		}
		if (timing_now() + FENCE_ATTEMPT_US > give_up)
			break;
	}
	if (*ended)
		snprintf(err, errlen,
			 "ended session %llu, whose transaction had fenced lease %s with an older term; its rollback "
			 "(or the XA transaction it prepared: XA RECOVER) still holds the fence %s",
			 (unsigned long long)*ended, name, sql->fence);
	else
		snprintf(err, errlen,
			 "the fence %s is held by a transaction of an older term, and its session could not be ended "
			 "(%s): grant leaderrun's account EXECUTE on %s_end (sql/grants.sql) and its definer "
			 "CONNECTION ADMIN, or end that session by hand",
			 sql->fence, why[0] ? why : "it kept conflicting", sql->fence);
	return FENCE_BLOCKED;
}

enum db_status lease_fence_exists(struct db *db, const struct lease_sql *sql, bool *exists, char *err, size_t errlen)
{
	int64_t n = 0;
	enum db_status st = db_query_int(db, sql->fence_objects, &n, err, errlen);

	*exists = st == DB_OK && n == 4;
	return st;
}

enum db_status lease_fence_create(struct db *db, const struct lease_sql *sql, bool *made, char *err, size_t errlen)
{
	const char *ddl[] = {sql->fence_create, sql->fence_proc_slot, sql->fence_proc, sql->fence_proc_end};
	bool exists;
	enum db_status st;

	/* Look first: a user without CREATE and CREATE ROUTINE runs --init
	 * on a current database (sql/grants.sql lets it see all four). */
	*made = false;
	st = lease_fence_exists(db, sql, &exists, err, errlen);
	for (size_t k = 0; st == DB_OK && !exists && k < sizeof(ddl) / sizeof(ddl[0]); k++) {
		st = db_query(db, ddl[k], err, errlen);
		*made = st == DB_OK;
	}
	return st;
}
