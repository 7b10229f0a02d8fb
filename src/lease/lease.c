#include "lease.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/timing.h"
#include "lease_block.h"
#include "lease_int.h"

/* Why the row as read keeps a contender out. A used slot wins: it ends a
 * wait, where a pause or a holder only prolongs it. */
static enum lease_busy lease_why(const struct lease_info *info, const struct lease_req *q)
{
	int64_t period_us = q->period_us;

	if (q->sched_us)
		return lease_sched_why(q, info);
	if (period_us > 0 && info->last_slot_us >= 0 && info->last_slot_us >= info->slot_us)
		return BUSY_SLOT_USED;
	if (info->paused_in_us > 0)
		return BUSY_PAUSED;
	if (info->expires_in_us <= 0 && info->preferred_us > 0)
		return BUSY_PREFERRED;
	return BUSY_HELD;
}

/* The compare-and-set that Q's acquire sends, into CAS. */
static void lease_acquire_stmt(const struct lease_sql *sql, const struct lease_req *q, const struct lease_info *info,
			       struct lease_cas *cas)
{
	struct db_value all[] = {
	    {.type = DB_STR, .str = q->holder},	    {.type = DB_I64, .i64 = q->ttl_us},
	    {.type = DB_I64, .i64 = info->slot_us}, {.type = DB_STR, .str = q->name},
	    {.type = DB_I64, .i64 = info->slot},    {.type = DB_I64, .i64 = q->slots},
	    {.type = DB_I64, .i64 = info->slot_us},
	};

	if (q->sched_us) {
		lease_sched_stmt(sql, q, info, all, cas);
		return;
	}
	if (q->period_us > 0) {
		memcpy(cas->p, all, sizeof(all));
		cas->id = STMT_ACQUIRE_SLOT;
		cas->text = sql->acquire_slot;
		cas->np = 7;
		return;
	}
	cas->p[0] = all[0], cas->p[1] = all[1], cas->p[2] = all[3], cas->p[3] = all[4], cas->p[4] = all[5];
	cas->id = STMT_ACQUIRE;
	cas->text = sql->acquire;
	cas->np = 5;
}

/* The period a look asks the server's slot of: --once-per's; for
 * --schedule 1 us, which makes that slot the server's clock (now_us). */
static int64_t lease_look_period(const struct lease_req *q)
{
	return q->sched_us ? 1 : q->period_us;
}

static enum lease_outcome lease_try(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				    struct lease_res *res, struct db_err *err)
{
	const char *name = q->name, *holder = q->holder;
	int64_t ttl_us = q->ttl_us;
	unsigned slots = q->slots;
	struct lease_with *with = q->with;
	struct lease_info *info = &res->info;
	int64_t *sent_at = &res->sent_at;
	enum db_status *st = &err->st;
	struct db_result r;
	struct lease_cas cas;
	struct lease_block_stmt bs;
	struct db_call call;
	enum lease_outcome o;

	bool block = with && lease_block_ok(db, sql);

	lease_acquire_stmt(sql, q, info, &cas);
	bs = (struct lease_block_stmt){sql, cas.text, cas.p, cas.np, name, info->slot};
	call = (struct db_call){cas.id, cas.text, cas.p, cas.np, NULL, 0, NULL, NULL, &r};
	*sent_at = timing_now();
	if (block)
		*st = lease_block_acquire(db, &bs, with, &r, err);
	/* The block's move rolled it back (lease_with's alone: a stale
	 * fence, a deadlock in the fence's gap): the compare-and-set on its
	 * own, the move after its commit. */
	if (block && with->alone) {
		with->ran = false;
		*sent_at = timing_now();
	}
	if (!block || with->alone)
		*st = db_exec(db, &call, err);
	info->rerun = cas.id == STMT_ACQUIRE_RERUN;
	o = lease_outcome_of(*st, r.affected, 1);
	if (o == LEASE_OK) {
		/* The term comes only from the statement that matched exactly one
		 * row: after 0 rows LAST_INSERT_ID() may hold a stranger's term. */
		if (r.insert_id == 0) {
			snprintf(err->msg, sizeof(err->msg), "the server returned no term for the acquire");
			*st = DB_NO_TABLE;
			return LEASE_ERROR;
		}
		info->term = r.insert_id;
		info->slots = slots;
		snprintf(info->holder, sizeof(info->holder), "%s", holder);
		info->expires_in_us = ttl_us;
	}
	return o;
}

