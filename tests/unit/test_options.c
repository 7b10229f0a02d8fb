#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"

#define ARGV(...) ((char *[]){"leaderrun", __VA_ARGS__, NULL})
#define ARGC(v)	  ((int)(sizeof(v) / sizeof((v)[0])) - 1)

static void clean_env(void)
{
	static const char *const vars[] = {"LEADERRUN_DSN",    "LEADERRUN_TABLE",    "LEADERRUN_LEASE",
					   "LEADERRUN_HOLDER", "LEADERRUN_PASSWORD", "MYSQL_PWD",
					   "LEADERRUN_TERM"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* What the helpers allocate, freed after each test, so that the memory
 * gate (scripts/check-memory) sees no leak of the tests' own. */
static char **copies[64];
static struct options parsed[64];
static char *strings[64];
static int ncopies, nparsed, nstrings;

/* For tests that build their own argv of strdup'd strings and call
 * options_parse directly: free the strings and what O holds afterwards. */
static void keep(char **argv, const struct options *o)
{
	for (; *argv && nstrings < 64; argv++)
		strings[nstrings++] = *argv;
	if (o && nparsed < 64)
		parsed[nparsed++] = *o;
}

static void free_all(void)
{
	for (int i = 0; i < nstrings; i++)
		free(strings[i]);
	nstrings = 0;
	for (int i = 0; i < nparsed; i++)
		options_free(&parsed[i]);
	for (int i = 0; i < ncopies; i++) {
		for (char **a = copies[i]; *a; a++)
			free(*a);
		free(copies[i]);
	}
	nparsed = ncopies = 0;
}

TestSuite(options, .init = clean_env, .fini = free_all);

/* Parses a copy of ARGV, so that tests can pass string literals. */
static enum options_result parse(int argc, char **argv, struct options *o, char *err, size_t len)
{
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	for (int i = 0; i < argc; i++)
		copy[i] = strdup(argv[i]);
	if (ncopies < 64)
		copies[ncopies++] = copy;
	return options_parse(argc, copy, stdout, o, err, len);
}

static struct options ok(int argc, char **argv)
{
	struct options o;
	char err[512];

	cr_assert_eq(parse(argc, argv, &o, err, sizeof(err)), OPTIONS_OK, "rejected: %s", err);
	if (nparsed < 64)
		parsed[nparsed++] = o;
	return o;
}

static void usage(int argc, char **argv, const char *needle)
{
	struct options o;
	char err[512] = "";

	cr_assert_eq(parse(argc, argv, &o, err, sizeof(err)), OPTIONS_USAGE, "accepted; wanted '%s'", needle);
	cr_assert(strstr(err, needle), "error lacks '%s': %s", needle, err);
	cr_assert(!strchr(err, '\n'), "error is not one line: %s", err);
}

#define OK(...)		   ok(ARGC(ARGV(__VA_ARGS__)), ARGV(__VA_ARGS__))
#define USAGE(needle, ...) usage(ARGC(ARGV(__VA_ARGS__)), ARGV(__VA_ARGS__), needle)

Test(options, defaults_are_safe_and_documented)
{
	struct options o = OK("--", "true");

	cr_assert_eq(o.mode, MODE_RUN);
	cr_assert_eq(o.timing.ttl_us, 15000000);
	cr_assert_eq(o.timing.renew_us, 5000000);
	cr_assert_eq(o.timing.grace_us, 3000000);
	cr_assert_eq(o.timing.margin_us, 1500000);
	cr_assert_eq(o.retry_us, 1000000);
	cr_assert_eq(o.wait_timeout_us, -1);
	cr_assert_eq(o.kill_signal, SIGTERM);
	cr_assert_eq(o.busy_exit, 75);
	cr_assert_str_eq(o.table, "leaderrun_lease");
	cr_assert_str_eq(o.command[0], "true");
	cr_assert(o.lease_derived);
}

Test(options, history_table_sits_next_to_the_lease_table)
{
	cr_assert_str_eq(OK("--", "true").history_table, "leaderrun_history");
	cr_assert_str_eq(OK("--table", "ops.jobs_lease", "true").history_table, "ops.jobs_history");
	cr_assert_str_eq(OK("--table", "leases", "true").history_table, "leases_history");
	/* Found by fuzz_options: "_lease" alone left "_history", no name of
	 * its own. */
	cr_assert_str_eq(OK("--table", "_lease", "true").history_table, "_lease_history");
	cr_assert_str_eq(OK("--table", "db._lease", "true").history_table, "db._lease_history");
}

Test(options, short_ttl_alone_scales_the_other_defaults)
{
	struct options o = OK("-t", "1s", "true");

	cr_assert_eq(o.timing.renew_us, 333333);
	cr_assert_eq(o.timing.grace_us, 250000);
	cr_assert_eq(o.timing.margin_us, 200000);
	o = OK("--ttl", "3s", "true");
	cr_assert_eq(o.timing.renew_us, 1000000);
	cr_assert_eq(o.timing.grace_us, 750000);
	cr_assert_eq(o.timing.margin_us, 600000);
}

Test(options, command_options_stay_the_commands)
{
	struct options o = OK("-n", "ls", "-l", "--all");

	cr_assert(o.no_wait);
	cr_assert_str_eq(o.command[0], "ls");
	cr_assert_str_eq(o.command[1], "-l");
	cr_assert_str_eq(o.command[2], "--all");
}

Test(options, environment_fills_what_options_do_not)
{
	struct options o;

	setenv("LEADERRUN_LEASE", "from-env", 1);
	setenv("LEADERRUN_TABLE", "ops.leases", 1);
	setenv("LEADERRUN_HOLDER", "me", 1);
	setenv("LEADERRUN_DSN", "mysql://app@db/ops", 1);
	o = OK("true");
	cr_assert_str_eq(o.lease, "from-env");
	cr_assert_str_eq(o.table, "ops.leases");
	cr_assert_str_eq(o.holder, "me");
	cr_assert_str_eq(o.dsn.hosts[0].name, "db");
	o = OK("-l", "from-arg", "true");
	cr_assert_str_eq(o.lease, "from-arg");
}

Test(options, password_sources)
{
	struct options o;

	setenv("MYSQL_PWD", "pw-mysql", 1);
	o = OK("true");
	cr_assert_str_eq(o.password, "pw-mysql");
	setenv("LEADERRUN_PASSWORD", "pw-leaderrun", 1);
	o = OK("true");
	cr_assert_str_eq(o.password, "pw-leaderrun");
}

Test(options, password_file_loses_one_trailing_newline)
{
	char path[] = "/tmp/lr-pw-XXXXXX";
	int fd = mkstemp(path);
	struct options o;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "s3cret\n", 7), 7);
	close(fd);
	o = OK("--password-file", path, "true");
	cr_assert_str_eq(o.password, "s3cret");
	unlink(path);
}

