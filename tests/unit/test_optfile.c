#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/optfile.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lr-optfile.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[4][160];
	static int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, 160, "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
	return p;
}

TestSuite(optfile, .init = setup, .fini = teardown);

Test(optfile, last_host_of_the_client_groups_wins)
{
	const char *f = write_file("my.cnf", "# comment\n[mysqld]\nhost=server-side\n[client]\nuser=app\nhost = a,b\n"
					     "[mysqldump]\nhost=dump-only\n[leaderrun]\nhost=\"c:3307,d\"\n");
	char host[256];

	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "c:3307,d");
}

Test(optfile, includes_and_included_directories_are_followed)
{
	char conf_d[128], text[512];
	const char *f;
	char host[256];

	snprintf(conf_d, sizeof(conf_d), "%s/conf.d", dir);
	cr_assert_eq(mkdir(conf_d, 0755), 0);
	write_file("conf.d/10-a.cnf", "[client]\nhost=first\n");
	write_file("conf.d/20-b.cnf", "[client-server]\nhost='h1:3306,h2'\n");
	write_file("conf.d/ignored.txt", "[client]\nhost=not-a-cnf\n");
	snprintf(text, sizeof(text), "[client]\nhost=before\n!includedir %s\n", conf_d);
	f = write_file("my.cnf", text);
	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "h1:3306,h2");
}

Test(optfile, no_host_anywhere_and_missing_files_say_so)
{
	const char *f = write_file("my.cnf", "[client]\nuser=app\n[mysqld]\nhost=x\n");
	char host[256] = "";

	cr_assert_eq(optfile_host(f, host, sizeof(host)), 0);
	cr_assert_eq(optfile_host("/nonexistent/my.cnf", host, sizeof(host)), 0);
}

Test(optfile, an_include_loop_ends)
{
	char text[256], host[256];
	const char *f;

	snprintf(text, sizeof(text), "[client]\nhost=x,y\n!include %s/my.cnf\n", dir);
	f = write_file("my.cnf", text);
	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "x,y");
}

Test(optfile, quotes_keep_a_hash_and_elsewhere_it_starts_a_comment)
{
	const char *f = write_file("my.cnf", "[client]\nhost = h1, h2   # the primary first\n");
	char host[256];

	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "h1, h2");
	f = write_file("my.cnf", "[client]\nhost = \"h#1,h2\" # quoted\n");
	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "h#1,h2");
}

Test(optfile, directories_that_include_each_other_are_read_once)
{
	/* a/1.cnf includes dir b, b/1.cnf includes dir a: without a record of
	 * the files read, each level multiplies the reads. */
	char a[128], b[128], text[512], host[256];
	const char *f;

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(mkdir(b, 0755), 0);
	snprintf(text, sizeof(text), "[client]\nhost=from-a\n!includedir %s\n", b);
	write_file("a/1.cnf", text);
	snprintf(text, sizeof(text), "[client]\nhost=from-b\n!includedir %s\n", a);
	write_file("b/1.cnf", text);
	snprintf(text, sizeof(text), "!includedir %s\n", a);
	f = write_file("my.cnf", text);
	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "from-b");
}

Test(optfile, tls_settings_are_read_with_either_spelling)
{
	const char *f = write_file("tls.cnf", "[client]\nssl_mode = VERIFY_CA\n[leaderrun]\nssl-ca=/etc/db-ca.pem\n");
	char v[256];

	cr_assert_eq(optfile_get(f, "ssl-mode", v, sizeof(v)), 1);
	cr_assert_str_eq(v, "VERIFY_CA");
	cr_assert_eq(optfile_get(f, "ssl-ca", v, sizeof(v)), 1);
	cr_assert_str_eq(v, "/etc/db-ca.pem");
	cr_assert_eq(optfile_get(f, "ssl-cert", v, sizeof(v)), 0);
}

Test(optfile, a_fifo_or_device_is_refused_naming_it_and_never_opened_to_wait)
{
	char fifo[160], line[200], err[512] = "", host[64];
	const char *f;

	/* Nobody writes to the FIFO: a blocking open would wait for ever
	 * (Criterion's timeout ends the test then). */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(line, sizeof(line), "[client]\nhost=a\n!include %s\n", fifo);
	f = write_file("my.cnf", line);
	cr_assert_eq(optfile_check(f, err, sizeof(err)), -1);
	cr_assert(strstr(err, fifo) && strstr(err, "is a FIFO") && strstr(err, "included from"), "%s", err);
	cr_assert(strstr(err, "my.cnf"), "the includer is not named: %s", err);
	cr_assert_eq(optfile_host(f, host, sizeof(host)), 1, "the rest is still read");
	cr_assert_str_eq(host, "a");

	cr_assert_eq(optfile_check(fifo, err, sizeof(err)), -1, "a --defaults-file FIFO");
	f = write_file("dev.cnf", "!include /dev/zero\n");
	cr_assert_eq(optfile_check(f, err, sizeof(err)), -1);
	cr_assert(strstr(err, "/dev/zero") && strstr(err, "is a character device"), "%s", err);
}

Test(optfile, a_fifo_in_an_included_directory_is_refused)
{
	char sub[160], fifo[200], line[200], err[512] = "";
	const char *f;

	snprintf(sub, sizeof(sub), "%s/conf.d", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s/z.cnf", sub);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(line, sizeof(line), "!includedir %s\n", sub);
	f = write_file("my.cnf", line);
	cr_assert_eq(optfile_check(f, err, sizeof(err)), -1);
	cr_assert(strstr(err, fifo), "%s", err);
}

Test(optfile, a_fifo_at_home_is_refused_and_missing_files_are_not)
{
	char fifo[160], err[512] = "";

	setenv("HOME", dir, 1);
	unsetenv("MYSQL_HOME");
	unsetenv("MARIADB_HOME");
	cr_assert_eq(optfile_check(NULL, err, sizeof(err)), 0, "no ~/.my.cnf: %s", err);
	snprintf(fifo, sizeof(fifo), "%s/.my.cnf", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(optfile_check(NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, fifo), "%s", err);
	/* A directory in the way is harmless, as to the libraries. */
	cr_assert_eq(optfile_check(dir, err, sizeof(err)), 0, "%s", err);
}
