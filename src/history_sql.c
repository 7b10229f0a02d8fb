#include "history_sql.h"

#include <stdio.h>
#include <string.h>

static void quote_table(char *out, size_t len, const char *table)
{
	const char *dot = strchr(table, '.');

	/* Validated names: no backtick can occur inside. */
	if (dot)
		snprintf(out, len, "`%.*s`.`%s`", (int)(dot - table), table, dot + 1);
	else
		snprintf(out, len, "`%s`", table);
}

#define ISO(col) "DATE_FORMAT(" col ", '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')"

void history_sql_render(struct history_sql *s, const char *history, const char *lease_table)
{
	char h[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 8];
	const char *dot = strchr(history, '.');

	quote_table(h, sizeof(h), history);
	quote_table(l, sizeof(l), lease_table);
	/* Keep in step with sql/upgrade-3-to-4.sql and sql/leaderrun.sql; a
	 * unit test compares them. */
	snprintf(s->create, sizeof(s->create),
		 "CREATE TABLE IF NOT EXISTS %s (\n"
		 "  lease       VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n"
		 "  slot        SMALLINT UNSIGNED NOT NULL DEFAULT 0,\n"
		 "  term        BIGINT UNSIGNED NOT NULL,\n"
		 "  holder      VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n"
		 "  host        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n"
		 "  started_at  DATETIME(6) NOT NULL,\n"
		 "  ended_at    DATETIME(6) NULL,\n"
		 "  outcome     VARCHAR(16) NOT NULL DEFAULT '',\n"
		 "  exit_status INT NULL,\n"
		 "  exit_signal INT NULL,\n"
		 "  PRIMARY KEY (lease, slot, term)\n"
		 ") ENGINE=InnoDB",
		 h);
	/* Schema 5: a run is one slot's term. Keep in step with
	 * sql/upgrade-4-to-5.sql. */
	snprintf(s->upgrade, sizeof(s->upgrade),
		 "ALTER TABLE %s\n"
		 "  ADD COLUMN slot SMALLINT UNSIGNED NOT NULL DEFAULT 0 AFTER lease,\n"
		 "  DROP PRIMARY KEY,\n"
		 "  ADD PRIMARY KEY (lease, slot, term)",
		 h);
	snprintf(s->exists, sizeof(s->exists),
		 "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=COALESCE(?, DATABASE()) AND "
		 "TABLE_NAME='%s'",
		 dot ? dot + 1 : history);
	/* When a write finds no table or no column: which one is older.
	 * The history sits next to the lease table, in its database. */
	{
		const char *ldot = strchr(lease_table, '.');
		char where[96];
		if (dot)
			snprintf(where, sizeof(where), "'%.*s'", (int)(dot - history), history);
		else
			snprintf(where, sizeof(where), "DATABASE()");
		snprintf(s->tables, sizeof(s->tables),
			 "SELECT 2 * (SELECT COUNT(*) > 0 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=%s AND "
			 "TABLE_NAME='%s' AND COLUMN_NAME='slots') + (SELECT COUNT(*) > 0 FROM "
			 "information_schema.TABLES WHERE TABLE_SCHEMA=%s AND TABLE_NAME='%s')",
			 where, ldot ? ldot + 1 : lease_table, where, dot ? dot + 1 : history);
	}
	/* The start is the acquire's, by the server's clock: the insert goes
	 * out a moment later, and says how much later (the parameter). */
	snprintf(s->insert, sizeof(s->insert),
		 "INSERT INTO %s (lease, slot, term, holder, host, started_at) "
		 "VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)",
		 h);
	/* A run whose start could not be written is recorded whole at its end. */
	snprintf(
	    s->insert_closed, sizeof(s->insert_closed),
	    "INSERT INTO %s (lease, slot, term, holder, host, started_at, ended_at, outcome, exit_status, "
	    "exit_signal) VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), ?, ?, "
	    "?)",
	    h);
	/* Retention: terms of one slot only grow, so the runs older than
	 * the last N are those N terms and more behind this one (with
	 * several slots, the last N of each slot). DELETE on the history
	 * only; lease rows are never deleted. */
	snprintf(s->prune, sizeof(s->prune), "DELETE FROM %s WHERE lease=? AND slot=? AND term <= ?", h);
	snprintf(s->close, sizeof(s->close),
		 "UPDATE %s SET ended_at=UTC_TIMESTAMP(6), outcome=?, exit_status=?, exit_signal=? "
		 "WHERE lease=? AND slot=? AND term=? AND holder=? AND ended_at IS NULL",
		 h);
	/* An open run is running while its term holds the lease unexpired;
	 * otherwise its holder vanished (the row moved on, or expired). */
	/* clang-format off */
	snprintf(s->list, sizeof(s->list),
		 "SELECT h.slot, h.term, h.holder, h.host, " ISO("h.started_at") ", " ISO("h.ended_at") ", "
		 "CASE WHEN h.ended_at IS NOT NULL THEN h.outcome "
		 "WHEN l.term = h.term AND l.holder = h.holder AND l.expires_at > UTC_TIMESTAMP(6) THEN 'running' "
		 "ELSE 'vanished' END, "
		 "h.exit_status, h.exit_signal, "
		 "TIMESTAMPDIFF(MICROSECOND, h.started_at, COALESCE(h.ended_at, "
		 "IF(l.term = h.term AND l.holder = h.holder, LEAST(l.expires_at, UTC_TIMESTAMP(6)), NULL))) "
		 "FROM %s h LEFT JOIN %s l ON l.name = h.lease AND l.slot = h.slot "
		 "WHERE h.lease=? ORDER BY h.started_at DESC, h.slot LIMIT ?",
		 h, l);
	/* clang-format on */
	snprintf(s->last_success, sizeof(s->last_success),
		 "SELECT lease, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', MAX(ended_at)) FROM %s "
		 "WHERE outcome='" HISTORY_EXITED "' AND exit_status=0 GROUP BY lease",
		 h);
}
