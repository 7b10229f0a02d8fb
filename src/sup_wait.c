/* 1. Waiting for the lease: ask the worker to acquire; on "busy" block on
 * the holder's wake-up hint until it lets go or dies, or until the expiry
 * the row reported, whichever is first (without the hint: poll, one look a
 * --retry-interval); then look again. A signal (TERM, INT, HUP, QUIT) or
 * --wait-timeout ends the wait; nothing here blocks on the database. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "log.h"
#include "sdnotify.h"
#include "sup.h"
#include "tlspolicy.h"
#include "worker.h"

/* A signal that ends the wait (TERM, INT, HUP, QUIT) among those EV
 * brought: fills OUT and returns true. */
static bool sup_wait_ended(struct sup *s, int ev, struct outcome *out)
{
	int sig;

	if (!(ev & EV_SIGNAL) || !(sig = sup_signals_while_waiting(s)))
		return false;
	log_info("got SIG%s while waiting; exiting without running the command", sup_signame(sig));
	out->kind = OUTCOME_SIGNALLED;
	out->signo = sig;
	return true;
}

/* A --once-per slot as people read it: UTC, seconds, a fraction only when
 * the period has one. */
static void fmt_slot(char *buf, size_t len, int64_t slot_us)
{
	time_t t = (time_t)(slot_us / USEC_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	if (slot_us % USEC_PER_SEC && n < len)
		snprintf(buf + n, len - n, ".%06lld", (long long)(slot_us % USEC_PER_SEC));
}

/* A pause's end as the row has it; without --for it lasts until --resume. */
static const char *pause_until(const struct lease_info *info)
{
	return strncmp(info->paused_until, "9999-", 5) == 0 ? "--resume" : info->paused_until;
}

/* The run skips: says why in one line, to the log (the JSON event names the
 * reason: busy, paused or slot_used) and to the receivers. */
static void sup_skip(struct sup *s, const struct lease_info *info, const char *how, struct outcome *out)
{
	const char *lease = s->o->lease;
	char a[32];

	switch (info->why) {
	case BUSY_SLOT_USED:
		fmt_slot(a, sizeof(a), info->last_slot_us);
		if (info->slot_term == info->term && info->holder[0])
			log_event(LOG_NOTICE, "slot_used",
				  "lease %s already ran for the %s slot, term %" PRIu64 ", on %s", lease, a,
				  info->slot_term, info->holder);
		else
			log_event(LOG_NOTICE, "slot_used", "lease %s already ran for the %s slot, term %" PRIu64, lease,
				  a, info->slot_term);
		notify_event(s->n, "slot_used", info->slot_term, -1, 0);
		break;
	case BUSY_PAUSED:
		log_event(LOG_NOTICE, "paused",
			  "lease %s is paused by %s until %s (database time, UTC); not running%s; 'leaderrun --resume "
			  "%s' ends the pause",
			  lease, info->paused_by[0] ? info->paused_by : "an operator", pause_until(info), how, lease);
		notify_event(s->n, "paused", info->term, -1, 0);
		break;
	case BUSY_HELD:
		sup_fmt_dur(a, sizeof(a), info->expires_in_us);
		log_event(LOG_INFO, "busy", "held by %s (term %" PRIu64 ") for another %s; not running%s",
			  info->holder[0] ? info->holder : "another holder", info->term, a, how);
		notify_event(s->n, "busy", info->term, -1, 0);
		break;
	}
	out->kind = OUTCOME_BUSY;
}

/* What a contender knows while it waits. */
struct waiting {
	int64_t start, give_up; /* give_up 0: no --wait-timeout */
	int64_t backoff;	/* the longest next pause after a database error */
	int64_t pause;		/* the pause after the last error */
	bool first;		/* the first attempt always gets its answer: -w 0 tries once */
	bool hints;		/* block on the wake-up hint; false: poll the row */
	bool last_was_error;
	bool refused;	     /* "too many connections" said once */
	uint64_t woken_for;  /* the term whose dead leader's hint woke us; 0: none */
	unsigned woken_slot; /* and its slot */
	struct lease_info last;
	char last_holder[LEASE_HOLDER_MAX + 1], last_paused[32];
	uint64_t last_term;
};

enum step { STEP_TAKEN, STEP_END, STEP_ON };

/* --wait-timeout ran out: says so, with the row as last seen. */
static enum step sup_gave_up(struct sup *s, const struct waiting *w, struct outcome *out)
{
	char a[32], b[32], how[128];

	sup_fmt_dur(a, sizeof(a), s->o->wait_timeout_us);
	sup_fmt_dur(b, sizeof(b), timing_now() - w->start);
	if (w->last_was_error) {
		log_error("database still unavailable after --wait-timeout %s", a);
		out->kind = OUTCOME_UNAVAILABLE;
	} else {
		snprintf(how, sizeof(how), " (not acquired within --wait-timeout %s; waited %s)", a, b);
		sup_skip(s, &w->last, how, out);
	}
	return STEP_END;
}

/* Waits for the worker's answer to what was just submitted, ending the
 * wait on a signal or at --wait-timeout. */
static enum step sup_await(struct sup *s, struct waiting *w, struct worker_result *r, struct outcome *out)
{
	for (;;) {
		int ev = sup_poll(s, w->first ? 0 : w->give_up);
		if (sup_wait_ended(s, ev, out))
			return STEP_END;
		if ((ev & EV_WORKER) && sup_take(s, r) == 0)
			break;
		if (!w->first && w->give_up && timing_now() >= w->give_up)
			return sup_gave_up(s, w, out);
	}
	w->first = false;
	/* Galera, or a DSN with several hosts: no named-lock hint. */
	if (r->hints_off)
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
		int ev = sup_poll(s, wake);
		if (sup_wait_ended(s, ev, out))
			return STEP_END;
		if (timing_now() >= wake)
			break;
	}
	if (w->give_up && timing_now() >= w->give_up)
		return sup_gave_up(s, w, out);
	return STEP_ON;
}

