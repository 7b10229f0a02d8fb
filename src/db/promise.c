#include "promise.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Where the words send a reader for the why. */
#define SEE_REPLICATION "see REPLICATION in leaderrun-safety(7)"

void promise_facts_init(struct promise_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->flush_at_commit = f->log_bin = f->sync_binlog = -1;
	f->read_only = f->super_read_only = -1;
	f->wsrep_on = f->wsrep_sync_wait = -1;
	f->gr_single_primary = -1;
	f->semisync_source = -1;
	f->replicas = -1;
	f->schema = -1;
	f->fence_process = f->fence_kill = -1;
}

const char *promise_state_name(enum promise_state s)
{
	return s == PROMISE_HELD ? "held" : s == PROMISE_NOT_HELD ? "not held" : "unknown";
}

static const char *on_off(int64_t v)
{
	return v < 0 ? "unknown" : v ? "ON" : "OFF";
}

/* Sets L's state and detail; FIX (NULL: none) is a format too. */
static void say(struct promise_line *l, enum promise_state state, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(struct promise_line *l, enum promise_state state, const char *fix, const char *fmt, ...)
{
	va_list ap;

	l->state = state;
	va_start(ap, fmt);
	vsnprintf(l->detail, sizeof(l->detail), fmt, ap);
	va_end(ap);
	snprintf(l->fix, sizeof(l->fix), "%s", fix ? fix : "");
}

static void judge_flush(int64_t flush, struct promise_line *l)
{
	l->check = "durable commits";
	if (flush == 1)
		say(l, PROMISE_HELD, NULL, "innodb_flush_log_at_trx_commit=1");
	else if (flush < 0)
		say(l, PROMISE_UNKNOWN, "run --check-server as a user who may read the server's variables",
		    "innodb_flush_log_at_trx_commit could not be read");
	else
		say(l, PROMISE_NOT_HELD,
		    "set innodb_flush_log_at_trx_commit=1 (SET GLOBAL, and in the server's option file)",
		    "innodb_flush_log_at_trx_commit=%" PRId64 ": a crash of the server can lose commits it "
		    "acknowledged, an acquire or a renew among them, and the lease is then granted twice",
		    flush);
}

static void judge_binlog(int64_t log_bin, int64_t sync_binlog, struct promise_line *l)
{
	l->check = "binary log";
	if (log_bin == 0)
		say(l, PROMISE_HELD, NULL, "log_bin=OFF: nothing to sync");
	else if (log_bin == 1 && sync_binlog == 1)
		say(l, PROMISE_HELD, NULL, "log_bin=ON, sync_binlog=1");
	else if (log_bin < 0 || sync_binlog < 0)
		say(l, PROMISE_UNKNOWN, "run --check-server as a user who may read the server's variables",
		    "log_bin=%s, sync_binlog could not be read", on_off(log_bin));
	else
		say(l, PROMISE_NOT_HELD, "set sync_binlog=1 (SET GLOBAL, and in the server's option file)",
		    "log_bin=ON, sync_binlog=%" PRId64 ": a crash can lose the binary log of commits acknowledged, "
		    "and a replica or the recovered server then lacks an acquire or a renew",
		    sync_binlog);
}

/* What reads a member's state and role; the application's own grants
 * (sql/grants.sql) lack it. */
#define GR_GRANT "grant SELECT on performance_schema.replication_group_members (with performance_schema on)"

static bool gr_secondary(const struct promise_facts *f)
{
	return f->gr && strcmp(f->gr_member_state, "ONLINE") == 0 && strcmp(f->gr_member_role, "SECONDARY") == 0;
}

/* A read-only member of a group: a secondary is one the group may elect,
 * not an asynchronous replica (leaderrun-safety(7), Group Replication:
 * list every member in the DSN), so it passes. Without SELECT on the
 * members' table (the application's own grants lack it) the role is not
 * known, and neither is whether it passes. */
static void judge_writable_gr(const struct promise_facts *f, const char *sro, struct promise_line *l)
{
	if (gr_secondary(f))
		say(l, PROMISE_HELD, NULL,
		    "read_only=ON%s: a Group Replication secondary, passed over until it is elected primary", sro);
	else if (!f->gr_member_state[0])
		say(l, PROMISE_UNKNOWN, GR_GRANT,
		    "read_only=ON%s: a Group Replication member whose state and role could not be read (a secondary "
		    "passes, a member out of the group does not)",
		    sro);
	else
		say(l, PROMISE_NOT_HELD, "rejoin it (START GROUP_REPLICATION) or take it out of the DSN",
		    "read_only=ON%s: a Group Replication member %s%s%s, passed over; it may lack the group's last "
		    "commits",
		    sro, f->gr_member_state, f->gr_member_role[0] ? " " : "", f->gr_member_role);
}

/* read_only, and super_read_only where it exists (not on MariaDB). */
static void judge_writable(const struct promise_facts *f, struct promise_line *l)
{
	char sro[40] = "";

	l->check = "writable";
	if (f->super_read_only >= 0)
		snprintf(sro, sizeof(sro), ", super_read_only=%s", on_off(f->super_read_only));
	if (f->read_only < 0)
		say(l, PROMISE_UNKNOWN, "run --check-server as a user who may read the server's variables",
		    "read_only could not be read");
	else if (f->read_only == 0 && f->super_read_only <= 0)
		say(l, PROMISE_HELD, NULL, "read_only=OFF%s", sro);
	else if (f->gr)
		judge_writable_gr(f, sro, l);
	else
		say(l, PROMISE_NOT_HELD,
		    "take it out of the DSN, or make its replication semi-synchronous; " SEE_REPLICATION,
		    "read_only=ON%s: an asynchronous replica or a demoted primary; a run passes it over, but a "
		    "failover "
		    "to an asynchronous replica can lose acknowledged renews and grant the lease twice",
		    sro);
}

static void judge_galera(const struct promise_facts *f, struct promise_line *l)
{
	if (!f->wsrep_state[0])
		say(l, PROMISE_UNKNOWN, "run --check-server as a user who may read the server's status",
		    "a Galera node (wsrep_on=ON), wsrep_local_state_comment could not be read");
	else if (strcmp(f->wsrep_state, "Synced") != 0)
		say(l, PROMISE_NOT_HELD, "wait until it is Synced, or take it out of the DSN",
		    "a Galera node in state %s, not Synced: it may lack the cluster's last commits (a run passes it "
		    "over)",
		    f->wsrep_state);
	else
		say(l, PROMISE_HELD, NULL,
		    "a Galera node, Synced; leaderrun makes its own reads causal (wsrep_sync_wait=1 in its sessions; "
		    "the global value is %" PRId64 ")",
		    f->wsrep_sync_wait);
}

/* BEFORE_ON_PRIMARY_FAILOVER or stronger: a new primary applies the old
 * one's backlog before it answers (leaderrun-safety(7), Group
 * Replication). */
static bool gr_consistent(const char *c)
{
	static const char *const enough[] = {"BEFORE_ON_PRIMARY_FAILOVER", "BEFORE", "AFTER", "BEFORE_AND_AFTER"};

	for (size_t i = 0; i < sizeof(enough) / sizeof(enough[0]); i++)
		if (strcasecmp(c, enough[i]) == 0)
			return true;
	return false;
}

static void judge_gr(const struct promise_facts *f, struct promise_line *l)
{
	char what[200];

	snprintf(what, sizeof(what), "Group Replication, %s member%s%s, %s, group_replication_consistency=%s",
		 f->gr_member_state[0] ? f->gr_member_state : "a",
		 f->gr_member_role[0] ? " " : " of unread state and role", f->gr_member_role,
		 f->gr_single_primary == 0 ? "multi-primary" : "single-primary",
		 f->gr_consistency[0] ? f->gr_consistency : "unknown");
	if (!f->gr_member_state[0])
		say(l, PROMISE_UNKNOWN, GR_GRANT ", or start it (START GROUP_REPLICATION), or take it out of the DSN",
		    "%s: this server's state and role in the group could not be read", what);
	else if (strcmp(f->gr_member_state, "ONLINE") != 0)
		say(l, PROMISE_NOT_HELD, "rejoin it (START GROUP_REPLICATION) or take it out of the DSN",
		    "%s: a member that is not ONLINE may lack the group's last commits", what);
	else if (!gr_consistent(f->gr_consistency))
		say(l, PROMISE_NOT_HELD,
		    "SET PERSIST group_replication_consistency='BEFORE_ON_PRIMARY_FAILOVER' on every member",
		    "%s: a new primary answers before it has applied the old one's backlog, from a row that may lack "
		    "acknowledged renews",
		    what);
	else if (f->gr_single_primary == 0)
		say(l, PROMISE_NOT_HELD,
		    "use single-primary mode (group_replication_single_primary_mode=ON); " SEE_REPLICATION,
		    "%s: reads on a member are not causal and each member judges expiry by its own clock", what);
	else
		say(l, PROMISE_HELD, NULL, "%s", what);
}

/* A server of its own, or a primary with asynchronous replicas. */
static void judge_async(const struct promise_facts *f, struct promise_line *l)
{
	if (f->log_bin == 0)
		say(l, PROMISE_HELD, NULL, "no Galera, no Group Replication, no binary log: no replica follows it");
	else if (f->semisync_source == 1)
		say(l, PROMISE_HELD, NULL, "semi-synchronous replication on (rpl_semi_sync_*_enabled=ON)");
	else if (f->replicas == 0)
		say(l, PROMISE_HELD, NULL, "binary log on, no replica attached");
	else if (f->replicas > 0)
		say(l, PROMISE_NOT_HELD,
		    "make the replication semi-synchronous, or never fail over to an asynchronous "
		    "replica; " SEE_REPLICATION,
		    "%" PRId64
		    " asynchronous replica(s) attached: a failover to one can lose acknowledged renews and grant "
		    "the lease twice",
		    f->replicas);
	else
		say(l, PROMISE_UNKNOWN,
		    "run --check-server as a user with REPLICATION SLAVE (MySQL) or REPLICATION MASTER ADMIN "
		    "(MariaDB), or make the replication semi-synchronous",
		    "binary log on, semi-synchronous replication off, and its replicas could not be listed (%s)",
		    f->replicas_err[0] ? f->replicas_err : "no answer");
}

static void judge_replication(const struct promise_facts *f, struct promise_line *l)
{
	l->check = "replication";
	if (f->wsrep_on == 1)
		judge_galera(f, l);
	else if (f->gr)
		judge_gr(f, l);
	else
		judge_async(f, l);
}

static bool has_marker(const char *s)
{
	return strcasestr(s, "proxysql") || strcasestr(s, "maxscale");
}

/* ProxySQL answers "select @@version_comment limit 1" itself; MaxScale
 * may name itself in the greeting's version. */
static void judge_proxy(const struct promise_facts *f, struct promise_line *l)
{
	l->check = "proxy";
	if (!f->version[0] && !f->version_comment[0])
		say(l, PROMISE_UNKNOWN, "check the connection",
		    "neither the version nor @@version_comment could be read");
	else if (has_marker(f->version_comment) || has_marker(f->version))
		say(l, PROMISE_UNKNOWN,
		    "run --check-server against the servers behind it, pass --no-wake-hint, and route leaderrun to the "
		    "writer by user or port; see Proxies and routers in leaderrun-safety(7)",
		    "a proxy answers (version '%s', version_comment '%s'): what holds is what the servers behind it "
		    "give, and ProxySQL pins a session once it sees GET_LOCK, MaxScale may replay a transaction",
		    f->version, f->version_comment);
	else
		say(l, PROMISE_HELD, NULL,
		    "no ProxySQL or MaxScale marker (version '%s', version_comment '%s'); a proxy that passes the "
		    "server's own through cannot be told",
		    f->version, f->version_comment);
}

/* What the fence's definer lacks (issue 47), after the schema's line:
 * said, not judged, as the fence holds either way (FENCED WRITES). */
static const char *fence_definer_said(const struct promise_facts *f, char *said, size_t len)
{
	if (!f->fence_definer[0] || (f->fence_process != 0 && f->fence_kill != 0))
		return "";
	snprintf(said, len,
		 "; the fence's procedures are defined by %s, without %s: a takeover ends a stale job's session only "
		 "of that account%s (leaderrun-safety(7), SECURITY)",
		 f->fence_definer,
		 f->fence_process == 0 && f->fence_kill == 0 ? "PROCESS or CONNECTION ADMIN"
		 : f->fence_process == 0		     ? "PROCESS"
							     : "CONNECTION ADMIN",
		 f->fence_process == 0 ? ", of a term begun since the server's last start, and neither on MySQL with "
					 "xa_detach_on_prepare ON nor on a cluster"
				       : "");
	return said;
}

static void judge_schema(const struct promise_facts *f, struct promise_line *l)
{
	char said[400];

	l->check = "lease table";
	if (f->schema < 0)
		say(l, PROMISE_UNKNOWN, "grant the user SELECT on the lease table (sql/grants.sql)",
		    "the schema of %s could not be read (%s)", f->table, f->schema_err);
	else if (f->schema == 0)
		say(l, PROMISE_NOT_HELD, "run leaderrun --init (as a user with CREATE), or apply sql/leaderrun.sql",
		    "%s missing", f->table);
	else if (f->schema < f->schema_newest)
		say(l, PROMISE_NOT_HELD,
		    f->schema == 5   ? "run leaderrun --init as an administrator (CREATE, CREATE ROUTINE, and "
				       "CONNECTION ADMIN to end stale sessions), or apply sql/upgrade-5-to-6.sql and "
				       "sql/upgrade-6-to-7.sql; and the grants of sql/grants.sql, which let this user "
				       "see the fence"
		    : f->schema == 6 ? "run leaderrun --init as an administrator, or apply sql/upgrade-6-to-7.sql "
				       "(NEWS, 0.7.0)"
				     : "run leaderrun --init (as a user with ALTER, CREATE and INSERT), or apply "
				       "sql/upgrade-*.sql",
		    "%s has schema %d, older than this build's %d: runs use the older statements, without the newer "
		    "features%s",
		    f->table, f->schema, f->schema_newest,
		    f->schema == 5   ? " (the fence: FENCED WRITES)"
		    : f->schema == 6 ? " (the fence's procedures may be turned against the server: SECURITY)"
				     : "");
	else
		say(l, PROMISE_HELD, NULL, "%s is current (schema %d)%s", f->table, f->schema,
		    fence_definer_said(f, said, sizeof(said)));
}

/* Informational: leaderrun judges time by the server's clock alone. */
static void judge_clock(const struct promise_facts *f, struct promise_line *l)
{
	l->check = "clock";
	if (!f->clock_known)
		say(l, PROMISE_UNKNOWN, "check the connection", "UTC_TIMESTAMP(6) could not be read");
	else
		say(l, PROMISE_HELD, NULL,
		    "the server's clock is %+.1f ms from this host's (+- %.1f ms); informational: leaderrun judges "
		    "expiry by the server's clock alone",
		    (double)f->clock_offset_us / 1e3, (double)f->clock_uncertainty_us / 1e3);
}

size_t promise_judge(const struct promise_facts *f, struct promise_line *lines)
{
	size_t n = 0;

	judge_flush(f->flush_at_commit, &lines[n++]);
	judge_binlog(f->log_bin, f->sync_binlog, &lines[n++]);
	judge_writable(f, &lines[n++]);
	judge_replication(f, &lines[n++]);
	judge_proxy(f, &lines[n++]);
	judge_schema(f, &lines[n++]);
	judge_clock(f, &lines[n++]);
	return n;
}

size_t promise_durability(int64_t flush_at_commit, int64_t log_bin, int64_t sync_binlog, struct promise_line lines[2])
{
	size_t n = 0;

	judge_flush(flush_at_commit, &lines[n]);
	n += lines[n].state == PROMISE_NOT_HELD;
	judge_binlog(log_bin, sync_binlog, &lines[n]);
	n += lines[n].state == PROMISE_NOT_HELD;
	return n;
}

void promise_format(const char *host, const struct promise_line *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %s: %s: %s%s%s", host, l->check, promise_state_name(l->state), l->detail,
		 l->fix[0] ? "; " : "", l->fix);
}
