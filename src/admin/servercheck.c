#include "servercheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/duration.h"
#include "base/timing.h"
#include "db/db.h"
#include "db/promise.h"
#include "lease/lease.h"
#include "report/escape.h"
#include "report/json.h"
#include "report/log.h"
#include "run/runmode.h"

/* Every variable the checks read, in one SHOW: read as rows, never as
 * @@names, because a name the server lacks (super_read_only on MariaDB,
 * wsrep_* without Galera, group_replication_* without the plugin) would
 * fail a SELECT. */
#define SERVERCHECK_VARIABLES                                                                                          \
	"SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit', 'log_bin', "                  \
	"'sync_binlog', 'read_only', 'super_read_only', 'wsrep_on', 'wsrep_sync_wait', "                               \
	"'group_replication_single_primary_mode', 'group_replication_consistency', "                                   \
	"'rpl_semi_sync_master_enabled', 'rpl_semi_sync_source_enabled')"

/* ON, OFF or a number, as SHOW prints them. */
static int64_t servercheck_number(const char *v)
{
	if (!v)
		return -1;
	if (strcmp(v, "ON") == 0)
		return 1;
	if (strcmp(v, "OFF") == 0)
		return 0;
	return strtoll(v, NULL, 10);
}

static void servercheck_on_variable(void *ctx, const char *const *row, unsigned ncols)
{
	struct promise_facts *f = ctx;
	const char *name = row[0], *v = row[1];
	int64_t n = servercheck_number(v);

	(void)ncols;
	if (!name)
		return;
	if (strcmp(name, "innodb_flush_log_at_trx_commit") == 0)
		f->flush_at_commit = n;
	else if (strcmp(name, "log_bin") == 0)
		f->log_bin = n;
	else if (strcmp(name, "sync_binlog") == 0)
		f->sync_binlog = n;
	else if (strcmp(name, "read_only") == 0)
		f->read_only = n;
	else if (strcmp(name, "super_read_only") == 0)
		f->super_read_only = n;
	else if (strcmp(name, "wsrep_on") == 0)
		f->wsrep_on = n;
	else if (strcmp(name, "wsrep_sync_wait") == 0)
		f->wsrep_sync_wait = n;
	else if (strcmp(name, "group_replication_single_primary_mode") == 0)
		f->gr_single_primary = n;
	else if (strcmp(name, "group_replication_consistency") == 0)
		snprintf(f->gr_consistency, sizeof(f->gr_consistency), "%s", v ? v : "");
	else if (strncmp(name, "rpl_semi_sync_", 14) == 0 && n > f->semisync_source)
		f->semisync_source = n;
}

/* The second column of a one-row answer, into a buffer of CAP bytes. */
struct servercheck_text {
	char *a, *b;
	size_t cap;
};

static void servercheck_on_pair(void *ctx, const char *const *row, unsigned ncols)
{
	struct servercheck_text *t = ctx;

	snprintf(t->a, t->cap, "%s", row[0] ? row[0] : "");
	if (ncols > 1)
		snprintf(t->b, t->cap, "%s", row[1] ? row[1] : "");
}

static void servercheck_on_count(void *ctx, const char *const *row, unsigned ncols)
{
	(void)row;
	(void)ncols;
	++*(int64_t *)ctx;
}

/* Galera's state; a Group Replication member's state and role. */
static void servercheck_read_cluster(struct db *db, struct promise_facts *f)
{
	struct db_err err;
	char name[64];
	struct servercheck_text t = {name, f->wsrep_state, sizeof(f->wsrep_state)};

	if (f->wsrep_on == 1)
		(void)db_query_rows(db, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'",
				    &(struct db_rows){2, servercheck_on_pair, &t}, &err);
	/* The plugin's own variable: group_replication_consistency is the
	 * server's in MySQL 8.4 and 9, plugin or not. */
	if (f->gr_single_primary < 0)
		return;
	/* The plugin is loaded; a member that never started (OFFLINE) is a
	 * server of its own. */
	t = (struct servercheck_text){f->gr_member_state, f->gr_member_role, sizeof(f->gr_member_state)};
	(void)db_query_rows(db,
			    "SELECT MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members "
			    "WHERE MEMBER_ID = @@server_uuid",
			    &(struct db_rows){2, servercheck_on_pair, &t}, &err);
	f->gr = strcmp(f->gr_member_state, "OFFLINE") != 0;
}