/* A database error while waiting: fatal ones end the run, the rest are
 * retried with backoff. A server out of connections (1040) is a wait, said
 * once. */
static enum step sup_judge_error(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	const struct options *o = s->o;
	bool refused = strstr(r->err, "(error 1040)") || strstr(r->err, "(error 1203)");
	char a[32];

	switch (r->status) {
	case DB_DENIED:
		log_error("access denied: %s; check the grants (sql/grants.sql) and that table %s exists (leaderrun "
			  "--init)",
			  r->err, o->table);
		out->kind = OUTCOME_DENIED;
		return STEP_END;
	case DB_UNTRUSTED:
		/* Not "unavailable, retry later": a standby that waited on
		 * would hide a setting (or an attack) that no retry fixes. */
		log_error("%s: %s; %s", dberr_name(r->status), r->err, TLSPOLICY_WAYS_OUT);
		out->kind = OUTCOME_DENIED;
		return STEP_END;
	case DB_NO_TABLE:
		log_error("lease table %s missing or not as expected: %s; run 'leaderrun --init' (it also upgrades an "
			  "older table) or apply sql/",
			  o->table, r->err);
		out->kind = OUTCOME_NO_TABLE;
		return STEP_END;
	case DB_NO_DATABASE:
		log_error("%s; name an existing database in the DSN (mysql://USER@HOST/DB) or in --table DB.TABLE",
			  r->err);
		out->kind = OUTCOME_NO_TABLE;
		return STEP_END;
	default:
		break;
	}
	if (o->no_wait) {
		log_error("%s: %s", dberr_name(r->status), r->err);
		out->kind = OUTCOME_UNAVAILABLE;
		return STEP_END;
	}
	w->last_was_error = true;
	s->looked_at = 0;
	sdnotify_status(s->sd, false, "standby: %s; retrying", dberr_name(r->status));
	w->pause = sup_jitter(s, w->backoff / 2, w->backoff);
	w->backoff = sup_min64(w->backoff * 2, 30 * USEC_PER_SEC);
	sup_fmt_dur(a, sizeof(a), w->pause);
	if (refused && !w->refused)
		log_warn("the server has no connection to spare (%s); waiting, and trying again with backoff up to "
			 "30s (see max_connections in leaderrun(1))",
			 r->err);
	else if (refused)
		log_debug("still refused: %s", r->err);
	else
		log_warn("%s: %s; retrying in %s", dberr_name(r->status), r->err, a);
	w->refused = w->refused || refused;
	return STEP_ON;
}

