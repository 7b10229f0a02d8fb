/* The operators' commands on a lease's rows: --status, --release (a
 * revocation, or --force), --pause, --resume and --check. Each is its
 * statements once, then once more for an older table (lease_call). */
#include <stdio.h>
#include <string.h>

#include "lease.h"
#include "lease_int.h"

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
	row.slot = (unsigned)c[15].i64;
	row.slots = (unsigned)c[16].i64;
	sc->on_row(sc->ctx, &row);
}

static enum db_status lease_status_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					struct lease_res *res, struct db_err *err)
{
	const char *name = q->name;
	void (*on_row)(void *ctx, const struct lease_row *row) = q->on_row;
	void *ctx = q->ctx;
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
	    {.type = DB_I64},
	    {.type = DB_I64},
	};
	struct status_ctx sc = {on_row, ctx};
	struct db_result r;

	return name
		   ? db_exec(db, &(struct db_call){STMT_STATUS_ONE, sql->status_one, p, 1, c, 17, status_row, &sc, &r},
			     err)
		   : db_exec(db, &(struct db_call){STMT_STATUS, sql->status, NULL, 0, c, 17, status_row, &sc, &r}, err);
}

/* Reads the row of SLOT, as the operator modes see a lease: *FOUND if the
 * lease has rows; INFO->slots the count in force. */
static enum db_status lease_read_slot(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				      struct lease_res *res, struct db_err *err)
{
	const char *name = q->name;
	unsigned slot = q->slot;
	struct lease_info *info = &res->info;
	bool *found = &res->found;
	struct look l = {.name = name, .n = slot + 1, .only = (int)slot, .info = info};

	memset(info, 0, sizeof(*info));
	info->last_slot_us = -1;
	if (lease_read(db, sql, &l, err) != LEASE_OK)
		return err->st;
	*found = l.any;
	info->slots = l.max_slots;
	return DB_OK;
}

static enum db_status lease_revoke_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					struct lease_res *res, struct db_err *err)
{
	const char *name = q->name;
	unsigned slot = q->slot;
	bool force = q->force, *found = &res->found, *was_held = &res->held;
	struct lease_info *was = &res->info;
	struct db_value p[] = {{.type = DB_STR, .str = name}, {.type = DB_I64, .i64 = slot}, {.type = DB_U64}};
	struct db_result r;
	enum db_status st;

	*found = *was_held = false;
	/* Without revocation (schema 1, 2) --release --force still expires
	 * the lease at once, as it always did. */
	if (!force && lease_refuse(sql, 3, "--release (a revocation)", err))
		return err->st;
	st = lease_read_slot(db, sql, q, res, err);
	/* A slot past the count is nobody's (it expires at the end of time). */
	if (st != DB_OK || !*found || was->expires_in_us <= 0 || slot >= was->slots)
		return st;
	/* Compare-and-set on the term just read: a newer holder that took
	 * over in between is neither revoked nor freed by accident. */
	p[2].u64 = was->term;
	if (force)
		st = db_exec(
		    db, &(struct db_call){STMT_FORCE_RELEASE, sql->force_release, p, 3, NULL, 0, NULL, NULL, &r}, err);
	else
		st = db_exec(db, &(struct db_call){STMT_REVOKE, sql->revoke, p, 3, NULL, 0, NULL, NULL, &r}, err);
	*was_held = st == DB_OK && r.affected == 1;
	return st;
}

static enum db_status lease_pause_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				       struct lease_res *res, struct db_err *err)
{
	const char *name = q->name, *by = q->holder;
	int64_t for_us = q->for_us;
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = for_us},
	    {.type = DB_I64, .i64 = for_us < 0 ? 0 : for_us},
	    {.type = DB_STR, .str = by},
	    {.type = DB_STR, .str = name},
	};
	struct db_result r;
	enum db_status st;
	bool *found = &res->found;

	*found = false;
	if (lease_refuse(sql, 3, "--pause", err))
		return err->st;
	/* A lease never run gets its first row (slot 0, one slot), paused;
	 * its first contender with more slots adds the rest, paused too. */
	st = lease_read_slot(db, sql, &(struct lease_req){.name = name, .slot = 0}, res, err);
	if (st == DB_OK && !*found)
		st = lease_insert(db, sql, &(struct lease_rowid){name, 0, 1}, err);
	if (st == DB_OK)
		st = db_exec(db, &(struct db_call){STMT_PAUSE, sql->pause, p, 4, NULL, 0, NULL, NULL, &r}, err);
	if (st == DB_OK)
		st = lease_read_slot(db, sql, &(struct lease_req){.name = name, .slot = 0}, res, err);
	return st;
}

static enum db_status lease_resume_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
					struct lease_res *res, struct db_err *err)
{
	const char *name = q->name;
	bool *found = &res->found;
	struct db_value p[] = {{.type = DB_STR, .str = name}};
	struct db_result r;
	enum db_status st;

	if (lease_refuse(sql, 3, "--resume", err))
		return err->st;
	st = lease_read_slot(db, sql, &(struct lease_req){.name = name, .slot = 0}, res, err);
	if (st != DB_OK || !*found)
		return st;
	return db_exec(db, &(struct db_call){STMT_RESUME, sql->resume, p, 1, NULL, 0, NULL, NULL, &r}, err);
}

static enum db_status lease_check_once(struct db *db, const struct lease_sql *sql, const struct lease_req *q,
				       struct lease_res *res, struct db_err *err)
{
	const char *name = q->name, *holder = q->holder;
	unsigned slot = q->slot;
	uint64_t term = q->term;
	bool *held = &res->held;
	struct db_value p[] = {
	    {.type = DB_STR, .str = name},
	    {.type = DB_I64, .i64 = slot},
	    {.type = DB_STR, .str = holder},
	    {.type = DB_U64, .u64 = term},
	};
	struct db_value c[] = {{.type = DB_I64}};
	struct db_result r;
	enum db_status st = db_exec(db, &(struct db_call){STMT_CHECK, sql->check, p, 4, c, 1, NULL, NULL, &r}, err);

	*held = st == DB_OK && r.have_row && c[0].i64 == 1;
	return st;
}

enum db_status lease_status(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err)
{
	return lease_call(db, sql, lease_status_once, q, r, err);
}

enum db_status lease_revoke(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err)
{
	return lease_call(db, sql, lease_revoke_once, q, r, err);
}

enum db_status lease_pause(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			   struct db_err *err)
{
	return lease_call(db, sql, lease_pause_once, q, r, err);
}

enum db_status lease_resume(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err)
{
	return lease_call(db, sql, lease_resume_once, q, r, err);
}

enum db_status lease_check(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			   struct db_err *err)
{
	return lease_call(db, sql, lease_check_once, q, r, err);
}
