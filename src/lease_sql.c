/* The lease statements' text, name validation and the reading of their
 * results: the pure half of the protocol (lease.c runs it). */
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

static void quote_table(char *out, size_t len, const char *table)
{
	const char *dot = strchr(table, '.');

	/* The name was validated, so backticks cannot occur inside it. */
	if (dot)
		snprintf(out, len, "`%.*s`.`%s`", (int)(dot - table), table, dot + 1);
	else
		snprintf(out, len, "`%s`", table);
}

/* Microseconds since the Unix epoch of a DATETIME(6) column, by pure
 * arithmetic on the value (UNIX_TIMESTAMP() would read it in the session's
 * time zone). */
#define EPOCH_US(col) "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " col ")"
#define ISO(col)      "DATE_FORMAT(" col ", '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')"

/* What the statements name, by the lease table's schema: a column, or
 * what the column's absence means (no slots: every lease is slot 0 of one;
 * schema 1 and 2: nothing revoked, paused or once-per). The slot and the
 * count stay parameters ("0=?", "1=?"), so that the calls are the same for
 * every schema. Arguments of snprintf, not formats: one '%' each. */
struct cols {
	const char *slot, *slots, *order, *pause_ok, *live, *revoked, *exit_set, *read_more, *status_exit, *status_more;
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
	    .status_exit = "last_exit, " ISO1("finished_at"),
	    .status_more =
		"IF(paused_until > UTC_TIMESTAMP(6), " ISO1("paused_until") ", NULL), paused_by, " ISO1("last_slot"),
	};

	if (schema < 5) {
		c.slot = "0";
		c.slots = "1";
		c.order = "name"; /* ORDER BY 0 would be a column's position */
	}
	if (schema < 3) {
		c.pause_ok = c.live = "";
		c.revoked = "FALSE";
		c.read_more = "NULL, NULL, '', NULL, NULL";
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
	lease_sql_render_schema(s, table, LEASE_ROWS_SCHEMA);
	s->warned = false;
	s->hint_name[0] = s->hint_db[0] = '\0';
}

