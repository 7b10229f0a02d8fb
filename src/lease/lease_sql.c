/* The lease statements rendered for a table and its schema (their text is
 * in stmts.def), name validation and the reading of their results: the
 * pure half of the protocol (lease.c runs it). */
#include "choose.h"
#include "lease.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

int lease_table_validate(const char *name, char *err, size_t errlen)
{
	const char *p = name;
	int parts = 0;

	for (;;) {
		size_t n = 0;
		bool digits_only = true;
		for (; ident_char(p[n]); n++)
			digits_only = digits_only && p[n] >= '0' && p[n] <= '9';
		if (n == 0 || n > 64 || digits_only)
			goto bad;
		parts++;
		p += n;
		if (*p == '\0')
			return 0;
		if (*p != '.' || parts == 2)
			goto bad;
		p++;
	}
bad:
	snprintf(
	    err, errlen,
	    "--table '%s' is not a valid table name; use letters, digits, '_' and '$' (up to 64), optionally DB.TABLE",
	    name);
	return -1;
}

int lease_name_validate(const char *what, const char *name, size_t max, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = strlen(name);

	if (n == 0) {
		snprintf(err, errlen, "%s is empty", what);
		return -1;
	}
	if (n > max) {
		snprintf(err, errlen, "%s is %zu bytes long; the limit is %zu", what, n, max);
		return -1;
	}
	/* Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
	 * nothing past U+10FFFF) without control characters: the name is shown
	 * in logs and stored in a utf8mb4 column, which rejects the rest. */
	while (*p) {
		unsigned cp;
		int extra;
		if (*p < 0x20 || *p == 0x7f)
			goto bad;
		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			extra = 1;
			cp = *p & 0x1fu;
		} else if ((*p & 0xf0) == 0xe0) {
			extra = 2;
			cp = *p & 0x0fu;
		} else if ((*p & 0xf8) == 0xf0) {
			extra = 3;
			cp = *p & 0x07u;
		} else
			goto bad;
		p++;
		for (int k = 0; k < extra; k++, p++) {
			if ((*p & 0xc0) != 0x80)
				goto bad;
			cp = cp << 6 | (*p & 0x3fu);
		}
		if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0))
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "%s must be UTF-8 text without control characters", what);
	return -1;
}

void lease_sql_quote_table(char *out, size_t len, const char *table)
{
	const char *dot = strchr(table, '.');

	/* The name was validated, so backticks cannot occur inside it. */
	if (dot)
		snprintf(out, len, "`%.*s`.`%s`", (int)(dot - table), table, dot + 1);
	else
		snprintf(out, len, "`%s`", table);
}

/* What the statements name, by the lease table's schema: a column, or
 * what the column's absence means (no slots: every lease is slot 0 of one;
 * schema 1 and 2: nothing revoked, paused or once-per). The slot and the
 * count stay parameters ("0=?", "1=?"), so that the calls are the same for
 * every schema (but for the insert before schema 5 and the release before
 * schema 2, which lease.c sends with fewer parameters).
 * Arguments of snprintf, not formats: one '%' each. */
struct cols {
	const char *slot, *slots, *order, *pause_ok, *live, *revoked, *exit_set, *read_more, *read_lost, *status_exit,
	    *status_more;
	const char *insert_rows;
	const char *choose, *choose_read; /* the claims (choose.h), this run's, not the schema's */
};

#define ISO1(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%fZ')"

static struct cols cols_of(int schema)
{
	struct cols c = {
	    .slot = "slot",
	    .slots = "slots",
	    .order = "slot",
	    .pause_ok = " AND (paused_until IS NULL OR paused_until <= UTC_TIMESTAMP(6))",
	    .live = " AND revoked_term <> term",
	    .revoked = "revoked_term = term",
	    .exit_set = ", last_exit=?, finished_at=UTC_TIMESTAMP(6)",
	    .read_more = "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), paused_until), " ISO1(
		"paused_until") ", paused_by, "
				"TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', last_slot), slot_term",
	    /* --schedule: the last attempt of last_slot was lost (stmts.def,
	     * acquire_rerun): no exit recorded, and not revoked. */
	    .read_lost = "last_exit IS NULL AND revoked_term < term",
	    .status_exit = "last_exit, " ISO1("finished_at"),
	    .status_more =
		"IF(paused_until > UTC_TIMESTAMP(6), " ISO1("paused_until") ", NULL), paused_by, " ISO1("last_slot"),
	    .insert_rows = "(name, slot, slots) VALUES (?, ?, ?)",
	    .choose = "",
	    .choose_read = "NULL, NULL, NULL, NULL",
	};

