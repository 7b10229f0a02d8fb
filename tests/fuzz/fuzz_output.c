/* libFuzzer target: every output a row string reaches. Any
 * contender can write the lease and history tables, so their strings are
 * arbitrary bytes.
 *
 * Input: split at NUL bytes into a lease name, a holder, paused_by, a
 * host, an outcome and a log message (missing ones are empty); byte 0 of
 * the input also picks buffer sizes for the truncation checks.
 *
 * Checks:
 *  - escape_text: output NUL-terminated inside its buffer, never longer
 *    than the length it reports, that length the same for every buffer
 *    size, and the text well-formed UTF-8 without any control character
 *    (C0, DEL, C1); a buffer too small ends at a whole escape (the output
 *    is a prefix of the whole one);
 *  - json_quote: for every buffer size from 3 bytes up, one valid JSON
 *    string (strict: RFC 8259, UTF-8, no raw controls) that is a prefix of
 *    the whole but for its closing quote; json_write the same as the whole;
 *  - metrics_label: well-formed UTF-8, no control character, backslash
 *    only before \, " (the exposition format's escapes, n never needed);
 *  - log_render: JSON lines are one valid JSON object without a newline,
 *    text lines carry no control character, for every level and event;
 *  - the --status and --history printers (report.c) on rows made of the
 *    strings: JSON output is one valid JSON document; tables and the
 *    Prometheus text carry no control character but their line ends, and
 *    have one line per row plus head and foot. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "report/escape.h"
#include "report/json.h"
#include "report/log.h"
#include "report/metrics.h"
#include "report/report.h"

/* ---- checks, independent of escape.c ------------------------------------ */

/* Length of the well-formed UTF-8 character at S (RFC 3629), 0 if none. */
static size_t utf8_char(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t need;
	unsigned v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1, v = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2, v = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3, v = s[0] & 0x07u;
	else
		return 0;
	if (need >= n)
		return 0;
	for (size_t i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3fu);
	}
	if ((need == 2 && v < 0x800) || (need == 3 && v < 0x10000) || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return need + 1;
}

static bool is_control(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

/* Well-formed UTF-8 whose only control characters are newlines when
 * LINES (terminating lines), none otherwise. */
static void check_text(const char *what, const char *s, size_t n, bool lines)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t k = utf8_char(p + i, n - i, &cp);
		FUZZ_CHECK(k > 0, "%s: malformed UTF-8 at byte %zu of %zu (0x%02x)", what, i, n, p[i]);
		FUZZ_CHECK(!is_control(cp) || (lines && cp == '\n'), "%s: control U+%04X at byte %zu", what, cp, i);
		i += k;
	}
}

/* A strict JSON parser that only says yes or no. */
struct json {
	const unsigned char *s;
	size_t n, i;
	int depth;
};

static bool j_value(struct json *j);

static void j_ws(struct json *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r'))
		j->i++;
}

static bool j_lit(struct json *j, const char *w)
{
	size_t k = strlen(w);

	if (j->n - j->i < k || memcmp(j->s + j->i, w, k) != 0)
		return false;
	j->i += k;
	return true;
}

static bool j_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool j_string(struct json *j)
{
	if (j->i >= j->n || j->s[j->i] != '"')
		return false;
	for (j->i++; j->i < j->n;) {
		unsigned cp;
		unsigned char c = j->s[j->i];
		size_t k;
		if (c == '"') {
			j->i++;
			return true;
		}
		if (c == '\\') {
			if (j->i + 1 >= j->n)
				return false;
			c = j->s[j->i + 1];
			if (c == 'u') {
				if (j->n - j->i < 6)
					return false;
				for (int h = 2; h < 6; h++)
					if (!j_hex(j->s[j->i + (size_t)h]))
						return false;
				j->i += 6;
			} else if (strchr("\"\\/bfnrt", c) && c) {
				j->i += 2;
			} else
				return false;
			continue;
		}
		k = utf8_char(j->s + j->i, j->n - j->i, &cp);
		/* RFC 8259: no raw C0; leaderrun's promise: no raw DEL or C1. */
		if (k == 0 || is_control(cp))
			return false;
		j->i += k;
	}
	return false;
}

