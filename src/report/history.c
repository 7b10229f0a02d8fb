#include "history.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bgthread.h"
#include "base/duration.h"
#include "base/timing.h"
#include "db/sqltext.h"
#include "log.h"

/* A history thread left behind in a hung call at exit (history_finish):
 * kept here so that it stays reachable until the process ends. Written
 * once, by the main thread, just before it exits. */
static struct history *history_abandoned;

struct history {
	struct bgthread t; /* started only when there is a write for it (history_start_thread) */
	struct db *db;
	struct history_sql sql;
	struct metrics *m;
	char lease[LEASE_NAME_MAX + 1], holder[LEASE_HOLDER_MAX + 1], host[256], table[LEASE_TABLE_MAX + 16];
	unsigned keep;
	bool failing;  /* the last write failed; logged once */
	bool inserted; /* the run's row is there, open */

	/* Guarded by t.lock. parked: the run ended, and its end (the whole
	 * row, or the close of the row inserted at its start) waits for the
	 * lease's connection: the release's transaction, history_write_parked
	 * or else history_finish. t.quit: history_quit or history_finish
	 * came; t.detached: history_finish left the thread behind. inserted
	 * is the thread's while busy, stable otherwise. */
	bool begin_pending, end_pending, parked, busy;
	unsigned slot; /* the run's (--slots): set once by history_begin, before any write */
	uint64_t term;
	int64_t acquired_at, begin_due;
	char outcome[16];
	int exit_status, sig;
};

/* Which tables a write that found no table, no column or no grant met,
 * on DB: 2 if the lease table has schema 5's columns, + 1 if the history's
 * table exists; -1 unknown. */
static int64_t history_tables(struct history *h, struct db *db)
{
	int64_t v = -1;
	struct db_err err;

	if (!db_connected(db) || db_query_int(db, h->sql.tables, &v, &err) != DB_OK)
		return -1;
	return v;
}

