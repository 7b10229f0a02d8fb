#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <mysql.h>

#include "config.h"

#include "base/dlib.h"
#include "base/duration.h"
#include "base/timing.h"
#include "galera.h"
#include "tlspolicy.h"

/* The client library's functions, called through this table (dlib.h). In
 * the default build the library is loaded with dlopen by db_library_init,
 * so that runs that never reach a database (--version, --help, a usage
 * error) do not pay for mapping it and its TLS stack (issue 13: the dynamic
 * loader maps every DT_NEEDED library before main). A static build
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

static struct {
	DB_API(DLIB_FIELD)
	unsigned *port; /* Connector/C's mysql_port: its default TCP port */
	/* OpenSSL's OPENSSL_init_crypto, when the library uses OpenSSL. */
	int (*openssl_init)(uint64_t opts, const void *settings);
} lib;

#if LEADERRUN_LAZY_LOAD
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>

/* Connector/C looks its default port up with getservbyname("mysql", "tcp")
 * at initialisation, whatever the DSN says (mysql_once_init, when its
 * mysql_port is 0, which a shared libmariadb does not export). On glibc that
 * walks NSS: issue 13 counted about 50 failed opens of libnss_db paths in
 * every run. The executable exports this definition (meson.build:
 * --export-dynamic-symbol), so the library's call lands here: the answer
 * is the registered 3306, and MYSQL_TCP_PORT still overrides it there. An
 * /etc/services that moves "mysql" elsewhere is not read. Any other
 * lookup goes to the C library's own. */
struct servent *getservbyname(const char *name, const char *proto)
{
	static char mysql_name[] = "mysql", tcp[] = "tcp";
	static char *no_aliases[] = {NULL};
	static struct servent mysql_tcp = {.s_name = mysql_name, .s_aliases = no_aliases, .s_proto = tcp};
	struct servent *(*next)(const char *, const char *);
	void *sym;

	if (name && proto && strcmp(name, "mysql") == 0 && strcmp(proto, "tcp") == 0) {
		mysql_tcp.s_port = (int)htons(3306);
		return &mysql_tcp;
	}
	sym = dlsym(RTLD_NEXT, "getservbyname");
	if (!sym)
		return NULL;
	memcpy(&next, &sym, sizeof(sym));
	return next(name, proto);
}

static int db_library_load(char *err, size_t errlen)
{
	static const struct dlib_sym syms[] = {
	    DB_API(DLIB_SYM)
	    /* libcrypto, which the client library brought in. */
	    {"OPENSSL_init_crypto", &lib.openssl_init, true},
	};

	if (lib.mysql_init)
		return 0;
	/* LEADERRUN_CLIENT_SONAME: the soname of the library found at build
	 * time (meson.build). Lazy binding: the functions used are looked up
	 * here, and the library's own calls bind on first use. (Debian links
	 * libcrypto with BIND_NOW, so its relocations are paid anyway: the
	 * largest part of what a dynamic run costs over a static one.) */
	if (!dlib_load(LEADERRUN_CLIENT_SONAME, RTLD_LAZY, "the client library", syms, sizeof(syms) / sizeof(syms[0]),
		       err, errlen))
		return -1;
	/* Not in the library's exported symbols: see getservbyname above. */
	lib.port = NULL;
	return 0;
}
#else
/* From <openssl/crypto.h>, which only db.c's static build needs: the
 * settings pointer is opaque (OPENSSL_INIT_SETTINGS). */
int OPENSSL_init_crypto(uint64_t opts, const void *settings);

static int db_library_load(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	DB_API(DLIB_LINK)
	lib.port = &mysql_port;
	lib.openssl_init = OPENSSL_init_crypto;
	return 0;
}
#endif

/* The two client flavours differ in a few spellings; keep them here. */
#if defined(LIBMARIADB) || (defined(MYSQL_VERSION_ID) && MYSQL_VERSION_ID < 80000)
typedef my_bool db_bool;
#else
typedef bool db_bool;
#endif

/* Does MODE ask for TLS only when the server offers it, with the options
 * of C (CA, certificate, key)? PREFERRED; and the library's default with a
 * TLS option given, which Connector/C takes as PREFERRED. libmysqlclient's
 * own SSL_MODE_PREFERRED authenticates as a plain connection when TLS did
 * not come about, so only Connector/C needs the second try. */
static bool db_tls_opportunistic(const struct db_config *c, enum db_tls mode, const char *ca)
{
#if defined(LIBMARIADB)
	return mode == DB_TLS_PREFERRED || (mode == DB_TLS_DEFAULT && (ca || c->ssl_cert || c->ssl_key));
#else
	(void)c;
	(void)ca;
	return false;
#endif
}

/* Did the connect on M fail only because TLS was asked for and the server
 * offers none (plugins/auth/my_auth.c, before anything of the login is
 * sent)? CR_SSL_CONNECTION_ERROR also carries every failed handshake and
 * certificate, which must not fall back: only this reason does. */
static bool db_tls_absent(MYSQL *m)
{
	return lib.mysql_errno(m) == 2026 && strstr(lib.mysql_error(m), "server does not support it") != NULL;
}

/* The TLS options for one host in MODE (tlspolicy_mode), verifying against
 * CA, on either client flavour. Issue 20: in a VERIFY mode nothing may go
 * to a server before it is verified, the login included. */
#if defined(LIBMARIADB)
/* Connector/C. */
static void db_set_tls(MYSQL *m, const struct db_config *c, enum db_tls mode, const char *ca)
{
	/* Connector/C has no mode option: any TLS option asks for TLS when the
	 * server offers it (PREFERRED); SSL_ENFORCE fails without it
	 * (REQUIRED); a CA makes it verify the chain (VERIFY_CA); and
	 * VERIFY_SERVER_CERT also checks the host name (VERIFY_IDENTITY). */
	my_bool yes = 1;

	if (mode == DB_TLS_DISABLED || (mode == DB_TLS_DEFAULT && !ca && !c->ssl_cert && !c->ssl_key))
		return;

#if MARIADB_PACKAGE_VERSION_ID < 30400
	/* Never PREFERRED as Connector/C does it: any TLS option makes its
	 * caching_sha2_password and sha256_password take the connection for
	 * a secure one (is_connection_secure tests use_ssl, not the TLS that
	 * came of it) and answer a TLS-less MySQL's full authentication with
	 * the password in clear text over TCP. An opportunistic mode asks
	 * for TLS as REQUIRED does, and db_connect_host connects again with
	 * no TLS option at all when the server offers none (db_tls_absent).
	 * 3.4 refuses such a server before the login already, as it verifies
	 * by default. */
	if (db_tls_opportunistic(c, mode, ca))
		mode = DB_TLS_REQUIRED;
#endif
	lib.mysql_ssl_set(m, c->ssl_key, c->ssl_cert, ca, NULL, NULL);
	if (mode >= DB_TLS_REQUIRED)
		lib.mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &yes);
	if (mode == DB_TLS_VERIFY_IDENTITY)
		lib.mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
