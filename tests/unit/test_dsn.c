#include <criterion/criterion.h>
#include <string.h>

#include "cli/dsn.h"

static struct dsn ok(const char *s)
{
	struct dsn d;
	char err[256];

	cr_assert_eq(dsn_parse(s, &d, err, sizeof(err)), 0, "'%s' rejected: %s", s, err);
	return d;
}

static void bad(const char *s, const char *needle)
{
	struct dsn d;
	char err[256] = "";

	cr_assert_eq(dsn_parse(s, &d, err, sizeof(err)), -1, "'%s' accepted", s);
	cr_assert(strstr(err, needle), "error for '%s' lacks '%s': %s", s, needle, err);
}

Test(dsn, full_form)
{
	struct dsn d = ok("mysql://app:s3cret@db.internal:3307/ops?connect-timeout=3");

	cr_assert_str_eq(d.user, "app");
	cr_assert_str_eq(d.password, "s3cret");
	cr_assert_str_eq(d.hosts[0].name, "db.internal");
	cr_assert_eq(d.hosts[0].port, 3307);
	cr_assert_str_eq(d.database, "ops");
	cr_assert_eq(d.connect_timeout_s, 3);
	cr_assert_null(d.socket);
	dsn_free(&d);
}

Test(dsn, minimal_form_leaves_the_rest_unset)
{
	struct dsn d = ok("mysql://app@db/ops");

	cr_assert_str_eq(d.user, "app");
	cr_assert_null(d.password);
	cr_assert_eq(d.hosts[0].port, 0);
	cr_assert_eq(d.nhosts, 1);
	dsn_free(&d);
}

Test(dsn, socket_without_host)
{
	struct dsn d = ok("mysql://app@/ops?socket=/run/mysqld/mysqld.sock");

	cr_assert_eq(d.nhosts, 0);
	cr_assert_str_eq(d.socket, "/run/mysqld/mysqld.sock");
	dsn_free(&d);
}

Test(dsn, percent_escapes_and_raw_at_in_password)
{
	struct dsn d = ok("mysql://app:p%40ss%2Fw@db/ops");

	cr_assert_str_eq(d.password, "p@ss/w");
	dsn_free(&d);
	d = ok("mysql://app:p@ss@db/ops");
	cr_assert_str_eq(d.password, "p@ss");
	cr_assert_str_eq(d.hosts[0].name, "db");
	dsn_free(&d);
}

Test(dsn, ipv6_host)
{
	struct dsn d = ok("mysql://app@[::1]:3306/ops");

	cr_assert_str_eq(d.hosts[0].name, "::1");
	cr_assert_eq(d.hosts[0].port, 3306);
	dsn_free(&d);
}

Test(dsn, mariadb_scheme_is_accepted)
{
	struct dsn d = ok("mariadb://app@db/ops");
	dsn_free(&d);
}

Test(dsn, bad_inputs_say_what_is_wrong)
{
	bad("", "must start with mysql://");
	bad("postgres://a@b/c", "must start with mysql://");
	bad("mysql://app@db:0/ops", "port must be");
	bad("mysql://app@db:70000/ops", "port must be");
	bad("mysql://app@db:x/ops", "port must be");
	bad("mysql://app@/ops", "names no host");
	bad("mysql://app@db/ops?color=red", "unknown DSN parameter 'color'");
	bad("mysql://app@db/ops?socket", "needs a value");
	bad("mysql://app@db/ops?connect-timeout=0", "connect-timeout");
	bad("mysql://app@db/ops?connect-timeout=abc", "connect-timeout");
	bad("mysql://app@[::1/ops", "closing ']'");
	bad("mysql://%zz@db/ops", "user has a bad");
}

Test(dsn, errors_never_echo_the_password)
{
	struct dsn d;
	char err[256];

	cr_assert_eq(dsn_parse("mysql://app:hunter2%zz@db/ops", &d, err, sizeof(err)), -1);
	cr_assert_null(strstr(err, "hunter2"), "password leaked: %s", err);
	cr_assert_eq(dsn_parse("mysql://app:hunter2@db:99999/ops", &d, err, sizeof(err)), -1);
	cr_assert_null(strstr(err, "hunter2"), "password leaked: %s", err);
	cr_assert_eq(dsn_parse("mysql://app:hunter2@db/ops?x=1", &d, err, sizeof(err)), -1);
	cr_assert_null(strstr(err, "hunter2"), "password leaked: %s", err);
}

