#include "dsn.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *dsn_skip_scheme(const char *text)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (strncmp(text, schemes[i], strlen(schemes[i])) == 0)
			return text + strlen(schemes[i]);
	return NULL;
}

/* The userinfo ends at the last '@' before the path: a password may hold
 * '@' when written raw, which people do despite RFC 3986. */
static const char *dsn_userinfo_end(const char *auth, const char *auth_end)
{
	const char *at = NULL;

	for (const char *p = auth; p < auth_end; p++)
		if (*p == '@')
			at = p;
	return at;
}

/* Where the parameters begin: the first '?' followed by NAME= or by
 * nothing. Another '?' is a password's: people paste passwords raw, and
 * one with a '?' used to end the authority there, which then failed as
 * "port 'Sup3r'", printing half the secret. */
static const char *dsn_query_start(const char *auth)
{
	for (const char *q = strchr(auth, '?'); q; q = strchr(q + 1, '?')) {
		const char *n = q + 1;

		if (*n == '\0')
			return q;
		if (!isalpha((unsigned char)*n))
			continue;
		while (isalnum((unsigned char)*n) || *n == '-' || *n == '_')
			n++;
		if (*n == '=')
			return q;
	}
	return auth + strlen(auth);
}

static const char *dsn_authority_end(const char *auth)
{
	/* The authority runs to the first '/' or '?' after the last '@'
	 * before the parameters: a raw '/', '?' or '@' in a password does
	 * not cut it short, and a raw '@' in the parameters (a socket path)
	 * is not taken for the end of a password. */
	const char *qs = dsn_query_start(auth), *at = NULL, *p;

	for (p = auth; p < qs; p++)
		if (*p == '@')
			at = p;
	for (p = at ? at + 1 : auth; *p && *p != '/' && *p != '?'; p++)
		;
	return p;
}

int dsn_password_span(const char *text, size_t *off, size_t *len)
{
	const char *auth = dsn_skip_scheme(text ? text : "");
	const char *end, *at, *colon;

	if (!auth)
		return 0;
	end = dsn_authority_end(auth);
	at = dsn_userinfo_end(auth, end);
	if (!at)
		return 0;
	colon = memchr(auth, ':', (size_t)(at - auth));
	if (!colon)
		return 0;
	*off = (size_t)(colon + 1 - text);
	*len = (size_t)(at - colon - 1);
	return 1;
}

int dsn_secret_span(const char *text, size_t *off, size_t *len)
{
	const char *auth = dsn_skip_scheme(text ? text : "");
	const char *at, *colon;

	/* From the first ':' to the last '@': whatever a reader (or a
	 * mistyped '?') makes of the DSN, its password lies in there. */
	if (!auth || !(at = strrchr(auth, '@')))
		return 0;
	colon = memchr(auth, ':', (size_t)(at - auth));
	if (!colon)
		return 0;
	*off = (size_t)(colon + 1 - text);
	*len = (size_t)(at - colon - 1);
	return 1;
}

void dsn_without_password(const char *text, char *buf, size_t len)
{
	size_t off, plen;

	if (!dsn_password_span(text, &off, &plen)) {
		snprintf(buf, len, "%s", text);
		return;
	}
	/* Drop the ':' as well: "mysql://app@host/db". */
	snprintf(buf, len, "%.*s%s", (int)(off - 1), text, text + off + plen);
}

void dsn_redacted(const char *text, char *buf, size_t len)
{
	size_t off, slen;

	if (!dsn_secret_span(text, &off, &slen)) {
		snprintf(buf, len, "%s", text);
		return;
	}
	snprintf(buf, len, "%.*s***%s", (int)off, text, text + off + slen);
}

void dsn_redact_all(const char *text, char *buf, size_t len)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};
	const char *first = NULL;
	size_t n;

	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++) {
		const char *p = strstr(text, schemes[k]);
		if (p && (!first || p < first))
			first = p;
	}
	if (!first) {
		snprintf(buf, len, "%s", text);
		return;
	}
	/* Text before the URL is shown; the URL (to the end: a second one
	 * would lie inside its span) without its secret. */
	n = (size_t)(first - text);
	snprintf(buf, len, "%.*s", (int)n, text);
	if (n < len)
		dsn_redacted(first, buf + n, len - n);
}

