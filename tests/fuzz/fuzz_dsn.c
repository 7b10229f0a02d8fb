/* libFuzzer target: dsn_parse, dsn_password_span, dsn_without_password.
 *
 * Besides memory safety (ASan/UBSan), it checks what dsn.h promises:
 *  - a parsed DSN names a host or a socket; ports 1..65535, timeouts
 *    1..3600, no empty strings (ssl-* parameters included), no '/' in the
 *    database name;
 *  - dsn_password_span finds a password exactly when dsn_parse returns one,
 *    and the span decodes to it;
 *  - nothing but the password depends on the password's bytes: replacing
 *    them changes neither the other fields nor an error message (so an
 *    error message never echoes the password);
 *  - dsn_without_password leaves no password that dsn_password_span would
 *    find, even when truncated, removes exactly ":PASSWORD", and the
 *    result parses to the same DSN without a password;
 *  - a failed parse leaves the struct empty, and dsn_free is idempotent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/dsn.h"
#include "fuzz_common.h"

#define ERRLEN 256 /* what options.c passes */

static const char password_escape_error[] = "DSN password has a bad %-escape (write '%' as %25)";

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_empty(const struct dsn *d)
{
	FUZZ_CHECK(!d->user && !d->password && d->nhosts == 0 && !d->hosts[0].name && !d->random_order &&
		       !d->database && !d->socket && d->connect_timeout_s == 0 && !d->ssl_mode && !d->ssl_ca &&
		       !d->ssl_cert && !d->ssl_key,
		   "a failed dsn_parse left fields set");
}

static void check_fields(const char *text, const struct dsn *d)
{
	FUZZ_CHECK(d->nhosts || d->socket, "'%s' parsed without host or socket", text);
	FUZZ_CHECK(d->nhosts <= DSN_MAX_HOSTS, "'%s' parsed to %u hosts", text, d->nhosts);
	for (unsigned i = 0; i < d->nhosts; i++) {
		FUZZ_CHECK(d->hosts[i].name && d->hosts[i].name[0], "'%s' parsed to an empty host %u", text, i);
		FUZZ_CHECK(!strchr(d->hosts[i].name, ','), "'%s' parsed to host '%s' with a comma", text,
			   d->hosts[i].name);
		FUZZ_CHECK(d->hosts[i].port <= 65535, "'%s' parsed to port %u", text, d->hosts[i].port);
	}
	FUZZ_CHECK(!d->user || d->user[0], "'%s' parsed to an empty user", text);
	FUZZ_CHECK(!d->socket || d->socket[0], "'%s' parsed to an empty socket", text);
	FUZZ_CHECK((!d->ssl_mode || d->ssl_mode[0]) && (!d->ssl_ca || d->ssl_ca[0]) &&
		       (!d->ssl_cert || d->ssl_cert[0]) && (!d->ssl_key || d->ssl_key[0]),
		   "'%s' parsed to an empty ssl-* parameter", text);
	FUZZ_CHECK(!d->database || (d->database[0] && !strchr(d->database, '/')), "'%s' parsed to database '%s'", text,
		   d->database);
	FUZZ_CHECK(d->connect_timeout_s <= 3600, "'%s' parsed to connect-timeout %u", text, d->connect_timeout_s);
}

/* Same fields, passwords aside. */
static int same_but_password(const struct dsn *a, const struct dsn *b)
{
	if (a->nhosts != b->nhosts || a->random_order != b->random_order)
		return 0;
	for (unsigned i = 0; i < a->nhosts; i++)
		if (!str_eq(a->hosts[i].name, b->hosts[i].name) || a->hosts[i].port != b->hosts[i].port)
			return 0;
	return str_eq(a->user, b->user) && str_eq(a->database, b->database) && str_eq(a->socket, b->socket) &&
	       a->connect_timeout_s == b->connect_timeout_s && str_eq(a->ssl_mode, b->ssl_mode) &&
	       str_eq(a->ssl_ca, b->ssl_ca) && str_eq(a->ssl_cert, b->ssl_cert) && str_eq(a->ssl_key, b->ssl_key);
}

/* dsn_without_password into a buffer of exactly LEN bytes; checks the
 * result against EXPECT (the untruncated output) and returns it. */