	if (schema < 5) {
		c.insert_rows = "(name) VALUES (?)";
		c.slot = "0";
		c.slots = "1";
		c.order = "name"; /* ORDER BY 0 would be a column's position */
	}
	if (schema < 3) {
		c.pause_ok = c.live = "";
		c.revoked = "FALSE";
		c.read_more = "NULL, NULL, '', NULL, NULL";
		c.read_lost = "NULL";
		c.status_more = "NULL, '', NULL";
	}
	if (schema < 2) {
		c.exit_set = "";
		c.status_exit = "NULL, NULL";
	}
	return c;
}
#undef ISO1

void lease_sql_render(struct lease_sql *s, const char *table)
{
	s->choose_on = s->choose_lost = false;
	s->choose_err[0] = '\0';
	lease_sql_render_schema(s, table, LEASE_ROWS_SCHEMA);
	(void)lease_sql_sibling(table, "_standby", s->standby, sizeof(s->standby));
	s->older = 0;
	s->older_said = false;
	s->hint_name[0] = s->hint_db[0] = '\0';
}

bool lease_sql_older(struct lease_sql *s, char *msg, size_t msglen)
{
	if (!s->older || s->older_said)
		return false;
	s->older_said = true;
	snprintf(msg, msglen,
		 "lease table %s has the columns of schema %d, older than this leaderrun's %d: leases run as "
		 "before, without --slots above 1%s, the run history and the fence; 'leaderrun --init' upgrades "
		 "it in place (or sql/upgrade-*.sql)",
		 s->table, s->older, LEASE_SCHEMA, s->older < 3 ? ", --release's revocation, --pause, --once-per" : "");
	return true;
}

int lease_sql_sibling(const char *table, const char *suffix, char *out, size_t len)
{
	const char *dot = strchr(table, '.');
	const char *base = dot ? dot + 1 : table;
	size_t n = strlen(base);

	if (n > 6 && strcmp(base + n - 6, "_lease") == 0)
		n -= 6;
	snprintf(out, len, "%.*s%.*s%s", dot ? (int)(dot - table + 1) : 0, table, (int)n, base, suffix);
	return n + strlen(suffix) > 64 ? -1 : 0;
}

/* The fence's names for the statements (stmts.def says which is which). */
struct fence_names {
	char fu[65], lu[65], fdb[68]; /* names of at most 64 (lease_sql_sibling), 'DB' */
};

/* TABLE's sibling named with SUFFIX, quoted. Names too long were refused
 * with the options (options_names.c). */
static void fence_quoted(const char *table, const char *suffix, char *out, size_t len)
{
	char name[LEASE_TABLE_MAX + 16];

	(void)lease_sql_sibling(table, suffix, name, sizeof(name));
	lease_sql_quote_table(out, len, name);
}

static void fence_names_of(struct lease_sql *s, const char *table, struct fence_names *n)
{
	static const char *const suffix[FENCE_ROUTINES] = {"_fence", "_fence_slot", "_fence_end", "_fence_move"};
	const char *dot = strchr(table, '.');

	snprintf(n->lu, sizeof(n->lu), "%.64s", dot ? dot + 1 : table);
	for (int k = 0; k < FENCE_ROUTINES; k++)
		fence_quoted(table, suffix[k], s->fence_routine[k], sizeof(s->fence_routine[k]));
	(void)lease_sql_sibling(table, "_fence", s->fence, sizeof(s->fence));
	dot = strchr(s->fence, '.');
	snprintf(n->fu, sizeof(n->fu), "%.64s", dot ? dot + 1 : s->fence);
	if (dot) /* a database's name has at most 64 characters (lease_table_validate) */
		snprintf(n->fdb, sizeof(n->fdb), "'%.*s'", (int)(dot - s->fence > 64 ? 64 : dot - s->fence), s->fence);
	else
		snprintf(n->fdb, sizeof(n->fdb), "DATABASE()");
}

