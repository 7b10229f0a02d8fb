/* --schedule's acquire: which compare-and-set a slot's attempt sends, and
 * why one that failed keeps a contender out. A slot's first attempt takes
 * it once the server's clock reaches it; with --catch-up a later attempt
 * takes it again once the last one was lost (its holder's lease ran out
 * before its command ended), until the slot's window closes. */
#include <string.h>

#include "lease.h"
#include "lease_int.h"

void lease_sched_stmt(const struct lease_sql *sql, const struct lease_req *q, const struct lease_info *info,
		      const struct db_value all[7], struct lease_cas *cas)
{
	struct db_value slot = {.type = DB_I64, .i64 = q->sched_us};
	struct db_value until = {.type = DB_I64, .i64 = q->rerun_until_us};
	struct db_value *p = cas->p;

	/* The look said that an attempt of this slot took the lease already:
	 * only a rerun can follow it. */
	if (q->rerun_until_us > 0 && info->last_slot_us == q->sched_us) {
		p[0] = all[0], p[1] = all[1], p[2] = all[3], p[3] = all[4], p[4] = all[5];
		p[5] = slot, p[6] = until;
		cas->id = STMT_ACQUIRE_RERUN;
		cas->text = sql->acquire_rerun;
		cas->np = 7;
		return;
	}
	p[0] = all[0], p[1] = all[1], p[2] = slot, p[3] = all[3], p[4] = all[4], p[5] = all[5];
	p[6] = slot, p[7] = slot, p[8] = slot;
	cas->id = STMT_ACQUIRE_SCHED;
	cas->text = sql->acquire_sched;
	cas->np = 9;
}

enum lease_busy lease_sched_why(const struct lease_req *q, const struct lease_info *info)
{
	int64_t s = q->sched_us;
	bool held = info->expires_in_us > 0;

	if (info->last_slot_us > s)
		return BUSY_SLOT_USED;
	if (info->last_slot_us == s) {
		/* Held: an attempt of this slot runs; with --catch-up, wait for
		 * its end. Free: a rerun is worth its compare-and-set while the
		 * last attempt was lost and the window is open, by the look's
		 * row and clock; else the slot is done. */
		if (held)
			return q->rerun_until_us > 0 ? BUSY_HELD : BUSY_SLOT_USED;
		if (info->paused_in_us > 0)
			return BUSY_PAUSED;
		return q->rerun_until_us > 0 && info->slot_lost && info->now_us < q->rerun_until_us ? BUSY_HELD
												    : BUSY_SLOT_USED;
	}
	/* Held now, or held when the slot came (its expiry as the look read
	 * it, past the slot): a run of an earlier slot keeps this one. */
	if (held || info->now_us + info->expires_in_us > s)
		return BUSY_SKIPPED;
	if (info->paused_in_us > 0)
		return BUSY_PAUSED;
	if (info->now_us < s)
		return BUSY_EARLY;
	if (info->preferred_us > 0)
		return BUSY_PREFERRED;
	return BUSY_HELD;
}
