#include "db.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mysql.h>

/* The two client flavours differ in a few spellings; keep them here. */
#if defined(LIBMARIADB) || (defined(MYSQL_VERSION_ID) && MYSQL_VERSION_ID < 80000)
typedef my_bool db_bool;
#else
typedef bool db_bool;
#endif

/* --ssl-mode and the certificate files, on either client flavour. */
static void db_set_tls(MYSQL *m, const struct db_config *c)
{
#if defined(LIBMARIADB)
	/* Connector/C has no mode option: any TLS option asks for TLS when the
	 * server offers it (PREFERRED); SSL_ENFORCE fails without it
	 * (REQUIRED); a CA makes it verify the chain (VERIFY_CA); and
	 * VERIFY_SERVER_CERT also checks the host name (VERIFY_IDENTITY). */
	my_bool yes = 1;

	if (c->tls == DB_TLS_DISABLED || (c->tls == DB_TLS_DEFAULT && !c->ssl_ca && !c->ssl_cert && !c->ssl_key))
		return;
	mysql_ssl_set(m, c->ssl_key, c->ssl_cert, c->ssl_ca, NULL, NULL);
	if (c->tls >= DB_TLS_REQUIRED)
		mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &yes);
	if (c->tls == DB_TLS_VERIFY_IDENTITY)
		mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
#else
	static const unsigned modes[] = {
	    [DB_TLS_DISABLED] = SSL_MODE_DISABLED,
	    [DB_TLS_PREFERRED] = SSL_MODE_PREFERRED,
	    [DB_TLS_REQUIRED] = SSL_MODE_REQUIRED,
	    [DB_TLS_VERIFY_CA] = SSL_MODE_VERIFY_CA,
	    [DB_TLS_VERIFY_IDENTITY] = SSL_MODE_VERIFY_IDENTITY,
	};

	if (c->tls != DB_TLS_DEFAULT)
		mysql_options(m, MYSQL_OPT_SSL_MODE, &modes[c->tls]);
	if (c->ssl_ca)
		mysql_options(m, MYSQL_OPT_SSL_CA, c->ssl_ca);
	if (c->ssl_cert)
		mysql_options(m, MYSQL_OPT_SSL_CERT, c->ssl_cert);
	if (c->ssl_key)
		mysql_options(m, MYSQL_OPT_SSL_KEY, c->ssl_key);
#endif
}

static int db_socket_of(MYSQL *m)
{
#if defined(LIBMARIADB)
	return (int)mysql_get_socket(m);
#else
	return (int)m->net.fd;
#endif
}

struct db {
	struct db_config cfg;
	MYSQL *mysql;
	MYSQL_STMT *stmts[DB_MAX_SLOTS];
	/* The socket of the live connection, or -1. Guarded by fd_lock, which
	 * is never held across I/O, so db_abort cannot block on a hung call. */
	pthread_mutex_t fd_lock;
	int fd;
};

int db_library_init(void)
{
	return mysql_library_init(0, NULL, NULL) == 0 ? 0 : -1;
}

void db_library_end(void)
{
	mysql_library_end();
}

/* The strings of a db_config, each owned by the handle: a handle that
 * outlives its creator on an abandoned thread must not read freed memory. */
#define DB_CONFIG_STRINGS(c)                                                                                           \
	&(c)->host, &(c)->user, &(c)->password, &(c)->database, &(c)->socket, &(c)->defaults_file, &(c)->ssl_ca,       \
	    &(c)->ssl_cert, &(c)->ssl_key

struct db *db_new(const struct db_config *cfg)
{
	struct db *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	const char **s[] = {DB_CONFIG_STRINGS(&db->cfg)};
	db->cfg = *cfg;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (*s[i] && !(*s[i] = strdup(*s[i]))) {
			for (size_t k = 0; k < i; k++)
				free((char *)*s[k]);
			free(db);
			return NULL;
		}
	db->fd = -1;
	pthread_mutex_init(&db->fd_lock, NULL);
	return db;
}

void db_free(struct db *db)
{
	if (!db)
		return;
	const char **s[] = {DB_CONFIG_STRINGS(&db->cfg)};

	db_disconnect(db);
	if (db->cfg.password)
		explicit_bzero((char *)db->cfg.password, strlen(db->cfg.password));
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		free((char *)*s[i]);
	pthread_mutex_destroy(&db->fd_lock);
	free(db);
}

bool db_connected(const struct db *db)
{
	return db->mysql != NULL;
}

