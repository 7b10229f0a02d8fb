/* 1. Waiting for the lease: ask the worker to acquire; on "busy" block on
 * the holder's wake-up hint until it lets go or dies, or until the expiry
 * the row reported, whichever is first (without the hint: poll, one look a
 * --retry-interval); then look again. A signal (TERM, INT, HUP, QUIT) or
 * --wait-timeout ends the wait; nothing here blocks on the database. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "base/duration.h"
#include "sup.h"
#include "worker.h"

/* A signal that ends the wait (TERM, INT, HUP, QUIT) among those WOKE
 * brought: fills OUT and returns true. */
static bool sup_wait_ended(struct sup *s, int woke, struct outcome *out)
{
	int sig;

	if (!(woke & WOKE_SIGNAL) || !(sig = sup_signals_while_waiting(s)))
		return false;
	if (sig == SIGCHLD) {
		/* A service that ended while this instance stood by. */
		event_emit(&s->ev, EV_SERVICE_EXITED, &(struct event){.wstatus = s->child_wstatus});
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s->child_wstatus;
		return true;
	}
	event_emit(&s->ev, EV_WAIT_SIGNALLED, &(struct event){.signo = sig});
	out->kind = OUTCOME_SIGNALLED;
	out->signo = sig;
	return true;
}

/* What a contender knows while it waits. */
struct waiting {
	int64_t start, give_up; /* give_up 0: no --wait-timeout */
	int64_t backoff;	/* the longest next pause after a database error */
	int64_t pause;		/* the pause after the last error */
	bool first;		/* the first attempt always gets its answer: -w 0 tries once */
	bool hints;		/* block on the wake-up hint; false: poll the row */
	bool last_was_error;
	bool refused;		    /* "too many connections" said once */
	enum db_status last_status; /* the last error, for a slot's one line at its window's end */
	char last_err[sizeof(((struct worker_result *)0)->err)];
	struct lease_info last;
	char last_holder[LEASE_HOLDER_MAX + 1], last_paused[32];
	uint64_t last_term;
	bool preferred_said;	 /* EV_PREFERRED, once a wait */
	int64_t healthy_since;	 /* waiting and healthy since (--preempt's DELAY counts from it) */
	uint64_t preempted_term; /* the holder's term this candidate tried to preempt */
	/* The acquisition that the worker sent on the hint's wake-up, its
	 * answer to be judged as the next attempt's (sup_block_on_hint). */
	bool woken_acquired;
	struct worker_result woken;
};

enum step { STEP_TAKEN, STEP_END, STEP_ON };

/* --wait-timeout ran out: says so, with the row as last seen. */
static enum step sup_wait_timed_out(struct sup *s, const struct waiting *w, struct outcome *out)
{
	if (w->last_was_error) {
		event_emit(
		    &s->ev, s->slot ? EV_SLOT_MISSED : EV_UNAVAILABLE_AFTER,
		    &(struct event){.us = s->slot ? s->slot->at_us : 0, .status = w->last_status, .err = w->last_err});
		out->kind = OUTCOME_UNAVAILABLE;
	} else
		sup_skip(s, &w->last, SKIP_WAITED, timing_now() - w->start, out);
	return STEP_END;
}

/* Waits for the worker's answer to what was just submitted, ending the
 * wait on a signal or at --wait-timeout. */
static enum step sup_await(struct sup *s, struct waiting *w, struct worker_result *r, struct outcome *out)
{
	for (;;) {
		int woke = sup_poll(s, w->first ? 0 : w->give_up);
		if (sup_wait_ended(s, woke, out))
			return STEP_END;
		/* A check that failed while the worker blocks on the hint
		 * calls off the acquisition it would send when woken: not
		 * competing while unhealthy. */
		if (s->waiting_on_hint && !sup_health_ok(s))
			(void)worker_wait_no_further(s->w);
		if ((woke & WOKE_WORKER) && sup_take(s, r) == 0)
			break;
		if (!w->first && w->give_up && timing_now() >= w->give_up)
			return sup_wait_timed_out(s, w, out);
	}
	w->first = false;
	/* Galera, or a DSN with several hosts: no named-lock hint. */
	if (r->wake == HINT_OFF)
		w->hints = false;
	return STEP_ON;
}

/* Sleeps for US (not past --wait-timeout), ending on a signal. */
static enum step sup_sleep(struct sup *s, struct waiting *w, int64_t us, struct outcome *out)
{
	int64_t wake = timing_now() + us;

