/* The table of events: one row each, in the order a run meets them, and
 * above it the words of the rows whose words carry details. Pure: the
 * unit tests read the rows and make their words (tests/unit/test_event.c);
 * event.c carries a row out. */
#include "event.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "base/duration.h"
#include "base/signame.h"
#include "db/dberr.h"
#include "db/tlspolicy.h"
#include "lease/history_sql.h"

/* A duration as people read it ("1.5s"); never negative. */
struct dur {
	char s[32];
};
static struct dur dur(int64_t us)
{
	struct dur d;
	duration_format(us < 0 ? 0 : us, d.s, sizeof(d.s));
	return d;
}

static const char *sig_abbrev(int signo)
{
	const char *n = signame_abbrev(signo);
	return n ? n : "?";
}

static const char *holder_or(const char *holder, const char *otherwise)
{
	return holder[0] ? holder : otherwise;
}

/* After "not running": why. */
struct how {
	char s[128];
};
static struct how how(const struct events *ev, const struct event *d)
{
	struct how h = {""};

	if (d->skip == SKIP_NO_WAIT)
		snprintf(h.s, sizeof(h.s), " (--no-wait)");
	else if (d->skip == SKIP_WAITED)
		snprintf(h.s, sizeof(h.s), " (not acquired within --wait-timeout %s; waited %s)",
			 dur(ev->o->wait_timeout_us).s, dur(d->us).s);
	return h;
}

/* A pause's end as the row has it; without --for it lasts until --resume. */
static const char *pause_until(const struct lease_info *info)
{
	return strncmp(info->paused_until, "9999-", 5) == 0 ? "--resume" : info->paused_until;
}

/* A --once-per slot as people read it: UTC, seconds, a fraction only when
 * the period has one. */
