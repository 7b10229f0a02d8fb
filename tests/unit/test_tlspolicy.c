/* Which hosts are local, and what TLS every other one gets. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/tlspolicy.h"

static void local(const char *host)
{
	cr_assert(tlspolicy_host_is_local(host), "%s should be local", host ? host : "(none)");
	cr_assert_eq(tlspolicy_mode(DB_TLS_DEFAULT, host), DB_TLS_DEFAULT, "%s keeps the library's default",
		     host ? host : "(none)");
}

static void networked(const char *host)
{
	cr_assert(!tlspolicy_host_is_local(host), "%s should be networked", host);
	cr_assert_eq(tlspolicy_mode(DB_TLS_DEFAULT, host), DB_TLS_VERIFY_IDENTITY, "%s must be verified", host);
}

Test(tlspolicy, loopback_socket_and_localhost_are_local)
{
	local(NULL);
	local("");
	local("localhost");
	local("127.0.0.1");
	local("127.0.0.53");
	local("127.255.255.254");
	local("127.1"); /* inet_aton's short form, which getaddrinfo takes too */
	local("::1");
	local("[::1]");
	local("0:0:0:0:0:0:0:1");
	local("::ffff:127.0.0.1");
	local("[::ffff:127.1.2.3]");
}

Test(tlspolicy, every_other_host_is_verified)
{
	networked("db.internal");
	networked("198.51.100.1");
	networked("10.0.0.5");
	networked("128.0.0.1");
	networked("126.255.255.255");
	/* Only the exact spelling maps to the socket; others resolve. */
	networked("LOCALHOST");
	networked("localhost.");
	networked("localhost.localdomain");
	networked("127.0.0.1.nip.io");
	networked("::2");
	networked("::ffff:10.0.0.1");
	networked("::127.0.0.1"); /* IPv4-compatible, not mapped: not loopback */
	networked("[::1");
	networked("0.0.0.0");
}

Test(tlspolicy, a_chosen_mode_always_wins)
{
	cr_assert_eq(tlspolicy_mode(DB_TLS_DISABLED, "db.internal"), DB_TLS_DISABLED);
	cr_assert_eq(tlspolicy_mode(DB_TLS_REQUIRED, "db.internal"), DB_TLS_REQUIRED);
	cr_assert_eq(tlspolicy_mode(DB_TLS_VERIFY_IDENTITY, "127.0.0.1"), DB_TLS_VERIFY_IDENTITY);
	cr_assert(tlspolicy_verifies(DB_TLS_VERIFY_CA));
	cr_assert(!tlspolicy_verifies(DB_TLS_REQUIRED));
	cr_assert(!tlspolicy_verifies(DB_TLS_DEFAULT));
}

static char *fake_env(const char *name)
{
	return strcmp(name, "MARIADB_TLS_DISABLE_PEER_VERIFICATION") == 0 ? "0" : NULL;
}

static char *empty_env(const char *name)
{
	(void)name;
	return NULL;
}

Test(tlspolicy, an_environment_that_disables_verification_is_named)
{
	/* Set at all, even to 0: Connector/C 3.4 only asks getenv() != NULL. */
	cr_assert_str_eq(tlspolicy_env_disabling(fake_env), "MARIADB_TLS_DISABLE_PEER_VERIFICATION");
	cr_assert_null(tlspolicy_env_disabling(empty_env));
}

Test(tlspolicy, ssl_cert_file_overrides_the_probed_bundles)
{
	char ca[256];

	setenv("SSL_CERT_FILE", "/some/ca.pem", 1);
	cr_assert_str_eq(tlspolicy_system_ca(ca, sizeof(ca)), "/some/ca.pem");
	unsetenv("SSL_CERT_FILE");
	/* The probe finds whatever this machine has; on Debian, this. */
	if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0)
		cr_assert_str_eq(tlspolicy_system_ca(ca, sizeof(ca)), "/etc/ssl/certs/ca-certificates.crt");
}