	if (w->give_up && wake > w->give_up)
		wake = w->give_up;
	for (;;) {
		int woke = sup_poll(s, wake);
		if (sup_wait_ended(s, woke, out))
			return STEP_END;
		if (timing_now() >= wake)
			break;
	}
	if (w->give_up && timing_now() >= w->give_up)
		return sup_wait_timed_out(s, w, out);
	return STEP_ON;
}

/* The longest pause between attempts after database errors: a renew
 * interval (at least the retry interval, at most 30 s). A replicated
 * database that fails over refuses writes until it has a new primary, 10
 * to 25 s for Group Replication with its default timeouts, and longer for
 * a replica promoted by hand; with pauses doubling to 30 s a standby
 * whose retries began during the outage started its command up to 16 s
 * after the new primary took writes. Bounded so, it is late by
 * a renew interval at most, and it costs what a holder's renews cost: one
 * statement, or one connect per host, a renew interval. */
static int64_t sup_backoff_cap(const struct options *o)
{
	return sup_min64(o->timing.renew_us > o->retry_us ? o->timing.renew_us : o->retry_us, 30 * USEC_PER_SEC);
}

/* A database error while waiting: fatal ones end the run, the rest are
 * retried with backoff. A server out of connections (1040) is a wait, said
 * once. */
static enum step sup_judge_error(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	bool refused = r->errnum == DBERR_CON_COUNT || r->errnum == DBERR_USER_CONNECTIONS;
	struct event d = {.status = r->status, .err = r->err};

	if (sup_fatal(s, r, out))
		return STEP_END;
	if (s->o->no_wait) {
		event_emit(&s->ev, EV_UNAVAILABLE, &d);
		out->kind = OUTCOME_UNAVAILABLE;
		return STEP_END;
	}
	w->last_was_error = true;
	s->looked_at = 0;
	w->pause = sup_jitter(s, w->backoff / 2, w->backoff);
	w->backoff = sup_min64(w->backoff * 2, sup_backoff_cap(s->o));
	d.us = w->pause;
	w->last_status = r->status;
	snprintf(w->last_err, sizeof(w->last_err), "%s", r->err);
	/* A scheduled slot says one line, at its window's end, if the
	 * database stays down that long. */
	event_emit(&s->ev,
		   s->slot	? EV_SLOT_RETRYING
		   : !refused	? EV_RETRYING
		   : w->refused ? EV_STILL_REFUSED
				: EV_REFUSED,
		   &d);
	w->refused = w->refused || refused;
	return STEP_ON;
}

/* The lease is somebody else's, as the look found it: say so (once per
 * holder, term or pause), and wait on, or end the run that does not wait. */
static enum step sup_judge_busy(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	const struct options *o = s->o;
	const struct event d = {.info = &r->info};

	/* Free, but another candidate's for a moment: looked at again when
	 * that moment ends, even by a --no-wait run (a favourite that does
	 * not come leaves it to the others, not to nobody). */
	if (r->info.why == BUSY_PREFERRED) {
		if (!w->preferred_said)
			event_emit(&s->ev, EV_PREFERRED, &d);
		w->preferred_said = true;
		return STEP_ON;
	}
	/* The server's clock short of a scheduled slot: a moment's sleep. */
	if (r->info.why == BUSY_EARLY)
		return STEP_ON;
	/* A used slot ends even a wait: the run it was for is done. So does
	 * a scheduled slot that a run of an earlier one keeps (it is
	 * skipped), or that is paused. */
	if (o->no_wait || r->info.why == BUSY_SLOT_USED || r->info.why == BUSY_SKIPPED ||
	    (s->slot && r->info.why == BUSY_PAUSED)) {
		sup_skip(s, &r->info, o->no_wait ? SKIP_NO_WAIT : SKIP_NOW, 0, out);
		return STEP_END;
	}
	if (r->info.why == BUSY_PAUSED) {
		if (strcmp(r->info.paused_until, w->last_paused) != 0) {
			event_emit(&s->ev, EV_WAITING_PAUSED, &d);
			snprintf(w->last_paused, sizeof(w->last_paused), "%s", r->info.paused_until);
		}
		event_emit(&s->ev, EV_STANDBY_PAUSED, &d);
		return STEP_ON;
	}
	w->last_paused[0] = '\0';
	if (r->info.term != w->last_term || strcmp(r->info.holder, w->last_holder) != 0) {
		event_emit(&s->ev, EV_WAITING, &d);
		w->last_term = r->info.term;
		snprintf(w->last_holder, sizeof(w->last_holder), "%s", r->info.holder);
		/* Who leads, for the role's readers. */
		s->seen_term = r->info.term;
		snprintf(s->seen_leader, sizeof(s->seen_leader), "%s", r->info.holder);
		sup_role(s);
	}
	/* Connected and contending: READY=1 with the first answer. */
	event_emit(&s->ev, EV_STANDBY, &d);
	return STEP_ON;
}

