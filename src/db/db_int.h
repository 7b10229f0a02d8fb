/* The inside of the database module (db.h): struct db, the client
 * library's table, and what the module's files call of one another. Only
 * src/db/db_*.c include it.
 *
 * <mysql.h> comes in here, and no file outside src/db/ includes it (db.h
 * names none of its types): the module is one, behind db.h, and its files
 * split it by job, each small enough to read alone (which file does what:
 * src/db/ in src/README.md).
 *
 * Calls go one way: db_stmt.c, db_block.c and db_conn.c call db_probe.c,
 * which calls db_fail.c, which calls db_deadline.c and db_lib.c.
 *
 * The deadline has a file of its own because every other part arms it,
 * and half of its work is done in Connector/C's hooks (the wait on the
 * socket, the socket made non-blocking before TLS). The probe has one
 * because both a connect and a compound statement run it. Where the two
 * client libraries differ (LIBMARIADB: MariaDB Connector/C; else Oracle's
 * libmysqlclient), the #if stays beside the job it changes, not in a file
 * per library: a handle's options in db_lib.c, a prepare in db_stmt.c, the
 * hooks in db_deadline.c. */
#ifndef LEADERRUN_DB_INT_H
#define LEADERRUN_DB_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "base/dlib.h"
#include "db.h"

/* The client library's functions, called through this table (dlib.h). In
 * the default build the library is loaded with dlopen by db_library_init,
 * so that runs that never reach a database (--version, --help, a usage
 * error) do not pay for mapping it and its TLS stack (the dynamic loader
 * maps every DT_NEEDED library before main). A static build
 * (-Dprefer_static=true) fills the table with the linked functions. */
#define DB_API_COMMON(X)                                                                                               \
	X(mysql_server_init)                                                                                           \
	X(mysql_server_end)                                                                                            \
	X(mysql_init)                                                                                                  \
	X(mysql_options)                                                                                               \
	X(mysql_real_connect)                                                                                          \
	X(mysql_close)                                                                                                 \
	X(mysql_errno)                                                                                                 \
	X(mysql_error)                                                                                                 \
	X(mysql_query)                                                                                                 \
	X(mysql_store_result)                                                                                          \
	X(mysql_num_fields)                                                                                            \
	X(mysql_fetch_row)                                                                                             \
	X(mysql_fetch_lengths)                                                                                         \
	X(mysql_next_result)                                                                                           \
	X(mysql_free_result)                                                                                           \
	X(mysql_get_host_info)                                                                                         \
	X(mysql_get_server_info)                                                                                       \
	X(mysql_get_ssl_cipher)                                                                                        \
	X(mysql_stmt_init)                                                                                             \
	X(mysql_stmt_prepare)                                                                                          \
	X(mysql_stmt_bind_param)                                                                                       \
	X(mysql_stmt_execute)                                                                                          \
	X(mysql_stmt_affected_rows)                                                                                    \
	X(mysql_stmt_insert_id)                                                                                        \
	X(mysql_stmt_bind_result)                                                                                      \
	X(mysql_stmt_fetch)                                                                                            \
	X(mysql_stmt_free_result)                                                                                      \
	X(mysql_stmt_close)                                                                                            \
	X(mysql_stmt_errno)                                                                                            \
	X(mysql_stmt_error)
#if defined(LIBMARIADB)
/* Exported by Connector/C 3 (libmariadb_3), declared in no installed
 * header: FN(MODE, MYSQL, BUFFER, LENGTH) after every read (MODE 0) and
 * write (1) of every connection of the process. See db_on_io. */
int ma_pvio_register_callback(my_bool register_callback,
			      void (*fn)(int mode, MYSQL *mysql, const unsigned char *buffer, size_t length));
#define DB_API(X)                                                                                                      \
	DB_API_COMMON(X)                                                                                               \
	X(mysql_get_socket)                                                                                            \
	X(mysql_ssl_set)                                                                                               \
	X(mysql_stmt_attr_set) X(mariadb_stmt_execute_direct) X(ma_pvio_register_callback)
#else
#define DB_API(X) DB_API_COMMON(X)
#endif

/* Named lib, as dlib.h's DLIB_SYM and DLIB_LINK expect; defined in
 * db_lib.c. notify.c's table of the same name is its own (static). */
struct db_lib {
	DB_API(DLIB_FIELD)
	unsigned *port; /* Connector/C's mysql_port: its default TCP port */
	/* OpenSSL's OPENSSL_init_crypto, when the library uses OpenSSL. */
	int (*openssl_init)(uint64_t opts, const void *settings);
};
extern struct db_lib lib;

