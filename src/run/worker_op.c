/* The database thread's side: what it does for each request that the
 * supervisor queues (worker.c), on the thread's own connection. */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bgthread.h"
#include "base/duration.h"
#include "base/timing.h"
#include "lease/choose.h"
#include "lease/standby.h"
#include "report/log.h"
#include "worker_int.h"

/* A call's error travels in a struct db_err; a result carries its words
 * in R->err. In: what R->err says so far (a call that succeeds leaves it);
 * out: the call's words, cut to R->err's size. */
static struct db_err *worker_err_in(struct db_err *e, const struct worker_result *r)
{
	snprintf(e->msg, sizeof(e->msg), "%s", r->err);
	return e;
}

static void worker_err_out(struct worker_result *r, const struct db_err *e)
{
	snprintf(r->err, sizeof(r->err), "%.*s", (int)sizeof(r->err) - 1, e->msg);
}

/* A request that needs the server, on a connection that is gone (or never
 * was): a new one, on which this session holds no hint. Returns false with
 * R's error when no server answers. */
static bool worker_reconnect(struct worker *w, struct worker_result *r)
{
	struct db_err e;

	r->status = db_connect(w->db, worker_err_in(&e, r));
	worker_err_out(r, &e);
	if (r->status != DB_OK) {
		r->outcome = LEASE_ERROR;
		return false;
	}
	hint_new_session(&w->hint, db_server_info(w->db, &r->server) && r->server.galera);
	/* Galera refuses named locks, on which the claims stand: none. */
	if (r->server.galera)
		choose_off(&w->sql);
	return true;
}

/* The lease request of this run's job for TERM: the slot it holds, its
 * --min-hold, no exit status. */
static struct lease_req worker_lease_req(struct worker *w, uint64_t term)
{
	const struct worker_job *j = &w->job;

	return (struct lease_req){.name = j->name,
				  .holder = j->holder,
				  .slot = w->slot,
				  .slots = j->slots,
				  .term = term,
				  .ttl_us = j->ttl_us,
				  .period_us = j->period_us,
				  .slot_us = &w->slot_us,
				  .sched_us = j->sched_us,
				  .rerun_until_us = j->rerun_until_us,
				  .min_hold_us = j->min_hold_us,
				  .exit_status = -1};
}

/* The lease is ours: the fence moves to its term before the command may
 * start. When it cannot, the term is given back at once (the command never
 * ran, so there is nothing to wait for) and R is an error to retry; the
 * fence unavailable (an older schema) is not one: R says so, and the run
 * goes on without it. */
static bool worker_fence(struct worker *w, const struct lease_with *with, struct worker_result *r)
{
	const struct worker_job *j = &w->job;
	struct db_err err, e;
	const struct lease_fence_req q = {.name = j->name,
					  .fencer = j->fence_user,
					  .slot = r->info.slot,
					  .term = r->info.term,
					  .give_up = r->sent_at + j->fence_us,
					  .tried_errno = with->ran ? with->fence_errno : 0,
					  .tried_err = with->fence_err};

	/* Moved with the acquisition, in its commit. */
	if (with->ran && with->fence_errno == 0) {
		r->fence = FENCE_MOVED;
		return true;
	}
	r->fence = lease_fence_move(w->db, &w->sql, &q, &r->fence_ended, worker_err_in(&e, r));
	worker_err_out(r, &e);
	if (r->fence == FENCE_MOVED || r->fence == FENCE_UNAVAILABLE || r->fence == FENCE_OFF_OLDER)
		return true;
	if (r->fence == FENCE_NEWER)
		snprintf(r->err, sizeof(r->err),
			 "the fence %s holds term %llu or a later one already: a newer term took the lease, or the "
			 "lease table's terms went back (restored from a backup?): then raise the lease's term above "
			 "the fence's",
			 w->sql.fence, (unsigned long long)r->info.term);
	if (db_connected(w->db)) {
		struct lease_req rel = worker_lease_req(w, r->info.term);
		struct lease_res ignored = {0};

		rel.slot = r->info.slot;
		rel.min_hold_us = 0;
		(void)lease_release(w->db, &w->sql, &rel, &ignored, &err);
	}
	r->outcome = LEASE_ERROR;
	r->status = r->fence == FENCE_FAILED ? e.st : DB_CONFLICT;
	return false;
}

/* What a lease call answered, into R. */
static void worker_result_of(struct worker_result *r, const struct lease_res *res)
{
	r->outcome = res->outcome;
	r->status = res->status;
	r->sent_at = res->sent_at;
	r->info = res->info;
}

/* The fence's move and (one slot: no other slot's hint to give back
 * first) the hint go with the compare-and-set where they can. */
static struct lease_with worker_with(const struct worker *w)
{
	return (struct lease_with){.fencer = w->job.fence_user, .hint = w->hint.on && w->job.slots == 1};
}

