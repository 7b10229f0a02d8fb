/* The table of events (src/report/event_table.c), read without running anything:
 * every row is whole and consistent with itself and with what the manual
 * promises of the JSON "event" field and the receivers' events; and the
 * words of the rows that carry details, made from made-up details. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <string.h>
#include <sys/wait.h>

#include "lease/history_sql.h"
#include "report/event.h"

static const struct event_row *row_of(int id)
{
	const struct event_row *row = event_row((enum event_id)id);
	cr_assert_not_null(row, "event %d has no row", id);
	return row;
}

static bool in(const char *s, const char *const list[])
{
	for (int i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

Test(event, every_event_has_a_row_with_a_unique_name)
{
	for (int i = 0; i < EV_COUNT; i++) {
		const char *name = row_of(i)->name;
		cr_assert(name && *name, "event %d has no name", i);
		for (const char *c = name; *c; c++)
			cr_assert(islower((unsigned char)*c) || *c == '_', "%s: not lower_case", name);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(name, row_of(j)->name, "events %d and %d are both %s", j, i, name);
	}
	cr_assert_null(event_row(EV_COUNT));
	cr_assert_null(event_row((enum event_id) - 1));
}

Test(event, every_row_does_something_and_says_it_one_way)
{
	for (int i = 0; i < EV_COUNT; i++) {
		const struct event_row *r = row_of(i);
		bool logs = r->text || r->say;
		cr_assert(logs || r->tell || r->metric || r->sd || r->history || r->history_begin,
			  "%s: a row with no effect", r->name);
		cr_assert(!(r->text && r->say), "%s: fixed words and made ones", r->name);
		cr_assert(!(r->status && r->status_say), "%s: fixed STATUS= and a made one", r->name);
		cr_assert_eq(r->sd != SD_NONE, r->status || r->status_say,
			     "%s: STATUS= without a status, or one unsaid", r->name);
		cr_assert_eq(r->tell != TELL_NONE, r->notify != NULL, "%s: the receivers' event and how to tell it",
			     r->name);
		cr_assert(!r->event || logs, "%s: a JSON event on no log line", r->name);
		if (logs)
			cr_assert(r->level >= LOG_ERROR && r->level <= LOG_NOTICE, "%s: level %d", r->name, r->level);
	}
}

/* leaderrun-monitoring(7), JSON LOGS: the JSON "event" names and their levels. */
Test(event, json_events_and_their_levels_are_the_manuals)
{
	static const char *const info[] = {
	    "waiting",	"acquired",	 "exited",  "released",	 "busy",      "service_started", "promoting",
	    "promoted", "stepping_down", "demoted", "health_ok", "preferred", "spread_deferred", "slot_taken",
	    "slot_skipped", "slot_paused", NULL};
	static const char *const warn[] = {"renew_failed", "server", "health_failing", "slot_missed", NULL};
	static const char *const error[] = {"lost", "revoked", "timed_out", "promote_failed", "demote_failed", NULL};
	static const char *const notice[] = {"paused", "slot_used", "preempting", "preempted", "switched_over", NULL};

	for (int i = 0; i < EV_COUNT; i++) {
		const struct event_row *r = row_of(i);
		if (!r->event)
			continue;
		if (in(r->event, info))
			cr_assert_eq(r->level, LOG_INFO, "%s", r->name);
		else if (in(r->event, warn))
			cr_assert_eq(r->level, LOG_WARN, "%s", r->name);
		else if (in(r->event, error))
			cr_assert_eq(r->level, LOG_ERROR, "%s", r->name);
		else if (in(r->event, notice))
			cr_assert_eq(r->level, LOG_NOTICE, "%s", r->name);
		else
			cr_assert_fail("%s: JSON event %s is not in leaderrun-monitoring(7)", r->name, r->event);
	}
}

