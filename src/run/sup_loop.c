/* The supervisor's one poll() and what every phase of it shares: the
 * signals read from the signalfd, the worker's results, the reaping of
 * every exited child, systemd's watchdog (the loop's heartbeat, not an
 * event: it goes straight to sdnotify), and the small helpers of time. The
 * phases (sup_wait.c, sup_hold.c, sup_end.c) stand on
 * it; supervisor.c strings them together. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/duration.h"
#include "db/promise.h"
#include "report/sdnotify.h"
#include "sup.h"
#include "worker.h"

static uint64_t sup_random(struct sup *s)
{
	/* xorshift64*: jitter only, no secrets. */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * UINT64_C(2685821657736338717);
}

/* A random duration in [lo, hi]. */
int64_t sup_jitter(struct sup *s, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int64_t)(sup_random(s) % (uint64_t)(hi - lo + 1));
}

int64_t sup_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Whether the lease loop is healthy enough to feed systemd's watchdog.
 * Leading: the last renew succeeded and the command is not due to stop.
 * Waiting: a look at the row got its answer within ttl + --retry-interval
 * + 2 s (between two looks a healthy wait blocks on the hint for up to
 * ttl + 1 s, or polls for a retry interval; the look itself gets the
 * rest). A database that does not answer starves the watchdog, and
 * systemd restarts the unit. */
static bool sup_healthy(const struct sup *s, int64_t now)
{
	const struct options *o = s->o;

	if (s->leading)
		return hold_healthy(&s->hold, &o->timing, now);
	return s->looked_at > 0 && now - s->looked_at <= o->timing.ttl_us + o->retry_us + 2 * USEC_PER_SEC;
}

/* WATCHDOG=1 when one is due and the loop is healthy. Returns AT, or the
 * next keep-alive when that comes first. A keep-alive that finds the loop
 * unhealthy stays due without a timer (one would fire at once, forever):
 * health only comes back with a worker result, which ends the poll, and
 * the next poll sends it. After STOPPING=1 systemd no longer watches. */
static int64_t sup_keepalive(struct sup *s, int64_t at)
{
	int64_t every = sdnotify_watchdog(s->ev.sd) / 2, now;

	if (every <= 0 || sdnotify_is_stopping(s->ev.sd))
		return at;
	if (every < USEC_PER_MSEC)
		every = USEC_PER_MSEC;
	now = timing_now();
	if (now >= s->keepalive_at) {
		if (!sup_healthy(s, now))
			return at;
		sdnotify_keepalive(s->ev.sd);
		s->keepalive_at = now + every;
	}
	return at > 0 && at < s->keepalive_at ? at : s->keepalive_at;
}

/* Waits until a signal, a worker result, or AT (CLOCK_BOOTTIME us; <= 0: no
 * timer), feeding systemd's watchdog meanwhile. Returns the EV_* bits that
 * are ready; a keep-alive's timer brings WOKE_TIMER too, so callers judge
 * their deadlines by the clock, never by that bit. */
int sup_poll(struct sup *s, int64_t at)
{
	struct pollfd p[3] = {
	    {.fd = s->sigfd, .events = POLLIN},
	    {.fd = worker_fd(s->w), .events = POLLIN},
	    {.fd = s->timerfd, .events = POLLIN},
	};
	int woke = 0;

	timing_arm(s->timerfd, sup_keepalive(s, sup_health_at(s, at)));
	while (poll(p, 3, -1) < 0)
		if (errno != EINTR)
			return 0;
	if (p[0].revents) {
		struct signalfd_siginfo si;
		woke |= WOKE_SIGNAL;
		while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (s->nsigs < (int)(sizeof(s->sigs) / sizeof(s->sigs[0])))
				s->sigs[s->nsigs++] = (int)si.ssi_signo;
			/* A schedule stops after a run that such a signal
			 * reached, whatever it did to the run. */
			if (s->slot && (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGQUIT))
				s->slot->stop = true;
		}
	}
	if (p[1].revents)
		woke |= WOKE_WORKER;
	if (p[2].revents) {
		uint64_t expirations;
		(void)!read(s->timerfd, &expirations, sizeof(expirations));
		woke |= WOKE_TIMER;
	}
	sup_health_tick(s, timing_now());
	return woke;
}

/* The next exited child, reaped: its pid, 0 while children are left and
 * none exited, -1 with ECHILD when none is left. A service's hook group is
 * forgotten by the watcher before its last pin is reaped
 * (sup_service_unpin): the peek (WNOWAIT) comes first. */
static pid_t sup_reap_one(struct sup *s, int *st)
{
	siginfo_t si = {0};

	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return -1;
	if (si.si_pid <= 0)
		return 0;
	if (s->o->service)
		sup_service_unpin(s, si.si_pid);
	return waitpid(si.si_pid, st, WNOHANG);
}

/* Reaps every exited child. Orphans reparented to us (we are a subreaper,
 * or PID 1) are reaped silently; COMMAND's status is kept and *EXITED set:
 * its exit is an event of hold_on_exit's step, said with the rest
 * (sup_hold.c); a hook's and a health check's go where they are judged.
 * Returns 0 while children are left, -1 (ECHILD) once none is. */
