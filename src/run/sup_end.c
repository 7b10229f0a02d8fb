/* 5. The end of a run, whatever ended it, in one function (sup_end_run):
 * the run's last events (the history's row, the metrics and the
 * notifications follow them), the release of what the run holds, and the
 * run's row on the lease's connection where the release could not carry
 * it. Giving the lease back waits until nothing is left of the command;
 * when the wait ended without running anything, an acquire still in flight
 * may have taken the lease, and that is given back. Never past the lease's
 * deadline (it is no longer ours to give) nor longer than a renew
 * interval: if the database does not answer, the lease simply expires. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "base/duration.h"
#include "report/history.h"
#include "sup.h"
#include "worker.h"

static void sup_release(struct sup *s)
{
	/* Not a moment past the deadline (the lease is no longer ours to
	 * give), and not longer than a renew interval: if the database does
	 * not answer, the lease simply expires. */
	int64_t give_up = sup_min64(hold_deadline(&s->hold, &s->o->timing), timing_now() + s->o->timing.renew_us);
	int64_t sent;
	struct worker_result r;

	/* A renew may still be in flight: let it land (it can only extend).
	 * A job's watcher is not kept through that wait, which may last to
	 * the deadline, its own (a service's guards the service on). */
	if (worker_busy(s->w) && !s->o->service)
		child_unwatch(&s->child);
	while (worker_busy(s->w)) {
		int woke = sup_poll(s, give_up);
		if (woke & WOKE_SIGNAL) {
			sup_signals_while_waiting(s);
		}
		if ((woke & WOKE_WORKER) && sup_take(s, &r) == 0 && r.op == WORKER_RENEW && r.outcome == LEASE_OK &&
		    r.sent_at > s->hold.sent_at)
			s->hold.sent_at = r.sent_at;
		if (timing_now() >= give_up) {
			event_emit(&s->ev, EV_RELEASE_LATE, NULL);
			return;
		}
	}
	/* A scheduled run records an exit only when its command ended by
	 * itself: a NULL says that the slot's attempt did not end, and
	 * --catch-up runs it again (stmts.def, acquire_rerun). */
	if (worker_submit(s->w, WORKER_RELEASE, s->ev.term, s->slot && !s->slot->ended ? -1 : s->ev.exit_status) < 0)
		return;
	sent = timing_wall();
	/* A job's watcher, kept past the proof that nothing is left
	 * (sup_nothing_left), ends while the release is on the wire. */
	if (!s->o->service)
		child_unwatch(&s->child);
	for (;;) {
		int woke = sup_poll(s, give_up);
		if (woke & WOKE_SIGNAL)
			sup_signals_while_waiting(s);
		if ((woke & WOKE_WORKER) && sup_take(s, &r) == 0)
			break;
		if (timing_now() >= give_up) {
			worker_abort(s->w);
			event_emit(&s->ev, EV_RELEASE_LATE, NULL);
			return;
		}
	}
	if (r.outcome == LEASE_OK) {
		/* The lease was this run's until at least the release went. */
		if (s->slot)
			s->slot->released_us = sent;
		event_emit(&s->ev, EV_RELEASED, NULL);
	} else if (r.outcome == LEASE_LOST)
		event_emit(&s->ev, EV_RELEASE_EXPIRED, NULL);
	else
		event_emit(&s->ev, EV_RELEASE_FAILED, &(struct event){.status = r.status, .err = r.err});
}

/* Leaving without running the command (a signal, --wait-timeout) while an
 * acquire is in flight: it may have taken the lease. Wait briefly for it
 * and give back what it took, so that nobody waits a whole ttl for a
 * holder that never ran anything. */
static void sup_abandon_acquire(struct sup *s)
{
	int64_t give_up = timing_now() + sup_min64(s->o->timing.renew_us, 500 * USEC_PER_MSEC);
	struct worker_result r;

	/* Blocked on the hint, its acquisition called off before it went:
	 * nothing to give back. */
	if (s->waiting_on_hint && !worker_wait_no_further(s->w)) {
		worker_abort(s->w);
		return;
	}

	while (worker_busy(s->w)) {
		int woke = sup_poll(s, give_up);
		if (woke & WOKE_SIGNAL)
			sup_signals_while_waiting(s);
		if ((woke & WOKE_WORKER) && sup_take(s, &r) == 0) {
			if ((r.op == WORKER_ACQUIRE || r.op == WORKER_LOOK) && r.outcome == LEASE_OK) {
				s->ev.term = r.info.term;
				s->hold.sent_at = r.sent_at;
				event_emit(&s->ev, EV_ACQUIRE_IN_FLIGHT, NULL);
				sup_release(s);
			}
			return;
		}
		if (timing_now() >= give_up) {
			worker_abort(s->w);
			return;
		}
	}
}

