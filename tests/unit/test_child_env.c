#include <criterion/criterion.h>
#include <string.h>

#include "run/child.h"

static const char *find(char **env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

Test(child_env, sets_lease_term_holder_and_drops_secrets)
{
	char *base[] = {"PATH=/bin",	    "LEADERRUN_PASSWORD=hunter2", "LEADERRUN_DSN=mysql://app:hunter2@db/ops",
			"LEADERRUN_TERM=1", "MYSQL_PWD=hunter2",	  NULL};
	char **env =
	    child_env_build(base, &(struct child_lease){.lease = "nightly", .term = 42, .slot = 2, .holder = "h:1:ab"});

	cr_assert_not_null(env);
	cr_assert_str_eq(find(env, "PATH"), "/bin");
	cr_assert_str_eq(find(env, "LEADERRUN_LEASE"), "nightly");
	cr_assert_str_eq(find(env, "LEADERRUN_TERM"), "42");
	cr_assert_str_eq(find(env, "LEADERRUN_SLOT"), "2");
	cr_assert_str_eq(find(env, "LEADERRUN_HOLDER"), "h:1:ab");
	cr_assert_null(find(env, "LEADERRUN_PASSWORD"));
	cr_assert_null(find(env, "MYSQL_PWD"));
	cr_assert_str_eq(find(env, "LEADERRUN_DSN"), "mysql://app@db/ops");
	for (size_t i = 0; env[i]; i++)
		cr_assert_null(strstr(env[i], "hunter2"), "secret in %s", env[i]);
	child_env_free(env);
}

Test(child_env, drops_systemd_notify_variables)
{
	/* leaderrun speaks for the unit; a command that could send READY=1
	 * or feed the watchdog would vouch for a leadership it cannot see. */
	char *base[] = {"NOTIFY_SOCKET=/run/systemd/notify",
			"WATCHDOG_USEC=30000000",
			"WATCHDOG_PID=1",
			"NOTIFY_SOCKETS=kept",
			"PATH=/bin",
			NULL};
	char **env = child_env_build(base, &(struct child_lease){.lease = "svc", .term = 7, .holder = "h:1:ab"});

	cr_assert_not_null(env);
	cr_assert_null(find(env, "NOTIFY_SOCKET"));
	cr_assert_null(find(env, "WATCHDOG_USEC"));
	cr_assert_null(find(env, "WATCHDOG_PID"));
	cr_assert_str_eq(find(env, "NOTIFY_SOCKETS"), "kept");
	cr_assert_str_eq(find(env, "PATH"), "/bin");
	child_env_free(env);
}

Test(child_env, exit_status_like_a_shell)
{
	cr_assert_eq(child_exit_status(0), 0);
	cr_assert_eq(child_exit_status(7 << 8), 7);
	cr_assert_eq(child_exit_status(9), 137);
}
