/* --service: COMMAND starts at once on every instance and runs whether this
 * instance leads or not; leaderrun competes for the lease beside it. Each
 * term of the lease is:
 *
 *   acquired -> --on-promote runs -> it exits 0: leader
 *            -> leading must end (the lease late or revoked, a stop asked
 *               of leaderrun, a failed promote): --on-demote runs, the
 *               lease still renewed -> it exits 0: released, standby again
 *
 * The stop of a term is hold.c's stop of a job's command (ACT_STOP, then
 * SIGKILL at the deadline or after --kill-grace), with the demote in place
 * of the kill signal: a demote that fails, or is still running when the
 * command would have been killed, gets the service's whole tree killed as
 * a lost lease's command is, and leaderrun exits 76. So leading, from
 * promote's start to demote's end, fits in the term exactly as a job's
 * command does, and the lease is given back only after it. Without
 * --on-demote the service is stopped as a job's command is.
 *
 * The hooks run in process groups of their own, guarded by the service's
 * watcher (child_watch_hook) until the term ends: a demote that runs on
 * while leaderrun is frozen past the deadline, or a worker a promote left
 * running in its group, is killed with the service. A term ends only once
 * what its hooks started is gone (sup_service_tick): their groups, and
 * what left them (setsid), found in the tree below leaderrun. A service
 * that exits during its demote leaves the demote's own exit to decide. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "backoff.h"
#include "base/duration.h"
#include "sup.h"

static const char *hook_option(enum hook_kind kind)
{
	return kind == HOOK_PROMOTE ? "on-promote" : "on-demote";
}

/* Starts the hook KIND; false, said, when it cannot be started (an exec
 * failure is its exit status, 126 or 127, judged when it is reaped). */
static bool svc_hook_start(struct sup *s, enum hook_kind kind)
{
	const struct options *o = s->o;
	char *argv[] = {"/bin/sh", "-c", (char *)(kind == HOOK_PROMOTE ? o->on_promote : o->on_demote), NULL};
	/* LEADERRUN_ROLE: the role the hook moves this instance to. */
	const struct child_lease l = {.lease = o->lease,
				      .holder = o->holder,
				      .term = s->ev.term,
				      .slot = s->ev.slot,
				      .role = kind == HOOK_PROMOTE ? "leader" : "standby",
				      .service_pid = (long)s->child.pid};
	char **env = child_env_build(s->environ_base, &l);
	char err[512] = "out of memory", why[600];
	pid_t pid = env ? child_spawn_hook(argv, env, err, sizeof(err)) : -1;
	int i;

	child_env_free(env);
	if (pid < 0) {
		snprintf(why, sizeof(why), "%s: %s", hook_option(kind), err);
		event_emit(&s->ev, EV_HOOK_FAILED, &(struct event){.err = why});
		return false;
	}
	/* Its group, and whatever it starts, are the term's until the term
	 * ends, whether it exited or not (sup_service_clear); its number
	 * pinned by an anchor until then (review S1). */
	if (!s->svc.groups[0] && !s->svc.groups[1])
		s->svc.since = child_started(pid);
	i = kind == HOOK_PROMOTE ? 0 : 1;
	s->svc.groups[i] = pid;
	s->svc.anchors[i] = child_anchor(pid);
	s->svc.hook_reaped[i] = false;
	child_watch_hook(&s->child, pid, kind == HOOK_DEMOTE);
	s->svc.hook = pid;
	s->svc.kind = kind;
	s->svc.hook_wstatus = -1;
	return true;
}

/* Promoted: this instance leads until a step-down begins. */
static void svc_lead(struct sup *s)
{
	s->svc.leader = true;
	sup_role(s);
	sup_ready(s);
	event_emit(&s->ev, EV_PROMOTED, NULL);
}

/* Leading must end, the lease still fine: hold.c's stop, said with WHY. */
static void svc_step_down(struct sup *s, int64_t now, const char *why)
{
	struct hold_step st;

	hold_step_down(&s->hold, now, &st);
	sup_apply_step(s, &st, now, why);
}

/* The lease is ours: the watcher kills the service at this term's
 * deadline from now on, and --on-promote runs (or it leads at once). */
