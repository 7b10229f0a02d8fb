/* Strings that reach a terminal, a log or a metrics file from outside:
 * the lease and history rows, which any contender may write (it has UPDATE
 * on them), and the server's own words. Text shows their control
 * characters as visible escapes and never sends them.
 *
 * A string is read as UTF-8, one unit at a time: a well-formed character
 * (RFC 3629: no overlong form, surrogate or code point past U+10FFFF), or a
 * single byte that starts none. */
#ifndef LEADERRUN_ESCAPE_H
#define LEADERRUN_ESCAPE_H

#include <stddef.h>

enum escape_class {
	ESCAPE_PLAIN,	/* a printable character */
	ESCAPE_CONTROL, /* C0 (U+0000..U+001F), DEL, C1 (U+0080..U+009F), or a format character that
			 * reorders or breaks a line unseen: bidi controls, U+2028/U+2029, zero-width */
	ESCAPE_INVALID, /* one byte of malformed UTF-8 */
};

/* The unit at S (not at its end): returns its length in bytes (1..4), its
 * class in *CLS and its code point in *CP (the byte, for ESCAPE_INVALID). */
size_t escape_next(const char *s, enum escape_class *cls, unsigned *cp);

/* The most bytes escape_text writes for a string of N bytes, NUL included:
 * a byte may become "\xNN". */
#define ESCAPE_TEXT_MAX(n) (4 * (size_t)(n) + 1)

/* S for a terminal or a text log, into BUF: tab, newline and carriage
 * return as \t, \n and \r, every other control character and every byte
 * of malformed UTF-8 as \xNN (a C1 character: both of its bytes), the rest
 * as it is. A backslash stays itself: names people type read as typed.
 * Returns the length the whole needs, like snprintf; when BUF is too
 * small it ends at a whole escape or character, never inside one. */
size_t escape_text(char *buf, size_t len, const char *s);

/* The longest prefix of the N bytes at S that ends at a character
 * boundary: where a string cut at N bytes should end instead. */
size_t escape_boundary(const char *s, size_t n);

#endif