#if MARIADB_PACKAGE_VERSION_ID < 30400
	/* Connector/C 3.3 sends the login in plain text to a server that
	 * offers no TLS even with SSL_ENFORCE (plugins/auth/my_auth.c,
	 * send_client_reply_packet): it refuses before the login only with
	 * VERIFY_SERVER_CERT or a pinned fingerprint. An empty fingerprint
	 * is "pinned" for that check (it tests the pointer), while the
	 * fingerprint comparison after the handshake is skipped (ma_pvio.c
	 * tests fp[0]); the chain is still verified against the CA. So
	 * REQUIRED and VERIFY_CA refuse a TLS-less server before the login
	 * too. tests/integration/test_tls.c pins this with the server's
	 * general log. 3.4 refuses before the login whenever it verifies. */
	if (mode == DB_TLS_REQUIRED || mode == DB_TLS_VERIFY_CA)
		lib.mysql_options(m, MARIADB_OPT_TLS_PEER_FP, "");
#else
	/* 3.4 verifies by default: REQUIRED is encryption only, as in MySQL.
	 * It has no chain-only check: VERIFY_CA also checks the name there. */
	if (mode == DB_TLS_REQUIRED) {
		my_bool no = 0;
		lib.mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &no);
	} else if (mode == DB_TLS_VERIFY_CA)
		lib.mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &yes);
#endif
}
#else
/* libmysqlclient. */
static void db_set_tls(MYSQL *m, const struct db_config *c, enum db_tls mode, const char *ca)
{
	static const unsigned modes[] = {
	    [DB_TLS_DISABLED] = SSL_MODE_DISABLED,
	    [DB_TLS_PREFERRED] = SSL_MODE_PREFERRED,
	    [DB_TLS_REQUIRED] = SSL_MODE_REQUIRED,
	    [DB_TLS_VERIFY_CA] = SSL_MODE_VERIFY_CA,
	    [DB_TLS_VERIFY_IDENTITY] = SSL_MODE_VERIFY_IDENTITY,
	};

	/* libmysqlclient 8 verifies before it sends the login in the VERIFY
	 * modes. */
	if (mode != DB_TLS_DEFAULT)
		lib.mysql_options(m, MYSQL_OPT_SSL_MODE, &modes[mode]);
	if (ca)
		lib.mysql_options(m, MYSQL_OPT_SSL_CA, ca);
	if (c->ssl_cert)
		lib.mysql_options(m, MYSQL_OPT_SSL_CERT, c->ssl_cert);
	if (c->ssl_key)
		lib.mysql_options(m, MYSQL_OPT_SSL_KEY, c->ssl_key);
}
#endif

static int db_socket_of(MYSQL *m)
{
#if defined(LIBMARIADB)
	return (int)lib.mysql_get_socket(m);
#else
	return (int)m->net.fd;
#endif
}

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
	/* Statements carry the session settings themselves (db_connect_one). */
	bool stmt_settings;
	/* unprobed: connected, and the probe still to come, with the first
	 * compound statement or before any other (cfg.probe_late).
	 * blocks_off: this server (or a proxy before it) took no compound
	 * statement; never tried again on this handle. */
	bool unprobed, blocks_off;
	int64_t wait_timeout_s; /* the session's, as the probe read it */
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

#if defined(LIBMARIADB)
static void db_on_io(int mode, MYSQL *m, const unsigned char *buffer, size_t length);
#endif

/* Could a connection of C use TLS? Not when every host is local and
 * nothing (no CA, certificate or key, no option file) asks for it. */
static bool db_config_may_use_tls(const struct db_config *c)
{
	unsigned n = c->nhosts ? c->nhosts : 1;

	if (c->ssl_ca || c->ssl_cert || c->ssl_key || c->defaults_file || c->read_option_files)
		return true;
	for (unsigned i = 0; i < n; i++) {
		enum db_tls mode = tlspolicy_mode(c->tls, c->nhosts ? c->hosts[i].name : NULL);
		if (mode != DB_TLS_DISABLED && mode != DB_TLS_DEFAULT)
			return true;
	}
	return false;
}

int db_library_init(const struct db_config *cfg, char *err, size_t errlen)
{
	if (db_library_load(err, errlen) < 0)
		return -1;
	/* Connector/C initialises OpenSSL with OPENSSL_INIT_LOAD_CONFIG, which
	 * reads openssl.cnf in every run (issue 13). A run that cannot use TLS
	 * initialises it first without: the system's TLS policy has nothing
	 * to say to a socket or loopback connection in plain text. Nor does it
	 * need OpenSSL's table of every cipher and digest by name (the
	 * authentication plugins call EVP_sha1 and the like directly): filling
	 * it was the largest part of the initialisation. The first call wins
	 * (each is a run-once in OpenSSL 1.1 and 3). A run that may use TLS
	 * keeps the system's configuration and the tables. Either way OpenSSL
	 * registers no atexit handler: freeing all it holds was a tenth of a
	 * static run's instructions, spent on the way to the exit. */
	if (lib.openssl_init) {
		uint64_t opts = 0x00080000L; /* OPENSSL_INIT_NO_ATEXIT */
		if (!db_config_may_use_tls(cfg)) {
			opts |= 0x00000080L; /* OPENSSL_INIT_NO_LOAD_CONFIG */
			opts |= 0x00000010L; /* OPENSSL_INIT_NO_ADD_ALL_CIPHERS */
			opts |= 0x00000020L; /* OPENSSL_INIT_NO_ADD_ALL_DIGESTS */
		}
		lib.openssl_init(opts, NULL);
	}
	/* Connector/C looks its default port up with getservbyname("mysql")
	 * when mysql_port is 0, at initialisation, whatever the DSN: a static
	 * build has the variable, and no NSS. The port it would find is the
	 * registered 3306; MYSQL_TCP_PORT still wins, as there. */
	if (lib.port && *lib.port == 0) {
		const char *env = getenv("MYSQL_TCP_PORT");
		char *end;
		unsigned long p = env ? strtoul(env, &end, 10) : 0;
		*lib.port = env && *env && !*end && p > 0 && p < 65536 ? (unsigned)p : 3306;
	}
	if (lib.mysql_server_init(0, NULL, NULL) != 0) {
		snprintf(err, errlen, "cannot initialise the client library");
		return -1;
	}
#if defined(LIBMARIADB)
	/* Once per process, before any thread: the list is not locked. */
	static bool watching;
	if (!watching && lib.openssl_init)
		lib.ma_pvio_register_callback(1, db_on_io);
	watching = true;
#endif
	return 0;
}

