/* Which TLS a connection gets when the user did not say: the
 * lease replies decide who may run, so a reply that crosses a network must
 * come from a verified server. Pure decisions, no <mysql.h>: db_lib.c
 * applies them, options_server.c checks them, the unit tests pin them. */
#ifndef LEADERRUN_TLSPOLICY_H
#define LEADERRUN_TLSPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "db.h"

/* True when a connection to HOST never leaves this machine: no host (the
 * library's default, the unix socket), "localhost" (which the client
 * libraries map to the unix socket), 127.0.0.0/8 in any form inet_aton
 * takes ("127.1"), ::1 (also "[::1]" and "0:0:...:1") and IPv4-mapped
 * ::ffff:127.x.y.z. Any other name is networked, even one that resolves to
 * 127.0.0.1 today: a name is only as local as DNS or /etc/hosts says. */
bool tlspolicy_host_is_local(const char *host);

/* The mode a connection to HOST gets: REQUESTED when the user chose one
 * (--ssl-mode, the DSN or an option file); else DB_TLS_DEFAULT (the
 * library's own, as before) for a local host, VERIFY_IDENTITY for any other. */
enum db_tls tlspolicy_mode(enum db_tls requested, const char *host);

static inline bool tlspolicy_verifies(enum db_tls mode)
{
	return mode == DB_TLS_VERIFY_CA || mode == DB_TLS_VERIFY_IDENTITY;
}

/* The system's CA bundle: $SSL_CERT_FILE if set (as OpenSSL, curl and Go
 * take it), else the first readable file of the usual places (the list of
 * Go's crypto/x509 root_linux.go), so that one binary works on Debian,
 * Fedora, SUSE, Alpine... Returns OUT, or NULL when none is found. */
const char *tlspolicy_system_ca(char *out, size_t len);

/* The name of a variable in ENV-lookup GETENV that would turn certificate
 * verification off inside the client library (Connector/C 3.4 reads
 * MARIADB_TLS_DISABLE_PEER_VERIFICATION), or NULL. */
const char *tlspolicy_env_disabling(char *(*get)(const char *name));

/* The ways out of a refused server, for the end of its one-line error. */
#define TLSPOLICY_WAYS_OUT                                                                                             \
	"give --ssl-ca FILE (your server's or provider's CA), or --ssl-mode=DISABLED, which accepts forgeable "        \
	"lease replies"

/* "VERIFY_IDENTITY" and so on, for messages. */
const char *tlspolicy_mode_name(enum db_tls mode);

#endif