enum db_status lease_prepare_acquire(struct db *db, struct lease_sql *sql, const struct lease_req *q,
				     struct db_err *err)
{
	if (q->slots != 1 || !q->with || !lease_block_ok(db, sql))
		return DB_OK;
	return lease_block_prepare_acquire(db,
					   &(struct lease_block_stmt){sql,
								      q->sched_us	 ? sql->acquire_rerun
								      : q->period_us > 0 ? sql->acquire_slot
											 : sql->acquire,
								      NULL, 0, q->name, 0},
					   q->with, err);
}

/* Creates the row of SLOT of NAME, of N slots, if it is missing. Before
 * schema 5 a lease is one row, the name's. */
enum db_status lease_insert(struct db *db, const struct lease_sql *sql, const struct lease_rowid *row,
			    struct db_err *err)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = row->name}, {.type = DB_I64, .i64 = row->slot}, {.type = DB_I64, .i64 = row->n}};
	struct db_result r;

	return db_exec(
	    db, &(struct db_call){STMT_INSERT, sql->insert, p, sql->schema < 5 ? 1 : 3, NULL, 0, NULL, NULL, &r}, err);
}

/* Ends a transaction that failed: a connection that broke has ended it,
 * and one whose ROLLBACK fails is closed, so that the server rolls back.
 * Never may a later statement (an acquire, a renew) run inside it, where
 * its commit would wait for a COMMIT that never comes. */
static void lease_rollback(struct db *db, enum db_status why)
{
	struct db_err err;

	/* A transaction that Galera aborted (a certification failure, seen
	 * as a deadlock) can leave the session's prepared statements unknown
	 * to the server (error 1243 on the next execute, measured on MariaDB
	 * 10.11 with two first uses through two nodes): a new session, then,
	 * with the next host first. A session merely closed here kept the
	 * worker's fail-over from moving on (it moves from the host of an
	 * open session only): a lock wait on a Group Replication member cut
	 * off from the majority, whose stalled commit holds the rows' locks,
	 * came back to that member at every try. */
	if (why == DB_CONFLICT || (db_connected(db) && db_query(db, "ROLLBACK", &err) != DB_OK))
		db_fail_over(db);
}

/* Makes rows 0..N-1 of NAME exist with N slots, in one transaction that
 * locks the lease's rows and the gaps between them: first use, or a slot
 * count changed while no slot is held. Slots held under another count
 * refuse it: LEASE_SLOTS_DIFFER, INFO->slots the count in force. */
static enum lease_outcome lease_set_slots(struct db *db, const struct lease_sql *sql, const struct look *l,
					  struct db_err *err)
{
	const char *name = l->name;
	unsigned n = l->n;
	struct lease_info *info = l->info;
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_value set[] = {{.type = DB_I64, .i64 = n}, {.type = DB_I64, .i64 = n}, {.type = DB_STR, .str = name}};
	struct db_value c[] = {{.type = DB_I64}, {.type = DB_I64}, {.type = DB_I64}, {.type = DB_I64}};
	struct db_result r;

	if (sql->schema < 5) {
		/* One row a lease: lease_look never gets here (lease_refuse). */
		snprintf(err->msg, sizeof(err->msg), "internal error: a slot count change on a table of schema %d",
			 sql->schema);
		err->st = DB_ERROR;
		return LEASE_ERROR;
	}
	err->st = db_query(db, "START TRANSACTION", err);
	if (err->st != DB_OK)
		return LEASE_ERROR;
	err->st = db_exec(db, &(struct db_call){STMT_LOCK_ROWS, sql->lock_rows, p, 1, c, 4, NULL, NULL, &r}, err);
	if (err->st != DB_OK)
		goto fail;
	if (c[1].i64 > 0 && (c[2].i64 != n || c[3].i64 != n)) {
		lease_rollback(db, DB_OK);
		info->slots = (unsigned)c[3].i64;
		info->held = (unsigned)c[1].i64;
		return LEASE_SLOTS_DIFFER;
	}
	for (unsigned k = 0; k < n; k++) {
		err->st = lease_insert(db, sql, &(struct lease_rowid){name, k, n}, err);
		if (err->st != DB_OK)
			goto fail;
	}
	if (c[0].i64 > 0 && (c[2].i64 != n || c[3].i64 != n)) {
		err->st = db_exec(
		    db, &(struct db_call){STMT_SLOTS_SET, sql->slots_set, set, 3, NULL, 0, NULL, NULL, &r}, err);
		if (err->st != DB_OK)
			goto fail;
	}
	err->st = db_query(db, "COMMIT", err);
	if (err->st != DB_OK)
		goto fail;
	return LEASE_OK;
fail:
	lease_rollback(db, err->st);
	return LEASE_ERROR;
}