/* notify.h and leaderrun(1), --notify and --ping. */
Test(event, receivers_events_are_the_documented_ones)
{
	static const char *const told[] = {
	    "acquired",	      "start",		"exited",	 "released",  "lost",
	    "timed_out",      "busy",		"paused",	 "slot_used", "promoting",
	    "promoted",	      "promote_failed", "stepping_down", "demoted",   "demote_failed",
	    "health_failing", "health_ok",	"preempting",	 NULL};
	static const char *const outcomes[] = {HISTORY_EXITED,	  HISTORY_SIGNALED,	 HISTORY_LOST,
					       HISTORY_REVOKED,	  HISTORY_TIMED_OUT,	 HISTORY_STEPPED_DOWN,
					       HISTORY_PREEMPTED, HISTORY_SWITCHED_OVER, NULL};

	for (int i = 0; i < EV_COUNT; i++) {
		const struct event_row *r = row_of(i);
		if (r->notify)
			cr_assert(in(r->notify, told), "%s: receivers' event %s", r->name, r->notify);
		if (r->history)
			cr_assert(in(r->history, outcomes), "%s: history outcome %s", r->name, r->history);
		/* The lease's end: "lost" once to the receivers, and the stop to
		 * systemd. */
		if (r->lease_end)
			cr_assert(r->notify && strcmp(r->notify, "lost") == 0 && r->sd == SD_STOPPING, "%s", r->name);
	}
}

static struct options opts = {.lease = "nightly", .holder = "web1", .slots = 1, .kill_signal = SIGTERM};

static struct events run(void)
{
	struct events ev = {.o = &opts, .cmd = "backup", .term = 7, .slot = 0, .exit_status = -1};
	strcpy(ev.server, "db1:3306");
	return ev;
}

static const char *words(enum event_id id, const struct events *ev, const struct event *d)
{
	static char buf[EVENT_TEXT_MAX];
	event_words(event_row(id), ev, d, buf, sizeof(buf));
	return buf;
}

static const char *status(enum event_id id, const struct events *ev, const struct event *d)
{
	static char buf[EVENT_TEXT_MAX];
	event_status_words(event_row(id), ev, d, buf, sizeof(buf));
	return buf;
}

Test(event, words_made_from_the_details)
{
	struct events ev = run();
	struct lease_info info = {.term = 3, .holder = "web2", .expires_in_us = 4500000, .why = BUSY_HELD};
	struct options slots = opts;

	cr_assert_str_eq(words(EV_ACQUIRED, &ev, NULL), "acquired term 7 as web1 on db1:3306");
	slots.slots = 3;
	ev.o = &slots;
	ev.slot = 2;
	cr_assert_str_eq(words(EV_ACQUIRED, &ev, NULL), "acquired slot 2 of 3, term 7, as web1 on db1:3306");
	ev = run();
	cr_assert_str_eq(words(EV_EXITED, &ev, &(struct event){.wstatus = 3 << 8}), "command exited with status 3");
	cr_assert_str_eq(words(EV_EXITED, &ev, &(struct event){.wstatus = SIGUSR1}), "command killed by signal USR1");
	cr_assert_str_eq(words(EV_BUSY, &ev, &(struct event){.info = &info, .skip = SKIP_NO_WAIT}),
			 "held by web2 (term 3) for another 4.5s; not running (--no-wait)");
	cr_assert_str_eq(words(EV_WAITING, &ev, &(struct event){.info = &info}),
			 "waiting: held by web2 (term 3), expires in 4.5s");
	cr_assert_str_eq(status(EV_STANDBY, &ev, &(struct event){.info = &info}),
			 "standby: waiting for lease nightly held by web2 (term 3)");
	cr_assert_str_eq(words(EV_REVOKED, &ev, &(struct event){.kill_in = 750000}),
			 "lease revoked by 'leaderrun --release'; sending SIGTERM to the command, SIGKILL in 750ms");
	cr_assert_str_eq(status(EV_REVOKED, &ev, &(struct event){.revoked = true}), "stopping backup: lease revoked");
	cr_assert_str_eq(status(EV_DEADLINE, &ev, NULL), "stopping backup: lease lost");
	cr_assert_str_eq(words(EV_RECOVERED, &ev, &(struct event){.failures = 2}), "renewed after 2 failed attempts");
	cr_assert_str_eq(status(EV_RENEW_FAILED, &ev, NULL), "leader of nightly, term 7: renew failing");
	cr_assert_str_eq(status(EV_STOPPED_LOST, &ev, NULL), "lost lease nightly (term 7): backup stopped");
}

/* A holder name the size of a row's fills the words without overrunning
 * them; the log and systemd cut it where they would have. */
Test(event, long_details_are_cut_not_overrun)
{
	struct events ev = run();
	struct lease_info info = {.term = 3, .why = BUSY_HELD};
	const char *w;

	memset(info.holder, 'h', sizeof(info.holder) - 1);
	w = words(EV_BUSY, &ev, &(struct event){.info = &info});
	cr_assert(strncmp(w, "held by hhhh", 12) == 0 && strstr(w, "; not running"), "%s", w);
}