/* What error messages may quote: [SEC, SEC_END) may hold a password and
 * is never shown; a message that had to leave it out says so. */
struct dsn_ctx {
	const char *sec, *sec_end;
	bool hid;
};

static struct dsn_ctx dsn_ctx_of(const char *text)
{
	struct dsn_ctx c = {NULL, NULL, false};
	size_t off, len;

	if (dsn_secret_span(text, &off, &len)) {
		c.sec = text + off;
		c.sec_end = text + off + len;
	}
	return c;
}

/* Replaces the piece [*P, *P + *N) of a message by "***" when it overlaps
 * the secret. */
static void dsn_veil(struct dsn_ctx *c, const char **p, int *n)
{
	if (c->sec && *p<c->sec_end && * p + *n> c->sec) {
		*p = "***";
		*n = 3;
		c->hid = true;
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes [S, S+N) into a new string; NULL on a bad escape or a
 * decoded NUL, which no C string can carry. */
static char *pct_decode(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%') {
			int hi, lo;
			if (i + 2 >= n)
				goto bad;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				goto bad;
			*o++ = (char)(hi * 16 + lo);
			i += 2;
		} else
			*o++ = s[i];
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static int parse_uint(const char *s, size_t n, unsigned long max, unsigned *out)
{
	unsigned long v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
		if (v > max)
			return -1;
	}
	*out = (unsigned)v;
	return 0;
}

/* The value of host-order or connect-timeout, V of VLEN bytes. */
static int dsn_parse_setting(struct dsn_ctx *c, const char *k, size_t klen, const char *v, size_t vlen, struct dsn *d,
			     char *err, size_t errlen)
{
	int n = (int)vlen;

	if (klen == 10 && strncmp(k, "host-order", 10) == 0) {
		if (vlen == 6 && strncmp(v, "random", 6) == 0)
			d->random_order = true;
		else if (vlen == 8 && strncmp(v, "in-order", 8) == 0)
			d->random_order = false;
		else {
			dsn_veil(c, &v, &n);
			snprintf(err, errlen, "DSN parameter 'host-order' must be in-order or random, not '%.*s'", n,
				 v);
			return -1;
		}
	} else if (klen == 15 && strncmp(k, "connect-timeout", 15) == 0) {
		if (parse_uint(v, vlen, 3600, &d->connect_timeout_s) < 0 || d->connect_timeout_s == 0) {
			dsn_veil(c, &v, &n);
			snprintf(err, errlen,
				 "DSN parameter 'connect-timeout' must be whole seconds from 1 to 3600, not '%.*s'", n,
				 v);
			return -1;
		}
	} else {
		n = (int)klen;
		dsn_veil(c, &k, &n);
		snprintf(err, errlen,
			 "unknown DSN parameter '%.*s'; known: socket, connect-timeout, host-order, ssl-mode, ssl-ca, "
			 "ssl-cert, ssl-key",
			 n, k);
		return -1;
	}
	return 0;
}

static int dsn_parse_query(struct dsn_ctx *c, const char *q, struct dsn *d, char *err, size_t errlen)
{
	while (*q) {
		const char *amp = strchr(q, '&');
		size_t n = amp ? (size_t)(amp - q) : strlen(q);
		const char *eq = memchr(q, '=', n);
		size_t klen = eq ? (size_t)(eq - q) : n;
		const char *v = eq ? eq + 1 : q + n, *k = q;
		size_t vlen = eq ? n - klen - 1 : 0;
		int kn = (int)klen;

		dsn_veil(c, &k, &kn);
		if (!eq || vlen == 0) {
			snprintf(err, errlen, "DSN parameter '%.*s' needs a value (name=value)", kn, k);
			return -1;
		}
		char **str = klen == 6 && strncmp(q, "socket", 6) == 0	   ? &d->socket
			     : klen == 8 && strncmp(q, "ssl-mode", 8) == 0 ? &d->ssl_mode
			     : klen == 6 && strncmp(q, "ssl-ca", 6) == 0   ? &d->ssl_ca
			     : klen == 8 && strncmp(q, "ssl-cert", 8) == 0 ? &d->ssl_cert
			     : klen == 7 && strncmp(q, "ssl-key", 7) == 0  ? &d->ssl_key
									   : NULL;
		if (str) {
			free(*str);
			*str = pct_decode(v, vlen);
			if (!*str) {
				snprintf(err, errlen, "DSN parameter '%.*s' has a bad %%-escape", kn, k);
				return -1;
			}
		} else if (dsn_parse_setting(c, q, klen, v, vlen, d, err, errlen) < 0)
			return -1;
		q += n + (amp ? 1 : 0);
	}
	return 0;
}

/* Decoded values end up in messages and file names: no control bytes
 * (a %0A would split an error message across lines). */
static bool has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int dsn_parse_host(struct dsn_ctx *c, const char *p, const char *end, struct dsn_host *h, char *err,
			  size_t errlen)
{
	const char *hend, *shown = p;
	int n = (int)(end - p);

	/* NAME, or [IPv6], then :PORT. */
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));
		if (!rb) {
			dsn_veil(c, &shown, &n);
			snprintf(err, errlen, "DSN host '%.*s' is missing its closing ']'", n, shown);
			return -1;
		}
		h->name = strndup(p + 1, (size_t)(rb - p - 1));
		hend = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		hend = colon ? colon : end;
		h->name = strndup(p, (size_t)(hend - p));
	}
	if (!h->name) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (h->name[0] == '\0') {
		snprintf(err, errlen, "DSN host is empty");
		return -1;
	}
	if (has_control(h->name)) {
		snprintf(err, errlen, "DSN host contains a control character");
		return -1;
	}
	if (strchr(h->name, ',')) {
		n = (int)(hend - p);
		dsn_veil(c, &shown, &n);
		snprintf(err, errlen, "DSN host '%.*s' is not an address", n, shown);
		return -1;
	}
	if (hend < end &&
	    (*hend != ':' || parse_uint(hend + 1, (size_t)(end - hend - 1), 65535, &h->port) < 0 || h->port == 0)) {
		shown = hend + (*hend == ':');
		n = (int)(end - shown);
		dsn_veil(c, &shown, &n);
		snprintf(err, errlen, "DSN port must be a number from 1 to 65535, not '%.*s'", n, shown);
		return -1;
	}
	return 0;
}