static void history_failed(struct history *h, struct db *db, enum db_status st, const char *err)
{
	int64_t tables = -1;

	metrics_history_failed(h->m);
	if (h->failing)
		return;
	h->failing = true;
	if (st == DB_NO_TABLE || st == DB_DENIED)
		tables = history_tables(h, db);
	if (tables == 0 || tables == 1)
		/* A fleet that rolled its binaries before --init: the lease's
		 * own warning said so, once (lease.c); one is enough. */
		log_info("run history off: the lease table is older than schema 5 ('leaderrun --init' upgrades both)");
	else if (st == DB_NO_TABLE && tables == 3)
		log_warn("run history off: table %s is older than schema 5 (no slot column); 'leaderrun --init' "
			 "upgrades it (or apply sql/upgrade-4-to-5.sql); the lease works as before",
			 h->table);
	else if (st == DB_NO_TABLE)
		log_warn("run history off: table %s is missing (a schema-3 database); 'leaderrun --init' creates it "
			 "(or apply sql/upgrade-3-to-4.sql); the lease works as before",
			 h->table);
	else if (st == DB_DENIED)
		/* The server says "denied" for a table that is missing too when
		 * the user has no grant on it (it hides which): the fleet's user
		 * on a database not upgraded yet lands here, not above. */
		log_warn("run history off: %s; on a schema-3 database an administrator runs 'leaderrun --init' (or "
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

/* Runs older than the last KEEP terms go, on one run in KEEP / 10 (by
 * term; every run for a KEEP under 20): a DELETE is a statement and a
 * commit, and a short run's only write is on the way to its exit (issue
 * 13). Between two prunings up to a tenth more runs stay. */
static bool history_prune_due(const struct history *h, uint64_t term)
{
	uint64_t every = h->keep / HISTORY_PRUNE_SLACK;

	return term > h->keep && (every <= 1 || term % every == 0);
}

static void history_prune(struct history *h, struct db *db, uint64_t term)
{
	struct db_value q[] = {
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = term - h->keep},
	};
	struct db_result r;
	struct db_err err;
	enum db_status st;

	if (!history_prune_due(h, term))
		return;
	st = db_exec(db, &(struct db_call){STMT_HISTORY_PRUNE, h->sql.prune, q, 3, NULL, 0, NULL, NULL, &r}, &err);
	if (st != DB_OK)
		history_failed(h, db, st, err.msg);
}

static void history_do_begin(struct history *h, uint64_t term, int64_t acquired_at)
{
	struct db_value p[] = {
	    {.type = DB_STR, .str = h->lease}, {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = term},     {.type = DB_STR, .str = h->holder},
	    {.type = DB_STR, .str = h->host},  {.type = DB_I64, .i64 = elapsed(acquired_at)},
	};
	struct db_result r;
	struct db_err err;
	enum db_status st = db_connected(h->db) ? DB_OK : db_connect(h->db, &err);

	if (st == DB_OK)
		st = db_exec(
		    h->db, &(struct db_call){STMT_HISTORY_INSERT, h->sql.insert, p, 6, NULL, 0, NULL, NULL, &r}, &err);
	if (st != DB_OK) {
		history_failed(h, h->db, st, err.msg);
		return;
	}
	h->inserted = true;
	history_ok(h);
	history_prune(h, h->db, term);
}

/* A run's end as the history writes it, copied out of H under its lock. */
struct history_end {
	uint64_t term;
	int64_t acquired_at;
	char outcome[16];
	int exit_status, sig;
};

static struct history_end history_end_of(const struct history *h)
{
	struct history_end e = {
	    .term = h->term, .acquired_at = h->acquired_at, .exit_status = h->exit_status, .sig = h->sig};

	snprintf(e.outcome, sizeof(e.outcome), "%s", h->outcome);
	return e;
}

/* The end of the run E, on DB: the history's own connection, or the
 * lease's (history_write_parked). */
static void history_do_end(struct history *h, struct db *db, const struct history_end *e)
{
	uint64_t term = e->term;
	int64_t acquired_at = e->acquired_at;
	const char *outcome = e->outcome;
	int exit_status = e->exit_status, sig = e->sig;
	struct db_value status = {.type = DB_I64, .i64 = exit_status, .is_null = exit_status < 0};
	struct db_value signo = {.type = DB_I64, .i64 = sig, .is_null = sig < 0};
	struct db_value close_p[] = {
	    {.type = DB_STR, .str = outcome},
	    status,
	    signo,
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = term},
	    {.type = DB_STR, .str = h->holder},
	};
	struct db_value whole[] = {
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = term},
	    {.type = DB_STR, .str = h->holder},
	    {.type = DB_STR, .str = h->host},
	    {.type = DB_I64, .i64 = elapsed(acquired_at)},
	    {.type = DB_STR, .str = outcome},
	    status,
	    signo,
	};
	struct db_result r;
	struct db_err err;
	enum db_status st = db_connected(db) ? DB_OK : db_connect(db, &err);

	if (st == DB_OK && h->inserted)
		st = db_exec(
		    db, &(struct db_call){STMT_HISTORY_CLOSE, h->sql.close, close_p, 7, NULL, 0, NULL, NULL, &r}, &err);
	else if (st == DB_OK)
		/* The start was not written (a short run, a lock, a grant added
		 * since): the whole run in one row. */
		st = db_exec(db,
			     &(struct db_call){STMT_HISTORY_INSERT_CLOSED, h->sql.insert_closed, whole, 9, NULL, 0,
					       NULL, NULL, &r},
			     &err);
	if (st != DB_OK) {
		history_failed(h, db, st, err.msg);
		return;
	}
	history_ok(h);
	if (!h->inserted)
		history_prune(h, db, term);
}

/* Takes the next write (lock held) and does it (lock not held). Returns
 * false when there is none: the thread is to end. */
static bool history_next(struct history *h)
{
	const struct history_end e = history_end_of(h);
	bool end = h->end_pending;

	if (!end && !h->begin_pending)
		return false;
	h->begin_pending = false;
	h->end_pending = false;
	h->busy = true;
	bgthread_unlock(&h->t);
	if (end)
		history_do_end(h, h->db, &e);
	else
		history_do_begin(h, e.term, e.acquired_at);
	bgthread_lock(&h->t);
	h->busy = false;
	return true;
}

static void *history_main(void *arg)
{
	struct history *h = arg;
	bool detached;

	bgthread_lock(&h->t);
	for (;;) {
		/* The start is written once the run has lasted
		 * HISTORY_BEGIN_DELAY_US; a run that ends before is written
		 * whole, in one statement (history_do_end). */
		while (!h->end_pending && !(h->t.quit && !h->parked)) {
			if (h->begin_pending && timing_now() >= h->begin_due)
				break;
			bgthread_wait(&h->t, h->begin_pending ? h->begin_due : 0);
		}
		if (!history_next(h))
			break;
		bgthread_idle(&h->t);
	}
	detached = h->t.detached;
	bgthread_idle(&h->t);
	bgthread_unlock(&h->t);
	/* Abandoned by history_finish: the process is exiting, and freeing
	 * now would race with that exit (a half-freed connection is what
	 * valgrind reported as lost). Left as it is, it stays reachable
	 * through history_abandoned, and the exit takes it. */
	if (detached)
		return NULL;
	db_disconnect(h->db);
	return NULL;
}

