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

void lease_sql_render(struct lease_sql *s, const char *table)
{
	char t[LEASE_TABLE_MAX + 8];

	quote_table(t, sizeof(t), table);
	/* SQL reads best one clause a line. */
	/* clang-format off */
	/* Both acquires name schema-5 columns (slots), so a table that --init
	 * has not upgraded fails at once with "unknown column" (exit 78), not
	 * at the first use of a new feature. A paused lease is acquired by
	 * nobody; a revoked slot stays held until its holder releases it or
	 * it expires, so the acquire needs no word about revocation. Every
	 * contender names the slot count it runs with: a row keeps the count
	 * in force, and a contender with another one matches nothing. */
#define ACQUIRE_SET \
	"holder=?, term=LAST_INSERT_ID(term+1), acquired_at=UTC_TIMESTAMP(6), renewed_at=UTC_TIMESTAMP(6), " \
	"expires_at=UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND"
#define ACQUIRE_WHERE \
	"WHERE name=? AND slot=? AND slots=? AND expires_at <= UTC_TIMESTAMP(6) " \
	"AND (paused_until IS NULL OR paused_until <= UTC_TIMESTAMP(6)) AND @@global.read_only = 0"
	snprintf(s->acquire, sizeof(s->acquire), "UPDATE %s SET " ACQUIRE_SET " " ACQUIRE_WHERE, t);
	/* slot_term comes first: it is the new term whether the server
	 * assigns left to right (MySQL, MariaDB) or all at once (MariaDB's
	 * SIMULTANEOUS_ASSIGNMENT mode). */
	snprintf(s->acquire_slot, sizeof(s->acquire_slot),
		 "UPDATE %s SET slot_term=term+1, " ACQUIRE_SET ", "
		 "last_slot='1970-01-01 00:00:00' + INTERVAL ? MICROSECOND " ACQUIRE_WHERE " "
		 "AND (last_slot IS NULL OR last_slot < '1970-01-01 00:00:00' + INTERVAL ? MICROSECOND)",
		 t);
#undef ACQUIRE_SET
#undef ACQUIRE_WHERE
	/* A revoked term renews no more; lease_renew asks why (renew_why) only
	 * when no row matched. */
	snprintf(s->renew, sizeof(s->renew),
		 "UPDATE %s SET renewed_at=UTC_TIMESTAMP(6), expires_at=UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND "
		 "WHERE name=? AND slot=? AND holder=? AND term=? AND expires_at > UTC_TIMESTAMP(6) "
		 "AND revoked_term <> term AND @@global.read_only = 0",
		 t);
	snprintf(s->renew_why, sizeof(s->renew_why),
		 "SELECT @@global.read_only, EXISTS(SELECT 1 FROM %s WHERE name=? AND slot=? AND holder=? AND term=? "
		 "AND revoked_term = term AND expires_at > UTC_TIMESTAMP(6))",
		 t);
	/* GREATEST: with --min-hold the lease stays taken until acquisition +
	 * min-hold, so a host whose cron fired late skips instead of running
	 * the job again; but not after a revocation, whose point is to hand
	 * the lease on as soon as the command is dead. */
	snprintf(s->release, sizeof(s->release),
		 "UPDATE %s SET expires_at=GREATEST(UTC_TIMESTAMP(6), IF(revoked_term = term, UTC_TIMESTAMP(6), "
		 "acquired_at + INTERVAL ? MICROSECOND)), last_exit=?, finished_at=UTC_TIMESTAMP(6) "
		 "WHERE name=? AND slot=? AND holder=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t);
	/* What a contender that did not acquire needs to know, a row a slot:
	 * the slot count in force, whom it waits for and until when, whether
	 * the lease is paused, and which --once-per slot the server's clock is
	 * in now (the parameters are half the period, the period and the
	 * period again; 0 gives NULL). */
	snprintf(s->read, sizeof(s->read),
		 "SELECT slot, slots, holder, term, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at), "
		 "@@global.read_only, " ISO("expires_at") ", "
		 "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), paused_until), " ISO("paused_until") ", paused_by, "
		 EPOCH_US("last_slot") ", slot_term, "
		 "(" EPOCH_US("UTC_TIMESTAMP(6)") " + ?) DIV NULLIF(?, 0) * ? "
		 "FROM %s WHERE name=? ORDER BY slot",
		 t);
	snprintf(s->insert, sizeof(s->insert), "INSERT IGNORE INTO %s (name, slot, slots) VALUES (?, ?, ?)", t);
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
	"last_exit, " ISO("finished_at") ", " ISO("UTC_TIMESTAMP(6)") ", " \
	"expires_at > UTC_TIMESTAMP(6) AND revoked_term = term, " \
	"IF(paused_until > UTC_TIMESTAMP(6), " ISO("paused_until") ", NULL), paused_by, " ISO("last_slot") ", " \
	"slot, slots"
	snprintf(s->status, sizeof(s->status),
		 "SELECT " STATUS_COLUMNS " FROM %s WHERE slot < slots ORDER BY name, slot", t);
	snprintf(s->status_one, sizeof(s->status_one),
		 "SELECT " STATUS_COLUMNS " FROM %s WHERE name=? AND slot < slots ORDER BY slot", t);
#undef STATUS_COLUMNS
	snprintf(s->force_release, sizeof(s->force_release),
		 "UPDATE %s SET expires_at=UTC_TIMESTAMP(6) "
		 "WHERE name=? AND slot=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t);
	snprintf(s->revoke, sizeof(s->revoke),
		 "UPDATE %s SET revoked_term=term WHERE name=? AND slot=? AND term=? AND expires_at > UTC_TIMESTAMP(6)",
		 t);
	/* Far in the future, not NULL, stands for "until --resume": one
	 * comparison in the acquire serves both. A pause holds every slot. */
	snprintf(s->pause, sizeof(s->pause),
		 "UPDATE %s SET paused_until=IF(? < 0, '9999-12-31 23:59:59', UTC_TIMESTAMP(6) + INTERVAL ? "
		 "MICROSECOND), paused_by=? WHERE name=?",
		 t);
	snprintf(s->resume, sizeof(s->resume), "UPDATE %s SET paused_until=NULL, paused_by='' WHERE name=?", t);
	/* A revoked term is still held until its command is dead, but its
	 * critical steps must not begin: --check says no. */
	snprintf(s->check, sizeof(s->check),
		 "SELECT COUNT(*) FROM %s WHERE name=? AND slot=? AND holder=? AND term=? "
		 "AND expires_at > UTC_TIMESTAMP(6) AND revoked_term <> term",
		 t);
	/* Which schema a table has: 2 if it has last_exit, 3 if revoked_term,
	 * 5 if slots. */
	snprintf(s->columns, sizeof(s->columns),
		 "SELECT COALESCE(SUM(COLUMN_NAME = 'last_exit'), 0), COALESCE(SUM(COLUMN_NAME = 'revoked_term'), 0), "
		 "COALESCE(SUM(COLUMN_NAME = 'slots'), 0) "
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
