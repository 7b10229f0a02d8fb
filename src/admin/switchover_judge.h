/* What --release --to (switchover.c) makes of each look at the lease row,
 * and of the run history when the row alone cannot tell: whether the
 * chosen standby took a term above the revoked one. Pure,
 * tests/unit/test_switchover.c. */
#ifndef LEADERRUN_SWITCHOVER_JUDGE_H
#define LEADERRUN_SWITCHOVER_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

/* The lease's slot 0 at a look. */
struct switchover_row {
	bool held;
	uint64_t term;
	const char *holder;
};

/* The standby's first term above the revoked one, by the run history. */
enum switchover_history {
	SWITCHOVER_HISTORY_UNREAD,
	SWITCHOVER_HISTORY_ABSENT, /* an old schema, no grant, an error: it cannot tell */
	SWITCHOVER_HISTORY_NONE,
	SWITCHOVER_HISTORY_FOUND,
};

enum switchover_next {
	SWITCHOVER_WAIT,	 /* look again */
	SWITCHOVER_READ_HISTORY, /* another's term came, or the time is up: read the history, then judge again */
	SWITCHOVER_HOLDS,	 /* the standby holds a term above the revoked one */
	SWITCHOVER_LET_GO,	 /* it took such a term, and holds the lease no longer */
	SWITCHOVER_NOT_TAKEN,	 /* another's term came, and the history has none of the standby's */
	SWITCHOVER_TIMED_OUT,	 /* the window ran out with nothing to show it took one */
};

/* FROM_TERM: the revoked term. TARGET: the standby's holder id. TIME_UP:
 * the window (the holder's expiry + SWITCHOVER_WINDOW_US + 1 s) is over.
 * Once a term above FROM_TERM is in the row, the choice is spent (it
 * counts for one term): nothing is waited for. */
enum switchover_next switchover_judge(uint64_t from_term, const char *target, const struct switchover_row *row,
				      enum switchover_history history, bool time_up);

#endif
