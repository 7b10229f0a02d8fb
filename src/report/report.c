#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/duration.h"
#include "base/signame.h"
#include "escape.h"
#include "json.h"
#include "metrics.h"

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* "KEY": "TIME", or null for a time the row does not have yet. */
static void print_time(FILE *f, const char *key, const char *t)
{
	fprintf(f, "\"%s\": ", key);
	if (t[0])
		json_write(f, t);
	else
		fputs("null", f);
	fputs(", ", f);
}

/* "KEY": S, quoted. */
static void print_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\": ", key);
	json_write(f, s);
	fputs(", ", f);
}

/* A pause's end as people read it: a pause without --for lasts until
 * --resume, and is stored as the end of time. */
static const char *pause_end(const char *until, char *buf, size_t len)
{
	if (strncmp(until, "9999-", 5) == 0)
		return "until --resume";
	snprintf(buf, len, "until %s", until);
	return buf;
}

static const char *state_of(const struct lease_row *w)
{
	if (w->paused_until[0])
		return w->revoked ? "revoked+paused" : w->held ? "held+paused" : "paused";
	return w->revoked ? "revoked" : w->held ? "held" : "free";
}

/* "standbys": [...] of the lease W (slot 0's object only: a lease's). */
static void print_standbys(FILE *f, const struct lease_row *w, const struct standby_row *sb, size_t nsb)
{
	bool first = true;

	if (w->slot != 0)
		return;
	fputs("\"standbys\": [", f);
	for (size_t k = 0; k < nsb; k++) {
		if (strcmp(sb[k].lease, w->name) != 0)
			continue;
		fputs(first ? "{" : ", {", f);
		print_str(f, "holder", sb[k].holder);
		print_str(f, "host", sb[k].host);
		print_str(f, "since", sb[k].since);
		fprintf(f, "\"healthy\": %s, \"priority\": %d, \"chosen\": %s}", sb[k].healthy ? "true" : "false",
			sb[k].priority, sb[k].chosen ? "true" : "false");
		first = false;
	}
	fputs("], ", f);
}

void report_status_json(FILE *f, const struct lease_row *rows, size_t n, const char *server)
{
	report_status_json_with(f, rows, n, server, NULL, 0);
}

void report_status_json_with(FILE *f, const struct lease_row *rows, size_t n, const char *server,
			     const struct standby_row *sb, size_t nsb)
{
	fputs("[", f);
	for (size_t i = 0; i < n; i++) {
		const struct lease_row *w = &rows[i];
		fprintf(f, "%s\n  {", i ? "," : "");
		print_str(f, "name", w->name);
		print_str(f, "holder", w->holder);
		fprintf(f, "\"term\": %" PRIu64 ", \"state\": \"%s\", \"expires_in_ms\": %" PRId64 ", ", w->term,
			w->held ? "held" : "free", w->held ? w->expires_in_us / 1000 : (int64_t)0);
		print_str(f, "expires_at", w->expires_at);
		print_time(f, "renewed_at", w->renewed_at);
		print_time(f, "acquired_at", w->acquired_at);
		if (w->has_exit)
			fprintf(f, "\"last_exit\": %d, ", w->last_exit);
		else
			fputs("\"last_exit\": null, ", f);
		print_time(f, "finished_at", w->finished_at);
		fprintf(f, "\"revoked\": %s, \"paused\": %s, ", w->revoked ? "true" : "false",
			w->paused_until[0] ? "true" : "false");
		print_time(f, "paused_until", w->paused_until);
		if (w->paused_until[0])
			print_str(f, "paused_by", w->paused_by);
		else
			fputs("\"paused_by\": null, ", f);
		print_time(f, "last_slot", w->last_slot);
		fprintf(f, "\"slot\": %u, \"slots\": %u, ", w->slot, w->slots);
		print_standbys(f, w, sb, nsb);
		print_str(f, "db_now", w->now);
		fputs("\"server\": ", f);
		json_write(f, server);
		fputs("}", f);
	}
	fputs(n ? "\n]\n" : "]\n", f);
}

/* A table cell: room for the longest one (the NOTE column: a pause's end,
 * its author and a slot time), each byte escaped. */
#define CELL_MAX (2 * LEASE_HOLDER_MAX + 64)
typedef char cell_t[CELL_MAX];

/* The two passes of a text table: pass 0 widens the columns W to fit the
 * N cells, pass 1 prints them, the last one unpadded. Every cell is shown
 * escaped, whatever part of it came from a row. */
static void table_row(FILE *f, int pass, int n, int w[], cell_t cell[])
{
	char shown[ESCAPE_TEXT_MAX(CELL_MAX)];

	for (int k = 0; k < n; k++) {
		int len = (int)escape_text(shown, sizeof(shown), cell[k]);
		if (pass == 0 && len > w[k])
			w[k] = len;
		else if (pass == 1 && k < n - 1)
			fprintf(f, "%-*s  ", w[k], shown);
		else if (pass == 1)
			fprintf(f, "%s\n", shown);
	}
}