static int dsn_hosts(struct dsn_ctx *c, const char *text, size_t len, struct dsn *d, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;

	if (len == 0)
		return 0;
	for (;;) {
		/* A comma inside [...] is not a separator (it cannot occur in an
		 * IPv6 address, but the error should name the right host). */
		const char *q = p;
		while (q < end && *q != ',') {
			if (*q == '[')
				while (q < end && *q != ']')
					q++;
			if (q < end)
				q++;
		}
		if (d->nhosts == DSN_MAX_HOSTS) {
			snprintf(err, errlen, "DSN names more than %d hosts", DSN_MAX_HOSTS);
			return -1;
		}
		if (q == p) {
			snprintf(err, errlen, "DSN host list has an empty entry; write HOST[:PORT],HOST[:PORT]");
			return -1;
		}
		if (dsn_parse_host(c, p, q, &d->hosts[d->nhosts++], err, errlen) < 0)
			return -1;
		if (q == end)
			return 0;
		p = q + 1;
		if (p == end) {
			snprintf(err, errlen, "DSN host list has an empty entry; write HOST[:PORT],HOST[:PORT]");
			return -1;
		}
	}
}

int dsn_parse_hosts(const char *text, size_t len, struct dsn *d, char *err, size_t errlen)
{
	/* No host holds an '@': a list that does ("app:pw@db") was
	 * written as a DSN's authority, and what comes before it is not
	 * shown. */
	struct dsn_ctx c = {NULL, NULL, false};
	const char *at = memrchr(text, '@', len);

	unsigned start = d->nhosts;

	if (at) {
		c.sec = text;
		c.sec_end = at;
	}
	if (dsn_hosts(&c, text, len, d, err, errlen) == 0)
		return 0;
	/* Refused: nothing of it stays, for the caller to free or not. */
	while (d->nhosts > start) {
		free(d->hosts[--d->nhosts].name);
		d->hosts[d->nhosts].name = NULL;
	}
	return -1;
}

