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
#include "sup.h"
#include "supervisor.h"

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

#include "base/atomicfile.h"
#include "child.h"
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
static void sup_ready(struct sup *s)
{
	char line[LEASE_HOLDER_MAX + 32], why[PATH_MAX + 64];
	int n;

	if (!s->o->ready_file)
		return;
	/* Written while leading, often as root, into a directory a probe
	 * shares: never through whatever a local user planted at the path
	 * during the wait. */
	n = snprintf(line, sizeof(line), "%s %" PRIu64 "\n", s->o->holder, s->ev.term);
	if (atomicfile_write(s->o->ready_file, line, (size_t)n, why, sizeof(why)) != 0)
		event_emit(&s->ev, EV_READY_FILE_FAILED, &(struct event){.err = why});
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

/* How the run ended, for the history: lost, revoked, or the command's
 * own end. */
static void sup_history_end(struct sup *s)
{
	const struct event d = {.wstatus = s->child_wstatus};
	enum hold_lease l = s->hold.lease;

	if (l == HOLD_LOST || l == HOLD_LATE)
		event_emit(&s->ev, EV_RUN_LOST, &d);
	else if (l == HOLD_REVOKED)
		event_emit(&s->ev, EV_RUN_REVOKED, &d);
	else if (s->hold.timed_out)
		event_emit(&s->ev, EV_RUN_TIMED_OUT, &d);
	else if (WIFSIGNALED(d.wstatus))
		event_emit(&s->ev, EV_RUN_SIGNALED, &d);
	else
		event_emit(&s->ev, EV_RUN_EXITED, &d);
}

/* The lease is ours: start its states, and say so. */
static void sup_acquired(struct sup *s)
{
	s->leading = true;
	s->ev.acquired_at = timing_now();
	hold_start(&s->hold, &s->o->timing, s->acquire_sent_at, 0);
	event_emit(&s->ev, EV_ACQUIRED, &(struct event){.sent_at = s->acquire_sent_at});
}

/* Starts COMMAND under the lease. Returns false, with OUT filled and the
 * lease released, when it could not be started. */
static bool sup_start(struct sup *s, char *const environ_base[], struct outcome *out)
{
	const struct options *o = s->o;
	char **env = child_env_build(environ_base, o->lease, (unsigned long long)s->ev.term, s->ev.slot, o->holder);
	char err[512] = "out of memory";

	if (!env ||
	    (child_spawn(&s->child, o->command, env, hold_deadline(&s->hold, &o->timing), err, sizeof(err)) < 0 &&
	     s->child.pid <= 0)) {
		child_env_free(env);
		out->kind = OUTCOME_INTERNAL;
		event_emit(&s->ev, EV_START_FAILED, &(struct event){.err = err, .wstatus = -1});
		sup_release(s);
		return false;
	}
	child_env_free(env);
	/* Counted from the spawn: the wait for the lease is not run time. */
	if (o->max_runtime_us > 0)
		s->hold.runtime_end = timing_now() + sup_min64(o->max_runtime_us, INT64_MAX / 2);
	/* An exec failure still leaves a child to reap (it exits 126/127);
	 * the loop treats it like any other exit. */
	if (s->child.exec_errno)
		event_emit(&s->ev, EV_EXEC_FAILED, &(struct event){.err = err});
	sup_ready(s);
	event_emit(&s->ev, EV_STARTED, NULL);
	return true;
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
	if (s->hold.timed_out) {
		out->kind = OUTCOME_TIMED_OUT;
		event_emit(&s->ev, EV_FINISHED_TIMED_OUT, NULL);
	} else {
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s->child_wstatus;
		event_emit(&s->ev, EV_FINISHED, NULL);
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
	s->ev = (struct events){.o = o, .n = obs->n, .m = obs->m, .h = obs->h, .sd = obs->sd, .exit_status = -1};
	s->ev.cmd = strrchr(o->command[0], '/') ? strrchr(o->command[0], '/') + 1 : o->command[0];
	/* A file left by a leaderrun that was SIGKILLed must not make this
	 * one look ready before it leads. */
	if (o->ready_file && unlink(o->ready_file) != 0 && errno != ENOENT)
		event_emit(&s->ev, EV_READY_FILE_STALE, &(struct event){.err = strerror(errno)});
	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0)
		s->rng = (uint64_t)timing_now() | 1;
	sigprocmask(SIG_BLOCK, NULL, &set);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	s->timerfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->sigfd < 0 || s->timerfd < 0) {
		event_emit(&s->ev, EV_LOOP_FAILED, &(struct event){.err = strerror(errno)});
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
	event_emit(&s.ev, EV_STARTING, NULL);
	if (!sup_acquire(&s, out)) {
		sup_not_run(&s, out);
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
