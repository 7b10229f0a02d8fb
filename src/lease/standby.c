/* The standbys' rows and locks (standby.h). The statements go as text:
 * values through sqltext (quoted literals), names are the options'
 * validated table names. */
#include "standby.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/sqltext.h"

void standby_lock_name(const char *table, const char *lease, const char *holder, char *out, size_t len)
{
	const char *parts[] = {table, lease, holder};
	uint64_t h = 14695981039346656037u; /* FNV-1a, 64 bits */

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const unsigned char *c = (const unsigned char *)parts[i];; c++) {
			h = (h ^ *c) * 1099511628211u;
			if (!*c)
				break;
		}
	snprintf(out, len, "leaderrun-standby:%016llx", (unsigned long long)h);
}

void standby_create_sql(const struct lease_sql *sql, char *out, size_t len)
{
	char t[LEASE_TABLE_MAX + 24];

	lease_sql_quote_table(t, sizeof(t), sql->standby);
	snprintf(out, len,
		 "CREATE TABLE IF NOT EXISTS %s ("
		 "lease VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
		 "holder VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, "
		 "host VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '', "
		 "since DATETIME(6) NOT NULL, healthy BOOLEAN NOT NULL DEFAULT TRUE, "
		 "lock_name VARCHAR(64) CHARACTER SET ascii NOT NULL, " STANDBY_CLAIMS_COLUMNS ", "
		 "PRIMARY KEY (lease, holder(191))) ENGINE=InnoDB",
		 t);
}

void standby_upgrade_sql(const struct lease_sql *sql, char *out, size_t len)
{
	char t[LEASE_TABLE_MAX + 24];

	lease_sql_quote_table(t, sizeof(t), sql->standby);
	snprintf(out, len,
		 "ALTER TABLE %s ADD COLUMN priority INT NOT NULL DEFAULT 0, ADD COLUMN chosen_until DATETIME(6) NULL, "
		 "ADD COLUMN chosen_term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
		 "ADD COLUMN preempt_term BIGINT UNSIGNED NOT NULL DEFAULT 0, "
		 "ADD COLUMN spread BOOLEAN NOT NULL DEFAULT FALSE",
		 t);
}

enum db_status standby_register(struct db *db, const struct lease_sql *sql, const struct standby_reg *reg,
				struct db_err *err)
{
	char host[STANDBY_HOST_MAX + 1] = "", t[LEASE_TABLE_MAX + 24], q[2048];
	const struct db_value row[] = {{.type = DB_STR, .str = reg->lease}, {.type = DB_STR, .str = reg->holder},
				       {.type = DB_STR, .str = host},	    {.type = DB_I64, .i64 = reg->healthy},
				       {.type = DB_STR, .str = reg->lock},  {.type = DB_I64, .i64 = reg->priority},
				       {.type = DB_I64, .i64 = reg->spread}};
	const struct db_value dead[] = {{.type = DB_STR, .str = reg->lease}, {.type = DB_STR, .str = reg->holder}};
	size_t used = 0;
	int64_t got;
	enum db_status st;

	(void)gethostname(host, sizeof(host) - 1);
	lease_sql_quote_table(t, sizeof(t), sql->standby);
	/* The lock first: a row is never there without its lock. A second
	 * for it: a candidate waiting behind this one holds it for the
	 * moment of its statement (hint_wait_behind). */
	if (!sqltext_render(q, sizeof(q), &used,
			    &(struct db_call){.sql = "SELECT GET_LOCK(?, 1)", .params = &row[4], .nparams = 1}))
		return DB_ERROR;
	if ((st = db_query_int(db, q, &got, err)) != DB_OK)
		return st;
	used = 0;
	/* A choice made by --release --to stays: the chosen standby may
	 * write its row again (its health changed) while it is chosen. */
	if (!sqltext_append(q, sizeof(q), &used, "INSERT INTO %s (lease, holder, host, since, healthy, lock_name%s) ",
			    t, reg->claims ? ", priority, spread" : "") ||
	    !sqltext_render(
		q, sizeof(q), &used,
		&(struct db_call){
		    .sql = reg->claims ? "VALUES (?, ?, ?, UTC_TIMESTAMP(6), ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
					 "host = VALUES(host), since = VALUES(since), healthy = VALUES(healthy), "
					 "lock_name = VALUES(lock_name), priority = VALUES(priority), "
					 "spread = VALUES(spread)"
				       : "VALUES (?, ?, ?, UTC_TIMESTAMP(6), ?, ?) ON DUPLICATE KEY UPDATE host = "
					 "VALUES(host), since = VALUES(since), healthy = VALUES(healthy), lock_name = "
					 "VALUES(lock_name)",
		    .params = row,
		    .nparams = reg->claims ? 7 : 5}))
		return DB_ERROR;
	if ((st = db_query(db, q, err)) != DB_OK)
		return st;
	/* Rows whose lock nobody holds are the dead's: gone with their
	 * session. Pruned here, by the living, never by --status, which may
	 * read from a replica. */
	used = 0;
	if (!sqltext_append(q, sizeof(q), &used, "DELETE FROM %s ", t) ||
	    !sqltext_render(
		q, sizeof(q), &used,
		&(struct db_call){.sql = "WHERE lease = ? AND holder <> ? AND IS_USED_LOCK(lock_name) IS NULL",
				  .params = dead,
				  .nparams = 2}))
		return DB_ERROR;
	/* An account without DELETE leaves them: --status skips the dead. */
	st = db_query(db, q, err);
	return st == DB_DENIED ? DB_OK : st;
}

