/* Statements on the live connection: prepared ones (db_exec), and text
 * queries (db_query*). */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum db_status db_query(struct db *db, const char *sql, struct db_err *err)
{
	enum db_status st;

	if (db->mysql && db->unprobed && (st = db_settle(db, err)) != DB_OK)
		return st;
	return db_query_now(db, sql, err);
}

struct db_first_int {
	int64_t *out;
	bool seen;
};

static void db_first_int(void *ctx, const char *const *row, unsigned ncols)
{
	struct db_first_int *f = ctx;

	if (!f->seen && ncols > 0 && row[0])
		*f->out = strtoll(row[0], NULL, 10);
	f->seen = true;
}

enum db_status db_query_int(struct db *db, const char *sql, int64_t *out, struct db_err *err)
{
	struct db_first_int f = {out, false};

	*out = -1;
	return db_query_rows(db, sql, &(struct db_rows){1, db_first_int, &f}, err);
}

static void db_bind_value(MYSQL_BIND *b, const struct db_value *v, unsigned long *len, db_bool *is_null)
{
	memset(b, 0, sizeof(*b));
	switch (v->type) {
	case DB_STR:
		b->buffer_type = MYSQL_TYPE_STRING;
		if (v->buf) {
			b->buffer = v->buf;
			b->buffer_length = v->cap ? v->cap - 1 : 0;
		} else {
			b->buffer = (char *)v->str;
			b->buffer_length = v->str ? strlen(v->str) : 0;
		}
		break;
	case DB_I64:
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = (void *)&v->i64;
		break;
	case DB_U64:
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = (void *)&v->u64;
		b->is_unsigned = 1;
		break;
	}
	b->length = len;
	b->is_null = is_null;
}

/* A statement's error, or its connection's when the statement has none:
 * Connector/C leaves an error met while fetching a result (Galera's abort
 * of the transaction, error 1213, in the middle of a SELECT ... FOR
 * UPDATE) on the connection alone. Read as the statement's errno 0, it
 * was an unknown error that ended the run with 69, not the conflict that
 * is retried (seen with contenders racing through three nodes). */
static unsigned db_stmt_errno(struct db *db, MYSQL_STMT *st, const char **msg)
{
	unsigned e = lib.mysql_stmt_errno(st);

	*msg = lib.mysql_stmt_error(st);
	if (e == 0 && db->mysql && lib.mysql_errno(db->mysql) != 0) {
		e = lib.mysql_errno(db->mysql);
		*msg = lib.mysql_error(db->mysql);
	}
	if (e == 0 && !**msg)
		*msg = "the client library reported a failure and no error";
	return e;
}

static enum db_status db_stmt_fail(struct db *db, MYSQL_STMT *st, struct db_err *err)
{
	const char *msg;
	unsigned e = db_stmt_errno(db, st, &msg);

	return db_fail(db, e, msg, err);
}

/* A failure of a statement that is not kept (its prepare failed): the
 * error is copied out before the handle goes. */
static enum db_status db_stmt_gone(struct db *db, MYSQL_STMT *st, struct db_err *err)
{
	char copy[512];
	const char *msg;
	unsigned e = db_stmt_errno(db, st, &msg);

	snprintf(copy, sizeof(copy), "%s", msg);
	lib.mysql_stmt_close(st);
	return db_fail(db, e, copy, err);
}

#define DB_STMT_SETTINGS "SET STATEMENT innodb_lock_wait_timeout=1 FOR "

/* A new handle for the statement at index ID, prepared from SQL with
 * libmysqlclient. With Connector/C the first execution prepares it in the
 * same round trip (mariadb_stmt_execute_direct: COM_STMT_PREPARE and
 * COM_STMT_EXECUTE sent together); the parameters are bound before, so the
 * library must be told how many. A one-shot run would otherwise pay a
 * round trip per statement for prepares. */
static enum db_status db_stmt_new(struct db *db, const struct db_call *c, const char *sql, MYSQL_STMT **out,
				  struct db_err *err)
{
	unsigned id = c->stmt, nparams = c->nparams;
	MYSQL_STMT *st = lib.mysql_stmt_init(db->mysql);

	if (!st)
		return db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err);
#if defined(LIBMARIADB)
	unsigned n = nparams;
	(void)id;
	(void)sql;
	if (nparams)
		lib.mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &n);
#else
	(void)nparams;
	if (lib.mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0)
		return db_stmt_gone(db, st, err);
	db->stmts[id] = st;
#endif
	*out = st;
	return DB_OK;
}

/* Binds C's parameters and executes ST, C's statement; FRESH (not NULL):
 * its first execution on this connection, of that text. A handle that
 * never became the connection's is closed on failure. */
static enum db_status db_stmt_run(struct db *db, const struct db_call *c, MYSQL_STMT *st, const char *fresh,
				  struct db_err *err)
{
	const struct db_value *params = c->params;
	unsigned id = c->stmt, nparams = c->nparams;
	MYSQL_BIND b[DB_MAX_PARAMS];
	unsigned long len[DB_MAX_PARAMS];
	db_bool null[DB_MAX_PARAMS];

	for (unsigned i = 0; i < nparams; i++) {
		/* A NULL string parameter is SQL NULL. */
		null[i] = params[i].is_null || (params[i].type == DB_STR && !params[i].str);
		db_bind_value(&b[i], &params[i], &len[i], &null[i]);
		len[i] = b[i].buffer_length;
	}
	if (nparams && lib.mysql_stmt_bind_param(st, b) != 0) {
		if (fresh && !db->stmts[id])
			return db_stmt_gone(db, st, err);
		return db_stmt_fail(db, st, err);
	}
#if defined(LIBMARIADB)
	if (fresh) {
		if (lib.mariadb_stmt_execute_direct(st, fresh, strlen(fresh)) != 0)
			return db_stmt_gone(db, st, err);
		db->stmts[id] = st;
		return DB_OK;
	}
#endif
	if (lib.mysql_stmt_execute(st) != 0)
		return db_stmt_fail(db, st, err);
	return DB_OK;
}