/* Replicas attached to a primary that is neither Galera nor a group,
 * when its replication is not semi-synchronous. SHOW REPLICAS is MySQL's
 * (8.0.22); MariaDB says SHOW REPLICA HOSTS (10.5.1). */
static void servercheck_read_replicas(struct db *db, struct promise_facts *f)
{
	int64_t n = 0;
	enum db_status st;
	struct db_err err;

	if (f->wsrep_on == 1 || f->gr || f->log_bin != 1 || f->semisync_source == 1)
		return;
	st = db_query_rows(db, "SHOW REPLICAS", &(struct db_rows){1, servercheck_on_count, &n}, &err);
	if (st != DB_OK)
		snprintf(f->replicas_err, sizeof(f->replicas_err), "%.*s", (int)sizeof(f->replicas_err) - 1, err.msg);
	if (st != DB_OK && st != DB_DENIED && db_connected(db)) {
		n = 0;
		st = db_query_rows(db, "SHOW REPLICA HOSTS", &(struct db_rows){1, servercheck_on_count, &n}, &err);
		if (st != DB_OK)
			snprintf(f->replicas_err, sizeof(f->replicas_err), "%.*s", (int)sizeof(f->replicas_err) - 1,
				 err.msg);
	}
	f->replicas = st == DB_OK ? n : -1;
}

static int64_t servercheck_realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* The server's UTC clock against this host's, three times; the answer
 * with the shortest round trip is kept, half of it the uncertainty. */
static void servercheck_read_clock(struct db *db, struct promise_facts *f)
{
	struct db_err err;

	for (int k = 0; k < 3; k++) {
		int64_t server, at = servercheck_realtime_us(), b0 = timing_now(), rtt;

		if (db_query_int(db, "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))",
				 &server, &err) != DB_OK)
			return;
		rtt = timing_now() - b0;
		if (f->clock_known && rtt / 2 >= f->clock_uncertainty_us)
			continue;
		f->clock_known = true;
		f->clock_uncertainty_us = rtt / 2;
		f->clock_offset_us = server - (at + rtt / 2);
	}
}

/* A row of FENCE_ROUTINES: the end's definer, whether it may end other
 * accounts' sessions, whether it has PROCESS (NULL: unknown). */
static void servercheck_on_routine(void *ctx, const char *const *row, unsigned ncols)
{
	struct promise_facts *f = ctx;
	size_t n = row[0] ? strlen(row[0]) : 0;

	(void)ncols;
	if (n < 4 || strcmp(row[0] + n - 4, "_end") != 0 || !row[2])
		return;
	snprintf(f->fence_definer, sizeof(f->fence_definer), "%.90s", row[2]);
	f->fence_kill = row[4] ? strcmp(row[4], "0") != 0 : -1;
	f->fence_process = row[5] ? strcmp(row[5], "0") != 0 : -1;
}

/* Everything the checks judge, from one connected server. */
static void servercheck_read(struct db *db, const struct lease_sql *sql, struct promise_facts *f)
{
	struct db_err err;
	char unused[8];
	struct servercheck_text t = {f->version_comment, unused, sizeof(f->version_comment)};
	struct lease_fence_seen fence;

	(void)db_query_rows(db, SERVERCHECK_VARIABLES, &(struct db_rows){2, servercheck_on_variable, f}, &err);
	servercheck_read_cluster(db, f);
	servercheck_read_replicas(db, f);
	/* Exactly the text ProxySQL answers itself, "(ProxySQL)". */
	(void)db_query_rows(db, "select @@version_comment limit 1", &(struct db_rows){1, servercheck_on_pair, &t},
			    &err);
	snprintf(f->version, sizeof(f->version), "%s", db_server_version(db));
	f->table = sql->table;
	f->schema_newest = LEASE_SCHEMA;
	if (lease_table_schema(db, sql, &f->schema, &err) != DB_OK) {
		f->schema = -1;
		snprintf(f->schema_err, sizeof(f->schema_err), "%.*s", (int)sizeof(f->schema_err) - 1, err.msg);
	}
	/* Schemas 6 and 7 are schema 5's tables and the fence. */
	if (f->schema == LEASE_ROWS_SCHEMA) {
		bool seen = lease_fence_seen(db, sql, &fence, &err) == DB_OK;

		if (!seen)
			snprintf(f->schema_err, sizeof(f->schema_err), "%.*s", (int)sizeof(f->schema_err) - 1, err.msg);
		if (seen && fence.complete)
			f->schema = fence.schema;
	}
	if (f->schema == LEASE_SCHEMA)
		(void)db_query_rows(db, sql->fence_routines, &(struct db_rows){6, servercheck_on_routine, f}, &err);
	servercheck_read_clock(db, f);
}

