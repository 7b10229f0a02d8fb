/* 2.-4. The command runs under the lease: renewed every renew interval,
 * stopped before the lease can lapse, and what it leaves drained and
 * reaped. hold.c decides; this file carries its actions out (signals,
 * the worker, the watcher) and emits its events as hold.c named them, the
 * command's exit among them, the kill first and the words after it. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "report/history.h"
#include "report/role.h"
#include "sup.h"

/* SIG to the command's group and to every descendant outside it; how many
 * processes it reached. Once the group is gone a job's watcher guards
 * nothing (it kills only the group, whose number may be anyone's now); a
 * service's still guards its term's hooks (sup_keeps_watcher). When it is
 * this process's one child, nothing is left to signal (one read of each
 * thread's children file); else stopping it first leaves this process no
 * child of its own but what the command left, and a run that left nothing
 * behind is seen to by waitid alone. */
int sup_signal_all(struct sup *s, int sig)
{
	int n = child_signal(&s->child, sig) == 0;

	if (s->child.group_gone) {
		/* The watcher alone is left: nothing to signal, and a job's
		 * that holds the lease ends once its release is on its way
		 * (sup_release). */
		if (sup_keeps_watcher(s) && child_only_watcher_left(&s->child))
			return n;
		/* A service's term's hooks and leftovers stay guarded. */
		if (!(s->o->service && sup_keeps_watcher(s)))
			child_unwatch(&s->child);
	}
	return n + child_kill_descendants(&s->child, sig);
}

/* What the step's events need besides the state. */
struct report {
	int64_t now;
	int killed;		       /* processes the step's SIGKILL reached */
	int stopped;		       /* processes the step's kill signal reached */
	unsigned failures;	       /* failed renews before this answer */
	int64_t latency, margin;       /* a renew: send to answer; deadline left when it came */
	const struct worker_result *r; /* the answer, if the step is one */
	const char *why;	       /* a step-down's reason */
};

/* Until SIGKILL ends the stop begun now: at the deadline, or after the
 * grace, whichever is first. */
static int64_t sup_kill_in(const struct sup *s, int64_t now)
{
	const struct timing *t = &s->o->timing;
	return sup_min64(hold_deadline(&s->hold, t), now + t->grace_us) - now;
}

/* A step's event, as hold.c named it, with the details its row's words
 * name. */
static void sup_emit(struct sup *s, enum event_id id, const struct report *rep)
{
	const struct timing *t = &s->o->timing;
	/* A service that exits during its demote is said to, with its status. */
	bool demoting = s->o->service && id == EV_EXITED && s->svc.hook > 0 && s->svc.kind == HOOK_DEMOTE;
	struct event d = {.err = demoting ? " during --on-demote; the demote's own exit decides" : NULL,
			  .failures = rep->failures,
			  .latency = rep->latency,
			  .margin = rep->margin,
			  .wstatus = s->child_wstatus,
			  .revoked = s->hold.lease == HOLD_REVOKED};

	if (!hold_says(id, rep->stopped, rep->killed))
		return;
	switch (id) {
	case EV_RENEW_FAILED:
	case EV_RENEW_FAILED_AGAIN:
		d.status = rep->r->status;
		d.err = rep->r->err;
		d.us = hold_stop_at(&s->hold, t) - rep->now;
		d.failures = s->hold.failures;
		break;
	case EV_REVOKED:
		d.kill_in = sup_kill_in(s, rep->now);
		/* hold.c knows that the term was revoked; who asked for it
		 * is the database's answer (the worker's choose_why_revoked). */
		d.by = s->handover_by;
		if (s->handover == HANDOVER_PREEMPTED)
			id = EV_PREEMPTED;
		else if (s->handover == HANDOVER_SWITCHED_OVER)
			id = EV_SWITCHED_OVER;
		break;
	case EV_STEPPING_DOWN:
		d.kill_in = sup_kill_in(s, rep->now);
		d.err = rep->why ? rep->why : "asked";
		break;
	case EV_TIMED_OUT:
		/* The loop stops feeding the watchdog now (hold_healthy):
		 * systemd is to stop watching too (the event's STOPPING=1), or
		 * a long --kill-grace ends in its kill. */
		d.kill_in = sup_kill_in(s, rep->now);
		d.now = rep->now;
		break;
	case EV_LATE:
		d.kill_in = hold_deadline(&s->hold, t) - rep->now;
		break;
	default:
		break;
	}
	event_emit(&s->ev, id, &d);
}