Test(options, dsn_password_is_wiped_from_argv)
{
	char *argv[] = {strdup("leaderrun"), strdup("-d"), strdup("mysql://app:hunter2@db/ops"), strdup("true"), NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(4, argv, stdout, &o, err, sizeof(err)), OPTIONS_OK);
	keep(argv, &o);
	cr_assert_str_eq(argv[2], "mysql://app:xxxxxxx@db/ops");
	cr_assert_str_eq(o.dsn.password, "hunter2");
}

Test(options, dsn_password_is_wiped_from_joined_form)
{
	char *argv[] = {strdup("leaderrun"), strdup("--dsn=mysql://app:pw@db/ops"), strdup("true"), NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(3, argv, stdout, &o, err, sizeof(err)), OPTIONS_OK);
	keep(argv, &o);
	cr_assert_str_eq(argv[1], "--dsn=mysql://app:xx@db/ops");
}

Test(options, init_mode)
{
	struct options o = OK("--init");
	cr_assert_eq(o.mode, MODE_INIT);
}

Test(options, kill_signal_by_name_or_number)
{
	cr_assert_eq(OK("--kill-signal", "INT", "true").kill_signal, SIGINT);
	cr_assert_eq(OK("--kill-signal", "SIGHUP", "true").kill_signal, SIGHUP);
	cr_assert_eq(OK("--kill-signal", "quit", "true").kill_signal, SIGQUIT);
	cr_assert_eq(OK("--kill-signal", "9", "true").kill_signal, SIGKILL);
}

Test(options, bad_inputs_are_usage_errors)
{
	USAGE("no COMMAND", "-n");
	USAGE("this mode takes no COMMAND", "--init", "true");
	USAGE("unknown option '--frobnicate'", "--frobnicate", "true");
	USAGE("unknown option '-z'", "-z", "true");
}

Test(options, missing_value_is_reported)
{
	USAGE("needs a value", "--ttl");
}

Test(options, bad_values_name_the_option)
{
	USAGE("--ttl: 'abc' is not a duration", "--ttl", "abc", "true");
	USAGE("--ttl: '-5s' is negative", "--ttl", "-5s", "true");
	USAGE("--wait-timeout", "-w", "soon", "true");
	USAGE("--kill-signal 'FOO' is not a signal", "--kill-signal", "FOO", "true");
	USAGE("does not stop a process", "--kill-signal", "CONT", "true");
	USAGE("--busy-exit-code '300'", "-E", "300", "true");
	USAGE("--busy-exit-code 'x'", "-E", "x", "true");
	USAGE("--dsn: DSN must start with mysql://", "-d", "localhost", "true");
	USAGE("not a valid table name", "--table", "drop table;", "true");
	USAGE("not a valid table name", "--table", "a.b.c", "true");
	USAGE("lease name must be UTF-8", "-l", "a\nb", "true");
	USAGE("--password-file /nonexistent", "--password-file", "/nonexistent", "true");
	USAGE("--defaults-file /nonexistent", "--defaults-file", "/nonexistent", "true");
	USAGE("contradict", "-n", "-w", "5s", "true");
	USAGE("contradict", "-q", "-v", "true");
}

Test(options, lease_name_longer_than_the_column_is_rejected)
{
	char name[193];

	memset(name, 'x', 192);
	name[192] = '\0';
	USAGE("lease name is 192 bytes long; the limit is 191", "-l", name, "true");
	name[191] = '\0';
	cr_assert_str_eq(OK("-l", name, "true").lease, name);
}

Test(options, unsafe_explicit_timing_is_rejected_naming_the_number)
{
	USAGE("--kill-grace 3s leaves no time", "--ttl", "3s", "--kill-grace", "3s", "true");
	USAGE("--renew-interval 11s must be at most", "--renew-interval", "11s", "true");
	USAGE("--ttl 50ms is too short", "--ttl", "50ms", "true");
	USAGE("--renew-interval must be more than 0", "--renew-interval", "0", "true");
}

Test(options, dsn_with_password_and_password_file_conflict)
{
	USAGE("already holds a password", "-d", "mysql://a:b@h/d", "--password-file", "/etc/hostname", "true");
}

Test(options, every_dsn_password_form_is_wiped)
{
	char *argv[] = {strdup("leaderrun"),
			strdup("-d"),
			strdup("mysql://a:first@h/d"),
			strdup("-ndmysql://a:second@h/d"),
			strdup("--ds=mariadb://a:third@h/d"),
			strdup("true"),
			strdup("mysql://a:child@h/d"),
			NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(7, argv, stdout, &o, err, sizeof(err)), OPTIONS_OK, "%s", err);
	keep(argv, &o);
	cr_assert_str_eq(argv[2], "mysql://a:xxxxx@h/d");
	cr_assert_str_eq(argv[3], "-ndmysql://a:xxxxxx@h/d");
	cr_assert_str_eq(argv[4], "--ds=mariadb://a:xxxxx@h/d");
	cr_assert_str_eq(o.dsn.password, "third", "the last --dsn wins");
	cr_assert_str_eq(argv[6], "mysql://a:child@h/d", "COMMAND's arguments are its own");
}

