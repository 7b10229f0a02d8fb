#include "bgthread.h"

#include <errno.h>

#include "duration.h"
#include "timing.h"

/* How long the owner sleeps at a time while waiting for the thread: the
 * condition variable runs on CLOCK_REALTIME (timing_cond_wait), and a step
 * of the wall clock must not stretch an exit's bounded wait by as much. */
#define BGTHREAD_IDLE_SLICE_US (20 * USEC_PER_MSEC)

void bgthread_init(struct bgthread *t)
{
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	pthread_cond_init(&t->idle, NULL);
	t->started = false;
	t->quit = false;
	t->detached = false;
}

int bgthread_start(struct bgthread *t, void *(*fn)(void *), void *arg)
{
	if (pthread_create(&t->thread, NULL, fn, arg) != 0)
		return -1;
	t->started = true;
	return 0;
}

void bgthread_lock(struct bgthread *t)
{
	pthread_mutex_lock(&t->lock);
}

void bgthread_unlock(struct bgthread *t)
{
	pthread_mutex_unlock(&t->lock);
}

void bgthread_wake(struct bgthread *t)
{
	pthread_cond_signal(&t->wake);
}

void bgthread_quit(struct bgthread *t)
{
	t->quit = true;
	pthread_cond_signal(&t->wake);
}

int bgthread_wait(struct bgthread *t, int64_t until)
{
	int64_t left;

	if (until <= 0) {
		pthread_cond_wait(&t->wake, &t->lock);
		return 0;
	}
	/* The deadline is the kernel's CLOCK_BOOTTIME, not the condition
	 * variable's clock: a wait cut short by a step of the wall clock is
	 * no timeout, and the caller's loop comes back for the rest. */
	left = until - timing_now();
	if (left > 0)
		timing_cond_wait(&t->wake, &t->lock, left);
	return timing_now() >= until ? ETIMEDOUT : 0;
}

void bgthread_idle(struct bgthread *t)
{
	pthread_cond_broadcast(&t->idle);
}

int bgthread_wait_idle(struct bgthread *t, int64_t until)
{
	int64_t left = until - timing_now();

	if (left <= 0)
		return -1;
	timing_cond_wait(&t->idle, &t->lock, left < BGTHREAD_IDLE_SLICE_US ? left : BGTHREAD_IDLE_SLICE_US);
	return 0;
}

void bgthread_leave(struct bgthread *t)
{
	t->detached = true;
	if (t->started)
		pthread_detach(t->thread);
}

void bgthread_join(struct bgthread *t)
{
	if (t->started)
		pthread_join(t->thread, NULL);
	t->started = false;
}

void bgthread_destroy(struct bgthread *t)
{
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	pthread_cond_destroy(&t->idle);
}