struct history *history_start(const struct db_config *cfg, const struct history_of *of, struct metrics *m)
{
	const char *history_table = of->history_table, *lease_table = of->lease_table;
	const char *lease = of->lease, *holder = of->holder;
	unsigned keep = of->keep;
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
	bgthread_init(&h->t);
	return h;
}

/* The thread starts only when there is something for it to write: a short
 * run, whose row rides on the lease's connection, never has one (on two
 * cores, its start and wake-ups slowed the lease's own round trips
 * more than its writes did). */
static bool history_start_thread(struct history *h)
{
	if (h->t.started)
		return true;
	if (bgthread_start(&h->t, history_main, h) != 0) {
		history_failed(h, h->db, DB_ERROR, "cannot start the history thread");
		return false;
	}
	return true;
}

int64_t history_due(struct history *h)
{
	int64_t due = 0;

	if (!h || h->t.started)
		return 0;
	bgthread_lock(&h->t);
	if (h->begin_pending)
		due = h->begin_due;
	bgthread_unlock(&h->t);
	return due;
}

void history_tick(struct history *h, int64_t now)
{
	int64_t due = history_due(h);

	if (due && now >= due && !history_start_thread(h)) {
		/* Then the row is written whole at the end, on the lease's
		 * connection. */
		bgthread_lock(&h->t);
		h->begin_due = INT64_MAX;
		bgthread_unlock(&h->t);
	}
}

void history_begin(struct history *h, unsigned slot, uint64_t term, int64_t acquired_at)
{
	if (!h)
		return;
	bgthread_lock(&h->t);
	h->slot = slot;
	h->term = term;
	h->acquired_at = acquired_at;
	h->begin_due = timing_now() + HISTORY_BEGIN_DELAY_US;
	h->begin_pending = true;
	/* A service's next term: a row of its own, and a thread that may
	 * already wait without a time. */
	h->inserted = false;
	if (h->t.started)
		bgthread_wake(&h->t);
	bgthread_unlock(&h->t);
}

void history_end(struct history *h, const char *outcome, int exit_status, int sig)
{
	if (!h)
		return;
	bgthread_lock(&h->t);
	snprintf(h->outcome, sizeof(h->outcome), "%s", outcome);
	h->exit_status = exit_status;
	h->sig = sig;
	if (h->busy) {
		/* The start is on its way on the thread's connection: the end
		 * follows it there, never beside it. */
		h->end_pending = true;
		bgthread_wake(&h->t);
	} else {
		/* The whole row, or the close of the one the start inserted,
		 * waits for the lease's connection: in the release's own
		 * transaction, no commit of its own and no second connection
		 * busy at the moment of a handover. */
		h->begin_pending = false;
		h->parked = true;
	}
	bgthread_unlock(&h->t);
}

bool history_parked(struct history *h)
{
	bool parked;

	if (!h)
		return false;
	bgthread_lock(&h->t);
	parked = h->parked;
	bgthread_unlock(&h->t);
	return parked;
}

void history_write_parked(void *arg, struct db *db)
{
	struct history *h = arg;
	struct history_end e;

	bgthread_lock(&h->t);
	if (!h->parked || !db_connected(db)) {
		bgthread_unlock(&h->t);
		return;
	}
	h->parked = false;
	h->busy = true;
	/* A thread told to quit waited for this row: it may end now. */
	bgthread_wake(&h->t);
	e = history_end_of(h);
	bgthread_unlock(&h->t);
	history_do_end(h, db, &e);
	bgthread_lock(&h->t);
	h->busy = false;
	bgthread_idle(&h->t);
	bgthread_unlock(&h->t);
}

void history_quit(struct history *h)
{
	if (!h)
		return;
	bgthread_lock(&h->t);
	bgthread_quit(&h->t);
	bgthread_unlock(&h->t);
}

int history_finish(struct history *h, int64_t until)
{
	bool idle, work;

	if (!h)
		return 0;
	bgthread_lock(&h->t);
	/* Not written on the lease's connection: on the history's own. */
	if (h->parked) {
		h->parked = false;
		h->end_pending = true;
	}
	bgthread_quit(&h->t);
	work = h->begin_pending || h->end_pending;
	bgthread_unlock(&h->t);
	if (work && !history_start_thread(h)) {
		bgthread_lock(&h->t);
		h->begin_pending = h->end_pending = false;
		bgthread_unlock(&h->t);
	}
	/* With no thread of its own, a row may still be on its way on the
	 * lease's connection (history_write_parked, busy): H is not freed
	 * under it. */
	bgthread_lock(&h->t);
	bgthread_wake(&h->t);
	while ((h->begin_pending || h->end_pending || h->busy) && bgthread_wait_idle(&h->t, until) == 0)
		;
	idle = !h->begin_pending && !h->end_pending && !h->busy;
	if (!idle) {
		/* Cut the call short and leave H behind: exiting is what must
		 * not wait. */
		if (h->t.started) {
			bgthread_leave(&h->t);
			db_abort(h->db);
		}
		history_abandoned = h;
	}
	bgthread_unlock(&h->t);
	if (!idle)
		return -1;
	bgthread_join(&h->t);
	db_free(h->db);
	bgthread_destroy(&h->t);
	free(h);
	return 0;
}

