#include "optfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPTFILE_MAX_DEPTH 10 /* !include nesting */
#define OPTFILE_MAX_FILES 64 /* files read in all: each once, whatever includes it */

struct optread {
	const char *key; /* NULL: only check the files */
	char *out;
	size_t len;
	int found;
	char *err; /* the first file that is no regular file */
	size_t errlen;
	bool refused;
	struct {
		dev_t dev;
		ino_t ino;
	} seen[OPTFILE_MAX_FILES];
	unsigned nseen;
};

/* Refuses the option files as a whole: past a limit they are not read, and
 * a FIFO in what is not read would still hang the client library, which
 * has no such limit. */
static void refuse_limit(struct optread *r, const char *path, const char *what)
{
	snprintf(r->err, r->errlen,
		 "option file %s: %s, so leaderrun cannot check them all before the client library reads them; "
		 "flatten the !include chain",
		 path, what);
	r->refused = true;
}

/* True the first time ST's file comes by: an include loop, or directories
 * that include each other, read every file once. */
static bool first_visit(struct optread *r, const struct stat *st, const char *path)
{
	for (unsigned i = 0; i < r->nseen; i++)
		if (r->seen[i].dev == st->st_dev && r->seen[i].ino == st->st_ino)
			return false;
	if (r->nseen == OPTFILE_MAX_FILES) {
		refuse_limit(r, path, "more than 64 option files in all");
		return false;
	}
	r->seen[r->nseen].dev = st->st_dev;
	r->seen[r->nseen++].ino = st->st_ino;
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

static void read_file(struct optread *r, const char *path, const char *from, int depth);

static int cnf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && strcmp(d->d_name + n - 4, ".cnf") == 0;
}

/* Every *.cnf in DIR, in name order, as the libraries do. */
static void read_dir(struct optread *r, const char *dir, const char *from, int depth)
{
	struct dirent **names;
	int n = scandir(dir, &names, cnf_name, alphasort);

	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		read_file(r, path, from, depth + 1);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m)   ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/* PATH, open for reading, or NULL: missing and unreadable files are
 * skipped, as the client libraries skip them, and so are directories.
 * A FIFO or a device is refused (R->refused): fopen would wait for a
 * FIFO's writer for ever, and /dev/zero never ends; the client library,
 * which reads the same files at connect time, would hang on them too, so
 * skipping is no way out. O_NONBLOCK makes the open of a FIFO
 * return at once, so that fstat can tell. */
static FILE *open_file(struct optread *r, const char *path, const char *from)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	FILE *f = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode))
		goto out;
	if (!S_ISREG(st.st_mode)) {
		snprintf(r->err, r->errlen,
			 "option file %s%s%s%s is %s: the client library would hang reading it; "
			 "remove it%s",
			 path, from ? " (included from " : "", from ? from : "", from ? ")" : "", file_kind(st.st_mode),
			 from ? " or its !include" : "");
		r->refused = true;
		goto out;
	}
	if (!first_visit(r, &st, path) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		goto out;
	if ((f = fdopen(fd, "r")))
		return f;
out:
	close(fd);
	return NULL;
}

static void read_file(struct optread *r, const char *path, const char *from, int depth)
{
	FILE *f;
	char line[4096];
	bool in_group = false;

	if (r->refused)
		return;
	if (depth > OPTFILE_MAX_DEPTH) {
		refuse_limit(r, path, "!include nests more than 10 levels deep");
		return;
	}
	if (!(f = open_file(r, path, from)))
		return;
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
			read_dir(r, trim(s + 11), path, depth);
			continue;
		}
		if (strncmp(s, "!include", 8) == 0 && (s[8] == ' ' || s[8] == '\t')) {
			read_file(r, trim(s + 8), path, depth + 1);
			continue;
		}
		if (!r->key || !in_group || !(eq = strchr(s, '=')))
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

/* Reads the files the client library reads (see optfile.h) into R. */
static void read_all(struct optread *r, const char *defaults_file)
{
	const char *home;
	char path[4096];

	if (defaults_file) {
		read_file(r, defaults_file, NULL, 0);
		return;
	}
	read_file(r, "/etc/my.cnf", NULL, 0);
	read_file(r, "/etc/mysql/my.cnf", NULL, 0);
	for (const char *const *v = (const char *const[]){"MARIADB_HOME", "MYSQL_HOME", NULL}; *v; v++)
		if ((home = getenv(*v)) && *home) {
			snprintf(path, sizeof(path), "%s/my.cnf", home);
			read_file(r, path, NULL, 0);
		}
	if ((home = getenv("HOME")) && *home) {
		snprintf(path, sizeof(path), "%s/.my.cnf", home);
		read_file(r, path, NULL, 0);
	}
}

int optfile_host(const char *defaults_file, char *out, size_t len)
{
	return optfile_get(defaults_file, "host", out, len);
}

int optfile_get(const char *defaults_file, const char *key, char *out, size_t len)
{
	struct optread *r = calloc(1, sizeof(*r));
	char err[8];
	int found;

	if (!r)
		return 0;
	r->key = key;
	r->out = out;
	r->len = len;
	r->err = err;
	r->errlen = sizeof(err);
	read_all(r, defaults_file);
	found = r->found;
	free(r);
	return found;
}

int optfile_check(const char *defaults_file, char *err, size_t errlen)
{
	struct optread *r = calloc(1, sizeof(*r));
	int rc;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->err = err;
	r->errlen = errlen;
	read_all(r, defaults_file);
	rc = r->refused ? -1 : 0;
	free(r);
	return rc;
}
