/* What --release --to makes of the lease row and the run history
 * (admin/switchover_judge.h). */
#include <criterion/criterion.h>

#include "admin/switchover_judge.h"

#define UNREAD SWITCHOVER_HISTORY_UNREAD
#define ABSENT SWITCHOVER_HISTORY_ABSENT
#define NONE   SWITCHOVER_HISTORY_NONE
#define FOUND  SWITCHOVER_HISTORY_FOUND

static enum switchover_next judge(bool held, uint64_t term, const char *holder, enum switchover_history h, bool time_up)
{
	const struct switchover_row row = {.held = held, .term = term, .holder = holder};

	return switchover_judge(7, "X", &row, h, time_up);
}

Test(switchover, the_revoked_term_still_in_the_row_is_waited_on_without_the_history)
{
	cr_assert_eq(judge(true, 7, "A", UNREAD, false), SWITCHOVER_WAIT);
	cr_assert_eq(judge(false, 7, "A", UNREAD, false), SWITCHOVER_WAIT);
	cr_assert_eq(judge(true, 6, "X", UNREAD, false), SWITCHOVER_WAIT, "an older term of X's is no switch-over");
}

Test(switchover, the_standby_seen_holding_a_later_term_is_a_switch_over)
{
	cr_assert_eq(judge(true, 8, "X", UNREAD, false), SWITCHOVER_HOLDS);
	cr_assert_eq(judge(true, 8, "X", UNREAD, true), SWITCHOVER_HOLDS, "seen at the last look");
	cr_assert_eq(judge(false, 8, "X", UNREAD, false), SWITCHOVER_LET_GO, "its term in the row, released");
}

Test(switchover, another_term_in_the_row_asks_the_history_once_and_ends_the_wait)
{
	cr_assert_eq(judge(true, 9, "Y", UNREAD, false), SWITCHOVER_READ_HISTORY);
	cr_assert_eq(judge(false, 8, "Y", UNREAD, false), SWITCHOVER_READ_HISTORY);
	cr_assert_eq(judge(true, 9, "Y", FOUND, false), SWITCHOVER_LET_GO, "X held term 8 in between");
	cr_assert_eq(judge(true, 8, "Y", NONE, false), SWITCHOVER_NOT_TAKEN, "the choice is spent: no wait");
}

Test(switchover, without_a_history_another_term_waits_out_the_window_as_before)
{
	cr_assert_eq(judge(true, 8, "Y", ABSENT, false), SWITCHOVER_WAIT);
	cr_assert_eq(judge(true, 8, "Y", ABSENT, true), SWITCHOVER_TIMED_OUT);
	cr_assert_eq(judge(true, 7, "A", ABSENT, true), SWITCHOVER_TIMED_OUT);
}

Test(switchover, the_end_of_the_window_asks_the_history_before_it_says_no)
{
	cr_assert_eq(judge(true, 7, "A", UNREAD, true), SWITCHOVER_READ_HISTORY);
	cr_assert_eq(judge(true, 7, "A", NONE, true), SWITCHOVER_TIMED_OUT);
	cr_assert_eq(judge(true, 7, "A", FOUND, true), SWITCHOVER_LET_GO);
}
