/* TLS: --ssl-mode and the certificate options, against this suite's server
 * restarted with a CA and certificates that the test makes with openssl;
 * and the defaults by transport, against the same server reached
 * at a non-loopback address from a network namespace. */
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "proxy.h"

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
static const char *tls_server_args(const char *san, const char *more)
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
	snprintf(args, sizeof(args), "--ssl-ca=%s/ca.pem --ssl-cert=%s/server.pem --ssl-key=%s/server.key %s", dir, dir,
		 dir, more);
	setenv("SANDBOX_DB_EXTRA_ARGS", args, 1);
	h_sandbox("restart");
	return dir;
}

static const char *tls_server(const char *san)
{
	return tls_server_args(san, "");
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
	cr_assert_eq(h_finish(&p, 30000), 77, "%s", h_slurp(p.err));
}

Test(tls, wrong_ca_fails_with_a_clear_message)
{
	struct h_proc p;

	paths(tls_server("IP:127.0.0.1,DNS:127.0.0.1"));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_CA", "--ssl-ca", other, NULL}), 77, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "its TLS certificate failed verification"), "%s", h_slurp(p.err));
}

Test(tls, wrong_host_name_fails_verify_identity_only)
{
	struct h_proc p;

	paths(tls_server("DNS:db.test"));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_CA", "--ssl-ca", ca, NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", ca, NULL}), 77, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "its TLS certificate failed verification"), "%s", h_slurp(p.err));
}

Test(tls, required_against_a_server_without_tls_fails)
{
	struct h_proc p;

	unsetenv("SANDBOX_DB_EXTRA_ARGS");
	h_sandbox("restart");
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "REQUIRED", NULL}), 77, "%s", h_slurp(p.err));
	cr_assert_eq(lr(&p, (const char *const[]){"--ssl-mode", "PREFERRED", NULL}), 0, "%s", h_slurp(p.err));
}

/* Logs in through a recording proxy to a server just restarted without TLS
 * (so MySQL's caching_sha2_password has not cached the user and asks for
 * the full authentication) with EXTRA; returns the exit status, and
 * whether the password crossed the proxy in clear text in *CLEAR. */
static int lr_recorded(struct h_proc *p, const char *const extra[], bool *clear)
{
	struct proxy *proxy;
	const char *argv[32] = {h_bin(), "-n", "-l", h_lease("tls"), NULL};
	char dsn[600];
	size_t n = 4;
	int st;

	h_sandbox("restart");
	proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	cr_assert_not_null(proxy);
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", h_dsn_port(proxy_port(proxy)));
	for (size_t i = 0; extra[i] && n < 28; i++)
		argv[n++] = extra[i];
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	h_start(p, argv, (const char *const[]){dsn, NULL});
	st = h_finish(p, 30000);
	*clear = proxy_sent_contains(proxy, getenv("LR_DB_PASSWORD"));
	return st; /* the proxy stays: its threads may still be closing */
}

Test(tls, no_mode_sends_the_password_in_clear_to_a_server_without_tls)
{
	const char *const *modes[] = {
	    (const char *const[]){"--ssl-mode", "PREFERRED", NULL},
	    (const char *const[]){"--ssl-mode", "DISABLED", NULL},
	    /* The default on loopback with a CA: TLS if offered, as PREFERRED. */
	    (const char *const[]){"--ssl-ca", ca, NULL},
	};
	struct h_proc p;
	bool clear;

	paths(tls_server("IP:127.0.0.1"));
	unsetenv("SANDBOX_DB_EXTRA_ARGS");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int st = lr_recorded(&p, modes[i], &clear);
		cr_assert(!clear, "%s %s sent the password in clear text", modes[i][0], modes[i][1]);
		cr_assert_eq(st, 0, "%s %s: %s", modes[i][0], modes[i][1], h_slurp(p.err));
	}
}

/* ---- Issue 20: the defaults by transport, at a non-loopback address ----
 *
 * The server stays where the suite started it, in this machine's network
 * namespace, and also listens on the host end of a veth pair; leaderrun
 * runs inside a namespace at the other end. That way the sandbox script,
 * its readiness checks over loopback and root's socket all work unchanged,
 * and only the client moves: it reaches the server at an address that is
 * not loopback, and the server sees it come from an address of its own,
 * for which the test creates the account. A name for the certificate
 * comes from a bind-mounted /etc/hosts under unshare -m, which leaves the
 * machine's own file alone. Needs root (ip netns, veth, mount). */

