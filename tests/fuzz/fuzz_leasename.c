/* libFuzzer target: leasename_from_argv, leasename_from_string (-c),
 * lease_name_validate and lease_table_validate.
 *
 * Input: byte 0 is how many arguments (mod 9) go to the first command
 * line; the rest, split at NUL bytes, gives the arguments of the first and
 * then the second command line (at most 64 in all).
 *
 * Checks:
 *  - a derived name fits LEASE_NAME_MAX with room to spare, is the same for
 *    the same argv, is the command line joined by spaces when that is
 *    1..96 bytes of printable ASCII without spaces or '~', and
 *    otherwise a readable prefix + "~" + 16 hex digits;
 *  - every derived name passes lease_name_validate (options_names.c stores it
 *    unchecked);
 *  - two different command lines never share a name (an exact name has
 *    no '~', so none can spell another's "~HASH" suffix);
 *  - the same for the first argument of each line taken as -c's STRING:
 *    the STRING itself when it is 1..96 bytes of printable ASCII without
 *    '~', blanks at either end or doubled, else readable + "~HASH";
 *    valid, never ending in a blank (the column ignores trailing
 *    blanks), and different for different strings;
 *  - lease_name_validate accepts a name exactly when it is 1..max bytes of
 *    well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code points
 *    past U+10FFFF, which a utf8mb4 column rejects) without C0 or C1
 *    control characters or DEL;
 *  - lease_table_validate accepts only [A-Za-z0-9_$]{1,64}, not all
 *    digits, optionally "DB." in front. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/leasename.h"
#include "fuzz_common.h"
#include "lease/lease.h"

#define MAX_ARGS     64
#define READABLE_MAX 96 /* leasename.c */
#define ERRLEN	     256

struct cmdline {
	char *argv[MAX_ARGS + 1];
	size_t argc;
	char name[LEASE_NAME_MAX + 1];
	bool exact;
};

static bool printable_no_space(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

static bool is_hex16(const char *s)
{
	if (strlen(s) != 16)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static void derive(struct cmdline *c)
{
	char *out = fuzz_buffer(sizeof(c->name));
	char *again = fuzz_buffer(sizeof(c->name));
	char joined[READABLE_MAX + 2];
	char err[ERRLEN];
	size_t jl = 0, len;
	bool exact = true;

	leasename_from_argv(c->argv, out, sizeof(c->name));
	leasename_from_argv(c->argv, again, sizeof(c->name));
	len = strlen(out);
	FUZZ_CHECK(strcmp(out, again) == 0, "two derivations differ: '%s' vs '%s'", out, again);
	FUZZ_CHECK(len <= READABLE_MAX + 17, "derived name is %zu bytes", len);

	/* The exact form: arguments joined by single spaces. */
	for (size_t i = 0; i < c->argc && exact; i++) {
		size_t al = strlen(c->argv[i]);
		/* A '~' forces the hashed form, so that no exact name can spell
		 * another command line's "~HASH". */
		if (!printable_no_space(c->argv[i]) || strchr(c->argv[i], '~') || jl + (i > 0) + al > READABLE_MAX) {
			exact = false;
			break;
		}
		if (i > 0)
			joined[jl++] = ' ';
		memcpy(joined + jl, c->argv[i], al);
		jl += al;
	}
	joined[jl] = '\0';
	exact = exact && jl > 0; /* argv [""] gets a hash too: "" is no name */
	if (exact)
		FUZZ_CHECK(strcmp(out, joined) == 0, "printable command line '%s' derived as '%s'", joined, out);
	else
		FUZZ_CHECK(len >= 17 && out[len - 17] == '~' && is_hex16(out + len - 16) && len - 17 <= READABLE_MAX,
			   "shortened name '%s' does not end in ~HASH", out);

	FUZZ_CHECK(lease_name_validate("lease name", out, LEASE_NAME_MAX, err, sizeof(err)) == 0,
		   "derived name '%s' (argc %zu, first argument '%s') fails validation: %s", out, c->argc, c->argv[0],
		   err);
	memcpy(c->name, out, len + 1);
	c->exact = exact;
	free(again);
	free(out);
}

/* -c STRING's name, checked; into NAME. */
static void derive_string(const char *s, char *name)
{
	char *out = fuzz_buffer(LEASE_NAME_MAX + 1);
	char err[ERRLEN];
	size_t n = strlen(s), len;
	bool exact =
	    n >= 1 && n <= READABLE_MAX && s[0] != ' ' && s[n - 1] != ' ' && !strstr(s, "  ") && !strchr(s, '~');

	for (const char *p = s; *p && exact; p++)
		exact = (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f;
	leasename_from_string(s, out, LEASE_NAME_MAX + 1);
	leasename_from_string(s, name, LEASE_NAME_MAX + 1);
	len = strlen(out);
	FUZZ_CHECK(strcmp(out, name) == 0, "two derivations of '%s' differ", s);
	if (exact)
		FUZZ_CHECK(strcmp(out, s) == 0, "plain string '%s' derived as '%s'", s, out);
	else
		FUZZ_CHECK(len >= 17 && out[len - 17] == '~' && is_hex16(out + len - 16) && len - 17 <= READABLE_MAX,
			   "string '%s' derived as '%s', which does not end in ~HASH", s, out);
	FUZZ_CHECK(len > 0 && out[len - 1] != ' ', "string '%s' derived as '%s', ending in a blank", s, out);
	FUZZ_CHECK(lease_name_validate("lease name", out, LEASE_NAME_MAX, err, sizeof(err)) == 0,
		   "string '%s' derived as '%s', which fails validation: %s", s, out, err);
	free(out);
}

static bool same_argv(const struct cmdline *a, const struct cmdline *b)
{
	if (a->argc != b->argc)
		return false;
	for (size_t i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], b->argv[i]) != 0)
			return false;
	return true;
}

/* Well-formed UTF-8 (RFC 3629) without C0/C1 controls or DEL. */
static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s++;
		unsigned need, cp, min;
		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07, min = 0x10000;
		else
			return false;
		for (; need > 0; need--, s++) {
			if ((*s & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (*s & 0x3f);
		}
		if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0))
			return false;
	}
	return true;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static bool ident_ok(const char *s, size_t n)
{
	bool digits_only = true;

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!ident_char(s[i]))
			return false;
		digits_only = digits_only && s[i] >= '0' && s[i] <= '9';
	}
	return !digits_only;
}