static void table_head(FILE *f, int n, int w[], const char *const head[], bool print)
{
	for (int k = 0; k < n; k++)
		if (!print)
			w[k] = (int)strlen(head[k]);
		else if (k < n - 1)
			fprintf(f, "%-*s  ", w[k], head[k]);
		else
			fprintf(f, "%s\n", head[k]);
}

/* The NOTE cell: what an operator did to the lease, and the last
 * --once-per slot. */
static void status_note(const struct lease_row *x, char *c, size_t len)
{
	char until[48];
	bool paused = x->paused_until[0] != '\0';

	snprintf(c, len, "%s%s%s%s%s%s%s", x->revoked ? "revoked; " : "", paused ? "paused " : "",
		 paused ? pause_end(x->paused_until, until, sizeof(until)) : "", paused ? " by " : "",
		 paused ? x->paused_by : "", x->last_slot[0] ? (paused ? "; slot " : "slot ") : "", x->last_slot);
	if (!c[0])
		snprintf(c, len, "-");
}

/* The cells of row X into C[1] to C[9]; C[0] is the LEASE cell, or the
 * SLOT cell when that column is shown. */
static void status_cells(const struct lease_row *x, cell_t *c)
{
	snprintf(c[1], sizeof(c[1]), "%s", state_of(x));
	snprintf(c[2], sizeof(c[2]), "%s", or_dash(x->holder));
	snprintf(c[3], sizeof(c[3]), "%" PRIu64, x->term);
	if (x->held)
		duration_format(x->expires_in_us, c[4], sizeof(c[4]));
	else
		snprintf(c[4], sizeof(c[4]), "-");
	snprintf(c[5], sizeof(c[5]), "%s", or_dash(x->renewed_at));
	snprintf(c[6], sizeof(c[6]), "%s", or_dash(x->acquired_at));
	if (x->has_exit)
		snprintf(c[7], sizeof(c[7]), "%d", x->last_exit);
	else
		snprintf(c[7], sizeof(c[7]), "-");
	snprintf(c[8], sizeof(c[8]), "%s", or_dash(x->finished_at));
	status_note(x, c[9], sizeof(c[9]));
}

void report_status_table(FILE *f, const struct lease_row *rows, size_t n, const char *server)
{
	enum { NCOL = 11 };
	static const char *const with_slot[NCOL] = {"LEASE",	 "SLOT",       "STATE",	  "HOLDER",
						    "TERM",	 "EXPIRES_IN", "RENEWED", "ACQUIRED",
						    "LAST_EXIT", "FINISHED",   "NOTE"};
	static const char *const without[NCOL - 1] = {"LEASE",	 "STATE",    "HOLDER",	  "TERM",     "EXPIRES_IN",
						      "RENEWED", "ACQUIRED", "LAST_EXIT", "FINISHED", "NOTE"};
	int w[NCOL], ncol = NCOL - 1;
	cell_t *cell = malloc(NCOL * sizeof(*cell));
	const char *const *head = without;
	char shown[ESCAPE_TEXT_MAX(CELL_MAX)];

	if (!cell)
		return;
	/* A SLOT column only where some lease has several (--slots): the
	 * table of one-slot leases reads as it always has. */
	for (size_t i = 0; i < n; i++)
		if (rows[i].slots > 1) {
			head = with_slot;
			ncol = NCOL;
		}
	table_head(f, ncol, w, head, false);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			table_head(f, ncol, w, head, true);
		for (size_t i = 0; i < n; i++) {
			const struct lease_row *x = &rows[i];
			snprintf(cell[0], sizeof(cell[0]), "%s", x->name);
			snprintf(cell[1], sizeof(cell[1]), "%u of %u", x->slot, x->slots);
			status_cells(x, cell + (ncol == NCOL ? 1 : 0));
			table_row(f, pass, ncol, w, cell);
		}
	}
	free(cell);
	if (!n)
		return;
	fprintf(f, "(times are the database's, UTC; now ");
	escape_text(shown, sizeof(shown), rows[0].now);
	fprintf(f, "%s; server ", shown);
	escape_text(shown, sizeof(shown), server);
	fprintf(f, "%s)\n", shown);
}

/* "2024-01-02T03:04:05.123456Z" (the database's UTC) as Unix seconds. */
static double iso_seconds(const char *t)
{
	struct tm tm = {0};
	double frac = 0;
	const char *rest;

	if (!t[0])
		return 0;
	rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return 0;
	if (*rest == '.')
		frac = strtod(rest, NULL);
	return (double)timegm(&tm) + frac;
}