static bool j_number(struct json *j)
{
	size_t start = j->i;

	if (j->i < j->n && j->s[j->i] == '-')
		j->i++;
	if (j->i < j->n && j->s[j->i] == '0')
		j->i++;
	else if (j->i < j->n && j->s[j->i] >= '1' && j->s[j->i] <= '9')
		while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
			j->i++;
	else
		return false;
	if (j->i < j->n && j->s[j->i] == '.') {
		size_t d = ++j->i;
		while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
			j->i++;
		if (j->i == d)
			return false;
	}
	if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
		size_t d;
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		d = j->i;
		while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
			j->i++;
		if (j->i == d)
			return false;
	}
	return j->i > start;
}

/* An object (OPEN '{') or an array (OPEN '['). */
static bool j_container(struct json *j, unsigned char open)
{
	unsigned char close = open == '{' ? '}' : ']';

	if (++j->depth > 64)
		return false;
	j->i++;
	j_ws(j);
	if (j->i < j->n && j->s[j->i] == close) {
		j->i++;
		j->depth--;
		return true;
	}
	for (;;) {
		if (open == '{') {
			if (!j_string(j))
				return false;
			j_ws(j);
			if (j->i >= j->n || j->s[j->i++] != ':')
				return false;
		}
		if (!j_value(j))
			return false;
		if (j->i >= j->n)
			return false;
		if (j->s[j->i] == close) {
			j->i++;
			j->depth--;
			return true;
		}
		if (j->s[j->i++] != ',')
			return false;
		j_ws(j);
	}
}

static bool j_value(struct json *j)
{
	bool ok;

	j_ws(j);
	if (j->i >= j->n)
		return false;
	switch (j->s[j->i]) {
	case '{':
	case '[':
		ok = j_container(j, j->s[j->i]);
		break;
	case '"':
		ok = j_string(j);
		break;
	case 't':
		ok = j_lit(j, "true");
		break;
	case 'f':
		ok = j_lit(j, "false");
		break;
	case 'n':
		ok = j_lit(j, "null");
		break;
	default:
		ok = j_number(j);
	}
	j_ws(j);
	return ok;
}

/* The N bytes at S are exactly one JSON value (of type FIRST, if not 0). */
static void check_json(const char *what, const char *s, size_t n, char first)
{
	struct json j = {(const unsigned char *)s, n, 0, 0};
	size_t at;

	FUZZ_CHECK(strlen(s) == n, "%s: a NUL inside the output", what);
	FUZZ_CHECK(!first || (n > 0 && s[0] == first), "%s: does not start with %c: %.200s", what, first, s);
	bool ok = j_value(&j);
	at = j.i;
	FUZZ_CHECK(ok && at == n, "%s: not valid JSON at byte %zu of %zu: %.300s", what, at, n, s);
}

