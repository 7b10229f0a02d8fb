#include "runmode.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/duration.h"
#include "child.h"
#include "cli/dsn.h"
#include "db/db.h"
#include "db/tlspolicy.h"
#include "lease/lease.h"
#include "lease/standby.h"
#include "report/history.h"
#include "report/log.h"
#include "report/metrics.h"
#include "report/notify.h"
#include "report/role.h"
#include "report/sdnotify.h"
#include "supervisor.h"
#include "worker.h"

extern char **environ;

#define DEFAULT_CONNECT_TIMEOUT_S 5u

static unsigned ceil_seconds(int64_t us)
{
	int64_t s = (us + USEC_PER_SEC - 1) / USEC_PER_SEC;
	return s < 1 ? 1u : (unsigned)s;
}

void runmode_db_config(const struct options *o, struct db_config *c)
{
	unsigned connect_s = o->dsn.connect_timeout_s ? o->dsn.connect_timeout_s : DEFAULT_CONNECT_TIMEOUT_S;

	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < o->dsn.nhosts; i++) {
		c->hosts[i].name = o->dsn.hosts[i].name;
		c->hosts[i].port = o->dsn.hosts[i].port;
	}
	_Static_assert(DSN_MAX_HOSTS <= DB_MAX_HOSTS, "every host of a DSN fits");
	c->nhosts = o->dsn.nhosts;
	c->random_order = o->dsn.random_order;
	/* --status may read from a replica (it says which server answered).
	 * --check may not: it is the fencing check before a critical step,
	 * and a lagging replica would miss a takeover or a --release. */
	c->need_writable = o->mode != MODE_STATUS;
	c->probe_late = o->mode == MODE_RUN;
	c->user = o->dsn.user;
	c->password = o->dsn.password ? o->dsn.password : o->password;
	c->database = o->dsn.database;
	c->socket = o->dsn.socket;
	c->defaults_file = o->defaults_file;
	c->tls = o->tls;
	c->ssl_ca = o->ssl_ca;
	c->ssl_cert = o->ssl_cert;
	c->ssl_key = o->ssl_key;
	c->system_ca = o->system_ca[0] ? o->system_ca : NULL;
	/* Without a DSN, do what the mysql client does: ~/.my.cnf just works.
	 * With a DSN but no password from anywhere (a command's --check gets a
	 * password-less LEADERRUN_DSN), the option files may hold it. With
	 * both, none is read: nothing to learn, and it saves the parsing. */
	c->read_option_files = !o->have_dsn || !c->password;
	if (o->mode == MODE_RUN) {
		/* A reconnect while holding must leave room for a retry before
		 * the stop signal; the deadline never depends on these. */
		unsigned attempt_s = ceil_seconds(timing_attempt_budget(&o->timing));
		c->connect_timeout_s = connect_s < attempt_s ? connect_s : attempt_s;
		/* A backstop only; but above the follower's longest GET_LOCK
		 * wait (ttl + 1 s, see sup_await_change), which must not look
		 * like a hung read: a cut connection would wake every follower.
		 * (The session's wait_timeout, 28800 s, is far above it.) */
		c->io_timeout_s = ceil_seconds(o->timing.renew_us);
		if (c->io_timeout_s < ceil_seconds(o->timing.ttl_us) + 5)
			c->io_timeout_s = ceil_seconds(o->timing.ttl_us) + 5;
	} else {
		c->connect_timeout_s = connect_s;
		c->io_timeout_s = 30;
	}
}

enum outcome_kind runmode_outcome_of(enum db_status st)
{
	switch (st) {
	case DB_OK:
		return OUTCOME_INIT_DONE;
	case DB_DENIED:
	case DB_UNTRUSTED:
		return OUTCOME_DENIED;
	case DB_NO_TABLE:
	case DB_NO_DATABASE:
		return OUTCOME_NO_TABLE;
	default:
		return OUTCOME_UNAVAILABLE;
	}
}

void runmode_warn_unverified(const struct options *o)
{
	if (o->unverified_host)
		log_warn("--ssl-mode=DISABLED: replies from %s are not verified; anyone on the network path can "
			 "forge a lease reply and make a second copy run",
			 o->unverified_host);
}

int runmode_library(const struct options *o, struct db_config *cfg, struct outcome *out)
{
	char err[512];

	runmode_db_config(o, cfg);
	if (db_library_init(cfg, err, sizeof(err)) < 0) {
		log_error("%s", err);
		out->kind = OUTCOME_INTERNAL;
		return -1;
	}
	runmode_warn_unverified(o);
	return 0;
}

struct db *runmode_open(const struct options *o, struct outcome *out)
{
	struct db_server srv;
	struct db_config cfg;
	struct db *db;
	enum db_status st;
	struct db_err err;

