/* JSON string escaping, for --status and --history --json, JSON logs and
 * webhooks. The output is always one valid JSON string (RFC 8259), ASCII
 * apart from the well-formed non-control UTF-8 it passes through, whatever
 * the input: rows of the lease table are anybody's. */
#ifndef LEADERRUN_JSON_H
#define LEADERRUN_JSON_H

#include <stddef.h>
#include <stdio.h>

/* The most bytes json_quote writes for a string of N bytes, quotes and NUL
 * included: a byte may become \u00XX or \ufffd. */
#define JSON_QUOTE_MAX(n) (6 * (size_t)(n) + 3)

/* Writes S as a JSON string literal (with the quotes) into BUF; returns the
 * length it needed, like snprintf. '"' and '\' are escaped, control
 * characters (C0, DEL and C1) as \n, \r, \t or \u00XX, each byte of
 * malformed UTF-8 as \ufffd; well-formed UTF-8 passes through. When BUF is
 * too small (less than JSON_QUOTE_MAX) the string ends early at a whole
 * character or escape, and is still closed: the result is valid JSON. */
size_t json_quote(char *buf, size_t len, const char *s);

/* The same, written to F, never shortened. */
void json_write(FILE *f, const char *s);

#endif