static char ns_name[32], ns_host[32], ns_client[32], ns_hosts[320];

static int sh_out(const char *cmd, char *out, size_t len)
{
	const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	return h_run(argv, out, len);
}

/* Removes the namespaces (and with them their veth pairs) that earlier
 * runs of this suite left behind when they died: ours carry the pid. */
static void ns_sweep(void)
{
	sh("for n in $(ip netns list 2>/dev/null | awk '/^lrtls[0-9]+/ {print $1}'); do\n"
	   "  p=${n#lrtls}; [ -d /proc/$p ] || ip netns del $n 2>/dev/null || true\n"
	   "done");
}

static void ns_down(void)
{
	char cmd[256];

	if (!ns_name[0])
		return;
	/* The host end of the pair goes with the namespace's end. */
	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip link del %sa 2>/dev/null; true", ns_name, ns_name);
	sh(cmd);
	ns_name[0] = '\0';
}

/* Creates the namespace and the veth pair on a /30 that this machine does
 * not use (an address from a used subnet would take over its traffic), and
 * restarts the server listening on the host end too, with the general log
 * on, and with TLS for SAN when SAN is non-NULL. */
static void ns_up(const char *san)
{
	static const char *const subnets[] = {"198.51.100.", "203.0.113."};
	char cmd[2048], out[4096], more[1024];
	const char *sql_dir;
	bool found = false;

	if (geteuid() != 0)
		cr_skip_test("needs root for ip netns, a veth pair and unshare -m: skipped");
	if (sh("command -v ip >/dev/null && command -v unshare >/dev/null && command -v nsenter >/dev/null") != 0)
		cr_skip_test("needs ip (iproute2), unshare and nsenter (util-linux): skipped");
	ns_sweep();
	cr_assert_eq(sh_out("ip -4 addr; ip -4 route", out, sizeof(out)), 0);
	for (size_t i = 0; i < 2 && !found; i++)
		for (int b = 0; b < 256 && !found; b += 4) {
			char net[32];
			snprintf(net, sizeof(net), "%s%d", subnets[i], b);
			/* Any use of the /24 at all: leave it alone. */
			if (strstr(out, subnets[i]))
				break;
			snprintf(ns_host, sizeof(ns_host), "%s%d", subnets[i], b + 1);
			snprintf(ns_client, sizeof(ns_client), "%s%d", subnets[i], b + 2);
			found = true;
		}
	if (!found)
		cr_skip_test("198.51.100.0/24 and 203.0.113.0/24 are both in use here: skipped");
	snprintf(ns_name, sizeof(ns_name), "lrtls%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "set -e; n=%s; h=%s; c=%s\n"
		 "ip netns add $n; ip link add ${n}a type veth peer name ${n}b; ip link set ${n}b netns $n\n"
		 "ip addr add $h/30 dev ${n}a; ip link set ${n}a up\n"
		 "in=\"nsenter --net=/run/netns/$n\"\n"
		 "$in ip addr add $c/30 dev ${n}b; $in ip link set ${n}b up; $in ip link set lo up\n",
		 ns_name, ns_host, ns_client);
	cr_assert_eq(sh(cmd), 0, "could not set up namespace %s", ns_name);

	snprintf(ns_hosts, sizeof(ns_hosts), "%s", h_path("hosts"));
	snprintf(cmd, sizeof(cmd), "printf '127.0.0.1 localhost\\n%s db.test\\n' > %s", ns_host, ns_hosts);
	cr_assert_eq(sh(cmd), 0);

	snprintf(more, sizeof(more), "--bind-address=127.0.0.1,%s --general-log=1 --general-log-file=%s", ns_host,
		 h_path("general.log"));
	if (san)
		paths(tls_server_args(san, more));
	else {
		setenv("SANDBOX_DB_EXTRA_ARGS", more, 1);
		h_sandbox("restart");
	}
	/* The account, for the client's address, with the grants of
	 * sql/grants.sql, as scripts/sandbox-db provisions its own. */
	sql_dir = getenv("LR_SANDBOX");
	snprintf(cmd, sizeof(cmd),
		 "set -e; s=%s; dir=%s; u=%s; c=%s; pw=%s; db=%s; sql=$(dirname $(dirname $s))/sql\n"
		 "$s sql $dir -e \"CREATE USER IF NOT EXISTS '$u'@'$c' IDENTIFIED BY '$pw'\"\n"
		 "sed -e \"s/\\bops\\./$db./g\" -e \"s/\\`ops\\`\\./\\`$db\\`./g\" "
		 "  -e \"s/'leaderrun'@'%%'/'$u'@'$c'/g\" $sql/grants.sql | $s sql $dir\n",
		 sql_dir, getenv("LR_DB_DIR"), getenv("LR_DB_USER"), ns_client, getenv("LR_DB_PASSWORD"),
		 getenv("LR_DB_NAME"));
	cr_assert_eq(sh(cmd), 0, "could not create the account for %s", ns_client);
}

