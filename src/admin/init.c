/* --init: the lease table, the run history's, the fence and the standbys'
 * table, each created or upgraded only when it has to be, and what was done
 * said in one line (or, on a denial, which grant the failed step needed). */
#include "init.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "lease/lease.h"
#include "lease/standby.h"
#include "lease/stmt.h"
#include "report/history.h"
#include "report/log.h"
#include "run/runmode.h"

/* A table ("name" or "db.name"), or with COLUMN one of its columns. */
struct init_object {
	const char *table, *column;
};

/* Whether WHAT exists. */
static enum db_status init_has(struct db *db, const struct lease_sql *sql, const struct init_object *what, bool *yes,
			       struct db_err *err)
{
	const char *table = what->table, *column = what->column;
	const char *dot = strchr(table, '.');
	char schema[65] = "";
	struct db_value p[] = {
	    {.type = DB_STR, .str = NULL},
	    {.type = DB_STR, .str = dot ? dot + 1 : table},
	    {.type = DB_STR, .str = column},
	};
	struct db_value c[] = {{.type = DB_I64}};
	struct db_result r;
	enum db_status st;

	if (dot) {
		snprintf(schema, sizeof(schema), "%.*s", (int)(dot - table), table);
		p[0].str = schema;
	}
	if (column)
		st = db_exec(db, &(struct db_call){STMT_HAS_COLUMN, sql->has_column, p, 3, c, 1, NULL, NULL, &r}, err);
	else
		st = db_exec(db, &(struct db_call){STMT_HAS_TABLE, sql->has_table, p, 2, c, 1, NULL, NULL, &r}, err);
	*yes = st == DB_OK && r.have_row && c[0].i64 > 0;
	return st;
}

/* What --init found and changed, and on a denial what the failed step
 * needed: its privileges, on which table, and the file of sql/ that an
 * administrator can apply instead. */
struct init_report {
	int from; /* the lease table's schema: 0 none, 1 to LEASE_SCHEMA */
	bool history_made;
	const char *doing, *privilege, *table, *sql_file;
	char upgrades[64];
	char fence[LEASE_TABLE_MAX + 16];    /* the fence's table (schema 6) */
	struct lease_fence_init fi;	     /* what --init did to the fence, or why it could not */
	bool fence_step;		     /* a denial came from the fence's step: ERR says it all */
	char standbys[LEASE_TABLE_MAX + 16]; /* the standbys' table, when made (or upgraded) now */
	bool standbys_upgraded;		     /* given the claims' columns, not made */
};

/* ALTER TABLE needs CREATE and INSERT besides ALTER (the MySQL manual,
 * ALTER TABLE Statement); MariaDB asks the same. */
#define INIT_ALTER_PRIVILEGES "ALTER, CREATE and INSERT"

static void init_needs(struct init_report *r, const char *doing, const char *privilege, const char *table,
		       const char *sql_file)
{
	r->doing = doing;
	r->privilege = privilege;
	r->table = table;
	r->sql_file = sql_file;
}

/* The standbys' table (standby.h): optional, made when missing, by an
 * account that may; for one that may not, a warning, and --init succeeds:
 * --status then lists no standbys until an administrator runs it. */
static void init_standbys(struct db *db, const struct lease_sql *sql, struct init_report *r)
{
	char create[1024];
	struct db_err err;
	bool had = true;
	enum db_status st = init_has(db, sql, &(struct init_object){sql->standby, NULL}, &had, &err);

	if (st != DB_OK)
		return;
	if (had) {
		/* A table of the build before the claims (choose.h) gains
		 * their columns. */
		if (init_has(db, sql, &(struct init_object){sql->standby, "priority"}, &had, &err) != DB_OK || had)
			return;
		standby_upgrade_sql(sql, create, sizeof(create));
		st = db_query(db, create, &err);
		r->standbys_upgraded = st == DB_OK;
		if (st == DB_OK)
			snprintf(r->standbys, sizeof(r->standbys), "%s", sql->standby);
		else if (db_errno(db) != DBERR_DUP_FIELDNAME) /* another --init added them meanwhile */
			log_warn("--init: the standbys' table %s lacks --priority's columns (%s: %s); priorities and "
				 "switch-overs are not honoured until an account with ALTER on it runs --init",
				 sql->standby, dberr_name(st), err.msg);
		return;
	}
	standby_create_sql(sql, create, sizeof(create));
	st = db_query(db, create, &err);
	if (st == DB_OK)
		snprintf(r->standbys, sizeof(r->standbys), "%s", sql->standby);
	else
		log_warn("--init: no standbys' table %s (%s: %s); --status lists no standbys until an account with "
			 "CREATE on it runs --init",
			 sql->standby, dberr_name(st), err.msg);
}

/* The lease table and the run history's, each created or upgraded only
 * when it has to be: a current pair takes no DDL, and so no privilege
 * beyond those of sql/grants.sql. */
static enum db_status init_tables(struct db *db, const struct options *o, struct init_report *r, struct db_err *err)
{
	struct lease_sql sql;
	struct history_sql hsql;
	bool had_history, has_slot = true;
	enum db_status st;