void db_library_end(void)
{
	lib.mysql_server_end();
}

/* The strings of a db_config, each owned by the handle: a handle that
 * outlives its creator on an abandoned thread must not read freed memory. */
#define DB_CONFIG_MAX_STRINGS (9 + DB_MAX_HOSTS)

/* The addresses of C's strings (the host names included) into OUT;
 * returns how many. */
static size_t db_config_strings(struct db_config *c, const char **out[DB_CONFIG_MAX_STRINGS])
{
	const char **fixed[] = {&c->user,   &c->password, &c->database, &c->socket,   &c->defaults_file,
				&c->ssl_ca, &c->ssl_cert, &c->ssl_key,	&c->system_ca};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		out[n++] = fixed[i];
	for (unsigned i = 0; i < c->nhosts && i < DB_MAX_HOSTS; i++)
		out[n++] = &c->hosts[i].name;
	return n;
}

/* Fisher-Yates with the kernel's randomness: contenders that share one
 * DSN should not all pile onto the same first host. */
static void db_shuffle(unsigned *v, unsigned n)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned r = 0, j;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (unsigned)i * 2654435761u;
		j = r % i;
		unsigned t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

struct db *db_new(const struct db_config *cfg)
{
	struct db *db = calloc(1, sizeof(*db));

	const char **s[DB_CONFIG_MAX_STRINGS];
	size_t n;

	if (!db)
		return NULL;
	db->cfg = *cfg;
	n = db_config_strings(&db->cfg, s);
	for (size_t i = 0; i < n; i++)
		if (*s[i] && !(*s[i] = strdup(*s[i]))) {
			for (size_t k = 0; k < i; k++)
				free((char *)*s[k]);
			free(db);
			return NULL;
		}
	db->fd = -1;
	pthread_mutex_init(&db->fd_lock, NULL);
	for (unsigned i = 0; i < DB_MAX_HOSTS; i++)
		db->order[i] = i;
	if (db->cfg.random_order && db->cfg.nhosts > 1)
		db_shuffle(db->order, db->cfg.nhosts);
	return db;
}