/* The wait ended without running the command: STOPPING=1, saying why. */
static void sup_not_run(struct sup *s, const struct outcome *out)
{
	switch (out->kind) {
	case OUTCOME_SIGNALLED:
		event_emit(&s->ev, EV_QUIT_SIGNALLED, &(struct event){.signo = out->signo});
		break;
	case OUTCOME_BUSY:
		event_emit(&s->ev, EV_QUIT_BUSY, NULL);
		break;
	case OUTCOME_UNAVAILABLE:
		event_emit(&s->ev, EV_QUIT_UNAVAILABLE, NULL);
		break;
	default:
		event_emit(&s->ev, EV_QUIT_FAILED, NULL);
		break;
	}
}

/* The history's event of a revoked term: who revoked it. */
static enum event_id sup_run_revoked(const struct sup *s)
{
	if (s->handover == HANDOVER_PREEMPTED)
		return EV_RUN_PREEMPTED;
	if (s->handover == HANDOVER_SWITCHED_OVER)
		return EV_RUN_SWITCHED_OVER;
	return EV_RUN_REVOKED;
}

/* How the run ended, for the history: lost, revoked, or the command's
 * own end. */
static void sup_history_end(struct sup *s)
{
	const struct event d = {.wstatus = s->child_wstatus};
	enum hold_lease l = s->hold.lease;

	if (l == HOLD_LOST || l == HOLD_LATE)
		event_emit(&s->ev, EV_RUN_LOST, &d);
	else if (l == HOLD_REVOKED)
		event_emit(&s->ev, sup_run_revoked(s), &d);
	else if (s->hold.timed_out)
		event_emit(&s->ev, EV_RUN_TIMED_OUT, &d);
	else if (WIFSIGNALED(d.wstatus))
		event_emit(&s->ev, EV_RUN_SIGNALED, &d);
	else
		event_emit(&s->ev, EV_RUN_EXITED, &d);
}

/* After the reap: the release, and the run's outcome. */
static void sup_finish(struct sup *s, struct outcome *out)
{
	enum hold_lease l = s->hold.lease;

	if (l == HOLD_LOST || l == HOLD_LATE || l == HOLD_REVOKED) {
		/* Renewing may have recovered while the command shut down; give
		 * back what is still ours. A --max-runtime stop that the lease's
		 * loss overtook ends here too: 76 says the lease went. */
		if (l != HOLD_LOST)
			sup_release(s);
		out->kind = OUTCOME_LOST;
		event_emit(&s->ev, l == HOLD_REVOKED ? EV_STOPPED_REVOKED : EV_STOPPED_LOST, NULL);
		return;
	}
	/* The lease was ours throughout: a normal release, recording the
	 * command's own status (--min-hold applies: it ran). */
	sup_release(s);
	/* Leading ended early, the lease still ours: a service killed because
	 * its demote failed or ran late, or a job stopped for --health-cmd. */
	if (s->svc.killed || s->health_down) {
		out->kind = OUTCOME_LOST;
		event_emit(&s->ev, s->svc.killed ? EV_STOPPED_DEMOTE : EV_STOPPED_UNHEALTHY, NULL);
		return;
	}
	if (s->hold.timed_out) {
		out->kind = OUTCOME_TIMED_OUT;
		event_emit(&s->ev, EV_FINISHED_TIMED_OUT, NULL);
	} else {
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s->child_wstatus;
		event_emit(&s->ev, EV_FINISHED, NULL);
	}
}

/* The run's row, where the release did not carry it (a statement at a
 * time, or no release: a lost lease), on the lease's connection, which has
 * nothing left to do and costs no connect; bounded like any history
 * write. A row still not written, history_finish writes on the history's
 * own connection. */
static void sup_history_row(struct sup *s)
{
	int64_t until = timing_now() + HISTORY_TIMEOUT_S * USEC_PER_SEC;

	if (history_parked(s->ev.h) && worker_wait_idle(s->w, until) == 0 &&
	    worker_submit_call(s->w, history_write_parked, s->ev.h) == 0)
		(void)worker_wait_idle(s->w, until);
}

/* A service's next wait needs the worker: an answer left untaken (a
 * renew's, after the release gave up waiting for it) is taken, and a
 * statement still in flight (a renew, or the release, on a connection cut
 * off) is cut, and its answer taken. The worker's statements are bounded
 * by its connection's timeouts; this waits for that, unless a signal or
 * the service's end comes first. The worker's pipe may have been drained
 * already (worker_wait_idle): the answer is looked for at every wake-up,
 * and a wake-up comes every 100 ms at least. */