static void db_set_fd(struct db *db, int fd)
{
	pthread_mutex_lock(&db->fd_lock);
	db->fd = fd;
	pthread_mutex_unlock(&db->fd_lock);
}

void db_abort(struct db *db)
{
	pthread_mutex_lock(&db->fd_lock);
	if (db->fd >= 0)
		shutdown(db->fd, SHUT_RDWR);
	pthread_mutex_unlock(&db->fd_lock);
}

void db_disconnect(struct db *db)
{
	if (!db->mysql)
		return;
	/* Forget the fd first: once mysql_close frees it, the number may be
	 * reused by another descriptor that db_abort must never touch. */
	db_set_fd(db, -1);
	for (unsigned i = 0; i < DB_MAX_SLOTS; i++) {
		if (db->stmts[i])
			mysql_stmt_close(db->stmts[i]);
		db->stmts[i] = NULL;
	}
	mysql_close(db->mysql);
	db->mysql = NULL;
}

static enum db_status db_fail(struct db *db, unsigned errnum, const char *msg, char *err, size_t errlen)
{
	enum db_status st = dberr_classify(errnum);

	snprintf(err, errlen, "%s (error %u)", msg, errnum);
	if (st == DB_UNAVAILABLE)
		db_disconnect(db);
	return st == DB_OK ? DB_ERROR : st;
}

enum db_status db_connect(struct db *db, char *err, size_t errlen)
{
	const struct db_config *c = &db->cfg;
	unsigned ct = c->connect_timeout_s ? c->connect_timeout_s : 10;
	unsigned io = c->io_timeout_s ? c->io_timeout_s : 10;
	MYSQL *m;

	db_disconnect(db);
	m = mysql_init(NULL);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return DB_ERROR;
	}
	/* These are whole seconds per I/O wait, a backstop only: deadlines
	 * never depend on them (the supervisor keeps its own clock and calls
	 * db_abort). */
	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &io);
	mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &io);
	if (c->defaults_file)
		mysql_options(m, MYSQL_READ_DEFAULT_FILE, c->defaults_file);
	if (c->defaults_file || c->read_option_files)
		mysql_options(m, MYSQL_READ_DEFAULT_GROUP, "leaderrun");
	db_set_tls(m, c);

	/* CLIENT_FOUND_ROWS: an UPDATE reports rows matched, so a renew that
	 * writes the same values (same microsecond) is not mistaken for a
	 * lost lease. No CLIENT_MULTI_STATEMENTS, ever. */
	if (!mysql_real_connect(m, c->host, c->user, c->password, c->database, c->port, c->socket, CLIENT_FOUND_ROWS)) {
		unsigned e = mysql_errno(m);
		snprintf(err, errlen, "%s (error %u)", mysql_error(m), e);
		mysql_close(m);
		return dberr_classify(e) == DB_OK ? DB_ERROR : dberr_classify(e);
	}
	/* Connector/C 3.3 connects in plain text to a server without TLS even
	 * with SSL_ENFORCE set; a required mode is checked here, on both
	 * flavours. */
	if (c->tls >= DB_TLS_REQUIRED && !mysql_get_ssl_cipher(m)) {
		snprintf(err, errlen, "TLS/SSL error: --ssl-mode requires TLS, but the server does not offer it");
		mysql_close(m);
		return DB_UNAVAILABLE;
	}
	db->mysql = m;
	db_set_fd(db, db_socket_of(m));

	/* Option files are applied inside mysql_real_connect and could carry an
	 * init-command; assert the session settings the protocol relies on
	 * after it. A short lock wait turns row contention into a quick
	 * "not acquired, retry" instead of a stall. */
	return db_query(db, "SET SESSION innodb_lock_wait_timeout=1, wait_timeout=28800", err, errlen);
}

enum db_status db_query(struct db *db, const char *sql, char *err, size_t errlen)
{
	if (!db->mysql) {
		snprintf(err, errlen, "not connected");
		return DB_UNAVAILABLE;
	}
	if (mysql_query(db->mysql, sql) != 0)
		return db_fail(db, mysql_errno(db->mysql), mysql_error(db->mysql), err, errlen);
	return DB_OK;
}

enum db_status db_query_int(struct db *db, const char *sql, int64_t *out, char *err, size_t errlen)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	enum db_status st = db_query(db, sql, err, errlen);

	*out = -1;
	if (st != DB_OK)
		return st;
	res = mysql_store_result(db->mysql);
	if (!res)
		return db_fail(db, mysql_errno(db->mysql), mysql_error(db->mysql), err, errlen);
	row = mysql_fetch_row(res);
	if (row && row[0])
		*out = strtoll(row[0], NULL, 10);
	mysql_free_result(res);
	return DB_OK;
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

