/* 5. Giving the lease back, once nothing is left of the command; and
 * giving back what an acquire still in flight took when the wait ended
 * without running anything. Never past the lease's deadline (it is no
 * longer ours to give) nor longer than a renew interval: if the database
 * does not answer, the lease simply expires. */
#include <stdbool.h>

#include "base/duration.h"
#include "sup.h"
#include "worker.h"

void sup_release(struct sup *s)
{
	/* Not a moment past the deadline (the lease is no longer ours to
	 * give), and not longer than a renew interval: if the database does
	 * not answer, the lease simply expires. */
	int64_t give_up = sup_min64(hold_deadline(&s->hold, &s->o->timing), timing_now() + s->o->timing.renew_us);
	struct worker_result r;

	/* A renew may still be in flight: let it land (it can only extend). */
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
	if (worker_submit(s->w, WORKER_RELEASE, s->ev.term, s->ev.exit_status) < 0)
		return;
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
	if (r.outcome == LEASE_OK)
		event_emit(&s->ev, EV_RELEASED, NULL);
	else if (r.outcome == LEASE_LOST)
		event_emit(&s->ev, EV_RELEASE_EXPIRED, NULL);
	else
		event_emit(&s->ev, EV_RELEASE_FAILED, &(struct event){.status = r.status, .err = r.err});
}

/* Leaving without running the command (a signal, --wait-timeout) while an
 * acquire is in flight: it may have taken the lease. Wait briefly for it
 * and give back what it took, so that nobody waits a whole ttl for a
 * holder that never ran anything. */
void sup_abandon_acquire(struct sup *s)
{
	int64_t give_up = timing_now() + sup_min64(s->o->timing.renew_us, 500 * USEC_PER_MSEC);
	struct worker_result r;

	/* Blocked on the hint, not acquiring: nothing to give back. */
	if (s->waiting_on_hint) {
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
