/* The lease arithmetic in one place: the local deadline is the last
 * successful renew's send time plus ttl minus the margin; the kill signal
 * goes kill-grace before it (SAFETY in leaderrun-safety(7)).
 *
 * All local times are microseconds on CLOCK_BOOTTIME: monotonic, and it keeps
 * counting while the machine is suspended, so a laptop lid or a VM pause
 * cannot make a deadline look further away than it is. */
#ifndef LEADERRUN_TIMING_H
#define LEADERRUN_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

struct timing {
	int64_t ttl_us;	   /* lease length, stamped by the server */
	int64_t renew_us;  /* renew this long after the last successful send */
	int64_t grace_us;  /* kill signal this long before the deadline */
	int64_t margin_us; /* clock-rate and step allowance, SIGKILL latency */
};

#define TIMING_MIN_TTL_US INT64_C(100000)

/* Fills the unset fields (renew_us or grace_us < 0) with the defaults that
 * scale with ttl, then checks the combination. Returns 0, or -1 with a
 * message that names the number to change. */
int timing_resolve(struct timing *t, char *err, size_t errlen);

/* deadline = t_send + ttl - margin: the last instant the child may run. */
int64_t timing_deadline(const struct timing *t, int64_t sent_at_us);

/* When the child is asked to stop: deadline - grace. */
int64_t timing_stop_at(const struct timing *t, int64_t sent_at_us);

/* How long one renew attempt may take before it is abandoned. */
int64_t timing_attempt_budget(const struct timing *t);

/* The pause between failed renew attempts: a tenth of the renew interval,
 * between 10 ms and 250 ms. */
int64_t timing_retry_step(const struct timing *t);

/* On Galera, a node that drops out stalls the cluster's writes until the
 * others suspect it (evs.suspect_timeout). A renew sent just then waits
 * that long; the command must not be stopped for it:
 * ttl - margin - kill-grace >= SUSPECT_US + renew interval. Returns true
 * when T leaves that room, and the room (ttl - margin - grace) and what
 * it needs in *HAVE_US and *NEED_US. */
bool timing_fits_galera(const struct timing *t, int64_t suspect_us, int64_t *have_us, int64_t *need_us);

/* Now on CLOCK_BOOTTIME, in microseconds. */
int64_t timing_now(void);

/* Now on the wall clock (CLOCK_REALTIME), in microseconds since the epoch:
 * for times of day (a schedule's slots), never for a deadline. */
int64_t timing_wall(void);

/* Arms TIMERFD (a CLOCK_BOOTTIME timerfd) to fire at AT_US, absolute;
 * AT_US <= 0 disarms it. Only system calls: safe in a forked child. */
int timing_arm(int timerfd, int64_t at_us);

/* pthread_cond_timedwait on COND (MUTEX held) for at most US
 * microseconds; returns its result (ETIMEDOUT when the time ran out). The
 * threads that wait with a bound (notifications, metrics, history) share
 * this instead of each adding to a CLOCK_REALTIME timespec. */
int timing_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t us);

#endif