Test(options, nested_leaderrun_does_not_inherit_the_outer_lease)
{
	struct options o;

	setenv("LEADERRUN_LEASE", "outer", 1);
	setenv("LEADERRUN_HOLDER", "outer-holder", 1);
	setenv("LEADERRUN_TERM", "7", 1);
	o = OK("echo", "inner");
	cr_assert_str_eq(o.lease, "echo inner");
	cr_assert_str_neq(o.holder, "outer-holder");
	unsetenv("LEADERRUN_TERM");
	o = OK("echo", "inner");
	cr_assert_str_eq(o.lease, "outer", "outside a leaderrun the variable is the default");
}

Test(options, tls_modes_and_their_rules)
{
	cr_assert_eq(OK("--ssl-mode", "required", "true").tls, DB_TLS_REQUIRED);
	cr_assert_eq(OK("--ssl-mode", "verify-ca", "--ssl-ca", "/etc/hostname", "true").tls, DB_TLS_VERIFY_CA);
	cr_assert_eq(OK("--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", "/etc/hostname", "true").tls,
		     DB_TLS_VERIFY_IDENTITY);
	cr_assert_eq(OK("-d", "mysql://a@h/d?ssl-mode=disabled", "true").tls, DB_TLS_DISABLED);
	cr_assert_eq(OK("-d", "mysql://a@h/d?ssl-mode=disabled", "--ssl-mode", "preferred", "true").tls,
		     DB_TLS_PREFERRED, "the option wins over the DSN");
	cr_assert_eq(OK("true").tls, DB_TLS_DEFAULT);
	USAGE("is not a mode", "--ssl-mode", "maybe", "true");
	/* Without --ssl-ca a VERIFY mode uses the system's bundle. */
	setenv("SSL_CERT_FILE", "/etc/hostname", 1);
	cr_assert_str_eq(OK("--ssl-mode", "VERIFY_CA", "-d", "mysql://a@db.internal/d", "true").system_ca,
			 "/etc/hostname");
	unsetenv("SSL_CERT_FILE");
	USAGE("--ssl-ca /nonexistent", "--ssl-ca", "/nonexistent", "true");
	USAGE("go together", "--ssl-cert", "/etc/hostname", "true");
	/* A device would be read for ever, by us and by the client library. */
	USAGE("--defaults-file /dev/zero: not a regular file", "--defaults-file", "/dev/zero", "true");
	USAGE("contradicts", "--ssl-mode", "DISABLED", "--ssl-ca", "/etc/hostname", "true");
}

Test(options, tls_defaults_by_transport)
{
	struct options o;

	setenv("SSL_CERT_FILE", "/etc/hostname", 1);
	/* Networked: verified against the system bundle, unless --ssl-ca. */
	o = OK("-d", "mysql://a@db.internal/d", "true");
	cr_assert_eq(o.tls, DB_TLS_DEFAULT);
	cr_assert_str_eq(o.system_ca, "/etc/hostname");
	cr_assert_null(o.unverified_host);
	cr_assert_str_eq(OK("-d", "mysql://a@db.internal/d", "--ssl-ca", "/etc/passwd", "true").ssl_ca, "/etc/passwd");
	/* Loopback and the socket: as before, no bundle looked up. */
	cr_assert_str_eq(OK("-d", "mysql://a@127.0.0.1:3306/d", "true").system_ca, "");
	cr_assert_str_eq(OK("-d", "mysql://a@[::1]/d", "true").system_ca, "");
	cr_assert_str_eq(OK("-d", "mysql://a@localhost/d?socket=/run/m.sock", "true").system_ca, "");
	/* Any host of several counts. */
	cr_assert_str_eq(OK("-d", "mysql://a@127.0.0.1,db2.internal/d", "true").system_ca, "/etc/hostname");
	/* DISABLED on a networked host: allowed, remembered for the warning. */
	o = OK("-d", "mysql://a@127.0.0.1,db2.internal/d?ssl-mode=disabled", "true");
	cr_assert_str_eq(o.unverified_host, "db2.internal");
	cr_assert_null(OK("-d", "mysql://a@127.0.0.1/d?ssl-mode=disabled", "true").unverified_host);
	unsetenv("SSL_CERT_FILE");

	/* The environment may not switch verification off... */
	setenv("MARIADB_TLS_DISABLE_PEER_VERIFICATION", "1", 1);
	USAGE("MARIADB_TLS_DISABLE_PEER_VERIFICATION is set", "-d", "mysql://a@db.internal/d", "true");
	USAGE("--ssl-mode=DISABLED", "-d", "mysql://a@db.internal/d", "--status");
	/* ...but where nothing is verified it changes nothing. */
	OK("-d", "mysql://a@127.0.0.1/d", "true");
	OK("-d", "mysql://a@db.internal/d", "--ssl-mode", "DISABLED", "true");
	unsetenv("MARIADB_TLS_DISABLE_PEER_VERIFICATION");
}