/* The rows as read are N, all of N slots: nothing to make or change. */
static bool lease_rows_ready(const struct look *l, unsigned n)
{
	return l->rows == n && l->min_slots == n && l->max_slots == n;
}

/* Reads the rows, creating them on first use and taking a new slot count
 * while no slot is held. */
static enum lease_outcome lease_look(struct db *db, const struct lease_sql *sql, struct look *l, struct db_err *err)
{
	const char *name = l->name;
	unsigned n = l->n;
	struct lease_info *info = l->info;
	enum lease_outcome o = LEASE_ERROR;

	/* Two first uses at once (or through two Galera nodes) deadlock on
	 * the gap; the loser reads again, and most likely finds the winner's
	 * rows. Locking them once more without that read would, on Galera,
	 * be aborted again by each winner's acquire that the node applies
	 * meanwhile: with six contenders through three nodes, three tries in
	 * a row failed one round in 80. */
	for (int attempt = 0; attempt < 3; attempt++) {
		/* A conflict ended the last try's session (lease_rollback). */
		if (attempt > 0 && !db_connected(db) && (err->st = db_connect(db, err)) != DB_OK)
			return LEASE_ERROR;
		if (lease_read(db, sql, l, err) != LEASE_OK)
			return LEASE_ERROR;
		if (lease_rows_ready(l, n))
			return LEASE_OK;
		if (!l->any && n == 1) {
			/* The first use of a one-slot lease: one row, one
			 * statement, as before slots. On Galera two first uses
			 * through different nodes both insert it, and the one
			 * certified second fails with a deadlock: the row is
			 * there all the same. A contender with more slots that
			 * comes in between is seen by the look that follows. */
			err->st = lease_insert(db, sql, &(struct lease_rowid){name, 0, 1}, err);
			if (err->st != DB_OK && err->st != DB_CONFLICT)
				return LEASE_ERROR;
			if (lease_read(db, sql, l, err) != LEASE_OK)
				return LEASE_ERROR;
			if (lease_rows_ready(l, n))
				return LEASE_OK;
		}
		if (info->held > 0 && l->min_slots == l->max_slots && l->max_slots != n)
			return LEASE_SLOTS_DIFFER;
		o = lease_set_slots(db, sql, l, err);
		if (o != LEASE_ERROR || err->st != DB_CONFLICT)
			break;
	}
	if (o != LEASE_OK)
		return o;
	if (lease_read(db, sql, l, err) != LEASE_OK)
		return LEASE_ERROR;
	/* Another contender's count came in between, and it runs. */
	if (l->max_slots != n && info->held > 0)
		return LEASE_SLOTS_DIFFER;
	if (l->rows != n || l->min_slots != n) {
		snprintf(err->msg, sizeof(err->msg), "the lease's rows were not there after their insert");
		err->st = DB_UNAVAILABLE;
		return LEASE_ERROR;
	}
	return LEASE_OK;
}

/* Is a slot, as read, free for this contender now? */
static bool lease_free(const struct lease_info *info, const struct look *l, const struct lease_req *q)
{
	return lease_why(info, q) == BUSY_HELD && l->nfree > 0;
}

/* Where a contender starts its sequence of picks among free slots: its
 * own, so that contenders that look together spread out. */
static uint64_t lease_pick_seed(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)timing_now() ^ (uint64_t)getpid() << 32;
	return r;
}

/* A feature that the table's schema cannot hold, asked for explicitly:
 * one line that names it (the callers add 'leaderrun --init'). */
bool lease_refuse(const struct lease_sql *sql, int needs, const char *what, struct db_err *err)
{
	if (sql->schema >= needs)
		return false;
	snprintf(err->msg, sizeof(err->msg), "%s needs schema %d, and table %s has the columns of schema %d", what,
		 needs, sql->table, sql->schema);
	err->st = DB_NO_TABLE;
	return true;
}

/* Did the compare-and-set just tried wait in vain for a row lock (1205,
 * innodb_lock_wait_timeout=1)? A winner's compare-and-set holds it for
 * milliseconds; a second is a transaction that does not end. */
static bool lease_lock_waited(struct db *db, enum db_status st)
{
	return st == DB_CONFLICT && db_errno(db) == DBERR_LOCK_WAIT_TIMEOUT;
}

