/* The lease protocol: single-row compare-and-set statements whose every
 * time comparison is made by the server (UTC_TIMESTAMP(6)), so no client's
 * clock decides an expiry (THE PROTOCOL in leaderrun-safety(7)). Each call
 * returns an outcome that keeps "someone else holds it" apart from "the
 * database failed". */
#ifndef LEADERRUN_LEASE_H
#define LEADERRUN_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "stmt.h"

#define LEASE_NAME_MAX	    191 /* bytes; the column is VARCHAR(191) */
#define LEASE_HOLDER_MAX    255 /* bytes; the column is VARCHAR(255) */
#define LEASE_ACCOUNT_MAX   128 /* the fence's fencer: VARCHAR(128), as MariaDB's user names */
#define LEASE_TABLE_MAX	    129 /* db.table, 64 + 1 + 64 */
#define LEASE_DEFAULT_TABLE "leaderrun_lease"
#define LEASE_SLOTS_MAX	    100	 /* --slots: a waiter's look reads a row a slot */
#define LEASE_CHOOSE_MAX    2600 /* the claims' SQL in a statement (choose.h) */

enum lease_outcome {
	LEASE_OK,	    /* acquired, renewed or released */
	LEASE_BUSY,	    /* acquire: not acquired, see lease_info (why) */
	LEASE_LOST,	    /* renew/release: the row is no longer ours */
	LEASE_REVOKED,	    /* renew: --release revoked our term; stop, reap, release */
	LEASE_SLOTS_DIFFER, /* acquire: the lease's holders run with another --slots (info->slots) */
	LEASE_ERROR,	    /* see the db_status */
};

/* Why an acquire did not take the lease. */
enum lease_busy {
	BUSY_HELD,	/* somebody holds it (or held it a moment ago) */
	BUSY_PAUSED,	/* --pause: nobody may acquire it until paused_until */
	BUSY_SLOT_USED, /* --once-per: a run already took this slot */
	BUSY_PREFERRED, /* free, but another candidate's to take for preferred_us (choose.h) */
	BUSY_EARLY,	/* --schedule: the server's clock has not reached the slot yet (now_us) */
	BUSY_SKIPPED,	/* --schedule: a run of an earlier slot still holds the lease */
};

/* The row as an acquire found it, or took it. Times are the server's.
 * With several slots: the slot taken; when none was free, the held slot
 * that expires first (the one a waiter waits for). */
struct lease_info {
	unsigned slot;
	unsigned slots; /* the slot count in force: its rows' */
	unsigned held;	/* how many of its slots are held */
	uint64_t term;
	char holder[LEASE_HOLDER_MAX + 1];
	int64_t expires_in_us; /* by the server's clock; <= 0: expired */
	char expires_at[32];   /* ISO 8601 UTC */
	enum lease_busy why;
	int64_t paused_in_us; /* > 0: paused for that long still */
	char paused_until[32], paused_by[LEASE_HOLDER_MAX + 1];
	int64_t slot_us;      /* --once-per: the contender's slot, us since the epoch */
	int64_t last_slot_us; /* the last slot a run took; -1: none */
	uint64_t slot_term;   /* the term that took it */
	int64_t now_us;	      /* --schedule: the server's clock at the look */
	bool rerun;	      /* --schedule: the last try was the slot's next attempt (acquire_rerun) */
	bool slot_lost;	      /* --schedule: last_slot's last attempt was lost: no exit, not revoked */
	int64_t preferred_us; /* > 0: free, but another candidate's for that long still (choose.h) */
	int holder_priority;  /* the holder's --priority, as its standby row says (0: none) */
	/* The lock of the waiting candidate just above this one in priority
	 * (choose.h): "" when none (this one is the top, and blocks on the
	 * hint). */
	char above[48];
	bool other_chosen; /* another standby is chosen by --release --to */
	/* A row of another count than slot 0's was ignored: its slot and
	 * count (leaderrun writes none such; anyone with INSERT may). */
	bool stray;
	unsigned stray_slot, stray_slots;
};