/* WORKER_ACQUIRE and WORKER_LOOK. */
static void worker_run_acquire(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	struct lease_with with = worker_with(w);

	struct lease_req req = worker_lease_req(w, 0);
	struct lease_res res = {0};

	req.look_first = q->op == WORKER_LOOK;
	req.with = &with;
	struct db_err e;

	(void)lease_acquire(w->db, &w->sql, &req, &res, worker_err_in(&e, r));
	worker_err_out(r, &e);
	worker_result_of(r, &res);
	/* The new leader takes the hint, so that followers block on it (a
	 * follower woken by it has it already). A follower that did not win
	 * gives it back, for the next leader to take, unless its leader died
	 * (hint_after_attempt). */
	if (r->outcome == LEASE_OK && worker_fence(w, &with, r)) {
		w->slot = r->info.slot;
		if (with.ran && with.hint && with.fence_errno == 0)
			hint_took(&w->hint, &with, r->info.term);
		else
			hint_take(&w->hint, w->slot, r->info.term);
	} else if (hint_after_attempt(&w->hint, r->outcome, &r->info))
		r->wake = HINT_KEPT;
	else if (r->outcome == LEASE_BUSY && r->info.why == BUSY_PREFERRED && r->info.other_chosen)
		hint_nudge(&w->hint);
}

/* A wait woken by the hint, asked to acquire then: the acquisition at
 * once, on this thread, as WORKER_ACQUIRE would send it (its deadline from
 * its own send), unless the supervisor called it off. The supervisor's
 * hop between the two was a twentieth of a hand-over. */
static void worker_run_woken(struct worker *w, struct worker_result *r)
{
	const struct worker_req acquire = {.op = WORKER_ACQUIRE, .exit_status = -1};
	enum hint_wake woke = r->wake;
	bool go;

	bgthread_lock(&w->t);
	go = w->then_sent = !w->then_off;
	bgthread_unlock(&w->t);
	if (!go)
		return;
	memset(r, 0, sizeof(*r));
	r->op = WORKER_ACQUIRE;
	r->woke = woke;
	worker_run_acquire(w, &acquire, r);
}

/* WORKER_WAIT: blocks on the hint of slot Q->hint while Q->term's leader
 * holds it. */
static void worker_run_wait(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	r->outcome = LEASE_OK;
	/* The acquisition that the wake-up will send, parsed now (once a
	 * connection): the server's parse of it after an idle wait was a
	 * tenth of a hand-over. */
	if (!q->behind[0] && db_connected(w->db)) {
		struct lease_with with = worker_with(w);
		struct lease_req req = worker_lease_req(w, 0);
		struct db_err err;

		req.with = &with;
		(void)lease_prepare_acquire(w->db, &w->sql, &req, &err);
	}
	r->wake = q->behind[0] ? hint_wait_behind(&w->hint, q->behind, q->wait_us)
			       : hint_wait(&w->hint, q->hint, q->term, q->wait_us);
	if (q->then_acquire && (r->wake == HINT_LEADER_GONE || r->wake == HINT_HANDED_ON))
		worker_run_woken(w, r);
}

static void worker_run_renew(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	struct lease_req req = worker_lease_req(w, q->term);
	struct lease_res res = {0};

	struct db_err e;

	(void)lease_renew(w->db, &w->sql, &req, &res, worker_err_in(&e, r));
	worker_err_out(r, &e);
	worker_result_of(r, &res);
	/* Revoked: by whom, for the log and the history (a statement only
	 * then). */
	if (r->outcome == LEASE_REVOKED && w->sql.choose_on) {
		struct db_err err;
		const struct choose_at at = {w->db, &w->sql, w->job.name};

		(void)choose_why_revoked(&at, q->term, &r->handover, &err);
	}
	/* A leader that could not take the hint when it acquired (a follower
	 * held it just then) tries again: one statement a renew, only until
	 * it has it. */
	if (r->outcome == LEASE_OK)
		hint_take(&w->hint, w->slot, q->term);
}

/* What the release carries (worker_release_also), as set last. */
static struct worker_release_with worker_also(struct worker *w)
{
	struct worker_release_with a;

	bgthread_lock(&w->t);
	a = w->also;
	bgthread_unlock(&w->t);
	return a;
}

static void worker_run_release(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	struct lease_req req = worker_lease_req(w, q->term);
	struct lease_res res = {0};
	char also[DB_MAX_SQL], kept[DB_MAX_SQL];
	/* The history's row and the hint go with the release where they can
	 * (its transaction, RELEASE_ALL_LOCKS before its commit): one round
	 * trip. */
	struct lease_release_with with = {.drop_hints = w->hint.held};
	struct worker_release_with a = worker_also(w);

	if (a.sql && a.sql(a.arg, also, sizeof(also)))
		with.also = also;
	if (with.also && a.kept && a.kept(a.arg, kept, sizeof(kept), with.also_vals))
		with.also_kept = kept;
	req.exit_status = q->exit_status;
	req.release_with = &with;
	struct db_err e;

	(void)lease_release(w->db, &w->sql, &req, &res, worker_err_in(&e, r));
	worker_err_out(r, &e);
	worker_result_of(r, &res);
	if (with.ran && with.also && a.done)
		a.done(a.arg, w->db, with.also_errno, with.also_err);
	if (with.ran && with.drop_hints) {
		hint_dropped(&w->hint);
		/* The block let go of every lock: the next wait writes its
		 * row and takes its lock again. */
		w->hint.keep[0] = '\0';
	}
	/* Row first, hint second: the woken follower finds it free, and the
	 * hint goes before the result is posted, so that the waiters wake
	 * as early as they can. */
	if (w->hint.held && db_connected(w->db))
		hint_drop(&w->hint);
}

