/* 2.-4. The command runs under the lease: renewed every renew interval,
 * stopped before the lease can lapse, and what it leaves drained and
 * reaped. hold.c decides; this file carries its actions out (signals,
 * the worker, the watcher) and reports its events, the kill first and the
 * words after it. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>

#include "dberr.h"
#include "history.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "sdnotify.h"
#include "sup.h"

/* STATUS= while leading, with HOW after the term; READY=1 with the first.
 * Once the stop has begun, its status stays. */
void sup_sd_leading(struct sup *s, const char *how)
{
	if (!sdnotify_is_stopping(s->sd))
		sdnotify_status(s->sd, true, "leader of %s, term %" PRIu64 "%s", s->o->lease, s->term, how);
}

/* The lease is gone or going: say so once, to the receivers. */
static void sup_notify_lost(struct sup *s)
{
	if (s->lost_notified)
		return;
	s->lost_notified = true;
	notify_event(s->n, "lost", s->term, -1, (timing_now() - s->acquired_at) / 1000);
	sdnotify_stopping(s->sd, "stopping %s: lease %s", s->cmd, s->hold.lease == HOLD_REVOKED ? "revoked" : "lost");
}

/* SIG to the command's group and to every descendant outside it; how many
 * processes it reached. */
static int sup_signal_all(struct sup *s, int sig)
{
	int n = child_signal(&s->child, sig) == 0;
	return n + child_kill_descendants(&s->child, sig);
}

/* What the step's report needs besides the state. */
struct report {
	int64_t now;
	int killed;		       /* processes the step's SIGKILL reached */
	int stopped;		       /* processes the step's kill signal reached */
	unsigned failures;	       /* failed renews before this answer */
	int64_t latency, margin;       /* a renew: send to answer; deadline left when it came */
	const struct worker_result *r; /* the answer, if the step is one */
};

/* "...; SIGKILL in D": when the stop begun now ends in SIGKILL. */
static void sup_kill_in(const struct sup *s, int64_t now, char *buf, size_t len)
{
	const struct timing *t = &s->o->timing;
	sup_fmt_dur(buf, len, sup_min64(hold_deadline(&s->hold, t), now + t->grace_us) - now);
}

/* The lease's end, one event each: to the log (event name first), and
 * "lost" to the receivers. */
static void sup_report_loss(struct sup *s, enum hold_event ev, const struct report *rep)
{
	const char *sig = sup_signame(s->o->kill_signal);
	char a[32];

	if (ev == HEV_REVOKED || ev == HEV_REVOKED_LATE)
		metrics_revoked(s->m);
	sup_notify_lost(s);
	switch (ev) {
	case HEV_REVOKED:
		sup_kill_in(s, rep->now, a, sizeof(a));
		log_event(LOG_ERROR, "revoked",
			  "lease revoked by 'leaderrun --release'; sending SIG%s to the command, SIGKILL in %s", sig,
			  a);
		break;
	case HEV_REVOKED_LATE:
		log_event(LOG_ERROR, "revoked", "lease revoked by 'leaderrun --release' while stopping");
		break;
	case HEV_LOST:
		log_event(LOG_ERROR, "lost",
			  "lease lost: the row is no longer ours (expired and taken, released by force, or the server "
			  "turned read-only); sent SIGKILL to the command's process group");
		break;
	case HEV_DEADLINE:
		log_event(LOG_ERROR, "lost",
			  "lease deadline reached without a successful renew; sent SIGKILL to the command's process "
			  "group");
		break;
	case HEV_GRACE_OVER:
		log_event(LOG_ERROR, "lost",
			  "command still running after --kill-grace; sent SIGKILL to the command's "
			  "process group");
		break;
	default: /* HEV_LATE */
		if (s->hold.cmd == CMD_STOPPING) {
			sup_fmt_dur(a, sizeof(a), hold_deadline(&s->hold, &s->o->timing) - rep->now);
			log_event(LOG_ERROR, "lost",
				  "no successful renew in time; sending SIG%s to the command, SIGKILL in %s", sig, a);
		} else
			log_event(LOG_ERROR, "lost",
				  "no successful renew in time; the command's processes are being "
				  "killed");
		break;
	}
}

static void sup_report_renew(struct sup *s, enum hold_event ev, const struct report *rep)
{
	const struct worker_result *r = rep->r;
	char a[32];

	switch (ev) {
	case HEV_RECOVERED:
		log_warn("renewed after %u failed attempt%s", rep->failures, rep->failures == 1 ? "" : "s");
		break;
	case HEV_RENEWED:
		/* Latency from send to reply; margin: what was left of the
		 * deadline this renew replaces when its answer came. */
		metrics_renewed(s->m, rep->latency, rep->margin);
		log_debug("renewed term %" PRIu64, s->term);
		sup_sd_leading(s, "");
		break;
	case HEV_RENEW_FAILED:
		metrics_renew_failed(s->m);
		sup_fmt_dur(a, sizeof(a), hold_stop_at(&s->hold, &s->o->timing) - rep->now);
		if (s->hold.failures == 1) {
			log_event(LOG_WARN, "renew_failed",
				  "renew failed (%s: %s); retrying, %s left before the command is stopped",
				  dberr_name(r->status), r->err, a);
			sup_sd_leading(s, ": renew failing");
		} else
			log_debug("renew attempt %u failed (%s: %s); %s left", s->hold.failures, dberr_name(r->status),
				  r->err, a);
		break;
	default: /* HEV_CUT */
		log_debug("renew attempt exceeded its budget; aborting it");
		break;
	}
}

