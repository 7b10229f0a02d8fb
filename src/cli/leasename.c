#include "leasename.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/random.h>
#include <unistd.h>

#include "lease/lease.h"

/* Readable part of a derived name; leaves room for "~" and 16 hex digits. */
#define READABLE_MAX 96

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

void leasename_from_argv(char *const argv[], char *out, size_t len)
{
	char readable[READABLE_MAX + 1];
	size_t n = 0;
	bool exact = true;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; argv[i]; i++) {
		/* Hash the NUL too, so ["a b"] and ["a", "b"] differ. */
		h = fnv1a(h, argv[i], strlen(argv[i]) + 1);
		if (i > 0) {
			if (n < READABLE_MAX)
				readable[n++] = ' ';
			else
				exact = false;
		}
		for (const char *p = argv[i]; *p; p++) {
			unsigned char c = (unsigned char)*p;
			if (n >= READABLE_MAX) {
				exact = false;
				break;
			}
			if (c == '~') {
				/* Shown, but a name with '~' is never taken as
				 * exact, or it could spell another's "~HASH". */
				readable[n++] = '~';
				exact = false;
			} else if (c < 0x20 || c >= 0x7f || c == ' ') {
				/* Spaces inside an argument would read like
				 * argument breaks; unprintables like nothing. */
				readable[n++] = '_';
				exact = false;
			} else
				readable[n++] = (char)c;
		}
	}
	readable[n] = '\0';
	/* An empty command line (argv [""]) must still name a valid lease. */
	if (exact && n > 0)
		snprintf(out, len, "%s", readable);
	else
		snprintf(out, len, "%s~%016llx", readable, (unsigned long long)h);
}

void leasename_from_string(const char *s, char *out, size_t len)
{
	char readable[READABLE_MAX + 1];
	size_t n = 0, slen = strlen(s);
	/* Plain: what the words would give as COMMAND, read as typed. Blanks
	 * at either end or doubled would read the same as single ones (the
	 * name column ignores trailing spaces when it compares), so they get
	 * the hash. */
	bool exact = slen > 0 && slen <= READABLE_MAX && s[0] != ' ' && s[slen - 1] != ' ' && !strstr(s, "  ");

	for (const char *p = s; *p && n < READABLE_MAX; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '~')
			exact = false;
		if (c < 0x20 || c >= 0x7f) {
			readable[n++] = '_';
			exact = false;
		} else
			readable[n++] = (char)c;
	}
	readable[n] = '\0';
	if (exact)
		snprintf(out, len, "%s", readable);
	else
		snprintf(out, len, "%s~%016llx", readable,
			 (unsigned long long)fnv1a(UINT64_C(0xcbf29ce484222325), s, slen + 1));
}

void leasename_holder(char *out, size_t len)
{
	char host[65] = "localhost";
	unsigned int rnd = 0;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		rnd = (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)&rnd;
	snprintf(out, len, "%s:%ld:%08x", host, (long)getpid(), rnd);
}

void leasename_operator(char *out, size_t len)
{
	char host[65] = "localhost";
	const char *user = getenv("SUDO_USER");
	struct passwd *pw;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	/* The person behind sudo, not root; then the account itself. */
	if (!user || !*user)
		user = (pw = getpwuid(getuid())) ? pw->pw_name : NULL;
	if (!user || !*user)
		user = getenv("LOGNAME");
	snprintf(out, len, "%s@%s", user && *user ? user : "?", host);
}