static void sup_worker_settle(struct sup *s)
{
	struct worker_result r;
	bool cut = false;

	while (worker_busy(s->w) && !s->svc.stop_sig && s->ev.exit_status < 0) {
		if (sup_take(s, &r) == 0)
			continue;
		if (!cut) {
			worker_abort(s->w);
			cut = true;
		}
		if (sup_poll(s, timing_now() + 100 * USEC_PER_MSEC) & WOKE_SIGNAL)
			sup_signals_while_waiting(s);
	}
}

void sup_end_term(struct sup *s)
{
	const struct event d = {.wstatus = -1};
	enum hold_lease l = s->hold.lease;

	event_emit(&s->ev,
		   l == HOLD_REVOKED ? sup_run_revoked(s)
		   : l == HOLD_LATE  ? EV_RUN_LOST
				     : EV_RUN_STEPPED_DOWN,
		   &d);
	if (l != HOLD_LOST)
		sup_release(s);
	sup_history_row(s);
	sup_worker_settle(s);
	s->leading = false;
	s->seen_leader[0] = '\0';
	/* The release let go of its lock too: a standby again, said again. */
	s->standby_written = false;
	s->handover = HANDOVER_RELEASED;
	s->handover_by[0] = '\0';
	sup_role(s);
}

/* A database error that no wait fixes: the run ends, saying why. */
bool sup_fatal(struct sup *s, const struct worker_result *r, struct outcome *out)
{
	const struct event d = {.status = r->status, .err = r->err};

	switch (r->status) {
	case DB_DENIED:
		event_emit(&s->ev, EV_DENIED, &d);
		out->kind = OUTCOME_DENIED;
		return true;
	case DB_UNTRUSTED:
		/* Not "unavailable, retry later": a standby that waited on
		 * would hide a setting (or an attack) that no retry fixes. */
		event_emit(&s->ev, EV_UNTRUSTED, &d);
		out->kind = OUTCOME_DENIED;
		return true;
	case DB_NO_TABLE:
		event_emit(&s->ev, EV_NO_TABLE, &d);
		out->kind = OUTCOME_NO_TABLE;
		return true;
	case DB_NO_DATABASE:
		event_emit(&s->ev, EV_NO_DATABASE, &d);
		out->kind = OUTCOME_NO_TABLE;
		return true;
	default:
		return false;
	}
}

/* The run skips: says why in one line, to the log (the JSON event names the
 * reason: busy, paused or slot_used) and to the receivers. */
void sup_skip(struct sup *s, const struct lease_info *info, enum event_skip skip, int64_t waited, struct outcome *out)
{
	struct event d = {.term = info->term, .info = info, .skip = skip, .us = waited};

	/* A scheduled slot's skip is said at -v, and to no receiver: pings
	 * and webhooks come from the instance that runs the slot. */
	if (s->slot) {
		s->slot->last_slot_us = info->last_slot_us;
		s->slot->last_lost = info->slot_lost;
		d.us = s->slot->at_us;
		if (info->why != BUSY_SKIPPED)
			d.term = info->slot_term;
		event_emit(&s->ev,
			   info->why == BUSY_SKIPPED  ? EV_SLOT_SKIPPED
			   : info->why == BUSY_PAUSED ? EV_SLOT_PAUSED
						      : EV_SLOT_TAKEN,
			   &d);
		out->kind = OUTCOME_BUSY;
		return;
	}
	switch (info->why) {
	case BUSY_SLOT_USED:
		d.term = info->slot_term;
		event_emit(&s->ev, EV_SLOT_USED, &d);
		break;
	case BUSY_PAUSED:
		event_emit(&s->ev, EV_PAUSED, &d);
		break;
	case BUSY_HELD:
	case BUSY_PREFERRED:
	case BUSY_EARLY:
	case BUSY_SKIPPED:
		event_emit(&s->ev, EV_BUSY, &d);
		break;
	}
	out->kind = OUTCOME_BUSY;
}

void sup_end_run(struct sup *s, struct outcome *out)
{
	if (!s->leading) {
		/* A service that exited said so itself. */
		if (s->ev.exit_status < 0)
			sup_not_run(s, out);
		sup_abandon_acquire(s);
	} else if (s->child.pid <= 0) {
		/* The command never started: its term goes back at once. */
		sup_release(s);
	} else {
		sup_history_end(s);
		sup_finish(s, out);
	}
	/* A watcher started ahead for a command that never ran, or kept
	 * past the proof that nothing is left until the release went. */
	child_unwatch(&s->child);
	s->leading = false;
	sup_role(s);
	sup_history_row(s);
}
