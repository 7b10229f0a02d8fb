/* The lease loop, in the order it happens:
 *
 *   1. wait: ask the worker to acquire; on "busy" block on the holder's
 *      wake-up hint until it lets go or dies, or until the expiry the row
 *      reported, whichever is first (without the hint: poll, one look a
 *      --retry-interval); then look again;
 *   2. run: spawn COMMAND in its own process group;
 *   3. hold: renew every renew interval; the local deadline runs from the
 *      send time of the last successful renew; at deadline - grace the group
 *      gets the kill signal, at the deadline SIGKILL; a renew that finds the
 *      row taken is SIGKILL at once; --max-runtime after the spawn the group
 *      gets the kill signal too, and SIGKILL after the grace (the same
 *      stop, so whichever comes first starts it);
 *   4. drain: when COMMAND exits, stragglers in its group (and orphans that
 *      left it) are stopped the same way, and every descendant is reaped;
 *   5. release: only then is the lease given back.
 *
 * Each step has a file: sup_wait.c (1), sup_hold.c (2-4, carrying out
 * hold.c's decisions), sup_release.c (5); sup_loop.c is what they share:
 * one poll() on signals (signalfd), the worker's results and one timer
 * (timerfd on CLOCK_BOOTTIME, absolute, so a suspend or a SIGSTOP cannot
 * push a deadline back). Nothing here blocks on the database. */
#include "supervisor.h"
#include "sup.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicfile.h"
#include "child.h"
#include "log.h"
#include "sdnotify.h"
#include "worker.h"

/* Signals passed on to COMMAND's process group. */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

void supervisor_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	/* Taking the terminal back for our own group must not stop us. */
	sigaddset(&set, SIGTTOU);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* ---- the whole run ---------------------------------------------------- */

/* --ready-file: exists while the command runs, for a readiness probe that
 * marks only the leader ready. */
static void sup_ready(const struct sup *s)
{
	char line[LEASE_HOLDER_MAX + 32], why[PATH_MAX + 64];
	int n;

	if (!s->o->ready_file)
		return;
	/* Written while leading, often as root, into a directory a probe
	 * shares: never through whatever a local user planted at the path
	 * during the wait (issue 25). */
	n = snprintf(line, sizeof(line), "%s %" PRIu64 "\n", s->o->holder, s->term);
	if (atomicfile_write(s->o->ready_file, line, (size_t)n, why, sizeof(why)) != 0)
		log_warn("--ready-file %s", why);
}

/* STOPPING=1 when the wait ends without running the command. */
static void sup_sd_gave_up(struct sup *s, const struct outcome *out)
{
	switch (out->kind) {
	case OUTCOME_SIGNALLED:
		sdnotify_stopping(s->sd, "exiting: got SIG%s while waiting for lease %s", sup_signame(out->signo),
				  s->o->lease);
		break;
	case OUTCOME_BUSY:
		sdnotify_stopping(s->sd, "exiting: lease %s not acquired", s->o->lease);
		break;
	case OUTCOME_UNAVAILABLE:
		sdnotify_stopping(s->sd, "exiting: database unavailable");
		break;
	default:
		sdnotify_stopping(s->sd, "exiting: cannot contend for lease %s (see the log)", s->o->lease);
		break;
	}
}

/* How the run ended, for the history: lost, revoked, or the command's
 * own end. */
static void sup_history_end(struct sup *s)
{
	int st = s->child_wstatus, code = WIFEXITED(st) ? WEXITSTATUS(st) : -1,
	    sig = WIFSIGNALED(st) ? WTERMSIG(st) : -1;

	if (s->hold.lease == HOLD_LOST || s->hold.lease == HOLD_LATE)
		history_end(s->h, HISTORY_LOST, code, sig);
	else if (s->hold.lease == HOLD_REVOKED)
		history_end(s->h, HISTORY_REVOKED, code, sig);
	else if (s->hold.timed_out)
		history_end(s->h, HISTORY_TIMED_OUT, code, sig);
	else if (WIFSIGNALED(st))
		history_end(s->h, HISTORY_SIGNALED, -1, sig);
	else
		history_end(s->h, HISTORY_EXITED, code, -1);
}

/* The lease is ours: say so, and start its states. */
static void sup_acquired(struct sup *s)
{
	const struct options *o = s->o;

	s->leading = true;
	metrics_waiting(s->m, false);
	s->acquired_at = timing_now();
	hold_start(&s->hold, &o->timing, s->acquire_sent_at, 0);
	metrics_acquired(s->m, s->slot, s->term);
	/* Off the hot path: the history's own thread and connection write
	 * the run's row while the command starts. */
	history_begin(s->h, s->slot, s->term, s->acquire_sent_at);
	if (o->slots > 1)
		log_event(LOG_INFO, "acquired", "acquired slot %u of %u, term %" PRIu64 ", as %s on %s", s->slot,
			  o->slots, s->term, o->holder, s->server);
	else
		log_event(LOG_INFO, "acquired", "acquired term %" PRIu64 " as %s on %s", s->term, o->holder, s->server);
	notify_set_slot(s->n, s->slot);
	notify_event(s->n, "acquired", s->term, -1, 0);
}

