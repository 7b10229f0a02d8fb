/* The lease loop's decisions (src/run/hold.c) with made-up times: what the
 * supervisor is told to do, and which state the lease and the command are
 * in, after each thing that can happen. ttl 3 s: renew 1 s, grace 0.75 s,
 * margin 0.6 s; a lease sent at 0 is stopped at 1.65 s and SIGKILLed at
 * 2.4 s. */
#include <criterion/criterion.h>

#include "run/hold.h"

#define MS(x) ((int64_t)(x)*1000)

static struct timing t3s(void)
{
	struct timing t = {.ttl_us = MS(3000), .renew_us = -1, .grace_us = -1};
	char err[256];

	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), 0, "%s", err);
	return t;
}

static bool has(const struct hold_step *st, enum event_id ev)
{
	for (int i = 0; i < st->nevents; i++)
		if (st->events[i] == ev)
			return true;
	return false;
}

/* A hold from 0, and the step at NOW with the worker idle. */
static struct hold_step tick(struct hold *h, const struct timing *t, int64_t now)
{
	struct hold_step st;
	hold_on_time(h, t, now, false, &st);
	return st;
}

Test(hold, renews_at_the_interval_and_moves_the_watchers_deadline)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	st = tick(&h, &t, MS(999));
	cr_assert_eq(st.acts, 0u);
	st = tick(&h, &t, MS(1000));
	cr_assert_eq(st.acts, (unsigned)ACT_RENEW);
	hold_renew_sent(&h, MS(1000));
	hold_on_renew(&h, &t, RENEW_OK, MS(1000), MS(1010), &st);
	cr_assert(st.acts & ACT_DEADLINE);
	cr_assert(has(&st, EV_RENEWED));
	cr_assert_eq(h.lease, HOLD_HELD);
	cr_assert_eq(hold_deadline(&h, &t), MS(1000 + 2400));
	cr_assert_eq(h.next_renew, MS(2000));
}

Test(hold, an_older_renews_late_answer_does_not_move_the_deadline_back)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, MS(1000), 0);
	hold_on_renew(&h, &t, RENEW_OK, MS(500), MS(1100), &st);
	cr_assert_eq(st.acts & ACT_DEADLINE, 0u);
	cr_assert_eq(h.sent_at, MS(1000));
}

Test(hold, a_renew_that_hangs_is_cut_off_after_half_an_interval)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_renew_sent(&h, MS(1000));
	hold_on_time(&h, &t, MS(1499), true, &st);
	cr_assert_eq(st.acts & ACT_CUT, 0u);
	hold_on_time(&h, &t, MS(1500), true, &st);
	cr_assert(st.acts & ACT_CUT);
	cr_assert(has(&st, EV_RENEW_CUT));
	/* Once: the cut attempt's answer is still awaited. */
	hold_on_time(&h, &t, MS(1600), true, &st);
	cr_assert_eq(st.acts & ACT_CUT, 0u);
}

Test(hold, failed_renews_retry_at_short_steps_and_a_success_recovers)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_renew(&h, &t, RENEW_FAILED, 0, MS(1000), &st);
	cr_assert_eq(h.lease, HOLD_FAILING);
	cr_assert_eq(h.failures, 1u);
	cr_assert_eq(h.next_renew, MS(1000) + timing_retry_step(&t));
	cr_assert(has(&st, EV_RENEW_FAILED));
	cr_assert_not(has(&st, EV_RENEW_FAILED_AGAIN));
	cr_assert_not(hold_healthy(&h, &t, MS(1000)));
	hold_on_renew(&h, &t, RENEW_FAILED, 0, MS(1050), &st);
	cr_assert_eq(h.failures, 2u);
	cr_assert(has(&st, EV_RENEW_FAILED_AGAIN), "the retries after the first are said apart");
	cr_assert_not(has(&st, EV_RENEW_FAILED));
	hold_on_renew(&h, &t, RENEW_OK, MS(1100), MS(1110), &st);
	cr_assert_eq(st.nevents, 2);
	cr_assert_eq(st.events[0], EV_RECOVERED, "recovered first, then the renew's own line");
	cr_assert_eq(st.events[1], EV_RENEWED);
	cr_assert_eq(h.lease, HOLD_HELD);
	cr_assert(hold_healthy(&h, &t, MS(1110)));
}

