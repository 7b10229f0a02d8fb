/* Compound statements (db_block): several statements and one commit in
 * one round trip, with the probe riding along on a connection's first;
 * and the same prepared on the server beforehand (db_block_prepare). */
#include "db_int.h"
#include "sqltext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A result column as text into V, typed. */
static void db_text_value(struct db_value *v, const char *text, unsigned long len)
{
	v->is_null = text == NULL;
	switch (v->type) {
	case DB_I64:
		v->i64 = text ? strtoll(text, NULL, 10) : 0;
		break;
	case DB_U64:
		v->u64 = text ? strtoull(text, NULL, 10) : 0;
		break;
	case DB_STR:
		if (v->buf && v->cap) {
			size_t n = text ? (len < v->cap - 1 ? len : v->cap - 1) : 0;
			if (n)
				memcpy(v->buf, text, n);
			v->buf[n] = '\0';
		}
		break;
	}
}

/* The block's result sets: the probe's first when it carried it (into
 * *READ_ONLY), then the body's: the first row of its last one into COLS. */
static enum db_status db_block_results(struct db *db, bool *probe, int64_t *read_only, const struct db_call *c,
				       struct db_err *err)
{
	struct db_value *cols = c->cols;
	unsigned ncols = c->ncols;
	struct db_result *res = c->res;
	MYSQL *m = db->mysql;
	int more;

	do {
		MYSQL_RES *r = lib.mysql_store_result(m);
		MYSQL_ROW row = r ? lib.mysql_fetch_row(r) : NULL;

		if (r && *probe) {
			*read_only = db_probe_row(db, row);
			*probe = false;
			/* Probed, and the session set up, whatever follows. */
			db->unprobed = false;
			db->stmt_settings = false;
		} else if (row && lib.mysql_num_fields(r) >= ncols) {
			unsigned long *len = lib.mysql_fetch_lengths(r);
			for (unsigned i = 0; i < ncols; i++)
				db_text_value(&cols[i], row[i], len[i]);
			res->have_row = true;
		}
		if (r)
			lib.mysql_free_result(r);
	} while ((more = lib.mysql_next_result(m)) == 0);
	if (more > 0 || lib.mysql_errno(m))
		return db_fail(db, lib.mysql_errno(m), lib.mysql_error(m), err);
	return DB_OK;
}

/* The whole statement around BODY: the outermost handler, which never
 * leaves a transaction open behind an error; the session's lock wait; and
 * on a connection not probed yet, the probe, with BODY run only on a
 * server that the probe would pass (writable, not Galera: a Galera node's
 * readiness takes the probe of old, db_probe). */
static char *db_block_text(const struct db *db, const char *body, bool probe)
{
	size_t len = strlen(body) + 1024, used = 0;
	char *q = malloc(len);

	if (!q)
		return NULL;
	used = (size_t)snprintf(q, len,
				"BEGIN NOT ATOMIC DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END; "
				"SET SESSION innodb_lock_wait_timeout = 1%s; ",
				probe ? ", wait_timeout = 28800" : "");
	if (probe)
		used += (size_t)snprintf(q + used, len - used,
					 "SELECT " DB_PROBE_COLUMNS "; IF @@global.wsrep_on = 0%s THEN ",
					 db->cfg.need_writable ? " AND @@global.read_only = 0" : "");
	snprintf(q + used, len - used, "BEGIN %s END; %sEND", body, probe ? "END IF; " : "");
	return q;
}

/* One attempt; *GALERA: the probe that rode along found a Galera node,
 * and BODY did not run. */
static enum db_status db_block_once(struct db *db, const struct db_call *c, bool *galera, struct db_err *err)
{
	const char *body = c->sql;
	bool probe = db->unprobed, pending = probe, armed;
	int64_t read_only = 0;
	char *q = db_block_text(db, body, probe);
	enum db_status st = DB_OK;
	unsigned e;

	if (!q) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return DB_ERROR;
	}
	armed = db_arm_io(db);
	if (lib.mysql_query(db->mysql, q) != 0) {
		e = lib.mysql_errno(db->mysql);
		/* 1064: no compound statement here (a proxy, an old server);
		 * 1193: a variable it lacks (no Galera built in, no
		 * @@in_transaction). The caller goes the way of old. */
		if (e == 1064 || e == 1193)
			db->blocks_off = true;
		st = db_fail(db, e, lib.mysql_error(db->mysql), err);
	} else
		st = db_block_results(db, &pending, &read_only, c, err);
	db_disarm(armed);
	free(q);
	if (st == DB_OK && probe) {
		*galera = db->server.galera;
		st = *galera ? DB_OK : db_read_only(db, read_only, err->msg, sizeof(err->msg));
		if (st == DB_READ_ONLY)
			db_disconnect(db);
	}
	return st;
}

enum db_status db_block(struct db *db, const struct db_call *c, struct db_err *err)
{
	struct db_result *res = c->res;
	bool galera = false;
	enum db_status st;