/* Where the lines go: text, or one JSON array of them all. */
struct servercheck_out {
	bool json;
	size_t lines;
	bool all_held;
};

static void servercheck_print(struct servercheck_out *so, const char *host, const struct promise_line *l)
{
	char line[1400], shown[ESCAPE_TEXT_MAX(sizeof(line))];

	so->all_held = so->all_held && l->state == PROMISE_HELD;
	if (!so->json) {
		promise_format(host, l, line, sizeof(line));
		escape_text(shown, sizeof(shown), line);
		printf("%s\n", shown);
		so->lines++;
		return;
	}
	printf("%s\n  {\"host\": ", so->lines++ ? "," : "");
	json_write(stdout, host);
	printf(", \"check\": \"%s\", \"state\": \"%s\", \"detail\": ", l->check, promise_state_name(l->state));
	json_write(stdout, l->detail);
	fputs(", \"fix\": ", stdout);
	if (l->fix[0])
		json_write(stdout, l->fix);
	else
		fputs("null", stdout);
	fputs("}", stdout);
}

/* "NAME:PORT", NAME, or what the option files give. */
static void servercheck_label(const struct db_config *c, char *buf, size_t len)
{
	if (c->nhosts && c->hosts[0].name && c->hosts[0].port)
		snprintf(buf, len, "%s:%u", c->hosts[0].name, c->hosts[0].port);
	else if (c->nhosts && c->hosts[0].name)
		snprintf(buf, len, "%s", c->hosts[0].name);
	else
		snprintf(buf, len, "%s", c->socket ? c->socket : "the default server");
}

/* One host: its lines, or the one that says it could not be reached.
 * Returns the connection's status. */
static enum db_status servercheck_host(const struct db_config *cfg, const struct lease_sql *sql,
				       struct servercheck_out *so)
{
	struct db *db = db_new(cfg);
	struct promise_facts f;
	struct promise_line lines[PROMISE_LINES_MAX];
	struct db_server srv;
	char host[160];
	struct db_err err;
	enum db_status st;
	size_t n;

	servercheck_label(cfg, host, sizeof(host));
	if (!db)
		return DB_ERROR;
	st = db_connect(db, &err);
	if (st != DB_OK) {
		struct promise_line l = {.check = "connection", .state = PROMISE_UNKNOWN};
		snprintf(l.detail, sizeof(l.detail), "%s: %.511s", dberr_name(st), err.msg);
		snprintf(l.fix, sizeof(l.fix), "every check needs a connection: check the host, the account and TLS");
		servercheck_print(so, host, &l);
		db_free(db);
		return st;
	}
	if (db_server_info(db, &srv))
		snprintf(host, sizeof(host), "%s", srv.name);
	promise_facts_init(&f);
	servercheck_read(db, sql, &f);
	n = promise_judge(&f, lines);
	for (size_t i = 0; i < n; i++)
		servercheck_print(so, host, &lines[i]);
	db_free(db);
	return DB_OK;
}

void servercheck_run(const struct options *o, struct outcome *out)
{
	struct servercheck_out so = {.json = o->format == FORMAT_JSON, .all_held = true};
	struct db_config cfg, one;
	struct lease_sql sql;
	enum db_status st, worst = DB_OK;
	unsigned reached = 0, n;

	memset(out, 0, sizeof(*out));
	if (runmode_library(o, &cfg, out) < 0)
		return;
	/* Every host, read-only ones and replicas included: they are what
	 * the check is about. */
	cfg.need_writable = false;
	lease_sql_render(&sql, o->table);
	if (so.json)
		fputs("[", stdout);
	n = cfg.nhosts ? cfg.nhosts : 1;
	for (unsigned i = 0; i < n; i++) {
		one = cfg;
		one.hosts[0] = cfg.hosts[i];
		one.nhosts = cfg.nhosts ? 1 : 0;
		st = servercheck_host(&one, &sql, &so);
		reached += st == DB_OK;
		worst = st != DB_OK ? st : worst;
	}
	if (so.json)
		fputs(so.lines ? "\n]\n" : "]\n", stdout);
	db_library_end();
	/* No server answered: the status of any mode that cannot connect.
	 * Otherwise 0 only when every assumption held. */
	out->kind = !reached ? runmode_outcome_of(worst) : so.all_held ? OUTCOME_INIT_DONE : OUTCOME_NO;
}