Test(hold, no_renew_by_the_stop_time_sends_the_kill_signal_then_sigkill_at_the_deadline)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	st = tick(&h, &t, MS(1649));
	cr_assert_eq(st.acts & (ACT_STOP | ACT_KILL), 0u);
	st = tick(&h, &t, MS(1650));
	cr_assert(st.acts & ACT_STOP);
	cr_assert(has(&st, EV_LATE));
	cr_assert_not(has(&st, EV_LATE_KILLING));
	cr_assert_eq(h.lease, HOLD_LATE);
	cr_assert_eq(h.cmd, CMD_STOPPING);
	/* SIGKILL at the deadline (2.4 s), before the grace (2.4 s too). */
	cr_assert_eq(hold_next_wake(&h, &t, MS(1650), true), MS(2400));
	st = tick(&h, &t, MS(2400));
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_DEADLINE));
	cr_assert_eq(h.cmd, CMD_KILLING);
}

Test(hold, a_recovered_renew_does_not_undo_a_late_stop)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	tick(&h, &t, MS(1650));
	hold_on_renew(&h, &t, RENEW_OK, MS(1700), MS(1710), &st);
	cr_assert_eq(h.lease, HOLD_LATE, "the stop began: the run ends as lost (76)");
	cr_assert_eq(h.cmd, CMD_STOPPING);
	cr_assert_not(hold_healthy(&h, &t, MS(1710)));
}

Test(hold, a_lost_row_is_sigkill_at_once_and_renewing_stops)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_renew(&h, &t, RENEW_LOST, 0, MS(1010), &st);
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_LOST));
	cr_assert_eq(h.lease, HOLD_LOST);
	cr_assert_not(hold_renewing(&h));
	st = tick(&h, &t, MS(5000));
	cr_assert_eq(st.acts & ACT_RENEW, 0u, "no renew after a loss");
	/* A late answer changes nothing. */
	hold_on_renew(&h, &t, RENEW_OK, MS(1000), MS(1100), &st);
	cr_assert_eq(h.lease, HOLD_LOST);
	cr_assert_eq(st.nevents, 0);
}

Test(hold, a_revoke_is_the_normal_stop_then_sigkill_after_the_grace)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, MS(1000), 0);
	hold_on_renew(&h, &t, RENEW_REVOKED, 0, MS(1000), &st);
	cr_assert(st.acts & ACT_STOP);
	cr_assert(has(&st, EV_REVOKED));
	cr_assert_eq(h.lease, HOLD_REVOKED);
	cr_assert_not(hold_renewing(&h));
	st = tick(&h, &t, MS(1749));
	cr_assert_eq(st.acts & ACT_KILL, 0u);
	st = tick(&h, &t, MS(1750));
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_GRACE_OVER));
	cr_assert_eq(h.lease, HOLD_REVOKED, "still revoked, not lost");
}

Test(hold, sigkill_goes_again_at_every_step_until_reaped)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_renew(&h, &t, RENEW_LOST, 0, MS(100), &st);
	for (int i = 0; i < 100; i++) {
		st = tick(&h, &t, MS(200 + 50 * i));
		cr_assert(st.acts & ACT_KILL, "step %d without SIGKILL", i);
	}
	hold_on_reaped(&h);
	st = tick(&h, &t, MS(10000));
	cr_assert_eq(st.acts & ACT_KILL, 0u);
}

Test(hold, killing_looks_again_every_50_ms_then_every_second)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_renew(&h, &t, RENEW_LOST, 0, MS(100), &st);
	tick(&h, &t, MS(100));
	cr_assert_eq(hold_next_wake(&h, &t, MS(100), false), MS(150));
	for (int i = 0; i < 40; i++)
		tick(&h, &t, MS(150 + 50 * i));
	cr_assert_eq(hold_next_wake(&h, &t, MS(3000), false), MS(4000));
}

