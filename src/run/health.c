/* The rules are in health.h. */
#include "health.h"

void health_init(struct health *h, int64_t interval, unsigned retries, int64_t now)
{
	*h = (struct health){.interval = interval, .retries = retries ? retries : 1, .next_at = now};
}

int64_t health_next(const struct health *h)
{
	return h->running ? h->started_at + h->interval : h->next_at;
}

bool health_due(const struct health *h, int64_t now)
{
	return !h->running && now >= h->next_at;
}

void health_started(struct health *h, int64_t now)
{
	h->running = true;
	h->started_at = now;
	h->next_at = now + h->interval;
}

bool health_overdue(const struct health *h, int64_t now)
{
	return h->running && now >= h->started_at + h->interval;
}

enum health_change health_result(struct health *h, bool passed, int64_t now)
{
	h->running = false;
	/* Every interval from the start of the last, not from its end: a
	 * slow check does not stretch the schedule. */
	if (h->next_at < now)
		h->next_at = now;
	if (passed) {
		h->fails = 0;
		h->passes++;
		if (!h->ok && h->passes >= (h->failed_once ? h->retries : 1)) {
			h->ok = true;
			return HEALTH_BECAME_OK;
		}
		return HEALTH_SAME;
	}
	h->passes = 0;
	h->fails++;
	if (h->ok && h->fails >= h->retries) {
		h->ok = false;
		h->failed_once = true;
		return HEALTH_BECAME_FAILING;
	}
	return HEALTH_SAME;
}
