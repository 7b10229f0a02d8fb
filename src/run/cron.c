/* --schedule: each slot is a run of its own (run_once), with its own
 * connection and database thread, made at the slot's time and closed after
 * it: between slots an instance sleeps on one timer and holds no
 * connection. Which instance runs a slot, and whether a lost attempt runs
 * again, the lease's row decides (lease_sched.c), by the server's clock;
 * this loop only wakes at the slots' times by the local one.
 *
 * A slot is tried from its time until its window closes: with --catch-up,
 * the slot's time plus WINDOW (a standby waits on a slot's run to take it
 * over if its holder dies); without, the slot's time plus the ttl, or the
 * next slot if that comes first (a database down that long misses it). */
#include "cron.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/timing.h"
#include "db/dberr.h"
#include "lease/lease.h"
#include "report/log.h"
#include "run.h"
#include "runmode.h"
#include "schedule/schedule.h"

/* The first slot to try: the one in progress when --catch-up's window
 * still covers it (a slot that every instance missed runs once, late),
 * else the next. */
static int64_t cron_first(const struct options *o, int64_t now)
{
	int64_t prev = schedule_prev(&o->schedule, now);

	if (o->catch_up_us > 0 && prev >= 0 && now < prev + o->catch_up_us)
		return prev;
	return schedule_next(&o->schedule, now);
}

/* When the wait for slot AT ends, on CLOCK_BOOTTIME (the run's clock). */
static int64_t cron_give_up(const struct options *o, int64_t at, int64_t now)
{
	int64_t end = at + o->timing.ttl_us, next = schedule_next(&o->schedule, at);

	if (o->catch_up_us > 0)
		end = at + o->catch_up_us;
	else if (next > at && next < end)
		end = next;
	return timing_now() + (end > now ? end - now : 0);
}

/* Orphans of earlier runs that ended between slots: we are their
 * subreaper, and they must not stay zombies. */
static void cron_reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Sleeps until the wall clock reaches AT. False when TERM, INT or QUIT
 * came first. A change of the wall clock (TFD_TIMER_CANCEL_ON_SET) arms
 * the timer again for the new time. */