/* One sample of family F for row W (labels LAB), if the row has one. */
static void prom_sample(FILE *f, enum metrics_family_id id, const struct lease_row *w, const char *lab)
{
	const char *name = metrics_families[id].name;
	char hl[METRICS_LABEL_MAX(LEASE_HOLDER_MAX)];

	switch (id) {
	case MF_LEASE_HELD:
		fprintf(f, "%s{%s} %d\n", name, lab, w->held ? 1 : 0);
		break;
	case MF_LEASE_HOLDER_INFO:
		metrics_label(hl, sizeof(hl), w->holder);
		fprintf(f, "%s{%s,holder=\"%s\"} 1\n", name, lab, hl);
		break;
	case MF_LEASE_TERM:
		fprintf(f, "%s{%s} %" PRIu64 "\n", name, lab, w->term);
		break;
	case MF_LEASE_EXPIRY:
		fprintf(f, "%s{%s} %.6f\n", name, lab,
			w->held && w->expires_in_us > 0 ? (double)w->expires_in_us / 1e6 : 0.0);
		break;
	case MF_LEASE_REVOKED:
		fprintf(f, "%s{%s} %d\n", name, lab, w->revoked ? 1 : 0);
		break;
	case MF_LEASE_PAUSED:
		fprintf(f, "%s{%s} %d\n", name, lab, w->paused_until[0] ? 1 : 0);
		break;
	case MF_LEASE_LAST_EXIT:
		if (w->has_exit)
			fprintf(f, "%s{%s} %d\n", name, lab, w->last_exit);
		break;
	case MF_LEASE_LAST_FINISH:
		if (w->finished_at[0])
			fprintf(f, "%s{%s} %.6f\n", name, lab, iso_seconds(w->finished_at));
		break;
	default:
		break;
	}
}

void report_status_prometheus(FILE *f, const struct lease_row *rows, size_t n, const struct report_success *ok,
			      size_t nok, bool have_history)
{
	char l[METRICS_LABEL_MAX(LEASE_NAME_MAX)], lab[METRICS_LABEL_MAX(LEASE_NAME_MAX) + 32];

	for (int id = MF_LEASE_HELD; id <= MF_LEASE_LAST_SUCCESS; id++) {
		const struct metrics_family *fam = &metrics_families[id];
		if (id == MF_LEASE_LAST_SUCCESS && !have_history)
			continue;
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, fam->type);
		for (size_t i = 0; i < n; i++) {
			const struct lease_row *w = &rows[i];
			metrics_label(l, sizeof(l), w->name);
			/* A lease with several slots: a series a slot. */
			if (w->slots > 1)
				snprintf(lab, sizeof(lab), "lease=\"%s\",slot=\"%u\"", l, w->slot);
			else
				snprintf(lab, sizeof(lab), "lease=\"%s\"", l);
			if (id != MF_LEASE_LAST_SUCCESS) {
				prom_sample(f, (enum metrics_family_id)id, w, lab);
				continue;
			}
			/* The lease's, not a slot's: once, by lease. */
			for (size_t k = 0; k < nok && w->slot == 0; k++)
				if (strcmp(ok[k].lease, w->name) == 0)
					fprintf(f, "%s{lease=\"%s\"} %.6f\n", fam->name, l, (double)ok[k].at_us / 1e6);
		}
	}
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", metrics_families[MF_STATUS_HISTORY].name,
		metrics_families[MF_STATUS_HISTORY].help, metrics_families[MF_STATUS_HISTORY].name,
		metrics_families[MF_STATUS_HISTORY].type, metrics_families[MF_STATUS_HISTORY].name,
		have_history ? 1 : 0);
}

void report_standbys_table(FILE *f, const struct standby_row *sb, size_t n)
{
	char a[ESCAPE_TEXT_MAX(LEASE_NAME_MAX)], b[ESCAPE_TEXT_MAX(LEASE_HOLDER_MAX)],
	    c[ESCAPE_TEXT_MAX(STANDBY_HOST_MAX)];

	if (!n)
		return;
	/* Rows anybody may write: their control characters shown escaped. */
	fprintf(f, "\nstandbys (waiting, alive):\n");
	for (size_t k = 0; k < n; k++) {
		escape_text(a, sizeof(a), sb[k].lease);
		escape_text(b, sizeof(b), sb[k].holder);
		escape_text(c, sizeof(c), sb[k].host);
		fprintf(f, "  %s  %s on %s, since %s, %s, priority %d%s\n", a, b, c, sb[k].since,
			sb[k].healthy ? "healthy" : "unhealthy", sb[k].priority,
			sb[k].chosen ? ", chosen (--release --to)" : "");
	}
}

