/* mysql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DATABASE[?PARAM=VALUE&...]
 * PARAM: socket, connect-timeout, host-order, ssl-mode, ssl-ca, ssl-cert,
 * ssl-key. Several hosts, as libpq takes them: tried in order (or in random
 * order), a host without a port gets the default.
 * USER:PASSWORD ends at the last '@' before the parameters, which begin at
 * the first '?' followed by NAME= (or by nothing): a raw '@', '/', ':',
 * '#' or other '?' in a password is the password's. */
#ifndef LEADERRUN_DSN_H
#define LEADERRUN_DSN_H

#include <stdbool.h>
#include <stddef.h>

#define DSN_MAX_HOSTS 16

struct dsn_host {
	char *name;    /* a name, an IPv4 address, or an IPv6 address without brackets */
	unsigned port; /* 0: not given */
};

struct dsn {
	char *user;	/* NULL: not given (option files or the login name) */
	char *password; /* NULL: not given */
	struct dsn_host hosts[DSN_MAX_HOSTS];
	unsigned nhosts;			      /* 0: none given (a socket, or the option files) */
	bool random_order;			      /* ?host-order=random */
	char *database;				      /* NULL: not given */
	char *socket;				      /* NULL: not given */
	unsigned connect_timeout_s;		      /* 0: not given */
	char *ssl_mode, *ssl_ca, *ssl_cert, *ssl_key; /* NULL: not given */
};

/* Parses TEXT into OUT (owned strings, release with dsn_free). Returns 0,
 * or -1 with a one-line reason in ERR that never contains the password. */
int dsn_parse(const char *text, struct dsn *out, char *err, size_t errlen);

void dsn_free(struct dsn *d);

/* Parses a host list "HOST[:PORT][,HOST[:PORT]...]" ([V6]:PORT for IPv6)
 * of LEN bytes into D->hosts; the DSN's authority and a `host=` line of an
 * option file share it. Returns 0, or -1 with a message. */
int dsn_parse_hosts(const char *text, size_t len, struct dsn *d, char *err, size_t errlen);

/* Finds the password that dsn_parse takes from TEXT, so that callers can
 * drop it from an environment value. Returns 1 and sets *OFF and *LEN when
 * there is one, else 0. Never fails on malformed input. */
int dsn_password_span(const char *text, size_t *off, size_t *len);

/* The widest span of TEXT that may hold a password, however the DSN is
 * read (a raw '?' in a password, a typo): from the first ':' after the
 * scheme to the last '@'. What argv wipes and messages hide. Returns 1 and
 * sets *OFF and *LEN, or 0 when TEXT can hold none. */
int dsn_secret_span(const char *text, size_t *off, size_t *len);

/* Writes TEXT without its password (":PASSWORD" removed) into BUF. */
void dsn_without_password(const char *text, char *buf, size_t len);

/* Writes TEXT with its secret span as "***" (mysql://app:***@db/ops). */
void dsn_redacted(const char *text, char *buf, size_t len);

/* The same for any user input that may hold a DSN somewhere (a value
 * given to the wrong option, a forgotten -d): text before the first
 * mysql:// or mariadb:// is kept, the rest redacted. */
void dsn_redact_all(const char *text, char *buf, size_t len);

#endif