/* The DSN for HOST ("db.test" or the server's address) at the suite's port. */
static const char *ns_dsn(const char *host, const char *params)
{
	static char dsn[512];
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@%s:%s/%s%s", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), host,
		 getenv("LR_DB_PORT"), getenv("LR_DB_NAME"), params);
	return dsn;
}

/* Runs leaderrun inside the namespace with the test's /etc/hosts, with
 * ENV (NULL or NAME=value entries) and ARGS (-d DSN... included); returns
 * its exit status. */
static int ns_lr(struct h_proc *p, const char *const env[], const char *const args[])
{
	/* env(1) sets ENV over what this process has (the shell in between
	 * would take the last of two entries, not the first), and drops
	 * SSL_CERT_FILE, which a build machine may set: without ENV saying
	 * otherwise, leaderrun probes the system bundles itself. */
	const char *argv[48] = {"/usr/bin/env", "-u", "SSL_CERT_FILE"};
	char net[64];
	/* nsenter, not "ip netns exec", which remounts / and fails in a
	 * chroot (a fresh machine's CI may be one); unshare -m likewise
	 * (h_unshare_propagation). */
	const char *const tail[] = {"nsenter",
				    net,
				    "unshare",
				    "-m",
				    "--propagation",
				    h_unshare_propagation(),
				    "sh",
				    "-c",
				    "mount --bind \"$0\" /etc/hosts && exec \"$@\"",
				    ns_hosts,
				    h_bin(),
				    NULL};
	size_t n = 3;

	snprintf(net, sizeof(net), "--net=/run/netns/%s", ns_name);

	for (size_t i = 0; env && env[i] && n < 8; i++)
		argv[n++] = env[i];
	for (size_t i = 0; tail[i]; i++)
		argv[n++] = tail[i];
	for (size_t i = 0; args[i] && n < 46; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	h_start(p, argv, NULL);
	return h_finish(p, 30000);
}

/* Logins the server's general log shows from the namespace's address. */
static int ns_logins(void)
{
	char needle[96];
	const char *log = h_slurp(h_path("general.log"));
	int n = 0;

	snprintf(needle, sizeof(needle), "%s@%s", getenv("LR_DB_USER"), ns_client);
	for (const char *q = log; (q = strstr(q, needle)); q++)
		n++;
	return n;
}

static int count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *q = text; (q = strstr(q, needle)); q++)
		n++;
	return n;
}

/* One line, naming HOST and both ways out. */
static void assert_refusal_line(const char *err, const char *host)
{
	cr_assert_eq(count(err, "\n"), 1, "one line expected:\n%s", err);
	cr_assert(strstr(err, host), "the host %s should be named: %s", host, err);
	cr_assert(strstr(err, "--ssl-ca FILE"), "%s", err);
	cr_assert(strstr(err, "--ssl-mode=DISABLED, which accepts forgeable lease replies"), "%s", err);
}

TestSuite(tls_netns, .timeout = 180, .fini = ns_down);