static void svc_promote(struct sup *s, int64_t now)
{
	s->svc = (struct service){.stop_sig = s->svc.stop_sig, .failed_promotes = s->svc.failed_promotes};
	child_set_deadline_exact(&s->child, hold_deadline(&s->hold, &s->o->timing));
	if (!s->o->on_promote) {
		svc_lead(s);
		return;
	}
	sup_role(s);
	event_emit(&s->ev, EV_PROMOTING, NULL);
	s->svc.promote_until = now + sup_min64(s->o->promote_timeout_us, CHILD_NO_DEADLINE);
	if (!svc_hook_start(s, HOOK_PROMOTE))
		svc_step_down(s, now, "--on-promote could not start");
}

int64_t sup_service_at(const struct sup *s)
{
	const struct service *v = &s->svc;

	return v->hook > 0 && v->kind == HOOK_PROMOTE && !v->demoting ? v->promote_until : 0;
}

/* A promote that hangs would keep the lease from leading for good: past
 * --promote-timeout it is a failed promote. The step-down kills it as it
 * kills a promote cut short (sup_service_stop), then demotes, and the
 * instance backs off as after any failed promote. */
void sup_service_act(struct sup *s, int64_t now)
{
	int64_t at = sup_service_at(s);
	char d[32], why[96];

	if (!at || now < at)
		return;
	/* Once, and killed here: the step-down kills it only when it
	 * begins a demote, which it does not once the service exited or a
	 * stop is under way (review C3: every pass said it again). Unreaped,
	 * its group's number is still its own. */
	s->svc.promote_until = 0;
	kill(-s->svc.hook, SIGKILL);
	s->svc.hook = 0;
	duration_format(s->o->promote_timeout_us, d, sizeof(d));
	snprintf(why, sizeof(why), "still running after --promote-timeout %s, killed", d);
	s->svc.failed_promotes++;
	event_emit(&s->ev, EV_PROMOTE_FAILED, &(struct event){.wstatus = -1, .err = why});
	svc_step_down(s, now, "--on-promote timed out");
}

int sup_service_stop(struct sup *s, int64_t now)
{
	struct service *v = &s->svc;

	if (s->hold.exited) {
		/* The service exited during its demote, the expected end of
		 * one: the demote's own exit decides, so only what is left in
		 * the service's group gets the kill signal, not the demote. */
		if (v->hook > 0 && v->kind == HOOK_DEMOTE)
			return child_signal(&s->child, s->o->kill_signal) == 0;
		return sup_signal_all(s, s->o->kill_signal);
	}
	if (v->demoting)
		return 0;
	v->demoting = true;
	v->leader = false;
	v->demote_at = now;
	sup_role(s);
	sup_ready(s);
	/* A promote cut short: leading ends with the demote, not with it. */
	if (v->hook > 0 && v->kind == HOOK_PROMOTE) {
		kill(-v->hook, SIGKILL);
		v->hook = 0;
	}
	if (!s->o->on_demote)
		return sup_signal_all(s, s->o->kill_signal);
	if (!svc_hook_start(s, HOOK_DEMOTE)) {
		struct hold_step st;
		v->killed = true;
		hold_kill(&s->hold, &st);
		return sup_signal_all(s, SIGKILL);
	}
	return 1;
}

void sup_service_killing(struct sup *s)
{
	struct service *v = &s->svc;
	bool demote = (v->hook > 0 && v->kind == HOOK_DEMOTE) || v->clearing;

	/* A service that exited on its own ends as a job's command, unless
	 * its demote ran: then that demote did not end in time. */
	if (v->killed || (s->hold.exited && !demote))
		return;
	v->killed = true;
	v->clearing = false;
	if (demote)
		event_emit(&s->ev, EV_DEMOTE_LATE, NULL);
}

/* SIG to what the term's hooks started: their groups, and what they left
 * outside them (child_kill_term). How many are left, zombies included. */
static int sup_service_clear(struct sup *s, int sig)
{
	struct service *v = &s->svc;
	pid_t spare[2] = {s->child.pid, s->health_pid};
	int n = 0;

	/* A group still here is pinned (sup_service_unpin): its number is
	 * the hook's, whoever is left in it. */
	for (int i = 0; i < 2; i++)
		if (v->groups[i] > 0 && kill(-v->groups[i], sig) == 0)
			n++;
	return n + child_kill_term(&s->child, spare, 2, v->since, sig);
}