Test(options, operator_modes_and_their_arguments)
{
	struct options o = OK("--status");

	cr_assert_eq(o.mode, MODE_STATUS);
	cr_assert(o.all_leases);
	o = OK("--status", "--json", "nightly");
	cr_assert(!o.all_leases);
	cr_assert(o.json);
	cr_assert_str_eq(o.lease, "nightly");
	o = OK("--release", "nightly");
	cr_assert_eq(o.mode, MODE_RELEASE);
	cr_assert_str_eq(o.lease, "nightly");
	o = OK("--check", "--lease", "a", "--holder", "h", "--term", "9");
	cr_assert_eq(o.mode, MODE_CHECK);
	cr_assert_eq(o.check_term, 9);
	setenv("LEADERRUN_LEASE", "envlease", 1);
	setenv("LEADERRUN_HOLDER", "envholder", 1);
	setenv("LEADERRUN_TERM", "12", 1);
	o = OK("--check");
	cr_assert_str_eq(o.lease, "envlease", "inside the command the variables are the input");
	cr_assert_eq(o.check_term, 12);
	USAGE("modes of their own", "--status", "--init");
	USAGE("takes at most one LEASE", "--status", "a", "b");
	USAGE("--json goes with --status", "--json", "true");
	USAGE("--term goes with --check", "--term", "3", "true");
	USAGE("not a term number", "--check", "--term", "x");
	unsetenv("LEADERRUN_TERM");
	unsetenv("LEADERRUN_LEASE");
	unsetenv("LEADERRUN_HOLDER");
	USAGE("--check needs the lease, holder and term", "--check");
}

Test(options, revocation_pause_and_once_per)
{
	struct options o = OK("--release", "nightly");

	cr_assert(!o.force, "--release revokes unless --force is asked for");
	o = OK("--release", "nightly", "--force");
	cr_assert(o.force);
	o = OK("--pause", "nightly");
	cr_assert_eq(o.mode, MODE_PAUSE);
	cr_assert_eq(o.pause_for_us, -1, "a pause lasts until --resume");
	cr_assert(strchr(o.holder, '@'), "the pause names who made it: %s", o.holder);
	o = OK("--pause", "nightly", "--for", "90m", "--holder", "ops");
	cr_assert_eq(o.pause_for_us, INT64_C(5400000000));
	cr_assert_str_eq(o.holder, "ops");
	o = OK("--resume", "nightly");
	cr_assert_eq(o.mode, MODE_RESUME);
	o = OK("--once-per", "5m", "--", "true");
	cr_assert_eq(o.once_per_us, INT64_C(300000000));
	USAGE("--force goes with --release", "--force", "--", "true");
	USAGE("--for goes with --pause", "--resume", "x", "--for", "1m");
	USAGE("positive duration", "--pause", "x", "--for", "0");
	USAGE("modes of their own", "--pause", "x", "--release", "x");
	USAGE("this mode takes no COMMAND", "--pause", "x", "true");
	USAGE("--once-per goes with a COMMAND", "--once-per", "5m", "--status");
	USAGE("--once-per 500ms is out of range", "--once-per", "500ms", "--", "true");
	USAGE("--once-per 9000h is out of range", "--once-per", "9000h", "--", "true");
}

Test(options, notifications_and_log_format)
{
	struct options o = OK("--ping", "https://hc.example/abc", "--notify", "http://a/", "--notify", "http://b/",
			      "--min-hold", "4m", "--ready-file", "/tmp/r", "true");

	cr_assert_str_eq(o.ping_url, "https://hc.example/abc");
	cr_assert_eq(o.nnotify, 2);
	cr_assert_eq(o.min_hold_us, INT64_C(240000000));
	cr_assert_str_eq(o.ready_file, "/tmp/r");
	cr_assert_eq(o.log_format, LOG_FORMAT_TEXT);
	setenv("LEADERRUN_LOG_FORMAT", "json", 1);
	cr_assert_eq(OK("true").log_format, LOG_FORMAT_JSON);
	cr_assert_eq(OK("--log-format", "text", "true").log_format, LOG_FORMAT_TEXT, "the option wins");
	unsetenv("LEADERRUN_LOG_FORMAT");
	USAGE("not a format", "--log-format", "xml", "true");
	USAGE("must start with http", "--ping", "ftp://x", "true");
	USAGE("must start with http", "--notify", "x", "true");
}

Test(options, shell_string_runs_under_bin_sh_and_names_the_lease)
{
	struct options o = OK("-n", "-c", "cd /srv/app && ./nightly.sh");

	cr_assert_eq(o.mode, MODE_RUN);
	cr_assert(o.no_wait);
	cr_assert_str_eq(o.command[0], "/bin/sh");
	cr_assert_str_eq(o.command[1], "-c");
	cr_assert_str_eq(o.command[2], "cd /srv/app && ./nightly.sh");
	cr_assert_null(o.command[3]);
	cr_assert(o.lease_derived);
	cr_assert_str_eq(o.lease, "cd /srv/app && ./nightly.sh", "a plain string reads as typed");
	/* The same words as COMMAND run the same program: the same lease. */
	cr_assert_str_eq(OK("-c", "./nightly.sh --full").lease, OK("--", "./nightly.sh", "--full").lease);
	cr_assert_str_neq(OK("-c", "echo a").lease, OK("-c", "echo b").lease);
	cr_assert_str_eq(OK("--command=true").command[2], "true");
	cr_assert_str_eq(OK("-ctrue").command[2], "true");
	cr_assert_str_eq(OK("-nc", "true").command[2], "true");
	cr_assert_str_eq(OK("-l", "nightly", "-c", "true").lease, "nightly", "-l still names the lease");
	/* A -- with nothing after it ends the options, and is no COMMAND. */
	cr_assert_str_eq(OK("-c", "true", "--").command[2], "true");
}

Test(options, shell_string_with_a_command_or_a_mode_is_refused)
{
	USAGE("-c STRING and COMMAND 'echo' contradict each other", "-c", "true", "--", "echo", "hi");
	USAGE("-c STRING and COMMAND 'echo' contradict each other", "-c", "true", "echo");
	USAGE("-c '' runs nothing", "-c", "");
	USAGE("-c given twice", "-c", "true", "-c", "false");
	USAGE("needs a value", "-c");
	USAGE("does not go with --init", "--status", "-c", "true");
	USAGE("does not go with --init", "--init", "-c", "true");
}