Test(tls_netns, default_verifies_against_the_ca_and_says_so_once)
{
	struct h_proc p;
	char env[360];

	ns_up("DNS:db.test");
	cr_assert_eq(ns_lr(&p, NULL,
			   (const char *const[]){"-v", "-d", ns_dsn("db.test", ""), "--ssl-ca", ca, "-n", "-l",
						 h_lease("netns"), "--", "true", NULL}),
		     0, "%s", h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "certificate verified (VERIFY_IDENTITY"), 1, "%s", h_slurp(p.err));
	/* Without --ssl-ca: the system's bundle; SSL_CERT_FILE stands in for
	 * a system that trusts the test CA. */
	snprintf(env, sizeof(env), "SSL_CERT_FILE=%s", ca);
	cr_assert_eq(ns_lr(&p, (const char *const[]){env, NULL},
			   (const char *const[]){"-d", ns_dsn("db.test", ""), "--status", NULL}),
		     0, "%s", h_slurp(p.err));
	/* The real system bundle does not know the test CA. */
	cr_assert_eq(ns_lr(&p, NULL, (const char *const[]){"-d", ns_dsn("db.test", ""), "--status", NULL}), 77, "%s",
		     h_slurp(p.err));
	assert_refusal_line(h_slurp(p.err), "db.test");
	cr_assert(strstr(h_slurp(p.err), "ca-certificates.crt"), "%s", h_slurp(p.err));
}

Test(tls_netns, server_without_tls_is_refused_before_the_login)
{
	struct h_proc p;
	const char *const modes[][4] = {
	    {"--ssl-ca", "CA", NULL}, /* the default */
	    {"--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", "CA"},
	    {"--ssl-mode", "VERIFY_CA", "--ssl-ca", "CA"},
	    {"--ssl-mode", "REQUIRED", NULL},
	};

	/* Certificates made, but the server started without TLS. */
	paths(tls_server("DNS:db.test"));
	ns_up(NULL);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *args[16] = {"-d", ns_dsn("db.test", ""), "-n", "-l", h_lease("netns")};
		size_t n = 5;
		for (size_t k = 0; k < 4 && modes[i][k]; k++)
			args[n++] = strcmp(modes[i][k], "CA") == 0 ? ca : modes[i][k];
		args[n++] = "--";
		args[n++] = "true";
		cr_assert_eq(ns_lr(&p, NULL, args), 77, "%s %s: %s", modes[i][0], modes[i][1], h_slurp(p.err));
		assert_refusal_line(h_slurp(p.err), "db.test");
		/* The same words on both libraries (they word it apart). */
		cr_assert(strstr(h_slurp(p.err), "refused the server: the server offers no TLS"), "%s", h_slurp(p.err));
	}
	/* The operator modes too. */
	cr_assert_eq(
	    ns_lr(&p, NULL, (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-ca", ca, "--init", NULL}), 77,
	    "%s", h_slurp(p.err));
	cr_assert_eq(
	    ns_lr(&p, NULL, (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-ca", ca, "--release", "x", NULL}),
	    77, "%s", h_slurp(p.err));
	cr_assert_eq(ns_lr(&p, NULL,
			   (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-ca", ca, "--check", "--lease", "x",
						 "--holder", "h", "--term", "1", NULL}),
		     77, "%s", h_slurp(p.err));
	cr_assert_eq(ns_logins(), 0, "a login reached the server:\n%s", h_slurp(h_path("general.log")));

	/* The control: the log does show a login that went out. */
	cr_assert_eq(
	    ns_lr(&p, NULL,
		  (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-mode", "PREFERRED", "--status", NULL}),
	    0, "%s", h_slurp(p.err));
	cr_assert_geq(ns_logins(), 1, "the general log should show the PREFERRED login:\n%s",
		      h_slurp(h_path("general.log")));
}

Test(tls_netns, wrong_ca_and_wrong_name_are_refused_in_one_line)
{
	struct h_proc p;
	char host_label[64];

	ns_up("DNS:db.test");
	cr_assert_eq(ns_lr(&p, NULL,
			   (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-ca", other, "-n", "-l",
						 h_lease("netns"), "--", "true", NULL}),
		     77, "%s", h_slurp(p.err));
	assert_refusal_line(h_slurp(p.err), "db.test");
	cr_assert(strstr(h_slurp(p.err), "certificate"), "%s", h_slurp(p.err));
	/* The right CA, but the address is not the name the certificate
	 * carries. */
	cr_assert_eq(ns_lr(&p, NULL,
			   (const char *const[]){"-d", ns_dsn(ns_host, ""), "--ssl-ca", ca, "-n", "-l",
						 h_lease("netns"), "--", "true", NULL}),
		     77, "%s", h_slurp(p.err));
	snprintf(host_label, sizeof(host_label), "%s:%s", ns_host, getenv("LR_DB_PORT"));
	assert_refusal_line(h_slurp(p.err), host_label);
	/* Every host of a multi-host DSN: each named. */
	cr_assert_eq(
	    ns_lr(&p, NULL, (const char *const[]){"-d", ns_dsn(ns_host, ""), "--ssl-ca", ca, "--status", NULL}), 77,
	    "%s", h_slurp(p.err));
	cr_assert_eq(ns_logins(), 0, "a login reached the server:\n%s", h_slurp(h_path("general.log")));
}

Test(tls_netns, several_hosts_each_verified)
{
	struct h_proc p;
	char dsn[512];

	ns_up("DNS:db.test");
	snprintf(dsn, sizeof(dsn), "mysql://%s:%s@%s:%s,db.test:%s/%s", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"),
		 ns_host, getenv("LR_DB_PORT"), getenv("LR_DB_PORT"), getenv("LR_DB_NAME"));
	/* The first fails the name check, the second is verified. */
	cr_assert_eq(ns_lr(&p, NULL, (const char *const[]){"-v", "-d", dsn, "--ssl-ca", ca, "--status", NULL}), 0, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "certificate verified"), "%s", h_slurp(p.err));
	/* Both refused: both named. */
	cr_assert_eq(ns_lr(&p, NULL, (const char *const[]){"-d", dsn, "--ssl-ca", other, "--status", NULL}), 77, "%s",
		     h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), ns_host) && strstr(h_slurp(p.err), "db.test:"), "%s", h_slurp(p.err));
}

Test(tls_netns, disabled_works_with_a_warning)
{
	struct h_proc p;

	ns_up("DNS:db.test");
	cr_assert_eq(ns_lr(&p, NULL,
			   (const char *const[]){"-d", ns_dsn("db.test", "?ssl-mode=DISABLED"), "-n", "-l",
						 h_lease("netns"), "--", "true", NULL}),
		     0, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "warning: --ssl-mode=DISABLED: replies from db.test are not verified"), "%s",
		  h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "\n"), 1, "one warning: %s", h_slurp(p.err));
}