/* Fetches the rows of ST into COLS: the first only without ON_ROW, else
 * each, handed to ON_ROW(CTX, COLS). */
static enum db_status db_stmt_fetch(struct db *db, MYSQL_STMT *st, const struct db_call *c, struct db_err *err)
{
	struct db_value *cols = c->cols;
	unsigned ncols = c->ncols;
	MYSQL_BIND b[DB_MAX_COLS];
	unsigned long len[DB_MAX_COLS];
	db_bool null[DB_MAX_COLS];

	for (unsigned i = 0; i < ncols; i++) {
		null[i] = 0;
		len[i] = 0;
		db_bind_value(&b[i], &cols[i], &len[i], &null[i]);
	}
	if (lib.mysql_stmt_bind_result(st, b) != 0)
		return db_stmt_fail(db, st, err);
	for (;;) {
		switch (lib.mysql_stmt_fetch(st)) {
		case 0:
		case MYSQL_DATA_TRUNCATED:
			break;
		case MYSQL_NO_DATA:
			lib.mysql_stmt_free_result(st);
			return DB_OK;
		default: {
			enum db_status s = db_stmt_fail(db, st, err);
			if (db->mysql)
				lib.mysql_stmt_free_result(st);
			return s;
		}
		}
		c->res->have_row = true;
		for (unsigned i = 0; i < ncols; i++) {
			cols[i].is_null = null[i] != 0;
			if (cols[i].type == DB_STR && cols[i].buf && cols[i].cap) {
				size_t n = len[i] < cols[i].cap - 1 ? len[i] : cols[i].cap - 1;
				cols[i].buf[null[i] ? 0 : n] = '\0';
			}
		}
		if (!c->on_row)
			break;
		c->on_row(c->ctx, cols);
	}
	lib.mysql_stmt_free_result(st);
	return DB_OK;
}

static enum db_status db_exec_armed(struct db *db, const struct db_call *c, struct db_err *err)
{
	unsigned id = c->stmt, nparams = c->nparams;
	const char *sql = c->sql;
	struct db_result *res = c->res;
	char prefixed[sizeof(DB_STMT_SETTINGS) + DB_MAX_SQL];
	MYSQL_STMT *st;
	bool fresh;
	enum db_status s;

	memset(res, 0, sizeof(*res));
	if (id >= DB_MAX_STMTS || nparams > DB_MAX_PARAMS || c->ncols > DB_MAX_COLS) {
		snprintf(err->msg, sizeof(err->msg),
			 "internal error: statement %u, or its parameters or columns, out of range", id);
		return DB_ERROR;
	}
	if (!db->mysql) {
		snprintf(err->msg, sizeof(err->msg), "not connected");
		db->errnum = 0;
		return DB_UNAVAILABLE;
	}
	if (db->unprobed && (s = db_settle(db, err)) != DB_OK)
		return s;
	st = db->stmts[id];
	fresh = !st;
	if (fresh && db->stmt_settings) {
		/* Prepared once per connection: the prefix costs nothing later. */
		if (strlen(sql) >= DB_MAX_SQL) {
			snprintf(err->msg, sizeof(err->msg), "internal error: statement too long");
			return DB_ERROR;
		}
		snprintf(prefixed, sizeof(prefixed), "%s%s", DB_STMT_SETTINGS, sql);
		sql = prefixed;
	}
	if (fresh && (s = db_stmt_new(db, c, sql, &st, err)) != DB_OK)
		return s;
	s = db_stmt_run(db, c, st, fresh ? sql : NULL, err);
	if (s != DB_OK)
		return s;
	res->affected = (uint64_t)lib.mysql_stmt_affected_rows(st);
	res->insert_id = (uint64_t)lib.mysql_stmt_insert_id(st);
	if (!c->cols)
		return DB_OK;
	return db_stmt_fetch(db, st, c, err);
}

enum db_status db_exec(struct db *db, const struct db_call *c, struct db_err *err)
{
	/* The statement with all its rows, under one deadline: a server that
	 * trickles a result cannot stretch it either. */
	bool armed = db_arm_io(db);
	enum db_status st = db_exec_armed(db, c, err);

	db_disarm(armed);
	if (st != DB_OK)
		err->errnum = db->errnum;
	return st;
}

/* --check-server's reads. Text queries, not prepared: SHOW
 * statements, and the exact "select @@version_comment limit 1" that
 * ProxySQL answers itself. */
enum db_status db_query_rows(struct db *db, const char *sql, const struct db_rows *rows, struct db_err *err)
{
	unsigned ncols = rows->ncols;
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	/* The statement and all its rows, under one deadline. */
	bool armed = db_arm_io(db);
	enum db_status st = db_query(db, sql, err);

	if (st == DB_OK && !(res = lib.mysql_store_result(db->mysql)))
		st = db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err);
	/* ON_ROW reads NCOLS columns: a result of fewer (a proxy, another
	 * server's SHOW) is refused, not read past its end. */
	if (res && lib.mysql_num_fields(res) < ncols) {
		snprintf(err->msg, sizeof(err->msg), "the server answered %u column(s) where %u were expected: %s",
			 lib.mysql_num_fields(res), ncols, sql);
		st = DB_ERROR;
	}
	while (st == DB_OK && (row = lib.mysql_fetch_row(res)))
		rows->on_row(rows->ctx, (const char *const *)row, ncols);
	if (res)
		lib.mysql_free_result(res);
	db_disarm(armed);
	return st;
}