void db_free(struct db *db)
{
	const char **s[DB_CONFIG_MAX_STRINGS];
	size_t n;

	if (!db)
		return;
	n = db_config_strings(&db->cfg, s);
	db_disconnect(db);
	if (db->cfg.password)
		explicit_bzero((char *)db->cfg.password, strlen(db->cfg.password));
	for (size_t i = 0; i < n; i++)
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

/* ---- the deadline of a call (issue 25) ------------------------------------
 *
 * The client library bounds each wait on the socket (MYSQL_OPT_CONNECT,
 * READ and WRITE_TIMEOUT), not a call: a server that sends a byte now and
 * then (announcing a 100 kB greeting, then one byte every 2 s) kept a
 * connect going for ever, and with it -n, --status and a renew's reconnect,
 * and a DSN's next host was never tried. db_abort could not cut it either:
 * the socket was known only once the connect had returned.
 *
 * Connector/C lets a function do every wait on the socket instead
 * (MARIADB_OPT_IO_WAIT; plugins/pvio/pvio_socket.c,
 * pvio_socket_wait_io_or_timeout, called when a read or write would
 * block, and for the TCP connect's EINPROGRESS). db_io_wait waits no
 * later than the deadline of the call in progress, whatever the library
 * asked: the connect timeout for the whole of a connect (TCP, greeting,
 * TLS, login, and the probe and set-up statements), the I/O timeout for
 * a statement with all its rows. It also learns the socket at its first
 * wait, so that db_abort can cut a connect.
 *
 * The function gets no user data, only the socket; each thread makes one
 * call at a time, on one handle, so the handle of that call is found in a
 * thread-local (db_active; NULL between calls).
 *
 * Connector/C's OpenSSL layer reads the socket directly (SSL_connect,
 * SSL_read), and the socket is a blocking one: pvio_socket_connect makes
 * it so after the TCP connect, and ma_tls_connect (libmariadb/secure/
 * openssl.c) leaves it so. Each read then has its own timeout
 * (SO_RCVTIMEO): a handshake trickled inside TLS never reached the wait. Its loops wait through the
 * same function on SSL_ERROR_WANT_READ, so the socket is made non-blocking
 * before the TLS handshake starts (db_on_io, after the greeting): its reads
 * then come back to db_io_wait too. The plain protocol reads and writes
 * with MSG_DONTWAIT already, and does not notice. Not with GnuTLS, whose
 * handshake would spin on a non-blocking socket: there, as with Oracle's
 * libmysqlclient (no such option at all), each read is bounded, not the
 * call; the supervisor still cuts a hung renew once the connection is up.
 *
 * Name resolution (getaddrinfo inside the library) is not a wait on a
 * socket and is not covered: the resolver's own timeouts apply. */
static _Thread_local struct db *db_active;

/* Starts a call on DB with BUDGET_S seconds to run, unless a call that contains
 * this one (a connect's set-up statements, a close after a failure) has
 * armed the deadline already. Returns whether this call armed it. */
static bool db_arm(struct db *db, const char *limit, unsigned budget_s)
{
	if (db_active == db)
		return false;
	db_active = db;
	db->until = timing_now() + (int64_t)budget_s * USEC_PER_SEC;
	db->timed_out = false;
	db->limit = limit;
	db->limit_s = budget_s;
	return true;
}

static void db_disarm(bool armed)
{
	if (armed)
		db_active = NULL;
}

/* Arms the I/O timeout for a statement, with all its rows, or a close. */
static bool db_arm_io(struct db *db)
{
	return db_arm(db, "I/O timeout", db->cfg.io_timeout_s ? db->cfg.io_timeout_s : 10);
}

/* ERR, a failure's message, says so when the deadline of the call ran
 * out: the library's own words (a lost connection, a system error) do
 * not. */
static void db_note_timeout(const struct db *db, char *err, size_t errlen)
{
	size_t n = strlen(err);

	if (db->timed_out && n < errlen)
		snprintf(err + n, errlen - n, "; the %s (%us) ran out", db->limit, db->limit_s);
}

#if defined(LIBMARIADB)
/* Remembers FD as the socket of DB's call, for db_abort. */
static void db_note_fd(struct db *db, int fd)
{
	pthread_mutex_lock(&db->fd_lock);
	db->fd = fd;
	pthread_mutex_unlock(&db->fd_lock);
}

/* MARIADB_OPT_IO_WAIT: >0 ready, 0 timed out, <0 failed. TIMEOUT_MS, the
 * library's bound for this wait, is ignored for a call of ours: the call's
 * deadline is never later (and the TLS layer passes seconds there). */
static int db_io_wait(my_socket fd, my_bool is_read, int timeout_ms)
{
	struct db *db = db_active;
	struct pollfd p = {.fd = (int)fd, .events = is_read ? POLLIN : POLLOUT};
	int rc;

	if (!db) {
		/* Not inside a call of ours: what the library would do. */
		while ((rc = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1)) < 0 && errno == EINTR)
			;
		return rc;
	}
	if (db->fd != (int)fd)
		db_note_fd(db, (int)fd);
	for (;;) {
		int64_t left = db->until - timing_now();
		if (left <= 0) {
			db->timed_out = true;
			errno = ETIMEDOUT;
			return 0;
		}
		rc = poll(&p, 1, (int)((left + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
		if (rc != 0 && !(rc < 0 && errno == EINTR))
			return rc;
	}
}

/* After every read and write: the first one of a connect in progress on
 * this thread (the greeting) makes its socket non-blocking, before TLS
 * begins (see above). Registered only when the library uses OpenSSL. */
static void db_on_io(int mode, MYSQL *m, const unsigned char *buffer, size_t length)
{
	struct db *db = db_active;
	int fd, fl;

	(void)mode;
	(void)buffer;
	(void)length;
	if (!db || db->connecting != m)
		return;
	db->connecting = NULL; /* once */
	fd = (int)lib.mysql_get_socket(m);
	if (fd < 0 || (fl = fcntl(fd, F_GETFL)) < 0)
		return;
	if (!(fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (db->fd != fd)
		db_note_fd(db, fd);
}
#endif

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
	 * on the way out: the server drops a session's statements with it
	 * (issue 13). */
	lib.mysql_close(db->mysql);
	for (unsigned i = 0; i < DB_MAX_STMTS; i++) {
		if (db->stmts[i])
			lib.mysql_stmt_close(db->stmts[i]);
		db->stmts[i] = NULL;
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
static enum db_status db_status_of(unsigned errnum, const char *msg)
{
	enum db_status st = dberr_classify_msg(errnum, msg);

	return st == DB_OK ? DB_ERROR : st;
}

static enum db_status db_fail(struct db *db, unsigned errnum, const char *msg, char *err, size_t errlen)
{
	enum db_status st = db_status_of(errnum, msg);

	snprintf(err, errlen, "%s (error %u)", msg, errnum);
	db_note_timeout(db, err, errlen);
	if (st == DB_UNAVAILABLE)
		db_fail_over(db);
	return st;
}

/* One integer column of a text query's first row; -1 for NULL or none. */
static int64_t db_row_int(MYSQL_ROW row, unsigned col)
{
	return row && row[col] ? strtoll(row[col], NULL, 10) : -1;
}

#define DB_PROBE_DURABILITY "@@global.innodb_flush_log_at_trx_commit, @@global.log_bin, @@global.sync_binlog"
#define DB_PROBE_COLUMNS                                                                                               \
	"@@global.read_only, @@global.wsrep_on, @@global.wsrep_provider_options, "                                     \
	"@@session.wait_timeout, " DB_PROBE_DURABILITY

/* The probe's row (DB_PROBE_COLUMNS) into db->server; returns read_only. */
static int64_t db_probe_row(struct db *db, MYSQL_ROW row)
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
static enum db_status db_read_only(struct db *db, int64_t read_only, char *why, size_t len)
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
	 * that are not durable (issue 27): no statement of their own. */
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
	db_note_timeout(db, why, len);
	return db_status_of(e, lib.mysql_error(m));
}

/* Closes M, a connect that failed. The wait may have told db_abort its
 * socket: forgotten first, as in db_disconnect. */
static void db_close_failed(struct db *db, MYSQL *m)
{
	db_set_fd(db, -1);
	lib.mysql_close(m);
}

/* "NAME:PORT", "[V6]:PORT", or NAME alone when the port is the default. */
static void db_host_label(const struct db_host *h, char *buf, size_t len)
{
	bool v6 = strchr(h->name, ':') != NULL;

	snprintf(buf, len, "%s%s%s", v6 ? "[" : "", h->name, v6 ? "]" : "");
	if (h->port && strlen(buf) < len)
		snprintf(buf + strlen(buf), len - strlen(buf), ":%u", h->port);
}

/* Connector/C's login plugins that never put the password itself on the
 * wire: not mysql_clear_password nor dialog, which a server (or whoever
 * answers in its place on a plain connection) may switch the login to. */
#define DB_AUTH_NOT_CLEAR                                                                                              \
	"mysql_native_password,caching_sha2_password,sha256_password,client_ed25519,parsec,auth_gssapi_client"

/* A handle for host H in mode MODE, verifying against CA, before it
 * connects. */
static MYSQL *db_handle(const struct db_config *c, const struct db_host *h, enum db_tls mode, const char *ca,
			unsigned ct)
{
	unsigned io = c->io_timeout_s ? c->io_timeout_s : 10;
	MYSQL *m = lib.mysql_init(NULL);

	if (!m)
		return NULL;
	/* These are whole seconds per I/O wait, a backstop only: deadlines
	 * never depend on them (each call has its own, db_arm; the supervisor
	 * keeps its own clock and calls db_abort). */
	lib.mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	lib.mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &io);
	lib.mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &io);
#if defined(LIBMARIADB)
	{
		int (*wait)(my_socket, my_bool, int) = db_io_wait;
		void *arg;
		/* A function pointer passed as the option's void *, as
		 * Connector/C reads it back (ISO C has no direct cast). */
		memcpy(&arg, &wait, sizeof(arg));
		lib.mysql_options(m, MARIADB_OPT_IO_WAIT, arg);
	}
#else
	{
		/* caching_sha2_password (MySQL 8's default) over TCP without
		 * TLS, while the server has not cached the password: it goes
		 * RSA-encrypted under the server's public key, which
		 * libmysqlclient asks for only when told; else every such
		 * login fails with error 2061. Connector/C asks by itself. As
		 * there, the key comes over the unverified connection: only a
		 * verifying TLS mode keeps the password from a man in the
		 * middle (SECURITY in leaderrun-safety(7)). */
		db_bool yes = 1;
		lib.mysql_options(m, MYSQL_OPT_GET_SERVER_PUBLIC_KEY, &yes);
	}
#endif
	if (c->defaults_file)
		lib.mysql_options(m, MYSQL_READ_DEFAULT_FILE, c->defaults_file);
	if (c->defaults_file || c->read_option_files)
		lib.mysql_options(m, MYSQL_READ_DEFAULT_GROUP, "leaderrun");
	db_set_tls(m, c, mode, ca);
#if defined(LIBMARIADB)
	/* Over TCP without TLS, a login in clear text is refused before it
	 * goes out (libmysqlclient refuses the clear-text plugin itself). */
	if (h->name && strcmp(h->name, "localhost") != 0 &&
	    (mode == DB_TLS_DISABLED || (mode == DB_TLS_DEFAULT && !ca && !c->ssl_cert && !c->ssl_key)))
		lib.mysql_options(m, MARIADB_OPT_RESTRICTED_AUTH, DB_AUTH_NOT_CLEAR);
#else
	(void)h;
#endif
	return m;
}

/* Connects the handle M to host H (TLS MODE, verifying against CA): the
 * TCP connect, the greeting, TLS and the login. On failure M is closed and
 * ERR says why, naming the TLS mode when TLS refused the server; or, given
 * ABSENT, sets it when the server only offered no TLS (db_tls_absent). */
static enum db_status db_handshake(struct db *db, MYSQL *m, const struct db_host *h, enum db_tls mode, const char *ca,
				   bool *absent, char *err, size_t errlen)
{
	const struct db_config *c = &db->cfg;
	enum db_status st;
	bool connected;
	unsigned e;
	int slack;

	/* CLIENT_FOUND_ROWS: an UPDATE reports rows matched, so a renew that
	 * writes the same values (same microsecond) is not mistaken for a
	 * lost lease. No CLIENT_MULTI_STATEMENTS, ever. */
	/* Connector/C sleeps usleep(1) after its socket's connect(), even one
	 * that succeeded at once (pvio_socket_internal_connect); with the
	 * thread's default 50 us of timer slack that is tens of microseconds
	 * of every connect (issue 13). This thread's slack is 1 ns meanwhile. */
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	db->connecting = m;
	connected = lib.mysql_real_connect(m, h->name, c->user, c->password, c->database, h->port, c->socket,
					   CLIENT_FOUND_ROWS) != NULL;
	db->connecting = NULL;
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	if (connected)
		return DB_OK;
	e = lib.mysql_errno(m);
	if (absent && !db->timed_out && db_tls_absent(m)) {
		*absent = true;
		db_close_failed(db, m);
		return DB_ERROR;
	}
	/* A deadline that ran out is that, whatever TLS made of the cut it
	 * met. */
	st = mode >= DB_TLS_REQUIRED && !db->timed_out ? dberr_classify_tls(e, lib.mysql_error(m))
						       : db_status_of(e, lib.mysql_error(m));
	/* Leaderrun's words first, the library's after: they differ between
	 * Connector/C and libmysqlclient, and only the first say "TLS". */
	if (st == DB_UNTRUSTED)
		snprintf(err, errlen, "--ssl-mode %s%s%s refused the server: %s (%s, error %u)",
			 tlspolicy_mode_name(mode), tlspolicy_verifies(mode) ? " against " : "",
			 tlspolicy_verifies(mode) && ca ? ca : "", dberr_tls_reason(e, lib.mysql_error(m)),
			 lib.mysql_error(m), e);
	else
		snprintf(err, errlen, "%s (error %u)", lib.mysql_error(m), e);
	db_note_timeout(db, err, errlen);
	db_close_failed(db, m);
	return st == DB_OK ? DB_ERROR : st;
}

/* The connection M to host H becomes the live one: what db_server_info
 * says of it (its name, its TLS). */
static void db_take(struct db *db, MYSQL *m, const struct db_host *h, enum db_tls mode, const char *ca)
{
	const char *cipher = lib.mysql_get_ssl_cipher(m);

	db->mysql = m;
	db_set_fd(db, db_socket_of(m));
	memset(&db->server, 0, sizeof(db->server));
	if (!cipher)
		snprintf(db->server.tls, sizeof(db->server.tls), "no TLS");
	else if (tlspolicy_verifies(mode))
		snprintf(db->server.tls, sizeof(db->server.tls), "TLS %s, certificate verified (%s, CA %s)", cipher,
			 tlspolicy_mode_name(mode), ca);
	else
		snprintf(db->server.tls, sizeof(db->server.tls), "TLS %s, certificate not verified", cipher);
	/* The name users gave, or the socket's path; else the library's
	 * account of what the option files made of it. */
	if (h->name)
		db_host_label(h, db->server.name, sizeof(db->server.name));
	else
		snprintf(db->server.name, sizeof(db->server.name), "%s",
			 db->cfg.socket ? db->cfg.socket : lib.mysql_get_host_info(m));
}

/* Is the live connection's server one to use (db_probe), and its session
 * set up as the protocol needs? If not, it is dropped. */
static enum db_status db_session(struct db *db, char *err, size_t errlen)
{
	const struct db_config *c = &db->cfg;
	enum db_status st;

	/* A run's one server: the probe rides on its first compound statement
	 * (db_block), no round trip of its own (issue 34). Several hosts are
	 * probed here, so that a read-only one is passed over at once. */
	db->unprobed = c->probe_late && c->nhosts <= 1 && db_blocks(db);
	if (db->unprobed)
		return DB_OK;
	st = db_probe(db, err, errlen);

	/* Option files are applied inside mysql_real_connect and could carry an
	 * init-command; assert the session settings the protocol relies on
	 * after it. A short lock wait turns row contention into a quick
	 * "not acquired, retry" instead of a stall. On Galera, reads wait
	 * until the node has applied everything the cluster committed before
	 * them (causal reads): a follower must not judge the lease from a
	 * lagging or cut-off node's stale copy. */
	/* A plain MariaDB server read no option file here: the short lock wait
	 * goes with each statement instead (SET STATEMENT ... FOR, MariaDB
	 * 10.1.2 and later), one statement fewer for every connection (issue
	 * 13), as long as the server's wait_timeout leaves idle sessions be
	 * for an hour or more. */
	/* The idle connection of a holder between renews, or of a follower
	 * between looks, must outlive the server's wait_timeout: below an
	 * hour (the default is 8 h) the session SET goes out after all. */
	db->stmt_settings = st == DB_OK && !db->server.galera && !c->defaults_file && !c->read_option_files &&
			    strstr(lib.mysql_get_server_info(db->mysql), "MariaDB") != NULL &&
			    db->wait_timeout_s >= 3600;
	if (st == DB_OK && !db->stmt_settings)
		st = db_query(db,
			      db->server.galera
				  ? "SET SESSION innodb_lock_wait_timeout=1, wait_timeout=28800, wsrep_sync_wait=1"
				  : "SET SESSION innodb_lock_wait_timeout=1, wait_timeout=28800",
			      err, errlen);
	if (st != DB_OK)
		db_disconnect(db);
	return st;
}

/* A connection whose probe was left for a compound statement, before a
 * statement of another kind: probed and set up now, as any other. */
static enum db_status db_settle(struct db *db, char *err, size_t errlen)
{
	bool late = db->cfg.probe_late;
	enum db_status st;

	db->unprobed = false;
	db->cfg.probe_late = false;
	st = db_session(db, err, errlen);
	db->cfg.probe_late = late;
	return st;
}

/* Connects to host I of the configuration (or the library's default)
 * within CT seconds. */
static enum db_status db_connect_host(struct db *db, unsigned i, unsigned ct, char *err, size_t errlen)
{
	const struct db_config *c = &db->cfg;
	const struct db_host none = {0}, *h = c->nhosts ? &c->hosts[i] : &none;
	/* A socket given without a host is local whatever the host says. */
	enum db_tls mode = tlspolicy_mode(c->tls, h->name);
	const char *ca = c->ssl_ca ? c->ssl_ca : tlspolicy_verifies(mode) ? c->system_ca : NULL;
	bool absent = false;
	enum db_status st;
	MYSQL *m = db_handle(c, h, mode, ca, ct);

	if (!m)
		goto oom;
	st = db_handshake(db, m, h, mode, ca, db_tls_opportunistic(c, mode, ca) ? &absent : NULL, err, errlen);
	/* No TLS on offer: a plain connection, with no TLS option that could
	 * let the login think itself secure, within the same deadline. */
	if (absent) {
		m = db_handle(c, h, DB_TLS_DISABLED, NULL, ct);
		if (!m)
			goto oom;
		st = db_handshake(db, m, h, mode, NULL, NULL, err, errlen);
	}
	if (st != DB_OK)
		return st;
	/* A backstop, on both flavours: whatever the library (or an option
	 * file it read) made of the options, a required mode never carries
	 * on in plain text. */
	if (mode >= DB_TLS_REQUIRED && !lib.mysql_get_ssl_cipher(m)) {
		snprintf(err, errlen, "--ssl-mode %s refused the server: %s", tlspolicy_mode_name(mode),
			 DBERR_TLS_ABSENT);
		db_close_failed(db, m);
		return DB_UNTRUSTED;
	}
	db_take(db, m, h, mode, ca);
	return db_session(db, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	return DB_ERROR;
}

static enum db_status db_connect_one(struct db *db, unsigned i, char *err, size_t errlen)
{
	unsigned ct = db->cfg.connect_timeout_s ? db->cfg.connect_timeout_s : 10;
	/* One deadline for the whole attempt on this host: TCP, greeting,
	 * TLS, login, probe and session set-up (issue 25). */
	bool armed = db_arm(db, "connect timeout", ct);
	enum db_status st = db_connect_host(db, i, ct, err, errlen);

	db_disarm(armed);
	return st;
}

/* Of two failures, the one to report: a setting that no retry fixes
 * (denied, no such database or table) over a passing condition. */
static enum db_status db_worse(enum db_status a, enum db_status b)
{
	static const enum db_status rank[] = {DB_OK,	      DB_CONFLICT, DB_READ_ONLY, DB_UNAVAILABLE, DB_ERROR,
					      DB_NO_DATABASE, DB_NO_TABLE, DB_DENIED,	 DB_UNTRUSTED};
	unsigned ra = 0, rb = 0;

	for (unsigned i = 0; i < sizeof(rank) / sizeof(rank[0]); i++) {
		if (rank[i] == a)
			ra = i;
		if (rank[i] == b)
			rb = i;
	}
	return rb > ra ? b : a;
}

enum db_status db_connect(struct db *db, char *err, size_t errlen)
{
	unsigned n = db->cfg.nhosts ? db->cfg.nhosts : 1;
	enum db_status worst = DB_OK;
	size_t used = 0;

	/* The start is read once: a failure inside the loop may move next. */
	unsigned start = db->next;

	db_disconnect(db);
	err[0] = '\0';
	for (unsigned k = 0; k < n; k++) {
		unsigned pos = (start + k) % n, i = db->order[pos];
		char why[384];
		enum db_status st;

		db->cur = pos;
		st = db_connect_one(db, i, why, sizeof(why));
		if (st == DB_OK) {
			db->next = pos;
			return DB_OK;
		}
		worst = db_worse(worst, st);
		/* One host: its message as it is (named when TLS refused
		 * it: the way out depends on which server it was). Several:
		 * each, by name. */
		if (n == 1 && st == DB_UNTRUSTED && db->cfg.nhosts) {
			char name[128];
			db_host_label(&db->cfg.hosts[i], name, sizeof(name));
			snprintf(err, errlen, "%s: %s", name, why);
		} else if (n == 1)
			snprintf(err, errlen, "%s", why);
		else if (used < errlen) {
			char name[128];
			db_host_label(&db->cfg.hosts[i], name, sizeof(name));
			int w = snprintf(err + used, errlen - used, "%s%s: %s", k ? "; " : "", name, why);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	return worst;
}

bool db_server_info(const struct db *db, struct db_server *out)
{
	if (!db->mysql)
		return false;
	*out = db->server;
	return true;
}

enum db_status db_query(struct db *db, const char *sql, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	bool armed;

	if (!db->mysql) {
		snprintf(err, errlen, "not connected");
		return DB_UNAVAILABLE;
	}
	if (db->unprobed && (st = db_settle(db, err, errlen)) != DB_OK)
		return st;
	armed = db_arm_io(db);
	if (lib.mysql_query(db->mysql, sql) != 0)
		st = db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err, errlen);
	db_disarm(armed);
	return st;
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

enum db_status db_query_int(struct db *db, const char *sql, int64_t *out, char *err, size_t errlen)
{
	struct db_first_int f = {out, false};

	*out = -1;
	return db_query_rows(db, sql, 1, db_first_int, &f, err, errlen);
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

static enum db_status db_stmt_fail(struct db *db, MYSQL_STMT *st, char *err, size_t errlen)
{
	const char *msg;
	unsigned e = db_stmt_errno(db, st, &msg);

	return db_fail(db, e, msg, err, errlen);
}

/* A failure of a statement that is not kept (its prepare failed): the
 * error is copied out before the handle goes. */
static enum db_status db_stmt_gone(struct db *db, MYSQL_STMT *st, char *err, size_t errlen)
{
	char copy[512];
	const char *msg;
	unsigned e = db_stmt_errno(db, st, &msg);

	snprintf(copy, sizeof(copy), "%s", msg);
	lib.mysql_stmt_close(st);
	return db_fail(db, e, copy, err, errlen);
}

#define DB_STMT_SETTINGS "SET STATEMENT innodb_lock_wait_timeout=1 FOR "

/* A new handle for the statement at index ID, prepared from SQL with
 * libmysqlclient. With Connector/C the first execution prepares it in the
 * same round trip (mariadb_stmt_execute_direct: COM_STMT_PREPARE and
 * COM_STMT_EXECUTE sent together); the parameters are bound before, so the
 * library must be told how many. Issue 13: a one-shot run paid a round
 * trip per statement for prepares. */
static enum db_status db_stmt_new(struct db *db, unsigned id, const char *sql, unsigned nparams, MYSQL_STMT **out,
				  char *err, size_t errlen)
{
	MYSQL_STMT *st = lib.mysql_stmt_init(db->mysql);

	if (!st)
		return db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err, errlen);
#if defined(LIBMARIADB)
	unsigned n = nparams;
	(void)id;
	(void)sql;
	if (nparams)
		lib.mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &n);
#else
	(void)nparams;
	if (lib.mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0)
		return db_stmt_gone(db, st, err, errlen);
	db->stmts[id] = st;
#endif
	*out = st;
	return DB_OK;
}

/* Binds PARAMS and executes ST, the statement at index ID; FRESH: its
 * first execution on this connection, of SQL. A handle that never became
 * the connection's is closed on failure. */
static enum db_status db_stmt_run(struct db *db, unsigned id, MYSQL_STMT *st, bool fresh, const char *sql,
				  const struct db_value *params, unsigned nparams, char *err, size_t errlen)
{
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
			return db_stmt_gone(db, st, err, errlen);
		return db_stmt_fail(db, st, err, errlen);
	}
#if defined(LIBMARIADB)
	if (fresh) {
		if (lib.mariadb_stmt_execute_direct(st, sql, strlen(sql)) != 0)
			return db_stmt_gone(db, st, err, errlen);
		db->stmts[id] = st;
		return DB_OK;
	}
#else
	(void)sql;
#endif
	if (lib.mysql_stmt_execute(st) != 0)
		return db_stmt_fail(db, st, err, errlen);
	return DB_OK;
}

/* Fetches the rows of ST into COLS: the first only without ON_ROW, else
 * each, handed to ON_ROW(CTX, COLS). */
static enum db_status db_stmt_fetch(struct db *db, MYSQL_STMT *st, struct db_value *cols, unsigned ncols,
				    db_row_fn *on_row, void *ctx, struct db_result *res, char *err, size_t errlen)
{
	MYSQL_BIND b[DB_MAX_COLS];
	unsigned long len[DB_MAX_COLS];
	db_bool null[DB_MAX_COLS];

	for (unsigned i = 0; i < ncols; i++) {
		null[i] = 0;
		len[i] = 0;
		db_bind_value(&b[i], &cols[i], &len[i], &null[i]);
	}
	if (lib.mysql_stmt_bind_result(st, b) != 0)
		return db_stmt_fail(db, st, err, errlen);
	for (;;) {
		switch (lib.mysql_stmt_fetch(st)) {
		case 0:
		case MYSQL_DATA_TRUNCATED:
			break;
		case MYSQL_NO_DATA:
			lib.mysql_stmt_free_result(st);
			return DB_OK;
		default: {
			enum db_status s = db_stmt_fail(db, st, err, errlen);
			if (db->mysql)
				lib.mysql_stmt_free_result(st);
			return s;
		}
		}
		res->have_row = true;
		for (unsigned i = 0; i < ncols; i++) {
			cols[i].is_null = null[i] != 0;
			if (cols[i].type == DB_STR && cols[i].buf && cols[i].cap) {
				size_t n = len[i] < cols[i].cap - 1 ? len[i] : cols[i].cap - 1;
				cols[i].buf[null[i] ? 0 : n] = '\0';
			}
		}
		if (!on_row)
			break;
		on_row(ctx, cols);
	}
	lib.mysql_stmt_free_result(st);
	return DB_OK;
}

static enum db_status db_exec_armed(struct db *db, unsigned id, const char *sql, const struct db_value *params,
				    unsigned nparams, struct db_value *cols, unsigned ncols, db_row_fn *on_row,
				    void *ctx, struct db_result *res, char *err, size_t errlen)
{
	char prefixed[sizeof(DB_STMT_SETTINGS) + DB_MAX_SQL];
	MYSQL_STMT *st;
	bool fresh;
	enum db_status s;

	memset(res, 0, sizeof(*res));
	if (id >= DB_MAX_STMTS || nparams > DB_MAX_PARAMS || ncols > DB_MAX_COLS) {
		snprintf(err, errlen, "internal error: statement %u, or its parameters or columns, out of range", id);
		return DB_ERROR;
	}
	if (!db->mysql) {
		snprintf(err, errlen, "not connected");
		return DB_UNAVAILABLE;
	}
	if (db->unprobed && (s = db_settle(db, err, errlen)) != DB_OK)
		return s;
	st = db->stmts[id];
	fresh = !st;
	if (fresh && db->stmt_settings) {
		/* Prepared once per connection: the prefix costs nothing later. */
		if (strlen(sql) >= DB_MAX_SQL) {
			snprintf(err, errlen, "internal error: statement too long");
			return DB_ERROR;
		}
		snprintf(prefixed, sizeof(prefixed), "%s%s", DB_STMT_SETTINGS, sql);
		sql = prefixed;
	}
	if (fresh && (s = db_stmt_new(db, id, sql, nparams, &st, err, errlen)) != DB_OK)
		return s;
	s = db_stmt_run(db, id, st, fresh, sql, params, nparams, err, errlen);
	if (s != DB_OK)
		return s;
	res->affected = (uint64_t)lib.mysql_stmt_affected_rows(st);
	res->insert_id = (uint64_t)lib.mysql_stmt_insert_id(st);
	if (!cols)
		return DB_OK;
	return db_stmt_fetch(db, st, cols, ncols, on_row, ctx, res, err, errlen);
}

enum db_status db_exec_each(struct db *db, unsigned stmt, const char *sql, const struct db_value *params,
			    unsigned nparams, struct db_value *cols, unsigned ncols, db_row_fn *on_row, void *ctx,
			    struct db_result *res, char *err, size_t errlen)
{
	/* The statement with all its rows, under one deadline: a server that
	 * trickles a result cannot stretch it either. */
	bool armed = db_arm_io(db);
	enum db_status st = db_exec_armed(db, stmt, sql, params, nparams, cols, ncols, on_row, ctx, res, err, errlen);

	db_disarm(armed);
	return st;
}

enum db_status db_exec(struct db *db, unsigned stmt, const char *sql, const struct db_value *params, unsigned nparams,
		       struct db_value *cols, unsigned ncols, struct db_result *res, char *err, size_t errlen)
{
	return db_exec_each(db, stmt, sql, params, nparams, cols, ncols, NULL, NULL, res, err, errlen);
}

/* --check-server's reads (issue 27). Text queries, not prepared: SHOW
 * statements, and the exact "select @@version_comment limit 1" that
 * ProxySQL answers itself. */
enum db_status db_query_rows(struct db *db, const char *sql, unsigned ncols, db_text_row_fn *on_row, void *ctx,
			     char *err, size_t errlen)
{
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	/* The statement and all its rows, under one deadline. */
	bool armed = db_arm_io(db);
	enum db_status st = db_query(db, sql, err, errlen);

	if (st == DB_OK && !(res = lib.mysql_store_result(db->mysql)))
		st = db_fail(db, lib.mysql_errno(db->mysql), lib.mysql_error(db->mysql), err, errlen);
	/* ON_ROW reads NCOLS columns: a result of fewer (a proxy, another
	 * server's SHOW) is refused, not read past its end. */
	if (res && lib.mysql_num_fields(res) < ncols) {
		snprintf(err, errlen, "the server answered %u column(s) where %u were expected: %s",
			 lib.mysql_num_fields(res), ncols, sql);
		st = DB_ERROR;
	}
	while (st == DB_OK && (row = lib.mysql_fetch_row(res)))
		on_row(ctx, (const char *const *)row, ncols);
	if (res)
		lib.mysql_free_result(res);
	db_disarm(armed);
	return st;
}

const char *db_server_version(const struct db *db)
{
	return db->mysql ? lib.mysql_get_server_info(db->mysql) : "";
}

bool db_blocks(const struct db *db)
{
	/* MariaDB 10.1.1 took the first; the blocks use @@in_transaction
	 * (10.3), and an older server's refusal switches them off. Not on
	 * Galera: db_block says why. */
	return db->mysql && !db->blocks_off && !db->server.galera &&
	       strstr(lib.mysql_get_server_info(db->mysql), "MariaDB") != NULL;
}

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
static enum db_status db_block_results(struct db *db, bool *probe, int64_t *read_only, struct db_value *cols,
				       unsigned ncols, struct db_result *res, char *err, size_t errlen)
{
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
		return db_fail(db, lib.mysql_errno(m), lib.mysql_error(m), err, errlen);
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
static enum db_status db_block_once(struct db *db, const char *body, struct db_value *cols, unsigned ncols,
				    struct db_result *res, bool *galera, char *err, size_t errlen)
{
	bool probe = db->unprobed, pending = probe, armed;
	int64_t read_only = 0;
	char *q = db_block_text(db, body, probe);
	enum db_status st = DB_OK;
	unsigned e;

	if (!q) {
		snprintf(err, errlen, "out of memory");
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
		st = db_fail(db, e, lib.mysql_error(db->mysql), err, errlen);
	} else
		st = db_block_results(db, &pending, &read_only, cols, ncols, res, err, errlen);
	db_disarm(armed);
	free(q);
	if (st == DB_OK && probe) {
		*galera = db->server.galera;
		st = *galera ? DB_OK : db_read_only(db, read_only, err, errlen);
		if (st == DB_READ_ONLY)
			db_disconnect(db);
	}
	return st;
}

enum db_status db_block(struct db *db, const char *body, struct db_value *cols, unsigned ncols, struct db_result *res,
			char *err, size_t errlen)
{
	bool galera = false;
	enum db_status st;

	memset(res, 0, sizeof(*res));
	if (!db->mysql) {
		snprintf(err, errlen, "not connected");
		return DB_UNAVAILABLE;
	}
	st = db_block_once(db, body, cols, ncols, res, &galera, err, errlen);
	/* A Galera node, found by the probe that rode along: BODY did not
	 * run. Probed as such (its readiness, causal reads), and the caller
	 * goes a statement at a time (db_blocks is off there): a compound
	 * statement aborted by a conflicting transaction certified on
	 * another node was seen to hang until the I/O timeout. */
	if (st == DB_OK && galera && (st = db_settle(db, err, errlen)) == DB_OK) {
		snprintf(err, errlen, "no compound statements on a Galera node");
		st = DB_ERROR;
	}
	return st;
}
