#include "metrics.h"
#include "role.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/bgthread.h"
#include "base/duration.h"
#include "escape.h"
#include "lease/lease.h"
#include "log.h"

const struct metrics_family metrics_families[MF_COUNT] = {
    [MF_PROCESS_HOLDS] = {"leaderrun_process_holds_lease", "gauge",
			  "Whether this leaderrun process holds the lease (1) or not (0)."},
    [MF_PROCESS_WAITING] = {"leaderrun_lease_waiting", "gauge",
			    "Whether this leaderrun process waits for the lease (1) or not (0)."},
    [MF_PROCESS_TERM] = {"leaderrun_process_term", "gauge", "Fencing term this process last acquired (0: none yet)."},
    [MF_PROCESS_SLOT] = {"leaderrun_lease_slot", "gauge", "Slot of that term (--slots; 0 with one slot)."},
    [MF_PROCESS_ROLE] =
	{"leaderrun_role", "gauge",
	 "This process's role in the lease: 1 for the one it has (standby, promoting, leader, demoting)."},
    [MF_ACQUISITIONS] = {"leaderrun_lease_acquisitions_total", "counter", "Times this process acquired the lease."},
    [MF_LOSSES] = {"leaderrun_lease_losses_total", "counter",
		   "Times the lease was lost while held (a renew found the row taken, or no renew succeeded in time)."},
    [MF_REVOCATIONS] = {"leaderrun_lease_revocations_total", "counter",
			"Times leaderrun --release revoked the lease while held."},
    [MF_HANDOVERS] = {"leaderrun_lease_handovers_total", "counter",
		      "Times the lease was revoked while held, by reason: released (--release), preempted (a candidate "
		      "of a higher --priority), switched_over (--release --to)."},
    [MF_PREEMPTIONS] = {"leaderrun_lease_preemptions_total", "counter",
			"Times this process preempted a holder of a lower --priority (--preempt)."},
    [MF_RELEASES] = {"leaderrun_lease_releases_total", "counter",
		     "Times this process gave the lease back after its command ended."},
    [MF_RENEW_FAILURES] = {"leaderrun_lease_renew_failures_total", "counter",
			   "Renew attempts that failed (each is retried)."},
    [MF_TIMEOUTS] = {"leaderrun_command_timeouts_total", "counter",
		     "Times --max-runtime ran out and the command was stopped."},
    [MF_RENEW_DURATION] = {"leaderrun_lease_renew_duration_seconds", "histogram",
			   "Latency of successful renews, from send to reply; buckets are fractions of the renew "
			   "interval."},
    [MF_DEADLINE_MARGIN] = {"leaderrun_lease_deadline_margin_seconds", "gauge",
			    "Time that was left to the local deadline when the last successful renew came back."},
    [MF_LAST_RENEW] = {"leaderrun_lease_last_renew_timestamp_seconds", "gauge",
		       "Unix time of the last successful acquire or renew (this host's clock)."},
    [MF_WAIT] = {"leaderrun_lease_wait_seconds_total", "counter", "Seconds this process spent waiting for the lease."},
    [MF_COMMAND_START] = {"leaderrun_command_start_timestamp_seconds", "gauge",
			  "Unix time the command last started (this host's clock)."},
    [MF_COMMAND_LAST_EXIT] = {"leaderrun_command_last_exit_status", "gauge",
			      "Exit status of the command's last run (128+N: signal N)."},
    [MF_WRITE_FAILURES] = {"leaderrun_metrics_write_failures_total", "counter",
			   "Times this metrics file could not be written."},
    [MF_HISTORY_FAILURES] = {"leaderrun_history_write_failures_total", "counter",
			     "Run history writes that failed (the run went on)."},
    [MF_LEASE_HELD] = {"leaderrun_lease_held", "gauge",
		       "Whether somebody holds the lease now (1) or not (0), by the database's clock."},
    [MF_LEASE_HOLDER_INFO] = {"leaderrun_lease_holder_info", "gauge",
			      "The lease's current or last holder, as a label; always 1."},
    [MF_LEASE_TERM] = {"leaderrun_lease_term", "gauge", "The lease's fencing term: it grows by one per acquisition."},
    [MF_LEASE_EXPIRY] = {"leaderrun_lease_expiry_seconds", "gauge",
			 "Seconds until the lease expires; 0 when not held."},
    [MF_LEASE_REVOKED] = {"leaderrun_lease_revoked", "gauge",
			  "Whether the lease is held but revoked by --release (1) or not (0)."},
    [MF_LEASE_PAUSED] = {"leaderrun_lease_paused", "gauge", "Whether the lease is paused (1) or not (0)."},
    [MF_LEASE_LAST_EXIT] = {"leaderrun_lease_last_exit_status", "gauge",
			    "Exit status of the last run's command (128+N: signal N)."},
    [MF_LEASE_LAST_FINISH] = {"leaderrun_lease_last_finish_timestamp_seconds", "gauge",
			      "Unix time the last run finished (database clock)."},
    [MF_LEASE_LAST_SUCCESS] = {"leaderrun_lease_last_success_timestamp_seconds", "gauge",
			       "Unix time the last run that exited 0 finished (database clock; from the run history)."},
    [MF_STATUS_HISTORY] = {"leaderrun_status_history_available", "gauge",
			   "Whether the run history table could be read (1) or not (0)."},
    [MF_LEASE_STANDBYS] = {"leaderrun_lease_standbys", "gauge",
			   "Standbys waiting for the lease, alive (their session holds their lock)."},
    [MF_LEASE_STANDBY_INFO] = {"leaderrun_lease_standby_info", "gauge",
			       "A standby waiting for the lease: holder, host, healthy (its --health-cmd passes)."},
};