/* The close of the row inserted at the start into OUT, its outcome,
 * exit status and signal as literals, or (KEEP) as '?'s, with their
 * values into KEPT[0..3) if not NULL. Lock held. */
static bool history_close_text(struct history *h, char *out, size_t len, bool keep, struct db_value *kept)
{
	struct db_value v[] = {
	    {.type = DB_STR, .str = h->outcome},
	    {.type = DB_I64, .i64 = h->exit_status, .is_null = h->exit_status < 0},
	    {.type = DB_I64, .i64 = h->sig, .is_null = h->sig < 0},
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = h->term},
	    {.type = DB_STR, .str = h->holder},
	};
	size_t used = 0;

	for (int i = 0; keep && i < 3; i++) {
		if (kept)
			kept[i] = v[i];
		v[i].kept = true;
	}
	return sqltext_render(out, len, &used, &(struct db_call){.sql = h->sql.close, .params = v, .nparams = 7}) &&
	       sqltext_append(out, len, &used, "; ");
}

bool history_close_kept(void *arg, char *out, size_t len, struct db_value kept[3])
{
	struct history *h = arg;
	bool fits;

	bgthread_lock(&h->t);
	fits = h->inserted && (!kept || h->parked) && history_close_text(h, out, len, true, kept);
	bgthread_unlock(&h->t);
	return fits;
}

bool history_parked_sql(void *arg, char *out, size_t len)
{
	struct history *h = arg;
	size_t used = 0;
	bool fits;

	bgthread_lock(&h->t);
	if (!h->parked) {
		bgthread_unlock(&h->t);
		return false;
	}
	struct db_value status = {.type = DB_I64, .i64 = h->exit_status, .is_null = h->exit_status < 0};
	struct db_value signo = {.type = DB_I64, .i64 = h->sig, .is_null = h->sig < 0};
	struct db_value whole[] = {
	    {.type = DB_STR, .str = h->lease},
	    {.type = DB_I64, .i64 = h->slot},
	    {.type = DB_U64, .u64 = h->term},
	    {.type = DB_STR, .str = h->holder},
	    {.type = DB_STR, .str = h->host},
	    {.type = DB_I64, .i64 = elapsed(h->acquired_at)},
	    {.type = DB_STR, .str = h->outcome},
	    status,
	    signo,
	};
	struct db_value prune[] = {whole[0], whole[1], {.type = DB_U64, .u64 = h->term - h->keep}};

	out[0] = '\0';
	if (h->inserted) {
		/* The start pruned already. */
		fits = history_close_text(h, out, len, false, NULL);
		bgthread_unlock(&h->t);
		return fits;
	}
	fits = sqltext_render(out, len, &used,
			      &(struct db_call){.sql = h->sql.insert_closed, .params = whole, .nparams = 9}) &&
	       sqltext_append(out, len, &used, "; ");
	if (fits && history_prune_due(h, h->term))
		/* A pruning that fails is tried again a run later: never
		 * reported as the row's failure. */
		fits = sqltext_append(out, len, &used, "BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; ") &&
		       sqltext_render(out, len, &used,
				      &(struct db_call){.sql = h->sql.prune, .params = prune, .nparams = 3}) &&
		       sqltext_append(out, len, &used, "; END; ");
	bgthread_unlock(&h->t);
	return fits;
}

void history_parked_done(void *arg, struct db *db, unsigned errnum, const char *msg)
{
	struct history *h = arg;

	bgthread_lock(&h->t);
	h->parked = false;
	/* A thread told to quit waited for this row: it may end now. */
	bgthread_wake(&h->t);
	bgthread_unlock(&h->t);
	if (errnum == 0)
		history_ok(h);
	else {
		char err[384];
		enum db_status st = dberr_classify_msg(errnum, msg);
		snprintf(err, sizeof(err), "%s (error %u)", msg, errnum);
		history_failed(h, db, st == DB_OK ? DB_ERROR : st, err);
	}
}