/* The statements for one table, rendered once from a validated name: the
 * LEASE_STMT lines of stmts.def, a member each. Acquire and renew also
 * require @@global.read_only = 0: a replica (or a demoted primary) must
 * never grant or extend a lease, even to a user whose privileges let it
 * write there (read_only does not bind SUPER, and MySQL's super_read_only
 * sets read_only too). */
/* The fence's procedures (the first is also its table's name). */
enum fence_routine { FENCE_R_FENCE, FENCE_R_SLOT, FENCE_R_END, FENCE_R_MOVE, FENCE_ROUTINES };

struct lease_sql {
#define LEASE_STMT(id, member, since, params, columns, ...) char member[STMT_CAP(__VA_ARGS__) + LEASE_CHOOSE_MAX];
#define HISTORY_STMT(...)
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
	/* The candidates' claims that the acquire and the read carry
	 * (choose.h); rendered in while CHOOSE_ON. */
	char choose[LEASE_CHOOSE_MAX], choose_read[LEASE_CHOOSE_MAX];
	bool choose_on;
	bool choose_lost;     /* they named what the standbys' table lacks: off (lease_call) */
	char choose_err[256]; /* the server's words then */
	char table[LEASE_TABLE_MAX + 1];
	char fence[LEASE_TABLE_MAX + 16];   /* the fence's table, as the options name tables */
	char standby[LEASE_TABLE_MAX + 16]; /* the standbys' table (standby.h), likewise */
	/* The fence's table (also the procedure leaderrun_fence) and its
	 * procedures, quoted, by enum fence_routine. */
	char fence_routine[FENCE_ROUTINES][LEASE_TABLE_MAX + 24];
	int schema;	    /* the lease table's that the statements are for (lease_sql_render_schema) */
	int older;	    /* lease.c adapted the statements to this older schema; 0: current */
	bool older_said;    /* lease_sql_older gave its warning */
	char hint_name[32]; /* the wake-up hint's name for table and lease, before the database's part */
	char hint_db[72];   /* SQL for the database of the table: 'DB' or DATABASE() */
};

/* The schema this build writes; --init upgrades older tables to it.
 * Schema 4 is schema 3's lease table plus the run history, a table of its
 * own (history_sql.h). Schema 5 gives the lease table a row a slot
 * (--slots): the key is (name, slot), and slot 0 is the row of old.
 * Schema 6 adds the fence, a table and procedures of their own
 * (lease_fence_move); schema 7 names on the fence the account that may
 * fence, and moves it by a procedure of its own. */
#define LEASE_SCHEMA	  7
#define LEASE_ROWS_SCHEMA 5 /* the lease table's own columns */

/* One row of --status; times are the server's, in UTC (ISO 8601). */
struct lease_row {
	char name[LEASE_NAME_MAX + 1];
	char holder[LEASE_HOLDER_MAX + 1];
	uint64_t term;
	bool held;
	int64_t expires_in_us;
	char expires_at[32], renewed_at[32], acquired_at[32], finished_at[32], now[32];
	bool has_exit;
	int last_exit;
	bool revoked;	       /* held, but --release revoked it: it stops at its next renew */
	char paused_until[32]; /* "" when not paused */
	char paused_by[LEASE_HOLDER_MAX + 1];
	char last_slot[32]; /* --once-per: the last slot a run took; "" none */
	unsigned slot, slots;
};

/* Checks NAME against [A-Za-z0-9_$]{1,64}, optionally "db." in front.
 * Returns 0, or -1 with a message. */
int lease_table_validate(const char *name, char *err, size_t errlen);

/* Checks a lease or holder name for the column: not empty, at most MAX
 * bytes, valid UTF-8 without control characters. */
int lease_name_validate(const char *what, const char *name, size_t max, char *err, size_t errlen);

/* Renders the statements for a table of LEASE_ROWS_SCHEMA. The calls
 * below find out when the table is older (a statement names a column it
 * lacks), render them again for its schema (lease_sql_render_schema) and
 * warn once; a feature the table cannot hold is refused then, with
 * DB_NO_TABLE and a line naming it and 'leaderrun --init'. */
void lease_sql_render(struct lease_sql *sql, const char *table);

/* The name of a table next to TABLE (in its database), for the run
 * history (SUFFIX "_history") and the fence ("_fence"): PREFIX_lease ->
 * PREFIX_SUFFIX, any other NAME -> NAME_SUFFIX ("_lease" alone is a NAME).
 * Returns -1 when the name would be longer than MySQL's 64. */
