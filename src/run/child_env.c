/* The command's environment: leaderrun's secrets and systemd's variables
 * out, the lease's in. */
#include "child.h"

#include "cli/dsn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* Every variable that env_add_lease may set, and none of the base's may
 * pass for. */
static const char *const lease_vars[] = {
    "LEADERRUN_LEASE",	     "LEADERRUN_TERM",	    "LEADERRUN_HOLDER",	 "LEADERRUN_SLOT",     "LEADERRUN_ROLE",
    "LEADERRUN_SERVICE_PID", "LEADERRUN_SCHEDULED", "LEADERRUN_ATTEMPT", "LEADERRUN_PASSWORD", "MYSQL_PWD",
};
#define ENV_LEASE_MAX 8

static bool env_is_leaderruns(const char *e)
{
	for (size_t i = 0; i < sizeof(lease_vars) / sizeof(lease_vars[0]); i++)
		if (env_is(e, lease_vars[i]))
			return true;
	return false;
}

/* The lease's variables after the base's. Returns the next free index, or
 * -1 when out of memory. */
static int env_add_lease(char **env, size_t k, const struct child_lease *l)
{
	char when[32];
	time_t t = (time_t)(l->scheduled_us / 1000000);
	struct tm tm;

	if (asprintf(&env[k++], "LEADERRUN_LEASE=%s", l->lease) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_TERM=%llu", l->term) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_SLOT=%u", l->slot) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_HOLDER=%s", l->holder) < 0 ||
	    (l->role && (asprintf(&env[k++], "LEADERRUN_ROLE=%s", l->role) < 0 ||
			 asprintf(&env[k++], "LEADERRUN_SERVICE_PID=%ld", l->service_pid) < 0)))
		goto oom;
	if (l->scheduled_us) {
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		if (asprintf(&env[k++], "LEADERRUN_SCHEDULED=%s", when) < 0 ||
		    asprintf(&env[k++], "LEADERRUN_ATTEMPT=%u", l->attempt) < 0)
			goto oom;
	}
	return (int)k;
oom:
	env[--k] = NULL;
	return -1;
}

char **child_env_build(char *const base[], const struct child_lease *l)
{
	int end;
	size_t n = 0, k = 0;
	char **env;

	while (base && base[n])
		n++;
	env = calloc(n + ENV_LEASE_MAX + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *e = base[i];
		/* No secret of leaderrun's reaches the command: the password
		 * variables are dropped (a command that needs the database gets
		 * its own credentials, say a file). */
		if (env_is_leaderruns(e))
			continue;
		/* leaderrun speaks for a systemd unit (sdnotify.h): a command
		 * that sent READY=1 or fed the watchdog itself would vouch for
		 * a leadership it cannot see. */
		if (env_is(e, "NOTIFY_SOCKET") || env_is(e, "WATCHDOG_USEC") || env_is(e, "WATCHDOG_PID"))
			continue;
		if (env_is(e, "LEADERRUN_DSN")) {
			size_t len = strlen(e) + 1;
			char *clean = malloc(len);
			if (!clean)
				goto oom;
			memcpy(clean, "LEADERRUN_DSN=", 14);
			dsn_without_password(e + 14, clean + 14, len - 14);
			env[k++] = clean;
			continue;
		}
		if (!(env[k++] = strdup(e)))
			goto oom;
	}
	if ((end = env_add_lease(env, k, l)) < 0)
		goto oom;
	env[end] = NULL;
	return env;
oom:
	child_env_free(env);
	return NULL;
}

void child_env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}