Test(options, shell_string_is_not_wiped_like_a_dsn)
{
	/* A DSN password in leaderrun's own -d is wiped; one in -c's STRING
	 * belongs to the command, which must get it unchanged. */
	char *argv[] = {strdup("leaderrun"),
			strdup("-d"),
			strdup("mysql://app:hunter2@db/ops"),
			strdup("-c"),
			strdup("mysql-tool mysql://u:pw@h/d"),
			NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(5, argv, stdout, &o, err, sizeof(err)), OPTIONS_OK, "%s", err);
	keep(argv, &o);
	cr_assert_str_eq(argv[2], "mysql://app:xxxxxxx@db/ops");
	cr_assert_str_eq(argv[4], "mysql-tool mysql://u:pw@h/d");
	cr_assert_str_eq(o.command[2], "mysql-tool mysql://u:pw@h/d");
}

Test(options, max_runtime_is_positive_and_goes_with_a_run)
{
	cr_assert_eq(OK("true").max_runtime_us, 0, "no limit by default");
	cr_assert_eq(OK("--max-runtime", "4m", "true").max_runtime_us, INT64_C(240000000));
	cr_assert_eq(OK("--max-runtime", "1.5s", "-c", "sleep 9").max_runtime_us, INT64_C(1500000));
	USAGE("--max-runtime 0 is no time to run for", "--max-runtime", "0", "true");
	USAGE("--max-runtime 0ms is no time to run for", "--max-runtime", "0ms", "true");
	USAGE("--max-runtime: '-1s' is negative", "--max-runtime", "-1s", "true");
	USAGE("--max-runtime: 'soon' is not a duration", "--max-runtime", "soon", "true");
	USAGE("--max-runtime goes with a COMMAND", "--max-runtime", "1m", "--status");
}

Test(options, a_value_for_a_flag_is_reported_by_name)
{
	USAGE("option '--init' takes no value", "--init=1");
	USAGE("option '--no-wait' takes no value", "--no-wait=1", "true");
	USAGE("option '--no-wait' takes no value", "--no-wai=1", "true");
}

/* Fails unless parsing ARGV is a usage error that names NEEDLE and holds
 * no byte of SECRET's distinctive part. */
static void usage_without(int argc, char **argv, const char *needle, const char *secret)
{
	struct options o;
	char err[512] = "";

	cr_assert_eq(parse(argc, argv, &o, err, sizeof(err)), OPTIONS_USAGE, "accepted; wanted '%s'", needle);
	cr_assert(strstr(err, needle), "error lacks '%s': %s", needle, err);
	cr_assert_null(strstr(err, secret), "the secret '%s' is in: %s", secret, err);
	cr_assert(!strchr(err, '\n'), "error is not one line: %s", err);
}
#define USAGE_WITHOUT(needle, secret, ...) usage_without(ARGC(ARGV(__VA_ARGS__)), ARGV(__VA_ARGS__), needle, secret)

Test(options, a_mistyped_option_is_named_without_its_value)
{
	USAGE_WITHOUT("unknown option '--dns';", "hunter2", "--dns=mysql://app:hunter2@db/ops", "true");
	USAGE_WITHOUT("option '--d' is ambiguous", "hunter2", "--d=mysql://app:hunter2@db/ops", "true");
	USAGE_WITHOUT("unknown option '--password'", "hunter2", "--password=hunter2", "true");
	USAGE_WITHOUT("unknown option '--password'", "hunter2", "--password", "hunter2", "true");
	USAGE_WITHOUT("unknown option '--pass'", "hunter2", "--pass", "hunter2", "true");
	USAGE_WITHOUT("unknown option '--frobnicate'", "hunter2", "--frobnicate=hunter2", "true");
	/* Written out far enough, it is the option. */
	USAGE("--password-file hunter2: No such file", "--password-=hunter2", "true");
}

Test(options, a_dsn_in_the_wrong_place_is_shown_without_its_password)
{
	USAGE_WITHOUT("unexpected argument 'mysql://app:***@db/ops'", "hunter2", "--init",
		      "mysql://app:hunter2@db/ops");
	USAGE_WITHOUT("not 'mysql://app:***@db/ops'", "hunter2", "--status", "x", "mysql://app:hunter2@db/ops");
	USAGE_WITHOUT("COMMAND 'mysql://app:***@db/ops'", "hunter2", "-c", "true", "mysql://app:hunter2@db/ops");
	USAGE_WITHOUT("looks like a DSN with a password", "hunter2", "--status", "mysql://app:hunter2@db/ops");
	USAGE_WITHOUT("looks like a DSN with a password", "hunter2", "--release", "mysql://app:hunter2@db/ops");
	USAGE_WITHOUT("looks like a DSN with a password", "hunter2", "-l", "mysql://app:hunter2@db/ops", "true");
	USAGE_WITHOUT("--ttl: 'mysql://app:***@db/ops' is not a duration", "hunter2", "--ttl",
		      "mysql://app:hunter2@db/ops", "true");
	USAGE_WITHOUT("--format 'mysql://app:***@db/ops'", "hunter2", "--status", "--format",
		      "mysql://app:hunter2@db/ops");
}

Test(options, a_rejected_dsn_is_shown_without_its_password_from_argv_and_environment)
{
	USAGE_WITHOUT("--dsn: DSN port must be a number from 1 to 65535, not '99999'", "Sup3r", "-d",
		      "mysql://app:Sup3r?Secret@db:99999/ops", "true");
	USAGE_WITHOUT("in mysql://app:***@db/ops", "Sup3r", "-d", "mysql://app:Sup3r?ssl-mode=Secret@db/ops", "true");
	setenv("LEADERRUN_DSN", "mysql://app:Sup3r?ssl-mode=Secret@db/ops", 1);
	USAGE_WITHOUT("LEADERRUN_DSN: DSN port must be", "Sup3r", "true");
	USAGE_WITHOUT("LEADERRUN_DSN: DSN port must be", "Secret", "true");
}

