/* The database connection: the only module that includes <mysql.h>.
 *
 * It knows connections, prepared statements and error classes, nothing of
 * leases. Every call blocks; db_abort is the one call that may come from
 * another thread, to cut a call that hangs. */
#ifndef LEADERRUN_DB_H
#define LEADERRUN_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dberr.h"

/* --ssl-mode, as MySQL names the modes. DB_TLS_DEFAULT: none given; a
 * networked host then gets VERIFY_IDENTITY, a local one the client
 * library's own default (MariaDB Connector/C: no TLS unless asked; Oracle's
 * libmysqlclient: PREFERRED). See tlspolicy.h. */
enum db_tls {
	DB_TLS_DEFAULT,
	DB_TLS_DISABLED,
	DB_TLS_PREFERRED,
	DB_TLS_REQUIRED,
	DB_TLS_VERIFY_CA,
	DB_TLS_VERIFY_IDENTITY,
};

/* Parses a mode name (any case, '-' or '_'). Returns -1 if unknown. */
int db_tls_parse(const char *name);

#define DB_MAX_HOSTS 16

struct db_host {
	const char *name; /* NULL: the library's default (option files, localhost) */
	unsigned port;	  /* 0: the default */
};

struct db_config {
	const char *user, *password, *database, *socket;
	enum db_tls tls; /* as given; each host's own: tlspolicy_mode */
	const char *ssl_ca, *ssl_cert, *ssl_key;
	/* The system's CA bundle, for hosts that verify without ssl_ca. */
	const char *system_ca;
	/* Tried in order, from the one after the host that last failed;
	 * none: one attempt with the library's defaults. */
	struct db_host hosts[DB_MAX_HOSTS];
	unsigned nhosts;
	bool random_order; /* shuffle the order once, per handle */
	/* Skip servers that cannot take a write (read_only, a Galera node
	 * not Synced): for modes that write. Reads go anywhere causal. */
	bool need_writable;
	/* A run's: on one server that takes compound statements (db_blocks),
	 * the probe goes with the first of them instead of a round trip of
	 * its own; any other first statement probes before it. */
	bool probe_late;
	const char *defaults_file; /* NULL: the usual option files, see read_option_files */
	bool read_option_files;	   /* read [client] and [leaderrun] from option files */
	unsigned connect_timeout_s;
	unsigned io_timeout_s;
};

enum db_type { DB_STR, DB_I64, DB_U64 };

/* A statement parameter, or a result column to fill. */
struct db_value {
	enum db_type type;
	const char *str; /* DB_STR parameter */
	char *buf;	 /* DB_STR column: filled NUL-terminated, truncated to cap */
	size_t cap;
	int64_t i64;
	uint64_t u64;
	bool is_null; /* a NULL parameter; for result columns, set by the fetch */
	/* sqltext.h: rendered as '?', its value given when the block that
	 * holds it is executed (db_block_execute). */
	bool kept;
};

struct db_result {
	uint64_t affected; /* rows matched (CLIENT_FOUND_ROWS), not only changed */
	uint64_t insert_id;
	bool have_row;
};

struct db;

/* Before any thread starts: the library's global initialisation. */
/* Loads the client library when the build loads it lazily (see db_lib.c);
 * fills ERR on failure. CFG says whether TLS may be needed at all (if not,
 * OpenSSL's configuration file is not read). */
int db_library_init(const struct db_config *cfg, char *err, size_t errlen);
void db_library_end(void);

/* Copies CFG, strings included. */
struct db *db_new(const struct db_config *cfg);
void db_free(struct db *db);

bool db_connected(const struct db *db);

/* The server's or the library's error number (ER_*, CR_*) of the last
 * call on DB that failed, 0 if that one failed without a number (not
 * connected, a statement too long): read right after a call that failed.
 * Decisions read it, never the message's text. */
unsigned db_errno(const struct db *db);
/* Connects to the first usable host: reachable, accepting the login, and
 * (NEED_WRITABLE) not read-only and, on Galera, Synced. On Galera the
 * session's reads are made causal (wsrep_sync_wait). On failure ERR names
 * every host tried and why it was passed over. */
enum db_status db_connect(struct db *db, struct db_err *err);
void db_disconnect(struct db *db);
/* Drops the connection after a failure: the next connect starts with the
 * host after this one, so that a dead or cut-off server is tried last. */
void db_fail_over(struct db *db);

/* What the live connection is connected to. */
struct db_server {
	char name[128];		    /* "HOST:PORT", or the socket's path */
	char tls[160];		    /* "TLS verified (VERIFY_IDENTITY, CA FILE)", "no TLS", ... */
	bool galera;		    /* @@wsrep_on */
	int64_t suspect_timeout_us; /* Galera's evs.suspect_timeout; 0: unknown */
	/* Whether commits are durable (SAFETY), read with the probe; -1:
	 * unknown. innodb_flush_log_at_trx_commit, log_bin, sync_binlog. */
	int64_t flush_at_commit, log_bin, sync_binlog;
};
/* Fills OUT; returns false when not connected. */
bool db_server_info(const struct db *db, struct db_server *out);

