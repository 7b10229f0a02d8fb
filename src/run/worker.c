#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bgthread.h"
#include "base/duration.h"
#include "base/timing.h"
#include "lease/choose.h"
#include "lease/standby.h"
#include "report/log.h"
#include "worker_int.h"

static void worker_free(struct worker *w)
{
	close(w->pipe[0]);
	close(w->pipe[1]);
	bgthread_destroy(&w->t);
	db_free(w->db);
	free(w->name);
	free(w->holder);
	free(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct worker_result r;
	struct worker_req q;
	bool detached;
	char msg[512];

	bgthread_lock(&w->t);
	for (;;) {
		while (!w->pending && !w->t.quit)
			bgthread_wait(&w->t, 0);
		if (w->t.quit)
			break;
		/* worker_run_op reads call and call_arg unlocked: they change
		 * only while no request is pending or running. */
		q = w->req;
		w->pending = false;
		w->running = true;
		bgthread_unlock(&w->t);

		worker_run_op(w, &q, &r);
		r.errnum = r.status != DB_OK ? db_errno(w->db) : 0;
		r.standby_lost = w->hint.keep_lost;
		w->hint.keep_lost = false;
		if (r.wake == HINT_NONE && !w->hint.on)
			r.wake = HINT_OFF;
		if (lease_sql_older(&w->sql, msg, sizeof(msg)))
			log_warn("%s", msg);
		if (r.info.stray && !w->stray_said) {
			w->stray_said = true;
			log_warn("ignored the lease table's row of slot %u, which says %u slots where slot 0 says "
				 "otherwise: leaderrun writes no such row; an account that may write %s did (an "
				 "administrator may delete it)",
				 r.info.stray_slot, r.info.stray_slots, w->sql.table);
		}
		if (w->sql.choose_lost && w->job.choose_asked && !w->choose_said) {
			w->choose_said = true;
			log_warn("the standbys' table %s is missing or older than this leaderrun (%s): --priority, "
				 "--preempt and --spread choose nothing, and switch-overs are not honoured; 'leaderrun "
				 "--init' upgrades it",
				 w->sql.standby, w->sql.choose_err);
		}

		bgthread_lock(&w->t);
		w->result = r;
		w->done = true;
		w->running = false;
		w->t.quit = w->t.quit || w->quit_after;
		(void)!write(w->pipe[1], "", 1);
	}
	detached = w->t.detached;
	bgthread_unlock(&w->t);
	db_disconnect(w->db);
	/* Abandoned while a call hung, and the call came back before the
	 * process ended: nobody else will free this. */
	if (detached)
		worker_free(w);
	return NULL;
}

struct worker *worker_start(struct db *db, const struct worker_job *job)
{
	struct worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	/* Own copies: a worker abandoned in a hung call outlives main's
	 * options and runmode's locals. */
	w->db = db;
	w->job = *job;
	w->sql = *job->sql;
	w->name = strdup(job->name);
	w->holder = strdup(job->holder);
	w->job.sql = &w->sql;
	w->job.name = w->name;
	w->job.holder = w->holder;
	standby_lock_name(w->sql.table, w->name ? w->name : "", w->holder ? w->holder : "", w->lock, sizeof(w->lock));
	/* Every run's acquisitions honour the others' claims; its own
	 * priority counts once its row is written. */
	choose_render(&w->sql, w->lock, job->priority, job->claim_us);
	/* The hint's named lock is local to one server: with several hosts
	 * a follower could wait on another server's. */
	hint_init(&w->hint, db, &w->sql, job->wake_hint && !job->several_hosts);
	if (!w->name || !w->holder || pipe2(w->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(w->name);
		free(w->holder);
		free(w);
		return NULL;
	}
	bgthread_init(&w->t);
	if (bgthread_start(&w->t, worker_main, w) != 0) {
		w->db = NULL; /* still the caller's */
		worker_free(w);
		return NULL;
	}
	return w;
}

int worker_fd(const struct worker *w)
{
	return w->pipe[0];
}

/* Queues Q, or for WORKER_CALL, FN(ARG). Returns -1 if busy. */
static int worker_queue(struct worker *w, const struct worker_req *q, worker_call_fn *fn, void *arg)
{
	int rc = -1;

	bgthread_lock(&w->t);
	if (!w->pending && !w->running && !w->done) {
		if (q->op == WORKER_CALL) {
			w->call = fn;
			w->call_arg = arg;
		}
		w->then_off = w->then_sent = false;
		w->req = *q;
		w->pending = true;
		bgthread_wake(&w->t);
		rc = 0;
	}
	bgthread_unlock(&w->t);
	return rc;
}

int worker_submit(struct worker *w, enum worker_op op, uint64_t term, int exit_status)
{
	struct worker_req q = {.op = op, .term = term, .exit_status = exit_status};

	return worker_queue(w, &q, NULL, NULL);
}

int worker_submit_wait(struct worker *w, const struct worker_wait *wait)
{
	struct worker_req q = {.op = WORKER_WAIT,
			       .term = wait->term,
			       .exit_status = -1,
			       .hint = wait->slot,
			       .wait_us = wait->timeout_us,
			       .then_acquire = wait->then_acquire && !wait->behind};

	snprintf(q.behind, sizeof(q.behind), "%s", wait->behind ? wait->behind : "");
	return worker_queue(w, &q, NULL, NULL);
}

bool worker_wait_no_further(struct worker *w)
{
	bool sent;

	bgthread_lock(&w->t);
	w->then_off = true;
	sent = w->then_sent;
	bgthread_unlock(&w->t);
	return sent;
}

int worker_submit_call(struct worker *w, worker_call_fn *fn, void *arg)
{
	struct worker_req q = {.op = WORKER_CALL};

	return worker_queue(w, &q, fn, arg);
}

int worker_submit_preempt(struct worker *w, uint64_t term, const char *holder)
{
	struct worker_req q = {.op = WORKER_PREEMPT, .term = term, .exit_status = -1};

	snprintf(q.holder, sizeof(q.holder), "%s", holder);
	return worker_queue(w, &q, NULL, NULL);
}

int worker_submit_standby(struct worker *w, bool healthy)
{
	struct worker_req q = {.op = WORKER_STANDBY, .healthy = healthy};

	return worker_queue(w, &q, NULL, NULL);
}

int worker_busy(struct worker *w)
{
	int busy;

	bgthread_lock(&w->t);
	busy = w->pending || w->running || w->done;
	bgthread_unlock(&w->t);
	return busy;
}

int worker_take(struct worker *w, struct worker_result *out)
{
	char drain[16];
	int rc = -1;

	bgthread_lock(&w->t);
	while (read(w->pipe[0], drain, sizeof(drain)) > 0)
		;
	if (w->done) {
		*out = w->result;
		w->done = false;
		rc = 0;
	}
	bgthread_unlock(&w->t);
	return rc;
}

void worker_abort(struct worker *w)
{
	db_abort(w->db);
}

void worker_release_also(struct worker *w, const struct worker_release_with *also)
{
	bgthread_lock(&w->t);
	w->also = *also;
	bgthread_unlock(&w->t);
}

int worker_wait_idle(struct worker *w, int64_t until)
{
	char drain[16];

	/* On the pipe, not on the idle condition variable: the supervisor
	 * polls it, and every wake-up writes to it. */
	for (;;) {
		struct pollfd p = {.fd = w->pipe[0], .events = POLLIN};
		int64_t left = until - timing_now();
		bool idle;

		bgthread_lock(&w->t);
		while (read(w->pipe[0], drain, sizeof(drain)) > 0)
			;
		idle = !w->pending && !w->running;
		bgthread_unlock(&w->t);
		if (idle)
			return 0;
		if (left <= 0)
			return -1;
		(void)poll(&p, 1, (int)((left + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
	}
}

void worker_quit(struct worker *w)
{
	bgthread_lock(&w->t);
	if (w->pending || w->running)
		w->quit_after = true;
	else
		w->t.quit = true;
	bgthread_wake(&w->t);
	bgthread_unlock(&w->t);
}

int worker_stop(struct worker *w)
{
	bool idle;

	if (!w)
		return 0;
	bgthread_lock(&w->t);
	idle = !w->pending && !w->running;
	if (!idle)
		/* Detach before the thread can see quit and free itself. */
		bgthread_leave(&w->t);
	bgthread_quit(&w->t);
	bgthread_unlock(&w->t);
	if (!idle)
		return -1;
	bgthread_join(&w->t);
	worker_free(w);
	return 0;
}