void lease_sql_render_schema(struct lease_sql *s, const char *table, int schema)
{
	char t[LEASE_TABLE_MAX + 8];
	struct cols c = cols_of(schema);
	struct fence_names fn;
	const char *f = s->fence_routine[FENCE_R_FENCE], *fs = s->fence_routine[FENCE_R_SLOT],
		   *fe = s->fence_routine[FENCE_R_END], *fm = s->fence_routine[FENCE_R_MOVE];
	const char *fu = fn.fu, *lu = fn.lu, *fdb = fn.fdb;

	if (table != s->table) /* lease_adapt renders again from its own copy */
		snprintf(s->table, sizeof(s->table), "%s", table);
	s->schema = schema;
	if (s->choose_on) {
		c.choose = s->choose;
		c.choose_read = s->choose_read;
	}
	lease_sql_quote_table(t, sizeof(t), table);
	fence_names_of(s, table, &fn);
	/* Each LEASE_STMT of stmts.def, from t and c; one that the schema
	 * cannot hold is left empty (lease_refuse turns its feature down). */
#define LEASE_STMT(id, member, since, params, columns, ...)                                                            \
	STMT_RENDER(s, member, __VA_ARGS__)                                                                            \
	if (schema < (since))                                                                                          \
		s->member[0] = '\0';
#define HISTORY_STMT(...)
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
}

void lease_hint_name(struct lease_sql *s, const char *table, const char *lease)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const char *dot = strchr(table, '.');
	const char *parts[] = {dot ? dot + 1 : table, lease};

	/* FNV-1a of both names, NUL included: MySQL limits lock names to 64
	 * characters, lease names go to 191. */
	for (int k = 0; k < 2; k++)
		for (const unsigned char *p = (const unsigned char *)parts[k];; p++) {
			h ^= *p;
			h *= UINT64_C(0x100000001b3);
			if (!*p)
				break;
		}
	snprintf(s->hint_name, sizeof(s->hint_name), "leaderrun:%016llx", (unsigned long long)h);
	/* GET_LOCK names are server-wide, and a lease of one name in two
	 * databases of one server would share a hint: a follower blocked on
	 * the other database's holder until the expiry it had read (issue
	 * 25). So the database goes into the name too, as the server sees
	 * it: the one of DB.TABLE, or else DATABASE(), which is what the
	 * unqualified table resolves to (the DSN may name none, and option
	 * files choose it). The server hashes it inside the hint's own
	 * statement: no round trip more. The name is validated: no quote can
	 * occur inside. */
	if (dot)
		snprintf(s->hint_db, sizeof(s->hint_db), "'%.*s'", (int)(dot - table), table);
	else
		snprintf(s->hint_db, sizeof(s->hint_db), "DATABASE()");
}

enum lease_outcome lease_outcome_of(enum db_status st, uint64_t matched, int is_acquire)
{
	if (st != DB_OK)
		/* A deadlock or lock wait means another node's compare-and-set
		 * won the row: for an acquire that is "busy", for a renew it is
		 * an error to retry (the row decides on the retry). */
		return st == DB_CONFLICT && is_acquire ? LEASE_BUSY : LEASE_ERROR;
	if (matched == 1)
		return LEASE_OK;
	if (matched == 0)
		return is_acquire ? LEASE_BUSY : LEASE_LOST;
	/* name is the primary key: more than one row cannot match. */
	return LEASE_ERROR;
}

int64_t lease_slot_of(int64_t now_us, int64_t period_us)
{
	/* As the server computes it: (now + period/2) DIV period * period. */
	return (now_us + period_us / 2) / period_us * period_us;
}

/* A standby X chosen by --release --to for the lease row O's term (O:
 * "" or "l."), the choice still running: made in the term the row holds
 * (the next term spends it), and never past that term's end plus
 * CHOOSE_WINDOW_S (the row is free, so expires_at is that end). */
static void choose_chosen(char *out, size_t len, const char *x, const char *o)
{
	snprintf(
	    out, len,
	    "(%s.chosen_term = %sterm AND %s.chosen_until > UTC_TIMESTAMP(6) AND %sexpires_at + INTERVAL %d SECOND > "
	    "UTC_TIMESTAMP(6))",
	    x, o, x, o, CHOOSE_WINDOW_S);
}

/* This candidate's claims: the standbys' table T (quoted), its standby
 * LOCK, its --priority, and how long a priority claims (CLAIM_US). */
struct choose_claim {
	const char *t, *lock;
	int priority;
	long long claim_us;
};

/* The condition on a standby S that keeps a free lease from this
 * candidate (choose.h); O, the lease row's qualifier ("" or "l."). The
 * table is anybody's to write (sql/grants.sql): no column of S may stretch
 * a claim. A priority claims only from the moment the lease came free (its
 * expires_at, by the server's clock; never S's since), and only within
 * --priority's range; a choice, as choose_chosen says. A row dated in the
 * future claims nothing. */
