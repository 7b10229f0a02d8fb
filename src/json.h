/* JSON string escaping, for --status --json, JSON logs and webhooks. */
#ifndef LEADERRUN_JSON_H
#define LEADERRUN_JSON_H

#include <stddef.h>

/* Writes S as a JSON string literal (with the quotes) into BUF; returns the
 * length it needed, like snprintf. Bytes below 0x20 are escaped; UTF-8
 * passes through. */
size_t json_quote(char *buf, size_t len, const char *s);

#endif
