/* The scheduled soak (schedule.c, its checks in schedule_check.c): what the
 * two share. */
#ifndef LEADERRUN_SOAK_SCHEDULE_H
#define LEADERRUN_SOAK_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SK_INSTANCES 3
#define SK_LEASE     "sched"
#define SK_PERIOD_US 3000000LL	/* @every 3s */
#define SK_WINDOW_US 30000000LL /* --catch-up 30s */
#define SK_MAX	     4096

enum sk_fault { SK_KILL9, SK_FREEZE, SK_CUT, SK_TERM, SK_ALLDOWN, SK_FAULTS };
extern const char *const sk_fault_names[SK_FAULTS];

/* A time when no instance ran, wall clock µs: from the SIGTERM to all (or
 * the soak's start: INT64_MIN) to the first start again (or INT64_MAX). */
struct sk_down {
	int64_t from_us, to_us;
};

/* One line of the job's log (sched-job.sh). */
struct sk_line {
	char what[12];	 /* start, end, violation */
	int64_t slot_us; /* LEADERRUN_SCHEDULED */
	unsigned attempt;
	unsigned long long term;
	int64_t ns;
	int pid;
};

struct sk_stats {
	int episodes, failures, per_fault[SK_FAULTS];
	int no_run;		  /* instance faults whose run had ended before the fault (no rerun due) */
	int64_t rerun_ms[SK_MAX]; /* fault -> the rerun's start */
	int nrerun;
	/* cut: the terms cut off and when (wall clock ns), from the cut to the
	 * connection back. */
	struct {
		unsigned long long term;
		int64_t from_ns, to_ns;
	} cut[SK_MAX];
	int ncut;
	/* From the checks: */
	int slots, ran_once, skipped, caught_up, missed, violations, doubled, missing, extra, bad_reruns, skipped_ran;
	int reruns;
	int cut_doubled; /* ran twice: the first run ended while its holder was cut off, unrecorded */
};

struct sk {
	const char *bin, *sandbox, *job;
	char dir[256], dbdir[300], log[320];
	char socket[300], port[16], user[64], password[128], dbname[64];
	int ttl_ms, only;
	uint64_t rng;
	struct {
		pid_t pid;
		struct proxy *proxy;
		int gen;
		char holder[32];
	} c[SK_INSTANCES];
	/* The last fault's rerun: the next episode may aim at it (a rerun's
	 * holder faulted too; every instance may have lost the slot once). */
	struct sk_line rerun;
	bool has_rerun;
	struct sk_down down[SK_MAX];
	int ndown;
	struct sk_stats st;
};

void sk_fail(struct sk *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t sk_wall_us(void);
/* The job's log, every line (at most MAX) into L; returns how many. */
int sk_read_log(const struct sk *s, struct sk_line *l, int max);
/* "YYYY-MM-DDTHH:MM:SSZ" -> µs since the epoch, or -1. */
int64_t sk_parse_time(const char *t);
/* The checks over the whole soak, then the table. */
void sk_check(struct sk *s);
void sk_table(const struct sk *s);

#endif