Test(tls_netns, environment_cannot_switch_verification_off)
{
	struct h_proc p;

	ns_up("DNS:db.test");
	cr_assert_eq(ns_lr(&p, (const char *const[]){"MARIADB_TLS_DISABLE_PEER_VERIFICATION=1", NULL},
			   (const char *const[]){"-d", ns_dsn("db.test", ""), "--ssl-ca", ca, "-n", "-l",
						 h_lease("netns"), "--", "true", NULL}),
		     64, "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "MARIADB_TLS_DISABLE_PEER_VERIFICATION is set"), "%s", h_slurp(p.err));
	cr_assert_eq(count(h_slurp(p.err), "\n"), 1, "%s", h_slurp(p.err));
	cr_assert_eq(ns_logins(), 0, "%s", h_slurp(h_path("general.log")));
}

Test(tls, loopback_and_socket_keep_the_library_default)
{
	struct h_proc p;

	/* A certificate that names neither: the default does not verify
	 * loopback or the socket, as before TLS became the default. The library's own
	 * default decides whether there is TLS (--ssl-mode in leaderrun(1)):
	 * Connector/C none without a certificate option, libmysqlclient
	 * PREFERRED. */
	paths(tls_server("DNS:db.test"));
	cr_assert_eq(lr(&p, (const char *const[]){"-v", NULL}), 0, "%s", h_slurp(p.err));
	if (h_client_oracle())
		cr_assert(strstr(h_slurp(p.err), "certificate not verified"), "%s", h_slurp(p.err));
	else
		cr_assert(strstr(h_slurp(p.err), ": no TLS"), "%s", h_slurp(p.err));
	h_start(&p,
		(const char *const[]){h_bin(), "-d", h_dsn_socket(), "-n", "-l", h_lease("tls"), "--", "true", NULL},
		NULL);
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
	/* Even with the variable set: nothing is verified there. */
	h_start(&p, (const char *const[]){h_bin(), "-d", h_dsn(), "-n", "-l", h_lease("tls"), "--", "true", NULL},
		(const char *const[]){"MARIADB_TLS_DISABLE_PEER_VERIFICATION=1", NULL});
	cr_assert_eq(h_finish(&p, 30000), 0, "%s", h_slurp(p.err));
}
