#include "history.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"
#include "timing.h"

enum { SLOT_H_INSERT, SLOT_H_PRUNE, SLOT_H_CLOSE, SLOT_H_INSERT_CLOSED };

/* A history thread left behind in a hung call at exit (history_finish):
 * kept here so that it stays reachable until the process ends. Written
 * once, by the main thread, just before it exits. */
static struct history *history_abandoned;

struct history {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, idle_cv;
	struct db *db;
	struct history_sql sql;
	struct metrics *m;
	char lease[LEASE_NAME_MAX + 1], holder[LEASE_HOLDER_MAX + 1], host[256], table[LEASE_TABLE_MAX + 16];
	unsigned keep;
	bool failing;  /* the last write failed; logged once */
	bool inserted; /* the run's row is there, open */

	/* Guarded by lock. */
	bool begin_pending, end_pending, busy, quit, detached;
	unsigned slot;
	uint64_t term;
	int64_t acquired_at;
	char outcome[16];
	int exit_status, sig;
};

static void history_failed(struct history *h, enum db_status st, const char *err)
{
	metrics_history_failed(h->m);
	if (h->failing)
		return;
	h->failing = true;
	if (st == DB_NO_TABLE)
		log_warn("run history off: table %s is missing (a database older than schema 4); 'leaderrun --init' "
			 "creates it "
			 "(or apply sql/upgrade-3-to-4.sql); the lease works as before",
			 h->table);
	else if (st == DB_DENIED)
		/* The server says "denied" for a table that is missing too when
		 * the user has no grant on it (it hides which): the fleet's user
		 * on a database not upgraded yet lands here, not above. */
		log_warn("run history off: %s; on a database older than schema 4 an administrator runs 'leaderrun "
			 "--init' (or "
			 "applies sql/upgrade-3-to-4.sql), then grants SELECT, INSERT, UPDATE, DELETE ON %s "
			 "(sql/grants.sql); the lease works as before",
			 err, h->table);
	else
		log_warn("run history: a write failed (%s: %s); the lease and the command are not affected",
			 dberr_name(st), err);
}

static void history_ok(struct history *h)
{
	if (h->failing)
		log_warn("run history: written again");
	h->failing = false;
}

static int64_t elapsed(int64_t since)
{
	int64_t d = timing_now() - since;
	return d > 0 ? d : 0;
}

static void history_do_begin(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = h->lease}, {.type = DB_I64, .i64 = slot},
	    {.type = DB_U64, .u64 = term},     {.type = DB_STR, .str = h->holder},
	    {.type = DB_STR, .str = h->host},  {.type = DB_I64, .i64 = elapsed(acquired_at)},
	};
	struct db_result r;
	char err[384];
	enum db_status st = db_connected(h->db) ? DB_OK : db_connect(h->db, err, sizeof(err));

	if (st == DB_OK)
		st = db_exec(h->db, SLOT_H_INSERT, h->sql.insert, p, 6, NULL, 0, &r, err, sizeof(err));
	if (st != DB_OK) {
		history_failed(h, st, err);
		return;
	}
	h->inserted = true;
	history_ok(h);
	if (term > h->keep) {
		struct db_value q[] = {
		    {.type = DB_STR, .str = h->lease},
		    {.type = DB_I64, .i64 = slot},
		    {.type = DB_U64, .u64 = term - h->keep},
		};
		st = db_exec(h->db, SLOT_H_PRUNE, h->sql.prune, q, 3, NULL, 0, &r, err, sizeof(err));
		if (st != DB_OK)
			history_failed(h, st, err);
	}
}

static void history_do_end(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at, const char *outcome,
			   int exit_status, int sig)
{
	struct db_value status = {.type = DB_I64, .i64 = exit_status, .is_null = exit_status < 0};
	struct db_value signo = {.type = DB_I64, .i64 = sig, .is_null = sig < 0};
	struct db_value close_p[] = {
	    {.type = DB_STR, .str = outcome},
	    status,
	    signo,
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = slot},
	    {.type = DB_U64, .u64 = term},
	    {.type = DB_STR, .str = h->holder},
	};
	struct db_value whole[] = {
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = slot},
	    {.type = DB_U64, .u64 = term},
	    {.type = DB_STR, .str = h->holder},
	    {.type = DB_STR, .str = h->host},
	    {.type = DB_I64, .i64 = elapsed(acquired_at)},
	    {.type = DB_STR, .str = outcome},
	    status,
	    signo,
	};
	struct db_result r;
	char err[384];
	enum db_status st = db_connected(h->db) ? DB_OK : db_connect(h->db, err, sizeof(err));

	if (st == DB_OK && h->inserted)
		st = db_exec(h->db, SLOT_H_CLOSE, h->sql.close, close_p, 7, NULL, 0, &r, err, sizeof(err));
	else if (st == DB_OK)
		/* The start was not written (a lock, a grant added since): the
		 * whole run in one row. */
		st =
		    db_exec(h->db, SLOT_H_INSERT_CLOSED, h->sql.insert_closed, whole, 9, NULL, 0, &r, err, sizeof(err));
	if (st != DB_OK)
		history_failed(h, st, err);
	else
		history_ok(h);
}

