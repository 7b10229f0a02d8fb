#include "escape.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Format characters that change how the rest of a line reads without
 * showing themselves: the bidi controls (a right-to-left override turns
 * "...held by evil" around; Trojan Source, CVE-2021-42574), the line and
 * paragraph separators (a new line to some terminals and viewers), and
 * the zero-width ones (two names that look the same). */
static bool escape_is_format(unsigned cp)
{
	return (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) ||
	       cp == 0xfeff;
}

size_t escape_next(const char *s, enum escape_class *cls, unsigned *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned c = p[0], need, min, v;

	*cp = c;
	*cls = ESCAPE_INVALID;
	if (c < 0x80) {
		*cls = c < 0x20 || c == 0x7f ? ESCAPE_CONTROL : ESCAPE_PLAIN;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, v = c & 0x07, min = 0x10000;
	else
		return 1;
	/* A NUL ends the string and is no continuation byte: never read past it. */
	for (unsigned i = 1; i <= need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 1;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 1;
	*cp = v;
	*cls = v <= 0x9f || escape_is_format(v) ? ESCAPE_CONTROL : ESCAPE_PLAIN;
	return need + 1;
}

/* Appends the K bytes at CHUNK whole, or nothing once one did not fit. */
static void put(char *buf, size_t len, size_t *n, bool *full, const char *chunk, size_t k)
{
	if (!*full && *n + k < len)
		memcpy(buf + *n, chunk, k);
	else
		*full = true;
	*n += k;
}

size_t escape_text(char *buf, size_t len, const char *s)
{
	size_t n = 0, k, end = 0;
	bool full = false;

	for (; *s; s += k) {
		enum escape_class cls;
		unsigned cp;
		char esc[16];
		k = escape_next(s, &cls, &cp);
		if (cls == ESCAPE_PLAIN) {
			put(buf, len, &n, &full, s, k);
		} else if (cp == '\t' || cp == '\n' || cp == '\r') {
			esc[0] = '\\';
			esc[1] = cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r';
			put(buf, len, &n, &full, esc, 2);
		} else {
			size_t e = 0;
			for (size_t i = 0; i < k; i++)
				e += (size_t)snprintf(esc + e, sizeof(esc) - e, "\\x%02x", (unsigned char)s[i]);
			put(buf, len, &n, &full, esc, e);
		}
		if (!full)
			end = n;
	}
	if (len)
		buf[end] = '\0';
	return n;
}

size_t escape_boundary(const char *s, size_t n)
{
	size_t k = n, last = 0;

	/* Walk whole units; the last one that ends by N is the cut. */
	for (k = 0; k < n && s[k];) {
		enum escape_class cls;
		unsigned cp;
		size_t u = escape_next(s + k, &cls, &cp);
		if (k + u > n)
			break;
		k += u;
		last = k;
	}
	return last;
}
