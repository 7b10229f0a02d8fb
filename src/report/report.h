/* What --status and --history print: a text table, JSON or (--status) the
 * fleet's Prometheus metrics, from rows already read. Every string of a
 * row is anybody's (any contender can UPDATE the tables): text
 * shows its control characters escaped (escape_text), JSON quotes them
 * (json_write), labels escape them (metrics_label). No database here, so
 * the fuzzer drives these printers directly. */
#ifndef LEADERRUN_REPORT_H
#define LEADERRUN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lease/lease.h"
#include "lease/standby.h"

void report_status_table(FILE *f, const struct lease_row *rows, size_t n, const char *server);
void report_status_json(FILE *f, const struct lease_row *rows, size_t n, const char *server);
/* The same, each lease with its standbys SB[0..NSB) ("standbys": [...]). */
void report_status_json_with(FILE *f, const struct lease_row *rows, size_t n, const char *server,
			     const struct standby_row *sb, size_t nsb);
/* The standbys after the text table (nothing when none), and as Prometheus
 * families: leaderrun_lease_standbys a lease, leaderrun_lease_standby_info
 * a standby. */
void report_standbys_table(FILE *f, const struct standby_row *sb, size_t n);
void report_standbys_prometheus(FILE *f, const struct lease_row *rows, size_t n, const struct standby_row *sb,
				size_t nsb);

/* The last successful run of a lease, from the history. */
struct report_success {
	char lease[LEASE_NAME_MAX + 1];
	int64_t at_us;
};

/* HAVE_HISTORY false: the history could not be read (no success times). */
void report_status_prometheus(FILE *f, const struct lease_row *rows, size_t n, const struct report_success *ok,
			      size_t nok, bool have_history);

/* One run of --history. */
struct report_run {
	unsigned slot;
	uint64_t term;
	char holder[LEASE_HOLDER_MAX + 1], host[256], started[32], ended[32], outcome[64];
	bool has_exit, has_signal, has_duration;
	int exit_status, signo;
	int64_t duration_us;
};

void report_runs_table(FILE *f, const struct report_run *runs, size_t n);
void report_runs_json(FILE *f, const struct report_run *runs, size_t n);

#endif