int lease_sql_sibling(const char *table, const char *suffix, char *out, size_t len);

/* TABLE (a validated name, DB.TABLE or TABLE) quoted for SQL into OUT. */
void lease_sql_quote_table(char *out, size_t len, const char *table);

/* True once, after a lease call found the table older than this build
 * and adapted its statements: MSG says so and what --init would add. The
 * caller logs it (the protocol's files say nothing themselves). */
bool lease_sql_older(struct lease_sql *sql, char *msg, size_t msglen);
void lease_sql_render_schema(struct lease_sql *sql, const char *table, int schema);

/* Every call below reports the local send time of its compare-and-set in
 * *SENT_AT (CLOCK_BOOTTIME microseconds, taken before the statement is sent;
 * the deadline counts from there). */

/* What an acquisition carries into its own transaction and round trip
 * where the server runs compound statements (db_blocks, a table of this
 * build's schema): the fence's move and the wake-up hint, so that an
 * uncontended run commits twice. RAN says it went that way;
 * then FENCE_ERRNO is 0 when the fence moved, else the move's error
 * (FENCE_ERR), with the acquisition committed all the same, as it is when
 * the move is a statement of its own: lease_fence_move carries on from
 * it (lease_fence_req's tried). HINT_GOT: the hint and the term's mark are
 * this session's; HINT_FAILED: the server refused them. */
struct lease_with {
	const char *fencer; /* --fence-user; NULL: leaderrun's own account */
	bool hint;	    /* take the hint too */
	bool ran, hint_got, hint_failed;
	bool alone; /* the block could not do it: a statement at a time (lease.c) */
	unsigned fence_errno;
	char fence_err[256];
};

/* What a release carries into its transaction: ALSO, statements as text
 * (the run's history row) whose failure is theirs, not the release's
 * (ALSO_ERRNO, ALSO_ERR); DROP_HINTS lets go of the session's named locks
 * in it, just before the commit. RAN: it went that way. */
struct lease_release_with {
	const char *also;
	/* ALSO with its values that are known only at the end as '?'s, and
	 * those values (history_close_kept), for a release prepared while the
	 * command ran (lease_prepare_release); NULL: none. */
	const char *also_kept;
	struct db_value also_vals[3];
	bool drop_hints;
	bool ran;
	unsigned also_errno;
	char also_err[256];
};

/* One call on a lease: who asks, and for what. Each call reads the fields
 * its comment below names; the others stay zero. */
struct lease_req {
	const char *name;
	const char *holder;			 /* acquire, renew, release, check; pause: who pauses */
	unsigned slot;				 /* renew, release, revoke, check: the slot */
	unsigned slots;				 /* acquire: --slots */
	uint64_t term;				 /* renew, release, check */
	int64_t ttl_us;				 /* acquire, renew */
	int64_t period_us;			 /* acquire: --once-per; 0: off */
	int64_t *slot_us;			 /* acquire with --once-per: the slot contended for, 0 until known */
	int64_t sched_us;			 /* acquire: --schedule's slot, us since the epoch; 0: none */
	int64_t rerun_until_us;			 /* acquire: --catch-up's end of that slot; 0: no rerun */
	int64_t min_hold_us;			 /* release */
	int exit_status;			 /* release: the command's, or -1 */
	int64_t for_us;				 /* pause: how long; < 0: until --resume */
	bool look_first;			 /* acquire: read the row first, write only when free */
	bool force;				 /* revoke: expire now (--release --force) */
	struct lease_with *with;		 /* acquire: what goes with it; NULL: nothing */
	struct lease_release_with *release_with; /* release: likewise */
	void (*on_row)(void *ctx, const struct lease_row *row); /* status */
	void *ctx;
};

/* What a call found. */
/* Who revoked a term: an operator's plain --release, a --preempt, or a
 * --release --to (choose_why_revoked). */
enum lease_handover { HANDOVER_RELEASED, HANDOVER_PREEMPTED, HANDOVER_SWITCHED_OVER };