void sup_service_unpin(struct sup *s, pid_t pid)
{
	struct service *v = &s->svc;

	for (int i = 0; i < 2; i++) {
		if (v->groups[i] <= 0)
			continue;
		if (pid == v->anchors[i])
			v->anchors[i] = 0;
		else if (pid == v->groups[i])
			v->hook_reaped[i] = true;
		else
			continue;
		/* Its last pin goes with this reap: the number may be
		 * anyone's after it. What is left of the group (a hook's
		 * `kill 0` took the anchor) is child_kill_term's, one process
		 * at a time. */
		if (!v->anchors[i] && v->hook_reaped[i]) {
			child_watch_forget(&s->child, v->groups[i]);
			v->groups[i] = 0;
		}
	}
}

/* Leading ended here: the watcher has no deadline to keep, nor a hook's
 * group. The release that follows may wait up to the old deadline (a
 * database cut off), and the service must not die of it. */
static void svc_demoted(struct sup *s, int64_t now)
{
	s->svc.demoted = true;
	s->svc.groups[0] = s->svc.groups[1] = 0;
	child_set_deadline(&s->child, CHILD_NO_DEADLINE);
	child_watch_hook(&s->child, 0, false);
	event_emit(&s->ev, EV_DEMOTED, &(struct event){.us = now - s->svc.demote_at});
}

int64_t sup_service_tick(struct sup *s, int64_t now)
{
	struct service *v = &s->svc;

	if (!v->clearing || v->killed)
		return 0;
	/* Leading ends once nothing the hooks started is left: a worker a
	 * promote left running (`worker &`) works for the leader too. */
	if (sup_service_clear(s, SIGKILL) > 0)
		return now + 10 * USEC_PER_MSEC;
	v->clearing = false;
	svc_demoted(s, now);
	return 0;
}

void sup_service_reaped(struct sup *s, int64_t now)
{
	struct service *v = &s->svc;
	int st = v->hook_wstatus;
	bool ok = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	struct hold_step step;

	if (v->hook <= 0 || st < 0)
		return;
	v->hook = 0;
	if (v->kind == HOOK_PROMOTE) {
		if (ok) {
			v->failed_promotes = 0;
			svc_lead(s);
			return;
		}
		v->failed_promotes++;
		event_emit(&s->ev, EV_PROMOTE_FAILED, &(struct event){.wstatus = st});
		svc_step_down(s, now, "--on-promote failed");
		return;
	}
	if (v->killed)
		return;
	if (ok) {
		v->clearing = true;
		sup_service_tick(s, now);
		return;
	}
	event_emit(&s->ev, EV_DEMOTE_FAILED, &(struct event){.wstatus = st});
	v->killed = true;
	hold_kill(&s->hold, &step);
	sup_apply_step(s, &step, now, NULL);
}

bool sup_service_signal(struct sup *s, int sig, int64_t now)
{
	/* Once the service is gone, a job's rules: forward to what is left. */
	if (s->hold.exited || s->ev.exit_status >= 0)
		return false;
	if (sig != SIGTERM && sig != SIGINT && sig != SIGQUIT) {
		/* HUP, USR1 and the rest are the service's (a reload). */
		event_emit(&s->ev, EV_FORWARDED, &(struct event){.signo = sig});
		child_signal(&s->child, sig);
		return true;
	}
	if (!s->svc.stop_sig) {
		s->svc.stop_sig = sig;
		event_emit(&s->ev, EV_ASKED_TO_STOP, &(struct event){.signo = sig});
	}
	/* Leading ends first; the service gets the signal once the lease is
	 * given back (sup_serve). */
	if (s->leading && !s->svc.demoting)
		svc_step_down(s, now, "asked to stop");
	return true;
}

/* The service's own end, once this instance no longer leads: SIG to its
 * group (0: none, it exited), and what it leaves gets --kill-signal, then
 * SIGKILL after --kill-grace. A stop asked of leaderrun is the service's
 * to take its time over, as a job's command's is; one leaderrun decided
 * (the database refused it) gets the grace. */