Test(options, a_password_with_reserved_characters_is_wiped_whole)
{
	char *argv[] = {strdup("leaderrun"), strdup("-d"), strdup("mysql://app:Sup3r?Se@cr/et#1@db/ops"),
			strdup("true"), NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(4, argv, stdout, &o, err, sizeof(err)), OPTIONS_OK, "%s", err);
	keep(argv, &o);
	cr_assert_str_eq(argv[2], "mysql://app:xxxxxxxxxxxxxxxx@db/ops");
	cr_assert_str_eq(o.dsn.password, "Sup3r?Se@cr/et#1");
}

Test(options, a_refused_command_line_is_wiped_too)
{
	/* The DSN was never parsed (the typo comes first): its password goes
	 * all the same, and so does that of a mistyped option's value. */
	char *argv[] = {strdup("leaderrun"), strdup("--dns=mysql://a:first@h/d"),
			strdup("-d"),	     strdup("mysql://a:second@h/d"),
			strdup("true"),	     NULL};
	struct options o;
	char err[256];

	cr_assert_eq(options_parse(5, argv, stdout, &o, err, sizeof(err)), OPTIONS_USAGE);
	keep(argv, NULL);
	cr_assert_str_eq(argv[1], "--dns=mysql://a:xxxxx@h/d");
	cr_assert_str_eq(argv[3], "mysql://a:xxxxxx@h/d");
}

Test(options, special_files_where_tls_reads_are_refused)
{
	char dir[] = "/tmp/lr-opt-XXXXXX", fifo[64];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	USAGE("--ssl-ca", "--ssl-ca", fifo, "true");
	USAGE("--ssl-ca /dev/null is a device", "--ssl-ca", "/dev/null", "true");
	unlink(fifo);
	rmdir(dir);
}

Test(options, a_second_parse_forgets_the_first)
{
	/* Found by reading the fuzzer's harness: optind = 1 left glibc inside
	 * the "-Vv" bundle of the earlier call. */
	struct options o;
	char err[256];
	FILE *devnull = fopen("/dev/null", "w");
	char *first[] = {strdup("leaderrun"), strdup("-Vv"), NULL};
	char *second[] = {strdup("leaderrun"), strdup("true"), NULL};

	cr_assert_eq(options_parse(2, first, devnull, &o, err, sizeof(err)), OPTIONS_EXIT);
	keep(first, NULL);
	cr_assert_eq(options_parse(2, second, devnull, &o, err, sizeof(err)), OPTIONS_OK, "%s", err);
	keep(second, &o);
	fclose(devnull);
}

/* ---- the option table against the man page and the completion ------- */

static char *slurp_source(const char *rel)
{
	const char *root = getenv("LEADERRUN_SOURCE_ROOT");
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	cr_assert_not_null(root, "LEADERRUN_SOURCE_ROOT is set by meson");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (nstrings < 64)
		strings[nstrings++] = buf;
	return buf;
}

/* A set of option spellings ("--dsn", "-d"), small and linear. */
struct spellings {
	char v[128][40];
	int n;
};

static void add_spelling(struct spellings *s, const char *w, size_t len)
{
	if (len >= sizeof(s->v[0]) || s->n == 128)
		return;
	for (int i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && strncmp(s->v[i], w, len) == 0)
			return;
	memcpy(s->v[s->n], w, len);
	s->v[s->n++][len] = '\0';
}

static bool has_spelling(const struct spellings *s, const char *w)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i], w) == 0)
			return true;
	return false;
}

/* The table's spellings: long ones, or (VALUES) only those that take a
 * value, with their short forms. */
static void table_spellings(struct spellings *s, bool values_only, bool shorts)
{
	size_t n;
	const struct options_def *d = options_table(&n);
	char w[40];

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		if (values_only && d[i].takes_value != 1)
			continue;
		snprintf(w, sizeof(w), "--%s", d[i].name);
		add_spelling(s, w, strlen(w));
		if (shorts && d[i].short_name) {
			snprintf(w, sizeof(w), "-%c", d[i].short_name);
			add_spelling(s, w, strlen(w));
		}
	}
}

static void assert_same_set(const struct spellings *want, const struct spellings *got, const char *where)
{
	for (int i = 0; i < want->n; i++)
		cr_expect(has_spelling(got, want->v[i]), "%s lacks %s", where, want->v[i]);
	for (int i = 0; i < got->n; i++)
		cr_expect(has_spelling(want, got->v[i]), "%s has %s, which is no option", where, got->v[i]);
}

Test(options, man_page_documents_every_option_and_no_other)
{
	char *man = slurp_source("man/leaderrun.1");
	char *from = strstr(man, "\n.SH OPTIONS\n"), *to = strstr(man, "\n.SH EXIT STATUS\n");
	struct spellings want, got = {.n = 0};

	cr_assert(from && to && from < to, "the man page has OPTIONS and EXIT STATUS sections");
	*to = '\0';
	/* Every option is the tag of a .TP paragraph: the line after it. */
	for (char *tp = from; (tp = strstr(tp, "\n.TP\n")); tp += 5) {
		char *line = tp + 5, *eol = strchr(line, '\n');
		if (!eol)
			break;
		for (char *q = line; q < eol; q++) {
			char w[40];
			size_t k = 0;
			if (strncmp(q, "\\-\\-", 4) != 0)
				continue;
			w[k++] = '-';
			w[k++] = '-';
			for (q += 4; q < eol && k < sizeof(w) - 1;) {
				if (strncmp(q, "\\-", 2) == 0) {
					w[k++] = '-';
					q += 2;
				} else if ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))
					w[k++] = *q++;
				else
					break;
			}
			add_spelling(&got, w, k);
			q--;
		}
	}
	table_spellings(&want, false, false);
	assert_same_set(&want, &got, "leaderrun(1) OPTIONS");
}

/* The words of the completion script between MARK and END, split at
 * blanks, '|', '\' and quotes. */
