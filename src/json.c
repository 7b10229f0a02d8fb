#include "json.h"

#include <stdio.h>

size_t json_quote(char *buf, size_t len, const char *s)
{
	size_t n = 0;

#define PUT(c)                                                                                                         \
	do {                                                                                                           \
		if (n + 1 < len)                                                                                       \
			buf[n] = (c);                                                                                  \
		n++;                                                                                                   \
	} while (0)

	PUT('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			PUT('\\');
			PUT((char)*p);
		} else if (*p == '\n') {
			PUT('\\');
			PUT('n');
		} else if (*p == '\t') {
			PUT('\\');
			PUT('t');
		} else if (*p < 0x20 || *p == 0x7f) {
			char esc[8];
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			for (const char *e = esc; *e; e++)
				PUT(*e);
		} else
			PUT((char)*p);
	}
	PUT('"');
#undef PUT
	if (len)
		buf[n < len ? n : len - 1] = '\0';
	return n;
}
