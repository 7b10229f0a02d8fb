/* What a connection reached: is its server one to use (writable when it
 * must be; on Galera, a Synced node), and its session set up as the
 * protocol needs. */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galera.h"

/* One integer column of a text query's first row; -1 for NULL or none. */
static int64_t db_row_int(MYSQL_ROW row, unsigned col)
{
	return row && row[col] ? strtoll(row[col], NULL, 10) : -1;
}

/* The probe's row (DB_PROBE_COLUMNS) into db->server; returns read_only. */
int64_t db_probe_row(struct db *db, MYSQL_ROW row)
{
	db->server.galera = db_row_int(row, 1) == 1;
	db->server.suspect_timeout_us = row && row[2] ? galera_suspect_timeout_us(row[2]) : 0;
	db->wait_timeout_s = db_row_int(row, 3);
	db->server.flush_at_commit = db_row_int(row, 4);
	db->server.log_bin = db_row_int(row, 5);
	db->server.sync_binlog = db_row_int(row, 6);
	return db_row_int(row, 0);
}

/* A writable server needed, and this one read-only. */
enum db_status db_read_only(struct db *db, int64_t read_only, char *why, size_t len)
{
	if (!db->cfg.need_writable || read_only == 0)
		return DB_OK;
	snprintf(why, len, "read-only (@@read_only=1): a replica or demoted primary cannot hold a lease");
	return DB_READ_ONLY;
}

/* Is the server this connection reached one to use? Reads what kind it
 * is (Galera or not) into db->server. A read-only server is one that
 * cannot take the lease's writes: MySQL's super_read_only sets read_only
 * too, so @@read_only covers both (and MariaDB has no super_read_only). */
static enum db_status db_probe(struct db *db, char *why, size_t len)
{
	MYSQL *m = db->mysql;
	MYSQL_RES *res;
	MYSQL_ROW row;
	int64_t read_only;
	unsigned e;

	/* The last three ride along for the run's warning about commits
	 * that are not durable: no statement (no round trip) of their own. */
	if (lib.mysql_query(m, "SELECT " DB_PROBE_COLUMNS) != 0) {
		/* 1193: no such variable, a server built without Galera. */
		if (lib.mysql_errno(m) != 1193 ||
		    lib.mysql_query(
			m, "SELECT @@global.read_only, 0, NULL, @@session.wait_timeout, " DB_PROBE_DURABILITY) != 0)
			goto failed;
	}
	if (!(res = lib.mysql_store_result(m)))
		goto failed;
	read_only = db_probe_row(db, lib.mysql_fetch_row(res));
	lib.mysql_free_result(res);

	if (db->server.galera) {
		int64_t ready = -1, state = -1;
		if (lib.mysql_query(
			m, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state')") != 0 ||
		    !(res = lib.mysql_store_result(m)))
			goto failed;
		while ((row = lib.mysql_fetch_row(res)))
			if (row[0] && row[1] && strcmp(row[0], "wsrep_ready") == 0)
				ready = strcmp(row[1], "ON") == 0;
			else if (row[0] && row[1])
				state = strtoll(row[1], NULL, 10);
		lib.mysql_free_result(res);
		if (ready != 1 || state != GALERA_SYNCED) {
			snprintf(why, len, "Galera node not ready (wsrep_ready=%s, wsrep_local_state=%s)",
				 ready == 1 ? "ON" : "OFF", galera_state_name(state));
			return DB_UNAVAILABLE;
		}
	}
	return db_read_only(db, read_only, why, len);

failed:
	e = lib.mysql_errno(m);
	snprintf(why, len, "%s (error %u)", lib.mysql_error(m), e);
	db->errnum = e;
	db_note_timeout(db, why, len);
	return db_status_of(e, lib.mysql_error(m));
}

/* Is the live connection's server one to use (db_probe), and its session
 * set up as the protocol needs? If not, it is dropped. */
enum db_status db_session(struct db *db, struct db_err *err)
{
	const struct db_config *c = &db->cfg;
	enum db_status st;

	/* A run's one server: the probe rides on its first compound statement
	 * (db_block), no round trip of its own. Several hosts are probed
	 * here, so that a read-only one is passed over at once. */
	db->unprobed = c->probe_late && c->nhosts <= 1 && db_blocks(db);
	if (db->unprobed)
		return DB_OK;
	st = db_probe(db, err->msg, sizeof(err->msg));

	/* Option files are applied inside mysql_real_connect and could carry an
	 * init-command; assert the session settings the protocol relies on
	 * after it. A short lock wait turns row contention into a quick
	 * "not acquired, retry" instead of a stall. On Galera, reads wait
	 * until the node has applied everything the cluster committed before
	 * them (causal reads): a follower must not judge the lease from a
	 * lagging or cut-off node's stale copy. */
	/* A plain MariaDB server read no option file here: the short lock wait
	 * goes with each statement instead (SET STATEMENT ... FOR, MariaDB
	 * 10.1.2 and later), one statement (a round trip) fewer for every
	 * connection, as long as the server's wait_timeout leaves idle
	 * sessions be for an hour or more. */
	/* The idle connection of a holder between renews, or of a follower
	 * between looks, must outlive the server's wait_timeout: below an
	 * hour (the default is 8 h) the session SET goes out after all. */
	db->stmt_settings = st == DB_OK && !db->server.galera && !c->defaults_file && !c->read_option_files &&
			    strstr(lib.mysql_get_server_info(db->mysql), "MariaDB") != NULL &&
			    db->wait_timeout_s >= 3600;
	if (st == DB_OK && !db->stmt_settings)
		st = db_query_now(db,
				  db->server.galera
				      ? "SET SESSION innodb_lock_wait_timeout=1, wait_timeout=28800, wsrep_sync_wait=1"
				      : "SET SESSION innodb_lock_wait_timeout=1, wait_timeout=28800",
				  err);
	if (st != DB_OK)
		db_disconnect(db);
	return st;
}

/* A connection whose probe was left for a compound statement, before a
 * statement of another kind: probed and set up now, as any other. */
enum db_status db_settle(struct db *db, struct db_err *err)
{
	bool late = db->cfg.probe_late;
	enum db_status st;

	db->unprobed = false;
	db->cfg.probe_late = false;
	st = db_session(db, err);
	db->cfg.probe_late = late;
	return st;
}