static void *history_main(void *arg)
{
	struct history *h = arg;
	bool detached;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->begin_pending && !h->end_pending && !h->quit)
			pthread_cond_wait(&h->wake, &h->lock);
		if (h->begin_pending) {
			unsigned slot = h->slot;
			uint64_t term = h->term;
			int64_t at = h->acquired_at;
			h->begin_pending = false;
			h->busy = true;
			pthread_mutex_unlock(&h->lock);
			history_do_begin(h, slot, term, at);
			pthread_mutex_lock(&h->lock);
			h->busy = false;
		} else if (h->end_pending) {
			char outcome[16];
			unsigned slot = h->slot;
			uint64_t term = h->term;
			int64_t at = h->acquired_at;
			int es = h->exit_status, sig = h->sig;
			snprintf(outcome, sizeof(outcome), "%s", h->outcome);
			h->end_pending = false;
			h->busy = true;
			pthread_mutex_unlock(&h->lock);
			history_do_end(h, slot, term, at, outcome, es, sig);
			pthread_mutex_lock(&h->lock);
			h->busy = false;
		} else
			break;
		pthread_cond_broadcast(&h->idle_cv);
	}
	detached = h->detached;
	pthread_cond_broadcast(&h->idle_cv);
	pthread_mutex_unlock(&h->lock);
	/* Abandoned by history_finish: the process is exiting, and freeing
	 * now would race with that exit (a half-freed connection is what
	 * valgrind reported as lost). Left as it is, it stays reachable
	 * through history_abandoned, and the exit takes it. */
	if (detached)
		return NULL;
	db_disconnect(h->db);
	return NULL;
}

struct history *history_start(const struct db_config *cfg, const char *history_table, const char *lease_table,
			      const char *lease, const char *holder, unsigned keep, struct metrics *m)
{
	struct db_config c = *cfg;
	struct history *h;

	if (keep == 0)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	/* Short, whole-second timeouts (the library's unit): a history write
	 * that hangs is abandoned, and the run goes on regardless. */
	c.connect_timeout_s = HISTORY_TIMEOUT_S;
	c.io_timeout_s = HISTORY_TIMEOUT_S;
	h->db = db_new(&c);
	if (!h->db) {
		free(h);
		return NULL;
	}
	history_sql_render(&h->sql, history_table, lease_table);
	snprintf(h->lease, sizeof(h->lease), "%s", lease);
	snprintf(h->holder, sizeof(h->holder), "%s", holder);
	snprintf(h->table, sizeof(h->table), "%s", history_table);
	if (gethostname(h->host, sizeof(h->host)) != 0)
		snprintf(h->host, sizeof(h->host), "?");
	h->host[sizeof(h->host) - 1] = '\0';
	h->keep = keep;
	h->m = m;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	pthread_cond_init(&h->idle_cv, NULL);
	if (pthread_create(&h->thread, NULL, history_main, h) != 0) {
		db_free(h->db);
		free(h);
		return NULL;
	}
	return h;
}

void history_begin(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->slot = slot;
	h->term = term;
	h->acquired_at = acquired_at;
	h->begin_pending = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
}

void history_end(struct history *h, const char *outcome, int exit_status, int sig)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	snprintf(h->outcome, sizeof(h->outcome), "%s", outcome);
	h->exit_status = exit_status;
	h->sig = sig;
	h->end_pending = true;
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
}

int history_finish(struct history *h, int64_t until)
{
	bool idle;

	if (!h)
		return 0;
	pthread_mutex_lock(&h->lock);
	h->quit = true;
	pthread_cond_signal(&h->wake);
	while ((h->begin_pending || h->end_pending || h->busy) && timing_now() < until) {
		timing_cond_wait(&h->idle_cv, &h->lock, 20 * USEC_PER_MSEC);
	}
	idle = !h->begin_pending && !h->end_pending && !h->busy;
	if (!idle) {
		/* Cut the call short and leave the thread behind: exiting is
		 * what must not wait. */
		h->detached = true;
		pthread_detach(h->thread);
		db_abort(h->db);
		history_abandoned = h;
	}
	pthread_mutex_unlock(&h->lock);
	if (!idle)
		return -1;
	pthread_join(h->thread, NULL);
	db_free(h->db);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	pthread_cond_destroy(&h->idle_cv);
	free(h);
	return 0;
}
