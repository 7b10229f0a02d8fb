/* The fence: moved to each new term before its command starts, so that
 * the database itself refuses a stale job's transaction (the procedures
 * are in sql/leaderrun.sql; the guarantee in leaderrun-safety(7), FENCED
 * WRITES; what --init makes and checks, in fence_init.c).
 *
 * A transaction that fenced holds the fence's row until it ends, so the
 * move waits for it: on one server as a lock wait (1 s, the session's
 * innodb_lock_wait_timeout); on Galera and Group Replication the
 * certification fails whichever of the two commits second. A transaction
 * still open after the wait belongs to a command that is dead or frozen,
 * since its term had expired before this one began: its session is ended
 * (leaderrun_fence_end, with its definer's rights, which checks that it
 * really is a stale fencer) and the move tried again. */
#include <stdio.h>
#include <string.h>

#include "base/duration.h"
#include "base/timing.h"
#include "lease.h"
#include "stmt.h"

/* The lock wait that one attempt of the move may spend (the session's
 * innodb_lock_wait_timeout, db/db_probe.c), with room for the round trips. */
#define FENCE_ATTEMPT_US (1500 * USEC_PER_MSEC)

/* A fence of schema 6, which has no leaderrun_fence_move: moved by this
 * account's own writes, as schema 6's builds did. */
static enum db_status fence_try6(struct db *db, const struct lease_sql *sql, const struct db_value *move, bool *moved,
				 struct db_err *err)
{
	struct db_result r;
	enum db_status st =
	    db_exec(db, &(struct db_call){STMT_FENCE_MOVE6, sql->fence_move6, move, 4, NULL, 0, NULL, NULL, &r}, err);

	if (st == DB_OK && r.affected == 0)
		st = db_exec(
		    db, &(struct db_call){STMT_FENCE_INSERT6, sql->fence_insert6, move + 1, 3, NULL, 0, NULL, NULL, &r},
		    err);
	*moved = st == DB_OK && r.affected == 1;
	return st;
}

/* One attempt: the procedure, or schema 6's writes where it does not
 * exist yet. ERR->errnum: the server's error number of a failure, 0 if none. */
static enum lease_fence fence_try(struct db *db, const struct lease_sql *sql, const struct lease_fence_req *q,
				  struct db_err *err)
{
	struct db_value p[] = {{.type = DB_STR, .str = q->name},
			       {.type = DB_I64, .i64 = q->slot},
			       {.type = DB_U64, .u64 = q->term},
			       {.type = DB_STR, .str = q->fencer ? q->fencer : "", .is_null = !q->fencer}};
	struct db_value move6[] = {{.type = DB_U64, .u64 = q->term}, p[0], p[1], p[2]};
	struct db_result r;
	bool moved = true;

	/* The first attempt went with the acquisition (lease_with): its
	 * error, as the statement's own would have said it. */
	if (q->tried_errno) {
		snprintf(err->msg, sizeof(err->msg), "%s (error %u)", q->tried_err ? q->tried_err : "", q->tried_errno);
		err->st = dberr_classify_msg(q->tried_errno, q->tried_err ? q->tried_err : "");
		if (err->st == DB_OK)
			err->st = DB_ERROR;
		err->errnum = q->tried_errno;
	} else {
		err->st = db_exec(
		    db, &(struct db_call){STMT_FENCE_MOVE, sql->fence_move, p, 4, NULL, 0, NULL, NULL, &r}, err);
		err->errnum = err->st == DB_OK ? 0 : db_errno(db);
	}
	if (err->st == DB_ERROR && err->errnum == DBERR_SP_DOES_NOT_EXIST) {
		err->st = fence_try6(db, sql, move6, &moved, err);
		err->errnum = err->st == DB_OK ? 0 : db_errno(db);
	}
	if (err->st == DB_OK)
		return moved ? FENCE_MOVED : FENCE_NEWER;
	if (err->st == DB_ERROR && strstr(err->msg, "leaderrun_fence_move: the fence holds"))
		return FENCE_NEWER;
	/* No such table (an older schema) or no grant on it: the lease runs
	 * as before, and the caller says the fence is off, unless the lease
	 * table's own warning (lease_sql_older) names it already. */
	if (err->st == DB_NO_TABLE || err->st == DB_DENIED)
		return sql->older ? FENCE_OFF_OLDER : FENCE_UNAVAILABLE;
	return FENCE_FAILED;
}