void lease_sql_render_schema(struct lease_sql *s, const char *table, int schema)
{
	char t[LEASE_TABLE_MAX + 8];
	struct cols c = cols_of(schema);

	if (table != s->table) /* lease_adapt renders again from its own copy */
		snprintf(s->table, sizeof(s->table), "%s", table);
	s->schema = schema;
	quote_table(t, sizeof(t), table);
	/* SQL reads best one clause a line. */
	/* clang-format off */
	/* A paused lease is acquired by nobody; a revoked slot stays held
	 * until its holder releases it or it expires, so the acquire needs no
	 * word about revocation. Every contender names the slot count it runs
	 * with: a row keeps the count in force, and a contender with another
	 * one matches nothing. On an older table (schema < 5) the statements
	 * are those of the builds of that schema, which contend on it: the
	 * compare-and-sets on expires_at, holder and term are the same. */
#define ACQUIRE_SET \
	"holder=?, term=LAST_INSERT_ID(term+1), acquired_at=UTC_TIMESTAMP(6), renewed_at=UTC_TIMESTAMP(6), " \
	"expires_at=UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"
#define ACQUIRE_WHERE \
	"WHERE name=? AND %s=? AND %s=? AND expires_at <= UTC_TIMESTAMP(6)%s AND @@global.read_only = 0"
	snprintf(s->acquire, sizeof(s->acquire), "UPDATE %s SET " ACQUIRE_SET " " ACQUIRE_WHERE, t, c.slot, c.slots,
		 c.pause_ok);
	/* slot_term comes first: it is the new term whether the server
	 * assigns left to right (MySQL, MariaDB) or all at once (MariaDB's
	 * SIMULTANEOUS_ASSIGNMENT mode). Schema 3 and later. */
	snprintf(s->acquire_slot, sizeof(s->acquire_slot),
		 "UPDATE %s SET slot_term=term+1, " ACQUIRE_SET ", "
		 "last_slot='1970-01-01 00:00:00' + INTERVAL ? MICROSECOND " ACQUIRE_WHERE " "
		 "AND (last_slot IS NULL OR last_slot < '1970-01-01 00:00:00' + INTERVAL ? MICROSECOND)",
		 t, c.slot, c.slots, c.pause_ok);
#undef ACQUIRE_SET
#undef ACQUIRE_WHERE
	/* A revoked term renews no more; lease_renew asks why (renew_why) only
	 * when no row matched. */
	snprintf(s->renew, sizeof(s->renew),
		 "UPDATE %s SET renewed_at=UTC_TIMESTAMP(6), expires_at=UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND "
		 "WHERE name=? AND %s=? AND holder=? AND term=? AND expires_at > UTC_TIMESTAMP(6)%s "
		 "AND @@global.read_only = 0",
		 t, c.slot, c.live);
	snprintf(s->renew_why, sizeof(s->renew_why),
		 "SELECT @@global.read_only, EXISTS(SELECT 1 FROM %s WHERE name=? AND %s=? AND holder=? AND term=? "
		 "AND %s AND expires_at > UTC_TIMESTAMP(6))",
		 t, c.slot, c.revoked);
	/* GREATEST: with --min-hold the lease stays taken until acquisition +
	 * min-hold, so a host whose cron fired late skips instead of running
	 * the job again; but not after a revocation, whose point is to hand
	 * the lease on as soon as the command is dead. Schema 1 records no
	 * exit (lease_release leaves its parameter out). */
	snprintf(s->release, sizeof(s->release),
		 "UPDATE %s SET expires_at=GREATEST(UTC_TIMESTAMP(6), IF(%s, UTC_TIMESTAMP(6), "
		 "acquired_at + INTERVAL ? MICROSECOND))%s "
		 "WHERE name=? AND %s=? AND holder=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t, c.revoked, c.exit_set, c.slot);
	/* What a contender that did not acquire needs to know, a row a slot:
	 * the slot count in force, whom it waits for and until when, whether
	 * the lease is paused, and which --once-per slot the server's clock is
	 * in now (the parameters are half the period, the period and the
	 * period again; 0 gives NULL). */
	snprintf(s->read, sizeof(s->read),
		 "SELECT %s, %s, holder, term, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at), "
		 "@@global.read_only, " ISO("expires_at") ", %s, "
		 "(" EPOCH_US("UTC_TIMESTAMP(6)") " + ?) DIV NULLIF(?, 0) * ? "
		 "FROM %s WHERE name=? ORDER BY %s",
		 c.slot, c.slots, c.read_more, t, c.order);
	/* Before schema 5 the row is the name's alone (lease_insert leaves
	 * the slot's parameters out). */
	if (schema < 5)
		snprintf(s->insert, sizeof(s->insert), "INSERT IGNORE INTO %s (name) VALUES (?)", t);
	else
		snprintf(s->insert, sizeof(s->insert), "INSERT IGNORE INTO %s (name, slot, slots) VALUES (?, ?, ?)",
			 t);
	/* A change of the slot count (no slot held): every row of the lease,
	 * the unused ones too, takes the new count, and slot 0's pause (every
	 * row has had it since its --pause) reaches the new rows. Rows are
	 * never deleted, so a slot that comes back keeps its terms. A row
	 * past the count expires at the end of time: an older leaderrun, whose
	 * acquire names no slot, matches the one-slot lease's row alone; one
	 * that comes back into the count is free again. */
	snprintf(s->slots_set, sizeof(s->slots_set),
		 "UPDATE %s a JOIN %s b ON b.name = a.name AND b.slot = 0 "
		 "SET a.expires_at = IF(a.slot >= ?, '9999-12-31 23:59:59', "
		 "IF(a.expires_at > '9000-01-01', '1970-01-01 00:00:00', a.expires_at)), "
		 "a.slots=?, a.paused_until=b.paused_until, a.paused_by=b.paused_by WHERE a.name=?",
		 t, t);
	/* Locks the lease's rows, and the gaps between them, for that change:
	 * an acquire or an insert of another contender waits for its commit.
	 * Held: a slot within the count, unexpired. */
	snprintf(s->lock_rows, sizeof(s->lock_rows),
		 "SELECT COUNT(*), COALESCE(SUM(expires_at > UTC_TIMESTAMP(6) AND slot < slots), 0), "
		 "COALESCE(MIN(slots), 0), COALESCE(MAX(slots), 0) FROM %s WHERE name=? FOR UPDATE",
		 t);
	if (schema < 5)
		s->slots_set[0] = s->lock_rows[0] = '\0'; /* one slot: never changed */
	/* Keep in step with sql/leaderrun.sql; a unit test compares them. */
	snprintf(s->create, sizeof(s->create),
		 "CREATE TABLE IF NOT EXISTS %s (\n"
		 "  name         VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n"
		 "  slot         SMALLINT UNSIGNED NOT NULL DEFAULT 0,\n"
		 "  slots        SMALLINT UNSIGNED NOT NULL DEFAULT 1,\n"
		 "  holder       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n"
		 "  term         BIGINT UNSIGNED NOT NULL DEFAULT 0,\n"
		 "  acquired_at  DATETIME(6) NULL,\n"
		 "  renewed_at   DATETIME(6) NULL,\n"
		 "  expires_at   DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',\n"
		 "  last_exit    INT NULL,\n"
		 "  finished_at  DATETIME(6) NULL,\n"
		 "  revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0,\n"
		 "  paused_until DATETIME(6) NULL,\n"
		 "  paused_by    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n"
		 "  last_slot    DATETIME(6) NULL,\n"
		 "  slot_term    BIGINT UNSIGNED NULL,\n"
		 "  PRIMARY KEY (name, slot)\n"
		 ") ENGINE=InnoDB",
		 t);
	/* The rows past the count in force are kept (their terms), not shown. */
#define STATUS_COLUMNS \
	"name, holder, term, expires_at > UTC_TIMESTAMP(6), " \
	"TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at), " \
	ISO("expires_at") ", " ISO("renewed_at") ", " ISO("acquired_at") ", " \
	"%s, " ISO("UTC_TIMESTAMP(6)") ", " \
	"expires_at > UTC_TIMESTAMP(6) AND %s, %s, %s, %s"
	snprintf(s->status, sizeof(s->status),
		 "SELECT " STATUS_COLUMNS " FROM %s WHERE %s < %s ORDER BY name, %s", c.status_exit, c.revoked,
		 c.status_more, c.slot, c.slots, t, c.slot, c.slots, c.order);
	snprintf(s->status_one, sizeof(s->status_one),
		 "SELECT " STATUS_COLUMNS " FROM %s WHERE name=? AND %s < %s ORDER BY %s", c.status_exit, c.revoked,
		 c.status_more, c.slot, c.slots, t, c.slot, c.slots, c.order);
#undef STATUS_COLUMNS
	snprintf(s->force_release, sizeof(s->force_release),
		 "UPDATE %s SET expires_at=UTC_TIMESTAMP(6) "
		 "WHERE name=? AND %s=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t, c.slot);
	snprintf(s->revoke, sizeof(s->revoke),
		 "UPDATE %s SET revoked_term=term WHERE name=? AND %s=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t, c.slot);
	/* Far in the future, not NULL, stands for "until --resume": one
	 * comparison in the acquire serves both. A pause holds every slot. */
	snprintf(s->pause, sizeof(s->pause),
		 "UPDATE %s SET paused_until=IF(? < 0, '9999-12-31 23:59:59', UTC_TIMESTAMP(6) + INTERVAL ? "
		 "MICROSECOND), paused_by=? WHERE name=?",
		 t);
	snprintf(s->resume, sizeof(s->resume), "UPDATE %s SET paused_until=NULL, paused_by='' WHERE name=?", t);
	if (schema < 3)
		s->acquire_slot[0] = s->revoke[0] = s->pause[0] = s->resume[0] = '\0'; /* lease_feature refuses */
	/* A revoked term is still held until its command is dead, but its
	 * critical steps must not begin: --check says no. */
	snprintf(s->check, sizeof(s->check),
		 "SELECT COUNT(*) FROM %s WHERE name=? AND %s=? AND holder=? AND term=? "
		 "AND expires_at > UTC_TIMESTAMP(6)%s",
		 t, c.slot, c.live);
	/* Which schema a table has: 2 if it has last_exit, 3 if revoked_term,
	 * 5 if slots; no column at all: no such table. */
	snprintf(s->columns, sizeof(s->columns),
		 "SELECT COALESCE(SUM(COLUMN_NAME = 'last_exit'), 0), COALESCE(SUM(COLUMN_NAME = 'revoked_term'), 0), "
		 "COALESCE(SUM(COLUMN_NAME = 'slots'), 0), COUNT(*) "
		 "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=COALESCE(?, DATABASE()) AND TABLE_NAME=?");
	/* clang-format on */
	/* Keep in step with sql/upgrade-*.sql; a unit test compares them.
	 * upgrade[v - 1] takes the lease table from schema v to v + 1; schema
	 * 4 added the history's table only, so step 3 has nothing here. */
	snprintf(s->upgrade[0], sizeof(s->upgrade[0]),
		 "ALTER TABLE %s\n"
		 "  ADD COLUMN last_exit   INT NULL,\n"
		 "  ADD COLUMN finished_at DATETIME(6) NULL",
		 t);
	snprintf(
	    s->upgrade[1], sizeof(s->upgrade[1]),
	    "ALTER TABLE %s\n"
	    "  ADD COLUMN revoked_term BIGINT UNSIGNED NOT NULL DEFAULT 0,\n"
	    "  ADD COLUMN paused_until DATETIME(6) NULL,\n"
	    "  ADD COLUMN paused_by    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n"
	    "  ADD COLUMN last_slot    DATETIME(6) NULL,\n"
	    "  ADD COLUMN slot_term    BIGINT UNSIGNED NULL",
	    t);
	s->upgrade[2][0] = '\0';
	snprintf(s->upgrade[3], sizeof(s->upgrade[3]),
		 "ALTER TABLE %s\n"
		 "  ADD COLUMN slot  SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER name,\n"
		 "  ADD COLUMN slots SMALLINT UNSIGNED NOT NULL DEFAULT 1 AFTER slot,\n"
		 "  DROP PRIMARY KEY,\n"
		 "  ADD PRIMARY KEY (name, slot)",
		 t);
}
#undef ISO
#undef EPOCH_US

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
