/* Shared helpers for the libFuzzer targets in tests/fuzz/ (built and run by
 * scripts/fuzz, never by meson).
 *
 * FUZZ_CHECK states a property the code under test promises; a violation
 * prints the reason and aborts, which libFuzzer reports as a crash and saves
 * the input. */
#ifndef LEADERRUN_FUZZ_COMMON_H
#define LEADERRUN_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                                                          \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "\nFUZZ_CHECK failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
			abort();                                                                                       \
		}                                                                                                      \
	} while (0)

/* The input as a C string in its own heap block, so that ASan sees any read
 * past the terminating NUL. Bytes after an embedded NUL are ignored by the
 * code under test, which takes C strings. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A heap buffer of exactly LEN bytes: a write past it is an ASan report,
 * not silent stack corruption. */
static inline char *fuzz_buffer(size_t len)
{
	char *b = malloc(len ? len : 1);

	if (!b)
		abort();
	memset(b, 0xa5, len ? len : 1);
	return b;
}

/* True when the LEN bytes at S are a NUL-terminated string (the NUL
 * included in LEN). */
static inline int fuzz_terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

#endif
