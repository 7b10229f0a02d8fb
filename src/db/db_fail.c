/* What every call on a handle stands on, below the probe and the calls
 * that run it (db_conn.c, db_stmt.c, db_block.c): a failure's status and
 * words, the fail-over it may cause, the connection's end, whether the
 * server takes compound statements, and a text query as it is, probe or
 * none (db_query_now). */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void db_disconnect(struct db *db)
{
	bool armed;

	if (!db->mysql)
		return;
	armed = db_arm_io(db);
	/* Forget the fd first: once mysql_close frees it, the number may be
	 * reused by another descriptor that db_abort must never touch. */
	db_set_fd(db, -1);
	/* The connection first: it detaches the statements (Connector/C's
	 * ma_invalidate_stmts, libmysqlclient's mysql_detach_stmt_list), so
	 * closing them then only frees them, without a COM_STMT_CLOSE each
	 * on the way out: the server drops a session's statements with it,
	 * and a run's exit need not wait for a round trip per statement. */
	lib.mysql_close(db->mysql);
	for (unsigned i = 0; i < DB_MAX_STMTS; i++) {
		if (db->stmts[i])
			lib.mysql_stmt_close(db->stmts[i]);
		db->stmts[i] = NULL;
	}
	for (unsigned i = 0; i < DB_PREPARED_MAX; i++) {
		free(db->prepared[i]);
		db->prepared[i] = NULL;
	}
	db->mysql = NULL;
	db_disarm(armed);
}

void db_fail_over(struct db *db)
{
	unsigned n = db->cfg.nhosts ? db->cfg.nhosts : 1;

	if (db->mysql)
		db->next = (db->cur + 1) % n;
	db_disconnect(db);
}

/* The status of a failed call: an error number of 0 (a client library
 * that failed without one) is still a failure. */
enum db_status db_status_of(unsigned errnum, const char *msg)
{
	enum db_status st = dberr_classify_msg(errnum, msg);

	return st == DB_OK ? DB_ERROR : st;
}

enum db_status db_fail(struct db *db, unsigned errnum, const char *msg, struct db_err *err)
{
	enum db_status st = db_status_of(errnum, msg);

	snprintf(err->msg, sizeof(err->msg), "%s (error %u)", msg, errnum);
	db->errnum = errnum;
	err->errnum = errnum;
	db_note_timeout(db, err->msg, sizeof(err->msg));
	if (st == DB_UNAVAILABLE)
		db_fail_over(db);
	return st;
}

bool db_blocks(const struct db *db)
{
	/* MariaDB 10.1.1 took the first; the blocks use @@in_transaction
	 * (10.3), and an older server's refusal switches them off. Not on
	 * Galera: db_block says why. */
	return db->mysql && !db->blocks_off && !db->server.galera &&
	       strstr(lib.mysql_get_server_info(db->mysql), "MariaDB") != NULL;
}

enum db_status db_query_now(struct db *db, const char *sql, struct db_err *err)
{
	enum db_status st = DB_OK;
	bool armed;

	if (!db->mysql) {
		snprintf(err->msg, sizeof(err->msg), "not connected");
		db->errnum = 0;
		return DB_UNAVAILABLE;
	}
	armed = db_arm_io(db);
	if (lib.mysql_query(db->mysql, sql) != 0)
		st = db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err);
	db_disarm(armed);
	return st;
}