Test(dsn, password_span_and_removal)
{
	const char *s = "mysql://app:hunter2@db/ops";
	size_t off, len;
	char buf[128];

	cr_assert_eq(dsn_password_span(s, &off, &len), 1);
	cr_assert_eq(len, 7);
	cr_assert_eq(strncmp(s + off, "hunter2", len), 0);
	dsn_without_password(s, buf, sizeof(buf));
	cr_assert_str_eq(buf, "mysql://app@db/ops");
	cr_assert_eq(dsn_password_span("mysql://app@db/ops", &off, &len), 0);
	cr_assert_eq(dsn_password_span("garbage", &off, &len), 0);
	dsn_without_password("mysql://app@db/ops", buf, sizeof(buf));
	cr_assert_str_eq(buf, "mysql://app@db/ops");
}

Test(dsn, tls_parameters)
{
	struct dsn d =
	    ok("mysql://app@db/ops?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/ca.pem&ssl-cert=%2Fc.pem&ssl-key=/k.pem");

	cr_assert_str_eq(d.ssl_mode, "VERIFY_IDENTITY");
	cr_assert_str_eq(d.ssl_ca, "/etc/ca.pem");
	cr_assert_str_eq(d.ssl_cert, "/c.pem");
	cr_assert_str_eq(d.ssl_key, "/k.pem");
	dsn_free(&d);
}

Test(dsn, raw_at_in_a_socket_path_and_control_bytes)
{
	struct dsn d = ok("mysql://app:pw@/ops?socket=/run/mysqld/mysqld@2.sock");

	cr_assert_str_eq(d.password, "pw");
	cr_assert_str_eq(d.database, "ops");
	cr_assert_str_eq(d.socket, "/run/mysqld/mysqld@2.sock");
	dsn_free(&d);
	/* Found by the fuzzer: a decoded newline split an error message. */
	bad("mysql://app@db/ops?ssl-ca=a%0Ab.pem", "control character");
}

Test(dsn, several_hosts_in_order_with_and_without_ports)
{
	struct dsn d = ok("mysql://app@h1:3306,h2,[::1]:3307,h4/ops?host-order=random");

	cr_assert_eq(d.nhosts, 4);
	cr_assert_str_eq(d.hosts[0].name, "h1");
	cr_assert_eq(d.hosts[0].port, 3306);
	cr_assert_str_eq(d.hosts[1].name, "h2");
	cr_assert_eq(d.hosts[1].port, 0);
	cr_assert_str_eq(d.hosts[2].name, "::1");
	cr_assert_eq(d.hosts[2].port, 3307);
	cr_assert_str_eq(d.hosts[3].name, "h4");
	cr_assert(d.random_order);
	cr_assert_str_eq(d.database, "ops");
	dsn_free(&d);
	d = ok("mysql://app:pw@h1,h2/ops?host-order=in-order");
	cr_assert_eq(d.nhosts, 2);
	cr_assert_not(d.random_order);
	cr_assert_str_eq(d.password, "pw");
	dsn_free(&d);
}

Test(dsn, bad_host_lists_are_refused_with_the_reason)
{
	bad("mysql://app@h1,,h2/ops", "empty entry");
	bad("mysql://app@h1,/ops", "empty entry");
	bad("mysql://app@,h1/ops", "empty entry");
	bad("mysql://app@h1:3306,h2:0/ops", "port must be");
	bad("mysql://app@h1,[::1/ops", "closing ']'");
	bad("mysql://app@[::1,h2]/ops", "not an address");
	bad("mysql://app@h1/ops?host-order=sideways", "in-order or random");
	bad("mysql://app@a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q/ops", "more than 16 hosts");
}