static void standby_text_row(void *arg, const char *const *c, unsigned n)
{
	const struct standby_each *l = arg;
	struct standby_row r;

	if (n < 5)
		return;
	memset(&r, 0, sizeof(r));
	snprintf(r.lease, sizeof(r.lease), "%s", c[0] ? c[0] : "");
	snprintf(r.holder, sizeof(r.holder), "%s", c[1] ? c[1] : "");
	snprintf(r.host, sizeof(r.host), "%s", c[2] ? c[2] : "");
	snprintf(r.since, sizeof(r.since), "%s", c[3] ? c[3] : "");
	r.healthy = c[4] && strcmp(c[4], "0") != 0;
	r.priority = n > 5 && c[5] ? atoi(c[5]) : 0;
	r.chosen = n > 6 && c[6] && strcmp(c[6], "0") != 0;
	l->on_row(l->ctx, &r);
}

/* The list's query; CLAIMS: with the columns of the claims. */
static bool standby_list_sql(const struct lease_sql *sql, const char *lease, bool claims, char *q, size_t len)
{
	char t[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 24];
	const struct db_value name = {.type = DB_STR, .str = lease};
	size_t used = 0;

	lease_sql_quote_table(t, sizeof(t), sql->standby);
	lease_sql_quote_table(l, sizeof(l), sql->table);
	/* Alive (its lock held), and not the lease's holder now: a standby
	 * that took the lease keeps its row and lock until it waits again. */
	return sqltext_append(q, len, &used,
			      "SELECT s.lease, s.holder, s.host, DATE_FORMAT(s.since, '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ'), "
			      "s.healthy%s%s%s FROM %s s WHERE IS_USED_LOCK(s.lock_name) IS NOT NULL AND NOT EXISTS "
			      "(SELECT 1 FROM %s x WHERE x.name = s.lease AND x.holder = s.holder AND x.expires_at > "
			      "UTC_TIMESTAMP(6))",
			      claims ? ", s.priority, s.chosen_until > UTC_TIMESTAMP(6) AND s.chosen_term = (SELECT "
				       "MAX(y.term) FROM "
				     : "",
			      claims ? l : "", claims ? " y WHERE y.name = s.lease)" : "", t, l) &&
	       (!lease ||
		sqltext_render(q, len, &used,
			       &(struct db_call){.sql = " AND s.lease = ?", .params = &name, .nparams = 1})) &&
	       sqltext_append(q, len, &used, " ORDER BY s.lease, %ss.since, s.holder",
			      claims ? "s.priority DESC, " : "");
}

enum db_status standby_list(struct db *db, const struct lease_sql *sql, const char *lease,
			    const struct standby_each *each, struct db_err *err)
{
	char q[2048];
	struct standby_each c = *each;
	enum db_status st;

	if (!standby_list_sql(sql, lease, true, q, sizeof(q)))
		return DB_ERROR;
	st = db_query_rows(db, q, &(struct db_rows){7, standby_text_row, &c}, err);
	/* A table of the build before the claims: listed without them. */
	if (st != DB_NO_TABLE || !standby_list_sql(sql, lease, false, q, sizeof(q)))
		return st;
	return db_query_rows(db, q, &(struct db_rows){5, standby_text_row, &c}, err);
}
