#include "json.h"

#include <stdbool.h>
#include <string.h>

#include "escape.h"

/* Where the escaped text goes: BUF (LEN bytes, of which the last two are
 * kept for the closing quote and the NUL), or F when BUF is NULL. */
struct sink {
	char *buf;
	size_t len, n, end;
	bool full;
	FILE *f;
};

static void put(struct sink *o, const char *chunk, size_t k)
{
	if (o->f) {
		fwrite(chunk, 1, k, o->f);
	} else if (!o->full && o->n + k + 2 <= o->len) {
		memcpy(o->buf + o->n, chunk, k);
		o->end = o->n + k;
	} else
		o->full = true;
	o->n += k;
}

static void json_emit(struct sink *o, const char *s)
{
	size_t k;

	put(o, "\"", 1);
	for (; *s; s += k) {
		enum escape_class cls;
		unsigned cp;
		char esc[8];
		k = escape_next(s, &cls, &cp);
		if (cls == ESCAPE_INVALID)
			put(o, "\\ufffd", 6);
		else if (cp == '"' || cp == '\\') {
			esc[0] = '\\';
			esc[1] = (char)cp;
			put(o, esc, 2);
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			esc[0] = '\\';
			esc[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
			put(o, esc, 2);
		} else if (cls == ESCAPE_CONTROL) {
			/* Every code point escape_next calls a control is in
			 * the BMP: four hex digits. */
			static const char hex[] = "0123456789abcdef";
			memcpy(esc, "\\u", 2);
			esc[2] = hex[(cp >> 12) & 15];
			esc[3] = hex[(cp >> 8) & 15];
			esc[4] = hex[(cp >> 4) & 15];
			esc[5] = hex[cp & 15];
			put(o, esc, 6);
		} else
			put(o, s, k);
	}
}

size_t json_quote(char *buf, size_t len, const char *s)
{
	struct sink o = {.buf = buf, .len = len};

	json_emit(&o, s);
	o.n++; /* the closing quote */
	/* The opening quote fits whenever the closing one and the NUL do. */
	if (len >= 3) {
		buf[o.end] = '"';
		buf[o.end + 1] = '\0';
	} else if (len > 0)
		buf[0] = '\0';
	return o.n;
}

void json_write(FILE *f, const char *s)
{
	struct sink o = {.f = f};

	json_emit(&o, s);
	fputc('"', f);
}