/* Why a term was revoked, and for whom (a preemptor, a chosen standby). */
struct lease_revoker {
	enum lease_handover why;
	char by[LEASE_HOLDER_MAX + 1];
};

struct lease_res {
	enum lease_outcome outcome; /* acquire, renew, release */
	enum db_status status;	    /* every call */
	int64_t sent_at;	    /* acquire, renew: CLOCK_BOOTTIME us before the write was sent */
	struct lease_info info;	    /* acquire: the row; revoke, resume: as it was; pause: as it is now */
	bool found;		    /* revoke, pause, resume: the lease has rows */
	bool held;		    /* revoke: it was held; check: it still is */
};

/* Every call below takes the request Q and fills R (and ERR when it
 * fails); each goes once more with the statements of an older table when
 * the table turns out to be older than this build. */

/* Takes a slot of the lease (of Q->slots) for Q->holder for Q->ttl_us if
 * one is free and the lease not paused, creating the rows on first use.
 * LEASE_OK: R->info.slot is the slot, R->info.term its new fencing term.
 * LEASE_BUSY: R->info describes the row and says why. LEASE_SLOTS_DIFFER:
 * the lease's slots are held under another count, R->info.slots; while
 * none is held, the first contender with another count changes it.
 * With Q->period_us > 0 (--once-per) the acquisition also takes the slot
 * *Q->slot_us, the multiple of the period nearest to the server's time; 0
 * there means "not known yet": it is read from the server first and kept
 * there for the next attempts, so a waiter stays in the slot it started in.
 * Q->look_first reads the row first and writes only when it is free: one
 * statement a look while somebody holds the lease (a waiter's poll).
 * Without it the compare-and-set goes first (a first attempt, or a
 * follower woken by the hint, which expects to win). */
enum lease_outcome lease_acquire(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
				 struct db_err *err);

/* A waiter's, before it blocks: prepares on the server the acquisition
 * that lease_acquire would make for Q once woken (one slot, Q->with, as a
 * block), so that it goes parsed then. Nothing where it would not go as a
 * block. Its failure costs nothing but the shortcut. */
enum db_status lease_prepare_acquire(struct db *db, struct lease_sql *sql, const struct lease_req *q,
				     struct db_err *err);

/* A holder's, while its command runs: prepares on the server the release
 * that lease_release would send for Q as a block (its exit status, and
 * Q->release_with's also_kept values, as '?'s), so that it goes parsed
 * when the command ends. Nothing where it would not go as a block. */
enum db_status lease_prepare_release(struct db *db, struct lease_sql *sql, const struct lease_req *q,
				     struct db_err *err);

/* Renew, release and --check act on one slot of the lease (0 when it has
 * one). */
enum lease_outcome lease_renew(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			       struct db_err *err);

/* Gives the lease back, only if Q->holder still holds Q->term (a late
 * retry can never free a newer holder's lease): it expires now, or
 * Q->min_hold_us after its acquisition, whichever is later, and the row
 * records Q->exit_status (-1: none) and the finish time. */
enum lease_outcome lease_release(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
				 struct db_err *err);

/* --status: calls Q->on_row for every lease (Q->name NULL) or the one
 * named. */
enum db_status lease_status(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err);

/* --release: revokes the term that holds slot Q->slot (Q->force false), or
 * expires it now (Q->force true). A revoked holder stops its command at its
 * next renew and releases after the reap; until then, or until the expiry
 * it last wrote, nobody else can acquire. R->info is the row as it was;
 * R->found and R->held say whether there was a row, and whether it was
 * held. */
enum db_status lease_revoke(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err);

/* --pause (Q->for_us < 0: until --resume) and --resume. --pause creates
 * the row when there is none. R->info is the row afterwards (--resume: as
 * it was); --resume sets R->found false when there is no such lease. */
enum db_status lease_pause(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			   struct db_err *err);
enum db_status lease_resume(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			    struct db_err *err);

/* --check: does Q->holder hold slot Q->slot with Q->term, unexpired? */
enum db_status lease_check(struct db *db, struct lease_sql *sql, const struct lease_req *q, struct lease_res *r,
			   struct db_err *err);