size_t metrics_label(char *buf, size_t len, const char *v)
{
	size_t n = 0, end = 0, k;
	bool full = false;

	for (; *v; v += k) {
		enum escape_class cls;
		unsigned cp;
		char unit[8] = "", shown[24], esc[48];
		size_t e = 0;
		k = escape_next(v, &cls, &cp);
		memcpy(unit, v, k);
		/* A control character as the text tables show it, "\x1b";
		 * then the exposition format's escapes. */
		if (cls != ESCAPE_PLAIN)
			escape_text(shown, sizeof(shown), unit);
		else
			memcpy(shown, unit, k + 1);
		for (const char *c = shown; *c; c++) {
			if (*c == '\\' || *c == '"')
				esc[e++] = '\\';
			esc[e++] = *c;
		}
		if (!full && n + e < len) {
			memcpy(buf + n, esc, e);
			end = n + e;
		} else
			full = true;
		n += e;
	}
	if (len)
		buf[end] = '\0';
	return n;
}

struct out {
	char *buf;
	size_t len, used;
	bool overflow;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->used)
		o->overflow = true;
	else
		o->used += (size_t)n;
}

static void family(struct out *o, enum metrics_family_id id)
{
	const struct metrics_family *f = &metrics_families[id];

	put(o, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

int metrics_render(const struct metrics_state *st, char *buf, size_t len)
{
	struct out o = {buf, len, 0, false};
	char l[METRICS_LABEL_MAX(LEASE_NAME_MAX)];
	const char *hist = metrics_families[MF_RENEW_DURATION].name;
	uint64_t cum = 0;

	metrics_label(l, sizeof(l), st->lease);
	buf[0] = '\0';
#define SAMPLE(id, fmt, v)                                                                                             \
	do {                                                                                                           \
		family(&o, id);                                                                                        \
		put(&o, "%s{lease=\"%s\"} " fmt "\n", metrics_families[id].name, l, v);                                \
	} while (0)
#define COUNTER(id, v) SAMPLE(id, "%" PRIu64, (uint64_t)(v))
	SAMPLE(MF_PROCESS_HOLDS, "%d", st->held ? 1 : 0);
	SAMPLE(MF_PROCESS_WAITING, "%d", st->waiting ? 1 : 0);
	SAMPLE(MF_PROCESS_TERM, "%" PRIu64, st->term);
	SAMPLE(MF_PROCESS_SLOT, "%u", st->slot);
	family(&o, MF_PROCESS_ROLE);
	for (enum role_kind k = ROLE_STANDBY; k <= ROLE_DEMOTING; k++)
		put(&o, "%s{lease=\"%s\",role=\"%s\"} %d\n", metrics_families[MF_PROCESS_ROLE].name, l, role_name(k),
		    st->role ? strcmp(st->role, role_name(k)) == 0 : k == ROLE_STANDBY);
	COUNTER(MF_ACQUISITIONS, st->acquisitions);
	COUNTER(MF_LOSSES, st->losses);
	COUNTER(MF_REVOCATIONS, st->revocations);
	family(&o, MF_HANDOVERS);
	for (int k = 0; k < METRICS_HANDOVERS; k++)
		put(&o, "%s{lease=\"%s\",reason=\"%s\"} %" PRIu64 "\n", metrics_families[MF_HANDOVERS].name, l,
		    (const char *[]){"released", "preempted", "switched_over"}[k], st->handovers[k]);
	COUNTER(MF_PREEMPTIONS, st->preemptions);
	COUNTER(MF_RELEASES, st->releases);
	COUNTER(MF_RENEW_FAILURES, st->renew_failures);
	COUNTER(MF_TIMEOUTS, st->timeouts);
	family(&o, MF_RENEW_DURATION);
	for (int i = 0; i < METRICS_NBUCKETS; i++) {
		cum += st->bucket_count[i];
		put(&o, "%s_bucket{lease=\"%s\",le=\"%g\"} %" PRIu64 "\n", hist, l, st->bucket_le[i], cum);
	}
	put(&o, "%s_bucket{lease=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", hist, l, st->renews);
	put(&o, "%s_sum{lease=\"%s\"} %.6f\n", hist, l, st->renew_sum_s);
	put(&o, "%s_count{lease=\"%s\"} %" PRIu64 "\n", hist, l, st->renews);
	if (st->margin_s >= 0)
		SAMPLE(MF_DEADLINE_MARGIN, "%.6f", st->margin_s);
	if (st->last_renew_time > 0)
		SAMPLE(MF_LAST_RENEW, "%.3f", st->last_renew_time);
	SAMPLE(MF_WAIT, "%.3f", st->wait_s);
	if (st->command_start > 0)
		SAMPLE(MF_COMMAND_START, "%.3f", st->command_start);
	if (st->have_exit)
		SAMPLE(MF_COMMAND_LAST_EXIT, "%d", st->last_exit);
	COUNTER(MF_WRITE_FAILURES, st->write_failures);
	COUNTER(MF_HISTORY_FAILURES, st->history_failures);
#undef SAMPLE
#undef COUNTER
	return o.overflow ? -1 : (int)o.used;
}

int metrics_path(const char *pattern, const char *lease, char *out, size_t len)
{
	size_t k = 0;

	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			if (k + 1 >= len)
				return -1;
			out[k++] = *p;
			continue;
		}
		p++;
		if (*p == '%') {
			if (k + 1 >= len)
				return -1;
			out[k++] = '%';
		} else if (*p == 'l') {
			for (const char *q = lease; *q; q++) {
				char c = *q;
				if (k + 1 >= len)
					return -1;
				out[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
						   c == '.' || c == '_' || c == '-'
					       ? c
					       : '_';
			}
		} else
			return -1;
	}
	if (k >= len)
		return -1;
	out[k] = '\0';
	return 0;
}

struct metrics {
	struct bgthread t;
	char path[4096], lock_path[4200];
	char lease[LEASE_NAME_MAX + 1];
	int lock_fd;	    /* flock'd PATH.lock: this process owns PATH; -1 not yet */
	bool refused;	    /* another process owns PATH: write nothing */
	bool failing;	    /* the last write failed (logged once) */
	int64_t refresh_us; /* rewrite this often while waiting (the wait counter grows) */

	/* Guarded by t.lock (t.quit: metrics_stop came; t.detached: it left
	 * the thread behind, which frees M). */
	struct metrics_state st;
	int64_t wait_started; /* CLOCK_BOOTTIME us; 0: not waiting */
	double wait_done_s;
	bool dirty, writing;
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Takes PATH.lock, so that two processes given one path do not take
 * turns overwriting each other's file: the first keeps it, the second
 * writes nothing and says so. Returns 0 owned, -1 cannot tell yet
 * (missing directory: retried on the next write), 1 refused. */
static int metrics_own(struct metrics *m, char *why, size_t whylen)
{
	int fd;

	if (m->lock_fd >= 0)
		return 0;
	fd = open(m->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", m->lock_path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return 1;
	}
	m->lock_fd = fd;
	return 0;
}

/* One write of ST (a copy taken under the lock). */
static void metrics_flush(struct metrics *m, struct metrics_state *st)
{
	/* Room for every sample with the longest lease name, each of its
	 * bytes escaped. */
	char text[40960], why[4400] = "";
	int n, owned;

	if (m->refused)
		return;
	owned = metrics_own(m, why, sizeof(why));
	if (owned == 1) {
		m->refused = true;
		log_warn("--metrics-file %s is written by another leaderrun (it holds %s); this one writes none: give "
			 "each process its own file, e.g. with %%l for the lease name",
			 m->path, m->lock_path);
		return;
	}
	n = owned == 0 ? metrics_render(st, text, sizeof(text)) : -1;
	if (owned == 0 && n < 0)
		snprintf(why, sizeof(why), "the metrics do not fit %zu bytes", sizeof(text));
	if (n >= 0 && atomicfile_write(m->path, text, (size_t)n, why, sizeof(why)) == 0) {
		if (m->failing)
			log_warn("--metrics-file %s is written again", m->path);
		m->failing = false;
		return;
	}
	bgthread_lock(&m->t);
	m->st.write_failures++;
	bgthread_unlock(&m->t);
	if (!m->failing)
		log_warn("--metrics-file: cannot write (%s); the command is not affected, retrying at the next change",
			 why);
	m->failing = true;
}

/* Lock held: sleeps until there is something to write or the thread is
 * to quit. While waiting, the wait counter grows: a rewrite every
 * refresh_us then. (A change of wait_started sets dirty: the deadline
 * holds for the whole sleep.) */
static void metrics_sleep(struct metrics *m)
{
	int64_t until = m->wait_started ? timing_now() + m->refresh_us : 0;

	while (!m->dirty && !m->t.quit)
		if (bgthread_wait(&m->t, until) == ETIMEDOUT)
			m->dirty = true;
}

static void *metrics_main(void *arg)
{
	struct metrics *m = arg;
	struct metrics_state st;
	bool detached;

	bgthread_lock(&m->t);
	for (;;) {
		metrics_sleep(m);
		if (!m->dirty)
			break; /* quit, and the last write is done */
		m->dirty = false;
		st = m->st;
		st.wait_s =
		    m->wait_done_s + (m->wait_started ? (double)(timing_now() - m->wait_started) / USEC_PER_SEC : 0);
		m->writing = true;
		bgthread_unlock(&m->t);
		metrics_flush(m, &st);
		bgthread_lock(&m->t);
		m->writing = false;
		bgthread_idle(&m->t);
	}
	detached = m->t.detached;
	bgthread_idle(&m->t);
	bgthread_unlock(&m->t);
	if (detached) {
		if (m->lock_fd >= 0)
			close(m->lock_fd);
		free(m);
	}
	return NULL;
}

struct metrics *metrics_start(const char *pattern, const char *lease, const struct timing *t)
{
	struct metrics *m;
	/* le boundaries as fractions of the renew interval: from well under a
	 * millisecond at ttl 1s, up to the whole interval (a renew that slow
	 * has eaten the retry room before the stop signal). */
	static const double frac[METRICS_NBUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};

	if (!pattern)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (metrics_path(pattern, lease, m->path, sizeof(m->path)) < 0) {
		log_warn("--metrics-file %s: not a usable path (only %%l and %%%% may follow a %%); no metrics",
			 pattern);
		free(m);
		return NULL;
	}
	snprintf(m->lock_path, sizeof(m->lock_path), "%s.lock", m->path);
	snprintf(m->lease, sizeof(m->lease), "%s", lease);
	m->st.lease = m->lease;
	m->st.margin_s = -1;
	for (int i = 0; i < METRICS_NBUCKETS; i++)
		m->st.bucket_le[i] = frac[i] * (double)t->renew_us / USEC_PER_SEC;
	m->refresh_us = t->renew_us;
	m->lock_fd = -1;
	m->dirty = true;
	bgthread_init(&m->t);
	if (bgthread_start(&m->t, metrics_main, m) != 0) {
		log_warn("--metrics-file: cannot start its thread; no metrics");
		bgthread_destroy(&m->t);
		free(m);
		return NULL;
	}
	return m;
}

#define UPDATE(m, body)                                                                                                \
	do {                                                                                                           \
		if (!(m))                                                                                              \
			return;                                                                                        \
		bgthread_lock(&(m)->t);                                                                                \
		body;                                                                                                  \
		(m)->dirty = true;                                                                                     \
		bgthread_wake(&(m)->t);                                                                                \
		bgthread_unlock(&(m)->t);                                                                              \
	} while (0)

void metrics_role(struct metrics *m, const char *role)
{
	if (!m)
		return;
	bgthread_lock(&m->t);
	/* Said at every step of a term; the file changes only with it. */
	if (m->st.role != role) {
		m->st.role = role;
		m->dirty = true;
		bgthread_wake(&m->t);
	}
	bgthread_unlock(&m->t);
}

void metrics_waiting(struct metrics *m, bool waiting)
{
	UPDATE(m, {
		int64_t now = timing_now();
		if (waiting && !m->wait_started)
			m->wait_started = now;
		else if (!waiting && m->wait_started) {
			m->wait_done_s += (double)(now - m->wait_started) / USEC_PER_SEC;
			m->wait_started = 0;
		}
		m->st.waiting = waiting;
	});
}

void metrics_acquired(struct metrics *m, unsigned slot, uint64_t term)
{
	UPDATE(m, {
		m->st.held = true;
		m->st.slot = slot;
		m->st.term = term;
		m->st.acquisitions++;
		m->st.last_renew_time = wall_now();
	});
}

void metrics_renewed(struct metrics *m, int64_t latency_us, int64_t margin_us)
{
	UPDATE(m, {
		double s = (double)latency_us / USEC_PER_SEC;
		for (int i = 0; i < METRICS_NBUCKETS; i++)
			if (s <= m->st.bucket_le[i]) {
				m->st.bucket_count[i]++;
				break;
			}
		m->st.renews++;
		m->st.renew_sum_s += s;
		m->st.margin_s = margin_us > 0 ? (double)margin_us / USEC_PER_SEC : 0;
		m->st.last_renew_time = wall_now();
	});
}

void metrics_renew_failed(struct metrics *m)
{
	UPDATE(m, m->st.renew_failures++);
}

void metrics_lost(struct metrics *m)
{
	UPDATE(m, {
		m->st.losses++;
		m->st.held = false;
	});
}

void metrics_revoked(struct metrics *m, enum metrics_handover why)
{
	UPDATE(m, {
		m->st.revocations++;
		m->st.handovers[why]++;
	});
}

void metrics_preempting(struct metrics *m)
{
	UPDATE(m, m->st.preemptions++);
}

void metrics_timed_out(struct metrics *m)
{
	UPDATE(m, m->st.timeouts++);
}

void metrics_released(struct metrics *m)
{
	UPDATE(m, {
		m->st.releases++;
		m->st.held = false;
	});
}

void metrics_not_held(struct metrics *m)
{
	UPDATE(m, m->st.held = false);
}

void metrics_command_started(struct metrics *m)
{
	UPDATE(m, m->st.command_start = wall_now());
}

void metrics_command_exited(struct metrics *m, int status)
{
	UPDATE(m, {
		m->st.have_exit = true;
		m->st.last_exit = status;
	});
}

void metrics_history_failed(struct metrics *m)
{
	UPDATE(m, m->st.history_failures++);
}

void metrics_stop(struct metrics *m, int64_t until)
{
	bool done;

	if (!m)
		return;
	bgthread_lock(&m->t);
	m->st.held = false;
	m->st.waiting = false;
	if (m->wait_started) {
		m->wait_done_s += (double)(timing_now() - m->wait_started) / USEC_PER_SEC;
		m->wait_started = 0;
	}
	m->dirty = true;
	bgthread_quit(&m->t);
	/* The last write says "not held"; a filesystem that hangs is left
	 * behind with the thread, as the database worker is. */
	while ((m->dirty || m->writing) && bgthread_wait_idle(&m->t, until) == 0)
		;
	done = !m->dirty && !m->writing;
	if (!done)
		bgthread_leave(&m->t);
	bgthread_unlock(&m->t);
	if (!done)
		return;
	bgthread_join(&m->t);
	if (m->lock_fd >= 0)
		close(m->lock_fd);
	bgthread_destroy(&m->t);
	free(m);
}