/* What an attempt's answer means: the lease is ours, the run ends (a
 * skip, a fatal error), or the wait goes on. */
static enum step sup_judge(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	if (r->outcome == LEASE_OK) {
		/* A rerun keeps the first attempt's slot_term. */
		if (s->slot)
			s->slot->attempt = r->info.rerun ? (unsigned)(r->info.term - r->info.slot_term + 1) : 1;
		s->ev.term = r->info.term;
		s->ev.slot = r->info.slot;
		s->acquire_sent_at = r->sent_at;
		/* Before the acquisition's line: both happened before it. */
		if (r->fence_ended)
			event_emit(&s->ev, EV_FENCE_ENDED, &(struct event){.session = r->fence_ended});
		if (r->fence == FENCE_UNAVAILABLE)
			event_emit(&s->ev, EV_FENCE_UNAVAILABLE, &(struct event){.status = r->status, .err = r->err});
		return STEP_TAKEN;
	}
	if (r->outcome == LEASE_SLOTS_DIFFER) {
		/* Before anything runs: one count of slots per lease, or "at
		 * most N" means nothing. */
		event_emit(&s->ev, EV_SLOTS_DIFFER, &(struct event){.info = &r->info});
		out->kind = OUTCOME_USAGE;
		return STEP_END;
	}
	if (r->outcome != LEASE_BUSY)
		return sup_judge_error(s, w, r, out);
	if (w->refused && w->last_was_error)
		event_emit(&s->ev, EV_CONNECTIONS_BACK, NULL);
	w->last_was_error = false;
	w->backoff = 500 * USEC_PER_MSEC;
	w->last = r->info;
	s->looked_at = timing_now();
	return sup_judge_busy(s, w, r, out);
}

/* One attempt at the lease: OP, its answer, and what it means. */
static enum step sup_attempt(struct sup *s, struct waiting *w, enum worker_op op, struct worker_result *r,
			     struct outcome *out)
{
	enum step st;

	if (w->woken_acquired) {
		w->woken_acquired = false;
		*r = w->woken;
		return sup_judge(s, w, r, out);
	}
	if (worker_submit(s->w, op, 0, -1) < 0) {
		event_emit(&s->ev, EV_WORKER_BUSY, NULL);
		out->kind = OUTCOME_INTERNAL;
		return STEP_END;
	}
	st = sup_await(s, w, r, out);
	return st == STEP_ON ? sup_judge(s, w, r, out) : st;
}

/* Blocks on the leader's hint (WAIT, its then_acquire aside), or behind
 * the candidate above this one (WAIT->behind, its standby lock). *HOW:
 * woken (try the row at once), timed out or the one above gone (look
 * again), or nothing to block on (poll). */
enum block { BLOCK_WOKEN, BLOCK_TIMED_OUT, BLOCK_POLL };
static enum step sup_block_on_hint(struct sup *s, struct waiting *w, const struct worker_wait *wait, enum block *how,
				   struct outcome *out)
{
	struct worker_wait q = *wait;
	struct worker_result r;
	enum step st;

