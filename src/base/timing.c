#include "timing.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

int timing_resolve(struct timing *t, char *err, size_t errlen)
{
	char a[32], b[32], c[32];
	int64_t room;

	if (t->ttl_us < TIMING_MIN_TTL_US) {
		duration_format(t->ttl_us, a, sizeof(a));
		snprintf(err, errlen, "--ttl %s is too short; use at least 100ms", a);
		return -1;
	}
	/* margin = max(min(1s, ttl/5), ttl/10): a fixed second for ordinary
	 * ttls, a fifth of short ones, a tenth of long ones (clock-rate error
	 * grows with the interval). */
	t->margin_us = max64(min64(USEC_PER_SEC, t->ttl_us / 5), t->ttl_us / 10);
	if (t->grace_us < 0)
		t->grace_us = min64(3 * USEC_PER_SEC, t->ttl_us / 4);
	if (t->renew_us < 0)
		t->renew_us = t->ttl_us / 3;

	if (t->renew_us <= 0) {
		snprintf(err, errlen, "--renew-interval must be more than 0");
		return -1;
	}
	/* At least one whole renew interval must fit between the last
	 * successful send and the stop signal, or a single lost reply stops
	 * the child. */
	room = t->ttl_us - t->margin_us - t->grace_us;
	if (room < t->renew_us) {
		duration_format(t->ttl_us, a, sizeof(a));
		duration_format(t->grace_us, b, sizeof(b));
		duration_format(t->renew_us, c, sizeof(c));
		if (room <= 0) {
			char m[32];
			duration_format(t->margin_us, m, sizeof(m));
			snprintf(err, errlen,
				 "--kill-grace %s leaves no time to renew a --ttl %s lease (margin %s); "
				 "lower --kill-grace or raise --ttl",
				 b, a, m);
		} else {
			char r[32];
			duration_format(room, r, sizeof(r));
			snprintf(err, errlen,
				 "unsafe timing: --renew-interval %s must be at most ttl - margin - kill-grace = %s "
				 "(--ttl %s, --kill-grace %s); lower --renew-interval or --kill-grace, or raise --ttl",
				 c, r, a, b);
		}
		return -1;
	}
	return 0;
}

int64_t timing_deadline(const struct timing *t, int64_t sent_at_us)
{
	return sent_at_us + t->ttl_us - t->margin_us;
}

int64_t timing_stop_at(const struct timing *t, int64_t sent_at_us)
{
	return timing_deadline(t, sent_at_us) - t->grace_us;
}

int64_t timing_attempt_budget(const struct timing *t)
{
	/* Half an interval: an attempt that hangs is cut off early enough for
	 * a retry on a fresh connection to fit before the stop signal. */
	return t->renew_us / 2;
}

int64_t timing_retry_step(const struct timing *t)
{
	return max64(10 * USEC_PER_MSEC, min64(250 * USEC_PER_MSEC, t->renew_us / 10));
}

bool timing_fits_galera(const struct timing *t, int64_t suspect_us, int64_t *have_us, int64_t *need_us)
{
	*have_us = t->ttl_us - t->margin_us - t->grace_us;
	*need_us = suspect_us + t->renew_us;
	return *have_us >= *need_us;
}

/* The clock and the timers go to the kernel directly, not through libc:
 * an LD_PRELOADed time faker (libfaketime) rewrites clock_gettime and
 * timerfd_settime in different ways, and a deadline computed on one faked
 * clock and armed on another fires at the wrong moment. The kernel's
 * CLOCK_BOOTTIME cannot be stepped; nothing in user space can fool it. */
int64_t timing_now(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

int64_t timing_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * USEC_PER_SEC + ts.tv_nsec / 1000;
}

int timing_arm(int timerfd, int64_t at_us)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (at_us > 0) {
		its.it_value.tv_sec = at_us / USEC_PER_SEC;
		its.it_value.tv_nsec = (long)(at_us % USEC_PER_SEC) * 1000;
		/* it_value 0 would disarm: a deadline already past fires now. */
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	return (int)syscall(SYS_timerfd_settime, timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int timing_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t us)
{
	struct timespec ts;

	/* pthread_cond_timedwait takes CLOCK_REALTIME: a step of the wall
	 * clock only makes one of these bounded waits longer or shorter, and
	 * every caller loops on its own deadline (timing_now). */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(us / USEC_PER_SEC);
	ts.tv_nsec += (long)(us % USEC_PER_SEC) * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(cond, mutex, &ts);
}
