/* What the soak's mixes share: see soak_util.h. */
#include "soak_util.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

#include "../integration/procs.h"

extern char **environ;

int soak_run_quiet(char *const argv[], const char *outpath)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, outpath ? outpath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int soak_sql(const char *socket, const char *db, const char *path, const char *q, char *out, size_t len)
{
	char sockarg[320];
	size_t n = 0;
	FILE *f;
	int rc;

	snprintf(sockarg, sizeof(sockarg), "--socket=%s", socket);
	rc = soak_run_quiet((char *[]){"mariadb", "--no-defaults", sockarg, "-uroot", "-N", "-B", "--force", (char *)db,
				       "-e", (char *)q, NULL},
			    path);
	if (!out || !len)
		return rc;
	out[0] = '\0';
	if ((f = fopen(path, "r"))) {
		n = fread(out, 1, len - 1, f);
		fclose(f);
	}
	out[n] = '\0';
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return rc;
}

int soak_status(pid_t pid, int timeout_ms)
{
	int64_t end = procs_now_ms() + timeout_ms;
	int st;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (procs_now_ms() >= end)
			return -1;
		procs_sleep_ms(5);
	}
}

uint64_t soak_rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}
