/* --metrics-file: this process's view of its lease in the Prometheus
 * textfile-collector format (node_exporter --collector.textfile).
 *
 * The supervisor reports events with one-line calls that only update
 * counters under a mutex; a thread of its own renders and writes the file
 * (a temporary file in the same directory, then rename), so that a slow,
 * full or read-only filesystem can never delay a renew or a kill. A file
 * that cannot be written is logged once, then its recovery; the count is
 * in the file as leaderrun_metrics_write_failures_total. */
#ifndef LEADERRUN_METRICS_H
#define LEADERRUN_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/timing.h"

/* Every metric family leaderrun writes, to --metrics-file and to --status
 * --format prometheus: one name, one HELP and one TYPE each, from this one
 * table. node_exporter's textfile collector drops the samples of a family
 * whose HELP or TYPE differs between the files of its directory, and a
 * series two files both carry: the per-process families and the
 * lease's (from the table) have names of their own. */
enum metrics_family_id {
	/* --metrics-file: this process's view; label lease */
	MF_PROCESS_HOLDS,
	MF_PROCESS_WAITING,
	MF_PROCESS_TERM,
	MF_PROCESS_SLOT,
	MF_PROCESS_ROLE,
	MF_ACQUISITIONS,
	MF_LOSSES,
	MF_REVOCATIONS,
	MF_HANDOVERS,
	MF_PREEMPTIONS,
	MF_RELEASES,
	MF_RENEW_FAILURES,
	MF_TIMEOUTS,
	MF_RENEW_DURATION,
	MF_DEADLINE_MARGIN,
	MF_LAST_RENEW,
	MF_WAIT,
	MF_COMMAND_START,
	MF_COMMAND_LAST_EXIT,
	MF_WRITE_FAILURES,
	MF_HISTORY_FAILURES,
	/* --status --format prometheus: the lease, from the table; labels
	 * lease (and slot with several) */
	MF_LEASE_HELD,
	MF_LEASE_HOLDER_INFO,
	MF_LEASE_TERM,
	MF_LEASE_EXPIRY,
	MF_LEASE_REVOKED,
	MF_LEASE_PAUSED,
	MF_LEASE_LAST_EXIT,
	MF_LEASE_LAST_FINISH,
	MF_LEASE_LAST_SUCCESS,
	MF_STATUS_HISTORY,
	MF_LEASE_STANDBYS,
	MF_LEASE_STANDBY_INFO,
	MF_COUNT
};

struct metrics_family {
	const char *name, *type, *help;
};

extern const struct metrics_family metrics_families[MF_COUNT];

/* The most bytes metrics_label writes for a value of N bytes, NUL
 * included: a byte may become \\xNN, five bytes. */
#define METRICS_LABEL_MAX(n) (5 * (size_t)(n) + 1)

/* V as a label value (without the quotes) into BUF: backslash and double
 * quote escaped as the exposition format wants, control characters and
 * malformed UTF-8 as escape_text shows them (their backslash escaped in
 * turn), so a value is valid UTF-8 without any control character. Returns
 * the length the whole needs; a short BUF ends at a whole escape. */
size_t metrics_label(char *buf, size_t len, const char *v);

/* Renew latency buckets: fractions of the renew interval, so that "near
 * the interval" (close to the stop signal) is always its own bucket. */
#define METRICS_NBUCKETS 10

/* The lease revoked while held: by an operator's --release, a
 * preemption, a switch-over (leaderrun_lease_handovers_total's reason). */
enum metrics_handover { METRICS_REVOKED, METRICS_PREEMPTED, METRICS_SWITCHED_OVER, METRICS_HANDOVERS };

struct metrics_state {
	const char *lease;
	bool held, waiting;
	const char *role; /* role_name's: this instance's role (NULL: none yet) */
	uint64_t term;
	unsigned slot; /* --slots: the slot of that term */
	uint64_t acquisitions, losses, releases, revocations;
	uint64_t handovers[METRICS_HANDOVERS]; /* revocations, by why */
	uint64_t preemptions;		       /* holders this candidate preempted */
	uint64_t timeouts;		       /* --max-runtime stops */
	uint64_t renews, renew_failures;
	double bucket_le[METRICS_NBUCKETS]; /* seconds */
	uint64_t bucket_count[METRICS_NBUCKETS];
	double renew_sum_s;
	double margin_s;	/* to the local deadline, at the last good renew; < 0: none yet */
	double last_renew_time; /* Unix seconds; 0: none */
	double wait_s;		/* total, including the wait in progress */
	bool have_exit;
	int last_exit;	      /* 128+N for signal N, like the exit status */
	double command_start; /* Unix seconds; 0: none yet */
	uint64_t write_failures, history_failures;
};

/* Renders ST into BUF (NUL-terminated). Returns the length, or -1 if BUF
 * is too small. Pure, for the unit tests. */
int metrics_render(const struct metrics_state *st, char *buf, size_t len);

/* PATTERN with %l replaced by LEASE (characters other than letters,
 * digits, '.', '_' and '-' become '_') and %% by %. Returns -1 if OUT is
 * too small or a '%' is followed by anything else. */
int metrics_path(const char *pattern, const char *lease, char *out, size_t len);

struct metrics;

/* NULL when PATTERN is NULL (no --metrics-file), or on failure (logged). */
struct metrics *metrics_start(const char *pattern, const char *lease, const struct timing *t);

/* The supervisor's hooks; each takes a moment and no I/O. M may be NULL. */
void metrics_waiting(struct metrics *m, bool waiting);
/* This instance's role, one of role_name's strings. */
void metrics_role(struct metrics *m, const char *role);
void metrics_acquired(struct metrics *m, unsigned slot, uint64_t term);
void metrics_renewed(struct metrics *m, int64_t latency_us, int64_t margin_us);
void metrics_renew_failed(struct metrics *m);
void metrics_lost(struct metrics *m);
void metrics_revoked(struct metrics *m, enum metrics_handover why);
/* This candidate preempted a holder (--preempt). */
void metrics_preempting(struct metrics *m);
void metrics_timed_out(struct metrics *m);
void metrics_released(struct metrics *m);
void metrics_not_held(struct metrics *m);
void metrics_command_started(struct metrics *m);
void metrics_command_exited(struct metrics *m, int status);
void metrics_history_failed(struct metrics *m);

/* Writes the final state (not held) and stops the thread, waiting for it
 * until UNTIL (CLOCK_BOOTTIME us) at most. */
void metrics_stop(struct metrics *m, int64_t until);

#endif
