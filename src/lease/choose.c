/* Choosing the leader (choose.h): the claims in the lease statements, and
 * the statements of a preemption and a switch-over. Names are validated
 * table names and leaderrun's own hex lock names; values go through
 * sqltext (hexadecimal literals). */
#include "choose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sqltext.h"
#include "spread.h"

/* ROW_COUNT() of the last statement (rows matched: CLIENT_FOUND_ROWS). */
static enum db_status choose_rows(struct db *db, int64_t *n, struct db_err *err)
{
	return db_query_int(db, "SELECT ROW_COUNT()", n, err);
}

enum db_status choose_preempt(const struct choose_at *at, const struct choose_preemption *p, bool *revoked,
			      struct db_err *err)
{
	struct db *db = at->db;
	const struct lease_sql *sql = at->sql;
	const char *lease = at->lease, *lock = p->lock, *holder = p->holder;
	uint64_t term = p->term;
	int priority = p->priority;
	char l[LEASE_TABLE_MAX + 24], s[LEASE_TABLE_MAX + 24], q[2048];
	const struct db_value v[] = {{.type = DB_STR, .str = lease},
				     {.type = DB_STR, .str = holder},
				     {.type = DB_U64, .u64 = term},
				     {.type = DB_I64, .i64 = priority}};
	size_t used = 0;
	int64_t n = 0;
	enum db_status st;

	*revoked = false;
	lease_sql_quote_table(l, sizeof(l), sql->table);
	lease_sql_quote_table(s, sizeof(s), sql->standby);
	/* One statement: the mark (why, for the holder's log and history)
	 * and the revocation commit together, and only while the holder's
	 * priority (its live row's within --priority's range, else 0) is
	 * below ours. */
	if (!sqltext_append(q, sizeof(q), &used,
			    "UPDATE %s l JOIN %s me ON me.lease = l.name AND me.lock_name = '%s' "
			    "LEFT JOIN %s h ON h.lease = l.name AND h.holder = l.holder AND h.priority BETWEEN %d AND "
			    "%d AND IS_USED_LOCK(h.lock_name) IS NOT NULL "
			    "SET me.preempt_term = l.term, l.revoked_term = l.term ",
			    l, s, lock, s, -CHOOSE_PRIORITY_MAX, CHOOSE_PRIORITY_MAX) ||
	    !sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql =
						  "WHERE l.name = ? AND l.slot = 0 AND l.holder = ? AND l.term = ? AND "
						  "l.expires_at > UTC_TIMESTAMP(6) AND l.revoked_term <> l.term AND "
						  "COALESCE(h.priority, 0) < ? AND @@global.read_only = 0",
					      .params = v,
					      .nparams = 4}))
		return DB_ERROR;
	if ((st = db_query(db, q, err)) != DB_OK || (st = choose_rows(db, &n, err)) != DB_OK)
		return st;
	*revoked = n > 0;
	return DB_OK;
}

/* A standby S chosen for the term of the lease row X, the choice running. */
#define CHOSEN_NOW "(s.chosen_until > UTC_TIMESTAMP(6) AND x.term = s.chosen_term)"

struct choose_why {
	struct lease_revoker *out;
};

static void choose_why_row(void *arg, const char *const *c, unsigned n)
{
	struct choose_why *w = arg;

	if (n < 2)
		return;
	/* The query's IF(): 2 a switch-over, 1 a preemption. */
	w->out->why = !c[0] ? HANDOVER_RELEASED : c[0][0] == '2' ? HANDOVER_SWITCHED_OVER : HANDOVER_PREEMPTED;
	snprintf(w->out->by, sizeof(w->out->by), "%s", c[1] ? c[1] : "");
}

enum db_status choose_why_revoked(const struct choose_at *at, uint64_t term, struct lease_revoker *out,
				  struct db_err *err)
{
	struct db *db = at->db;
	const struct lease_sql *sql = at->sql;
	const char *lease = at->lease;
	char s[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 24], q[2048];
	const struct db_value v[] = {{.type = DB_STR, .str = lease}, {.type = DB_U64, .u64 = term}};
	struct choose_why w = {out};
	size_t used = 0;

