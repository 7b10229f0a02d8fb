/* Ways users give leaderrun its connection: DSN over TCP or socket, option
 * files, ~/.my.cnf, password files and variables. */
#include <sys/stat.h>

#include "harness.h"

HARNESS_MAIN

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	chmod(path, 0600);
}

static const char *option_file(const char *group)
{
	static char text[1024];
	snprintf(text, sizeof(text), "[%s]\nuser=%s\npassword=%s\nsocket=%s\ndatabase=%s\n", group,
		 getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"), getenv("LR_DB_SOCKET"), getenv("LR_DB_NAME"));
	return text;
}

/* Runs leaderrun with exactly ARGV (no LEADERRUN_DSN) and ENV. */
static int run(const char *const argv[], const char *const env[], struct h_proc *p)
{
	h_start(p, argv, env);
	return h_finish(p, 20000);
}

Test(connection, dsn_over_the_unix_socket)
{
	struct h_proc p;
	cr_assert_eq(
	    run((const char *const[]){h_bin(), "-d", h_dsn_socket(), "-n", "-l", h_lease("sock"), "--", "true", NULL},
		NULL, &p),
	    0, "%s", h_slurp(p.err));
}

Test(connection, defaults_file_client_group)
{
	struct h_proc p;
	write_file(h_path("my.cnf"), option_file("client"));
	cr_assert_eq(run((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l", h_lease("df"),
					       "--", "true", NULL},
			 NULL, &p),
		     0, "%s", h_slurp(p.err));
}

Test(connection, defaults_file_leaderrun_group)
{
	struct h_proc p;
	write_file(h_path("my.cnf"), option_file("leaderrun"));
	cr_assert_eq(run((const char *const[]){h_bin(), "--defaults-file", h_path("my.cnf"), "-n", "-l", h_lease("dfl"),
					       "--", "true", NULL},
			 NULL, &p),
		     0, "%s", h_slurp(p.err));
}

Test(connection, home_my_cnf_just_works_without_a_dsn)
{
	struct h_proc p;
	char home[300];

	write_file(h_path(".my.cnf"), option_file("client"));
	snprintf(home, sizeof(home), "HOME=%s", h_dir());
	cr_assert_eq(run((const char *const[]){h_bin(), "-n", "-l", h_lease("home"), "--", "true", NULL},
			 (const char *const[]){home, "LEADERRUN_DSN=", NULL}, &p),
		     0, "%s", h_slurp(p.err));
}

Test(connection, password_file_and_variables)
{
	struct h_proc p;
	char dsn[512], pw1[128], pw2[128];

	snprintf(dsn, sizeof(dsn), "mysql://%s@127.0.0.1:%s/%s", getenv("LR_DB_USER"), getenv("LR_DB_PORT"),
		 getenv("LR_DB_NAME"));
	snprintf(pw1, sizeof(pw1), "%s\n", getenv("LR_DB_PASSWORD"));
	write_file(h_path("pw"), pw1);
	cr_assert_eq(run((const char *const[]){h_bin(), "-d", dsn, "--password-file", h_path("pw"), "-n", "-l",
					       h_lease("pwf"), "--", "true", NULL},
			 NULL, &p),
		     0, "%s", h_slurp(p.err));

	snprintf(pw1, sizeof(pw1), "LEADERRUN_PASSWORD=%s", getenv("LR_DB_PASSWORD"));
	cr_assert_eq(run((const char *const[]){h_bin(), "-d", dsn, "-n", "-l", h_lease("pwe"), "--", "true", NULL},
			 (const char *const[]){pw1, NULL}, &p),
		     0, "%s", h_slurp(p.err));

	snprintf(pw2, sizeof(pw2), "MYSQL_PWD=%s", getenv("LR_DB_PASSWORD"));
	cr_assert_eq(run((const char *const[]){h_bin(), "-d", dsn, "-n", "-l", h_lease("pwm"), "--", "true", NULL},
			 (const char *const[]){pw2, NULL}, &p),
		     0, "%s", h_slurp(p.err));
}

Test(connection, table_in_another_database_by_qualified_name)
{
	struct h_proc p;
	char table[96];

	snprintf(table, sizeof(table), "%s.leaderrun_lease", getenv("LR_DB_NAME"));
	/* No database in the DSN at all: the qualified name is enough. */
	{
		char dsn[512];
		snprintf(dsn, sizeof(dsn), "mysql://%s:%s@127.0.0.1:%s", getenv("LR_DB_USER"), getenv("LR_DB_PASSWORD"),
			 getenv("LR_DB_PORT"));
		cr_assert_eq(run((const char *const[]){h_bin(), "-d", dsn, "--table", table, "-n", "-l",
						       h_lease("qual"), "--", "true", NULL},
				 NULL, &p),
			     0, "%s", h_slurp(p.err));
	}
}

Test(connection, unreachable_database_in_wait_mode_warns_and_retries_until_the_timeout)
{
	struct h_proc p;
	int64_t t0 = h_now_ms();

	cr_assert_eq(
	    run((const char *const[]){h_bin(), "-d", "mysql://u@127.0.0.1:1/db", "-w", "2s", "--", "true", NULL}, NULL,
		&p),
	    69, "%s", h_slurp(p.err));
	cr_assert_geq(h_now_ms() - t0, 1900);
	cr_assert(strstr(h_slurp(p.err), "retrying in"), "%s", h_slurp(p.err));
	cr_assert(strstr(h_slurp(p.err), "still unavailable after --wait-timeout"), "%s", h_slurp(p.err));
}
