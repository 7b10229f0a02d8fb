#include "sqltext.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool sqltext_append(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*used >= len)
		return false;
	va_start(ap, fmt);
	w = vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= len - *used) {
		out[len - 1] = '\0';
		*used = len;
		return false;
	}
	*used += (size_t)w;
	return true;
}

bool sqltext_literal(char *out, size_t len, size_t *used, const struct db_value *v)
{
	static const char hex[] = "0123456789ABCDEF";

	if (v->kept)
		return sqltext_append(out, len, used, "?");
	if (v->is_null || (v->type == DB_STR && !v->str))
		return sqltext_append(out, len, used, "NULL");
	if (v->type == DB_I64)
		return sqltext_append(out, len, used, "%" PRId64, v->i64);
	if (v->type == DB_U64)
		return sqltext_append(out, len, used, "%" PRIu64, v->u64);
	/* The empty string has no hexadecimal literal of its own (X'' is a
	 * binary one): an empty text literal. */
	if (!*v->str)
		return sqltext_append(out, len, used, "_utf8mb4''");
	if (!sqltext_append(out, len, used, "_utf8mb4 X'"))
		return false;
	for (const unsigned char *p = (const unsigned char *)v->str; *p; p++)
		if (!sqltext_append(out, len, used, "%c%c", hex[*p >> 4], hex[*p & 15]))
			return false;
	return sqltext_append(out, len, used, "'");
}

/* Where the quoted string, name or comment that starts at P ends (past its
 * last character); P itself when none starts there. */
static const char *sqltext_skip(const char *p)
{
	char q = *p;

	if (q == '\'' || q == '"' || q == '`') {
		for (p++; *p; p++) {
			if (*p == '\\' && q != '`' && p[1])
				p++;
			else if (*p == q && p[1] == q)
				p++;
			else if (*p == q)
				return p + 1;
		}
		return p;
	}
	if (p[0] == '/' && p[1] == '*') {
		const char *end = strstr(p + 2, "*/");
		return end ? end + 2 : p + strlen(p);
	}
	if ((p[0] == '-' && p[1] == '-' && (p[2] == ' ' || p[2] == '\t')) || p[0] == '#') {
		const char *end = strchr(p, '\n');
		return end ? end + 1 : p + strlen(p);
	}
	return p;
}

bool sqltext_render(char *out, size_t len, size_t *used, const struct db_call *c)
{
	const char *sql = c->sql;
	const struct db_value *params = c->params;
	unsigned k = 0, n = c->nparams;

	while (*sql) {
		const char *next = sqltext_skip(sql);

		/* Plain text up to the next quote, comment or placeholder,
		 * copied as one run. */
		if (next == sql && *sql != '?')
			next = sql + 1 + strcspn(sql + 1, "'\"`/-#?");
		if (next != sql) {
			if (!sqltext_append(out, len, used, "%.*s", (int)(next - sql), sql))
				return false;
			sql = next;
			continue;
		}
		if (k >= n || !sqltext_literal(out, len, used, &params[k]))
			return false;
		k++;
		sql++;
	}
	return k == n;
}
