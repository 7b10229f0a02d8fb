/* TLS: --ssl-mode and the certificate options, against this suite's server
 * restarted with a CA and certificates that the test makes with openssl. */
#include <sys/stat.h>

#include "harness.h"

HARNESS_MAIN

static int sh(const char *cmd)
{
	struct h_proc p;
	h_start(&p, (const char *const[]){"sh", "-ec", cmd, NULL}, NULL);
	return h_finish(&p, 60000);
}

/* Makes CA DIR/ca, a second unrelated CA DIR/other, a server certificate
 * for NAME (a SAN entry such as "IP:127.0.0.1,DNS:127.0.0.1" or
 * "DNS:db.test") and a client certificate, then restarts the server with
 * TLS. Each test gets its own directory. */
static const char *tls_server(const char *san)
{
	static char dir[300], cmd[4096], args[1024];

	snprintf(dir, sizeof(dir), "%s/tls", getenv("LR_DB_DIR"));
	snprintf(cmd, sizeof(cmd),
		 "d=%s; rm -rf $d; mkdir -p $d; cd $d\n"
		 "for ca in ca other; do\n"
		 "  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=$ca-test-ca "
		 "    -keyout $ca.key -out $ca.pem 2>/dev/null\n"
		 "done\n"
		 "for who in server client; do\n"
		 "  openssl req -newkey rsa:2048 -nodes -subj /CN=$who -keyout $who.key -out $who.csr 2>/dev/null\n"
		 "  printf 'subjectAltName=%s\\n' > $who.ext\n"
		 "  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
		 "    -extfile $who.ext -out $who.pem 2>/dev/null\n"
		 "done\n"
		 "chmod 644 *.key\n",
		 dir, san);
	cr_assert_eq(sh(cmd), 0, "openssl failed");
	snprintf(args, sizeof(args), "--ssl-ca=%s/ca.pem --ssl-cert=%s/server.pem --ssl-key=%s/server.key", dir, dir,
		 dir);
	setenv("SANDBOX_DB_EXTRA_ARGS", args, 1);
	h_sandbox("restart");
	return dir;
}

static int lr(struct h_proc *p, const char *const extra[])
{
	const char *argv[32] = {h_bin(), "-d", h_dsn(), "-n", "-l", h_lease("tls"), NULL};
	size_t n = 6;

	for (size_t i = 0; extra[i] && n < 28; i++)
		argv[n++] = extra[i];
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	h_start(p, argv, NULL);
	return h_finish(p, 30000);
}

static char ca[320], other[320], cert[320], key[320];

static void paths(const char *dir)
{
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(other, sizeof(other), "%s/other.pem", dir);
	snprintf(cert, sizeof(cert), "%s/client.pem", dir);
	snprintf(key, sizeof(key), "%s/client.key", dir);
}

TestSuite(tls, .timeout = 180);

Test(tls, every_mode_against_a_certificate_for_the_address)
{
	struct h_proc p;

	paths(tls_server("IP:127.0.0.1,DNS:127.0.0.1"));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "DISABLED", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "PREFERRED", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "REQUIRED", NULL}), 0, "%s", h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_CA", "--ssl-ca", ca, NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", ca, NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", ca, "--ssl-cert", cert,
						  "--ssl-key", key, NULL}),
		     0, "%s", h_slurp(p.err));
}

Test(tls, dsn_parameters_work_like_the_options)
{
	struct h_proc p;
	char dsn[1024];

	paths(tls_server("IP:127.0.0.1,DNS:127.0.0.1"));
	snprintf(dsn, sizeof(dsn), "%s?ssl-mode=verify-identity&ssl-ca=%s", h_dsn(), ca);
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "-n", "-l", h_lease("tlsdsn"), "--", "true", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	snprintf(dsn, sizeof(dsn), "%s?ssl-mode=verify-ca&ssl-ca=%s", h_dsn(), other);
	h_start(&p, (const char *const[]){h_bin(), "-d", dsn, "-n", "-l", h_lease("tlsdsn"), "--", "true", NULL}, NULL);
	cr_assert_eq(h_finish(&p, 30000), 69, "%s", h_slurp(p.err));
}

Test(tls, wrong_ca_fails_with_a_clear_message)
{
	struct h_proc p;

	paths(tls_server("IP:127.0.0.1,DNS:127.0.0.1"));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_CA", "--ssl-ca", other, NULL}), 69, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "TLS"), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "certificate"), "%s", h_slurp(p.err));
}

Test(tls, wrong_host_name_fails_verify_identity_only)
{
	struct h_proc p;

	paths(tls_server("DNS:db.test"));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_CA", "--ssl-ca", ca, NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", ca, NULL}), 69, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "TLS"), "%s", h_slurp(p.err));
}

Test(tls, required_against_a_server_without_tls_fails)
{
	struct h_proc p;

	unsetenv("SANDBOX_DB_EXTRA_ARGS");
	h_sandbox("restart");
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "REQUIRED", NULL}), 69, "%s", h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "PREFERRED", NULL}), 0, "%s", h_slurp(p.err));
}