/* What an attempt's answer means: the lease is ours, the run ends (a
 * skip, a fatal error), or the wait goes on. */
static enum step sup_judge(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	const struct options *o = s->o;
	char a[32];

	if (r->outcome == LEASE_OK) {
		s->term = r->info.term;
		s->slot = r->info.slot;
		s->acquire_sent_at = r->sent_at;
		return STEP_TAKEN;
	}
	if (r->outcome == LEASE_SLOTS_DIFFER) {
		/* Before anything runs: one count of slots per lease, or "at
		 * most N" means nothing. */
		log_error("this lease runs with --slots %u (%u held now), and this run asked for --slots %u: give "
			  "every contender of %s the same --slots (it can change while no slot is held)",
			  r->info.slots, r->info.held, o->slots, o->lease);
		out->kind = OUTCOME_USAGE;
		return STEP_END;
	}
	if (r->outcome != LEASE_BUSY)
		return sup_judge_error(s, w, r, out);
	if (w->refused && w->last_was_error)
		log_info("the server takes connections again");
	w->last_was_error = false;
	w->backoff = 500 * USEC_PER_MSEC;
	w->last = r->info;
	s->looked_at = timing_now();
	/* A used slot ends even a wait: the run it was for is done. */
	if (o->no_wait || r->info.why == BUSY_SLOT_USED) {
		sup_skip(s, &r->info, o->no_wait ? " (--no-wait)" : "", out);
		return STEP_END;
	}
	if (r->info.why == BUSY_PAUSED) {
		if (strcmp(r->info.paused_until, w->last_paused) != 0) {
			log_event(LOG_INFO, "waiting", "waiting: lease paused by %s until %s",
				  r->info.paused_by[0] ? r->info.paused_by : "an operator", pause_until(&r->info));
			snprintf(w->last_paused, sizeof(w->last_paused), "%s", r->info.paused_until);
		}
		sdnotify_status(s->sd, true, "standby: lease %s paused by %s until %s", o->lease,
				r->info.paused_by[0] ? r->info.paused_by : "an operator", pause_until(&r->info));
		return STEP_ON;
	}
	w->last_paused[0] = '\0';
	if (r->info.term != w->last_term || strcmp(r->info.holder, w->last_holder) != 0) {
		sup_fmt_dur(a, sizeof(a), r->info.expires_in_us);
		log_event(LOG_INFO, "waiting", "waiting: held by %s (term %" PRIu64 "), expires in %s", r->info.holder,
			  r->info.term, a);
		w->last_term = r->info.term;
		snprintf(w->last_holder, sizeof(w->last_holder), "%s", r->info.holder);
	}
	/* Connected and contending: READY=1 with the first answer. */
	sdnotify_status(s->sd, true, "standby: waiting for lease %s held by %s (term %" PRIu64 ")", o->lease,
			r->info.holder[0] ? r->info.holder : "another holder", r->info.term);
	return STEP_ON;
}

/* One attempt at the lease: OP, its answer, and what it means. */
static enum step sup_attempt(struct sup *s, struct waiting *w, enum worker_op op, struct worker_result *r,
			     struct outcome *out)
{
	enum step st;

	if (worker_submit(s->w, op, w->woken_for, -1) < 0) {
		log_error("internal error: database worker busy");
		out->kind = OUTCOME_INTERNAL;
		return STEP_END;
	}
	st = sup_await(s, w, r, out);
	return st == STEP_ON ? sup_judge(s, w, r, out) : st;
}

/* Blocks on the leader's hint for up to US. *HOW: woken (try the row at
 * once), timed out (look again), or nothing to block on (poll). */
enum block { BLOCK_WOKEN, BLOCK_TIMED_OUT, BLOCK_POLL };
static enum step sup_block_on_hint(struct sup *s, struct waiting *w, unsigned slot, uint64_t term, int64_t us,
				   enum block *how, struct outcome *out)
{
	struct worker_result r;
	enum step st;