static void completion_words(const char *script, const char *mark, const char *end, struct spellings *s)
{
	const char *from = strstr(script, mark), *to;

	memset(s, 0, sizeof(*s));
	cr_assert_not_null(from, "the completion script has %s", mark);
	from += strlen(mark);
	to = strstr(from, end);
	cr_assert_not_null(to);
	for (const char *q = from; q < to;) {
		size_t k = strcspn(q, " \t\n|\\\")");
		if (q + k > to)
			k = (size_t)(to - q);
		if (k && q[0] == '-')
			add_spelling(s, q, k);
		q += k ? k : 1;
	}
}

Test(options, bash_completion_knows_every_option_and_which_take_values)
{
	char *script = slurp_source("scripts/completion/leaderrun");
	struct spellings want, got;

	table_spellings(&want, false, false);
	completion_words(script, "local opts=\"", "\"", &got);
	assert_same_set(&want, &got, "the completion's opts");
	/* Words that take a value: the completion skips them when looking
	 * for the command. */
	table_spellings(&want, true, true);
	completion_words(script, "case ${words[i]} in", ")", &got);
	assert_same_set(&want, &got, "the completion's options with a value");
}

/* The modes column: a row either goes with every mode and has no line to
 * refuse it, or goes with some and has one that names it. */
Test(options, every_option_for_some_modes_has_a_line_naming_it)
{
	size_t n;
	const struct options_def *d = options_table(&n);

	for (size_t i = 0; i < n; i++) {
		char name[40];
		if (d[i].modes == OPTIONS_ANY_MODE) {
			cr_expect_null(d[i].modes_error, "--%s goes with every mode but has a line", d[i].name);
			continue;
		}
		cr_assert_not_null(d[i].modes_error, "--%s goes with some modes only, and says nothing", d[i].name);
		cr_expect_neq(d[i].modes, 0, "--%s goes with no mode at all", d[i].name);
		snprintf(name, sizeof(name), "--%s ", d[i].name);
		if (d[i].short_name && strncmp(d[i].modes_error, name, strlen(name)) != 0)
			snprintf(name, sizeof(name), "-%c ", d[i].short_name);
		cr_expect(strncmp(d[i].modes_error, name, strlen(name)) == 0, "the line of --%s does not name it: %s",
			  d[i].name, d[i].modes_error);
		cr_expect(!strchr(d[i].modes_error, '\n'), "the line of --%s is not one line", d[i].name);
	}
}

/* Parses a command line in MODE with the option D (and a value it
 * takes). */
static enum options_result parse_in_mode(enum options_mode mode, const struct options_def *d, char *err, size_t errlen)
{
	static const char *const modes[][2] = {
	    [MODE_RUN] = {NULL, NULL},		[MODE_INIT] = {"--init", NULL},
	    [MODE_STATUS] = {"--status", NULL}, [MODE_RELEASE] = {"--release", "L"},
	    [MODE_CHECK] = {"--check", NULL},	[MODE_PAUSE] = {"--pause", "L"},
	    [MODE_RESUME] = {"--resume", "L"},	[MODE_HISTORY] = {"--history", "L"},
	};
	char *argv[10], opt[40];
	int argc = 0;
	struct options o;
	enum options_result r;

	argv[argc++] = "leaderrun";
	for (int k = 0; k < 2 && modes[mode][k]; k++)
		argv[argc++] = (char *)modes[mode][k];
	snprintf(opt, sizeof(opt), "--%s", d->name);
	argv[argc++] = opt;
	if (d->takes_value == 1)
		argv[argc++] = strcmp(d->name, "format") == 0 ? "json" : "1";
	if (mode == MODE_RUN) {
		argv[argc++] = "--";
		argv[argc++] = "true";
	}
	argv[argc] = NULL;
	/* Its own copy, freed here: the shared helpers keep 64 at most. */
	for (int k = 0; k < argc; k++)
		argv[k] = strdup(argv[k]);
	r = options_parse(argc, argv, stdout, &o, err, errlen);
	if (r == OPTIONS_OK)
		options_free(&o);
	for (int k = 0; k < argc; k++)
		free(argv[k]);
	return r;
}

Test(options, an_option_outside_its_modes_is_refused_with_its_line)
{
	size_t n;
	const struct options_def *d = options_table(&n);

	for (size_t i = 0; i < n; i++) {
		if (d[i].modes == OPTIONS_ANY_MODE)
			continue;
		for (enum options_mode m = MODE_RUN; m <= MODE_HISTORY; m++) {
			char err[512] = "";
			enum options_result r = parse_in_mode(m, &d[i], err, sizeof(err));
			if (d[i].modes & OPTIONS_MODE(m))
				cr_expect(r == OPTIONS_OK || strcmp(err, d[i].modes_error) != 0,
					  "--%s refused in mode %d, which it goes with", d[i].name, (int)m);
			else {
				cr_expect_eq(r, OPTIONS_USAGE, "--%s accepted in mode %d", d[i].name, (int)m);
				cr_expect_str_eq(err, d[i].modes_error, "--%s in mode %d", d[i].name, (int)m);
			}
		}
	}
}

Test(options, service_options_are_judged_together)
{
	struct options o = OK("--service", "--on-promote", "p", "--on-demote", "d", "--", "svc");

	cr_assert(o.service);
	cr_assert_str_eq(o.on_promote, "p");
	cr_assert_str_eq(o.on_demote, "d");
	USAGE("--on-promote goes with --service", "--on-promote", "p", "--", "svc");
	USAGE("--on-demote goes with --service", "--on-demote", "d", "--", "svc");
	USAGE("does not go with --no-wait", "--service", "-n", "--", "svc");
	USAGE("does not go with --max-runtime", "--service", "--max-runtime", "1m", "--", "svc");
	USAGE("does not go with --slots 2", "--service", "--slots", "2", "--", "svc");
	USAGE("--on-promote needs a command STRING", "--service", "--on-promote", "", "--", "svc");
	USAGE("--service goes with a COMMAND to run", "--service", "--status");
}

