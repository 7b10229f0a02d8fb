#include "procs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

bool procs_alive(pid_t pid)
{
	char path[64], buf[512], *rp;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return false;
	}
	fclose(f);
	/* "pid (comm) state ...": comm may hold ") ". */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

int64_t procs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void procs_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int procs_load_env(const char *path, void (*set)(void *ctx, const char *name, const char *value), void *ctx)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *eq, *val;
		if (strncmp(name, "export ", 7) == 0)
			name += 7;
		eq = strchr(name, '=');
		if (!eq)
			continue;
		*eq = '\0';
		val = eq + 1;
		val[strcspn(val, "\n")] = '\0';
		if (*val == '\'') {
			val++;
			val[strcspn(val, "'")] = '\0';
		}
		set(ctx, name, val);
	}
	fclose(f);
	return 0;
}

int procs_children_of(pid_t pid, pid_t *out, int max)
{
	char path[96];
	int n = 0;
	FILE *f;
	long c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fscanf(f, "%ld", &c) == 1)
		out[n++] = (pid_t)c;
	fclose(f);
	return n;
}