/* --max-runtime: the stop, then SIGKILL after the grace. */
static void sup_report_runtime(struct sup *s, enum hold_event ev, const struct report *rep)
{
	const struct options *o = s->o;
	char a[32], b[32];

	if (ev == HEV_TIMED_OUT_KILL) {
		log_info("command still running --kill-grace after --max-runtime; sent SIGKILL to its process group");
		return;
	}
	metrics_timed_out(s->m);
	sup_fmt_dur(a, sizeof(a), o->max_runtime_us);
	sup_kill_in(s, rep->now, b, sizeof(b));
	/* An error, not a warning: the job did not finish, and -q (cron's
	 * quiet mode) must still say so. */
	log_event(LOG_ERROR, "timed_out",
		  "command ran for %s (--max-runtime); sending SIG%s to its process group, SIGKILL in %s", a,
		  sup_signame(o->kill_signal), b);
	notify_event(s->n, "timed_out", s->term, -1, (rep->now - s->acquired_at) / 1000);
	/* The loop stops feeding the watchdog now (hold_healthy): systemd is
	 * to stop watching too, or a long --kill-grace ends in its kill. */
	sdnotify_stopping(s->sd, "stopping %s: ran for %s (--max-runtime)", s->cmd, a);
}

/* Every event of a step, in order, after its actions. */
static void sup_report(struct sup *s, const struct hold_step *st, const struct report *rep)
{
	for (int i = 0; i < st->nevents; i++) {
		enum hold_event ev = st->events[i];
		switch (ev) {
		case HEV_RENEWED:
		case HEV_RECOVERED:
		case HEV_RENEW_FAILED:
		case HEV_CUT:
			sup_report_renew(s, ev, rep);
			break;
		case HEV_TIMED_OUT:
		case HEV_TIMED_OUT_KILL:
			sup_report_runtime(s, ev, rep);
			break;
		case HEV_EXITED:
			/* Said by sup_reap, when it reaped the command. */
			if (rep->stopped > 0)
				log_info("the command left processes behind; sending SIG%s",
					 sup_signame(s->o->kill_signal));
			break;
		case HEV_OUTLIVED:
			if (rep->killed > 0)
				log_warn("processes left by the command outlived --kill-grace; killed them");
			break;
		default:
			sup_report_loss(s, ev, rep);
			break;
		}
	}
}

/* Carries out a step's actions, the kill first; then its report. */
static void sup_apply(struct sup *s, const struct hold_step *st, struct report *rep)
{
	if (st->acts & ACT_STOP)
		rep->stopped = sup_signal_all(s, s->o->kill_signal);
	if (st->acts & ACT_KILL)
		rep->killed = sup_signal_all(s, SIGKILL);
	if (st->acts & ACT_DEADLINE)
		child_set_deadline(&s->child, hold_deadline(&s->hold, &s->o->timing));
	if (st->acts & ACT_CUT)
		worker_abort(s->w);
	sup_report(s, st, rep);
	if ((st->acts & ACT_RENEW) && worker_submit(s->w, WORKER_RENEW, s->term, -1) == 0)
		hold_renew_sent(&s->hold, rep->now);
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
				hold_on_exit(&s->hold, &s->o->timing, now, &st);
				sup_apply(s, &st, &rep);
			}
			continue;
		}
		if (sig == SIGTTOU || sig == SIGTTIN || sig == SIGPIPE)
			continue;
		/* Forward to the group; the lease stays renewed while the
		 * command shuts down. */
		if (!s->hold.exited || child_group_alive(&s->child)) {
			log_info("forwarding SIG%s to the command", sup_signame(sig));
			child_signal(&s->child, sig);
			/* What a service manager's stop sends; HUP and the rest
			 * may be a reload, the command's to judge. */
			if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT)
				sdnotify_stopping(s->sd, "stopping %s: got SIG%s", s->cmd, sup_signame(sig));
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
	pid_t pid;
	int st;

	if (!s->hold.exited || child_group_alive(&s->child))
		return false;
	/* Nothing left for the watcher to guard. */
	child_unwatch(&s->child);
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		;
	return pid < 0 && errno == ECHILD;
}

void sup_hold(struct sup *s)
{
	const struct timing *t = &s->o->timing;

	while (s->hold.cmd != CMD_REAPED) {
		bool busy = worker_busy(s->w);
		int64_t at = hold_next_wake(&s->hold, t, timing_now(), busy), history_at = history_due(s->h);
		int ev = sup_poll(s, history_at && (!at || history_at < at) ? history_at : at);
		int64_t now = timing_now();
		struct worker_result r;
		struct hold_step st;
		struct report rep = {.now = now};

		if ((ev & EV_WORKER) && sup_take(s, &r) == 0 && r.op == WORKER_RENEW)
			sup_on_renew(s, &r, now);
		if (ev & EV_SIGNAL)
			sup_on_signals(s, now);
		hold_on_time(&s->hold, t, now, worker_busy(s->w), &st);
		sup_apply(s, &st, &rep);
		history_tick(s->h, now);
		if (sup_all_reaped(s))
			hold_on_reaped(&s->hold);
	}
	child_unwatch(&s->child);
}