	*how = BLOCK_POLL;
	if (worker_submit_wait(s->w, slot, term, us) < 0) {
		w->hints = false;
		return STEP_ON;
	}
	s->waiting_on_hint = true;
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON)
		return st;
	s->waiting_on_hint = false;
	if (r.hints_off) {
		log_debug("the wake-up hint does not work here; polling");
		return STEP_ON;
	}
	/* A leader that died with the lease unreleased leaves us its hint:
	 * we keep it to the expiry (worker_keeps_hint), and the others keep
	 * blocking behind us. */
	w->woken_for = r.woken && r.leader_gone ? term : 0;
	w->woken_slot = slot;
	*how = r.woken ? BLOCK_WOKEN : r.hint_unheld ? BLOCK_POLL : BLOCK_TIMED_OUT;
	if (r.woken)
		log_debug("woken by the hint of term %" PRIu64 "%s", term, r.leader_gone ? "" : " (handed on)");
	return STEP_ON;
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
	int64_t poll = sup_jitter(s, o->retry_us * 19 / 20, o->retry_us * 21 / 20), us;
	int64_t past_expiry = r->info.expires_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC);
	enum block how;
	enum step st;

	*op = WORKER_LOOK;
	if (r->outcome == LEASE_ERROR) {
		w->woken_for = 0;
		return sup_sleep(s, w, w->pause, out);
	}
	if (r->info.why == BUSY_PAUSED)
		return sup_sleep(s, w, sup_min64(poll, r->info.paused_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC)),
				 out);
	if (r->hint_held && w->woken_for == r->info.term && w->woken_slot == r->info.slot) {
		/* The look that follows gives the hint back unless it wins. */
		w->woken_for = 0;
		return sup_sleep(s, w, o->slots > 1 ? sup_min64(poll, past_expiry) : past_expiry, out);
	}
	w->woken_for = 0;
	if (w->hints) {
		/* Not a moment before the expiry, and a little after it: a
		 * follower woken by a dead leader's hint takes the lease then,
		 * and the others find it taken. The block is bounded by the
		 * follower's ttl (a holder with a longer one is looked at once
		 * a ttl), and --wait-timeout. */
		us = r->info.expires_in_us + sup_jitter(s, 100 * USEC_PER_MSEC, 500 * USEC_PER_MSEC);
		us = sup_min64(us, o->timing.ttl_us + USEC_PER_SEC);
		/* A named lock has one holder, so each slot has a hint of its
		 * own, and a waiter blocks on the one that expires first: a
		 * release of that slot wakes it at once, and another slot that
		 * comes free is seen at the next look, a --retry-interval on. */
		if (o->slots > 1)
			us = sup_min64(us, poll);
		if (w->give_up)
			us = sup_min64(us, w->give_up - timing_now());
		st = sup_block_on_hint(s, w, r->info.slot, r->info.term, us > 0 ? us : 0, &how, out);
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

/* Acquires the lease, waiting for it as the options say. Returns true when
 * held (s->term, deadlines set); false with OUT filled otherwise. */
bool sup_acquire(struct sup *s, struct outcome *out)
{
	const struct options *o = s->o;
	struct waiting w = {.first = true, .hints = !o->no_wake_hint, .backoff = 500 * USEC_PER_MSEC};
	/* The first attempt goes straight at the row; later ones look first. */
	enum worker_op op = WORKER_ACQUIRE;
	struct worker_result r;

	w.start = timing_now();
	w.give_up = o->wait_timeout_us >= 0 ? w.start + o->wait_timeout_us : 0;
	w.last.why = BUSY_HELD;
	for (;;) {
		switch (sup_attempt(s, &w, op, &r, out)) {
		case STEP_TAKEN:
			return true;
		case STEP_END:
			return false;
		case STEP_ON:
			break;
		}
		if (w.give_up && timing_now() >= w.give_up) {
			sup_gave_up(s, &w, out);
			return false;
		}
		if (sup_await_change(s, &w, &r, &op, out) == STEP_END)
			return false;
	}
}