/* A row of a statement's result: COLS, as db_exec filled them. */
typedef void db_row_fn(void *ctx, const struct db_value *cols);

/* One statement's call: what it sends and where what it gets goes. */
struct db_call {
	unsigned stmt; /* its index (stmt.h): prepared from SQL on its first use on this connection */
	const char *sql;
	const struct db_value *params;
	unsigned nparams;
	struct db_value *cols; /* NULL: no row is read */
	unsigned ncols;
	db_row_fn *on_row; /* NULL: the first row alone, into COLS; else ON_ROW(CTX, COLS) for each */
	void *ctx;
	struct db_result *res;
};

/* Executes C's statement with its parameters, under one deadline with all
 * its rows. A failure that leaves the connection unusable disconnects, so
 * the next call reconnects. */
enum db_status db_exec(struct db *db, const struct db_call *c, struct db_err *err);

/* Executes text SQL without parameters or results (DDL, session setup). */
enum db_status db_query(struct db *db, const char *sql, struct db_err *err);

/* Executes text SQL that returns one integer (NULL reads as -1) into *OUT.
 * For statements without user data, where a prepare would cost a round
 * trip. */
enum db_status db_query_int(struct db *db, const char *sql, int64_t *out, struct db_err *err);

/* Executes text SQL that returns rows of at least ROWS->ncols columns, and
 * calls ROWS->on_row(ROWS->ctx, ROW, NCOLS) for each (a NULL column is NULL). For reads that
 * a prepared statement cannot make, or must not (--check-server). */
typedef void db_text_row_fn(void *ctx, const char *const *row, unsigned ncols);
struct db_rows {
	unsigned ncols;
	db_text_row_fn *on_row;
	void *ctx;
};
enum db_status db_query_rows(struct db *db, const char *sql, const struct db_rows *rows, struct db_err *err);

/* Does this connection's server take compound statements (MariaDB's
 * BEGIN NOT ATOMIC), and leaderrun use them there (not on a Galera node)?
 * Not connected: no. */
bool db_blocks(const struct db *db);

/* Runs C->sql, BODY (statements, DECLAREs first, each ending in ';'), as one
 * compound statement in one round trip: several statements and one commit
 * where a prepared statement is one. Fills C->cols from the first row of the
 * last result set that BODY's SELECTs give. An error anywhere rolls back
 * what BODY left open and is the call's; an error that says the server
 * takes no such statement switches db_blocks off for the handle (the
 * caller then goes statement by statement). Values go into BODY as
 * literals (sqltext.h), never escaped by hand. */
enum db_status db_block(struct db *db, const struct db_call *c, struct db_err *err);

/* Blocks prepared on the server beforehand (PREPARE), for a block that
 * must go at once when its moment comes: a waiter woken by the hint has
 * its acquisition parsed, and the stored routine it calls read, while it
 * waited, and a holder its release while its command ran, off the
 * hand-over's path (after an idle wait the server's parse of a block
 * costs as much as its statements). By ID, one body each; forgotten with
 * the connection. */
enum db_prepared { DB_PREPARED_ACQUIRE, DB_PREPARED_RELEASE, DB_PREPARED_MAX };

/* Prepares BODY (db_block's, with a '?' for each value that
 * db_block_execute gives) as ID on the live connection, and WARM beside
 * it (NULL: none), a statement prepared only for what its prepare loads
 * (the routine that BODY calls) and dropped again, in one round trip. Not
 * where db_blocks is off, nor before the connection's probe. */
enum db_status db_block_prepare(struct db *db, enum db_prepared id, const char *body, const char *warm,
				struct db_err *err);

/* Was BODY (NULL: any) prepared as ID on the live connection? */
bool db_block_prepared(const struct db *db, enum db_prepared id, const char *body);

/* Runs the block prepared as ID with C->params for its '?'s, as db_block runs
 * one. A failure forgets it: the next goes as db_block. */
enum db_status db_block_execute(struct db *db, enum db_prepared id, const struct db_call *c, struct db_err *err);

/* The version the server's greeting gave ("" when not connected): a proxy
 * may put its own name there. */
const char *db_server_version(const struct db *db);

/* Thread-safe: shuts down the socket of the call in progress, if any, so a
 * call blocked on a dead peer returns at once with an error. */
void db_abort(struct db *db);

/* What db_exec holds and binds: prepared statements per connection (by
 * index, stmt.h checks its count against this), parameters and result
 * columns per statement, and bytes of a statement's text (NUL included). */
#define DB_MAX_STMTS  64
#define DB_MAX_PARAMS 16
#define DB_MAX_COLS   24
#define DB_MAX_SQL    5000

#endif