	memset(res, 0, sizeof(*res));
	if (!db->mysql) {
		snprintf(err->msg, sizeof(err->msg), "not connected");
		db->errnum = 0;
		return DB_UNAVAILABLE;
	}
	st = db_block_once(db, c, &galera, err);
	/* A Galera node, found by the probe that rode along: BODY did not
	 * run. Probed as such (its readiness, causal reads), and the caller
	 * goes a statement at a time (db_blocks is off there): a compound
	 * statement aborted by a conflicting transaction certified on
	 * another node was seen to hang until the I/O timeout. */
	if (st == DB_OK && galera && (st = db_settle(db, err)) == DB_OK) {
		snprintf(err->msg, sizeof(err->msg), "no compound statements on a Galera node");
		st = DB_ERROR;
	}
	return st;
}

/* The server's names of the prepared blocks, and of what warms each. */
static const char *const prepared_name[DB_PREPARED_MAX] = {"lr_acquire", "lr_release"};
static const char *const warm_name[DB_PREPARED_MAX] = {"lr_acquire_warm", "lr_release_warm"};

/* "PREPARE NAME FROM TEXT; " with TEXT as a literal (sqltext.h: never
 * escaped by hand) into Q. */
static bool db_prepare_text(char *q, size_t len, size_t *used, const char *name, const char *text)
{
	struct db_value v = {.type = DB_STR, .str = text};

	return sqltext_append(q, len, used, "PREPARE %s FROM ", name) && sqltext_literal(q, len, used, &v) &&
	       sqltext_append(q, len, used, "; ");
}

enum db_status db_block_prepare(struct db *db, enum db_prepared id, const char *body, const char *warm,
				struct db_err *err)
{
	/* Each byte of the block twice as hex, and as much again for WARM
	 * and the words around them. */
	char *text = NULL, *q = NULL, *copy = strdup(body);
	size_t len = 0, used = 0;
	enum db_status st = DB_ERROR;
	bool armed, fits;

	if (!db->mysql || db->unprobed || !db_blocks(db)) {
		free(copy);
		snprintf(err->msg, sizeof(err->msg), "no compound statements on this connection");
		return DB_ERROR;
	}
	text = db_block_text(db, body, false);
	if (text && copy) {
		len = 2 * strlen(text) + (warm ? 2 * strlen(warm) : 0) + 256;
		q = malloc(len);
	}
	if (!q) {
		free(text);
		free(copy);
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return DB_ERROR;
	}
	free(db->prepared[id]);
	db->prepared[id] = NULL;
	/* WARM is dropped again at once: what its prepare loaded stays. */
	fits = sqltext_append(q, len, &used, "BEGIN NOT ATOMIC ") &&
	       db_prepare_text(q, len, &used, prepared_name[id], text) &&
	       (!warm || (db_prepare_text(q, len, &used, warm_name[id], warm) &&
			  sqltext_append(q, len, &used, "DEALLOCATE PREPARE %s; ", warm_name[id]))) &&
	       sqltext_append(q, len, &used, "END");
	free(text);
	if (fits) {
		armed = db_arm_io(db);
		st = lib.mysql_query(db->mysql, q) == 0
			 ? DB_OK
			 : db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err);
		db_disarm(armed);
	} else
		snprintf(err->msg, sizeof(err->msg), "internal error: a prepared block did not fit");
	free(q);
	if (st == DB_OK && db->mysql)
		db->prepared[id] = copy;
	else
		free(copy);
	return st;
}

bool db_block_prepared(const struct db *db, enum db_prepared id, const char *body)
{
	return db->mysql && db->prepared[id] && (!body || strcmp(db->prepared[id], body) == 0);
}

enum db_status db_block_execute(struct db *db, enum db_prepared id, const struct db_call *c, struct db_err *err)
{
	const struct db_value *args = c->params;
	unsigned nargs = c->nparams;
	struct db_result *res = c->res;
	char q[DB_MAX_SQL];
	size_t used = 0;
	bool fits, probe = false, armed;
	int64_t read_only = 0;
	enum db_status st;

	memset(res, 0, sizeof(*res));
	if (!db->mysql || !db->prepared[id]) {
		snprintf(err->msg, sizeof(err->msg), "not connected");
		db->errnum = 0;
		return DB_UNAVAILABLE;
	}
	fits = sqltext_append(q, sizeof(q), &used, "EXECUTE %s", prepared_name[id]);
	for (unsigned i = 0; fits && i < nargs; i++)
		fits = sqltext_append(q, sizeof(q), &used, i ? ", " : " USING ") &&
		       sqltext_literal(q, sizeof(q), &used, &args[i]);
	if (!fits) {
		snprintf(err->msg, sizeof(err->msg), "internal error: the values of a prepared block did not fit");
		return DB_ERROR;
	}
	armed = db_arm_io(db);
	st = lib.mysql_query(db->mysql, q) == 0
		 ? db_block_results(db, &probe, &read_only, c, err)
		 : db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err);
	db_disarm(armed);
	/* Whatever went wrong, the next goes as a block of text: a prepared
	 * statement is only ever a shortcut. */
	if (st != DB_OK && db->mysql) {
		free(db->prepared[id]);
		db->prepared[id] = NULL;
	}
	return st;
}
