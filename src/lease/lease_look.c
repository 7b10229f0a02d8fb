/* The look: the lease's rows as one SELECT reads them, for a contender
 * (lease.c's acquire, its waits) and the operators' commands: which slot
 * is free, which held one expires first, the pause, and the claims that
 * the standbys' table makes on a free slot. */
#include "lease.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lease_int.h"

/* The lock a waiter waits behind (lease_info's above), as the row gave
 * it: only a name of standby_lock_name's form is taken (the row is
 * anybody's to write). */
static void lease_above(struct lease_info *dst, const struct db_value *c)
{
	static const char prefix[] = "leaderrun-standby:";
	size_t n = c->is_null ? 0 : strlen(c->buf);

	dst->above[0] = '\0';
	if (n != sizeof(prefix) - 1 + 16 || strncmp(c->buf, prefix, sizeof(prefix) - 1) != 0 ||
	    strspn(c->buf + sizeof(prefix) - 1, "0123456789abcdef") != 16)
		return;
	memcpy(dst->above, c->buf, n + 1);
}

/* The lease's own state, as slot 0's row has it: the pause, the last
 * --once-per slot, the server's slot now. */
static void look_lease(struct lease_info *info, const struct db_value *c)
{
	info->paused_in_us = c[7].is_null ? 0 : c[7].i64;
	snprintf(info->paused_until, sizeof(info->paused_until), "%s", c[8].buf);
	snprintf(info->paused_by, sizeof(info->paused_by), "%s", c[9].buf);
	info->last_slot_us = c[10].is_null ? -1 : c[10].i64;
	info->slot_term = c[11].is_null ? 0 : c[11].u64;
	info->now_us = c[12].is_null ? 0 : c[12].i64;
	info->slot_lost = !c[17].is_null && c[17].i64 != 0;
	if (!c[12].is_null && info->slot_us == 0)
		info->slot_us = c[12].i64;
}

/* One slot's row into DST: who holds it, until when, and the claims. */
static void look_copy(struct lease_info *dst, const struct db_value *c, int64_t expires_in)
{
	dst->slot = (unsigned)c[0].i64;
	dst->slots = (unsigned)c[1].i64;
	dst->term = c[3].u64;
	dst->expires_in_us = expires_in;
	dst->preferred_us = c[13].is_null ? 0 : c[13].i64;
	dst->holder_priority = c[14].is_null ? 0 : (int)c[14].i64;
	lease_above(dst, &c[15]);
	dst->other_chosen = !c[16].is_null && c[16].i64 != 0;
	snprintf(dst->holder, sizeof(dst->holder), "%s", c[2].buf);
	snprintf(dst->expires_at, sizeof(dst->expires_at), "%s", c[6].buf);
}

/* One row of the look: slot, slots, holder, term, expires in, read_only,
 * expires_at, paused in, paused_until, paused_by, last_slot, slot_term,
 * the server's --once-per slot, how long the row is another candidate's
 * still, the holder's priority. */
static void look_row(void *ctx, const struct db_value *c)
{
	struct look *l = ctx;
	unsigned slot = (unsigned)c[0].i64, slots = (unsigned)c[1].i64;
	int64_t expires_in = c[4].is_null ? 0 : c[4].i64;

	/* Every row leaderrun writes carries slot 0's count (rows come in
	 * slot order): one of another is nobody's, and counts for nothing. */
	if (slot == 0)
		l->count = slots;
	else if (slots != l->count) {
		l->info->stray = true;
		l->info->stray_slot = slot;
		l->info->stray_slots = slots;
		return;
	}
	if (!l->any || slots < l->min_slots)
		l->min_slots = slots;
	if (!l->any || slots > l->max_slots)
		l->max_slots = slots;
	l->any = true;
	l->read_only = l->read_only || c[5].i64 != 0;
	if (expires_in > 0 && slot < slots)
		l->info->held++;
	/* The lease's own state lives in every row; slot 0 always exists. */
	if (slot == 0)
		look_lease(l->info, c);
	if (l->only >= 0) {
		if (slot == (unsigned)l->only) {
			l->rows++;
			look_copy(l->info, c, expires_in);
		}
		return;
	}
	if (slot >= l->n)
		return;
	l->rows++;
	if (expires_in <= 0) {
		/* Reservoir sampling with a per-contender sequence: contenders
		 * that look at the same moment mostly try different slots. */
		l->nfree++;
		l->pick = l->pick * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
		if ((l->pick >> 33) % l->nfree == 0)
			look_copy(l->info, c, expires_in);
	} else if (!l->busy.slots || expires_in < l->busy.expires_in_us)
		look_copy(&l->busy, c, expires_in);
}