/* A missing table is created (the DDL of sql/leaderrun.sql); an older
 * table gains the columns it lacks in place (sql/upgrade-*.sql), keeping
 * every row and term; a current one is left alone, so that a user without
 * CREATE and ALTER may call this. *FROM receives the schema the table had,
 * 1 to LEASE_ROWS_SCHEMA, or 0 when there was none: on an error, 0 means
 * the CREATE failed, less than LEASE_ROWS_SCHEMA an ALTER (the history's
 * table is --init's: admin/init.c). */
enum db_status lease_create_table(struct db *db, const struct lease_sql *sql, const char *table, int *from,
				  struct db_err *err);

/* The schema of SQL's table, 1 to LEASE_ROWS_SCHEMA, into *SCHEMA; 0 when
 * there is no such table (or the user may not see it). --check-server. */
enum db_status lease_table_schema(struct db *db, const struct lease_sql *sql, int *schema, struct db_err *err);

/* The wake-up hint's name for TABLE and LEASE, before the database's part
 * (hint.h). */
void lease_hint_name(struct lease_sql *sql, const char *table, const char *lease);

/* The fence (schema 7): a job's transaction proves its term with CALL
 * leaderrun_fence; an acquisition moves the fence to its new TERM of SLOT
 * before the command starts, for the account FENCER (NULL: leaderrun's
 * own) alone to fence with. The move waits for the transactions fenced
 * with an older term; one still open after a lock wait has its session
 * ended (*ENDED: its connection id; 0: none) and the move is tried again,
 * until GIVE_UP (CLOCK_BOOTTIME us). ERR says why it did not move. */
enum lease_fence {
	FENCE_MOVED,	   /* the command may start */
	FENCE_UNAVAILABLE, /* no fence here (schema 5, no grant): run without, and say so */
	FENCE_OFF_OLDER,   /* the same on an older lease table, whose warning says it */
	FENCE_BLOCKED,	   /* a stale transaction still holds it at GIVE_UP */
	FENCE_NEWER,	   /* a newer term has moved it: this one is stale */
	FENCE_FAILED,	   /* the database failed (*ST) */
};
struct lease_fence_req {
	const char *name, *fencer;
	unsigned slot;
	uint64_t term;
	int64_t give_up;
	/* The first attempt's error, when it went with the acquisition
	 * (lease_with): the move carries on from it. 0: none made. */
	unsigned tried_errno;
	const char *tried_err;
};
enum lease_fence lease_fence_move(struct db *db, const struct lease_sql *sql, const struct lease_fence_req *q,
				  uint64_t *ended, struct db_err *err);

/* What of the fence this account can see: its table, the table's
 * schema-7 column, and how many of the four procedures (an account sees
 * those it may execute). SCHEMA: 0 no table, 6 or 7; COMPLETE: every
 * procedure of that schema seen. */
struct lease_fence_seen {
	bool table, fencer, complete;
	int routines, schema;
};
enum db_status lease_fence_seen(struct db *db, const struct lease_sql *sql, struct lease_fence_seen *seen,
				struct db_err *err);

/* --init (fence_init.c): creates the fence's table and procedures when
 * none stands, upgrades a fence of schema 6 in place (the procedures
 * replaced, their EXECUTE grants kept, every write grant on the table
 * taken away), and checks that what stands is what it makes: a foreign
 * procedure, table or trigger is refused (DB_NO_TABLE, ERR naming what to
 * drop). *DONE says what it did ("" nothing); WARN, a warning to give
 * ("" none). */
struct lease_fence_init {
	int from; /* the fence's schema before: 0 (none seen), 6 or 7 */
	char done[192];
	char warn[1024];
};
enum db_status lease_fence_init(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out,
				struct db_err *err);

/* Interpretation of a compare-and-set's matched-row count, kept pure for
 * the unit tests: exactly 1 is success; 0 is busy (acquire) or lost. */
enum lease_outcome lease_outcome_of(enum db_status st, uint64_t matched, int is_acquire);

/* The --once-per slot of a server time: the multiple of PERIOD_US nearest
 * to NOW_US (both us since the Unix epoch, UTC; a tie goes to the later
 * slot). Pure, for the unit tests; the server computes the same. */
int64_t lease_slot_of(int64_t now_us, int64_t period_us);

#endif