/* Who defined the fence's procedure _end (information_schema.ROUTINES),
 * into OUT; "its definer" when this account cannot see it. */
static void fence_definer(struct db *db, const struct lease_sql *sql, char *out, size_t len)
{
	char who[160] = "";
	struct db_err e;
	struct db_value c[] = {{.type = DB_STR, .buf = who, .cap = sizeof(who)}};
	struct db_result r;

	if (db_exec(db, &(struct db_call){STMT_FENCE_DEFINER, sql->fence_definer, NULL, 0, c, 1, NULL, NULL, &r}, &e) ==
		DB_OK &&
	    r.have_row && !c[0].is_null && who[0])
		snprintf(out, len, "%s", who);
	else
		snprintf(out, len, "its definer");
}

/* The procedure failed: WHY (the server's words and errno) said with what
 * is missing and whose grant it is, from the error itself (issue 47).
 * Short: the worker's message holds 384 bytes, this among them. */
static void fence_end_failed(struct db *db, const struct lease_sql *sql, unsigned errnum, char *why, size_t whylen)
{
	char said[200], definer[80];

	snprintf(said, sizeof(said), "%.*s", (int)sizeof(said) - 1, why);
	if (errnum == DBERR_PROCACCESS_DENIED) {
		/* This account's own grant. */
		snprintf(why, whylen,
			 "this account may not call %.64s_end (%s): grant it EXECUTE on %.64s_end (sql/grants.sql)",
			 sql->fence, said, sql->fence);
		return;
	}
	fence_definer(db, sql, definer, sizeof(definer));
	if (errnum == DBERR_KILL_DENIED)
		snprintf(why, whylen,
			 "%.64s_end's definer %s may not end another account's session (%s): grant it CONNECTION ADMIN "
			 "(MariaDB) or CONNECTION_ADMIN (MySQL), or end the session by hand",
			 sql->fence, definer, said);
	else
		snprintf(why, whylen,
			 "%.64s_end, defined by %s, failed: %s; grant that account what the error names, or run "
			 "leaderrun --init to replace an older leaderrun's procedure",
			 sql->fence, definer, said);
}

/* Why the definer without PROCESS ended nobody, by HELD_BY (issue 47):
 * what it could not rule out; NULL for another HELD_BY. */
static const char *fence_end_unproven(const char *held_by)
{
	static const struct {
		const char *held_by, *why;
	} said[] = {
	    {"cluster", "on Galera or Group Replication an open fence may name another member's session"},
	    {"uptime", "could not read the server's Uptime (performance_schema.global_status)"},
	    {"unmarked", "the stale term was moved by an older leaderrun, which kept no server start"},
	    {"restart", "the stale term began before the server's last start, which may have recovered an XA branch "
			"(XA RECOVER)"},
	};

	for (size_t k = 0; k < sizeof(said) / sizeof(said[0]); k++)
		if (strcmp(held_by, said[k].held_by) == 0)
			return said[k].why;
	return NULL;
}

/* Why nobody was ended, by what the procedure said (HELD_BY). */
static void fence_end_none(struct db *db, const struct lease_sql *sql, const char *held_by, char *why, size_t whylen)
{
	char definer[80];
	const char *unproven = fence_end_unproven(held_by);

	if (!unproven && strcmp(held_by, "xa") != 0 && strcmp(held_by, "unseen") != 0) {
		snprintf(why, whylen,
			 "no open fence of an older term names a session: the lock is not a fence's (an "
			 "administrator's transaction?), and it ends with its transaction");
		return;
	}
	fence_definer(db, sql, definer, sizeof(definer));
	if (strcmp(held_by, "xa") == 0)
		snprintf(
		    why, whylen,
		    "a prepared XA branch may hold it with no session of its own (XA RECOVER: its transaction "
		    "manager ends it); without PROCESS, %.64s_end's definer %s cannot rule one out on MySQL unless "
		    "xa_detach_on_prepare is OFF",
		    sql->fence, definer);
	else if (unproven)
		snprintf(why, whylen,
			 "%.64s_end's definer %s lacks PROCESS, and %s: grant it PROCESS, or end the "
			 "session by hand",
			 sql->fence, definer, unproven);
	else
		snprintf(why, whylen,
			 "no session of %.64s_end's definer's account %s holds it: for a job of another account, grant "
			 "%s PROCESS and CONNECTION ADMIN (MariaDB) or CONNECTION_ADMIN (MySQL); for a prepared XA "
			 "branch, see XA RECOVER",
			 sql->fence, definer, definer);
}

