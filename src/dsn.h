/* mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAM=VALUE&...]
 * PARAM: socket, connect-timeout, ssl-mode, ssl-ca, ssl-cert, ssl-key */
#ifndef LEADERRUN_DSN_H
#define LEADERRUN_DSN_H

#include <stddef.h>

struct dsn {
	char *user;				      /* NULL: not given (option files or the login name) */
	char *password;				      /* NULL: not given */
	char *host;				      /* NULL: not given */
	unsigned port;				      /* 0: not given */
	char *database;				      /* NULL: not given */
	char *socket;				      /* NULL: not given */
	unsigned connect_timeout_s;		      /* 0: not given */
	char *ssl_mode, *ssl_ca, *ssl_cert, *ssl_key; /* NULL: not given */
};

/* Parses TEXT into OUT (owned strings, release with dsn_free). Returns 0,
 * or -1 with a one-line reason in ERR that never contains the password. */
int dsn_parse(const char *text, struct dsn *out, char *err, size_t errlen);

void dsn_free(struct dsn *d);

/* Finds the password inside TEXT, so that callers can wipe it from argv or
 * drop it from an environment value. Returns 1 and sets *OFF and *LEN when
 * there is one, else 0. Never fails on malformed input. */
int dsn_password_span(const char *text, size_t *off, size_t *len);

/* Writes TEXT without its password (":PASSWORD" removed) into BUF. */
void dsn_without_password(const char *text, char *buf, size_t len);

#endif