static char *without_password(const char *text, size_t len, const char *expect)
{
	char *buf = fuzz_buffer(len);
	size_t off, plen;

	dsn_without_password(text, buf, len);
	FUZZ_CHECK(fuzz_terminated(buf, len), "dsn_without_password left its %zu-byte buffer unterminated", len);
	FUZZ_CHECK(!dsn_password_span(buf, &off, &plen),
		   "dsn_without_password('%s', %zu) = '%s' still has a password at %zu+%zu", text, len, buf, off, plen);
	if (expect)
		FUZZ_CHECK(strncmp(buf, expect, len - 1) == 0 &&
			       strlen(buf) == (strlen(expect) < len ? strlen(expect) : len - 1),
			   "dsn_without_password('%s', %zu) = '%s', not a prefix of '%s'", text, len, buf, expect);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	char *err = fuzz_buffer(ERRLEN);
	struct dsn d;
	size_t off = 0, plen = 0, n = strlen(text);
	int rc, has_span;

	rc = dsn_parse(text, &d, err, ERRLEN);
	has_span = dsn_password_span(text, &off, &plen);
	if (has_span)
		FUZZ_CHECK(off >= 1 && off + plen <= n && text[off - 1] == ':',
			   "dsn_password_span('%s') = %zu+%zu is not after a ':'", text, off, plen);

	if (rc < 0) {
		FUZZ_CHECK(fuzz_terminated(err, ERRLEN) && err[0], "'%s' rejected without a message", text);
		check_empty(&d);
	} else {
		FUZZ_CHECK(rc == 0, "dsn_parse returned %d", rc);
		check_fields(text, &d);
		FUZZ_CHECK(!!d.password == has_span, "'%s': parsed password %s but dsn_password_span says %d", text,
			   d.password ? "set" : "unset", has_span);
		if (d.password) {
			size_t pct = 0;
			for (size_t i = 0; i < plen; i++)
				pct += text[off + i] == '%';
			FUZZ_CHECK(strlen(d.password) == plen - 2 * pct,
				   "'%s': the password span (%zu bytes, %zu escapes) does not decode to the password",
				   text, plen, pct);
			if (pct == 0)
				FUZZ_CHECK(memcmp(d.password, text + off, plen) == 0,
					   "'%s': the password span is not the password", text);
		}
	}

	/* The same text with the password's bytes replaced: everything else
	 * must come out the same. 'Q' is no delimiter and no escape. */
	if (has_span && plen > 0) {
		char *text2 = strdup(text);
		char *err2 = fuzz_buffer(ERRLEN);
		struct dsn d2;
		int rc2;

		memset(text2 + off, 'Q', plen);
		rc2 = dsn_parse(text2, &d2, err2, ERRLEN);
		if (rc == 0) {
			FUZZ_CHECK(rc2 == 0, "'%s' parses but '%s' fails: %s", text, text2, err2);
			FUZZ_CHECK(same_but_password(&d, &d2), "the password of '%s' changes other fields", text);
			FUZZ_CHECK(d2.password && strspn(d2.password, "Q") == plen && !d2.password[plen],
				   "'%s': password is not the span", text2);
		} else if (strcmp(err, password_escape_error) != 0) {
			FUZZ_CHECK(rc2 < 0 && strcmp(err, err2) == 0,
				   "the error for '%s' depends on the password: '%s' vs '%s'", text, err,
				   rc2 < 0 ? err2 : "(accepted)");
		}
		if (rc2 == 0)
			dsn_free(&d2);
		free(err2);
		free(text2);
	}

	/* Redaction: the full output, then a truncated one. */
	{
		char *full = fuzz_buffer(n + 1);
		char *out;

		dsn_without_password(text, full, n + 1);
		if (has_span)
			FUZZ_CHECK(strlen(full) == n - plen - 1 && memcmp(full, text, off - 1) == 0 &&
				       strcmp(full + off - 1, text + off + plen) == 0,
				   "dsn_without_password('%s') = '%s' does not drop exactly ':PASSWORD'", text, full);
		else
			FUZZ_CHECK(strcmp(full, text) == 0, "dsn_without_password('%s') changed it to '%s'", text,
				   full);
		free(without_password(text, n + 1, full));
		out = without_password(text, 1 + (n ? (size_t)data[0] % (n + 1) : 0), full);
		free(out);

		if (rc == 0) {
			struct dsn d3;
			char *err3 = fuzz_buffer(ERRLEN);
			FUZZ_CHECK(dsn_parse(full, &d3, err3, ERRLEN) == 0,
				   "'%s' parses but its redaction '%s' fails: %s", text, full, err3);
			FUZZ_CHECK(same_but_password(&d, &d3) && !d3.password,
				   "'%s' and its redaction '%s' parse differently", text, full);
			dsn_free(&d3);
			free(err3);
		}
		free(full);
	}

	if (rc == 0) {
		dsn_free(&d);
		check_empty(&d);
	}
	dsn_free(&d); /* idempotent: options_free relies on it after a failed parse */
	free(err);
	free(text);
	return 0;
}