	*how = BLOCK_POLL;
	/* Woken, the worker goes on to the acquisition at once, as this
	 * loop would have it do (healthy, the lease's own hint). */
	q.then_acquire = sup_health_ok(s);
	if (worker_submit_wait(s->w, &q) < 0) {
		w->hints = false;
		return STEP_ON;
	}
	s->waiting_on_hint = true;
	/* The command's watcher, forked while the worker blocks, not between
	 * the acquisition and the command's start (a service's has its own
	 * life). */
	if (!s->o->service)
		(void)child_prewatch(&s->child, s->o->role_file);
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON)
		return st;
	s->waiting_on_hint = false;
	if (r.op == WORKER_ACQUIRE) {
		w->woken_acquired = true;
		w->woken = r;
		r.wake = r.woke;
	}
	switch (r.wake) {
	case HINT_LEADER_GONE:
	case HINT_HANDED_ON:
		*how = BLOCK_WOKEN;
		event_emit(&s->ev, r.wake == HINT_LEADER_GONE ? EV_WOKEN : EV_WOKEN_HANDED_ON,
			   &(struct event){.term = wait->term});
		break;
	case HINT_TIMED_OUT:
	case HINT_BEHIND_GONE:
		*how = BLOCK_TIMED_OUT;
		break;
	case HINT_OFF:
		event_emit(&s->ev, EV_NO_HINT, NULL);
		break;
	case HINT_POLL:
	case HINT_NONE:
	case HINT_KEPT:
		break;
	}
	return STEP_ON;
}

/* --preempt: when this candidate may revoke the holder's term in INFO
 * (CLOCK_BOOTTIME us), having waited, healthy, for DELAY (longer after
 * failed promotes: backoff.h); 0 when it may not (no --preempt, a holder
 * of no lower priority, the term tried already, a lease not held). */
static int64_t sup_preempt_due(const struct sup *s, const struct waiting *w, const struct lease_info *info)
{
	const struct options *o = s->o;

	if (!o->preempt || info->why != BUSY_HELD || info->expires_in_us <= 0 || info->term == w->preempted_term ||
	    info->holder_priority >= o->priority || !s->standby_written)
		return 0;
	return (w->healthy_since > w->start ? w->healthy_since : w->start) +
	       backoff_preempt(o->preempt_us, o->retry_us, s->svc.failed_promotes);
}

/* --preempt, when due: the holder's term revoked (one statement); then
 * the wait goes on as any, and the release wakes it. */
static enum step sup_preempt(struct sup *s, struct waiting *w, const struct lease_info *info, struct outcome *out)
{
	int64_t due = sup_preempt_due(s, w, info);
	struct worker_result r;
	enum step st;

	if (due == 0 || timing_now() < due || !sup_health_ok(s) ||
	    worker_submit_preempt(s->w, info->term, info->holder) < 0)
		return STEP_ON;
	/* Once a term: a holder whose priority is not below ours (its row
	 * changed), or a term just over, is not asked again. */
	w->preempted_term = info->term;
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON)
		return st;
	if (r.outcome == LEASE_OK)
		event_emit(&s->ev, EV_PREEMPTING,
			   &(struct event){.term = info->term, .by = info->holder, .priority = info->holder_priority});
	return STEP_ON;
}

/* The lease free but another candidate's for a moment: behind the
 * candidate above, whose end (it took the lease and is done with it)
 * wakes this one, up to the moment's end; else a poll. */
static enum step sup_await_preferred(struct sup *s, struct waiting *w, const struct worker_result *r, int64_t poll,
				     struct outcome *out)
{
	int64_t us = r->info.preferred_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC);
	enum block how;
	enum step st;

	if (w->give_up)
		us = sup_min64(us, w->give_up - timing_now());
	if (w->hints && r->info.above[0] && us > 0) {
		st = sup_block_on_hint(
		    s, w, &(struct worker_wait){r->info.slot, r->info.term, r->info.above, us, false}, &how, out);
		if (st != STEP_ON || how != BLOCK_POLL)
			return st;
	}
	return sup_sleep(s, w, sup_min64(poll, us > 0 ? us : 0), out);
}

/* The block until the lease held as INFO may change: not a moment before its
 * expiry, and a little after it (a follower woken by a dead leader's hint
 * takes the lease then, and the others find it taken). The block is
 * bounded by the follower's ttl (a holder with a longer one is looked at
 * once a ttl), --wait-timeout, and --preempt's moment. The top candidate
 * blocks on the hint, one below it behind the candidate above
 * (hint_wait_behind), whom a hand-over to it leaves asleep. */