static size_t count_lines(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

/* ---- the outputs ---------------------------------------------------------- */

/* The buffer sizes tried after LEN for an output of WHOLE bytes: every
 * one up to 24 and near the end, else about 40 spread over the rest
 * (TIGHT shifts them from input to input). */
static size_t next_len(size_t len, size_t whole, size_t tight)
{
	size_t step = whole / 40 + 1 + tight;

	if (len < 24 || len + 8 > whole)
		return len + 1;
	return len + step + 8 > whole ? whole - 7 : len + step;
}

static void check_escapes(const char *s, size_t tight)
{
	size_t whole = escape_text(NULL, 0, s), jwhole = json_quote(NULL, 0, s);
	char *full = fuzz_buffer(whole + 1), *jfull = fuzz_buffer(jwhole + 1);

	FUZZ_CHECK(escape_text(full, whole + 1, s) == whole, "escape_text's length changes with the buffer");
	FUZZ_CHECK(strlen(full) == whole, "escape_text wrote %zu bytes, said %zu", strlen(full), whole);
	check_text("escape_text", full, whole, false);
	FUZZ_CHECK(whole <= ESCAPE_TEXT_MAX(strlen(s)), "escape_text beyond its bound");
	FUZZ_CHECK(json_quote(jfull, jwhole + 1, s) == jwhole, "json_quote's length changes with the buffer");
	check_json("json_quote", jfull, jwhole, '"');
	FUZZ_CHECK(jwhole + 1 <= JSON_QUOTE_MAX(strlen(s)), "json_quote beyond its bound");

	/* Short buffers: a whole-escape prefix, still valid, still closed. */
	for (size_t len = 1; len <= whole + 1; len = next_len(len, whole, tight)) {
		char *b = fuzz_buffer(len);
		escape_text(b, len, s);
		FUZZ_CHECK(fuzz_terminated(b, len), "escape_text into %zu bytes: no NUL", len);
		FUZZ_CHECK(strncmp(b, full, strlen(b)) == 0, "escape_text into %zu bytes is no prefix", len);
		check_text("escape_text (short)", b, strlen(b), false);
		free(b);
	}
	for (size_t len = 3; len <= jwhole + 1; len = next_len(len, jwhole, tight)) {
		char *b = fuzz_buffer(len);
		size_t got;
		json_quote(b, len, s);
		FUZZ_CHECK(fuzz_terminated(b, len), "json_quote into %zu bytes: no NUL", len);
		got = strlen(b);
		check_json("json_quote (short)", b, got, '"');
		FUZZ_CHECK(got >= 2 && strncmp(b, jfull, got - 1) == 0, "json_quote into %zu bytes is no prefix", len);
		free(b);
	}
	{
		char *out = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);
		json_write(f, s);
		fclose(f);
		FUZZ_CHECK(n == jwhole && memcmp(out, jfull, n) == 0, "json_write differs from json_quote");
		free(out);
	}
	free(full);
	free(jfull);
}

static void check_label(const char *s)
{
	size_t whole = metrics_label(NULL, 0, s);
	char *b = fuzz_buffer(whole + 1);

	FUZZ_CHECK(metrics_label(b, whole + 1, s) == whole, "metrics_label's length changes with the buffer");
	FUZZ_CHECK(whole + 1 <= METRICS_LABEL_MAX(strlen(s)), "metrics_label beyond its bound");
	check_text("metrics_label", b, whole, false);
	for (size_t i = 0; b[i]; i++)
		if (b[i] == '\\') {
			FUZZ_CHECK(b[i + 1] == '\\' || b[i + 1] == '"', "label escape \\%c", b[i + 1]);
			i++;
		} else
			FUZZ_CHECK(b[i] != '"', "raw quote in a label value");
	free(b);
}

static void check_logs(const char *lease, const char *msg)
{
	static const char *const events[] = {NULL, "waiting", "paused"};
	char *line = fuzz_buffer(LOG_LINE_MAX);

	for (int level = LOG_ERROR; level <= LOG_NOTICE; level++)
		for (int e = 0; e < 3; e++)
			for (int json = 0; json < 2; json++) {
				struct log_line l = {.level = (enum log_level)level,
						     .event = events[e],
						     .lease = (level + e) % 2 ? lease : NULL,
						     .msg = msg,
						     .ts = "2026-11-25T00:00:00.000Z",
						     .pid = 4242,
						     .json = json};
				size_t n = log_render(&l, line);
				FUZZ_CHECK(n < LOG_LINE_MAX && strlen(line) == n, "log_render: %zu bytes", n);
				if (json)
					check_json("JSON log line", line, n, '{');
				else
					check_text("text log line", line, n, false);
			}
	free(line);
}

/* F's text, checked as text with line ends; returns its line count. */
static size_t take_text(const char *what, FILE *f, char **out, size_t *n)
{
	fclose(f);
	check_text(what, *out, *n, true);
	FUZZ_CHECK(*n == 0 || (*out)[*n - 1] == '\n', "%s: last line unterminated", what);
	return count_lines(*out, *n);
}