	lease_sql_render(&sql, o->table);
	history_sql_render(&hsql, o->history_table, o->table);
	st = init_has(db, &sql, &(struct init_object){o->history_table, NULL}, &had_history, err);
	if (st == DB_OK && had_history)
		st = init_has(db, &sql, &(struct init_object){o->history_table, "slot"}, &has_slot, err);
	if (st == DB_OK)
		st = lease_create_table(db, &sql, o->table, &r->from, err);
	if (r->from == 0)
		init_needs(r, "creating the lease table", "CREATE", o->table, "sql/leaderrun.sql");
	else {
		snprintf(r->upgrades, sizeof(r->upgrades), "sql/upgrade-%d-to-%d.sql%s", r->from, r->from + 1,
			 r->from + 1 < LEASE_SCHEMA ? " and the later ones" : "");
		init_needs(r, "upgrading the lease table", INIT_ALTER_PRIVILEGES, o->table, r->upgrades);
	}
	if (st != DB_OK)
		return st;
	/* Schema 4: the run history's table, next to the lease table; schema
	 * 5: a history of schema 4 gains the slot in its key. */
	if (!had_history) {
		init_needs(r, "creating the run history's table", "CREATE", o->history_table, "sql/upgrade-3-to-4.sql");
		st = db_query(db, hsql.create, err);
	} else if (!has_slot) {
		init_needs(r, "upgrading the run history's table", INIT_ALTER_PRIVILEGES, o->history_table,
			   "sql/upgrade-4-to-5.sql");
		st = db_query(db, hsql.upgrade, err);
	}
	r->history_made = !had_history || !has_slot;

	/* Schemas 6 and 7: the fence, a table and procedures of its own. */
	if (st == DB_OK) {
		snprintf(r->fence, sizeof(r->fence), "%s", sql.fence);
		r->fence_step = true;
		st = lease_fence_init(db, &sql, &r->fi, err);
	}
	if (st == DB_OK)
		init_standbys(db, &sql, r);
	/* The lease table says 1, 2, 3 or 5; schema 4 was the history's, 6
	 * and 7 the fence's. */
	if (r->from == LEASE_ROWS_SCHEMA && had_history && !has_slot)
		r->from = 4;
	else if (r->from == 3 && had_history)
		r->from = 4;
	else if (r->from == LEASE_ROWS_SCHEMA && !r->history_made && r->fi.from > 0)
		r->from = r->fi.from;
	return st;
}

/* TABLE as "db.name": the DSN's database unless it names its own. */
static const char *init_qualified(const struct options *o, const char *table, char *buf, size_t len)
{
	if (strchr(table, '.') || !o->dsn.database)
		return table;
	snprintf(buf, len, "%s.%s", o->dsn.database, table);
	return buf;
}

static void init_say(const struct options *o, enum db_status st, const struct init_report *r, const char *err)
{
	char t[200], h[200], f[200];

	if (r->fi.warn[0])
		log_warn("--init: %s", r->fi.warn);
	if (st == DB_DENIED && r->fence_step)
		log_error("--init: access denied: %s", err);
	else if (st == DB_NO_TABLE && r->fence_step)
		log_error("--init: %s", err);
	else if (st == DB_DENIED)
		log_error("--init: access denied: %s needs %s on %s; run --init once as an administrator, or apply "
			  "%s by hand (%s)",
			  r->doing, r->privilege, init_qualified(o, r->table, t, sizeof(t)), r->sql_file, err);
	else if (st != DB_OK)
		log_error("--init: %s: %s", dberr_name(st), err);
	else if (r->from == 0)
		log_event(LOG_NOTICE, NULL,
			  "--init: table %s created (schema %d), with the run history's table %s and the fence %s",
			  init_qualified(o, o->table, t, sizeof(t)), LEASE_SCHEMA,
			  init_qualified(o, o->history_table, h, sizeof(h)), init_qualified(o, r->fence, f, sizeof(f)));
	else if (r->from < LEASE_SCHEMA)
		log_warn("table %s upgraded in place from schema %d to %d; every row and term kept", o->table, r->from,
			 LEASE_SCHEMA);
	else if (r->standbys[0] && !r->fi.done[0] && !r->history_made)
		log_event(LOG_NOTICE, NULL,
			  r->standbys_upgraded
			      ? "--init: table %s is current (schema %d); gave the standbys' table %s the "
				"columns of --priority"
			      : "--init: table %s is current (schema %d); made the standbys' table %s",
			  init_qualified(o, o->table, t, sizeof(t)), LEASE_SCHEMA,
			  init_qualified(o, r->standbys, h, sizeof(h)));
	else if (r->fi.done[0] && !r->history_made)
		log_event(LOG_NOTICE, NULL, "--init: table %s is current (schema %d); %s",
			  init_qualified(o, o->table, t, sizeof(t)), LEASE_SCHEMA, r->fi.done);
	else if (r->history_made)
		log_event(LOG_NOTICE, NULL, "--init: table %s is current (schema %d); made the run history's table %s",
			  init_qualified(o, o->table, t, sizeof(t)), LEASE_SCHEMA,
			  init_qualified(o, o->history_table, h, sizeof(h)));
	else
		log_event(LOG_NOTICE, NULL, "--init: table %s is current (schema %d), and so is %s: nothing to do",
			  init_qualified(o, o->table, t, sizeof(t)), LEASE_SCHEMA,
			  init_qualified(o, o->history_table, h, sizeof(h)));
}

void init_run(const struct options *o, struct outcome *out)
{
	struct init_report r = {.from = LEASE_SCHEMA};
	struct db *db = runmode_open(o, out);
	enum db_status st;
	struct db_err err;

	if (!db)
		return;
	st = init_tables(db, o, &r, &err);
	out->kind = runmode_outcome_of(st);
	init_say(o, st, &r, err.msg);
	runmode_close(db);
}