void report_standbys_prometheus(FILE *f, const struct lease_row *rows, size_t n, const struct standby_row *sb,
				size_t nsb)
{
	const struct metrics_family *count = &metrics_families[MF_LEASE_STANDBYS],
				    *info = &metrics_families[MF_LEASE_STANDBY_INFO];
	char l[METRICS_LABEL_MAX(LEASE_NAME_MAX)], h[METRICS_LABEL_MAX(LEASE_HOLDER_MAX)],
	    host[METRICS_LABEL_MAX(STANDBY_HOST_MAX)];

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", count->name, count->help, count->name, count->type);
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		if (rows[i].slot != 0)
			continue;
		for (size_t k = 0; k < nsb; k++)
			m += strcmp(sb[k].lease, rows[i].name) == 0;
		metrics_label(l, sizeof(l), rows[i].name);
		fprintf(f, "%s{lease=\"%s\"} %zu\n", count->name, l, m);
	}
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", info->name, info->help, info->name, info->type);
	for (size_t k = 0; k < nsb; k++) {
		metrics_label(l, sizeof(l), sb[k].lease);
		metrics_label(h, sizeof(h), sb[k].holder);
		metrics_label(host, sizeof(host), sb[k].host);
		fprintf(f, "%s{lease=\"%s\",holder=\"%s\",host=\"%s\",healthy=\"%s\",priority=\"%d\"} 1\n", info->name,
			l, h, host, sb[k].healthy ? "true" : "false", sb[k].priority);
	}
}

void report_runs_json(FILE *f, const struct report_run *runs, size_t n)
{
	fputs("[", f);
	for (size_t i = 0; i < n; i++) {
		const struct report_run *x = &runs[i];
		fprintf(f, "%s\n  {\"slot\": %u, \"term\": %" PRIu64 ", ", i ? "," : "", x->slot, x->term);
		print_str(f, "holder", x->holder);
		print_str(f, "host", x->host);
		print_time(f, "started", x->started);
		print_time(f, "ended", x->ended);
		print_str(f, "outcome", x->outcome);
		if (x->has_exit)
			fprintf(f, "\"exit_status\": %d, ", x->exit_status);
		else
			fputs("\"exit_status\": null, ", f);
		if (x->has_signal)
			fprintf(f, "\"signal\": %d, \"signal_name\": \"SIG%s\", ", x->signo,
				signame_abbrev(x->signo) ? signame_abbrev(x->signo) : "?");
		else
			fputs("\"signal\": null, ", f);
		if (x->has_duration)
			fprintf(f, "\"duration_ms\": %" PRId64 "}", x->duration_us / 1000);
		else
			fputs("\"duration_ms\": null}", f);
	}
	fputs(n ? "\n]\n" : "]\n", f);
}

/* The cells of run X; SLOTS: the lease has several. */
static void run_cells(const struct report_run *x, bool slots, cell_t *c)
{
	if (slots)
		snprintf(c[0], sizeof(c[0]), "%u/%" PRIu64, x->slot, x->term);
	else
		snprintf(c[0], sizeof(c[0]), "%" PRIu64, x->term);
	if (x->has_signal)
		snprintf(c[1], sizeof(c[1]), "%s (SIG%s)", x->outcome,
			 signame_abbrev(x->signo) ? signame_abbrev(x->signo) : "?");
	else if (x->has_exit)
		snprintf(c[1], sizeof(c[1]), "%s (%d)", x->outcome, x->exit_status);
	else
		snprintf(c[1], sizeof(c[1]), "%s", x->outcome);
	snprintf(c[2], sizeof(c[2]), "%s", or_dash(x->host));
	snprintf(c[3], sizeof(c[3]), "%s", or_dash(x->holder));
	snprintf(c[4], sizeof(c[4]), "%s", or_dash(x->started));
	snprintf(c[5], sizeof(c[5]), "%s", or_dash(x->ended));
	if (x->has_duration)
		duration_format(x->duration_us, c[6], sizeof(c[6]));
	else
		snprintf(c[6], sizeof(c[6]), "-");
}

void report_runs_table(FILE *f, const struct report_run *runs, size_t n)
{
	enum { NCOL = 7 };
	static const char *const head[NCOL] = {"TERM", "OUTCOME", "HOST", "HOLDER", "STARTED", "ENDED", "DURATION"};
	cell_t *cell = malloc(NCOL * sizeof(*cell));
	int w[NCOL];
	bool slots = false;

	if (!cell)
		return;
	/* A run of a lease with several slots is a slot's term: "2/41". */
	for (size_t i = 0; i < n; i++)
		slots = slots || runs[i].slot > 0;
	table_head(f, NCOL, w, head, false);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			table_head(f, NCOL, w, head, true);
		for (size_t i = 0; i < n; i++) {
			run_cells(&runs[i], slots, cell);
			table_row(f, pass, NCOL, w, cell);
		}
	}
	free(cell);
	if (n)
		fputs("(times are the database's, UTC)\n", f);
}