Test(options, promote_timeout_is_a_positive_duration_of_a_service)
{
	struct options o = OK("--service", "--on-promote", "p", "--", "svc");

	cr_assert_eq(o.promote_timeout_us, 20 * 1000000, "the default");
	o = OK("--service", "--promote-timeout", "1.5s", "--on-promote", "p", "--", "svc");
	cr_assert_eq(o.promote_timeout_us, 1500000);
	USAGE("--promote-timeout goes with --service; add --service to run COMMAND on every instance",
	      "--promote-timeout", "5s", "--", "svc");
	USAGE("--promote-timeout 0 is no time for a promote; give a positive duration, like 20s", "--service",
	      "--promote-timeout", "0", "--", "svc");
	USAGE("--promote-timeout: ", "--service", "--promote-timeout", "-1s", "--", "svc");
	USAGE("--promote-timeout goes with --service and a COMMAND to run", "--promote-timeout", "5s", "--status");
}

Test(options, role_http_takes_an_address_and_a_port)
{
	struct options o = OK("--role-http", "127.0.0.1:4040", "--role-file", "/run/x", "--", "svc");

	cr_assert_str_eq(o.role_http, "127.0.0.1:4040");
	OK("--role-http", "[::1]:4040", "--", "svc");
	OK("--role-http", "localhost:0", "--", "svc");
	USAGE("--role-http: '4040' is not ADDR:PORT", "--role-http", "4040", "--", "svc");
	USAGE("--role-http: 'db.example' is not an address to listen on", "--role-http", "db.example:80", "--", "svc");
	USAGE("not ADDR:PORT", "--role-http", "127.0.0.1:65536", "--", "svc");
	USAGE("--role-file needs a path", "--role-file", "", "--", "svc");
	USAGE("--role-http goes with a COMMAND to run", "--role-http", "127.0.0.1:1", "--status");
}

Test(options, health_options_tune_a_health_cmd)
{
	struct options o = OK("--health-cmd", "true", "--", "svc");

	cr_assert_str_eq(o.health_cmd, "true");
	cr_assert_eq(o.health_interval_us, 5000000);
	cr_assert_eq(o.health_retries, 3);
	o = OK("--health-cmd", "true", "--health-interval", "250ms", "--health-retries", "1", "--", "svc");
	cr_assert_eq(o.health_interval_us, 250000);
	cr_assert_eq(o.health_retries, 1);
	USAGE("--health-interval tunes --health-cmd; add --health-cmd CMD", "--health-interval", "1s", "--", "svc");
	USAGE("--health-retries tunes --health-cmd", "--health-retries", "2", "--", "svc");
	USAGE("--health-interval 10ms is out of range", "--health-cmd", "true", "--health-interval", "10ms", "--",
	      "svc");
	USAGE("--health-retries '0' must be a number from 1 to 100", "--health-cmd", "true", "--health-retries", "0",
	      "--", "svc");
	USAGE("--health-cmd needs a command STRING", "--health-cmd", "", "--", "svc");
}

Test(options, schedule_next_is_a_mode_and_a_scheduled_job_refuses_the_other_ways_to_run)
{
	struct options o = OK("--schedule", "30 2 * * *", "--schedule-tz", "Europe/Berlin", "--next", "3", "--from",
			      "2027-03-27T00:00:00Z");

	cr_assert_eq(o.mode, MODE_NEXT);
	cr_assert_eq(o.next_count, 3);
	cr_assert(o.have_schedule);
	cr_assert_eq(schedule_next(&o.schedule, o.from_us), INT64_C(1806111000) * 1000000, "2027-03-27T01:30:00Z");
	USAGE("--schedule runs COMMAND once a slot; it does not go with -n", "--schedule", "@daily", "-n", "--", "job");
	USAGE("it does not go with --once-per", "--schedule", "@daily", "--once-per", "24h", "--", "job");
	USAGE("it does not go with --service", "--schedule", "@daily", "--service", "--", "job");
	USAGE("it does not go with --slots above 1", "--schedule", "@daily", "--slots", "2", "--", "job");
	USAGE("--next N prints a schedule's slots; add --schedule SPEC", "--next", "3");
	USAGE("--schedule-tz ZONE is the time zone of a --schedule; add --schedule SPEC", "--schedule-tz", "UTC",
	      "--next", "3");
	USAGE("--from goes with --next N", "--schedule", "@daily", "--from", "2027-01-01T00:00:00Z", "--", "job");
	USAGE("--from: \"tomorrow\" is not a time", "--schedule", "@daily", "--next", "1", "--from", "tomorrow");
	USAGE("--schedule: the hour field \"25\" is out of range 0-23", "--schedule", "0 25 * * *", "--next", "1");
	USAGE("--schedule-tz: unknown time zone \"Mars/Olympus\"", "--schedule", "@daily", "--schedule-tz",
	      "Mars/Olympus", "--next", "1");
	USAGE("--next '0' must be a number of slots from 1 to 10000", "--schedule", "@daily", "--next", "0");
	USAGE("--next '10001' must be", "--schedule", "@daily", "--next", "10001");
	USAGE("modes of their own", "--schedule", "@daily", "--next", "1", "--status");
	USAGE("unexpected argument 'job'", "--schedule", "@daily", "--next", "1", "job");
	USAGE("--schedule goes with a COMMAND to run, or with --next N", "--schedule", "@daily", "--history", "x");
	USAGE("--catch-up WINDOW runs a --schedule's lost slots again; add --schedule SPEC", "--catch-up", "1h", "--",
	      "job");
	USAGE("it does not go with --wait-timeout", "--schedule", "@daily", "-w", "1m", "--", "job");
	o = OK("--schedule", "@every 10m", "--catch-up", "5m", "-l", "x", "--", "job");
	cr_assert(o.have_schedule);
	cr_assert_eq(o.catch_up_us, INT64_C(300) * 1000000);
}
