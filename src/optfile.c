#include "optfile.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPTFILE_MAX_DEPTH 10 /* !include nesting, as a guard against loops */

static bool wanted_group(const char *name)
{
	static const char *const groups[] = {"client", "client-server", "client-mariadb", "leaderrun"};

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(name, groups[i]) == 0)
			return true;
	return false;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static void read_file(const char *path, int depth, char *out, size_t len, int *found);

static int cnf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && strcmp(d->d_name + n - 4, ".cnf") == 0;
}

/* Every *.cnf in DIR, in name order, as the libraries do. */
static void read_dir(const char *dir, int depth, char *out, size_t len, int *found)
{
	struct dirent **names;
	int n = scandir(dir, &names, cnf_name, alphasort);

	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		read_file(path, depth + 1, out, len, found);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static void read_file(const char *path, int depth, char *out, size_t len, int *found)
{
	FILE *f;
	char line[4096];
	bool in_group = false;

	if (depth > OPTFILE_MAX_DEPTH || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq, *key, *val;
		size_t n;

		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *rb = strchr(s, ']');
			if (rb) {
				*rb = '\0';
				in_group = wanted_group(trim(s + 1));
			}
			continue;
		}
		if (strncmp(s, "!includedir", 11) == 0 && (s[11] == ' ' || s[11] == '\t')) {
			read_dir(trim(s + 11), depth, out, len, found);
			continue;
		}
		if (strncmp(s, "!include", 8) == 0 && (s[8] == ' ' || s[8] == '\t')) {
			read_file(trim(s + 8), depth + 1, out, len, found);
			continue;
		}
		if (!in_group || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		key = trim(s);
		if (strcmp(key, "host") != 0)
			continue;
		val = trim(eq + 1);
		n = strlen(val);
		/* A quoted value keeps what is inside the quotes. */
		if (n >= 2 && (val[0] == '"' || val[0] == '\'') && val[n - 1] == val[0]) {
			val[n - 1] = '\0';
			val++;
		}
		snprintf(out, len, "%s", val);
		*found = 1;
	}
	fclose(f);
}

int optfile_host(const char *defaults_file, char *out, size_t len)
{
	int found = 0;

	if (defaults_file) {
		read_file(defaults_file, 0, out, len, &found);
		return found;
	}
	read_file("/etc/my.cnf", 0, out, len, &found);
	read_file("/etc/mysql/my.cnf", 0, out, len, &found);
	for (const char *const *v = (const char *const[]){"MARIADB_HOME", "MYSQL_HOME", NULL}; *v; v++) {
		const char *home = getenv(*v);
		if (home && *home) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/my.cnf", home);
			read_file(path, 0, out, len, &found);
		}
	}
	const char *home = getenv("HOME");
	if (home && *home) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/.my.cnf", home);
		read_file(path, 0, out, len, &found);
	}
	return found;
}
