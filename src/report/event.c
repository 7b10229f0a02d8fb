/* Carries an event's row out (event_table.c): the metrics first, then the
 * history, the log line, the receivers and systemd. The only part of a run
 * that calls log, metrics, notify, sdnotify and history for what happened;
 * each of them is on the side and never blocks (their own threads, or
 * non-blocking sends), so reporting costs a renew or a kill nothing. */
#include "event.h"

#include <sys/wait.h>

#include "base/timing.h"
#include "history.h"
#include "metrics.h"
#include "notify.h"
#include "role.h"
#include "sdnotify.h"

static void event_metrics(struct events *ev, const struct event_row *row, const struct event *d)
{
	switch (row->metric) {
	case MET_NONE:
		break;
	case MET_WAITING:
		metrics_waiting(ev->m, true);
		break;
	case MET_NOT_WAITING:
		metrics_waiting(ev->m, false);
		break;
	case MET_ACQUIRED:
		metrics_waiting(ev->m, false);
		metrics_acquired(ev->m, ev->slot, ev->term);
		break;
	case MET_STARTED:
		metrics_command_started(ev->m);
		break;
	case MET_RENEWED:
		/* Latency from send to reply; margin: what was left of the
		 * deadline this renew replaces when its answer came. */
		metrics_renewed(ev->m, d->latency, d->margin);
		break;
	case MET_RENEW_FAILED:
		metrics_renew_failed(ev->m);
		break;
	case MET_REVOKED:
		metrics_revoked(ev->m, METRICS_REVOKED);
		break;
	case MET_PREEMPTED:
		metrics_revoked(ev->m, METRICS_PREEMPTED);
		break;
	case MET_SWITCHED_OVER:
		metrics_revoked(ev->m, METRICS_SWITCHED_OVER);
		break;
	case MET_PREEMPTING:
		metrics_preempting(ev->m);
		break;
	case MET_TIMED_OUT:
		metrics_timed_out(ev->m);
		break;
	case MET_EXITED:
		metrics_command_exited(ev->m, ev->exit_status);
		break;
	case MET_RELEASED:
		metrics_released(ev->m);
		break;
	case MET_LOST:
		metrics_lost(ev->m);
		metrics_not_held(ev->m);
		break;
	case MET_NOT_HELD:
		metrics_not_held(ev->m);
		break;
	}
}

/* The run's row: begun once the lease is ours (off the hot path: the
 * history's own thread and connection write it while the command starts);
 * ended with what the command's wait status said, before the release. */
static void event_history(struct events *ev, const struct event_row *row, const struct event *d)
{
	int st = d->wstatus, code = -1, sig = -1;

	if (row->history_begin)
		history_begin(ev->h, ev->slot, ev->term, d->sent_at);
	if (!row->history)
		return;
	if (st >= 0 && WIFEXITED(st))
		code = WEXITSTATUS(st);
	if (st >= 0 && WIFSIGNALED(st))
		sig = WTERMSIG(st);
	history_end(ev->h, row->history, code, sig);
}

static void event_notify(struct events *ev, const struct event_row *row, const struct event *d)
{
	int64_t held_ms = ((d->now ? d->now : timing_now()) - ev->acquired_at) / 1000;

	notify_set_role(ev->n, role_name(ev->role));

	switch (row->tell) {
	case TELL_NONE:
		break;
	case TELL_ROW:
		notify_event(ev->n, row->notify, d->term, -1, 0);
		break;
	case TELL_RUN:
		/* Terms count per slot: a receiver needs it to tell holders
		 * apart, from the first event of the run on. */
		notify_set_slot(ev->n, ev->slot);
		notify_event(ev->n, row->notify, ev->term, -1, 0);
		break;
	case TELL_HELD:
		notify_event(ev->n, row->notify, ev->term, -1, held_ms);
		break;
	case TELL_END:
		notify_event(ev->n, row->notify, ev->term, ev->exit_status, held_ms);
		break;
	}
}

static void event_sd(struct events *ev, const struct event_row *row, const struct event *d)
{
	char text[EVENT_TEXT_MAX];

	if (row->sd == SD_NONE)
		return;
	/* Once the stop has begun, its status stays. */
	if (row->sd == SD_LEADING && sdnotify_is_stopping(ev->sd))
		return;
	event_status_words(row, ev, d, text, sizeof(text));
	/* A service's lease may end and the unit run on: STOPPING=1 is for
	 * leaderrun's own end only. */
	if (row->sd == SD_STOPPING && !(row->lease_end && ev->o->service))
		sdnotify_stopping(ev->sd, "%s", text);
	else
		sdnotify_status(ev->sd, row->sd != SD_STATUS, "%s", text);
}

void event_emit(struct events *ev, enum event_id id, const struct event *d)
{
	static const struct event none = {.wstatus = -1};
	const struct event_row *row = event_row(id);
	char text[EVENT_TEXT_MAX];

	if (!row)
		return;
	if (!d)
		d = &none;
	event_metrics(ev, row, d);
	event_history(ev, row, d);
	if ((row->text || row->say) && log_enabled(row->level)) {
		event_words(row, ev, d, text, sizeof(text));
		log_event(row->level, row->event, "%s", text);
	}
	/* The lease's end is said to the receivers and systemd once, by the
	 * first of its events; the log says each. */
	if (row->lease_end && ev->lost_said)
		return;
	ev->lost_said = ev->lost_said || row->lease_end;
	event_notify(ev, row, d);
	event_sd(ev, row, d);
}
