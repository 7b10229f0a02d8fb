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