/* None free: whom the contender waits for, and until when (the held
 * slot BUSY that look_copy kept), into INFO, which keeps the lease's own
 * state. */
static void look_held(struct lease_info *info, const struct lease_info *busy)
{
	info->slot = busy->slot;
	info->term = busy->term;
	info->expires_in_us = busy->expires_in_us;
	info->preferred_us = 0;
	info->holder_priority = busy->holder_priority;
	info->other_chosen = busy->other_chosen;
	memcpy(info->above, busy->above, sizeof(info->above));
	memcpy(info->holder, busy->holder, sizeof(info->holder));
	memcpy(info->expires_at, busy->expires_at, sizeof(info->expires_at));
}

/* Reads the rows of L->name for a contender with L->n slots into
 * L->info: a free slot if there is one, else the held slot that expires
 * first. L->period_us > 0 also asks the server for the --once-per slot its
 * clock is in now (INFO->slot_us). */
enum lease_outcome lease_read(struct db *db, const struct lease_sql *sql, struct look *l, struct db_err *err)
{
	const char *name = l->name;
	int64_t period_us = l->period_us;
	struct lease_info *info = l->info;
	char holder[LEASE_HOLDER_MAX + 1], expires_at[32], paused_until[32], paused_by[LEASE_HOLDER_MAX + 1];
	char above[64];
	struct db_value p[] = {
	    {.type = DB_I64, .i64 = period_us / 2},
	    {.type = DB_I64, .i64 = period_us},
	    {.type = DB_I64, .i64 = period_us},
	    {.type = DB_STR, .str = name},
	};
	struct db_value c[] = {
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = holder, .cap = sizeof(holder)},
	    {.type = DB_U64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = expires_at, .cap = sizeof(expires_at)},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = paused_until, .cap = sizeof(paused_until)},
	    {.type = DB_STR, .buf = paused_by, .cap = sizeof(paused_by)},
	    {.type = DB_I64},
	    {.type = DB_U64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_I64},
	    {.type = DB_STR, .buf = above, .cap = sizeof(above)},
	    {.type = DB_I64},
	    {.type = DB_I64},
	};
	struct db_result r;

	*l = (struct look){
	    .name = name, .period_us = period_us, .n = l->n, .only = l->only, .pick = l->pick, .info = info};
	info->held = 0;
	info->expires_in_us = info->preferred_us = 0;
	info->above[0] = '\0';
	info->other_chosen = false;
	err->st = db_exec(db, &(struct db_call){STMT_READ, sql->read, p, 4, c, 18, look_row, l, &r}, err);
	if (err->st != DB_OK)
		return LEASE_ERROR;
	if (l->read_only) {
		snprintf(err->msg, sizeof(err->msg),
			 "the server is read-only (@@read_only=1): a replica or demoted primary cannot grant a "
			 "lease; point the DSN at the primary");
		err->st = DB_READ_ONLY;
		return LEASE_ERROR;
	}
	info->slots = l->max_slots;
	if (l->nfree == 0 && l->busy.slots)
		look_held(info, &l->busy);
	return LEASE_OK;
}