static bool cron_sleep(int sigfd, int tfd, int64_t at)
{
	struct itimerspec its = {.it_value = {.tv_sec = at / USEC_PER_SEC, .tv_nsec = at % USEC_PER_SEC * 1000}};

	for (;;) {
		struct pollfd p[2] = {{.fd = sigfd, .events = POLLIN}, {.fd = tfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		uint64_t n;

		if (timing_wall() >= at)
			return true;
		timerfd_settime(tfd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return true;
		if (p[1].revents && read(tfd, &n, sizeof(n)) < 0 && errno != ECANCELED && errno != EAGAIN)
			return true;
		while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGQUIT)
				return false;
			if (si.ssi_signo == SIGCHLD)
				cron_reap();
		}
	}
}

/* What the run of slot AT kept from the slots after it: they came while
 * it ran, and are skipped, not queued. Said once, by the instance that ran
 * it. */
static void cron_say_skipped(const struct options *o, int64_t at, int64_t now)
{
	int64_t n = schedule_count(&o->schedule, at, now, INT64_MAX);
	char slot[21], first[21], last[21];

	if (n <= 0)
		return;
	schedule_format(at, slot);
	schedule_format(schedule_next(&o->schedule, at), first);
	schedule_format(schedule_prev(&o->schedule, now), last);
	if (n == 1)
		log_event(LOG_NOTICE, "slots_skipped", "the %s slot was skipped: the run of the %s slot still ran",
			  first, slot);
	else
		log_event(LOG_NOTICE, "slots_skipped",
			  "%lld slots from %s to %s were skipped: the run of the %s slot still ran", (long long)n,
			  first, last, slot);
}

/* The slot after SLOT's run, at NOW. With --catch-up: SLOT again when
 * this instance's own attempt was lost (its rerun may fall to it too);
 * else the lease's last slot, earlier or later, when its last attempt
 * was lost or still runs and its window is open (to take it over): once
 * a slot (*REVISITED), so that a slot found done is not looked at again;
 * else the latest slot whose window is still open (one that every
 * instance missed runs once, late); else the next. A slot that came while
 * the lease was held is never run late: the row refuses it (stmts.def,
 * acquire_sched). */
static int64_t cron_next(const struct options *o, const struct run_slot *slot, int64_t now, int64_t *revisited)
{
	int64_t at = slot->at_us, w = o->catch_up_us, last = slot->last_slot_us;
	int64_t prev = schedule_prev(&o->schedule, now);

	if (w > 0 && slot->attempt && !slot->ended && now < at + w)
		return at;
	if (w > 0 && last > 0 && last != at && last != *revisited && slot->last_lost && now < last + w) {
		*revisited = last;
		return last;
	}
	if (w > 0 && prev > at && now < prev + w)
		return prev;
	return schedule_next(&o->schedule, at > now ? at : now);
}

/* An outcome that no later slot can fix: access denied, no table, a
 * COMMAND that cannot run, the loop's own failure. */
static bool cron_fatal(enum outcome_kind k)
{
	return k == OUTCOME_DENIED || k == OUTCOME_NO_TABLE || k == OUTCOME_USAGE || k == OUTCOME_INTERNAL ||
	       k == OUTCOME_NOT_FOUND || k == OUTCOME_NOT_EXECUTABLE;
}

/* The slots, one run each, from AT on, until a signal or a fatal outcome
 * (into OUT). */
static void cron_loop(const struct options *o, struct run_base *b, int sigfd, int tfd, struct outcome *out)
{
	int64_t at = cron_first(o, timing_wall()), revisited = 0;

	out->kind = OUTCOME_STOPPED;
	while (at >= 0 && cron_sleep(sigfd, tfd, at)) {
		struct run_slot slot = {.at_us = at, .give_up = cron_give_up(o, at, timing_wall())};
		struct outcome run;
		char when[21];

		schedule_format(at, when);
		log_debug("the %s slot: trying the lease", when);
		run_once(o, b, &slot, &run);
		if (cron_fatal(run.kind)) {
			*out = run;
			return;
		}
		if (slot.stop)
			return;
		/* Released after its end, the lease kept the slots that came
		 * meanwhile from everyone. */
		if (slot.attempt && slot.ended && slot.released_us)
			cron_say_skipped(o, at, slot.released_us);
		at = cron_next(o, &slot, timing_wall(), &revisited);
	}
	if (at < 0)
		log_event(LOG_NOTICE, NULL, "the schedule has no slot left within its horizon (50 years); stopping");
}

/* At start, what no slot would fix later: access denied, no database, no
 * lease table, or one too old for a schedule end the schedule now, with
 * their exit statuses, not at the first slot hours later. A database
 * down now is no reason to stop: said, and the slots try again. */
static bool cron_check(const struct options *o, struct run_base *b, struct outcome *out)
{
	struct db *db = db_new(&b->cfg);
	struct db_err err = {.st = DB_ERROR, .msg = "out of memory"};
	int schema = 0;

	if (db && (err.st = db_connect(db, &err)) == DB_OK)
		err.st = lease_table_schema(db, &b->sql, &schema, &err);
	db_free(db);
	if (err.st == DB_OK && schema >= 3)
		return true;
	if (err.st == DB_OK) {
		log_error("lease table %s %s; run 'leaderrun --init' (it also upgrades an older table)", o->table,
			  schema ? "is older than a schedule needs (schema 3)" : "does not exist");
		out->kind = OUTCOME_NO_TABLE;
		return false;
	}
	out->kind = runmode_outcome_of(err.st);
	if (out->kind != OUTCOME_UNAVAILABLE) {
		log_error("%s: %s", dberr_name(err.st), err.msg);
		return false;
	}
	log_warn("%s: %s; the schedule goes on, and its slots try the database again", dberr_name(err.st), err.msg);
	return true;
}

void cron_run(const struct options *o, struct outcome *out)
{
	struct run_base b;
	sigset_t set;
	int sigfd, tfd;

	if (!run_begin(o, &b, out))
		return;
	if (!cron_check(o, &b, out)) {
		run_end(&b);
		return;
	}
	/* run_begin blocked the signals that the runs take on a signalfd; the
	 * sleep between slots takes them on one of its own. */
	sigprocmask(SIG_BLOCK, NULL, &set);
	sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sigfd < 0 || tfd < 0) {
		log_error("cannot wait for the schedule's slots: %s", strerror(errno));
		out->kind = OUTCOME_INTERNAL;
	} else
		cron_loop(o, &b, sigfd, tfd, out);
	if (sigfd >= 0)
		close(sigfd);
	if (tfd >= 0)
		close(tfd);
	run_end(&b);
}
