/* Secrets: a password never shown in a message, read from
 * --password-file or the environment, and wiped from argv and environ
 * once read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options_int.h"

#define PASSWORD_FILE_MAX 4096

/* User input as a message may quote it: a DSN's password hidden wherever
 * it turns up (a value given to the wrong option, a forgotten -d). Every
 * message that echoes input goes through it: messages end up on
 * terminals and in logs, which a password must not. */
const char *options_shown(const char *value, char *buf, size_t len)
{
	dsn_redact_all(value ? value : "", buf, len);
	return buf;
}

static int read_password_file(const char *path, char **out, char *err, size_t errlen)
{
	char buf[PASSWORD_FILE_MAX + 1];
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errlen, "--password-file %s: %s", SHOWN(path), strerror(errno));
		return -1;
	}
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "--password-file %s: %s", SHOWN(path), strerror(errno));
			close(fd);
			explicit_bzero(buf, sizeof(buf));
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	if (n > PASSWORD_FILE_MAX) {
		snprintf(err, errlen, "--password-file %s is longer than %d bytes; is it the right file?", SHOWN(path),
			 PASSWORD_FILE_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	/* "echo secret > file" adds a newline that is not part of the secret;
	 * a Kubernetes Secret has none. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (memchr(buf, '\0', n) || memchr(buf, '\n', n)) {
		snprintf(err, errlen, "--password-file %s holds more than one line", SHOWN(path));
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	*out = strndup(buf, n);
	explicit_bzero(buf, sizeof(buf));
	return *out ? 0 : -1;
}

/* A DSN typed on the command line is visible to every local user in
 * /proc/PID/cmdline; overwrite its password in place, as mysql(1) does.
 * Every argument before COMMAND is searched, so repeated, bundled (-nd...)
 * and abbreviated (--ds=...) forms are covered too; but not argv[SHELL_AT],
 * which holds -c's STRING (0: none): that is COMMAND, its bytes its own.
 * The widest span that may be a password goes (dsn_secret_span), not only
 * what the parser took: a DSN it misreads or refuses keeps no secret in
 * view either. */
void options_wipe_argv(char *argv[], int end, int shell_at)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};

	for (int i = 1; i < end; i++) {
		if (i == shell_at)
			continue;
		for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
			for (char *p = argv[i]; (p = strstr(p, schemes[k])); p++) {
				size_t off, len;
				if (dsn_secret_span(p, &off, &len))
					memset(p + off, 'x', len);
			}
	}
}

/* NAME=... names NAME. */
static bool env_named(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The environment leaderrun started with stays readable in
 * /proc/PID/environ (and in the watcher's, a copy) to every process of its
 * user, COMMAND among them, however clean COMMAND's own environment is.
 * Once the password is copied, overwrite it in place, as the argv wipe
 * does; child_env_build still drops these variables and cuts the DSN's
 * password span, now of x's. */
static void wipe_environ_passwords(void)
{
	for (char **e = environ; *e; e++) {
		char *v = strchr(*e, '=');
		size_t off, len;

		if (!v)
			continue;
		if (env_named(*e, "LEADERRUN_PASSWORD") || env_named(*e, "MYSQL_PWD"))
			memset(v + 1, 'x', strlen(v + 1));
		else if (env_named(*e, "LEADERRUN_DSN") && dsn_secret_span(v + 1, &off, &len))
			memset(v + 1 + off, 'x', len);
	}
}

/* --password-file, else LEADERRUN_PASSWORD or MYSQL_PWD, unless the DSN
 * holds one: after options_take_dsn. */
static int options_find_password(struct parse *p)
{
	struct options *o = p->o;
	const char *env;

	if (p->password_file) {
		if (o->dsn.password)
			FAIL("the DSN already holds a password; drop it or --password-file");
		return read_password_file(p->password_file, &o->password, p->err, p->errlen);
	}
	if (o->dsn.password)
		return 0;
	env = getenv("LEADERRUN_PASSWORD");
	if (!env)
		env = getenv("MYSQL_PWD");
	if (env && !(o->password = strdup(env)))
		FAIL("out of memory");
	return 0;
}

/* The password, then no copy of it left in the environment. */
int options_take_password(struct parse *p)
{
	int rc = options_find_password(p);

	wipe_environ_passwords();
	return rc;
}