	out->why = HANDOVER_RELEASED;
	out->by[0] = '\0';
	lease_sql_quote_table(s, sizeof(s), sql->standby);
	lease_sql_quote_table(l, sizeof(l), sql->table);
	/* A switch-over's chosen standby, else the preemptor of this term;
	 * never the revoked holder itself (a standby chosen before, whose
	 * choice has not run out), nor a choice a newer term has spent (the
	 * chosen one took the lease, then lost it, and another preempts). */
	if (!sqltext_append(q, sizeof(q), &used,
			    "SELECT IF(" CHOSEN_NOW ", 2, 1), s.holder FROM %s s JOIN %s x ON "
			    "x.name = s.lease AND x.slot = 0 AND x.holder <> s.holder ",
			    s, l) ||
	    !sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql = "WHERE s.lease = ? AND (s.preempt_term = ? OR " CHOSEN_NOW
						     ") AND IS_USED_LOCK(s.lock_name) IS NOT NULL ORDER BY " CHOSEN_NOW
						     " DESC LIMIT 1",
					      .params = v,
					      .nparams = 2}))
		return DB_ERROR;
	return db_query_rows(db, q, &(struct db_rows){2, choose_why_row, &w}, err);
}

struct choose_find_ctx {
	struct choose_target *t;
	const char *name;
};

static void choose_find_row(void *arg, const char *const *c, unsigned n)
{
	struct choose_find_ctx *f = arg;
	struct choose_target *t = f->t;

	if (n < 3 || !c[0])
		return;
	/* A holder id names one; a host may name several (rows come with
	 * the holder's match first). */
	if (t->matches > 0 && strcmp(t->holder, f->name) == 0)
		return;
	if (t->matches++ == 0 || strcmp(c[0], f->name) == 0) {
		snprintf(t->holder, sizeof(t->holder), "%s", c[0]);
		snprintf(t->host, sizeof(t->host), "%s", c[1] ? c[1] : "");
		t->healthy = c[2] && strcmp(c[2], "0") != 0;
	}
	if (strcmp(c[0], f->name) == 0)
		t->matches = 1;
}

enum db_status choose_find(const struct choose_at *at, const char *name, struct choose_target *t, struct db_err *err)
{
	struct db *db = at->db;
	const struct lease_sql *sql = at->sql;
	const char *lease = at->lease;
	char s[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 24], q[2048];
	const struct db_value v[] = {{.type = DB_STR, .str = lease},
				     {.type = DB_STR, .str = name},
				     {.type = DB_STR, .str = name},
				     {.type = DB_STR, .str = name}};
	struct choose_find_ctx f = {t, name};
	size_t used = 0;

	memset(t, 0, sizeof(*t));
	lease_sql_quote_table(s, sizeof(s), sql->standby);
	lease_sql_quote_table(l, sizeof(l), sql->table);
	if (!sqltext_append(q, sizeof(q), &used, "SELECT s.holder, s.host, s.healthy FROM %s s ", s) ||
	    !sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql = "WHERE s.lease = ? AND (s.holder = ? OR s.host = ?) ",
					      .params = v,
					      .nparams = 3}) ||
	    !sqltext_append(q, sizeof(q), &used,
			    "AND IS_USED_LOCK(s.lock_name) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %s x WHERE "
			    "x.name = s.lease AND x.holder = s.holder AND x.expires_at > UTC_TIMESTAMP(6)) ",
			    l) ||
	    !sqltext_render(
		q, sizeof(q), &used,
		&(struct db_call){.sql = "ORDER BY s.holder = ? DESC, s.since", .params = &v[3], .nparams = 1}))
		return DB_ERROR;
	return db_query_rows(db, q, &(struct db_rows){3, choose_find_row, &f}, err);
}

enum db_status choose_set(const struct choose_at *at, const char *holder, int64_t window_us, bool *chosen,
			  struct db_err *err)
{
	struct db *db = at->db;
	const struct lease_sql *sql = at->sql;
	const char *lease = at->lease;
	char s[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 24], q[2048];
	const struct db_value v[] = {
	    {.type = DB_I64, .i64 = window_us}, {.type = DB_STR, .str = lease}, {.type = DB_STR, .str = holder}};
	size_t used = 0;
	int64_t n = 0;
	enum db_status st;

