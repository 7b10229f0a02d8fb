/* The pauses of an instance whose promotes fail (backoff.h). */
#include "backoff.h"

/* BASE doubled N times, up to CAP (or BASE, if larger). Doubling stops at
 * the cap, so nothing overflows and the loop is short whatever N is. */
static int64_t backoff_double(int64_t base, unsigned n, int64_t cap)
{
	int64_t us = base;

	if (base >= cap)
		return base;
	for (unsigned i = 0; i < n && us > 0 && us < cap; i++)
		us *= 2;
	return us < cap ? us : cap;
}

int64_t backoff_compete(int64_t retry_us, int64_t ttl_us, unsigned failed)
{
	return backoff_double(retry_us, failed, ttl_us);
}

int64_t backoff_preempt(int64_t delay_us, int64_t retry_us, unsigned failed)
{
	if (failed == 0)
		return delay_us;
	return backoff_double(delay_us > retry_us ? delay_us : retry_us, failed, BACKOFF_PREEMPT_MAX_US);
}
