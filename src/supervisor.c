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
 * One poll() waits on signals (signalfd), the worker's results and one timer
 * (timerfd on CLOCK_BOOTTIME, absolute, so a suspend or a SIGSTOP cannot
 * push a deadline back). Nothing here blocks on the database. */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomicfile.h"
#include "child.h"
#include "duration.h"
#include "log.h"
#include "sdnotify.h"
#include "signame.h"
#include "tlspolicy.h"

/* Signals passed on to COMMAND's process group. */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

enum { EV_SIGNAL = 1, EV_WORKER = 2, EV_TIMER = 4 };

struct sup {
	const struct options *o;
	struct worker *w;
	struct notify *n;
	struct metrics *m;
	struct history *h;
	struct sdnotify *sd;
	int64_t acquired_at, acquire_sent_at;
	bool lost_notified;
	int sigfd, timerfd;
	uint64_t rng;

	/* Signals read but not yet handled. */
	int sigs[32];
	int nsigs;

	/* The lease while held. */
	uint64_t term;
	unsigned slot;	 /* --slots: the slot held (0 when the lease has one) */
	int64_t sent_at; /* send time of the last successful acquire or renew */
	int64_t next_renew, attempt_started;
	bool attempt_aborted;
	unsigned failures;

	/* The command. */
	struct child child;
	bool child_running, draining;
	int child_wstatus;
	bool stop_sent;	      /* the kill signal went out: renewing failed, revoked, or timed out */
	bool renew_late;      /* ... because no renew succeeded in time */
	bool timed_out;	      /* ... because --max-runtime ran out */
	int64_t runtime_end;  /* the spawn + --max-runtime; 0: no limit */
	bool killed;	      /* SIGKILL went out: it goes again at every wake-up until nothing is left */
	unsigned kill_rounds; /* ... how often, for the pace of the wake-ups */
	bool lost;	      /* the row is someone else's: stop renewing */
	bool revoked;	      /* --release revoked our term: stop renewing, stop, reap, release */
	int64_t stop_sent_at, drain_kill_at;
	bool waiting_on_hint; /* the worker is blocked in the hint's GET_LOCK */
	int exit_status;      /* recorded by the release; -1: none */

	/* The database server of the last answer, and whether its Galera
	 * timing was checked. */
	char server[sizeof(((struct db_server *)0)->name)];
	bool galera_checked;

	/* systemd's watchdog (sup_keepalive): the health it is fed by. */
	bool leading;	      /* the lease is ours: health follows the renews */
	int64_t looked_at;    /* while waiting, the last look that got an answer; 0: none, or it failed */
	int64_t keepalive_at; /* the next WATCHDOG=1 is due */
	const char *cmd;      /* COMMAND's name, for the STATUS= lines */
};

/* The lease's local deadlines, from the send time of the last successful
 * acquire or renew (timing.h). */
static int64_t sup_deadline(const struct sup *s)
{
	return timing_deadline(&s->o->timing, s->sent_at);
}

static int64_t sup_stop_at(const struct sup *s)
{
	return timing_stop_at(&s->o->timing, s->sent_at);
}

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

static uint64_t sup_random(struct sup *s)
{
	/* xorshift64*: jitter only, no secrets. */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * UINT64_C(2685821657736338717);
}

/* A random duration in [lo, hi]. */
static int64_t sup_jitter(struct sup *s, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int64_t)(sup_random(s) % (uint64_t)(hi - lo + 1));
}

static int64_t min64(int64_t a, int64_t b)
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
		return s->failures == 0 && !s->lost && !s->revoked && !s->stop_sent && now < sup_stop_at(s);
	return s->looked_at > 0 && now - s->looked_at <= o->timing.ttl_us + o->retry_us + 2 * USEC_PER_SEC;
}

/* WATCHDOG=1 when one is due and the loop is healthy. Returns AT, or the
 * next keep-alive when that comes first. A keep-alive that finds the loop
 * unhealthy stays due without a timer (one would fire at once, forever):
 * health only comes back with a worker result, which ends the poll, and
 * the next poll sends it. After STOPPING=1 systemd no longer watches. */
static int64_t sup_keepalive(struct sup *s, int64_t at)
{
	int64_t every = sdnotify_watchdog(s->sd) / 2, now;

	if (every <= 0 || sdnotify_is_stopping(s->sd))
		return at;
	if (every < USEC_PER_MSEC)
		every = USEC_PER_MSEC;
	now = timing_now();
	if (now >= s->keepalive_at) {
		if (!sup_healthy(s, now))
			return at;
		sdnotify_keepalive(s->sd);
		s->keepalive_at = now + every;
	}
	return at > 0 && at < s->keepalive_at ? at : s->keepalive_at;
}

/* Waits until a signal, a worker result, or AT (CLOCK_BOOTTIME us; <= 0: no
 * timer), feeding systemd's watchdog meanwhile. Returns the EV_* bits that
 * are ready; a keep-alive's timer brings EV_TIMER too, so callers judge
 * their deadlines by the clock, never by that bit. */
static int sup_poll(struct sup *s, int64_t at)
{
	struct pollfd p[3] = {
	    {.fd = s->sigfd, .events = POLLIN},
	    {.fd = worker_fd(s->w), .events = POLLIN},
	    {.fd = s->timerfd, .events = POLLIN},
	};
	int ev = 0;

	timing_arm(s->timerfd, sup_keepalive(s, at));
	while (poll(p, 3, -1) < 0)
		if (errno != EINTR)
			return 0;
	if (p[0].revents) {
		struct signalfd_siginfo si;
		ev |= EV_SIGNAL;
		while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (s->nsigs < (int)(sizeof(s->sigs) / sizeof(s->sigs[0])))
				s->sigs[s->nsigs++] = (int)si.ssi_signo;
	}
	if (p[1].revents)
		ev |= EV_WORKER;
	if (p[2].revents) {
		uint64_t expirations;
		(void)!read(s->timerfd, &expirations, sizeof(expirations));
		ev |= EV_TIMER;
	}
	return ev;
}

static const char *sup_signame(int sig)
{
	const char *n = signame_abbrev(sig);
	return n ? n : "?";
}