static struct worker_wait sup_change_wait(struct sup *s, const struct waiting *w, const struct lease_info *info,
					  int64_t poll)
{
	const struct options *o = s->o;
	int64_t us = info->expires_in_us + sup_jitter(s, 100 * USEC_PER_MSEC, 500 * USEC_PER_MSEC);

	us = sup_min64(us, o->timing.ttl_us + USEC_PER_SEC);
	/* A named lock has one holder, so each slot has a hint of its own,
	 * and a waiter blocks on the one that expires first: a release of
	 * that slot wakes it at once, and another slot that comes free is
	 * seen at the next look, a --retry-interval on. */
	if (o->slots > 1)
		us = sup_min64(us, poll);
	if (w->give_up)
		us = sup_min64(us, w->give_up - timing_now());
	if (sup_preempt_due(s, w, info) > 0)
		us = sup_min64(us, sup_preempt_due(s, w, info) - timing_now());
	return (struct worker_wait){info->slot, info->term, info->above[0] ? info->above : NULL, us > 0 ? us : 0,
				    false};
}

/* Waits until the lease can change, and says how to try next (*OP):
 *   - after an error: back off, then look;
 *   - paused: sleep to the pause's end, never longer than --retry-interval;
 *   - holding a dead leader's hint: sleep to its expiry, then look;
 *   - with the hint: block on it up to the expiry the row reported (plus
 *     jitter); woken, try the row at once; timed out, look again;
 *   - without it: poll, one look a --retry-interval (or at the expiry). */
static enum step sup_await_change(struct sup *s, struct waiting *w, const struct worker_result *r, enum worker_op *op,
				  struct outcome *out)
{
	const struct options *o = s->o;
	int64_t poll = sup_jitter(s, o->retry_us * 19 / 20, o->retry_us * 21 / 20);
	int64_t past_expiry = r->info.expires_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC);
	enum block how;
	enum step st;

	*op = WORKER_LOOK;
	if (r->outcome == LEASE_ERROR)
		return sup_sleep(s, w, w->pause, out);
	if (r->info.why == BUSY_PREFERRED)
		return sup_await_preferred(s, w, r, poll, out);
	if (r->info.why == BUSY_EARLY) {
		*op = WORKER_ACQUIRE;
		return sup_sleep(s, w, s->slot->at_us - r->info.now_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC), out);
	}
	if (r->info.why == BUSY_PAUSED)
		return sup_sleep(s, w, sup_min64(poll, r->info.paused_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC)),
				 out);
	if (r->wake == HINT_KEPT)
		/* A leader that died with the lease unreleased left us its
		 * hint: we keep it to the expiry, and the others keep blocking
		 * behind us. The look that follows gives the hint back unless
		 * it wins. */
		return sup_sleep(s, w, o->slots > 1 ? sup_min64(poll, past_expiry) : past_expiry, out);
	if (w->hints) {
		const struct worker_wait wait = sup_change_wait(s, w, &r->info, poll);

		st = sup_block_on_hint(s, w, &wait, &how, out);
		if (st != STEP_ON)
			return st;
		if (how == BLOCK_WOKEN)
			*op = WORKER_ACQUIRE;
		if (how != BLOCK_POLL)
			return STEP_ON;
	}
	/* Polling: jittered so that followers do not stampede, and just past
	 * the expiry when that comes first. */
	return sup_sleep(s, w, r->info.expires_in_us >= 0 ? sup_min64(poll, past_expiry) : poll, out);
}

/* A waiter's row in the standbys' table, for --status (standby.h): once a
 * wait, after its first look found the lease held. A table that is not
 * there (not --init'ed by this version, or no grant) is not asked again;
 * a database error is the next look's to meet. */
static enum step sup_standby(struct sup *s, struct waiting *w, struct outcome *out)
{
	struct worker_result r;
	bool healthy = sup_health_ok(s);
	enum step st;

	/* Without the hint (Galera, several hosts) a named lock proves nothing
	 * across servers, and Galera refuses it: no row. */
	if (!w->hints)
		s->standby_off = true;
	if (s->standby_written || s->standby_off || worker_submit_standby(s->w, healthy) < 0)
		return STEP_ON;
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON)
		return st;
	/* A check that changed the health while the row went out has the
	 * row written again (it said the health of before). */
	s->standby_written = r.outcome == LEASE_OK && healthy == sup_health_ok(s);
	/* Asked again only after a lost connection: anything else (no table,
	 * no grant, a server that refuses named locks) would cost a failed
	 * statement at every look. */
	s->standby_off = r.outcome != LEASE_OK && r.status != DB_UNAVAILABLE;
	return STEP_ON;
}

/* Not competing while --health-cmd does not pass: waits until it does,
 * ending on a signal or at --wait-timeout. With --no-wait a first check
 * that fails is a skip, as a held lease is. */
