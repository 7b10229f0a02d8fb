/* db/promise.c: what a server's settings mean for the promise, for the
 * topologies the test machine cannot always start (Group Replication's
 * modes, Galera's states, replicas, proxies). */
#include <criterion/criterion.h>
#include <string.h>

#include "db/promise.h"

/* A safe server of its own: every line held. */
static void safe(struct promise_facts *f)
{
	promise_facts_init(f);
	f->flush_at_commit = 1;
	f->log_bin = 0;
	f->sync_binlog = 1;
	f->read_only = 0;
	f->table = "leaderrun_lease";
	f->schema = f->schema_newest = 5;
	f->clock_known = true;
	strcpy(f->version, "10.11.6-MariaDB");
}

/* The line of CHECK. */
static const struct promise_line *line_of(const struct promise_facts *f, const char *check)
{
	static struct promise_line lines[PROMISE_LINES_MAX];
	size_t n = promise_judge(f, lines);

	for (size_t i = 0; i < n; i++)
		if (strcmp(lines[i].check, check) == 0)
			return &lines[i];
	cr_assert_fail("no line '%s'", check);
	return NULL;
}

static void assert_state(const struct promise_facts *f, const char *check, enum promise_state want, const char *detail)
{
	const struct promise_line *l = line_of(f, check);

	cr_assert_eq(l->state, want, "%s: %s, want %s: %s", check, promise_state_name(l->state),
		     promise_state_name(want), l->detail);
	cr_assert(strstr(l->detail, detail), "%s: '%s' lacks '%s'", check, l->detail, detail);
	cr_assert_eq(l->fix[0] != '\0', want != PROMISE_HELD, "%s: what to change iff not held: '%s'", check, l->fix);
}

Test(promise, a_safe_server_holds_all_and_unknowns_are_unknown)
{
	struct promise_facts f;
	struct promise_line lines[PROMISE_LINES_MAX];
	size_t n;

	safe(&f);
	n = promise_judge(&f, lines);
	cr_assert_eq(n, 7);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lines[i].state, PROMISE_HELD, "%s: %s", lines[i].check, lines[i].detail);
	promise_facts_init(&f);
	f.table = "t";
	n = promise_judge(&f, lines);
	for (size_t i = 0; i < n; i++)
		cr_assert_neq(lines[i].state, PROMISE_HELD, "%s held on nothing known: %s", lines[i].check,
			      lines[i].detail);
}

Test(promise, binary_log_needs_sync_binlog_1)
{
	struct promise_facts f;

	safe(&f);
	f.log_bin = 1;
	f.sync_binlog = 0;
	assert_state(&f, "binary log", PROMISE_NOT_HELD, "sync_binlog=0");
	f.sync_binlog = 1;
	assert_state(&f, "binary log", PROMISE_HELD, "sync_binlog=1");
}

Test(promise, group_replication_needs_online_single_primary_and_consistency)
{
	struct promise_facts f;

	safe(&f);
	f.log_bin = 1;
	f.gr = true;
	f.gr_single_primary = 1;
	strcpy(f.gr_member_state, "ONLINE");
	strcpy(f.gr_member_role, "PRIMARY");
	strcpy(f.gr_consistency, "EVENTUAL");
	assert_state(&f, "replication", PROMISE_NOT_HELD, "group_replication_consistency=EVENTUAL");
	strcpy(f.gr_consistency, "BEFORE_ON_PRIMARY_FAILOVER");
	assert_state(&f, "replication", PROMISE_HELD, "ONLINE member PRIMARY");
	f.gr_single_primary = 0;
	assert_state(&f, "replication", PROMISE_NOT_HELD, "multi-primary");
	f.gr_single_primary = 1;
	strcpy(f.gr_member_state, "RECOVERING");
	assert_state(&f, "replication", PROMISE_NOT_HELD, "RECOVERING");
	/* A secondary is read-only, and that is how it should be. */
	strcpy(f.gr_member_state, "ONLINE");
	strcpy(f.gr_member_role, "SECONDARY");
	f.read_only = f.super_read_only = 1;
	assert_state(&f, "writable", PROMISE_HELD, "secondary");
}

Test(promise, group_replication_member_read_only_is_no_asynchronous_replica)
{
	struct promise_facts f;

	safe(&f);
	f.log_bin = 1;
	f.gr = true;
	f.gr_single_primary = 1;
	strcpy(f.gr_consistency, "BEFORE_ON_PRIMARY_FAILOVER");
	f.read_only = f.super_read_only = 1;
	/* The application's own grants cannot read the members' table: a
	 * secondary or an expelled member, it cannot tell which. */
	assert_state(&f, "writable", PROMISE_UNKNOWN, "state and role could not be read");
	assert_state(&f, "replication", PROMISE_UNKNOWN, "could not be read");
	strcpy(f.gr_member_state, "ERROR");
	assert_state(&f, "writable", PROMISE_NOT_HELD, "Group Replication member ERROR");
}

Test(promise, galera_needs_synced)
{
	struct promise_facts f;

	safe(&f);
	f.wsrep_on = 1;
	strcpy(f.wsrep_state, "Donor/Desynced");
	assert_state(&f, "replication", PROMISE_NOT_HELD, "Donor/Desynced");
	strcpy(f.wsrep_state, "Synced");
	assert_state(&f, "replication", PROMISE_HELD, "Synced");
}

Test(promise, async_replicas_without_semi_sync_are_not_held)
{
	struct promise_facts f;

	safe(&f);
	f.log_bin = 1;
	f.replicas = 2;
	assert_state(&f, "replication", PROMISE_NOT_HELD, "2 asynchronous replica");
	f.semisync_source = 1;
	assert_state(&f, "replication", PROMISE_HELD, "semi-synchronous");
	f.semisync_source = 0;
	f.replicas = -1;
	strcpy(f.replicas_err, "Access denied");
	assert_state(&f, "replication", PROMISE_UNKNOWN, "Access denied");
	f.replicas = 0;
	assert_state(&f, "replication", PROMISE_HELD, "no replica attached");
	f.read_only = 1;
	assert_state(&f, "writable", PROMISE_NOT_HELD, "read_only=ON");
}

Test(promise, a_proxy_is_unknown_and_a_run_warns_in_the_same_words)
{
	struct promise_facts f;
	struct promise_line lines[PROMISE_LINES_MAX], warn[2];
	char a[1400], b[1400];

	safe(&f);
	strcpy(f.version_comment, "(ProxySQL)");
	assert_state(&f, "proxy", PROMISE_UNKNOWN, "ProxySQL");
	safe(&f);
	strcpy(f.version, "10.11.6-MariaDB-maxscale");
	assert_state(&f, "proxy", PROMISE_UNKNOWN, "maxscale");
	/* The run's warning is --check-server's line. */
	safe(&f);
	f.flush_at_commit = 2;
	promise_judge(&f, lines);
	cr_assert_eq(promise_durability(2, 0, -1, warn), 1);
	promise_format("db:3306", &lines[0], a, sizeof(a));
	promise_format("db:3306", &warn[0], b, sizeof(b));
	cr_assert_str_eq(a, b);
	cr_assert(strstr(a, "db:3306: durable commits: not held: innodb_flush_log_at_trx_commit=2: "), "%s", a);
	cr_assert_eq(promise_durability(1, 0, -1, warn), 0);
}