static enum db_status db_stmt_fail(struct db *db, MYSQL_STMT *st, char *err, size_t errlen)
{
	return db_fail(db, mysql_stmt_errno(st), mysql_stmt_error(st), err, errlen);
}

enum db_status db_exec_each(struct db *db, unsigned slot, const char *sql, const struct db_value *params,
			    unsigned nparams, struct db_value *cols, unsigned ncols, db_row_fn *on_row, void *ctx,
			    struct db_result *res, char *err, size_t errlen)
{
	MYSQL_BIND pb[DB_MAX_SLOTS], cb[DB_MAX_SLOTS];
	unsigned long plen[DB_MAX_SLOTS], clen[DB_MAX_SLOTS];
	db_bool pnull[DB_MAX_SLOTS], cnull[DB_MAX_SLOTS];
	MYSQL_STMT *st;

	memset(res, 0, sizeof(*res));
	if (slot >= DB_MAX_SLOTS || nparams > DB_MAX_SLOTS || ncols > DB_MAX_SLOTS) {
		snprintf(err, errlen, "internal error: statement slot out of range");
		return DB_ERROR;
	}
	if (!db->mysql) {
		snprintf(err, errlen, "not connected");
		return DB_UNAVAILABLE;
	}
	st = db->stmts[slot];
	if (!st) {
		st = mysql_stmt_init(db->mysql);
		if (!st)
			return db_fail(db, mysql_errno(db->mysql), mysql_error(db->mysql), err, errlen);
		if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0) {
			enum db_status s;
			/* Copy the error out before the handle goes. */
			char msg[512];
			unsigned e = mysql_stmt_errno(st);
			snprintf(msg, sizeof(msg), "%s", mysql_stmt_error(st));
			mysql_stmt_close(st);
			s = db_fail(db, e, msg, err, errlen);
			return s;
		}
		db->stmts[slot] = st;
	}

	for (unsigned i = 0; i < nparams; i++) {
		/* A NULL string parameter is SQL NULL. */
		pnull[i] = params[i].is_null || (params[i].type == DB_STR && !params[i].str);
		db_bind_value(&pb[i], &params[i], &plen[i], &pnull[i]);
		plen[i] = pb[i].buffer_length;
	}
	if (nparams && mysql_stmt_bind_param(st, pb) != 0)
		return db_stmt_fail(db, st, err, errlen);
	if (mysql_stmt_execute(st) != 0)
		return db_stmt_fail(db, st, err, errlen);

	res->affected = (uint64_t)mysql_stmt_affected_rows(st);
	res->insert_id = (uint64_t)mysql_stmt_insert_id(st);
	if (!cols)
		return DB_OK;

	for (unsigned i = 0; i < ncols; i++) {
		cnull[i] = 0;
		clen[i] = 0;
		db_bind_value(&cb[i], &cols[i], &clen[i], &cnull[i]);
	}
	if (mysql_stmt_bind_result(st, cb) != 0)
		return db_stmt_fail(db, st, err, errlen);
	for (;;) {
		switch (mysql_stmt_fetch(st)) {
		case 0:
		case MYSQL_DATA_TRUNCATED:
			break;
		case MYSQL_NO_DATA:
			mysql_stmt_free_result(st);
			return DB_OK;
		default: {
			enum db_status s = db_stmt_fail(db, st, err, errlen);
			if (db->mysql)
				mysql_stmt_free_result(st);
			return s;
		}
		}
		res->have_row = true;
		for (unsigned i = 0; i < ncols; i++) {
			cols[i].is_null = cnull[i] != 0;
			if (cols[i].type == DB_STR && cols[i].buf && cols[i].cap) {
				size_t n = clen[i] < cols[i].cap - 1 ? clen[i] : cols[i].cap - 1;
				cols[i].buf[cnull[i] ? 0 : n] = '\0';
			}
		}
		if (!on_row)
			break;
		on_row(ctx, cols);
	}
	mysql_stmt_free_result(st);
	return DB_OK;
}

enum db_status db_exec(struct db *db, unsigned slot, const char *sql, const struct db_value *params, unsigned nparams,
		       struct db_value *cols, unsigned ncols, struct db_result *res, char *err, size_t errlen)
{
	return db_exec_each(db, slot, sql, params, nparams, cols, ncols, NULL, NULL, res, err, errlen);
}