/* USER[:PASSWORD]@ of [AUTH, AT) into D. */
static int dsn_parse_userinfo(const char *auth, const char *at, struct dsn *d, char *err, size_t errlen)
{
	const char *colon = memchr(auth, ':', (size_t)(at - auth));
	const char *uend = colon ? colon : at;

	if (uend > auth) {
		d->user = pct_decode(auth, (size_t)(uend - auth));
		if (!d->user) {
			snprintf(err, errlen, "DSN user has a bad %%-escape");
			return -1;
		}
	}
	if (colon) {
		d->password = pct_decode(colon + 1, (size_t)(at - colon - 1));
		if (!d->password) {
			/* Never echo any part of the password. */
			snprintf(err, errlen, "DSN password has a bad %%-escape (write '%%' as %%25)");
			return -1;
		}
	}
	return 0;
}

/* /DATABASE, then ?PARAMS, from P (the end of the authority). */
static int dsn_parse_rest(struct dsn_ctx *c, const char *p, struct dsn *d, char *err, size_t errlen)
{
	if (*p == '/') {
		const char *q = strchr(p, '?');
		size_t n = q ? (size_t)(q - p - 1) : strlen(p + 1);
		if (n > 0) {
			d->database = pct_decode(p + 1, n);
			if (!d->database || strchr(d->database, '/')) {
				const char *shown = p + 1;
				int sn = (int)n;
				dsn_veil(c, &shown, &sn);
				snprintf(err, errlen, "DSN database name '%.*s' is not valid", sn, shown);
				return -1;
			}
		}
		p = q ? q : p + 1 + n;
	}
	if (*p == '?' && dsn_parse_query(c, p + 1, d, err, errlen) < 0)
		return -1;
	{
		const char *const fields[][2] = {
		    {"user", d->user},	   {"database", d->database}, {"socket", d->socket},  {"ssl-mode", d->ssl_mode},
		    {"ssl-ca", d->ssl_ca}, {"ssl-cert", d->ssl_cert}, {"ssl-key", d->ssl_key}};
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (has_control(fields[i][1])) {
				snprintf(err, errlen, "DSN %s contains a control character", fields[i][0]);
				return -1;
			}
	}
	if (d->nhosts == 0 && !d->socket) {
		snprintf(err, errlen, "DSN names no host; write mysql://USER@HOST/DB or mysql://USER@/DB?socket=PATH");
		return -1;
	}
	return 0;
}

int dsn_parse(const char *text, struct dsn *d, char *err, size_t errlen)
{
	const char *auth, *end, *at, *hp;
	struct dsn_ctx c;

	memset(d, 0, sizeof(*d));
	auth = dsn_skip_scheme(text ? text : "");
	if (!auth) {
		snprintf(err, errlen, "DSN must start with mysql:// (mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE)");
		return -1;
	}
	c = dsn_ctx_of(text);
	end = dsn_authority_end(auth);
	at = dsn_userinfo_end(auth, end);
	if (at && dsn_parse_userinfo(auth, at, d, err, errlen) < 0)
		goto fail;
	hp = at ? at + 1 : auth;
	if (dsn_hosts(&c, hp, (size_t)(end - hp), d, err, errlen) < 0 || dsn_parse_rest(&c, end, d, err, errlen) < 0)
		goto fail;
	return 0;

fail:
	if (c.hid) {
		/* Say where, without the part that may be the password. */
		char shown[256];
		size_t n = strlen(err);
		dsn_redacted(text, shown, sizeof(shown));
		snprintf(err + n, errlen > n ? errlen - n : 0,
			 " in %s (the password hidden; if it holds a '?', write that as %%3F)", shown);
	}
	/* One line, whatever raw bytes the quoted pieces held. */
	for (char *e = err; errlen && *e; e++)
		if ((unsigned char)*e < 0x20 || *e == 0x7f)
			*e = '?';
	dsn_free(d);
	return -1;
}

void dsn_free(struct dsn *d)
{
	free(d->user);
	if (d->password) {
		/* Do not leave the secret in freed heap memory. */
		explicit_bzero(d->password, strlen(d->password));
		free(d->password);
	}
	for (unsigned i = 0; i < d->nhosts; i++)
		free(d->hosts[i].name);
	free(d->database);
	free(d->socket);
	free(d->ssl_mode);
	free(d->ssl_ca);
	free(d->ssl_cert);
	free(d->ssl_key);
	memset(d, 0, sizeof(*d));
}