static void fill_row(struct lease_row *w, const char *const str[], unsigned variant)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", str[0]);
	snprintf(w->holder, sizeof(w->holder), "%s", str[1]);
	snprintf(w->paused_by, sizeof(w->paused_by), "%s", str[2]);
	w->term = 42;
	w->held = variant & 1;
	w->expires_in_us = 1500000;
	w->revoked = variant & 2;
	w->has_exit = variant & 4;
	w->last_exit = 137;
	w->slot = variant & 8 ? 1 : 0;
	w->slots = variant & 8 ? 2 : 1;
	snprintf(w->expires_at, sizeof(w->expires_at), "2026-11-25T00:00:01.000000Z");
	snprintf(w->now, sizeof(w->now), "2026-11-25T00:00:00.000000Z");
	snprintf(w->finished_at, sizeof(w->finished_at), "%s", variant & 4 ? "2026-11-24T00:00:00.5Z" : "");
	snprintf(w->paused_until, sizeof(w->paused_until), "%s", variant & 16 ? "9999-12-31T23:59:59.000000Z" : "");
	snprintf(w->last_slot, sizeof(w->last_slot), "%s", variant & 32 ? "2026-11-25T00:00:00.000000Z" : "");
}

static void check_reports(const char *const str[], unsigned variant)
{
	struct lease_row rows[2];
	struct report_run runs[2];
	struct report_success ok = {.at_us = 1700000000000000};
	char *out = NULL;
	size_t n = 0;
	FILE *f;

	fill_row(&rows[0], str, variant);
	fill_row(&rows[1], str, variant ^ 0x3f);
	snprintf(ok.lease, sizeof(ok.lease), "%s", str[0]);

	f = open_memstream(&out, &n);
	report_status_table(f, rows, 2, str[3]);
	FUZZ_CHECK(take_text("--status table", f, &out, &n) == 4, "--status table: not head, 2 rows, foot: %s", out);
	free(out);

	f = open_memstream(&out, &n);
	report_status_json(f, rows, 2, str[3]);
	fclose(f);
	check_json("--status --json", out, n, '[');
	free(out);

	f = open_memstream(&out, &n);
	report_status_prometheus(f, rows, 2, &ok, 1, variant & 64);
	take_text("--status --format prometheus", f, &out, &n);
	for (char *l = out; *l; l = strchr(l, '\n') + 1)
		FUZZ_CHECK(strncmp(l, "leaderrun_", 10) == 0 || strncmp(l, "# HELP leaderrun_", 17) == 0 ||
			       strncmp(l, "# TYPE leaderrun_", 17) == 0,
			   "not a Prometheus line: %.200s", l);
	free(out);

	for (int i = 0; i < 2; i++) {
		struct report_run *x = &runs[i];
		memset(x, 0, sizeof(*x));
		x->slot = i;
		x->term = 7;
		snprintf(x->holder, sizeof(x->holder), "%s", str[1]);
		snprintf(x->host, sizeof(x->host), "%s", str[3]);
		snprintf(x->outcome, sizeof(x->outcome), "%s", str[4]);
		snprintf(x->started, sizeof(x->started), "%s", str[i ? 2 : 5]);
		x->has_exit = (variant >> i) & 1;
		x->has_signal = (variant >> i) & 2;
		x->signo = 9;
		x->has_duration = true;
		x->duration_us = 1234567;
	}
	f = open_memstream(&out, &n);
	report_runs_table(f, runs, 2);
	FUZZ_CHECK(take_text("--history table", f, &out, &n) == 4, "--history table: not head, 2 rows, foot: %s", out);
	free(out);
	f = open_memstream(&out, &n);
	report_runs_json(f, runs, 2);
	fclose(f);
	check_json("--history --json", out, n, '[');
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { NSTR = 6 };
	const char *str[NSTR];
	char *buf;
	size_t k = 0, at = 0;
	unsigned variant;

	if (size < 1)
		return 0;
	variant = data[0];
	buf = fuzz_cstring(data + 1, size - 1);
	for (; k < NSTR && at <= size - 1; k++) {
		str[k] = buf + at;
		at += strlen(buf + at) + 1;
	}
	for (; k < NSTR; k++)
		str[k] = "";

	for (int i = 0; i < NSTR; i++) {
		check_escapes(str[i], variant % 7);
		check_label(str[i]);
	}
	check_logs(str[0], str[5]);
	check_logs(str[1], str[2]);
	check_reports(str, variant);
	free(buf);
	return 0;
}