/* WORKER_PREPARE: the release of Q->term, prepared on the server while
 * the command runs (the history's close in it, if its row is in by now):
 * the hand-over then waits for no parse. Its failure costs the shortcut
 * only, never the lease: the answer is always LEASE_OK. */
static void worker_run_prepare(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	struct lease_req req = worker_lease_req(w, q->term);
	struct lease_release_with with = {.drop_hints = w->hint.held};
	struct worker_release_with a = worker_also(w);
	char kept[DB_MAX_SQL];
	struct db_err err;

	if (a.kept && a.kept(a.arg, kept, sizeof(kept), NULL))
		with.also_kept = kept;
	req.release_with = &with;
	(void)lease_prepare_release(w->db, &w->sql, &req, &err);
	r->outcome = LEASE_OK;
	r->status = DB_OK;
}

/* This waiter's row in the standbys' table, with its lock kept across the
 * hint's releases. */
static void worker_run_standby(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	const struct standby_reg reg = {.lease = w->job.name,
					.holder = w->job.holder,
					.lock = w->lock,
					.healthy = q->healthy,
					.priority = w->job.priority,
					.spread = w->job.spread,
					.claims = w->sql.choose_on};

	struct db_err e;

	r->status = standby_register(w->db, &w->sql, &reg, worker_err_in(&e, r));
	worker_err_out(r, &e);
	r->outcome = r->status == DB_OK ? LEASE_OK : LEASE_ERROR;
	if (r->status == DB_OK)
		hint_keep(&w->hint, w->lock);
}

/* WORKER_PREEMPT. */
static void worker_run_preempt(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	const struct choose_at at = {w->db, &w->sql, w->job.name};
	const struct choose_preemption p = {w->lock, q->holder, q->term, w->job.priority};
	bool revoked = false;
	struct db_err e;

	r->status = choose_preempt(&at, &p, &revoked, worker_err_in(&e, r));
	worker_err_out(r, &e);
	r->outcome = r->status != DB_OK ? LEASE_ERROR : revoked ? LEASE_OK : LEASE_BUSY;
}

/* WORKER_SPREAD. */
static void worker_run_spread(struct worker *w, struct worker_result *r)
{
	const struct choose_at at = {w->db, &w->sql, w->job.name};
	bool mine = true;
	struct db_err e;

	r->status = choose_spread(&at, w->job.holder, &mine, worker_err_in(&e, r));
	worker_err_out(r, &e);
	r->outcome = r->status != DB_OK ? LEASE_ERROR : mine ? LEASE_OK : LEASE_BUSY;
}

/* Runs request Q into R. */
void worker_run_op(struct worker *w, const struct worker_req *q, struct worker_result *r)
{
	memset(r, 0, sizeof(*r));
	r->op = q->op;
	if (q->op == WORKER_CALL) {
		/* The connection as it is: no lease work needs it now. */
		w->call(w->call_arg, w->db);
		r->outcome = LEASE_OK;
		return;
	}
	if (!db_connected(w->db) && !worker_reconnect(w, r))
		return;
	switch (q->op) {
	case WORKER_ACQUIRE:
	case WORKER_LOOK:
		worker_run_acquire(w, q, r);
		break;
	case WORKER_WAIT:
		worker_run_wait(w, q, r);
		break;
	case WORKER_RENEW:
		worker_run_renew(w, q, r);
		break;
	case WORKER_RELEASE:
		worker_run_release(w, q, r);
		break;
	case WORKER_STANDBY:
		worker_run_standby(w, q, r);
		break;
	case WORKER_PREEMPT:
		worker_run_preempt(w, q, r);
		break;
	case WORKER_SPREAD:
		worker_run_spread(w, r);
		break;
	case WORKER_PREPARE:
		worker_run_prepare(w, q, r);
		break;
	case WORKER_CALL: /* above */
		break;
	}
	db_server_info(w->db, &r->server);
	/* The next attempt goes out on a fresh connection, to the next host
	 * first: the failure may be this server's alone (a cut-off Galera
	 * node, a demoted primary). Settings that no server fixes stay. */
	if (r->outcome == LEASE_ERROR && r->status != DB_DENIED && r->status != DB_NO_TABLE &&
	    r->status != DB_NO_DATABASE)
		db_fail_over(w->db);
}