/* A lock wait ran out: ends the session whose transaction fenced with an
 * older term. Returns its connection id, or 0 with WHY. */
static uint64_t fence_end(struct db *db, const struct lease_sql *sql, const struct lease_fence_req *q,
			  struct db_err *err)
{
	char *why = err->msg;
	size_t whylen = sizeof(err->msg);
	struct db_value p[] = {
	    {.type = DB_STR, .str = q->name}, {.type = DB_I64, .i64 = q->slot}, {.type = DB_U64, .u64 = q->term}};
	char held_by[16] = "";
	struct db_value c[] = {{.type = DB_U64}, {.type = DB_STR, .buf = held_by, .cap = sizeof(held_by)}};
	struct db_result r;

	enum db_status st =
	    db_exec(db, &(struct db_call){STMT_FENCE_END, sql->fence_end, p, 3, NULL, 0, NULL, NULL, &r}, err);

	/* A server's refusal, not the procedure's own (45000, error 1644). */
	if (st != DB_OK && st != DB_CONFLICT && db_connected(db) && db_errno(db) &&
	    db_errno(db) != DBERR_SIGNAL_EXCEPTION) {
		fence_end_failed(db, sql, db_errno(db), why, whylen);
		return 0;
	}
	if (st != DB_OK)
		return 0;
	if (db_exec(db, &(struct db_call){STMT_FENCE_ENDED, sql->fence_ended, NULL, 0, c, 2, NULL, NULL, &r}, err) !=
	    DB_OK)
		return 0;
	if (r.have_row && !c[0].is_null)
		return c[0].u64;
	fence_end_none(db, sql, r.have_row && !c[1].is_null ? held_by : "", why, whylen);
	return 0;
}

enum lease_fence lease_fence_move(struct db *db, const struct lease_sql *sql, const struct lease_fence_req *q,
				  uint64_t *ended, struct db_err *err)
{
	struct db_err why = {.msg = ""};
	struct lease_fence_req next = *q;

	*ended = 0;
	for (;;) {
		enum lease_fence f = fence_try(db, sql, &next, err);
		bool lock_wait = err->st == DB_CONFLICT && err->errnum == DBERR_LOCK_WAIT_TIMEOUT;

		/* A certification conflict (Galera 1213, Group Replication
		 * 3101, or 1180 with the handler's deadlock: dberr.c) means a
		 * stale transaction committed first: before the move, so
		 * before the command. Try again. */
		if (err->st != DB_CONFLICT)
			return f;
		/* Ended even when no time is left for another attempt: the
		 * next acquisition finds the fence free. */
		if (lock_wait && !*ended) {
			*ended = fence_end(db, sql, q, &why);
			if (!*ended && !db_connected(db))
				break;
		}
		if (timing_now() + FENCE_ATTEMPT_US > q->give_up)
			break;
		next.tried_errno = 0;
	}
	if (*ended)
		snprintf(err->msg, sizeof(err->msg),
			 "ended session %llu, whose transaction had fenced lease %s with an older term; its rollback "
			 "(or the XA transaction it prepared: XA RECOVER) still holds the fence %s",
			 (unsigned long long)*ended, q->name, sql->fence);
	else
		dberr_printf(
		    err,
		    "the fence %s is held by a transaction of an older term, and its session could not be ended: "
		    "%s",
		    sql->fence, why.msg[0] ? why.msg : "it kept conflicting");
	return FENCE_BLOCKED;
}

enum db_status lease_fence_seen(struct db *db, const struct lease_sql *sql, struct lease_fence_seen *seen,
				struct db_err *err)
{
	int64_t n = 0;
	enum db_status st = db_query_int(db, sql->fence_objects, &n, err);

	memset(seen, 0, sizeof(*seen));
	if (st != DB_OK)
		return st;
	seen->table = n & 1;
	seen->fencer = n & 2;
	seen->routines = (int)(n >> 2);
	seen->schema = !seen->table ? 0 : seen->fencer ? LEASE_SCHEMA : 6;
	seen->complete = seen->table && (seen->fencer ? seen->routines == 4 : seen->routines == 3);
	return DB_OK;
}