static void fmt_dur(char *buf, size_t len, int64_t us)
{
	duration_format(us < 0 ? 0 : us, buf, len);
}

/* Reaps every exited child. Orphans reparented to us (we are a subreaper,
 * or PID 1) are reaped silently; COMMAND's status is kept. */
static void sup_reap(struct sup *s)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (s->child.pid > 0 && pid == s->child.pid && s->child_running) {
			s->child_running = false;
			s->child_wstatus = st;
			s->exit_status = child_exit_status(st);
			/* Its pid held the group's number; now only the rest
			 * of the group does. Seen empty now, it is never
			 * signalled again (child_signal): the number is free. */
			child_group_alive(&s->child);
			child_restore_terminal(&s->child);
			if (s->o->ready_file)
				unlink(s->o->ready_file);
			if (WIFSIGNALED(st))
				log_event(LOG_INFO, "exited", "command killed by signal %s", sup_signame(WTERMSIG(st)));
			else
				log_event(LOG_INFO, "exited", "command exited with status %d", WEXITSTATUS(st));
			notify_event(s->n, "exited", s->term, s->exit_status, (timing_now() - s->acquired_at) / 1000);
			metrics_command_exited(s->m, s->exit_status);
			sdnotify_stopping(s->sd, "stopping: %s exited with status %d", s->cmd, s->exit_status);
		} else if (pid == s->child.watcher) {
			/* Someone killed it; keep going, without that safety net. */
			log_warn("the watcher process %d died; a SIGKILL of leaderrun would now leave grandchildren",
				 (int)pid);
			s->child.watcher = 0;
		}
	}
}

/* Says which server answered, when that changes (a multi-host DSN moved
 * on), and checks the timing against a Galera cluster's once. */
static void sup_note_server(struct sup *s, const struct db_server *srv)
{
	const struct timing *t = &s->o->timing;
	int64_t have, need;
	char a[32], b[32], c[32];

	if (!srv->name[0] || strcmp(srv->name, s->server) == 0)
		return;
	if (s->server[0])
		log_event(LOG_WARN, "server", "now using database server %s%s (was %s): %s", srv->name,
			  srv->galera ? " (Galera)" : "", s->server, srv->tls);
	else
		/* Once: whether the replies that decide who runs are verified
		 * (issue 20). */
		log_info("database server %s%s: %s", srv->name, srv->galera ? " (Galera)" : "", srv->tls);
	snprintf(s->server, sizeof(s->server), "%s", srv->name);
	if (!srv->galera || s->galera_checked || srv->suspect_timeout_us <= 0)
		return;
	s->galera_checked = true;
	if (timing_fits_galera(t, srv->suspect_timeout_us, &have, &need))
		return;
	fmt_dur(a, sizeof(a), have);
	fmt_dur(b, sizeof(b), srv->suspect_timeout_us);
	fmt_dur(c, sizeof(c), t->renew_us);
	log_warn("Galera: ttl - margin - kill-grace = %s is shorter than evs.suspect_timeout %s + renew interval %s; "
		 "a node leaving the cluster stalls writes that long and would stop the command although nothing "
		 "failed: raise --ttl",
		 a, b, c);
}

/* worker_take, noting the server that answered. */
static int sup_take(struct sup *s, struct worker_result *r)
{
	if (worker_take(s->w, r) != 0)
		return -1;
	sup_note_server(s, &r->server);
	return 0;
}

/* ---- 1. wait ---------------------------------------------------------- */

