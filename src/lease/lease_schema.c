/* The lease table's schema: which columns it has, its creation and
 * upgrade by --init, and a run's fall-back to the statements of an older
 * table. */
#include <stdio.h>
#include <string.h>

#include "choose.h"
#include "lease.h"
#include "lease_int.h"

/* The schema of TABLE's columns, 1 to LEASE_ROWS_SCHEMA, into *SCHEMA;
 * 0 when there is no such table. */
static enum db_status lease_schema_of(struct db *db, const struct lease_sql *sql, const char *table, int *schema,
				      struct db_err *err)
{
	const char *dot = strchr(table, '.');
	char db_name[65] = "";
	struct db_value p[] = {{.type = DB_STR, .str = NULL}, {.type = DB_STR, .str = dot ? dot + 1 : table}};
	struct db_value c[] = {{.type = DB_I64}, {.type = DB_I64}, {.type = DB_I64}, {.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	if (dot) {
		snprintf(db_name, sizeof(db_name), "%.*s", (int)(dot - table), table);
		p[0].str = db_name;
	}
	*schema = 0;
	st = db_exec(db, &(struct db_call){STMT_COLUMNS, sql->columns, p, 2, c, 4, NULL, NULL, &r}, err);
	if (st == DB_OK && r.have_row && c[3].i64 > 0)
		*schema = c[2].i64 > 0 ? 5 : c[1].i64 > 0 ? 3 : c[0].i64 > 0 ? 2 : 1;
	return st;
}

enum db_status lease_table_schema(struct db *db, const struct lease_sql *sql, int *schema, struct db_err *err)
{
	return lease_schema_of(db, sql, sql->table, schema, err);
}

/* The DDL that takes the lease table from schema V to V + 1; "" when that
 * step changed the lease table not at all (schema 4 added the history's
 * table only). */
static const char *lease_upgrade_step(const struct lease_sql *sql, int v)
{
	switch (v) {
	case 1:
		return sql->upgrade_1_2;
	case 2:
		return sql->upgrade_2_3;
	case 4:
		return sql->upgrade_4_5;
	default:
		return "";
	}
}

enum db_status lease_create_table(struct db *db, const struct lease_sql *sql, const char *table, int *from,
				  struct db_err *err)
{
	enum db_status st;

	/* Look before creating: CREATE TABLE IF NOT EXISTS needs the CREATE
	 * privilege even when the table is there, and deploy
	 * scripts run --init on every start as the application's own user
	 * (sql/grants.sql). Two --init at once both create "if not exists". */
	st = lease_schema_of(db, sql, table, from, err);
	if (st != DB_OK || *from == 0)
		return st == DB_OK ? db_query(db, sql->create, err) : st;
	/* A table from an older leaderrun lacks some columns: add them in
	 * place, one schema step at a time, as sql/upgrade-*.sql do. */
	for (int v = *from; v < LEASE_ROWS_SCHEMA && st == DB_OK; v++)
		if (lease_upgrade_step(sql, v)[0])
			st = db_query(db, lease_upgrade_step(sql, v), err);
	return st;
}

/* A statement failed with "unknown column" (DB_NO_TABLE): the table may
 * be older than this build (a fleet that rolls its binaries
 * before --init). Then the statements are rendered again for its schema,
 * once, with one warning (lease_sql_older); true: try again. The statements of the older
 * schema are those its own builds run, so old and new builds on the table
 * exclude each other as builds of one version do. No statement prepared
 * on this connection goes stale: every statement whose text changes named
 * a column that the table lacks, and was never prepared. A run keeps the
 * schema it found: should --init upgrade the table meanwhile, its
 * statements still match (slot 0 of a one-slot lease) until it ends. */
static bool lease_adapt(struct db *db, struct lease_sql *sql, enum db_status st)
{
	struct db_err err;
	int schema;

	if (st != DB_NO_TABLE || sql->schema < LEASE_ROWS_SCHEMA || !db_connected(db))
		return false;
	if (lease_schema_of(db, sql, sql->table, &schema, &err) != DB_OK || schema == 0 || schema >= LEASE_ROWS_SCHEMA)
		return false;
	lease_sql_render_schema(sql, sql->table, schema);
	sql->older = schema;
	return true;
}

enum db_status lease_call(struct db *db, struct lease_sql *sql, lease_try_fn *try, const struct lease_req *q,
			  struct lease_res *r, struct db_err *err)
{
	/* A failed --status prepare called its ON_ROW for no row. */
	r->status = try(db, sql, q, r, err);
	/* The claims name the standbys' table and its columns of this
	 * build: without them (a database --init'ed by an older build, an
	 * account without SELECT on it) the statements go as before, and the
	 * run says so (choose_lost). A denial that is the lease table's own
	 * comes back from the retry. */
	if ((r->status == DB_NO_TABLE || r->status == DB_DENIED) && sql->choose_on && db_connected(db)) {
		choose_off(sql);
		sql->choose_lost = true;
		snprintf(sql->choose_err, sizeof(sql->choose_err), "%.*s", (int)sizeof(sql->choose_err) - 1, err->msg);
		r->status = try(db, sql, q, r, err);
	}
	if (lease_adapt(db, sql, r->status))
		r->status = try(db, sql, q, r, err);
	return r->status;
}
