/* The lease loop's decisions while it holds the lease (hold.h says the
 * states and their transitions). Each step's events are the event table's
 * names (report/event_id.h), decided here to the variant a log line needs,
 * so that the supervisor emits them as they come. */
#include "hold.h"

#include <stddef.h>

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void emit(struct hold_step *out, enum event_id ev)
{
	if (out->nevents < (int)(sizeof(out->events) / sizeof(out->events[0])))
		out->events[out->nevents++] = ev;
}

static void step_clear(struct hold_step *out)
{
	out->acts = 0;
	out->nevents = 0;
}

int64_t hold_deadline(const struct hold *h, const struct timing *t)
{
	return timing_deadline(t, h->sent_at);
}

int64_t hold_stop_at(const struct hold *h, const struct timing *t)
{
	return timing_stop_at(t, h->sent_at);
}

bool hold_renewing(const struct hold *h)
{
	return h->lease != HOLD_LOST && h->lease != HOLD_REVOKED;
}

/* The lease is still ours to keep: renews are what keeps it. */
static bool lease_ours(const struct hold *h)
{
	return h->lease == HOLD_HELD || h->lease == HOLD_FAILING;
}

void hold_start(struct hold *h, const struct timing *t, int64_t sent_at, int64_t runtime_end)
{
	*h = (struct hold){.lease = HOLD_HELD, .cmd = CMD_RUNNING, .attempt = ATTEMPT_NONE};
	h->sent_at = sent_at;
	h->next_renew = sent_at + t->renew_us;
	h->runtime_end = runtime_end;
}

/* The kill signal; SIGKILL follows at the deadline or after the grace. */
static void to_stopping(struct hold *h, int64_t now, struct hold_step *out)
{
	h->cmd = CMD_STOPPING;
	h->stop_sent_at = now;
	out->acts |= ACT_STOP;
}

static void to_killing(struct hold *h, struct hold_step *out)
{
	h->cmd = CMD_KILLING;
	out->acts |= ACT_KILL;
}

static void on_renewed(struct hold *h, const struct timing *t, int64_t sent_at, struct hold_step *out)
{
	if (h->failures)
		emit(out, EV_RECOVERED);
	emit(out, EV_RENEWED);
	h->failures = 0;
	if (h->lease == HOLD_FAILING)
		h->lease = HOLD_HELD;
	/* An older renew's late answer must not move the deadline back. */
	if (sent_at > h->sent_at) {
		h->sent_at = sent_at;
		out->acts |= ACT_DEADLINE;
	}
	h->next_renew = sent_at + t->renew_us;
}

/* Still ours until we let go, and nobody can take it before that or its
 * expiry: the normal stop, with the grace, then the reap and the release. */
static void on_revoked(struct hold *h, int64_t now, struct hold_step *out)
{
	h->lease = HOLD_REVOKED;
	if (h->cmd == CMD_RUNNING || h->cmd == CMD_DRAINING) {
		to_stopping(h, now, out);
		emit(out, EV_REVOKED);
	} else
		emit(out, EV_REVOKED_STOPPING);
}

void hold_on_renew(struct hold *h, const struct timing *t, enum hold_renew r, int64_t sent_at, int64_t now,
		   struct hold_step *out)
{
	step_clear(out);
	h->attempt = ATTEMPT_NONE;
	if (!hold_renewing(h))
		return;
	switch (r) {
	case RENEW_OK:
		on_renewed(h, t, sent_at, out);
		break;
	case RENEW_REVOKED:
		on_revoked(h, now, out);
		break;
	case RENEW_LOST:
		/* Someone else may already hold it: no grace period. */
		h->lease = HOLD_LOST;
		if (h->cmd != CMD_REAPED)
			to_killing(h, out);
		emit(out, EV_LOST);
		break;
	case RENEW_FAILED:
		/* Retried at short, even steps on a fresh connection: the
		 * deadline, not this schedule, keeps the command safe. */
		h->failures++;
		if (h->lease == HOLD_HELD)
			h->lease = HOLD_FAILING;
		h->next_renew = now + timing_retry_step(t);
		/* The first says what failed and how long is left, as a
		 * warning; the retries after it are said at debug level. */
		emit(out, h->failures > 1 ? EV_RENEW_FAILED_AGAIN : EV_RENEW_FAILED);
		break;
	}
}

void hold_on_exit(struct hold *h, const struct timing *t, int64_t now, struct hold_step *out)
{
	step_clear(out);
	h->exited = true;
	emit(out, EV_EXITED);
	/* Said only if the kill signal found something (hold_says). */
	emit(out, EV_LEFT_BEHIND);
	if (h->cmd == CMD_RUNNING) {
		h->cmd = CMD_DRAINING;
		h->drain_kill_at = now + t->grace_us;
		out->acts |= ACT_STOP;
	} else if (h->cmd == CMD_STOPPING)
		/* What appeared since the kill signal gets it too. */
		out->acts |= ACT_STOP;
}

void hold_step_down(struct hold *h, int64_t now, struct hold_step *out)
{
	step_clear(out);
	if (h->cmd != CMD_RUNNING)
		return;
	to_stopping(h, now, out);
	emit(out, EV_STEPPING_DOWN);
}

void hold_kill(struct hold *h, struct hold_step *out)
{
	step_clear(out);
	if (h->cmd == CMD_REAPED)
		return;
	to_killing(h, out);
	h->kill_rounds++;
}

/* The lease's own deadlines, one per step: SIGKILL at the deadline; the
 * grace after the kill signal over; the kill signal at the stop time. */
