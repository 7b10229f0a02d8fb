/* What a server's settings mean for the promise of SAFETY and REPLICATION
 * (leaderrun-safety(7)): each assumption held, not held or unknown, in
 * words that say what to change. Pure: the facts are read elsewhere
 * (--check-server: admin/servercheck.c; a run: db_probe.c's probe),
 * judged here, so that both say the same. tests/unit/test_promise.c. */
#ifndef LEADERRUN_PROMISE_H
#define LEADERRUN_PROMISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum promise_state { PROMISE_HELD, PROMISE_NOT_HELD, PROMISE_UNKNOWN };

struct promise_line {
	const char *check; /* "durable commits", "binary log", ... */
	enum promise_state state;
	char detail[600];
	char fix[320]; /* "" when held */
};

/* What a server said. Numbers: -1 when unknown (not read, or no such
 * variable: MariaDB has no super_read_only); strings: "" when unknown. */
struct promise_facts {
	int64_t flush_at_commit, log_bin, sync_binlog; /* innodb_flush_log_at_trx_commit, ... */
	int64_t read_only, super_read_only;
	int64_t wsrep_on, wsrep_sync_wait;
	char wsrep_state[32]; /* wsrep_local_state_comment */
	bool gr;	      /* the group_replication plugin's variables exist */
	int64_t gr_single_primary;
	char gr_consistency[40];
	char gr_member_state[16], gr_member_role[16]; /* this member's, "" if not a member or unreadable */
	int64_t semisync_source;		      /* rpl_semi_sync_master/source_enabled */
	int64_t replicas;			      /* attached replicas (SHOW REPLICAS); -1 unknown */
	char replicas_err[160];			      /* why not */
	char version[96], version_comment[128];	      /* the greeting's, select @@version_comment */
	const char *table;			      /* the lease table */
	int schema, schema_newest;		      /* its schema: 0 missing, -1 unknown */
	char schema_err[160];
	char fence_definer[96];			       /* its procedures' definer, "" unknown */
	int64_t fence_process, fence_kill;	       /* it has PROCESS, CONNECTION ADMIN: 1, 0, -1 unknown */
	bool clock_known;
	int64_t clock_offset_us, clock_uncertainty_us; /* server minus host, +- half the round trip */
};

/* Every fact unknown. */
void promise_facts_init(struct promise_facts *f);

#define PROMISE_LINES_MAX 8

/* Judges F: one line per assumption, in a fixed order, into LINES
 * (PROMISE_LINES_MAX of them); returns how many. */
size_t promise_judge(const struct promise_facts *f, struct promise_line *lines);

/* A run's check at its first connect (db_server's flush_at_commit,
 * log_bin, sync_binlog): the durable-commit lines not held, into LINES (2
 * of them); returns how many. */
size_t promise_durability(int64_t flush_at_commit, int64_t log_bin, int64_t sync_binlog, struct promise_line lines[2]);

/* "held", "not held", "unknown". */
const char *promise_state_name(enum promise_state s);

/* "HOST: CHECK: STATE: DETAIL; FIX" (no "; FIX" when held). */
void promise_format(const char *host, const struct promise_line *l, char *buf, size_t len);

#endif
