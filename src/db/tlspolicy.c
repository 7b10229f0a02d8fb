#include "tlspolicy.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tlspolicy_host_is_local(const char *host)
{
	char buf[64];
	size_t n;
	struct in_addr v4;
	struct in6_addr v6;

	if (!host || !*host)
		return true;
	/* Exactly "localhost": Connector/C and libmysqlclient take that one
	 * spelling as the unix socket. "LOCALHOST" or "localhost." go to a
	 * resolver. */
	if (strcmp(host, "localhost") == 0)
		return true;
	n = strlen(host);
	if (host[0] == '[' && n >= 2 && host[n - 1] == ']') {
		if (n - 2 >= sizeof(buf))
			return false;
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		host = buf;
	}
	/* inet_aton, not inet_pton: getaddrinfo accepts "127.1" and
	 * "2130706433" as well, so they are loopback too. */
	if (strchr(host, ':') == NULL && inet_aton(host, &v4))
		return (ntohl(v4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &v6) == 1) {
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (IN6_IS_ADDR_LOOPBACK(&v6))
			return true;
		return memcmp(v6.s6_addr, mapped, sizeof(mapped)) == 0 && v6.s6_addr[12] == 127;
	}
	return false;
}

enum db_tls tlspolicy_mode(enum db_tls requested, const char *host)
{
	if (requested != DB_TLS_DEFAULT)
		return requested;
	return tlspolicy_host_is_local(host) ? DB_TLS_DEFAULT : DB_TLS_VERIFY_IDENTITY;
}

const char *tlspolicy_system_ca(char *out, size_t len)
{
	/* Go's crypto/x509 root_linux.go, in its order. */
	static const char *const bundles[] = {
	    "/etc/ssl/certs/ca-certificates.crt",		 /* Debian, Ubuntu, Gentoo, Arch */
	    "/etc/pki/tls/certs/ca-bundle.crt",			 /* Fedora, RHEL 6 */
	    "/etc/ssl/ca-bundle.pem",				 /* openSUSE */
	    "/etc/pki/tls/cacert.pem",				 /* OpenELEC */
	    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* CentOS, RHEL 7 */
	    "/etc/ssl/cert.pem",				 /* Alpine */
	};
	const char *env = getenv("SSL_CERT_FILE");

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return out;
	}
	for (size_t i = 0; i < sizeof(bundles) / sizeof(bundles[0]); i++)
		if (access(bundles[i], R_OK) == 0) {
			snprintf(out, len, "%s", bundles[i]);
			return out;
		}
	return NULL;
}

const char *tlspolicy_env_disabling(char *(*get)(const char *name))
{
	/* Connector/C 3.4 skips verification when this one is set at all,
	 * whatever its value (ma_tls.c, getenv() != NULL). */
	static const char *const names[] = {"MARIADB_TLS_DISABLE_PEER_VERIFICATION"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (get(names[i]))
			return names[i];
	return NULL;
}

const char *tlspolicy_mode_name(enum db_tls mode)
{
	switch (mode) {
	case DB_TLS_DEFAULT:
		break;
	case DB_TLS_DISABLED:
		return "DISABLED";
	case DB_TLS_PREFERRED:
		return "PREFERRED";
	case DB_TLS_REQUIRED:
		return "REQUIRED";
	case DB_TLS_VERIFY_CA:
		return "VERIFY_CA";
	case DB_TLS_VERIFY_IDENTITY:
		return "VERIFY_IDENTITY";
	}
	return "the client library's default";
}