static void fmt_slot(char *buf, size_t len, int64_t slot_us)
{
	time_t t = (time_t)(slot_us / USEC_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	if (slot_us % USEC_PER_SEC && n < len)
		snprintf(buf + n, len - n, ".%06lld", (long long)(slot_us % USEC_PER_SEC));
}

/* Words of one snprintf: SAY(name, format, arguments from ev, d). */
#define SAY(name, ...)                                                                                                 \
	static void name(const struct events *ev, const struct event *d, char *buf, size_t len)                        \
	{                                                                                                              \
		snprintf(buf, len, __VA_ARGS__);                                                                       \
	}

/* ---- 1. waiting ---- */

SAY(say_server, "database server %s%s: %s", d->srv->name, d->srv->galera ? " (Galera)" : "", d->srv->tls)
SAY(say_server_moved, "now using database server %s%s (was %s): %s", d->srv->name, d->srv->galera ? " (Galera)" : "",
    ev->server, d->srv->tls)
SAY(say_galera_slow,
    "Galera: ttl - margin - kill-grace = %s is shorter than evs.suspect_timeout %s + renew interval %s; a node "
    "leaving the cluster stalls writes that long and would stop the command although nothing failed: raise --ttl",
    dur(d->us).s, dur(d->srv->suspect_timeout_us).s, dur(ev->o->timing.renew_us).s)
SAY(say_server_unsafe, "%s (leaderrun --check-server checks every assumption)", d->err)
SAY(say_preferred,
    "lease free, but left to another candidate (a higher --priority, or chosen by --release --to) "
    "for up to %s",
    dur(d->info->preferred_us).s)
SAY(say_preempting,
    "preempting %s (its priority %d, ours %d): its term %" PRIu64 " is revoked; it stops, then hands "
    "the lease over",
    d->by, d->priority, ev->o->priority, d->term)
SAY(say_spread_deferred, "--spread: another host takes this lease first; trying in %s", dur(d->us).s)
SAY(say_waiting, "waiting: held by %s (term %" PRIu64 "), expires in %s", d->info->holder, d->info->term,
    dur(d->info->expires_in_us).s)
SAY(status_standby, "standby: waiting for lease %s held by %s (term %" PRIu64 ")", ev->o->lease,
    holder_or(d->info->holder, "another holder"), d->info->term)
SAY(say_waiting_paused, "waiting: lease paused by %s until %s", holder_or(d->info->paused_by, "an operator"),
    pause_until(d->info))
SAY(status_standby_paused, "standby: lease %s paused by %s until %s", ev->o->lease,
    holder_or(d->info->paused_by, "an operator"), pause_until(d->info))
SAY(say_woken, "woken by the hint of term %" PRIu64, d->term)
SAY(say_woken_handed_on, "woken by the hint of term %" PRIu64 " (handed on)", d->term)
SAY(status_retrying, "standby: %s; retrying", dberr_name(d->status))
SAY(say_refused,
    "the server has no connection to spare (%s); waiting, and trying again with backoff up to 30s (see "
    "max_connections in leaderrun(1))",
    d->err)
SAY(say_still_refused, "still refused: %s", d->err)
SAY(say_retrying, "%s: %s; retrying in %s", dberr_name(d->status), d->err, dur(d->us).s)
/* No holder as read: the row was free when looked at after the tries,
 * which another contender won and has already given back. */
static void say_busy(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	if (!d->info->holder[0])
		snprintf(buf, len, "taken by another contender as it was tried, and free again since; not running%s",
			 how(ev, d).s);
	else
		snprintf(buf, len, "held by %s (term %" PRIu64 ") for another %s; not running%s", d->info->holder,
			 d->info->term, dur(d->info->expires_in_us).s, how(ev, d).s);
}
SAY(say_paused,
    "lease %s is paused by %s until %s (database time, UTC); not running%s; 'leaderrun --resume %s' ends the pause",
    ev->o->lease, holder_or(d->info->paused_by, "an operator"), pause_until(d->info), how(ev, d).s, ev->o->lease)

static void say_slot_used(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	const struct lease_info *info = d->info;
	char slot[40];

	fmt_slot(slot, sizeof(slot), info->last_slot_us);
	if (info->slot_term == info->term && info->holder[0])
		snprintf(buf, len, "lease %s already ran for the %s slot, term %" PRIu64 ", on %s", ev->o->lease, slot,
			 info->slot_term, info->holder);
	else
		snprintf(buf, len, "lease %s already ran for the %s slot, term %" PRIu64, ev->o->lease, slot,
			 info->slot_term);
}

/* A scheduled slot's time, as LEADERRUN_SCHEDULED gives it. */
static void fmt_scheduled(char *buf, size_t len, int64_t slot_us)
{
	time_t t = (time_t)(slot_us / USEC_PER_SEC);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void say_slot_taken(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	char slot[40];

	(void)ev;
	fmt_scheduled(slot, sizeof(slot), d->info->last_slot_us);
	snprintf(buf, len, "the %s slot is another instance's (term %" PRIu64 "%s%s); not running", slot,
		 d->info->slot_term, d->info->holder[0] ? ", " : "", d->info->holder);
}

/* D->us: the slot skipped. */
static void say_slot_skipped(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	char slot[40], last[40];

	(void)ev;
	fmt_scheduled(slot, sizeof(slot), d->us);
	fmt_scheduled(last, sizeof(last), d->info->last_slot_us);
	snprintf(buf, len,
		 "the %s slot is skipped: the run of the %s slot (term %" PRIu64 "%s%s) held the lease at its time",
		 slot, last, d->info->term, d->info->holder[0] ? ", " : "", d->info->holder);
}

SAY(say_slot_paused, "lease %s is paused by %s until %s (database time, UTC); this slot is skipped", ev->o->lease,
    holder_or(d->info->paused_by, "an operator"), pause_until(d->info))

static void say_slot_missed(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	char slot[40];

	fmt_scheduled(slot, sizeof(slot), d->us);
	(void)ev;
	snprintf(buf, len, "the %s slot is missed: the database stayed unavailable (%s: %s)", slot,
		 dberr_name(d->status), d->err ? d->err : "");
}

SAY(say_unavailable_after, "database still unavailable after --wait-timeout %s", dur(ev->o->wait_timeout_us).s)
SAY(say_db_error, "%s: %s", dberr_name(d->status), d->err)
SAY(say_denied, "access denied: %s; check the grants (sql/grants.sql) and that table %s exists (leaderrun --init)",
    d->err, ev->o->table)
SAY(say_untrusted, "%s: %s; %s", dberr_name(d->status), d->err, TLSPOLICY_WAYS_OUT)
SAY(say_no_table,
    "lease table %s missing or not as expected: %s; run 'leaderrun --init' (it also upgrades an older table) or "
    "apply sql/",
    ev->o->table, d->err)
SAY(say_no_database, "%s; name an existing database in the DSN (mysql://USER@HOST/DB) or in --table DB.TABLE", d->err)
SAY(say_slots_differ,
    "this lease runs with --slots %u (%u held now), and this run asked for --slots %u: give every contender of %s "
    "the same --slots (it can change while no slot is held)",
    d->info->slots, d->info->held, ev->o->slots, ev->o->lease)
SAY(say_wait_signalled, "got SIG%s while waiting; exiting without running the command", sig_abbrev(d->signo))
SAY(status_quit_signalled, "exiting: got SIG%s while waiting for lease %s", sig_abbrev(d->signo), ev->o->lease)
SAY(status_quit_busy, "exiting: lease %s not acquired", ev->o->lease)
SAY(status_quit_failed, "exiting: cannot contend for lease %s (see the log)", ev->o->lease)
SAY(say_acquire_in_flight, "an acquire in flight took term %" PRIu64 "; releasing it", ev->term)

/* ---- 2. the start ---- */

SAY(say_loop_failed, "signalfd/timerfd: %s", d->err)
SAY(say_ready_file_stale, "--ready-file %s: %s", ev->o->ready_file, d->err)
SAY(say_ready_file_failed, "--ready-file %s", d->err)
SAY(say_err, "%s", d->err)
SAY(status_cannot_start, "exiting: cannot start %s", ev->cmd)

SAY(say_fence_ended,
    "ended session %" PRIu64 " on the server: its transaction had fenced lease %s with an older term and was "
    "still open, so term %" PRIu64 "'s command could not start",
    d->session, ev->o->lease, ev->term)
SAY(say_fence_unavailable,
    "the fence is off: %s; the command runs, and its transactions cannot fence (CALL leaderrun_fence); "
    "if the fence exists, grant this account EXECUTE on its procedures leaderrun_fence_move and "
    "leaderrun_fence_end (sql/grants.sql); if not, run 'leaderrun --init' once as an administrator",
    d->err)

static void say_acquired(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	const struct options *o = ev->o;

	if (o->slots > 1)
		snprintf(buf, len, "acquired slot %u of %u, term %" PRIu64 ", as %s on %s", ev->slot, o->slots,
			 ev->term, o->holder, ev->server);
	else
		snprintf(buf, len, "acquired term %" PRIu64 " as %s on %s", ev->term, o->holder, ev->server);
}

/* ---- 3. holding ---- */

SAY(status_leading, "leader of %s, term %" PRIu64, ev->o->lease, ev->term)
SAY(status_leading_failing, "leader of %s, term %" PRIu64 ": renew failing", ev->o->lease, ev->term)
SAY(say_renewed, "renewed term %" PRIu64 " in %.3f ms, %s left", ev->term, (double)d->latency / 1000.0,
    dur(d->margin).s)
SAY(say_recovered, "renewed after %u failed attempt%s", d->failures, d->failures == 1 ? "" : "s")
SAY(say_renew_failed, "renew failed (%s: %s); retrying, %s left before the command is stopped", dberr_name(d->status),
    d->err, dur(d->us).s)
SAY(say_renew_failed_again, "renew attempt %u failed (%s: %s); %s left", d->failures, dberr_name(d->status), d->err,
    dur(d->us).s)
SAY(status_lease_end, "stopping %s: lease %s", ev->cmd, d->revoked ? "revoked" : "lost")
/* How leading stops, up to "in D": a job's command gets the kill signal;
 * a service with --on-demote is demoted, and only killed if that fails. */
static const char *stop_words(const struct events *ev, char *buf, size_t len)
{
	if (ev->o->service && ev->o->on_demote)
		snprintf(buf, len, "running --on-demote, SIGKILL to the service");
	else
		snprintf(buf, len, "sending SIG%s to the %s, SIGKILL", sig_abbrev(ev->o->kill_signal),
			 ev->o->service ? "service" : "command");
	return buf;
}

SAY(say_revoked, "lease revoked by 'leaderrun --release'; %s in %s", stop_words(ev, (char[64]){0}, 64),
    dur(d->kill_in).s)
SAY(say_preempted, "lease preempted by %s (a higher --priority); %s in %s, then it is handed over",
    holder_or(d->by ? d->by : "", "a candidate"), stop_words(ev, (char[64]){0}, 64), dur(d->kill_in).s)
SAY(say_switched_over, "lease switched over to %s by 'leaderrun --release --to'; %s in %s",
    holder_or(d->by ? d->by : "", "a standby"), stop_words(ev, (char[64]){0}, 64), dur(d->kill_in).s)
SAY(say_late, "no successful renew in time; %s in %s", stop_words(ev, (char[64]){0}, 64), dur(d->kill_in).s)
/* An error, not a warning: the job did not finish, and -q (cron's quiet
 * mode) must still say so. */
SAY(say_timed_out, "command ran for %s (--max-runtime); sending SIG%s to its process group, SIGKILL in %s",
    dur(ev->o->max_runtime_us).s, sig_abbrev(ev->o->kill_signal), dur(d->kill_in).s)
SAY(status_timed_out, "stopping %s: ran for %s (--max-runtime)", ev->cmd, dur(ev->o->max_runtime_us).s)
SAY(say_forwarded, "forwarding SIG%s to the command", sig_abbrev(d->signo))
SAY(status_asked_to_stop, "stopping %s: got SIG%s", ev->cmd, sig_abbrev(d->signo))
SAY(say_watcher_died, "the watcher process %d died; a SIGKILL of leaderrun would now leave grandchildren", d->pid)

/* ---- 4. the command's end ---- */

static void say_exited(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	/* A service's during its demote says so (d->err). */
	const char *who = d->err ? "service" : "command", *when = d->err ? d->err : "";

	(void)ev;
	if (WIFSIGNALED(d->wstatus))
		snprintf(buf, len, "%s killed by signal %s%s", who, sig_abbrev(WTERMSIG(d->wstatus)), when);
	else
		snprintf(buf, len, "%s exited with status %d%s", who, WEXITSTATUS(d->wstatus), when);
}

SAY(status_exited, "stopping: %s exited with status %d", ev->cmd, ev->exit_status)
SAY(say_left_behind, "the command left processes behind; sending SIG%s", sig_abbrev(ev->o->kill_signal))

/* ---- 5. the release ---- */

SAY(say_released, "released term %" PRIu64, ev->term)
SAY(say_release_failed, "release failed (%s: %s); the lease expires on its own", dberr_name(d->status), d->err)
SAY(status_finished_timed_out, "%s timed out (--max-runtime): stopped", ev->cmd)
SAY(say_stopped_lost, "command stopped: lease lost (term %" PRIu64 ")", ev->term)
SAY(status_stopped_lost, "lost lease %s (term %" PRIu64 "): %s stopped", ev->o->lease, ev->term, ev->cmd)
SAY(say_stopped_revoked, "command stopped: lease revoked (term %" PRIu64 ")", ev->term)
SAY(status_stopped_revoked, "lease %s revoked (term %" PRIu64 "): %s stopped", ev->o->lease, ev->term, ev->cmd)

/* ---- --service ---- */

SAY(say_service_started, "service started (pid %d); it runs whether this instance leads or not", d->pid)
SAY(status_service_started, "standby: %s runs, waiting for lease %s", ev->cmd, ev->o->lease)
static void say_service_exited(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	(void)ev;
	if (WIFSIGNALED(d->wstatus))
		snprintf(buf, len, "service killed by signal %s while standing by", sig_abbrev(WTERMSIG(d->wstatus)));
	else
		snprintf(buf, len, "service exited with status %d while standing by", WEXITSTATUS(d->wstatus));
}
SAY(say_promoting, "running --on-promote for term %" PRIu64, ev->term)
SAY(status_promoting, "promoting: lease %s, term %" PRIu64, ev->o->lease, ev->term)
SAY(say_promoted, "leader of term %" PRIu64 "%s", ev->term, ev->o->on_promote ? " (--on-promote exited 0)" : "")
static void say_hook_status(const char *hook, const struct event *d, const char *then, char *buf, size_t len)
{
	if (d->wstatus >= 0 && WIFSIGNALED(d->wstatus))
		snprintf(buf, len, "--%s killed by signal %s; %s", hook, sig_abbrev(WTERMSIG(d->wstatus)), then);
	else if (d->wstatus >= 0)
		snprintf(buf, len, "--%s exited with status %d; %s", hook, WEXITSTATUS(d->wstatus), then);
	else
		snprintf(buf, len, "--%s: %s; %s", hook, d->err ? d->err : "failed", then);
}
static void say_promote_failed(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	(void)ev;
	say_hook_status("on-promote", d, "stepping down", buf, len);
}
SAY(say_stepping_down, "stepping down from term %" PRIu64 " (%s); %s in %s", ev->term, d->err,
    stop_words(ev, (char[64]){0}, 64), dur(d->kill_in).s)
SAY(say_demoted, "demoted in %s; %s", dur(d->us).s,
    ev->exit_status >= 0 ? "the service had exited" : "standing by again, the service still runs")
static void say_demote_failed(const struct events *ev, const struct event *d, char *buf, size_t len)
{
	(void)ev;
	say_hook_status("on-demote", d, "killing the service's whole tree", buf, len);
}
SAY(say_hook_failed, "could not start --%s", d->err)
SAY(status_leader, "leader of %s, term %" PRIu64, ev->o->lease, ev->term)

SAY(say_health_failing, "--health-cmd failed %u times in a row: %s", d->failures,
    ev->o->service ? "not leading, not competing until it passes again" : "not competing; a leader stops its command")
SAY(say_health_ok, "--health-cmd passed %u time%s in a row: competing for the lease", d->failures,
    d->failures == 1 ? "" : "s")
SAY(say_health_wait, "not competing for lease %s until --health-cmd passes", ev->o->lease)
SAY(say_stopped_unhealthy, "command stopped: --health-cmd failed (term %" PRIu64 " released)", ev->term)
SAY(say_stopped_demote, "service killed: --on-demote failed or did not end in time (term %" PRIu64 " released)",
    ev->term)
SAY(status_stopped_demote, "lease %s released (term %" PRIu64 "): %s killed, --on-demote failed", ev->o->lease,
    ev->term, ev->cmd)
SAY(status_stopped_unhealthy, "lease %s released (term %" PRIu64 "): %s stopped, --health-cmd failed", ev->o->lease,
    ev->term, ev->cmd)

/* The lease's end, whichever way it comes: the receivers hear "lost" and
 * systemd STOPPING=1 once a run, from the first. */
#define LEASE_END                                                                                                      \
	.notify = "lost", .tell = TELL_HELD, .lease_end = true, .sd = SD_STOPPING, .status_say = status_lease_end

/* Each row: {name, the JSON "event", level, .text or .say: the log line;
 * .notify and .tell: the receivers; .metric; .sd and .status or
 * .status_say: systemd; .history: the run's outcome}. What a row leaves out
 * it does not do. One line per row where it fits, so the table reads down. */
/* clang-format off */
static const struct event_row rows[EV_COUNT] = {
	/* 1. waiting */
	[EV_STARTING] = {"starting", .metric = MET_WAITING, .sd = SD_STATUS,
		.status = "starting: connecting to the database"},
	[EV_SERVER] = {"server", NULL, LOG_INFO, .say = say_server},
	[EV_SERVER_MOVED] = {"server_moved", "server", LOG_WARN, .say = say_server_moved},
	[EV_GALERA_SLOW] = {"galera_slow", NULL, LOG_WARN, .say = say_galera_slow},
	[EV_SERVER_UNSAFE] = {"server_unsafe", NULL, LOG_WARN, .say = say_server_unsafe},
	[EV_WAITING] = {"waiting", "waiting", LOG_INFO, .say = say_waiting},
	[EV_PREFERRED] = {"preferred", "preferred", LOG_INFO, .say = say_preferred},
	[EV_SPREAD_DEFERRED] = {"spread_deferred", "spread_deferred", LOG_INFO, .say = say_spread_deferred},
	[EV_PREEMPTING] = {"preempting", "preempting", LOG_NOTICE, .say = say_preempting, .notify = "preempting",
		.tell = TELL_ROW, .metric = MET_PREEMPTING},
	[EV_STANDBY] = {"standby", .sd = SD_STANDBY, .status_say = status_standby},
	[EV_WAITING_PAUSED] = {"waiting_paused", "waiting", LOG_INFO, .say = say_waiting_paused},
	[EV_STANDBY_PAUSED] = {"standby_paused", .sd = SD_STANDBY, .status_say = status_standby_paused},
	[EV_WOKEN] = {"woken", NULL, LOG_DEBUG, .say = say_woken},
	[EV_WOKEN_HANDED_ON] = {"woken_handed_on", NULL, LOG_DEBUG, .say = say_woken_handed_on},
	[EV_NO_HINT] = {"no_hint", NULL, LOG_DEBUG, .text = "the wake-up hint does not work here; polling"},
	[EV_REFUSED] = {"refused", NULL, LOG_WARN, .say = say_refused, .sd = SD_STATUS,
		.status_say = status_retrying},
	[EV_STILL_REFUSED] = {"still_refused", NULL, LOG_DEBUG, .say = say_still_refused, .sd = SD_STATUS,
		.status_say = status_retrying},
	[EV_RETRYING] = {"retrying", NULL, LOG_WARN, .say = say_retrying, .sd = SD_STATUS,
		.status_say = status_retrying},
	[EV_CONNECTIONS_BACK] = {"connections_back", NULL, LOG_INFO, .text = "the server takes connections again"},
	[EV_BUSY] = {"busy", "busy", LOG_INFO, .say = say_busy, .notify = "busy", .tell = TELL_ROW},
	[EV_PAUSED] = {"paused", "paused", LOG_NOTICE, .say = say_paused, .notify = "paused", .tell = TELL_ROW},
	[EV_SLOT_USED] = {"slot_used", "slot_used", LOG_NOTICE, .say = say_slot_used, .notify = "slot_used",
		.tell = TELL_ROW},
	[EV_SLOT_TAKEN] = {"slot_taken", "slot_taken", LOG_INFO, .say = say_slot_taken},
	[EV_SLOT_SKIPPED] = {"slot_skipped", "slot_skipped", LOG_INFO, .say = say_slot_skipped},
	[EV_SLOT_PAUSED] = {"slot_paused", "slot_paused", LOG_INFO, .say = say_slot_paused},
	[EV_SLOT_RETRYING] = {"slot_retrying", NULL, LOG_DEBUG, .say = say_retrying},
	[EV_SLOT_MISSED] = {"slot_missed", "slot_missed", LOG_WARN, .say = say_slot_missed},
	[EV_UNAVAILABLE_AFTER] = {"unavailable_after", NULL, LOG_ERROR, .say = say_unavailable_after},
	[EV_UNAVAILABLE] = {"unavailable", NULL, LOG_ERROR, .say = say_db_error},
	[EV_DENIED] = {"denied", NULL, LOG_ERROR, .say = say_denied},
	[EV_UNTRUSTED] = {"untrusted", NULL, LOG_ERROR, .say = say_untrusted},
	[EV_NO_TABLE] = {"no_table", NULL, LOG_ERROR, .say = say_no_table},
	[EV_NO_DATABASE] = {"no_database", NULL, LOG_ERROR, .say = say_no_database},
	[EV_SLOTS_DIFFER] = {"slots_differ", NULL, LOG_ERROR, .say = say_slots_differ},
	[EV_WORKER_BUSY] = {"worker_busy", NULL, LOG_ERROR, .text = "internal error: database worker busy"},
	[EV_WAIT_SIGNALLED] = {"wait_signalled", NULL, LOG_INFO, .say = say_wait_signalled},
	[EV_QUIT_SIGNALLED] = {"quit_signalled", .metric = MET_NOT_WAITING, .sd = SD_STOPPING,
		.status_say = status_quit_signalled},
	[EV_QUIT_BUSY] = {"quit_busy", .metric = MET_NOT_WAITING, .sd = SD_STOPPING, .status_say = status_quit_busy},
	[EV_QUIT_UNAVAILABLE] = {"quit_unavailable", .metric = MET_NOT_WAITING, .sd = SD_STOPPING,
		.status = "exiting: database unavailable"},
	[EV_QUIT_FAILED] = {"quit_failed", .metric = MET_NOT_WAITING, .sd = SD_STOPPING,
		.status_say = status_quit_failed},
	[EV_ACQUIRE_IN_FLIGHT] = {"acquire_in_flight", NULL, LOG_INFO, .say = say_acquire_in_flight},

	/* 2. the start */
	[EV_LOOP_FAILED] = {"loop_failed", NULL, LOG_ERROR, .say = say_loop_failed},
	[EV_READY_FILE_STALE] = {"ready_file_stale", NULL, LOG_WARN, .say = say_ready_file_stale},
	[EV_FENCE_ENDED] = {"fence_ended", NULL, LOG_WARN, .say = say_fence_ended},
	[EV_FENCE_UNAVAILABLE] = {"fence_unavailable", NULL, LOG_WARN, .say = say_fence_unavailable},
	[EV_ACQUIRED] = {"acquired", "acquired", LOG_INFO, .say = say_acquired, .notify = "acquired",
		.tell = TELL_RUN, .metric = MET_ACQUIRED, .history_begin = true},
	[EV_START_FAILED] = {"start_failed", NULL, LOG_ERROR, .say = say_err, .sd = SD_STOPPING,
		.status_say = status_cannot_start, .history = HISTORY_EXITED},
	[EV_EXEC_FAILED] = {"exec_failed", NULL, LOG_ERROR, .say = say_err},
	[EV_READY_FILE_FAILED] = {"ready_file_failed", NULL, LOG_WARN, .say = say_ready_file_failed},
	[EV_STARTED] = {"started", .notify = "start", .tell = TELL_RUN, .metric = MET_STARTED, .sd = SD_LEADING,
		.status_say = status_leading},

	/* 3. holding: the renews */
	[EV_RENEWED] = {"renewed", NULL, LOG_DEBUG, .say = say_renewed, .metric = MET_RENEWED, .sd = SD_LEADING,
		.status_say = status_leading},
	[EV_RECOVERED] = {"recovered", NULL, LOG_WARN, .say = say_recovered},
	[EV_RENEW_FAILED] = {"renew_failed", "renew_failed", LOG_WARN, .say = say_renew_failed,
		.metric = MET_RENEW_FAILED, .sd = SD_LEADING, .status_say = status_leading_failing},
	[EV_RENEW_FAILED_AGAIN] = {"renew_failed_again", NULL, LOG_DEBUG, .say = say_renew_failed_again,
		.metric = MET_RENEW_FAILED},
	[EV_RENEW_CUT] = {"renew_cut", NULL, LOG_DEBUG, .text = "renew attempt exceeded its budget; aborting it"},

	/* 3. holding: the lease's end, the command's stop */
	[EV_REVOKED] = {"revoked", "revoked", LOG_ERROR, .say = say_revoked, .metric = MET_REVOKED, LEASE_END},
	[EV_PREEMPTED] = {"preempted", "preempted", LOG_NOTICE, .say = say_preempted, .metric = MET_PREEMPTED,
		LEASE_END},
	[EV_SWITCHED_OVER] = {"switched_over", "switched_over", LOG_NOTICE, .say = say_switched_over,
		.metric = MET_SWITCHED_OVER, LEASE_END},
	[EV_REVOKED_STOPPING] = {"revoked_stopping", "revoked", LOG_ERROR,
		.text = "lease revoked by 'leaderrun --release' while stopping", .metric = MET_REVOKED, LEASE_END},
	[EV_LOST] = {"lost", "lost", LOG_ERROR,
		.text = "lease lost: the row is no longer ours (expired and taken, released by force, or the server turned "
		"read-only); sent SIGKILL to the command's process group", LEASE_END},
	[EV_LATE] = {"late", "lost", LOG_ERROR, .say = say_late, LEASE_END},
	[EV_LATE_KILLING] = {"late_killing", "lost", LOG_ERROR,
		.text = "no successful renew in time; the command's processes are being killed", LEASE_END},
	[EV_DEADLINE] = {"deadline", "lost", LOG_ERROR,
		.text = "lease deadline reached without a successful renew; sent SIGKILL to the command's process group",
		LEASE_END},
	[EV_GRACE_OVER] = {"grace_over", "lost", LOG_ERROR,
		.text = "command still running after --kill-grace; sent SIGKILL to the command's process group", LEASE_END},
	[EV_TIMED_OUT] = {"timed_out", "timed_out", LOG_ERROR, .say = say_timed_out, .notify = "timed_out",
		.tell = TELL_HELD, .metric = MET_TIMED_OUT, .sd = SD_STOPPING, .status_say = status_timed_out},
	[EV_TIMED_OUT_KILL] = {"timed_out_kill", NULL, LOG_INFO,
		.text = "command still running --kill-grace after --max-runtime; sent SIGKILL to its process group"},
	[EV_FORWARDED] = {"forwarded", NULL, LOG_INFO, .say = say_forwarded},
	[EV_ASKED_TO_STOP] = {"asked_to_stop", .sd = SD_STOPPING, .status_say = status_asked_to_stop},
	[EV_WATCHER_DIED] = {"watcher_died", NULL, LOG_WARN, .say = say_watcher_died},

	/* 4. the command's end */
	[EV_EXITED] = {"exited", "exited", LOG_INFO, .say = say_exited, .notify = "exited", .tell = TELL_END,
		.metric = MET_EXITED, .sd = SD_STOPPING, .status_say = status_exited},
	[EV_LEFT_BEHIND] = {"left_behind", NULL, LOG_INFO, .say = say_left_behind},
	[EV_OUTLIVED] = {"outlived", NULL, LOG_WARN, .text = "processes left by the command outlived --kill-grace; killed them"},
	[EV_RUN_EXITED] = {"run_exited", .history = HISTORY_EXITED},
	[EV_RUN_SIGNALED] = {"run_signaled", .history = HISTORY_SIGNALED},
	[EV_RUN_TIMED_OUT] = {"run_timed_out", .history = HISTORY_TIMED_OUT},
	[EV_RUN_LOST] = {"run_lost", .history = HISTORY_LOST},
	[EV_RUN_REVOKED] = {"run_revoked", .history = HISTORY_REVOKED},
	[EV_RUN_PREEMPTED] = {"run_preempted", .history = HISTORY_PREEMPTED},
	[EV_RUN_SWITCHED_OVER] = {"run_switched_over", .history = HISTORY_SWITCHED_OVER},

	/* 5. the release, and the run's end */
	[EV_RELEASED] = {"released", "released", LOG_INFO, .say = say_released, .notify = "released",
		.tell = TELL_END, .metric = MET_RELEASED},
	[EV_RELEASE_LATE] = {"release_late", NULL, LOG_WARN,
		.text = "could not release the lease in time; it expires on its own"},
	[EV_RELEASE_EXPIRED] = {"release_expired", NULL, LOG_WARN,
		.text = "the lease had already expired when the command finished"},
	[EV_RELEASE_FAILED] = {"release_failed", NULL, LOG_WARN, .say = say_release_failed},
	[EV_FINISHED] = {"finished", .metric = MET_NOT_HELD},
	[EV_FINISHED_TIMED_OUT] = {"finished_timed_out", .metric = MET_NOT_HELD, .sd = SD_STOPPING,
		.status_say = status_finished_timed_out},
	[EV_STOPPED_LOST] = {"stopped_lost", NULL, LOG_ERROR, .say = say_stopped_lost, .metric = MET_LOST,
		.sd = SD_STOPPING, .status_say = status_stopped_lost},
	[EV_STOPPED_REVOKED] = {"stopped_revoked", NULL, LOG_ERROR, .say = say_stopped_revoked,
		.metric = MET_NOT_HELD, .sd = SD_STOPPING, .status_say = status_stopped_revoked},

	/* --service */
	[EV_SERVICE_STARTED] = {"service_started", "service_started", LOG_INFO, .say = say_service_started,
		.metric = MET_STARTED, .sd = SD_STATUS, .status_say = status_service_started},
	[EV_SERVICE_EXITED] = {"service_exited", "exited", LOG_INFO, .say = say_service_exited, .notify = "exited",
		.tell = TELL_END, .metric = MET_EXITED, .sd = SD_STOPPING, .status_say = status_exited},
	[EV_PROMOTING] = {"promoting", "promoting", LOG_INFO, .say = say_promoting, .notify = "promoting",
		.tell = TELL_RUN, .sd = SD_STATUS, .status_say = status_promoting},
	[EV_PROMOTED] = {"promoted", "promoted", LOG_INFO, .say = say_promoted, .notify = "promoted", .tell = TELL_RUN,
		.sd = SD_LEADING, .status_say = status_leader},
	[EV_PROMOTE_FAILED] = {"promote_failed", "promote_failed", LOG_ERROR, .say = say_promote_failed,
		.notify = "promote_failed", .tell = TELL_RUN},
	[EV_STEPPING_DOWN] = {"stepping_down", "stepping_down", LOG_INFO, .say = say_stepping_down,
		.notify = "stepping_down", .tell = TELL_HELD},
	[EV_DEMOTED] = {"demoted", "demoted", LOG_INFO, .say = say_demoted, .notify = "demoted", .tell = TELL_HELD,
		.sd = SD_STATUS, .status_say = status_service_started},
	[EV_DEMOTE_FAILED] = {"demote_failed", "demote_failed", LOG_ERROR, .say = say_demote_failed,
		.notify = "demote_failed", .tell = TELL_HELD},
	[EV_DEMOTE_LATE] = {"demote_late", "demote_failed", LOG_ERROR,
		.text = "--on-demote did not exit in time; killing the service's whole tree", .notify = "demote_failed",
		.tell = TELL_HELD},
	[EV_HOOK_FAILED] = {"hook_failed", NULL, LOG_ERROR, .say = say_hook_failed},
	[EV_ROLE_FILE_FAILED] = {"role_file_failed", NULL, LOG_WARN, .say = say_err},
	[EV_HEALTH_FAILING] = {"health_failing", "health_failing", LOG_WARN, .say = say_health_failing,
		.notify = "health_failing", .tell = TELL_ROW},
	[EV_HEALTH_OK] = {"health_ok", "health_ok", LOG_INFO, .say = say_health_ok, .notify = "health_ok",
		.tell = TELL_ROW},
	[EV_HEALTH_FAILED_START] = {"health_failed_start", NULL, LOG_WARN, .say = say_err},
	[EV_HEALTH_WAIT] = {"health_wait", NULL, LOG_INFO, .say = say_health_wait, .sd = SD_STANDBY,
		.status_say = say_health_wait},
	[EV_STOPPED_UNHEALTHY] = {"stopped_unhealthy", NULL, LOG_ERROR, .say = say_stopped_unhealthy,
		.metric = MET_NOT_HELD, .sd = SD_STOPPING, .status_say = status_stopped_unhealthy},
	[EV_STOPPED_DEMOTE] = {"stopped_demote", NULL, LOG_ERROR, .say = say_stopped_demote, .metric = MET_NOT_HELD,
		.sd = SD_STOPPING, .status_say = status_stopped_demote},
	[EV_RUN_STEPPED_DOWN] = {"run_stepped_down", .history = HISTORY_STEPPED_DOWN},
};
/* clang-format on */

/* The details of an event emitted without any. */
static const struct event none = {.wstatus = -1};

const struct event_row *event_row(enum event_id id)
{
	return (unsigned)id < EV_COUNT && rows[id].name ? &rows[id] : NULL;
}

void event_words(const struct event_row *row, const struct events *ev, const struct event *d, char *buf, size_t len)
{
	if (row->say)
		row->say(ev, d ? d : &none, buf, len);
	else
		snprintf(buf, len, "%s", row->text ? row->text : "");
}

void event_status_words(const struct event_row *row, const struct events *ev, const struct event *d, char *buf,
			size_t len)
{
	if (row->status_say)
		row->status_say(ev, d ? d : &none, buf, len);
	else
		snprintf(buf, len, "%s", row->status ? row->status : "");
}