static enum step sup_health_wait(struct sup *s, struct waiting *w, struct outcome *out)
{
	event_emit(&s->ev, EV_HEALTH_WAIT, NULL);
	/* Listed, as unhealthy, while it does not compete. */
	if (sup_standby(s, w, out) == STEP_END)
		return STEP_END;
	while (!sup_health_ok(s)) {
		int woke = sup_poll(s, w->give_up);
		if (sup_wait_ended(s, woke, out))
			return STEP_END;
		if (s->o->no_wait && !s->health.running && s->health.fails > 0) {
			event_emit(&s->ev, EV_HEALTH_FAILING, &(struct event){.failures = s->health.fails});
			out->kind = OUTCOME_BUSY;
			return STEP_END;
		}
		if (w->give_up && timing_now() >= w->give_up)
			return sup_wait_timed_out(s, w, out);
	}
	w->healthy_since = timing_now();
	return STEP_ON;
}

/* --spread: after the candidates of the same moment have written their
 * rows (SPREAD_GATHER_US), the host that spread.h chooses goes first, the
 * others SPREAD_DEFER_US later: a --no-wait run then finds the lease
 * taken, a waiting one waits as any. */
#define SPREAD_GATHER_US (500 * USEC_PER_MSEC)
#define SPREAD_DEFER_US	 (500 * USEC_PER_MSEC)
static enum step sup_spread(struct sup *s, struct waiting *w, struct outcome *out)
{
	struct worker_result r;
	enum step st;

	if (!s->standby_written || (w->give_up && w->give_up - timing_now() < 2 * SPREAD_GATHER_US))
		return STEP_ON;
	st = sup_sleep(s, w, SPREAD_GATHER_US, out);
	if (st != STEP_ON || worker_submit(s->w, WORKER_SPREAD, 0, -1) < 0)
		return st;
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON || r.outcome != LEASE_BUSY)
		return st;
	event_emit(&s->ev, EV_SPREAD_DEFERRED, &(struct event){.us = SPREAD_DEFER_US});
	return sup_sleep(s, w, SPREAD_DEFER_US, out);
}

/* Acquires the lease, waiting for it as the options say. Returns true when
 * held (s->ev.term, deadlines set); false with OUT filled otherwise. */
bool sup_acquire(struct sup *s, struct outcome *out)
{
	const struct options *o = s->o;
	struct waiting w = {.first = true, .hints = !o->no_wake_hint, .backoff = 500 * USEC_PER_MSEC};
	/* The first attempt goes straight at the row; later ones look first. */
	enum worker_op op = WORKER_ACQUIRE;
	struct worker_result r;

	w.start = timing_now();
	w.give_up = s->slot ? s->slot->give_up : o->wait_timeout_us >= 0 ? w.start + o->wait_timeout_us : 0;
	w.last.why = BUSY_HELD;
	/* A candidate with a claim (--priority, --preempt, --spread) writes
	 * its row before its first attempt: its claim counts from the start,
	 * and --spread sees who else contends. */
	if ((o->priority_given || o->preempt || o->spread) && !o->no_wake_hint && o->dsn.nhosts <= 1) {
		if (sup_standby(s, &w, out) == STEP_END || (o->spread && sup_spread(s, &w, out) == STEP_END))
			return false;
		/* Still the first attempt: -w 0 gets its answer. */
		w.first = true;
	}
	for (;;) {
		/* An acquisition sent on the wake-up is judged whatever the
		 * health now, as one in flight when a check fails. */
		if (!w.woken_acquired && !sup_health_ok(s) && sup_health_wait(s, &w, out) == STEP_END)
			return false;
		switch (sup_attempt(s, &w, op, &r, out)) {
		case STEP_TAKEN:
			return true;
		case STEP_END:
			return false;
		case STEP_ON:
			break;
		}
		if (r.outcome == LEASE_BUSY && sup_standby(s, &w, out) == STEP_END)
			return false;
		if (r.outcome == LEASE_BUSY && sup_preempt(s, &w, &r.info, out) == STEP_END)
			return false;
		if (w.give_up && timing_now() >= w.give_up) {
			sup_wait_timed_out(s, &w, out);
			return false;
		}
		if (sup_await_change(s, &w, &r, &op, out) == STEP_END)
			return false;
	}
}