Test(hold, the_commands_exit_drains_what_it_left_and_sigkill_follows_the_grace)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_exit(&h, &t, MS(500), &st);
	cr_assert(st.acts & ACT_STOP, "what it left gets the kill signal");
	cr_assert_eq(st.nevents, 2);
	cr_assert_eq(st.events[0], EV_EXITED, "the exit is an event of the step like the others");
	cr_assert_eq(st.events[1], EV_LEFT_BEHIND);
	cr_assert_eq(h.cmd, CMD_DRAINING);
	cr_assert(hold_healthy(&h, &t, MS(500)), "draining with the lease renewed is healthy");
	st = tick(&h, &t, MS(1249));
	cr_assert_eq(st.acts & ACT_KILL, 0u);
	st = tick(&h, &t, MS(1250));
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_OUTLIVED));
	cr_assert_eq(h.lease, HOLD_HELD, "a drain is no loss");
}

Test(hold, kill_grace_0_drains_at_once)
{
	struct timing t = {.ttl_us = MS(3000), .renew_us = -1, .grace_us = 0};
	struct hold h;
	struct hold_step st;
	char err[256];

	cr_assert_eq(timing_resolve(&t, err, sizeof(err)), 0, "%s", err);
	hold_start(&h, &t, 0, 0);
	hold_on_exit(&h, &t, MS(500), &st);
	st = tick(&h, &t, MS(500));
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_OUTLIVED), "reported only if SIGKILL reached something (the supervisor's count)");
}

Test(hold, max_runtime_stops_then_sigkills_without_losing_the_lease)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, MS(300));
	st = tick(&h, &t, MS(300));
	cr_assert(st.acts & ACT_STOP);
	cr_assert(has(&st, EV_TIMED_OUT));
	cr_assert(h.timed_out);
	cr_assert_eq(h.cmd, CMD_STOPPING);
	st = tick(&h, &t, MS(1050));
	cr_assert(st.acts & ACT_KILL);
	cr_assert(has(&st, EV_TIMED_OUT_KILL));
	cr_assert_eq(h.lease, HOLD_HELD);
}

Test(hold, when_the_lease_and_max_runtime_are_due_together_the_lease_stops_it)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, MS(1650));
	st = tick(&h, &t, MS(1650));
	cr_assert(has(&st, EV_LATE));
	cr_assert_not(has(&st, EV_TIMED_OUT));
	cr_assert_not(h.timed_out);
}

Test(hold, a_revoke_while_stopping_only_says_so)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, MS(300));
	tick(&h, &t, MS(300));
	hold_on_renew(&h, &t, RENEW_REVOKED, 0, MS(400), &st);
	cr_assert_eq(st.acts & ACT_STOP, 0u);
	cr_assert(has(&st, EV_REVOKED_STOPPING));
	cr_assert_eq(h.lease, HOLD_REVOKED);
	cr_assert_eq(h.stop_sent_at, MS(300), "the grace counts from the first kill signal");
}

Test(hold, the_deadline_passes_while_killing_leftovers_and_the_lease_is_late)
{
	struct timing t = t3s();
	struct hold h;
	struct hold_step st;

	hold_start(&h, &t, 0, 0);
	hold_on_exit(&h, &t, MS(100), &st);
	tick(&h, &t, MS(850)); /* the drain's SIGKILL */
	cr_assert_eq(h.cmd, CMD_KILLING);
	st = tick(&h, &t, MS(1650));
	cr_assert(has(&st, EV_LATE_KILLING), "no kill signal goes out: the killing goes on");
	cr_assert_not(has(&st, EV_LATE));
	cr_assert_eq(h.lease, HOLD_LATE, "a leftover outlived the renews: the run ends as lost");
}

Test(hold, what_the_command_left_is_said_only_when_a_signal_found_some)
{
	cr_assert_not(hold_says(EV_LEFT_BEHIND, 0, 0));
	cr_assert(hold_says(EV_LEFT_BEHIND, 1, 0));
	cr_assert_not(hold_says(EV_OUTLIVED, 3, 0));
	cr_assert(hold_says(EV_OUTLIVED, 0, 2));
	cr_assert(hold_says(EV_EXITED, 0, 0), "the exit itself always");
	cr_assert(hold_says(EV_LOST, 0, 0));
}

Test(hold, names_of_the_states)
{
	cr_assert_str_eq(hold_lease_name(HOLD_REVOKED), "revoked");
	cr_assert_str_eq(hold_cmd_name(CMD_KILLING), "killing");
}