static void svc_wind_down(struct sup *s, int sig, bool escalate)
{
	int64_t grace = s->o->timing.grace_us, kill_at = escalate ? timing_now() + grace : 0;
	bool exited = s->ev.exit_status >= 0;

	if (sig && !exited)
		child_signal(&s->child, sig);
	if (exited) {
		sup_signal_all(s, s->o->kill_signal);
		kill_at = timing_now() + grace;
	}
	for (;;) {
		int woke;
		if (exited && !child_group_alive(&s->child) && sup_nothing_left(s))
			break;
		woke = sup_poll(s, exited ? timing_now() + 50 * USEC_PER_MSEC : kill_at);
		if ((woke & WOKE_SIGNAL) && sup_signals_while_waiting(s) == SIGCHLD && !exited) {
			exited = true;
			sup_signal_all(s, s->o->kill_signal);
			kill_at = timing_now() + grace;
		}
		if (kill_at && timing_now() >= kill_at)
			sup_signal_all(s, SIGKILL);
	}
	child_unwatch(&s->child);
}

/* After a term, before competing again: a --retry-interval, so that a
 * standby woken by the release (--release, a late lease) takes the lease
 * rather than this instance again; doubled after each promote that failed
 * in a row, up to the ttl, so that a promote that cannot succeed here does
 * not make the lease flap, and a failover never waits longer than a ttl
 * for a standby whose promotes failed before (the soak found 28 s with a
 * minute's cap). Its preemptions back off further (backoff.h). False with
 * OUT filled when the service exited or leaderrun was asked to stop
 * meanwhile. */
static bool svc_step_back(struct sup *s, struct outcome *out)
{
	int64_t us = backoff_compete(s->o->retry_us, s->o->timing.ttl_us, s->svc.failed_promotes);
	int64_t until = timing_now() + sup_jitter(s, us * 9 / 10, us * 11 / 10);

	while (timing_now() < until) {
		int sig = (sup_poll(s, until) & WOKE_SIGNAL) ? sup_signals_while_waiting(s) : 0;
		if (sig == SIGCHLD) {
			event_emit(&s->ev, EV_SERVICE_EXITED, &(struct event){.wstatus = s->child_wstatus});
			out->kind = OUTCOME_CHILD_EXITED;
			return false;
		}
		if (s->svc.stop_sig)
			return false;
	}
	return true;
}

/* Starts the service, standing by (no deadline for its watcher); false
 * with OUT filled when it cannot. */
static bool svc_start(struct sup *s, struct outcome *out)
{
	if (!sup_spawn(s, CHILD_NO_DEADLINE, out))
		return false;
	event_emit(&s->ev, EV_SERVICE_STARTED, &(struct event){.pid = (int)s->child.pid});
	return true;
}

/* The outcome once the service is gone: its exit status, unless the lease
 * or the database ended the run first (76, or the database's). */
static void svc_outcome(struct sup *s, struct outcome *out)
{
	if (out->kind == OUTCOME_SIGNALLED || out->kind == OUTCOME_CHILD_EXITED) {
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s->child_wstatus;
	}
}

void sup_serve(struct sup *s, struct outcome *out)
{
	if (!svc_start(s, out))
		return;
	while (!s->svc.stop_sig) {
		sup_role(s);
		if (!sup_acquire(s, out))
			break;
		sup_acquired(s);
		svc_promote(s, timing_now());
		sup_hold(s);
		if (!s->svc.demoted) {
			/* The service is gone (it exited, or it was killed):
			 * the run ends as a job's does. */
			sup_end_run(s, out);
			return;
		}
		sup_end_term(s);
		if (s->hold.exited) {
			/* The service exited during a demote that ended well:
			 * the run ends with its status. */
			out->kind = OUTCOME_CHILD_EXITED;
			break;
		}
		if (!s->svc.stop_sig && !svc_step_back(s, out))
			break;
	}
	if (s->svc.stop_sig && s->ev.exit_status < 0) {
		out->kind = OUTCOME_SIGNALLED;
		out->signo = s->svc.stop_sig;
	}
	/* Standing by, and the run ends: a signal, the service's exit, or
	 * what the database said. */
	sup_end_run(s, out);
	svc_wind_down(s, s->svc.stop_sig, !s->svc.stop_sig && out->kind != OUTCOME_CHILD_EXITED);
	svc_outcome(s, out);
}