/* Carries out a step's actions, the kill first; then its report. */
static void sup_apply(struct sup *s, const struct hold_step *st, struct report *rep)
{
	/* A service that still runs is demoted, not stopped: --on-demote. */
	if (st->acts & ACT_STOP)
		rep->stopped = s->o->service ? sup_service_stop(s, rep->now) : sup_signal_all(s, s->o->kill_signal);
	if (st->acts & ACT_KILL) {
		if (s->o->service)
			sup_service_killing(s);
		rep->killed = sup_signal_all(s, SIGKILL);
	}
	if (st->acts & ACT_DEADLINE) {
		char err[PATH_MAX + 80];
		child_set_deadline(&s->child, hold_deadline(&s->hold, &s->o->timing));
		/* The role file's end of leadership moves with the deadline. */
		if (role_extend(s->ev.rb, hold_deadline(&s->hold, &s->o->timing), err, sizeof(err)) < 0)
			event_emit(&s->ev, EV_ROLE_FILE_FAILED, &(struct event){.err = err});
	}
	if (st->acts & ACT_CUT)
		worker_abort(s->w);
	/* Leading ends with the stop, before its words. */
	if (st->acts & (ACT_STOP | ACT_KILL))
		sup_role(s);
	for (int i = 0; i < st->nevents; i++)
		sup_emit(s, st->events[i], rep);
	if ((st->acts & ACT_RENEW) && worker_submit(s->w, WORKER_RENEW, s->ev.term, -1) == 0)
		hold_renew_sent(&s->hold, rep->now);
}

void sup_apply_step(struct sup *s, const struct hold_step *st, int64_t now, const char *why)
{
	struct report rep = {.now = now, .why = why};

	sup_apply(s, st, &rep);
}

/* What a renew's answer means to the state machine. */
static enum hold_renew sup_renew_of(enum lease_outcome o)
{
	switch (o) {
	case LEASE_OK:
		return RENEW_OK;
	case LEASE_REVOKED:
		return RENEW_REVOKED;
	case LEASE_LOST:
		return RENEW_LOST;
	default:
		return RENEW_FAILED;
	}
}

/* A renew's answer, told to the state machine. */
static void sup_on_renew(struct sup *s, const struct worker_result *r, int64_t now)
{
	const struct timing *t = &s->o->timing;
	struct report rep = {.now = now, .r = r, .failures = s->hold.failures};
	struct hold_step st;

	rep.latency = now - r->sent_at;
	rep.margin = hold_deadline(&s->hold, t) - now;
	if (r->outcome == LEASE_REVOKED) {
		s->handover = r->handover.why;
		snprintf(s->handover_by, sizeof(s->handover_by), "%s", r->handover.by);
	}
	hold_on_renew(&s->hold, t, sup_renew_of(r->outcome), r->sent_at, now, &st);
	sup_apply(s, &st, &rep);
}

static void sup_on_signals(struct sup *s, int64_t now)
{
	for (int i = 0; i < s->nsigs; i++) {
		int sig = s->sigs[i];
		if (sig == SIGCHLD) {
			if (sup_reap(s)) {
				struct hold_step st;
				struct report rep = {.now = now};
				/* Its own end, or --max-runtime's (a hang is the
				 * command's failure, not its host's): not stopped
				 * for a lease in doubt, nor by a stop that leaderrun
				 * passed on. */
				if (s->slot && (s->hold.cmd == CMD_RUNNING || s->hold.timed_out) && !s->asked_to_stop)
					s->slot->ended = true;
				hold_on_exit(&s->hold, &s->o->timing, now, &st);
				sup_apply(s, &st, &rep);
			}
			if (s->o->service)
				sup_service_reaped(s, now);
			continue;
		}
		if (sig == SIGTTOU || sig == SIGTTIN || sig == SIGPIPE)
			continue;
		if (s->o->service && sup_service_signal(s, sig, now))
			continue;
		/* Forward to the group; the lease stays renewed while the
		 * command shuts down. */
		if (!s->hold.exited || child_group_alive(&s->child)) {
			event_emit(&s->ev, EV_FORWARDED, &(struct event){.signo = sig});
			child_signal(&s->child, sig);
			/* What a service manager's stop sends; HUP and the rest
			 * may be a reload, the command's to judge. */
			if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) {
				event_emit(&s->ev, EV_ASKED_TO_STOP, &(struct event){.signo = sig});
				s->asked_to_stop = true;
			}
		}
	}
	s->nsigs = 0;
}