/* Starts COMMAND under the lease. Returns false, with OUT filled and the
 * lease released, when it could not be started. */
static bool sup_start(struct sup *s, char *const environ_base[], struct outcome *out)
{
	const struct options *o = s->o;
	char **env = child_env_build(environ_base, o->lease, (unsigned long long)s->term, s->slot, o->holder);
	char err[512] = "out of memory";

	if (!env ||
	    (child_spawn(&s->child, o->command, env, hold_deadline(&s->hold, &o->timing), err, sizeof(err)) < 0 &&
	     s->child.pid <= 0)) {
		child_env_free(env);
		log_error("%s", err);
		out->kind = OUTCOME_INTERNAL;
		history_end(s->h, HISTORY_EXITED, -1, -1);
		sdnotify_stopping(s->sd, "exiting: cannot start %s", s->cmd);
		sup_release(s);
		return false;
	}
	child_env_free(env);
	/* Counted from the spawn: the wait for the lease is not run time. */
	if (o->max_runtime_us > 0)
		s->hold.runtime_end = timing_now() + sup_min64(o->max_runtime_us, INT64_MAX / 2);
	metrics_command_started(s->m);
	/* An exec failure still leaves a child to reap (it exits 126/127);
	 * the loop treats it like any other exit. */
	if (s->child.exec_errno)
		log_error("%s", err);
	sup_ready(s);
	notify_event(s->n, "start", s->term, -1, 0);
	sup_sd_leading(s, "");
	return true;
}

/* After the reap: the release, and the run's outcome. */
static void sup_finish(struct sup *s, struct outcome *out)
{
	const struct options *o = s->o;
	enum hold_lease l = s->hold.lease;

	if (l == HOLD_LOST || l == HOLD_LATE || l == HOLD_REVOKED) {
		/* Renewing may have recovered while the command shut down; give
		 * back what is still ours. A --max-runtime stop that the lease's
		 * loss overtook ends here too: 76 says the lease went. */
		if (l != HOLD_LOST)
			sup_release(s);
		if (l != HOLD_REVOKED)
			metrics_lost(s->m);
		metrics_not_held(s->m);
		out->kind = OUTCOME_LOST;
		log_error("command stopped: lease %s (term %" PRIu64 ")", l == HOLD_REVOKED ? "revoked" : "lost",
			  s->term);
		if (l == HOLD_REVOKED)
			sdnotify_stopping(s->sd, "lease %s revoked (term %" PRIu64 "): %s stopped", o->lease, s->term,
					  s->cmd);
		else
			sdnotify_stopping(s->sd, "lost lease %s (term %" PRIu64 "): %s stopped", o->lease, s->term,
					  s->cmd);
		return;
	}
	/* The lease was ours throughout: a normal release, recording the
	 * command's own status (--min-hold applies: it ran). */
	sup_release(s);
	metrics_not_held(s->m);
	if (s->hold.timed_out) {
		out->kind = OUTCOME_TIMED_OUT;
		sdnotify_stopping(s->sd, "%s timed out (--max-runtime): stopped", s->cmd);
	} else {
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s->child_wstatus;
	}
}

/* The state a run starts from; false with OUT filled when the loop's own
 * descriptors cannot be had. */
static bool sup_init(struct sup *s, const struct options *o, struct worker *w, const struct observers *obs,
		     struct outcome *out)
{
	sigset_t set;

	memset(s, 0, sizeof(*s));
	memset(out, 0, sizeof(*out));
	s->o = o;
	s->w = w;
	s->n = obs->n;
	s->m = obs->m;
	s->h = obs->h;
	s->sd = obs->sd;
	s->cmd = strrchr(o->command[0], '/') ? strrchr(o->command[0], '/') + 1 : o->command[0];
	s->exit_status = -1;
	/* A file left by a leaderrun that was SIGKILLed must not make this
	 * one look ready before it leads. */
	if (o->ready_file && unlink(o->ready_file) != 0 && errno != ENOENT)
		log_warn("--ready-file %s: %s", o->ready_file, strerror(errno));
	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0)
		s->rng = (uint64_t)timing_now() | 1;
	sigprocmask(SIG_BLOCK, NULL, &set);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	s->timerfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->sigfd < 0 || s->timerfd < 0) {
		log_error("signalfd/timerfd: %s", strerror(errno));
		out->kind = OUTCOME_INTERNAL;
		return false;
	}
	return true;
}

void supervisor_run(const struct options *o, struct worker *w, const struct observers *obs, char *const environ_base[],
		    struct outcome *out)
{
	struct sup s;

	if (!sup_init(&s, o, w, obs, out))
		goto done;
	metrics_waiting(s.m, true);
	sdnotify_status(s.sd, false, "starting: connecting to the database");
	if (!sup_acquire(&s, out)) {
		metrics_waiting(s.m, false);
		sup_sd_gave_up(&s, out);
		sup_abandon_acquire(&s);
		goto done;
	}
	sup_acquired(&s);
	if (!sup_start(&s, environ_base, out))
		goto done;
	sup_hold(&s);
	sup_history_end(&s);
	sup_finish(&s, out);
done:
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.timerfd >= 0)
		close(s.timerfd);
}
