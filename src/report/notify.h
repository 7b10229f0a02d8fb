/* Pings (Healthchecks.io style) and webhooks, sent from a thread of their
 * own with timeouts and retries, so that they never delay a renew or a
 * kill. The only file that includes <curl/curl.h>. */
#ifndef LEADERRUN_NOTIFY_H
#define LEADERRUN_NOTIFY_H

#include <stdint.h>

#include "cli/options.h"

struct notify;

/* Before any thread starts (curl_global_init). */
int notify_library_init(void);

/* Starts the sender for O's --ping and --notify URLs; NULL when there are
 * none (or on failure, which is logged: notifications are never fatal). */
struct notify *notify_start(const struct options *o);

/* Queues EVENT ("acquired", "lost", "timed_out", "released", "exited", and
 * for pings "start"). EXIT_STATUS -1: none. Never blocks; a full queue
 * drops the event with a warning. */
void notify_event(struct notify *n, const char *event, uint64_t term, int exit_status, int64_t duration_ms);

/* With --slots above 1, the slot this run holds, for the events after it:
 * terms count per slot, so a receiver needs it to tell holders apart. */
void notify_set_slot(struct notify *n, unsigned slot);

/* This instance's role from now on (a string that lives for ever,
 * role_name's): the bodies of --notify say it. */
void notify_set_role(struct notify *n, const char *role);

/* Delivers what is queued, until the queue is empty or DEADLINE
 * (CLOCK_BOOTTIME us) passes, then stops the thread and frees N. */
void notify_finish(struct notify *n, int64_t deadline);

/* URL without user:password@ and without ?query, for messages. */
void notify_redact(const char *url, char *buf, size_t len);

#endif
