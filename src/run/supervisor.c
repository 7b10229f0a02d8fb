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
 * hold.c's decisions), sup_end.c (5, and the end of every run, whatever
 * ended it: sup_end_run); sup_loop.c is what they share:
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
#include "report/log.h"
#include "report/metrics.h"
#include "report/role.h"
#include "child.h"
#include "worker.h"

extern char **environ;

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
 * marks only the leader ready; for a service, while this instance leads. */
void sup_ready(struct sup *s)
{
	char line[LEASE_HOLDER_MAX + 32], why[PATH_MAX + 64];
	int n;

	if (!s->o->ready_file)
		return;
	if (s->o->service && !s->svc.leader) {
		unlink(s->o->ready_file);
		return;
	}
	/* Written while leading, often as root, into a directory a probe
	 * shares: never through whatever a local user planted at the path
	 * during the wait. */
	n = snprintf(line, sizeof(line), "%s %" PRIu64 "\n", s->o->holder, s->ev.term);
	if (atomicfile_write(s->o->ready_file, line, (size_t)n, why, sizeof(why)) != 0)
		event_emit(&s->ev, EV_READY_FILE_FAILED, &(struct event){.err = why});
}

/* What this instance is now: a service's from its term's steps; a job's
 * leader while its command runs unstopped under the lease. */
static enum role_kind sup_role_kind(const struct sup *s)
{
	if (!s->leading)
		return ROLE_STANDBY;
	if (s->o->service)
		return s->svc.demoting ? ROLE_DEMOTING : s->svc.leader ? ROLE_LEADER : ROLE_PROMOTING;
	if (s->child.pid <= 0)
		return ROLE_PROMOTING;
	return s->hold.cmd == CMD_RUNNING ? ROLE_LEADER : ROLE_DEMOTING;
}

void sup_role(struct sup *s)
{
	struct role_view v = {.role = sup_role_kind(s)};
	char err[PATH_MAX + 80];

	if (s->leading) {
		v.term = s->ev.term;
		snprintf(v.leader, sizeof(v.leader), "%s", s->o->holder);
		v.until = hold_deadline(&s->hold, &s->o->timing);
	} else {
		v.term = s->seen_term;
		snprintf(v.leader, sizeof(v.leader), "%s", s->seen_leader);
	}
	s->ev.role = v.role;
	log_set_role(role_name(v.role));
	metrics_role(s->ev.m, role_name(v.role));
	if (role_set(s->ev.rb, &v, err, sizeof(err)) < 0)
		event_emit(&s->ev, EV_ROLE_FILE_FAILED, &(struct event){.err = err});
}

/* The lease is ours: start its states, and say so. */
void sup_acquired(struct sup *s)
{
	s->leading = true;
	/* A service's earlier term said its end already. */
	s->ev.lost_said = false;
	s->ev.acquired_at = timing_now();
	hold_start(&s->hold, &s->o->timing, s->acquire_sent_at, 0);
	event_emit(&s->ev, EV_ACQUIRED, &(struct event){.sent_at = s->acquire_sent_at});
	sup_role(s);
}

bool sup_spawn(struct sup *s, int64_t deadline, struct outcome *out)
{
	const struct options *o = s->o;
	const struct child_lease l = {.lease = o->lease,
				      .holder = o->holder,
				      .term = s->ev.term,
				      .slot = s->ev.slot,
				      .scheduled_us = s->slot ? s->slot->at_us : 0,
				      .attempt = s->slot ? s->slot->attempt : 0};
	char **env = child_env_build(s->environ_base, &l);
	char err[512] = "out of memory";

	if (!env || (child_spawn(&s->child, o->command, env, deadline, o->role_file, err, sizeof(err)) < 0 &&
		     s->child.pid <= 0)) {
		child_env_free(env);
		out->kind = OUTCOME_INTERNAL;
		event_emit(&s->ev, EV_START_FAILED, &(struct event){.err = err, .wstatus = -1});
		return false;
	}
	child_env_free(env);
	/* An exec failure still leaves a child to reap (it exits 126/127);
	 * the loop treats it like any other exit. */
	if (s->child.exec_errno)
		event_emit(&s->ev, EV_EXEC_FAILED, &(struct event){.err = err});
	return true;
}

/* Starts COMMAND under the lease. Returns false, with OUT filled, when it
 * could not be started (sup_end_run gives the term back). */
static bool sup_start(struct sup *s, struct outcome *out)
{
	const struct options *o = s->o;

	if (!sup_spawn(s, hold_deadline(&s->hold, &o->timing), out))
		return false;
	/* Counted from the spawn: the wait for the lease is not run time. */
	if (o->max_runtime_us > 0)
		s->hold.runtime_end = timing_now() + sup_min64(o->max_runtime_us, INT64_MAX / 2);
	sup_ready(s);
	sup_role(s);
	event_emit(&s->ev, EV_STARTED, NULL);
	return true;
}

/* The state a run starts from, S's options, worker and environment
 * given; false with OUT filled when the loop's own descriptors cannot be
 * had. */
static bool sup_init(struct sup *s, const struct observers *obs, struct outcome *out)
{
	const struct options *o = s->o;
	sigset_t set;

	memset(out, 0, sizeof(*out));
	s->child.watch_fd = -1;
	s->ev = (struct events){
	    .o = o, .n = obs->n, .m = obs->m, .h = obs->h, .sd = obs->sd, .rb = obs->role, .exit_status = -1};
	s->ev.cmd = strrchr(o->command[0], '/') ? strrchr(o->command[0], '/') + 1 : o->command[0];
	/* A file left by a leaderrun that was SIGKILLed must not make this
	 * one look ready before it leads. */
	if (o->ready_file && unlink(o->ready_file) != 0 && errno != ENOENT)
		event_emit(&s->ev, EV_READY_FILE_STALE, &(struct event){.err = strerror(errno)});
	if (getrandom(&s->rng, sizeof(s->rng), GRND_NONBLOCK) != (ssize_t)sizeof(s->rng) || s->rng == 0)
		s->rng = (uint64_t)timing_now() | 1;
	sup_health_init(s);
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

void supervisor_run(const struct options *o, struct worker *w, const struct observers *obs, struct run_slot *slot,
		    struct outcome *out)
{
	struct sup s = {.o = o, .w = w, .environ_base = environ};

	if (!sup_init(&s, obs, out))
		goto done;
	s.slot = slot;
	event_emit(&s.ev, EV_STARTING, NULL);
	if (o->service) {
		sup_serve(&s, out);
		goto done;
	}
	if (sup_acquire(&s, out)) {
		sup_acquired(&s);
		if (sup_start(&s, out))
			sup_hold(&s);
	}
	sup_end_run(&s, out);
done:
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.timerfd >= 0)
		close(s.timerfd);
}