Test(dsn, reserved_characters_in_a_raw_password_are_the_passwords)
{
	/* Issue 25: a '?' cut the DSN short, and the rest became a port. */
	struct dsn d = ok("mysql://app:Sup3r?Secret@db:3307/ops");
	size_t off, len;
	const char *s = "mysql://app:a?b@c/d#e:f@db/ops?ssl-mode=REQUIRED&socket=/run/x@y.sock";

	cr_assert_str_eq(d.password, "Sup3r?Secret");
	cr_assert_str_eq(d.hosts[0].name, "db");
	cr_assert_eq(d.hosts[0].port, 3307);
	dsn_free(&d);
	d = ok(s);
	cr_assert_str_eq(d.password, "a?b@c/d#e:f");
	cr_assert_str_eq(d.hosts[0].name, "db");
	cr_assert_str_eq(d.ssl_mode, "REQUIRED");
	cr_assert_str_eq(d.socket, "/run/x@y.sock");
	dsn_free(&d);
	cr_assert_eq(dsn_password_span(s, &off, &len), 1);
	cr_assert_eq(strncmp(s + off, "a?b@c/d#e:f@", len + 1), 0);
	d = ok("mysql://app:%3F%40%23@db/ops?");
	cr_assert_str_eq(d.password, "?@#", "percent-escapes always work");
	dsn_free(&d);
	/* ?NAME= begins the parameters, even after a password's '?'. */
	d = ok("mysql://app:pw@/ops?socket=/run/mysqld@2.sock");
	cr_assert_str_eq(d.password, "pw");
	dsn_free(&d);
	bad("mysql://db/ops?sokcet=/a@b", "unknown DSN parameter 'sokcet'");
}

/* Fails unless TEXT is refused with NEEDLE in the message and none of
 * SECRET. */
static void bad_quiet(const char *s, const char *needle, const char *secret)
{
	struct dsn d;
	char err[512] = "";

	cr_assert_eq(dsn_parse(s, &d, err, sizeof(err)), -1, "'%s' accepted", s);
	cr_assert(strstr(err, needle), "error for '%s' lacks '%s': %s", s, needle, err);
	cr_assert_null(strstr(err, secret), "'%s' leaked: %s", secret, err);
	cr_assert(!strchr(err, '\n'), "not one line: %s", err);
}

Test(dsn, no_error_shows_a_part_that_may_be_the_password)
{
	/* Read with ?ssl-mode= as the parameters, "app:Sup3r" is a host and
	 * a port: the port is the password's first half. */
	bad_quiet("mysql://app:Sup3r?ssl-mode=X@db/ops", "port must be a number from 1 to 65535, not '***'", "Sup3r");
	bad_quiet("mysql://app:Sup3r?ssl-mode=X@db/ops", "in mysql://app:***@db/ops", "ssl-mode=X");
	bad_quiet("mysql://app:Sup3r?ssl-mode=X@db/ops", "%3F", "Sup3r");
	bad_quiet("mysql://app:Sup3r?host-order=Secret@db/ops", "port must be", "Secret");
	bad_quiet("mysql://[app:Sup3r?socket=/s@h", "closing ']'", "Sup3r");
	/* Parts after the last '@' are never a password: they are shown. */
	bad_quiet("mysql://app:Sup3r?Secret@db:99999/ops", "not '99999'", "Sup3r");
	bad_quiet("mysql://app:Sup3r?Secret@db/ops?host-order=up", "not 'up'", "Secret");
	bad_quiet("mysql://app:Sup3r?Secret@[::1/ops", "'[::1'", "Secret");
	/* Raw control bytes never split the message. */
	bad_quiet("mysql://app@db:1\n2/ops", "port must be", "\n");
}

Test(dsn, the_secret_span_covers_every_reading)
{
	const char *s = "mysql://app:pw@/ops?socket=/run/x@y.sock";
	size_t off, len;
	char buf[128];

	cr_assert_eq(dsn_secret_span(s, &off, &len), 1);
	cr_assert_eq(strncmp(s + off, "pw@/ops?socket=/run/x", len), 0);
	cr_assert_eq(dsn_secret_span("mysql://db/ops", &off, &len), 0);
	cr_assert_eq(dsn_secret_span("mysql://app@db/ops", &off, &len), 0);
	dsn_redacted("mysql://app:Sup3r?Secret@db/ops", buf, sizeof(buf));
	cr_assert_str_eq(buf, "mysql://app:***@db/ops");
	dsn_redact_all("'mysql://a:b@h' and mariadb://c:d@h2/x", buf, sizeof(buf));
	cr_assert_str_eq(buf, "'mysql://a:***@h2/x");
	dsn_redact_all("no url: a:b@c", buf, sizeof(buf));
	cr_assert_str_eq(buf, "no url: a:b@c");
	cr_assert_eq(dsn_parse_hosts("app:pw@db", 9, &(struct dsn){0}, buf, sizeof(buf)), -1);
	cr_assert_null(strstr(buf, "pw"), "%s", buf);
}
