/* The run history's statements (schema 4): one row per acquisition in a
 * table of its own, next to the lease table, keyed by (lease, slot, term)
 * (schema 5). Pure:
 * history.c runs them, admin.c reads them. */
#ifndef LEADERRUN_HISTORY_SQL_H
#define LEADERRUN_HISTORY_SQL_H

#include <stddef.h>

#include "lease.h"

/* How a run ended, as the outcome column has it. "running" and "vanished"
 * are never written: --history derives them from the lease row (an open
 * run whose term no longer holds the lease was left by a holder that
 * vanished: killed with SIGKILL, its host gone). */
#define HISTORY_EXITED	      "exited"	      /* exit_status */
#define HISTORY_SIGNALED      "signaled"      /* exit_signal */
#define HISTORY_LOST	      "lost"	      /* the lease was lost: the command was killed */
#define HISTORY_REVOKED	      "revoked"	      /* --release: the command was stopped */
#define HISTORY_PREEMPTED     "preempted"     /* --preempt: a candidate of a higher priority took over */
#define HISTORY_SWITCHED_OVER "switched_over" /* --release --to: handed to a named standby */
#define HISTORY_TIMED_OUT     "timed_out"     /* --max-runtime ran out: the command was stopped */
#define HISTORY_STEPPED_DOWN  "stepped_down"  /* --service: the term ended in a clean demote */

/* The HISTORY_STMT lines of stmts.def, a member each. */
struct history_sql {
#define LEASE_STMT(...)
#define HISTORY_STMT(id, member, params, columns, ...) STMT_MEMBER(member, __VA_ARGS__)
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
};

/* HISTORY and LEASE_TABLE were validated as table names. */
void history_sql_render(struct history_sql *s, const char *history, const char *lease_table);

#endif
