/* A run under the lease: the checks and the shared observers (run_begin),
 * a run's own connection, database thread and history (run_once), their
 * ends. */
#include "run.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "base/duration.h"
#include "base/timing.h"
#include "child.h"
#include "report/history.h"
#include "report/log.h"
#include "report/metrics.h"
#include "report/notify.h"
#include "report/role.h"
#include "report/sdnotify.h"
#include "runmode.h"
#include "worker.h"

/* The run is over (sup_end_run wrote its row): the threads end, each
 * closing its connection, side by side rather than one after the other. A
 * call still under way (a release the supervisor stopped waiting for) gets
 * the bounded moment of a history write, then is cut short. */
static void run_wind_down(struct worker *w, struct history *h)
{
	if (worker_wait_idle(w, timing_now() + HISTORY_TIMEOUT_S * USEC_PER_SEC) < 0) {
		/* Hung: cut the call short; worker_stop leaves it behind if
		 * that does not end it either. */
		worker_abort(w);
		(void)worker_wait_idle(w, timing_now() + USEC_PER_SEC);
	}
	worker_quit(w);
	history_quit(h);
}

/* The database thread's standing orders for this run. */
static void run_job(const struct options *o, struct lease_sql *sql, struct worker_job *job)
{
	job->min_hold_us = o->min_hold_us;
	job->fence_us = o->timing.renew_us;
	job->fence_user = o->fence_user[0] ? o->fence_user : NULL;
	job->period_us = o->once_per_us;
	job->slots = o->slots;
	/* A --no-wait run takes no wake-up hint: it never waits itself, and
	 * the hint cost it a statement. A follower of the same
	 * lease that waits finds the hint unheld and polls the row at its
	 * retry interval instead, as with --no-wake-hint. */
	job->wake_hint = !o->no_wake_hint && !o->no_wait;
	job->several_hosts = o->dsn.nhosts > 1;
	job->name = o->lease;
	job->holder = o->holder;
	job->sql = sql;
	job->ttl_us = o->timing.ttl_us;
	job->priority = o->priority;
	/* The favourite's time to take a free lease: it is woken by the
	 * hint at once, or looks within its --retry-interval (the others
	 * assume theirs), with room for a look that crosses a new term. */
	job->claim_us = 2 * o->retry_us > 2 * USEC_PER_SEC ? 2 * o->retry_us : 2 * USEC_PER_SEC;
	job->choose_asked = o->priority_given || o->preempt || o->spread;
	job->spread = o->spread;
}

/* The role's board, before the database: a --role-http address in use, or
 * a --role-file that cannot be written, ends the run before it takes a
 * term. Its server's thread starts with the signals blocked, after
 * supervisor_block_signals. NULL with OUT filled, said. */
static struct role *run_role(const struct options *o, struct outcome *out)
{
	char err[PATH_MAX + 160];
	struct role *r = role_open(o->lease, o->holder, o->role_file, o->role_http, err, sizeof(err));

	if (!r) {
		log_error("%s", err);
		out->kind = OUTCOME_INTERNAL;
	}
	return r;
}

bool run_begin(const struct options *o, struct run_base *b, struct outcome *out)
{
	char err[512];
	int rc;

	memset(b, 0, sizeof(*b));
	memset(out, 0, sizeof(*out));
	/* Fail before touching the lease: a typo must not take a term. */
	rc = child_precheck(o->command[0], err, sizeof(err));
	if (rc != 0) {
		log_error("%s", err);
		out->kind = rc == 127 ? OUTCOME_NOT_FOUND : OUTCOME_NOT_EXECUTABLE;
		return false;
	}
	/* Orphans of the command reparent to us, so that we can reap them and
	 * know when every descendant is gone. As PID 1 we are that already. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	supervisor_block_signals();
	if (!(b->obs.role = run_role(o, out)))
		return false;
	if ((o->ping_url || o->nnotify) && notify_library_init() < 0)
		log_warn("cannot load libcurl (libcurl.so.4); --ping and --notify are disabled");
	if (runmode_library(o, &b->cfg, out) < 0) {
		role_close(b->obs.role);
		return false;
	}
	lease_sql_render(&b->sql, o->table);
	lease_hint_name(&b->sql, o->table, o->lease);
	/* What watches the runs from beside them: --notify and --ping, the
	 * metrics file, systemd (Type=notify: READY=1, STATUS=, STOPPING=1
	 * and the watchdog's keep-alives come from the supervisor's loop). */
	b->obs.n = notify_start(o);
	b->obs.m = metrics_start(o->metrics_file, o->lease, &o->timing);
	b->obs.sd = sdnotify_open(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"));
	return true;
}

/* The run's own observer: its history, whose thread has a connection of
 * its own, written with the release where it can (history_parked_sql). */
static void run_history_start(const struct options *o, struct run_base *b, struct worker *w)
{
	const struct history_of of = {o->history_table, o->table, o->lease, o->holder, o->history_keep};

	b->obs.h = history_start(&b->cfg, &of, b->obs.m);
	if (b->obs.h) {
		const struct worker_release_with also = {.sql = history_parked_sql,
							 .done = history_parked_done,
							 .arg = b->obs.h,
							 .kept = history_close_kept};
		worker_release_also(w, &also);
	}
}

void run_once(const struct options *o, struct run_base *b, struct run_slot *slot, struct outcome *out)
{
	struct worker_job job;
	struct worker *w;
	struct db *db = db_new(&b->cfg);
	bool history_left;

	memset(out, 0, sizeof(*out));
	run_job(o, &b->sql, &job);
	job.sched_us = slot ? slot->at_us : 0;
	job.rerun_until_us = slot && o->catch_up_us > 0 ? slot->at_us + o->catch_up_us : 0;
	w = db ? worker_start(db, &job) : NULL;
	if (!w) {
		log_error("cannot start the database thread");
		out->kind = OUTCOME_INTERNAL;
		db_free(db);
		return;
	}
	run_history_start(o, b, w);
	supervisor_run(o, w, &b->obs, slot, out);
	run_wind_down(w, b->obs.h);
	/* A plain run's end: the file that says "not held" first, then the
	 * history's last write, each with a bounded moment. */
	if (!slot) {
		sdnotify_close(b->obs.sd);
		role_close(b->obs.role);
		b->obs.sd = NULL;
		b->obs.role = NULL;
	}
	history_left = history_finish(b->obs.h, timing_now() + (HISTORY_TIMEOUT_S + 1) * USEC_PER_SEC) != 0;
	b->obs.h = NULL;
	/* A worker stuck on a dead socket is left behind with its connection;
	 * exiting is what must not wait. */
	if (worker_stop(w) != 0 || history_left)
		b->left = true;
}

void run_end(struct run_base *b)
{
	sdnotify_close(b->obs.sd);
	role_close(b->obs.role);
	metrics_stop(b->obs.m, timing_now() + USEC_PER_SEC);
	notify_finish(b->obs.n, timing_now() + 5 * USEC_PER_SEC);
	if (!b->left)
		db_library_end();
}

void run_plain(const struct options *o, struct outcome *out)
{
	struct run_base b;

	if (!run_begin(o, &b, out))
		return;
	run_once(o, &b, NULL, out);
	run_end(&b);
}