/* The two client flavours differ in a few spellings; keep them here. */
#if defined(LIBMARIADB) || (defined(MYSQL_VERSION_ID) && MYSQL_VERSION_ID < 80000)
typedef my_bool db_bool;
#else
typedef bool db_bool;
#endif

struct db {
	struct db_config cfg;
	MYSQL *mysql;
	MYSQL_STMT *stmts[DB_MAX_STMTS]; /* prepared, by index (stmt.h) */
	/* The socket of the live connection, or -1. Guarded by fd_lock, which
	 * is never held across I/O, so db_abort cannot block on a hung call. */
	pthread_mutex_t fd_lock;
	int fd;
	/* The hosts' order (shuffled once for host-order=random), where the
	 * next connect starts, and where the live connection is. */
	unsigned order[DB_MAX_HOSTS];
	unsigned next, cur;
	struct db_server server;
	/* Statements carry the session settings themselves (db_session). */
	bool stmt_settings;
	/* unprobed: connected, and the probe still to come, with the first
	 * compound statement or before any other (cfg.probe_late).
	 * blocks_off: this server (or a proxy before it) took no compound
	 * statement; never tried again on this handle. */
	bool unprobed, blocks_off;
	/* The error number of the last call that failed (db_errno). */
	unsigned errnum;
	int64_t wait_timeout_s; /* the session's, as the probe read it */
	/* The bodies of the blocks prepared on the live connection
	 * (db_block_prepare), by id; NULL: none. */
	char *prepared[DB_PREPARED_MAX];
	/* The call in progress on this handle (db_arm): the handle that
	 * mysql_real_connect is building, the absolute deadline of the call
	 * (CLOCK_BOOTTIME us) and whether it ran out. Only the thread that
	 * owns the handle touches these. */
	MYSQL *connecting;
	int64_t until;
	bool timed_out;
	const char *limit; /* the timeout that sets the deadline, for messages */
	unsigned limit_s;
};

/* The probe's columns (db_probe_row): a connect's probe and a compound
 * statement's (db_block) select the same. */
#define DB_PROBE_DURABILITY "@@global.innodb_flush_log_at_trx_commit, @@global.log_bin, @@global.sync_binlog"
#define DB_PROBE_COLUMNS                                                                                               \
	"@@global.read_only, @@global.wsrep_on, @@global.wsrep_provider_options, "                                     \
	"@@session.wait_timeout, " DB_PROBE_DURABILITY

/* db_lib.c: what differs between the client libraries. */
/* Does MODE ask for TLS only when the server offers it? Then the connect
 * goes again without TLS when db_tls_absent says the server had none. */
bool db_tls_opportunistic(const struct db_config *c, enum db_tls mode, const char *ca);
bool db_tls_absent(MYSQL *m);
int db_socket_of(MYSQL *m);
/* A handle for host H in mode MODE, verifying against CA, with a connect
 * timeout of CT seconds per wait; NULL when out of memory. */
MYSQL *db_handle(const struct db_config *c, const struct db_host *h, enum db_tls mode, const char *ca, unsigned ct);

/* db_deadline.c: each call runs under one deadline, armed by the
 * outermost call on the handle (db_arm returns whether this one did, for
 * db_disarm). */
bool db_arm(struct db *db, const char *limit, unsigned budget_s);
bool db_arm_io(struct db *db);
void db_disarm(bool armed);
void db_note_timeout(const struct db *db, char *err, size_t errlen);
/* The socket db_abort may cut (-1: none). */
void db_set_fd(struct db *db, int fd);
#if defined(LIBMARIADB)
/* Connector/C's hooks: MARIADB_OPT_IO_WAIT of every handle, and the
 * callback after every read and write (ma_pvio_register_callback). */
int db_io_wait(my_socket fd, my_bool is_read, int timeout_ms);
void db_on_io(int mode, MYSQL *m, const unsigned char *buffer, size_t length);
#endif

/* db_fail.c */
enum db_status db_status_of(unsigned errnum, const char *msg);
/* A failed call: its status, ERR filled from MSG; fails over when the
 * server is unavailable. */
enum db_status db_fail(struct db *db, unsigned errnum, const char *msg, struct db_err *err);
/* db_query without the probe first: for the probe's own statements. */
enum db_status db_query_now(struct db *db, const char *sql, struct db_err *err);

/* db_probe.c */
int64_t db_probe_row(struct db *db, MYSQL_ROW row);
enum db_status db_read_only(struct db *db, int64_t read_only, char *why, size_t len);
enum db_status db_session(struct db *db, struct db_err *err);
enum db_status db_settle(struct db *db, struct db_err *err);

#endif