/* The row is free as read, and the last compare-and-set waited in vain
 * for its lock: a transaction that holds it does not end, such as a
 * commit stalled on a Group Replication member cut off from the majority
 * (it blocks until the partition heals), or a session an operator left
 * open. Not "busy": nobody holds the lease. This server is stuck for
 * this lease; another host may not be (the worker fails over). */
static enum lease_outcome lease_stalled(struct db_err *err)
{
	snprintf(err->msg, sizeof(err->msg),
		 "the lease's row is free but another transaction keeps it locked (error 1205): a stalled "
		 "server, such as a Group Replication member cut off from the majority");
	err->st = DB_UNAVAILABLE;
	return LEASE_ERROR;
}

/* The look before the write: --once-per's first look fixes the slot, by
 * the server's clock, and a slot already taken ends the attempt without a
 * write. A waiter that was not woken looks first too: while the lease is
 * held, one statement a look. With several slots every attempt looks
 * first, to know which slot is free. LEASE_OK: worth the write. */
static enum lease_outcome lease_look_first(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					   struct look *l, struct db_err *err)
{
	struct lease_info *info = l->info;
	enum lease_outcome o = lease_look(db, sql, l, err);

	if (o != LEASE_OK)
		return o;
	if (q->period_us > 0 && info->slot_us == 0) {
		snprintf(err->msg, sizeof(err->msg), "the server did not say which --once-per slot it is in");
		err->st = DB_UNAVAILABLE;
		return LEASE_ERROR;
	}
	if (q->period_us > 0)
		*q->slot_us = info->slot_us;
	info->why = lease_why(info, q);
	/* Held, paused or its slot used: the compare-and-set could only
	 * fail. */
	return lease_free(info, l, q) ? LEASE_OK : LEASE_BUSY;
}

static enum lease_outcome lease_acquire_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					     struct lease_res *r, struct db_err *err)
{
	unsigned slots = q->slots;
	int64_t period_us = q->period_us;
	struct lease_info *info = &r->info;
	enum db_status *st = &err->st;
	/* One slot: nothing to pick (and no system call). */
	struct look l = {.name = q->name,
			 .period_us = lease_look_period(q),
			 .n = slots,
			 .only = -1,
			 .pick = slots > 1 ? lease_pick_seed() : 0,
			 .info = info};
	enum lease_outcome o;

	memset(info, 0, sizeof(*info));
	if (slots > 1 && lease_refuse(sql, 5, "--slots above 1", err))
		return LEASE_ERROR;
	if (period_us > 0 && lease_refuse(sql, 3, "--once-per", err))
		return LEASE_ERROR;
	if (q->sched_us && lease_refuse(sql, 3, "--schedule", err))
		return LEASE_ERROR;
	info->last_slot_us = -1;
	info->slot_us = period_us > 0 ? *q->slot_us : 0;
	if (q->look_first || slots > 1 || (period_us > 0 && info->slot_us == 0)) {
		o = lease_look_first(db, sql, q, &l, err);
		if (o != LEASE_OK)
			return o;
	}
	/* Busy (no row matched, or another contender's compare-and-set won
	 * the row): look, so that a follower knows whom it waits for, until
	 * when and why, and so that a first use creates the rows; and while a
	 * slot is free, try it: once more with one slot, up to N more times
	 * with N (a -n run gives up only when every slot is taken). */
	for (unsigned tries = 0;; tries++) {
		bool locked;
		o = lease_try(db, sql, q, r, err);
		if (o != LEASE_BUSY)
			return o;
		locked = lease_lock_waited(db, *st);
		o = lease_look(db, sql, &l, err);
		if (o != LEASE_OK)
			return o;
		info->why = lease_why(info, q);
		if (!lease_free(info, &l, q))
			return LEASE_BUSY;
		if (tries >= slots)
			return locked ? lease_stalled(err) : LEASE_BUSY;
	}
}

static enum lease_outcome lease_renew_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					   struct lease_res *res, struct db_err *err)
{
	const char *name = q->name, *holder = q->holder;
	unsigned slot = q->slot;
	uint64_t term = q->term;
	int64_t ttl_us = q->ttl_us, *sent_at = &res->sent_at;
	enum db_status *st = &err->st;
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = ttl_us}, {.type = DB_STR, .str = name}, {.type = DB_I64, .i64 = slot},
	    {.type = DB_STR, .str = holder}, {.type = DB_U64, .u64 = term},
	};
	struct db_value c[] = {{.type = DB_I64}, {.type = DB_I64}};
	struct db_result r;
	enum lease_outcome o;

	*sent_at = timing_now();
	*st = db_exec(db, &(struct db_call){STMT_RENEW, sql->renew, p, 5, NULL, 0, NULL, NULL, &r}, err);
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
	if (db_exec(db, &(struct db_call){STMT_RENEW_WHY, sql->renew_why, p + 1, 4, c, 2, NULL, NULL, &r}, err) !=
		DB_OK ||
	    !r.have_row)
		return LEASE_LOST;
	if (c[0].i64 != 0) {
		snprintf(err->msg, sizeof(err->msg), "the server turned read-only (a replica or demoted primary)");
		*st = DB_READ_ONLY;
		return LEASE_ERROR;
	}
	return c[1].i64 == 1 ? LEASE_REVOKED : LEASE_LOST;
}