static bool is_wait_ending_signal(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

/* Handles signals while no command runs. Returns the signal that ends the
 * wait, or 0. */
static int sup_signals_while_waiting(struct sup *s)
{
	int end = 0;

	for (int i = 0; i < s->nsigs; i++) {
		if (s->sigs[i] == SIGCHLD)
			sup_reap(s);
		else if (!end && is_wait_ending_signal(s->sigs[i]))
			end = s->sigs[i];
	}
	s->nsigs = 0;
	return end;
}

/* A signal that ends the wait (TERM, INT, HUP, QUIT) among those EV
 * brought: fills OUT and returns true. */
static bool sup_wait_ended(struct sup *s, int ev, struct outcome *out)
{
	int sig;

	if (!(ev & EV_SIGNAL) || !(sig = sup_signals_while_waiting(s)))
		return false;
	log_info("got SIG%s while waiting; exiting without running the command", sup_signame(sig));
	out->kind = OUTCOME_SIGNALLED;
	out->signo = sig;
	return true;
}

/* A --once-per slot as people read it: UTC, seconds, a fraction only when
 * the period has one. */
static void fmt_slot(char *buf, size_t len, int64_t slot_us)
{
	time_t t = (time_t)(slot_us / USEC_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	if (slot_us % USEC_PER_SEC && n < len)
		snprintf(buf + n, len - n, ".%06lld", (long long)(slot_us % USEC_PER_SEC));
}

/* A pause's end as the row has it; without --for it lasts until --resume. */
static const char *pause_until(const struct lease_info *info)
{
	return strncmp(info->paused_until, "9999-", 5) == 0 ? "--resume" : info->paused_until;
}

/* The run skips: says why in one line, to the log (the JSON event names the
 * reason: busy, paused or slot_used) and to the receivers. */
static void sup_skip(struct sup *s, const struct lease_info *info, const char *how, struct outcome *out)
{
	const char *lease = s->o->lease;
	char a[32];

	switch (info->why) {
	case BUSY_SLOT_USED:
		fmt_slot(a, sizeof(a), info->last_slot_us);
		if (info->slot_term == info->term && info->holder[0])
			log_event(LOG_NOTICE, "slot_used",
				  "lease %s already ran for the %s slot, term %" PRIu64 ", on %s", lease, a,
				  info->slot_term, info->holder);
		else
			log_event(LOG_NOTICE, "slot_used", "lease %s already ran for the %s slot, term %" PRIu64, lease,
				  a, info->slot_term);
		notify_event(s->n, "slot_used", info->slot_term, -1, 0);
		break;
	case BUSY_PAUSED:
		log_event(LOG_NOTICE, "paused",
			  "lease %s is paused by %s until %s (database time, UTC); not running%s; 'leaderrun --resume "
			  "%s' ends the pause",
			  lease, info->paused_by[0] ? info->paused_by : "an operator", pause_until(info), how, lease);
		notify_event(s->n, "paused", info->term, -1, 0);
		break;
	case BUSY_HELD:
		fmt_dur(a, sizeof(a), info->expires_in_us);
		log_event(LOG_INFO, "busy", "held by %s (term %" PRIu64 ") for another %s; not running%s",
			  info->holder[0] ? info->holder : "another holder", info->term, a, how);
		notify_event(s->n, "busy", info->term, -1, 0);
		break;
	}
	out->kind = OUTCOME_BUSY;
}

/* What a contender knows while it waits. */
struct waiting {
	int64_t start, give_up; /* give_up 0: no --wait-timeout */
	int64_t backoff;	/* the longest next pause after a database error */
	int64_t pause;		/* the pause after the last error */
	bool first;		/* the first attempt always gets its answer: -w 0 tries once */
	bool hints;		/* block on the wake-up hint; false: poll the row */
	bool last_was_error;
	bool refused;	     /* "too many connections" said once */
	uint64_t woken_for;  /* the term whose dead leader's hint woke us; 0: none */
	unsigned woken_slot; /* and its slot */
	struct lease_info last;
	char last_holder[LEASE_HOLDER_MAX + 1], last_paused[32];
	uint64_t last_term;
};

enum step { STEP_TAKEN, STEP_END, STEP_ON };

/* --wait-timeout ran out: says so, with the row as last seen. */
static enum step sup_gave_up(struct sup *s, const struct waiting *w, struct outcome *out)
{
	char a[32], b[32], how[128];

	fmt_dur(a, sizeof(a), s->o->wait_timeout_us);
	fmt_dur(b, sizeof(b), timing_now() - w->start);
	if (w->last_was_error) {
		log_error("database still unavailable after --wait-timeout %s", a);
		out->kind = OUTCOME_UNAVAILABLE;
	} else {
		snprintf(how, sizeof(how), " (not acquired within --wait-timeout %s; waited %s)", a, b);
		sup_skip(s, &w->last, how, out);
	}
	return STEP_END;
}

/* Waits for the worker's answer to what was just submitted, ending the
 * wait on a signal or at --wait-timeout. */
static enum step sup_await(struct sup *s, struct waiting *w, struct worker_result *r, struct outcome *out)
{
	for (;;) {
		int ev = sup_poll(s, w->first ? 0 : w->give_up);
		if (sup_wait_ended(s, ev, out))
			return STEP_END;
		if ((ev & EV_WORKER) && sup_take(s, r) == 0)
			break;
		if (!w->first && w->give_up && timing_now() >= w->give_up)
			return sup_gave_up(s, w, out);
	}
	w->first = false;
	/* Galera, or a DSN with several hosts: no named-lock hint. */
	if (r->hints_off)
		w->hints = false;
	return STEP_ON;
}

/* Sleeps for US (not past --wait-timeout), ending on a signal. */
static enum step sup_sleep(struct sup *s, struct waiting *w, int64_t us, struct outcome *out)
{
	int64_t wake = timing_now() + us;

	if (w->give_up && wake > w->give_up)
		wake = w->give_up;
	for (;;) {
		int ev = sup_poll(s, wake);
		if (sup_wait_ended(s, ev, out))
			return STEP_END;
		if (timing_now() >= wake)
			break;
	}
	if (w->give_up && timing_now() >= w->give_up)
		return sup_gave_up(s, w, out);
	return STEP_ON;
}

/* A database error while waiting: fatal ones end the run, the rest are
 * retried with backoff. A server out of connections (1040) is a wait, said
 * once. */
static enum step sup_judge_error(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	const struct options *o = s->o;
	bool refused = strstr(r->err, "(error 1040)") || strstr(r->err, "(error 1203)");
	char a[32];

	switch (r->status) {
	case DB_DENIED:
		log_error("access denied: %s; check the grants (sql/grants.sql) and that table %s exists (leaderrun "
			  "--init)",
			  r->err, o->table);
		out->kind = OUTCOME_DENIED;
		return STEP_END;
	case DB_UNTRUSTED:
		/* Not "unavailable, retry later": a standby that waited on
		 * would hide a setting (or an attack) that no retry fixes. */
		log_error("%s: %s; %s", dberr_name(r->status), r->err, TLSPOLICY_WAYS_OUT);
		out->kind = OUTCOME_DENIED;
		return STEP_END;
	case DB_NO_TABLE:
		log_error("lease table %s missing or not as expected: %s; run 'leaderrun --init' (it also upgrades an "
			  "older table) or apply sql/",
			  o->table, r->err);
		out->kind = OUTCOME_NO_TABLE;
		return STEP_END;
	case DB_NO_DATABASE:
		log_error("%s; name an existing database in the DSN (mysql://USER@HOST/DB) or in --table DB.TABLE",
			  r->err);
		out->kind = OUTCOME_NO_TABLE;
		return STEP_END;
	default:
		break;
	}
	if (o->no_wait) {
		log_error("%s: %s", dberr_name(r->status), r->err);
		out->kind = OUTCOME_UNAVAILABLE;
		return STEP_END;
	}
	w->last_was_error = true;
	s->looked_at = 0;
	sdnotify_status(s->sd, false, "standby: %s; retrying", dberr_name(r->status));
	w->pause = sup_jitter(s, w->backoff / 2, w->backoff);
	w->backoff = min64(w->backoff * 2, 30 * USEC_PER_SEC);
	fmt_dur(a, sizeof(a), w->pause);
	if (refused && !w->refused)
		log_warn("the server has no connection to spare (%s); waiting, and trying again with backoff up to "
			 "30s (see max_connections in leaderrun(1))",
			 r->err);
	else if (refused)
		log_debug("still refused: %s", r->err);
	else
		log_warn("%s: %s; retrying in %s", dberr_name(r->status), r->err, a);
	w->refused = w->refused || refused;
	return STEP_ON;
}

/* What an attempt's answer means: the lease is ours, the run ends (a
 * skip, a fatal error), or the wait goes on. */
static enum step sup_judge(struct sup *s, struct waiting *w, const struct worker_result *r, struct outcome *out)
{
	const struct options *o = s->o;
	char a[32];

	if (r->outcome == LEASE_OK) {
		s->term = r->info.term;
		s->slot = r->info.slot;
		s->sent_at = r->sent_at;
		s->next_renew = r->sent_at + o->timing.renew_us;
		return STEP_TAKEN;
	}
	if (r->outcome == LEASE_SLOTS_DIFFER) {
		/* Before anything runs: one count of slots per lease, or "at
		 * most N" means nothing. */
		log_error("this lease runs with --slots %u (%u held now), and this run asked for --slots %u: give "
			  "every contender of %s the same --slots (it can change while no slot is held)",
			  r->info.slots, r->info.held, o->slots, o->lease);
		out->kind = OUTCOME_USAGE;
		return STEP_END;
	}
	if (r->outcome != LEASE_BUSY)
		return sup_judge_error(s, w, r, out);
	if (w->refused && w->last_was_error)
		log_info("the server takes connections again");
	w->last_was_error = false;
	w->backoff = 500 * USEC_PER_MSEC;
	w->last = r->info;
	s->looked_at = timing_now();
	/* A used slot ends even a wait: the run it was for is done. */
	if (o->no_wait || r->info.why == BUSY_SLOT_USED) {
		sup_skip(s, &r->info, o->no_wait ? " (--no-wait)" : "", out);
		return STEP_END;
	}
	if (r->info.why == BUSY_PAUSED) {
		if (strcmp(r->info.paused_until, w->last_paused) != 0) {
			log_event(LOG_INFO, "waiting", "waiting: lease paused by %s until %s",
				  r->info.paused_by[0] ? r->info.paused_by : "an operator", pause_until(&r->info));
			snprintf(w->last_paused, sizeof(w->last_paused), "%s", r->info.paused_until);
		}
		sdnotify_status(s->sd, true, "standby: lease %s paused by %s until %s", o->lease,
				r->info.paused_by[0] ? r->info.paused_by : "an operator", pause_until(&r->info));
		return STEP_ON;
	}
	w->last_paused[0] = '\0';
	if (r->info.term != w->last_term || strcmp(r->info.holder, w->last_holder) != 0) {
		fmt_dur(a, sizeof(a), r->info.expires_in_us);
		log_event(LOG_INFO, "waiting", "waiting: held by %s (term %" PRIu64 "), expires in %s", r->info.holder,
			  r->info.term, a);
		w->last_term = r->info.term;
		snprintf(w->last_holder, sizeof(w->last_holder), "%s", r->info.holder);
	}
	/* Connected and contending: READY=1 with the first answer. */
	sdnotify_status(s->sd, true, "standby: waiting for lease %s held by %s (term %" PRIu64 ")", o->lease,
			r->info.holder[0] ? r->info.holder : "another holder", r->info.term);
	return STEP_ON;
}

/* One attempt at the lease: OP, its answer, and what it means. */
static enum step sup_attempt(struct sup *s, struct waiting *w, enum worker_op op, struct worker_result *r,
			     struct outcome *out)
{
	enum step st;

	if (worker_submit(s->w, op, w->woken_for, -1) < 0) {
		log_error("internal error: database worker busy");
		out->kind = OUTCOME_INTERNAL;
		return STEP_END;
	}
	st = sup_await(s, w, r, out);
	return st == STEP_ON ? sup_judge(s, w, r, out) : st;
}

/* Blocks on the leader's hint for up to US. *HOW: woken (try the row at
 * once), timed out (look again), or nothing to block on (poll). */
enum block { BLOCK_WOKEN, BLOCK_TIMED_OUT, BLOCK_POLL };
static enum step sup_block_on_hint(struct sup *s, struct waiting *w, unsigned slot, uint64_t term, int64_t us,
				   enum block *how, struct outcome *out)
{
	struct worker_result r;
	enum step st;

	*how = BLOCK_POLL;
	if (worker_submit_wait(s->w, slot, term, us) < 0) {
		w->hints = false;
		return STEP_ON;
	}
	s->waiting_on_hint = true;
	st = sup_await(s, w, &r, out);
	if (st != STEP_ON)
		return st;
	s->waiting_on_hint = false;
	if (r.hints_off) {
		log_debug("the wake-up hint does not work here; polling");
		return STEP_ON;
	}
	/* A leader that died with the lease unreleased leaves us its hint:
	 * we keep it to the expiry (worker_keeps_hint), and the others keep
	 * blocking behind us. */
	w->woken_for = r.woken && r.leader_gone ? term : 0;
	w->woken_slot = slot;
	*how = r.woken ? BLOCK_WOKEN : r.hint_unheld ? BLOCK_POLL : BLOCK_TIMED_OUT;
	if (r.woken)
		log_debug("woken by the hint of term %" PRIu64 "%s", term, r.leader_gone ? "" : " (handed on)");
	return STEP_ON;
}

/* Waits until the lease can change, and says how to try next (*OP):
 *   - after an error: back off, then look;
 *   - paused: sleep to the pause's end, never longer than --retry-interval;
 *   - holding a dead leader's hint: sleep to its expiry, then look;
 *   - with the hint: block on it up to the expiry the row reported (plus
 *     jitter); woken, try the row at once; timed out, look again;
 *   - without it: poll, one look a --retry-interval (or at the expiry). */
static enum step sup_await_change(struct sup *s, struct waiting *w, const struct worker_result *r, enum worker_op *op,
				  struct outcome *out)
{
	const struct options *o = s->o;
	int64_t poll = sup_jitter(s, o->retry_us * 19 / 20, o->retry_us * 21 / 20), us;
	int64_t past_expiry = r->info.expires_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC);
	enum block how;
	enum step st;

	*op = WORKER_LOOK;
	if (r->outcome == LEASE_ERROR) {
		w->woken_for = 0;
		return sup_sleep(s, w, w->pause, out);
	}
	if (r->info.why == BUSY_PAUSED)
		return sup_sleep(s, w, min64(poll, r->info.paused_in_us + sup_jitter(s, 1000, 20 * USEC_PER_MSEC)),
				 out);
	if (r->hint_held && w->woken_for == r->info.term && w->woken_slot == r->info.slot) {
		/* The look that follows gives the hint back unless it wins. */
		w->woken_for = 0;
		return sup_sleep(s, w, o->slots > 1 ? min64(poll, past_expiry) : past_expiry, out);
	}
	w->woken_for = 0;
	if (w->hints) {
		/* Not a moment before the expiry, and a little after it: a
		 * follower woken by a dead leader's hint takes the lease then,
		 * and the others find it taken. The block is bounded by the
		 * follower's ttl (a holder with a longer one is looked at once
		 * a ttl), and --wait-timeout. */
		us = r->info.expires_in_us + sup_jitter(s, 100 * USEC_PER_MSEC, 500 * USEC_PER_MSEC);
		us = min64(us, o->timing.ttl_us + USEC_PER_SEC);
		/* A named lock has one holder, so each slot has a hint of its
		 * own, and a waiter blocks on the one that expires first: a
		 * release of that slot wakes it at once, and another slot that
		 * comes free is seen at the next look, a --retry-interval on. */
		if (o->slots > 1)
			us = min64(us, poll);
		if (w->give_up)
			us = min64(us, w->give_up - timing_now());
		st = sup_block_on_hint(s, w, r->info.slot, r->info.term, us > 0 ? us : 0, &how, out);
		if (st != STEP_ON)
			return st;
		if (how == BLOCK_WOKEN)
			*op = WORKER_ACQUIRE;
		if (how != BLOCK_POLL)
			return STEP_ON;
	}
	/* Polling: jittered so that followers do not stampede, and just past
	 * the expiry when that comes first. */
	return sup_sleep(s, w, r->info.expires_in_us >= 0 ? min64(poll, past_expiry) : poll, out);
}

/* Acquires the lease, waiting for it as the options say. Returns true when
 * held (s->term, deadlines set); false with OUT filled otherwise. */
static bool sup_acquire(struct sup *s, struct outcome *out)
{
	const struct options *o = s->o;
	struct waiting w = {.first = true, .hints = !o->no_wake_hint, .backoff = 500 * USEC_PER_MSEC};
	/* The first attempt goes straight at the row; later ones look first. */
	enum worker_op op = WORKER_ACQUIRE;
	struct worker_result r;

	w.start = timing_now();
	w.give_up = o->wait_timeout_us >= 0 ? w.start + o->wait_timeout_us : 0;
	w.last.why = BUSY_HELD;
	for (;;) {
		switch (sup_attempt(s, &w, op, &r, out)) {
		case STEP_TAKEN:
			return true;
		case STEP_END:
			return false;
		case STEP_ON:
			break;
		}
		if (w.give_up && timing_now() >= w.give_up) {
			sup_gave_up(s, &w, out);
			return false;
		}
		if (sup_await_change(s, &w, &r, &op, out) == STEP_END)
			return false;
	}
}

/* ---- 3. hold, 4. drain ------------------------------------------------- */

/* STATUS= while leading, with HOW after the term; READY=1 with the first.
 * Once the stop has begun, its status stays. */
static void sup_sd_leading(struct sup *s, const char *how)
{
	if (!sdnotify_is_stopping(s->sd))
		sdnotify_status(s->sd, true, "leader of %s, term %" PRIu64 "%s", s->o->lease, s->term, how);
}

/* The lease is gone or going: say so once, to the log and the receivers. */
static void sup_notify_lost(struct sup *s)
{
	if (s->lost_notified)
		return;
	s->lost_notified = true;
	notify_event(s->n, "lost", s->term, -1, (timing_now() - s->acquired_at) / 1000);
	sdnotify_stopping(s->sd, "stopping %s: lease %s", s->cmd, s->revoked ? "revoked" : "lost");
}

/* The command's group, and anything it left behind, get the kill signal;
 * SIGKILL follows after --kill-grace (sup_on_timers). */
static void sup_stop(struct sup *s, int64_t now)
{
	s->stop_sent = true;
	s->stop_sent_at = now;
	child_signal(&s->child, s->o->kill_signal);
	child_kill_descendants(&s->child, s->o->kill_signal);
}

/* SIGKILL to the group and to every descendant outside it. Not once: from
 * here on the loop calls it at every wake-up (sup_hold), because a process
 * killed now orphans its children to us only after it dies, and one that
 * forks in the meantime leaves a child the scan did not see (issue 25).
 * Returns how many processes it reached. */
static int sup_sigkill(struct sup *s)
{
	int n = child_signal(&s->child, SIGKILL) == 0;

	s->killed = true;
	s->kill_rounds++;
	return n + child_kill_descendants(&s->child, SIGKILL);
}

/* The kill first; the log and the receivers (a datagram to systemd, a
 * queued webhook) after it. */
static void sup_kill_now(struct sup *s, const char *why)
{
	sup_sigkill(s);
	sup_notify_lost(s);
	log_event(LOG_ERROR, "lost", "%s; sent SIGKILL to the command's process group", why);
}

static void sup_on_renew(struct sup *s, const struct worker_result *r, int64_t now)
{
	const struct timing *t = &s->o->timing;
	char a[32];

	if (r->outcome == LEASE_OK) {
		/* Latency from send to reply; margin: what was left of the
		 * deadline this renew replaces when its answer came. */
		metrics_renewed(s->m, now - r->sent_at, sup_deadline(s) - now);
		if (s->failures)
			log_warn("renewed after %u failed attempt%s", s->failures, s->failures == 1 ? "" : "s");
		s->failures = 0;
		if (r->sent_at > s->sent_at) {
			s->sent_at = r->sent_at;
			child_set_deadline(&s->child, sup_deadline(s));
		}
		s->next_renew = r->sent_at + t->renew_us;
		log_debug("renewed term %" PRIu64, s->term);
		sup_sd_leading(s, "");
		return;
	}
	if (r->outcome == LEASE_REVOKED) {
		/* Still ours until we let go, and nobody can take it before
		 * that or its expiry: the normal stop, with the grace, then the
		 * reap and the release. */
		s->revoked = true;
		metrics_revoked(s->m);
		if (!s->stop_sent) {
			sup_stop(s, now);
			sup_notify_lost(s);
			fmt_dur(a, sizeof(a), min64(sup_deadline(s), now + t->grace_us) - now);
			log_event(LOG_ERROR, "revoked",
				  "lease revoked by 'leaderrun --release'; sending SIG%s to the command, SIGKILL in %s",
				  sup_signame(s->o->kill_signal), a);
		} else {
			sup_notify_lost(s);
			log_event(LOG_ERROR, "revoked", "lease revoked by 'leaderrun --release' while stopping");
		}
		return;
	}
	if (r->outcome == LEASE_LOST) {
		/* Someone else may already hold it: no grace period. */
		s->lost = true;
		sup_kill_now(
		    s, "lease lost: the row is no longer ours (expired and taken, released by force, or the server "
		       "turned read-only)");
		return;
	}
	s->failures++;
	metrics_renew_failed(s->m);
	/* Retry at short, even steps on a fresh connection: the deadline, not
	 * this schedule, keeps the command safe, and a step that is short next
	 * to ttl - margin - grace is what lets an outage of nearly that length
	 * pass unnoticed. */
	s->next_renew = now + timing_retry_step(t);
	fmt_dur(a, sizeof(a), sup_stop_at(s) - now);
	if (s->failures == 1) {
		log_event(LOG_WARN, "renew_failed",
			  "renew failed (%s: %s); retrying, %s left before the command is stopped",
			  dberr_name(r->status), r->err, a);
		sup_sd_leading(s, ": renew failing");
	} else
		log_debug("renew attempt %u failed (%s: %s); %s left", s->failures, dberr_name(r->status), r->err, a);
}

static void sup_on_signals(struct sup *s)
{
	for (int i = 0; i < s->nsigs; i++) {
		int sig = s->sigs[i];
		if (sig == SIGCHLD) {
			sup_reap(s);
			continue;
		}
		if (sig == SIGTTOU || sig == SIGTTIN || sig == SIGPIPE)
			continue;
		/* Forward to the group; the lease stays renewed while the
		 * command shuts down. */
		if (s->child_running || child_group_alive(&s->child)) {
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

/* The next instant something must happen, or 0 for none. */
static int64_t sup_next_timer(struct sup *s, bool worker_busy)
{
	const struct timing *t = &s->o->timing;
	int64_t at = 0, history_at;

#define CONSIDER(x)                                                                                                    \
	do {                                                                                                           \
		int64_t x_ = (x);                                                                                      \
		if (at == 0 || x_ < at)                                                                                \
			at = x_;                                                                                       \
	} while (0)

	if (!s->killed) {
		CONSIDER(s->stop_sent ? min64(sup_deadline(s), s->stop_sent_at + t->grace_us) : sup_deadline(s));
		if (!s->stop_sent)
			CONSIDER(sup_stop_at(s));
		if (!s->stop_sent && s->runtime_end && s->child_running)
			CONSIDER(s->runtime_end);
		if (s->draining)
			CONSIDER(s->drain_kill_at);
	}
	/* Stragglers that are not our children die without a SIGCHLD to us,
	 * and a killed one's children are orphaned to us only then: look
	 * again now and then while draining or killing. Every 50 ms for the
	 * first two seconds of SIGKILLs, then every second: what outlives that
	 * is stuck in the kernel (D state), and a /proc scan at 20 Hz for as
	 * long as it hangs would only burn CPU. */
	if (s->draining || s->killed)
		CONSIDER(timing_now() + (s->kill_rounds < 40 ? 50 : 1000) * USEC_PER_MSEC);
	if (!s->lost && !s->revoked) {
		if (worker_busy && !s->attempt_aborted)
			CONSIDER(s->attempt_started + timing_attempt_budget(t));
		else if (!worker_busy)
			CONSIDER(s->next_renew);
	}
	history_at = history_due(s->h);
	if (history_at)
		CONSIDER(history_at);
#undef CONSIDER
	return at;
}

/* --max-runtime ran out: the kill signal now, SIGKILL after the grace (or
 * at the lease's deadline, if that comes first), as when the lease goes;
 * then the reap and a normal release. */
static void sup_time_out(struct sup *s, int64_t now)
{
	const struct options *o = s->o;
	char a[32], b[32];

	s->timed_out = true;
	sup_stop(s, now);
	metrics_timed_out(s->m);
	fmt_dur(a, sizeof(a), o->max_runtime_us);
	fmt_dur(b, sizeof(b), min64(sup_deadline(s), now + o->timing.grace_us) - now);
	/* An error, not a warning: the job did not finish, and -q (cron's
	 * quiet mode) must still say so. */
	log_event(LOG_ERROR, "timed_out",
		  "command ran for %s (--max-runtime); sending SIG%s to its process group, SIGKILL in %s", a,
		  sup_signame(o->kill_signal), b);
	notify_event(s->n, "timed_out", s->term, -1, (now - s->acquired_at) / 1000);
	/* The loop stops feeding the watchdog now (sup_healthy): systemd is
	 * to stop watching too, or a long --kill-grace ends in its kill. */
	sdnotify_stopping(s->sd, "stopping %s: ran for %s (--max-runtime)", s->cmd, a);
}

static void sup_on_timers(struct sup *s, int64_t now, bool worker_busy)
{
	const struct options *o = s->o;
	const struct timing *t = &o->timing;
	char a[32];

	if (!s->killed && now >= sup_deadline(s)) {
		s->stop_sent = true;
		s->renew_late = true;
		sup_kill_now(s, "lease deadline reached without a successful renew");
	} else if (!s->killed && s->stop_sent && now >= s->stop_sent_at + t->grace_us) {
		if (s->timed_out && !s->revoked) {
			/* The lease is fine: announced by the timed_out line. */
			sup_sigkill(s);
			log_info("command still running --kill-grace after --max-runtime; sent SIGKILL to its "
				 "process group");
		} else
			sup_kill_now(s, "command still running after --kill-grace");
	} else if (!s->stop_sent && now >= sup_stop_at(s)) {
		s->renew_late = true;
		sup_stop(s, now);
		sup_notify_lost(s);
		fmt_dur(a, sizeof(a), sup_deadline(s) - now);
		log_event(LOG_ERROR, "lost", "no successful renew in time; sending SIG%s to the command, SIGKILL in %s",
			  sup_signame(o->kill_signal), a);
	}
	/* After the lease's own deadlines: when both are due, the lease's
	 * stop is the one that happens. */
	if (!s->stop_sent && s->runtime_end && s->child_running && now >= s->runtime_end)
		sup_time_out(s, now);
	history_tick(s->h, now);
	if (s->draining && !s->killed && now >= s->drain_kill_at && sup_sigkill(s) > 0)
		log_warn("processes left by the command outlived --kill-grace; killed them");

	if (s->lost || s->revoked)
		return;
	if (worker_busy && !s->attempt_aborted && now >= s->attempt_started + timing_attempt_budget(t)) {
		/* A renew that hangs is cut off, so a retry on a fresh
		 * connection still fits before the stop signal. */
		log_debug("renew attempt exceeded its budget; aborting it");
		worker_abort(s->w);
		s->attempt_aborted = true;
	} else if (!worker_busy && now >= s->next_renew) {
		if (worker_submit(s->w, WORKER_RENEW, s->term, -1) == 0) {
			s->attempt_started = now;
			s->attempt_aborted = false;
		}
	}
}

/* After COMMAND's exit: every process it left behind gets the kill signal
 * now and SIGKILL after the grace. */
static void sup_start_drain(struct sup *s, int64_t now)
{
	int n;

	s->draining = true;
	s->drain_kill_at = now + s->o->timing.grace_us;
	if (s->killed)
		return; /* SIGKILL is on its way again, a signal is moot */
	n = child_signal(&s->child, s->o->kill_signal) == 0;
	n += child_kill_descendants(&s->child, s->o->kill_signal);
	if (n > 0)
		log_info("the command left processes behind; sending SIG%s", sup_signame(s->o->kill_signal));
}

/* True once no descendant is left. The common case costs two system calls:
 * the group is empty and, with the watcher gone, waitpid reports no child.
 * A descendant that left the group (setsid) was signalled with the group
 * (sup_start_drain, sup_stop); one that is orphaned to us only later is a
 * child now, and waitpid keeps us here until the SIGKILL at the end of the
 * grace has reached it too. */
static bool sup_all_reaped(struct sup *s)
{
	pid_t pid;
	int st;

	if (child_group_alive(&s->child))
		return false;
	/* Nothing left for the watcher to guard. */
	child_unwatch(&s->child);
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		;
	return pid < 0 && errno == ECHILD;
}

static void sup_hold(struct sup *s)
{
	while (s->child_running || !sup_all_reaped(s)) {
		bool busy = worker_busy(s->w);
		int ev = sup_poll(s, sup_next_timer(s, busy));
		int64_t now = timing_now();
		struct worker_result r;

		if ((ev & EV_WORKER) && sup_take(s, &r) == 0 && r.op == WORKER_RENEW && !s->lost && !s->revoked)
			sup_on_renew(s, &r, now);
		if (ev & EV_SIGNAL) {
			bool was_running = s->child_running;
			sup_on_signals(s);
			if (was_running && !s->child_running)
				sup_start_drain(s, now);
		}
		sup_on_timers(s, now, worker_busy(s->w));
		if (s->killed)
			sup_sigkill(s);
	}
	child_unwatch(&s->child);
}

/* ---- 5. release ------------------------------------------------------- */

static void sup_release(struct sup *s)
{
	/* Not a moment past the deadline (the lease is no longer ours to
	 * give), and not longer than a renew interval: if the database does
	 * not answer, the lease simply expires. */
	int64_t give_up = min64(sup_deadline(s), timing_now() + s->o->timing.renew_us);
	struct worker_result r;

	/* A renew may still be in flight: let it land (it can only extend). */
	while (worker_busy(s->w)) {
		int ev = sup_poll(s, give_up);
		if (ev & EV_SIGNAL) {
			sup_signals_while_waiting(s);
		}
		if ((ev & EV_WORKER) && sup_take(s, &r) == 0 && r.op == WORKER_RENEW && r.outcome == LEASE_OK)
			s->sent_at = r.sent_at;
		if (timing_now() >= give_up) {
			log_warn("could not release the lease in time; it expires on its own");
			return;
		}
	}
	if (worker_submit(s->w, WORKER_RELEASE, s->term, s->exit_status) < 0)
		return;
	for (;;) {
		int ev = sup_poll(s, give_up);
		if (ev & EV_SIGNAL)
			sup_signals_while_waiting(s);
		if ((ev & EV_WORKER) && sup_take(s, &r) == 0)
			break;
		if (timing_now() >= give_up) {
			worker_abort(s->w);
			log_warn("could not release the lease in time; it expires on its own");
			return;
		}
	}
	if (r.outcome == LEASE_OK) {
		log_event(LOG_INFO, "released", "released term %" PRIu64, s->term);
		metrics_released(s->m);
		notify_event(s->n, "released", s->term, s->exit_status, (timing_now() - s->acquired_at) / 1000);
	} else if (r.outcome == LEASE_LOST)
		log_warn("the lease had already expired when the command finished");
	else
		log_warn("release failed (%s: %s); the lease expires on its own", dberr_name(r.status), r.err);
}

/* Leaving without running the command (a signal, --wait-timeout) while an
 * acquire is in flight: it may have taken the lease. Wait briefly for it
 * and give back what it took, so that nobody waits a whole ttl for a
 * holder that never ran anything. */
static void sup_abandon_acquire(struct sup *s)
{
	int64_t give_up = timing_now() + min64(s->o->timing.renew_us, 500 * USEC_PER_MSEC);
	struct worker_result r;

	/* Blocked on the hint, not acquiring: nothing to give back. */
	if (s->waiting_on_hint) {
		worker_abort(s->w);
		return;
	}

	while (worker_busy(s->w)) {
		int ev = sup_poll(s, give_up);
		if (ev & EV_SIGNAL)
			sup_signals_while_waiting(s);
		if ((ev & EV_WORKER) && sup_take(s, &r) == 0) {
			if ((r.op == WORKER_ACQUIRE || r.op == WORKER_LOOK) && r.outcome == LEASE_OK) {
				s->term = r.info.term;
				s->sent_at = r.sent_at;
				log_info("an acquire in flight took term %" PRIu64 "; releasing it", s->term);
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
	int st = s->child_wstatus;

	if (s->lost || (s->renew_late && !s->revoked))
		history_end(s->h, HISTORY_LOST, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			    WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	else if (s->revoked)
		history_end(s->h, HISTORY_REVOKED, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			    WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	else if (s->timed_out)
		history_end(s->h, HISTORY_TIMED_OUT, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			    WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	else if (WIFSIGNALED(st))
		history_end(s->h, HISTORY_SIGNALED, -1, WTERMSIG(st));
	else
		history_end(s->h, HISTORY_EXITED, WEXITSTATUS(st), -1);
}

void supervisor_run(const struct options *o, struct worker *w, const struct observers *obs, char *const environ_base[],
		    struct outcome *out)
{
	struct notify *n = obs->n;
	struct sup s;
	sigset_t set;
	char **env;
	char err[512];

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	s.o = o;
	s.w = w;
	s.n = n;
	s.m = obs->m;
	s.h = obs->h;
	s.sd = obs->sd;
	s.cmd = strrchr(o->command[0], '/') ? strrchr(o->command[0], '/') + 1 : o->command[0];
	s.exit_status = -1;
	/* A file left by a leaderrun that was SIGKILLed must not make this
	 * one look ready before it leads. */
	if (o->ready_file && unlink(o->ready_file) != 0 && errno != ENOENT)
		log_warn("--ready-file %s: %s", o->ready_file, strerror(errno));
	if (getrandom(&s.rng, sizeof(s.rng), GRND_NONBLOCK) != (ssize_t)sizeof(s.rng) || s.rng == 0)
		s.rng = (uint64_t)timing_now() | 1;

	sigprocmask(SIG_BLOCK, NULL, &set);
	s.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	s.timerfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s.sigfd < 0 || s.timerfd < 0) {
		log_error("signalfd/timerfd: %s", strerror(errno));
		out->kind = OUTCOME_INTERNAL;
		goto done;
	}

	metrics_waiting(s.m, true);
	sdnotify_status(s.sd, false, "starting: connecting to the database");
	if (!sup_acquire(&s, out)) {
		metrics_waiting(s.m, false);
		sup_sd_gave_up(&s, out);
		sup_abandon_acquire(&s);
		goto done;
	}
	s.leading = true;
	metrics_waiting(s.m, false);
	s.acquired_at = timing_now();
	s.acquire_sent_at = s.sent_at;
	metrics_acquired(s.m, s.slot, s.term);
	/* Off the hot path: the history's own thread and connection write
	 * the run's row while the command starts. */
	history_begin(s.h, s.slot, s.term, s.acquire_sent_at);
	if (o->slots > 1)
		log_event(LOG_INFO, "acquired", "acquired slot %u of %u, term %" PRIu64 ", as %s on %s", s.slot,
			  o->slots, s.term, o->holder, s.server);
	else
		log_event(LOG_INFO, "acquired", "acquired term %" PRIu64 " as %s on %s", s.term, o->holder, s.server);
	notify_set_slot(n, s.slot);
	notify_event(n, "acquired", s.term, -1, 0);

	env = child_env_build(environ_base, o->lease, (unsigned long long)s.term, s.slot, o->holder);
	if (!env) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
		history_end(s.h, HISTORY_EXITED, -1, -1);
		sdnotify_stopping(s.sd, "exiting: cannot start %s", s.cmd);
		sup_release(&s);
		goto done;
	}
	if (child_spawn(&s.child, o->command, env, sup_deadline(&s), err, sizeof(err)) < 0 && s.child.pid <= 0) {
		child_env_free(env);
		log_error("%s", err);
		out->kind = OUTCOME_INTERNAL;
		history_end(s.h, HISTORY_EXITED, -1, -1);
		sdnotify_stopping(s.sd, "exiting: cannot start %s", s.cmd);
		sup_release(&s);
		goto done;
	}
	child_env_free(env);
	/* Counted from the spawn: the wait for the lease is not run time. */
	if (o->max_runtime_us > 0)
		s.runtime_end = timing_now() + min64(o->max_runtime_us, INT64_MAX / 2);
	metrics_command_started(s.m);
	/* An exec failure still leaves a child to reap (it exits 126/127);
	 * the loop below treats it like any other exit. */
	if (s.child.exec_errno)
		log_error("%s", err);
	s.child_running = true;
	sup_ready(&s);
	notify_event(n, "start", s.term, -1, 0);
	sup_sd_leading(&s, "");

	sup_hold(&s);
	sup_history_end(&s);

	if (s.lost || s.renew_late || s.revoked) {
		/* Renewing may have recovered while the command shut down; give
		 * back what is still ours. A --max-runtime stop that the lease's
		 * loss overtook ends here too: 76 says the lease went. */
		if (!s.lost)
			sup_release(&s);
		if (!s.revoked)
			metrics_lost(s.m);
		metrics_not_held(s.m);
		out->kind = OUTCOME_LOST;
		log_error("command stopped: lease %s (term %" PRIu64 ")", s.revoked ? "revoked" : "lost", s.term);
		if (s.revoked)
			sdnotify_stopping(s.sd, "lease %s revoked (term %" PRIu64 "): %s stopped", o->lease, s.term,
					  s.cmd);
		else
			sdnotify_stopping(s.sd, "lost lease %s (term %" PRIu64 "): %s stopped", o->lease, s.term,
					  s.cmd);
	} else if (s.timed_out) {
		/* The lease was ours throughout: a normal release, recording
		 * the command's own status (--min-hold applies: it ran). */
		sup_release(&s);
		metrics_not_held(s.m);
		out->kind = OUTCOME_TIMED_OUT;
		sdnotify_stopping(s.sd, "%s timed out (--max-runtime): stopped", s.cmd);
	} else {
		sup_release(&s);
		metrics_not_held(s.m);
		out->kind = OUTCOME_CHILD_EXITED;
		out->wstatus = s.child_wstatus;
	}

done:
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.timerfd >= 0)
		close(s.timerfd);
}