static bool choose_cond(char *out, size_t len, const struct choose_claim *c, const char *o)
{
	const char *t = c->t, *lock = c->lock;
	int priority = c->priority;
	long long claim_us = c->claim_us;
	char chosen_s[200], chosen_m[200];
	int n;

	choose_chosen(chosen_s, sizeof(chosen_s), "s", o);
	choose_chosen(chosen_m, sizeof(chosen_m), "m", o);
	n = snprintf(out, len,
		     "s.lease = %sname AND s.lock_name <> '%s' AND IS_USED_LOCK(s.lock_name) IS NOT NULL AND "
		     "s.since <= UTC_TIMESTAMP(6) AND (%s OR "
		     "(s.priority > %d AND s.priority <= %d AND s.healthy AND "
		     "%sexpires_at + INTERVAL %lld MICROSECOND > UTC_TIMESTAMP(6) AND NOT EXISTS "
		     "(SELECT 1 FROM %s m WHERE m.lease = %sname AND m.lock_name = '%s' AND %s)))",
		     o, lock, chosen_s, priority, CHOOSE_PRIORITY_MAX, o, claim_us, t, o, lock, chosen_m);
	return n > 0 && (size_t)n < len;
}

/* The read's columns of the claims (stmts.def, READ) into OUT: RD, the
 * condition above on the row l. */
static bool choose_read_cols(char *out, size_t len, const struct choose_claim *c, const char *rd)
{
	const char *t = c->t, *lock = c->lock;
	int priority = c->priority;
	long long claim_us = c->claim_us;
	char chosen_s[200], chosen_c[200];
	int n;

	choose_chosen(chosen_s, sizeof(chosen_s), "s", "l.");
	choose_chosen(chosen_c, sizeof(chosen_c), "c", "l.");
	/* How long the row is another's still: a chosen one's to the
	 * choice's end, a favourite's to its claim's end. */
	n = snprintf(
	    out, len,
	    "(SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MAX(IF(%s, LEAST(s.chosen_until, l.expires_at + "
	    "INTERVAL %d SECOND), l.expires_at + INTERVAL %lld MICROSECOND))) FROM %s s WHERE %s), "
	    "(SELECT MAX(h.priority) FROM %s h WHERE h.lease = l.name AND h.holder = l.holder AND "
	    "h.priority BETWEEN %d AND %d AND IS_USED_LOCK(h.lock_name) IS NOT NULL), "
	    /* The waiter this one waits behind: the lowest priority
	     * above its own, of the live, healthy ones that do not
	     * hold the lease. */
	    "(SELECT a.lock_name FROM %s a WHERE a.lease = l.name AND a.lock_name <> '%s' AND a.priority > %d "
	    "AND a.priority <= %d AND a.healthy AND a.since <= UTC_TIMESTAMP(6) AND a.holder <> l.holder AND "
	    "IS_USED_LOCK(a.lock_name) IS NOT NULL ORDER BY a.priority, a.lock_name LIMIT 1), "
	    "(SELECT COUNT(*) > 0 FROM %s c WHERE c.lease = l.name AND c.lock_name <> '%s' AND %s AND "
	    "IS_USED_LOCK(c.lock_name) IS NOT NULL)",
	    chosen_s, CHOOSE_WINDOW_S, claim_us, t, rd, t, -CHOOSE_PRIORITY_MAX, CHOOSE_PRIORITY_MAX, t, lock, priority,
	    CHOOSE_PRIORITY_MAX, t, lock, chosen_c);
	return n > 0 && (size_t)n < len;
}

void choose_render(struct lease_sql *sql, const char *lock, int priority, int64_t claim_us)
{
	char t[LEASE_TABLE_MAX + 24], acq[1400], rd[1400];
	const struct choose_claim c = {t, lock, priority, (long long)claim_us};
	int n1;

	lease_sql_quote_table(t, sizeof(t), sql->standby);
	if (!choose_cond(acq, sizeof(acq), &c, "") || !choose_cond(rd, sizeof(rd), &c, "l."))
		return;
	n1 = snprintf(sql->choose, sizeof(sql->choose), " AND NOT EXISTS (SELECT 1 FROM %s s WHERE %s)", t, acq);
	/* A claim cut short would be another statement: none then. */
	if (n1 < 0 || (size_t)n1 >= sizeof(sql->choose) ||
	    !choose_read_cols(sql->choose_read, sizeof(sql->choose_read), &c, rd))
		return;
	sql->choose_on = true;
	lease_sql_render_schema(sql, sql->table, sql->schema);
}

void choose_off(struct lease_sql *sql)
{
	if (!sql->choose_on)
		return;
	sql->choose_on = false;
	lease_sql_render_schema(sql, sql->table, sql->schema);
}