static bool table_ok(const char *s)
{
	const char *dot = strchr(s, '.');

	if (!dot)
		return ident_ok(s, strlen(s));
	return ident_ok(s, (size_t)(dot - s)) && ident_ok(dot + 1, strlen(dot + 1));
}

static void check_validators(const char *s)
{
	char *err = fuzz_buffer(ERRLEN);
	size_t n = strlen(s);
	bool want = n >= 1 && utf8_ok((const unsigned char *)s);
	int rc;

	for (size_t max = 1; max <= LEASE_HOLDER_MAX; max = max < 8 ? max + 1 : max * 3) {
		rc = lease_name_validate("name", s, max, err, ERRLEN);
		FUZZ_CHECK(rc == 0 || (rc == -1 && fuzz_terminated(err, ERRLEN) && err[0]), "bad validate result %d",
			   rc);
		FUZZ_CHECK((rc == 0) == (want && n <= max), "lease_name_validate('%s', max %zu) = %d: %s", s, max, rc,
			   rc ? err : "accepted");
	}
	rc = lease_table_validate(s, err, ERRLEN);
	FUZZ_CHECK((rc == 0) == table_ok(s), "lease_table_validate('%s') = %d", s, rc);
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmdline c[2];
	char *buf;
	size_t first, n = 0, nlines = 0;

	if (size < 1)
		return 0;
	first = data[0] % 9;
	buf = fuzz_cstring(data + 1, size - 1);
	memset(c, 0, sizeof(c));

	/* Split at NULs; the terminating NUL from fuzz_cstring ends the last. */
	for (size_t start = 0; start <= size - 1 && n < MAX_ARGS; n++) {
		struct cmdline *t = &c[n < first ? 0 : 1];
		t->argv[t->argc++] = buf + start;
		start += strlen(buf + start) + 1;
	}
	for (int i = 0; i < 2; i++)
		if (c[i].argc > 0) {
			derive(&c[i]);
			nlines++;
		}
	if (nlines == 2) {
		bool same = same_argv(&c[0], &c[1]);
		bool collide = strcmp(c[0].name, c[1].name) == 0;
		if (same)
			FUZZ_CHECK(collide, "the same command line derived '%s' and '%s'", c[0].name, c[1].name);
		else
			FUZZ_CHECK(!collide, "different command lines share the lease name '%s' (exact: %d, %d)",
				   c[0].name, c[0].exact, c[1].exact);
	}
	if (nlines == 2) {
		char a[LEASE_NAME_MAX + 1], b[LEASE_NAME_MAX + 1];
		derive_string(c[0].argv[0], a);
		derive_string(c[1].argv[0], b);
		if (strcmp(c[0].argv[0], c[1].argv[0]) == 0)
			FUZZ_CHECK(strcmp(a, b) == 0, "the same string derived '%s' and '%s'", a, b);
		else
			FUZZ_CHECK(strcmp(a, b) != 0, "strings '%s' and '%s' share the lease name '%s'", c[0].argv[0],
				   c[1].argv[0], a);
	}
	check_validators(buf); /* the first argument, whichever line has it */
	free(buf);
	return 0;
}
