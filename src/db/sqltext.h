/* Statements as text with their values in them, for what a prepared
 * statement cannot carry: a compound statement (db_block) that runs
 * several of leaderrun's statements in one round trip and one commit.
 *
 * No value is ever quoted by escaping: a string goes as a hexadecimal
 * literal with a character set introducer (_utf8mb4 X'6162'), which no
 * byte of it, no sql_mode (NO_BACKSLASH_ESCAPES, ANSI_QUOTES) and no
 * connection character set can turn into anything but that string. Pure. */
#ifndef LEADERRUN_SQLTEXT_H
#define LEADERRUN_SQLTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "db.h"

/* Appends V as an SQL literal to OUT (of LEN bytes, holding *USED bytes
 * and a NUL); V kept: a '?'. Returns false, leaving OUT cut short, when it
 * does not fit. */
bool sqltext_literal(char *out, size_t len, size_t *used, const struct db_value *v);

/* Appends C->sql to OUT with its C->nparams '?' placeholders replaced by
 * C->params, in order. A '?' inside a quoted string, a quoted name or a
 * comment is text, not a placeholder. Returns false when it does not fit,
 * or when the text has another number of placeholders. */
bool sqltext_render(char *out, size_t len, size_t *used, const struct db_call *c);

/* Appends the text of FMT (printf) to OUT. Returns false when it does not
 * fit. */
bool sqltext_append(char *out, size_t len, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