	*chosen = false;
	lease_sql_quote_table(s, sizeof(s), sql->standby);
	lease_sql_quote_table(l, sizeof(l), sql->table);
	/* One choice at a time: an earlier one still running would keep the
	 * lease from both. */
	if (!sqltext_append(q, sizeof(q), &used, "UPDATE %s SET chosen_until = NULL ", s) ||
	    !sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql = "WHERE lease = ? AND holder <> ? AND chosen_until IS NOT NULL",
					      .params = &v[1],
					      .nparams = 2}))
		return DB_ERROR;
	if ((st = db_query(db, q, err)) != DB_OK)
		return st;
	used = 0;
	/* Until the holder's lease would expire (a revoked term is renewed
	 * no more), and the window past it; spent by the next term, whoever
	 * takes it (the claims compare the lease's term with chosen_term). */
	if (!sqltext_append(q, sizeof(q), &used,
			    "UPDATE %s s SET s.chosen_term = COALESCE((SELECT MAX(y.term) FROM %s y WHERE y.name = "
			    "s.lease), 0), s.chosen_until = GREATEST(UTC_TIMESTAMP(6), COALESCE((SELECT "
			    "MAX(x.expires_at) FROM %s x WHERE x.name = s.lease), UTC_TIMESTAMP(6))) ",
			    s, l, l) ||
	    !sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql = "+ INTERVAL ? MICROSECOND WHERE s.lease = ? AND s.holder = ? AND "
						     "IS_USED_LOCK(s.lock_name) IS NOT NULL",
					      .params = v,
					      .nparams = 3}))
		return DB_ERROR;
	if ((st = db_query(db, q, err)) != DB_OK || (st = choose_rows(db, &n, err)) != DB_OK)
		return st;
	*chosen = n > 0;
	return DB_OK;
}

/* The rows --spread chooses from, copied as they come. */
struct choose_spread_ctx {
	struct spread_row *rows;
	char (*text)[2][LEASE_NAME_MAX + 1];
	size_t n;
};

static void choose_spread_row(void *arg, const char *const *c, unsigned n)
{
	struct choose_spread_ctx *x = arg;

	if (n < 3 || !c[0] || !c[1] || !c[2] || x->n == SPREAD_ROWS_MAX)
		return;
	snprintf(x->text[x->n][0], sizeof(x->text[x->n][0]), "%s", c[1]);
	snprintf(x->text[x->n][1], sizeof(x->text[x->n][1]), "%s", c[2]);
	x->rows[x->n] = (struct spread_row){x->text[x->n][0], x->text[x->n][1], c[0][0] == 'h'};
	x->n++;
}

enum db_status choose_spread(const struct choose_at *at, const char *holder, bool *mine, struct db_err *err)
{
	struct db *db = at->db;
	const struct lease_sql *sql = at->sql;
	const char *lease = at->lease;
	char s[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 24], q[1024], host[LEASE_NAME_MAX + 1];
	struct choose_spread_ctx x = {calloc(SPREAD_ROWS_MAX, sizeof(*x.rows)),
				      calloc(SPREAD_ROWS_MAX, sizeof(*x.text)), 0};
	const char *choice;
	enum db_status st = DB_ERROR;

	*mine = true;
	if (!x.rows || !x.text)
		goto out;
	lease_sql_quote_table(s, sizeof(s), sql->standby);
	lease_sql_quote_table(l, sizeof(l), sql->table);
	/* Who contends with --spread, for which lease, and which leases
	 * each host holds now; a host by its holders' names. */
	snprintf(
	    q, sizeof(q),
	    "SELECT 'c', s.lease, SUBSTRING_INDEX(s.holder, ':', 1) FROM %s s WHERE s.spread AND "
	    "IS_USED_LOCK(s.lock_name) IS NOT NULL UNION ALL SELECT 'h', x.name, SUBSTRING_INDEX(x.holder, ':', 1) "
	    "FROM %s x WHERE x.expires_at > UTC_TIMESTAMP(6) LIMIT %d",
	    s, l, SPREAD_ROWS_MAX);
	st = db_query_rows(db, q, &(struct db_rows){3, choose_spread_row, &x}, err);
	if (st != DB_OK)
		goto out;
	spread_host(holder, host, sizeof(host));
	choice = spread_choice(x.rows, x.n, lease);
	*mine = !choice || strcmp(choice, host) == 0;
out:
	free(x.rows);
	free(x.text);
	return st;
}