static void lease_deadlines(struct hold *h, const struct timing *t, int64_t now, struct hold_step *out)
{
	bool stopped = h->cmd == CMD_STOPPING || h->cmd == CMD_KILLING || h->cmd == CMD_REAPED;

	if (h->cmd != CMD_KILLING && h->cmd != CMD_REAPED && now >= hold_deadline(h, t)) {
		if (lease_ours(h))
			h->lease = HOLD_LATE;
		to_killing(h, out);
		emit(out, EV_DEADLINE);
	} else if (h->cmd == CMD_STOPPING && now >= h->stop_sent_at + t->grace_us) {
		/* A --max-runtime stop with the lease still fine is no loss. */
		emit(out, h->timed_out && lease_ours(h) ? EV_TIMED_OUT_KILL : EV_GRACE_OVER);
		to_killing(h, out);
	} else if (!stopped && lease_ours(h) && now >= hold_stop_at(h, t)) {
		h->lease = HOLD_LATE;
		to_stopping(h, now, out);
		emit(out, EV_LATE);
	} else if (h->cmd == CMD_KILLING && lease_ours(h) && now >= hold_stop_at(h, t)) {
		/* Killing what the command left, and the renews stopped
		 * working meanwhile: the lease is going all the same. */
		h->lease = HOLD_LATE;
		emit(out, EV_LATE_KILLING);
	}
}

/* After the lease's deadlines: when both are due, the lease's stop is the
 * one that happens. */
static void command_deadlines(struct hold *h, const struct timing *t, int64_t now, struct hold_step *out)
{
	if (h->cmd == CMD_RUNNING && h->runtime_end && now >= h->runtime_end) {
		h->timed_out = true;
		to_stopping(h, now, out);
		emit(out, EV_TIMED_OUT);
	}
	if (h->cmd == CMD_DRAINING && now >= h->drain_kill_at) {
		to_killing(h, out);
		emit(out, EV_OUTLIVED);
	}
	(void)t;
}

static void renew_schedule(struct hold *h, const struct timing *t, int64_t now, bool worker_busy, struct hold_step *out)
{
	if (!hold_renewing(h))
		return;
	if (h->attempt == ATTEMPT_SENT && worker_busy && now >= h->attempt_at + timing_attempt_budget(t)) {
		/* A renew that hangs is cut off, so a retry on a fresh
		 * connection still fits before the stop signal. */
		h->attempt = ATTEMPT_CUT;
		out->acts |= ACT_CUT;
		emit(out, EV_RENEW_CUT);
	} else if (!worker_busy && now >= h->next_renew)
		out->acts |= ACT_RENEW;
}

void hold_on_time(struct hold *h, const struct timing *t, int64_t now, bool worker_busy, struct hold_step *out)
{
	step_clear(out);
	lease_deadlines(h, t, now, out);
	command_deadlines(h, t, now, out);
	/* Not once: every step while killing (see hold.h). */
	if (h->cmd == CMD_KILLING)
		out->acts |= ACT_KILL;
	if (out->acts & ACT_KILL)
		h->kill_rounds++;
	renew_schedule(h, t, now, worker_busy, out);
}

void hold_renew_sent(struct hold *h, int64_t now)
{
	h->attempt = ATTEMPT_SENT;
	h->attempt_at = now;
}

void hold_on_reaped(struct hold *h)
{
	h->cmd = CMD_REAPED;
}

int64_t hold_next_wake(const struct hold *h, const struct timing *t, int64_t now, bool worker_busy)
{
	int64_t at = 0;

#define CONSIDER(x)                                                                                                    \
	do {                                                                                                           \
		int64_t x_ = (x);                                                                                      \
		if (at == 0 || x_ < at)                                                                                \
			at = x_;                                                                                       \
	} while (0)

	if (h->cmd == CMD_STOPPING)
		CONSIDER(min64(hold_deadline(h, t), h->stop_sent_at + t->grace_us));
	else if (h->cmd == CMD_RUNNING || h->cmd == CMD_DRAINING) {
		CONSIDER(hold_deadline(h, t));
		if (lease_ours(h))
			CONSIDER(hold_stop_at(h, t));
	}
	if (h->cmd == CMD_RUNNING && h->runtime_end)
		CONSIDER(h->runtime_end);
	if (h->cmd == CMD_DRAINING)
		CONSIDER(h->drain_kill_at);
	/* Stragglers that are not our children die without a SIGCHLD to us,
	 * and a killed one's children are orphaned to us only then: look
	 * again now and then while draining or killing. Every 50 ms for the
	 * first two seconds of SIGKILLs, then every second: what outlives that
	 * is stuck in the kernel (D state), and a /proc scan at 20 Hz for as
	 * long as it hangs would only burn CPU. */
	if (h->exited || h->cmd == CMD_KILLING)
		CONSIDER(now + (h->kill_rounds < 40 ? 50 : 1000) * USEC_PER_MSEC);
	if (hold_renewing(h)) {
		if (worker_busy && h->attempt == ATTEMPT_SENT)
			CONSIDER(h->attempt_at + timing_attempt_budget(t));
		else if (!worker_busy)
			CONSIDER(h->next_renew);
	}
#undef CONSIDER
	return at;
}

bool hold_healthy(const struct hold *h, const struct timing *t, int64_t now)
{
	return h->lease == HOLD_HELD && h->cmd != CMD_STOPPING && now < hold_stop_at(h, t);
}

bool hold_says(enum event_id id, int stopped, int killed)
{
	if (id == EV_LEFT_BEHIND)
		return stopped > 0;
	if (id == EV_OUTLIVED)
		return killed > 0;
	return true;
}

const char *hold_lease_name(enum hold_lease s)
{
	static const char *const names[] = {"held", "failing", "late", "lost", "revoked"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *hold_cmd_name(enum hold_cmd s)
{
	static const char *const names[] = {"running", "stopping", "draining", "killing", "reaped"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