/* The release's parameters for Q, in stmts.def's order: the exit status
 * second. */
static void lease_release_params(const struct lease_req *q, struct db_value p[6])
{
	p[0] = (struct db_value){.type = DB_I64, .i64 = q->min_hold_us};
	p[1] = (struct db_value){.type = DB_I64, .i64 = q->exit_status, .is_null = q->exit_status < 0};
	p[2] = (struct db_value){.type = DB_STR, .str = q->name};
	p[3] = (struct db_value){.type = DB_I64, .i64 = q->slot};
	p[4] = (struct db_value){.type = DB_STR, .str = q->holder};
	p[5] = (struct db_value){.type = DB_U64, .u64 = q->term};
}

enum db_status lease_prepare_release(struct db *db, struct lease_sql *sql, const struct lease_req *q,
				     struct db_err *err)
{
	struct db_value p[6];

	if (!q->release_with || !lease_block_ok(db, sql))
		return DB_OK;
	lease_release_params(q, p);
	return lease_block_prepare_release(
	    db, &(struct lease_block_stmt){.sql = sql, .text = sql->release, .p = p, .np = 6}, q->release_with, err);
}

static enum lease_outcome lease_release_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					     struct lease_res *res, struct db_err *err)
{
	struct lease_release_with *with = q->release_with;
	enum db_status *st = &err->st;
	struct db_value p[6];

	lease_release_params(q, p);
	struct db_value no_exit[] = {p[0], p[2], p[3], p[4], p[5]}; /* schema 1: no last_exit */
	struct db_result r;

	if (with && lease_block_ok(db, sql)) {
		*st = lease_block_release(
		    db, &(struct lease_block_stmt){.sql = sql, .text = sql->release, .p = p, .np = 6}, with, &r, err);
		/* Taken by no server here after all: one by one. */
		if (*st == DB_OK || with->ran || !db_connected(db) || db_blocks(db))
			return lease_outcome_of(*st, r.affected, 0);
	}
	if (sql->schema < 2)
		*st = db_exec(db, &(struct db_call){STMT_RELEASE, sql->release, no_exit, 5, NULL, 0, NULL, NULL, &r},
			      err);
	else
		*st = db_exec(db, &(struct db_call){STMT_RELEASE, sql->release, p, 6, NULL, 0, NULL, NULL, &r}, err);
	return lease_outcome_of(*st, r.affected, 0);
}

/* The acquisition's try: where a server took no compound statement
 * (db_blocks is off now), the statements once more one by one. */
static enum db_status lease_acquire_try(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					struct lease_res *r, struct db_err *err)
{
	bool blocks = q->with && lease_block_ok(db, sql);

	r->outcome = lease_acquire_once(db, sql, q, r, err);
	if (r->outcome == LEASE_ERROR && blocks && !q->with->ran && db_connected(db) && !db_blocks(db))
		r->outcome = lease_acquire_once(db, sql, q, r, err);
	return err->st;
}

static enum db_status lease_renew_try(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				      struct lease_res *r, struct db_err *err)
{
	r->outcome = lease_renew_once(db, sql, q, r, err);
	return err->st;
}

static enum db_status lease_release_try(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					struct lease_res *r, struct db_err *err)
{
	r->outcome = lease_release_once(db, sql, q, r, err);
	return err->st;
}

enum lease_outcome lease_acquire(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
				 struct db_err *err)
{
	lease_call(db, sql, lease_acquire_try, q, r, err);
	return r->outcome;
}

enum lease_outcome lease_renew(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			       struct db_err *err)
{
	lease_call(db, sql, lease_renew_try, q, r, err);
	return r->outcome;
}

enum lease_outcome lease_release(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
				 struct db_err *err)
{
	lease_call(db, sql, lease_release_try, q, r, err);
	return r->outcome;
}
