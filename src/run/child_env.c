/* The command's environment: leaderrun's secrets and systemd's variables
 * out, the lease's in. */
#include "child.h"

#include "cli/dsn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The lease's variables after the base's; a hook's two more (ROLE
 * non-NULL). Returns the next free index, or -1 when out of memory. */
static int env_add_lease(char **env, size_t k, const char *lease, unsigned long long term, unsigned slot,
			 const char *holder, const char *role, long service_pid)
{
	if (asprintf(&env[k++], "LEADERRUN_LEASE=%s", lease) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_TERM=%llu", term) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_SLOT=%u", slot) < 0 ||
	    asprintf(&env[k++], "LEADERRUN_HOLDER=%s", holder) < 0 ||
	    (role && (asprintf(&env[k++], "LEADERRUN_ROLE=%s", role) < 0 ||
		      asprintf(&env[k++], "LEADERRUN_SERVICE_PID=%ld", service_pid) < 0))) {
		env[--k] = NULL;
		return -1;
	}
	return (int)k;
}

char **child_env_build(char *const base[], const char *lease, unsigned long long term, unsigned slot,
		       const char *holder)
{
	return child_env_build_hook(base, lease, term, slot, holder, NULL, 0);
}

char **child_env_build_hook(char *const base[], const char *lease, unsigned long long term, unsigned slot,
			    const char *holder, const char *role, long service_pid)
{
	int end;
	size_t n = 0, k = 0;
	char **env;

	while (base && base[n])
		n++;
	env = calloc(n + 7, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *e = base[i];
		/* No secret of leaderrun's reaches the command: the password
		 * variables are dropped (a command that needs the database gets
		 * its own credentials, say a file). */
		if (env_is(e, "LEADERRUN_LEASE") || env_is(e, "LEADERRUN_TERM") || env_is(e, "LEADERRUN_HOLDER") ||
		    env_is(e, "LEADERRUN_SLOT") || env_is(e, "LEADERRUN_PASSWORD") || env_is(e, "MYSQL_PWD") ||
		    env_is(e, "LEADERRUN_ROLE") || env_is(e, "LEADERRUN_SERVICE_PID"))
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
	if ((end = env_add_lease(env, k, lease, term, slot, holder, role, service_pid)) < 0)
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
