/* The client library: its table of functions, loading it, its
 * initialisation, and a new handle's options (TLS's among them), on either
 * client flavour: MariaDB Connector/C or Oracle's libmysqlclient. */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "tlspolicy.h"

/* The client library's functions (db_int.h), filled by db_library_init. */
struct db_lib lib;

#if LEADERRUN_LAZY_LOAD
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>

/* Connector/C looks its default port up with getservbyname("mysql", "tcp")
 * at initialisation, whatever the DSN says (mysql_once_init, when its
 * mysql_port is 0, which a shared libmariadb does not export). On glibc that
 * walks NSS: about 50 failed opens of libnss_db paths, paid by every run.
 * The executable exports this definition (meson.build:
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
/* From <openssl/crypto.h>, which only the static build needs here: the
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

/* Does MODE ask for TLS only when the server offers it, with the options
 * of C (CA, certificate, key)? PREFERRED; and the library's default with a
 * TLS option given, which Connector/C takes as PREFERRED. libmysqlclient's
 * own SSL_MODE_PREFERRED authenticates as a plain connection when TLS did
 * not come about, so only Connector/C needs the second try. */
bool db_tls_opportunistic(const struct db_config *c, enum db_tls mode, const char *ca)
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
bool db_tls_absent(MYSQL *m)
{
	return lib.mysql_errno(m) == 2026 && strstr(lib.mysql_error(m), "server does not support it") != NULL;
}

/* The TLS options for one host in MODE (tlspolicy_mode), verifying against
 * CA, on either client flavour. In a VERIFY mode nothing may go to a
 * server before it is verified, the login included: an unverified server
 * may be anyone, and the login carries what proves who we are. */
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

int db_socket_of(MYSQL *m)
{
#if defined(LIBMARIADB)
	return (int)lib.mysql_get_socket(m);
#else
	return (int)m->net.fd;
#endif
}

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
	 * reads openssl.cnf in every run, a cost paid at every start. A run
	 * that cannot use TLS initialises it first without: the system's TLS
	 * policy has nothing to say to a socket or loopback connection in
	 * plain text. Nor does it need OpenSSL's table of every cipher and digest by name (the
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

/* Connector/C's login plugins that never put the password itself on the
 * wire: not mysql_clear_password nor dialog, which a server (or whoever
 * answers in its place on a plain connection) may switch the login to. */
#define DB_AUTH_NOT_CLEAR                                                                                              \
	"mysql_native_password,caching_sha2_password,sha256_password,client_ed25519,parsec,auth_gssapi_client"

/* A handle for host H in mode MODE, verifying against CA, before it
 * connects. */
MYSQL *db_handle(const struct db_config *c, const struct db_host *h, enum db_tls mode, const char *ca, unsigned ct)
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