static pid_t sup_reap_all(struct sup *s, bool *exited)
{
	int st;
	pid_t pid;

	while ((pid = sup_reap_one(s, &st)) > 0) {
		if (s->child.pid > 0 && pid == s->child.pid && !s->hold.exited && !*exited) {
			*exited = true;
			s->child_wstatus = st;
			s->ev.exit_status = child_exit_status(st);
			/* Its pid held the group's number; now only the rest
			 * of the group does. Seen empty now, it is never
			 * signalled again (child_signal): the number is free. */
			child_group_alive(&s->child);
			child_restore_terminal(&s->child);
			if (s->o->ready_file)
				unlink(s->o->ready_file);
		} else if (s->health_pid > 0 && pid == s->health_pid) {
			sup_health_reaped(s, pid, st, timing_now());
		} else if (s->svc.hook > 0 && pid == s->svc.hook) {
			/* sup_service_reaped judges it. */
			s->svc.hook_wstatus = st;
		} else if (pid == s->child.watcher) {
			/* Someone killed it; keep going, without that safety net. */
			event_emit(&s->ev, EV_WATCHER_DIED, &(struct event){.pid = (int)pid});
			s->child.watcher = 0;
		}
	}
	return pid;
}

bool sup_reap(struct sup *s)
{
	bool exited = false;

	sup_reap_all(s, &exited);
	return exited;
}

/* A service's term is open: leading, a hook runs, what the hooks left is
 * being cleared, or a hook's group is still the term's. */
static bool sup_term_open(const struct sup *s)
{
	const struct service *v = &s->svc;

	return s->leading || v->hook > 0 || v->clearing || v->groups[0] > 0 || v->groups[1] > 0;
}

bool sup_keeps_watcher(const struct sup *s)
{
	/* A job's deadline is the lease's: held, that is a renew interval
	 * away at least; lost or late, it may come before the end, and kill
	 * a group number that anyone may have by then. A service's guards
	 * the term's hooks and what they left (review S2), the service's
	 * own group forgotten once seen empty (child_signal). */
	if (s->o->service)
		return sup_term_open(s) && s->child.watcher > 0;
	return s->hold.lease == HOLD_HELD;
}

bool sup_nothing_left(struct sup *s)
{
	bool exited = false;

	if (child_group_alive(&s->child))
		return false;
	/* The watcher is this process's one child: nothing is left below it
	 * (child_only_watcher_left says why that is proof), and it is
	 * stopped once the release has gone (sup_release), off the path of
	 * the hand-over. A service's stays while anything else is left. */
	if (sup_keeps_watcher(s)) {
		bool only = child_only_watcher_left(&s->child);
		if (only || s->o->service)
			return only;
	}
	/* Nothing left for the watcher to guard. */
	child_unwatch(&s->child);
	/* Reaped by sup_reap's rules: a demote's or a health check's status
	 * is kept as if its SIGCHLD had been read, and judged by the caller
	 * (review C2: a bare waitpid loop lost it). */
	return sup_reap_all(s, &exited) < 0 && errno == ECHILD;
}

/* The first server's settings that void the promise, in --check-server's
 * words, from what the connect's probe read with its own
 * statement: none of the run's own. */
static void sup_warn_unsafe(struct sup *s, const struct db_server *srv)
{
	struct promise_line lines[2];
	size_t n = promise_durability(srv->flush_at_commit, srv->log_bin, srv->sync_binlog, lines);
	char line[1400];

	for (size_t i = 0; i < n; i++) {
		promise_format(srv->name, &lines[i], line, sizeof(line));
		event_emit(&s->ev, EV_SERVER_UNSAFE, &(struct event){.err = line, .srv = srv});
	}
}

/* Says which server answered, when that changes (a multi-host DSN moved
 * on), and checks the timing against a Galera cluster's once. */
static void sup_note_server(struct sup *s, const struct db_server *srv)
{
	int64_t have, need;

	if (!srv->name[0] || strcmp(srv->name, s->ev.server) == 0)
		return;
	if (!s->ev.server[0])
		sup_warn_unsafe(s, srv);
	/* The first once: whether the replies that decide who runs are
	 * verified. */
	event_emit(&s->ev, s->ev.server[0] ? EV_SERVER_MOVED : EV_SERVER, &(struct event){.srv = srv});
	snprintf(s->ev.server, sizeof(s->ev.server), "%s", srv->name);
	if (!srv->galera || s->galera_checked || srv->suspect_timeout_us <= 0)
		return;
	s->galera_checked = true;
	if (!timing_fits_galera(&s->o->timing, srv->suspect_timeout_us, &have, &need))
		event_emit(&s->ev, EV_GALERA_SLOW, &(struct event){.us = have, .srv = srv});
}

/* worker_take, noting the server that answered. */
int sup_take(struct sup *s, struct worker_result *r)
{
	if (worker_take(s->w, r) != 0)
		return -1;
	/* A new session lost the standby's lock: its row goes again. */
	if (r->standby_lost)
		s->standby_written = false;
	sup_note_server(s, &r->server);
	return 0;
}

static bool is_wait_ending_signal(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

/* Handles signals while no command runs (or a service stands by). Returns
 * the signal that ends the wait, SIGCHLD when the service exited, or 0. */
int sup_signals_while_waiting(struct sup *s)
{
	int end = 0;

	for (int i = 0; i < s->nsigs; i++) {
		int sig = s->sigs[i];
		if (sig == SIGCHLD) {
			/* Only a service runs while leaderrun waits. */
			if (sup_reap(s) && !end)
				end = SIGCHLD;
		} else if (s->o->service && sup_service_signal(s, sig, timing_now())) {
			if (!end && s->svc.stop_sig)
				end = sig;
		} else if (!end && is_wait_ending_signal(sig))
			end = sig;
	}
	s->nsigs = 0;
	return end;
}
