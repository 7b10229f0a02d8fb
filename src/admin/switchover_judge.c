#include "switchover_judge.h"

#include <string.h>

enum switchover_next switchover_judge(uint64_t from_term, const char *target, const struct switchover_row *row,
				      enum switchover_history history, bool time_up)
{
	bool moved_on = row->term > from_term;

	/* The row names the standby with a later term: the row says it all. */
	if (moved_on && strcmp(row->holder, target) == 0)
		return row->held ? SWITCHOVER_HOLDS : SWITCHOVER_LET_GO;
	/* Another's term, or the end of the wait: the standby may have held
	 * a term in between, for less than a look's interval. */
	if ((moved_on || time_up) && history == SWITCHOVER_HISTORY_UNREAD)
		return SWITCHOVER_READ_HISTORY;
	if (history == SWITCHOVER_HISTORY_FOUND)
		return SWITCHOVER_LET_GO;
	if (moved_on && history == SWITCHOVER_HISTORY_NONE)
		return SWITCHOVER_NOT_TAKEN;
	/* No history to ask (an old schema): as before it, the window. */
	return time_up ? SWITCHOVER_TIMED_OUT : SWITCHOVER_WAIT;
}