/* True once nothing is left of the command. The common case costs two
 * system calls: the group is empty and, with the watcher gone, waitpid
 * reports no child. A descendant that left the group (setsid) got the
 * signals with the group; one orphaned to us only later is our child now,
 * and waitpid keeps us here until SIGKILL has reached it too. */
static bool sup_all_reaped(struct sup *s)
{
	return s->hold.exited && sup_nothing_left(s);
}

/* A job's release is prepared on the server once its command has run this
 * long (its history row, opened at 100 ms, in by then): one statement
 * more, off the hand-over's path. A command done sooner, as a one-shot
 * run's, costs none. */
#define SUP_PREPARE_AFTER_US (250 * USEC_PER_MSEC)

/* When the release is to be prepared, or a prepare that hangs cut (it
 * holds the worker, and a renew must not wait behind it for longer than
 * behind a renew that hangs); 0: neither. */
static int64_t sup_prepare_at(const struct sup *s)
{
	if (s->preparing_at)
		return s->preparing_at + timing_attempt_budget(&s->o->timing);
	if (s->release_asked || s->o->service || s->hold.exited || s->hold.cmd != CMD_RUNNING ||
	    s->hold.lease != HOLD_HELD)
		return 0;
	return s->ev.acquired_at + SUP_PREPARE_AFTER_US;
}

static void sup_prepare_release(struct sup *s, const struct worker_result *r, int64_t now)
{
	int64_t at = sup_prepare_at(s);

	if (r && r->op == WORKER_PREPARE)
		s->preparing_at = 0;
	else if (s->preparing_at && now >= at)
		worker_abort(s->w);
	else if (!s->preparing_at && at && now >= at && !worker_busy(s->w) &&
		 worker_submit(s->w, WORKER_PREPARE, s->ev.term, -1) == 0) {
		s->release_asked = true;
		s->preparing_at = now;
	}
}

/* The earliest of the wake-ups A and B; 0: none. */
static int64_t sup_first(int64_t a, int64_t b)
{
	return a && (!b || a < b) ? a : b;
}

void sup_hold(struct sup *s)
{
	const struct timing *t = &s->o->timing;

	/* A service's term also ends in a clean demote, the service running on. */
	int64_t clear_at = 0; /* --service: the next look at what the term's hooks left */

	while (s->hold.cmd != CMD_REAPED && !s->svc.demoted) {
		bool busy = worker_busy(s->w);
		int64_t at =
		    sup_first(sup_first(hold_next_wake(&s->hold, t, timing_now(), busy), sup_service_at(s)), clear_at);
		int woke = sup_poll(s, sup_first(sup_first(at, history_due(s->ev.h)), sup_prepare_at(s)));
		int64_t now = timing_now();
		struct worker_result r;
		struct hold_step st;
		struct report rep = {.now = now};
		bool took = (woke & WOKE_WORKER) && sup_take(s, &r) == 0;

		if (took && r.op == WORKER_RENEW)
			sup_on_renew(s, &r, now);
		if (woke & WOKE_SIGNAL)
			sup_on_signals(s, now);
		sup_health_act(s, now);
		sup_service_act(s, now);
		hold_on_time(&s->hold, t, now, worker_busy(s->w), &st);
		sup_apply(s, &st, &rep);
		history_tick(s->ev.h, now);
		sup_prepare_release(s, took ? &r : NULL, now);
		if (sup_all_reaped(s))
			hold_on_reaped(&s->hold);
		/* A hook that sup_all_reaped reaped is judged here, as after
		 * its SIGCHLD (a no-op when none was). */
		if (s->o->service)
			sup_service_reaped(s, now);
		/* After the reap: a service gone with all the rest, its demote
		 * done, ends its term the same way every time. */
		if (s->o->service)
			clear_at = sup_service_tick(s, timing_now());
	}
	/* A watcher left beside nothing goes once the release is on its way
	 * (sup_release): its end is a process's exit, on the hand-over's
	 * path. */
	if (s->hold.cmd == CMD_REAPED && s->o->service)
		child_unwatch(&s->child);
}