	memset(out, 0, sizeof(*out));
	if (runmode_library(o, &cfg, out) < 0)
		return NULL;
	db = db_new(&cfg);
	if (!db) {
		log_error("out of memory");
		out->kind = OUTCOME_INTERNAL;
		db_library_end();
		return NULL;
	}
	st = db_connect(db, &err);
	if (st != DB_OK) {
		log_error("%s: %s%s%s", dberr_name(st), err.msg, st == DB_UNTRUSTED ? "; " : "",
			  st == DB_UNTRUSTED ? TLSPOLICY_WAYS_OUT : "");
		out->kind = runmode_outcome_of(st);
		runmode_close(db);
		return NULL;
	}
	if (db_server_info(db, &srv))
		log_info("database server %s: %s", srv.name, srv.tls);
	return db;
}

void runmode_close(struct db *db)
{
	db_free(db);
	db_library_end();
}

/* The run is over (sup_end_run wrote its row): the threads end, each
 * closing its connection, side by side rather than one after the other. A
 * call still under way (a release the supervisor stopped waiting for) gets
 * the bounded moment of a history write, then is cut short. */
static void runmode_wind_down(struct worker *w, struct history *h)
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
static void runmode_job(const struct options *o, struct lease_sql *sql, struct worker_job *job)
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

/* What watches the run from beside it: --notify and --ping, the metrics
 * file, the run history, systemd. */
static void runmode_observers_start(const struct options *o, const struct db_config *cfg, struct worker *w,
				    struct observers *obs)
{
	obs->n = notify_start(o);
	obs->m = metrics_start(o->metrics_file, o->lease, &o->timing);
	const struct history_of of = {o->history_table, o->table, o->lease, o->holder, o->history_keep};
	obs->h = history_start(cfg, &of, obs->m);
	/* Under systemd (Type=notify): READY=1, STATUS=, STOPPING=1 and the
	 * watchdog's keep-alives come from the supervisor's loop. */
	obs->sd = sdnotify_open(getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"));
	if (obs->h) {
		const struct worker_release_with also = {
		    .sql = history_parked_sql, .done = history_parked_done, .arg = obs->h, .kept = history_close_kept};
		worker_release_also(w, &also);
	}
}

/* The run's last history write, and the file that says "not held", get a
 * bounded moment each; then pings and webhooks theirs. True: the history
 * thread is still stuck (its connection must outlive us). */
static bool runmode_observers_stop(struct observers *obs)
{
	bool history_left;

	sdnotify_close(obs->sd);
	role_close(obs->role);
	history_left = history_finish(obs->h, timing_now() + (HISTORY_TIMEOUT_S + 1) * USEC_PER_SEC) != 0;
	metrics_stop(obs->m, timing_now() + USEC_PER_SEC);
	notify_finish(obs->n, timing_now() + 5 * USEC_PER_SEC);
	return history_left;
}

/* The role's board, before the database: a --role-http address in use, or
 * a --role-file that cannot be written, ends the run before it takes a
 * term. Its server's thread starts with the signals blocked, after
 * supervisor_block_signals. NULL with OUT filled, said. */
static struct role *runmode_role(const struct options *o, struct outcome *out)
{
	char err[PATH_MAX + 160];
	struct role *r = role_open(o->lease, o->holder, o->role_file, o->role_http, err, sizeof(err));

	if (!r) {
		log_error("%s", err);
		out->kind = OUTCOME_INTERNAL;
	}
	return r;
}

void runmode_run(const struct options *o, struct outcome *out)
{
	struct db_config cfg;
	struct lease_sql sql;
	struct worker_job job;
	struct worker *w;
	struct observers obs;
	bool history_left;
	struct db *db;
	char err[512];
	int rc;

	memset(out, 0, sizeof(*out));
	/* Fail before touching the lease: a typo must not take a term. */
	rc = child_precheck(o->command[0], err, sizeof(err));
	if (rc != 0) {
		log_error("%s", err);
		out->kind = rc == 127 ? OUTCOME_NOT_FOUND : OUTCOME_NOT_EXECUTABLE;
		return;
	}
	/* Orphans of the command reparent to us, so that we can reap them and
	 * know when every descendant is gone. As PID 1 we are that already. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	supervisor_block_signals();
	if (!(obs.role = runmode_role(o, out)))
		return;
	if ((o->ping_url || o->nnotify) && notify_library_init() < 0)
		log_warn("cannot load libcurl (libcurl.so.4); --ping and --notify are disabled");
	if (runmode_library(o, &cfg, out) < 0) {
		role_close(obs.role);
		return;
	}
	lease_sql_render(&sql, o->table);
	lease_hint_name(&sql, o->table, o->lease);
	db = db_new(&cfg);
	runmode_job(o, &sql, &job);
	w = db ? worker_start(db, &job) : NULL;
	if (!w) {
		log_error("cannot start the database thread");
		out->kind = OUTCOME_INTERNAL;
		role_close(obs.role);
		db_free(db);
		db_library_end();
		return;
	}

	runmode_observers_start(o, &cfg, w, &obs);
	supervisor_run(o, w, &obs, environ, out);
	runmode_wind_down(w, obs.h);
	history_left = runmode_observers_stop(&obs);

	/* A worker stuck on a dead socket is left behind with its connection;
	 * exiting is what must not wait. */
	if (worker_stop(w) == 0 && !history_left)
		db_library_end();
}
