#include "optfile.h"

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPTFILE_MAX_DEPTH 10 /* !include nesting */
#define OPTFILE_MAX_FILES 64 /* files read in all: each once, whatever includes it */

struct optread {
	const char *key;
	char *out;
	size_t len;
	int found;
	struct {
		dev_t dev;
		ino_t ino;
	} seen[OPTFILE_MAX_FILES];
	unsigned nseen;
};

/* True the first time F's file comes by: an include loop, or directories
 * that include each other, read every file once. Only regular files: a
 * --defaults-file /dev/zero would never end. */
static bool first_visit(struct optread *r, FILE *f)
{
	struct stat st;

	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || r->nseen == OPTFILE_MAX_FILES)
		return false;
	for (unsigned i = 0; i < r->nseen; i++)
		if (r->seen[i].dev == st.st_dev && r->seen[i].ino == st.st_ino)
			return false;
	r->seen[r->nseen].dev = st.st_dev;
	r->seen[r->nseen++].ino = st.st_ino;
	return true;
}

static bool wanted_group(const char *name)
{
	static const char *const groups[] = {"client", "client-server", "client-mariadb", "leaderrun"};

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(name, groups[i]) == 0)
			return true;
	return false;
}

/* The libraries take '-' and '_' as the same in option names
 * (ssl_ca is ssl-ca). */
static bool same_key(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return false;
	return !*a && !*b;
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

static void read_file(struct optread *r, const char *path, int depth);

static int cnf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && strcmp(d->d_name + n - 4, ".cnf") == 0;
}

/* Every *.cnf in DIR, in name order, as the libraries do. */
static void read_dir(struct optread *r, const char *dir, int depth)
{
	struct dirent **names;
	int n = scandir(dir, &names, cnf_name, alphasort);

	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		read_file(r, path, depth + 1);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static void read_file(struct optread *r, const char *path, int depth)
{
	FILE *f;
	char line[4096];
	bool in_group = false;

	if (depth > OPTFILE_MAX_DEPTH || !(f = fopen(path, "re")))
		return;
	if (!first_visit(r, f)) {
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq, *key, *val;

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
			read_dir(r, trim(s + 11), depth);
			continue;
		}
		if (strncmp(s, "!include", 8) == 0 && (s[8] == ' ' || s[8] == '\t')) {
			read_file(r, trim(s + 8), depth + 1);
			continue;
		}
		if (!in_group || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		key = trim(s);
		if (!same_key(key, r->key))
			continue;
		val = trim(eq + 1);
		/* A quoted value keeps what is inside the quotes; elsewhere a
		 * '#' starts a comment, as the client libraries read it. */
		if ((val[0] == '"' || val[0] == '\'') && strchr(val + 1, val[0])) {
			*strchr(val + 1, val[0]) = '\0';
			val++;
		} else if (strchr(val, '#')) {
			*strchr(val, '#') = '\0';
			val = trim(val);
		}
		snprintf(r->out, r->len, "%s", val);
		r->found = 1;
	}
	fclose(f);
}

int optfile_host(const char *defaults_file, char *out, size_t len)
{
	return optfile_get(defaults_file, "host", out, len);
}

int optfile_get(const char *defaults_file, const char *key, char *out, size_t len)
{
	struct optread *r = calloc(1, sizeof(*r));
	const char *home;
	char path[4096];
	int found;

	if (!r)
		return 0;
	r->key = key;
	r->out = out;
	r->len = len;
	if (defaults_file)
		read_file(r, defaults_file, 0);
	else {
		read_file(r, "/etc/my.cnf", 0);
		read_file(r, "/etc/mysql/my.cnf", 0);
		for (const char *const *v = (const char *const[]){"MARIADB_HOME", "MYSQL_HOME", NULL}; *v; v++)
			if ((home = getenv(*v)) && *home) {
				snprintf(path, sizeof(path), "%s/my.cnf", home);
				read_file(r, path, 0);
			}
		if ((home = getenv("HOME")) && *home) {
			snprintf(path, sizeof(path), "%s/.my.cnf", home);
			read_file(r, path, 0);
		}
	}
	found = r->found;
	free(r);
	return found;
}
