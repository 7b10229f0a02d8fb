/* The names: the lease table and its siblings, the lease, the holder and
 * --fence-user, from the options, the environment or made up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leasename.h"
#include "options_int.h"

/* VALUE into DST, once it is a WHAT of at most MAX bytes. */
static int store_name(const char *what, char *dst, size_t cap, const char *value, size_t max, char *err, size_t errlen)
{
	size_t off, len;

	/* A forgotten -d (leaderrun --status mysql://app:pw@db/ops) would
	 * print, log and store the password as a name. */
	if (dsn_secret_span(value, &off, &len)) {
		snprintf(err, errlen, "the %s looks like a DSN with a password; give a DSN with -d/--dsn", what);
		return -1;
	}
	if (lease_name_validate(what, value, max, err, errlen) < 0)
		return -1;
	snprintf(dst, cap, "%s", value);
	return 0;
}

/* --table, or LEADERRUN_TABLE, or the default. */
int options_take_table(struct parse *p)
{
	const char *table = p->table && *p->table ? p->table : LEASE_DEFAULT_TABLE;

	if (strlen(table) > LEASE_TABLE_MAX)
		FAIL("--table name is longer than %d characters", LEASE_TABLE_MAX);
	if (lease_table_validate(table, p->err, p->errlen) < 0)
		return -1;
	snprintf(p->o->table, sizeof(p->o->table), "%s", table);
	return 0;
}

/* The history table and the fence sit next to the lease table, in the same
 * database (lease_sql_sibling: leaderrun_lease -> leaderrun_history,
 * leaderrun_fence). After options_name_listed, whose message comes first
 * when both fail. */
int options_take_history_table(struct parse *p)
{
	struct options *o = p->o;
	char fence[LEASE_TABLE_MAX + 16];

	if (lease_sql_sibling(o->table, "_history", o->history_table, sizeof(o->history_table)) < 0)
		FAIL("--table %s: the name is too long to add _history for its history table; use at most 56 "
		     "characters",
		     o->table);
	/* The longest of the fence's names is its procedure NAME_fence_slot. */
	if (lease_sql_sibling(o->table, "_fence_slot", fence, sizeof(fence)) < 0)
		FAIL("--table %s: the name is too long to add _fence_slot for its fence's procedures; use at most 53 "
		     "characters (without a _lease suffix)",
		     o->table);
	return 0;
}

static int options_lease_name(struct parse *p, const char *value)
{
	return store_name("lease name", p->o->lease, sizeof(p->o->lease), value, LEASE_NAME_MAX, p->err, p->errlen);
}

static int options_holder_name(struct parse *p, const char *value)
{
	return store_name("holder", p->o->holder, sizeof(p->o->holder), value, LEASE_HOLDER_MAX, p->err, p->errlen);
}

/* The LEASE of --status (none: every lease), --release and --history. */
int options_name_listed(struct parse *p)
{
	struct options *o = p->o;

	if (o->mode == MODE_STATUS) {
		o->all_leases = !o->command[0];
		return o->command[0] ? options_lease_name(p, o->command[0]) : 0;
	}
	if (o->mode == MODE_RELEASE || o->mode == MODE_HISTORY)
		return options_lease_name(p, p->mode_lease);
	return 0;
}

/* --pause and --resume: the LEASE, and who paused it, for --status and
 * the skipped runs' messages: --holder, else user@host. */
int options_name_pause(struct parse *p)
{
	struct options *o = p->o;

	if (o->mode != MODE_PAUSE && o->mode != MODE_RESUME)
		return 0;
	if (options_lease_name(p, p->mode_lease) < 0)
		return -1;
	if (p->holder_arg && *p->holder_arg)
		return options_holder_name(p, p->holder_arg);
	leasename_operator(o->holder, sizeof(o->holder));
	return 0;
}

/* --check: the lease, holder and term to check. The command's own
 * environment names the lease it runs under: here LEADERRUN_TERM is the
 * input, not a sign of nesting. */
int options_name_check(struct parse *p)
{
	struct options *o = p->o;
	const char *l = p->lease_arg ? p->lease_arg : getenv("LEADERRUN_LEASE");
	const char *h = p->holder_arg ? p->holder_arg : getenv("LEADERRUN_HOLDER");
	const char *t = p->term_text ? p->term_text : getenv("LEADERRUN_TERM");
	char *end;

	if (o->mode != MODE_CHECK)
		return 0;
	if (!l || !h || !t)
		FAIL("--check needs the lease, holder and term: run it inside leaderrun's command, or give --lease, "
		     "--holder and --term");
	if (options_lease_name(p, l) < 0 || options_holder_name(p, h) < 0)
		return -1;
	errno = 0;
	o->check_term = strtoull(t, &end, 10);
	if (errno || end == t || *end || *t == '-')
		FAIL("--term '%s' is not a term number", SHOWN(t));
	return 0;
}

/* A run's lease and holder: given, from the environment, or made up. */
int options_name_run(struct parse *p)
{
	struct options *o = p->o;
	/* Inside a leaderrun's command (LEADERRUN_TERM is set) these
	 * variables describe the outer lease: a nested leaderrun taking them
	 * as defaults would wait for its own parent forever. */
	bool nested = getenv("LEADERRUN_TERM") != NULL;
	const char *lease = p->lease_arg ? p->lease_arg : nested ? NULL : getenv("LEADERRUN_LEASE");
	const char *holder = p->holder_arg ? p->holder_arg : nested ? NULL : getenv("LEADERRUN_HOLDER");

	if (o->mode != MODE_RUN)
		return 0;
	if (lease && *lease) {
		if (options_lease_name(p, lease) < 0)
			return -1;
	} else {
		if (p->shell)
			leasename_from_string(p->shell, o->lease, sizeof(o->lease));
		else
			leasename_from_argv(o->command, o->lease, sizeof(o->lease));
		o->lease_derived = true;
	}
	if (holder && *holder)
		return options_holder_name(p, holder);
	leasename_holder(o->holder, sizeof(o->holder));
	return 0;
}

/* --fence-user: an account's name, as the fence row keeps it (the
 * server's own rules on names are its to enforce). */
int options_name_fence_user(struct parse *p)
{
	if (!p->fence_user)
		return 0;
	if (lease_name_validate("--fence-user", p->fence_user, LEASE_ACCOUNT_MAX, p->err, p->errlen) < 0)
		return -1;
	snprintf(p->o->fence_user, sizeof(p->o->fence_user), "%s", p->fence_user);
	return 0;
}
