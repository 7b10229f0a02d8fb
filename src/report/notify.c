#include "notify.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The calls go through a table (dlib.h), where gcc's type checks of
 * curl_easy_setopt's arguments cannot follow: off, so that the names stay
 * plain functions. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "base/bgthread.h"
#include "base/dlib.h"
#include "base/duration.h"
#include "config.h"

#include "base/timing.h"
#include "json.h"
#include "log.h"

#define QUEUE_MAX  16
#define TIMEOUT_MS 5000L
#define ATTEMPTS   3 /* one try and two retries, as runitor does */

struct note {
	char event[16];
	const char *role; /* notify_set_role's when queued; NULL: none */
	int slot;	  /* -1: no slot held (or a lease of one slot) */
	uint64_t term;
	int exit_status;
	int64_t duration_ms;
	char ts[40];
};

struct notify {
	const struct options *o;
	struct bgthread t;
	/* Guarded by t.lock (t.quit: notify_finish came). */
	struct note q[QUEUE_MAX];
	int head, count;
	bool busy;
	bool failed;	  /* /fail or /124 went out: the run's last word; only the sender thread */
	int slot;	  /* notify_set_slot's; only the caller's thread */
	const char *role; /* notify_set_role's; only the caller's thread */
	char host[256];
};

/* libcurl is loaded only for runs that notify: linked in, it and its TLS
 * stack doubled leaderrun's start-up cost and resident memory for every
 * run (scripts/bench measured 4.1 M against 12.0 M instructions for
 * --version). The functions called, through dlib.h's table; written once
 * by notify_library_init, before any thread. */
#define CURL_API(X)                                                                                                    \
	X(curl_global_init)                                                                                            \
	X(curl_easy_init)                                                                                              \
	X(curl_easy_setopt)                                                                                            \
	X(curl_easy_perform)                                                                                           \
	X(curl_easy_getinfo)                                                                                           \
	X(curl_easy_cleanup)                                                                                           \
	X(curl_easy_strerror)                                                                                          \
	X(curl_slist_append)                                                                                           \
	X(curl_slist_free_all)

static struct {
	CURL_API(DLIB_FIELD)
} lib;

#if LEADERRUN_LAZY_LOAD
static int notify_library_load(void)
{
	static const struct dlib_sym syms[] = {CURL_API(DLIB_SYM)};
	char err[512];

	return dlib_load("libcurl.so.4", RTLD_NOW, "libcurl", syms, sizeof(syms) / sizeof(syms[0]), err, sizeof(err))
		   ? 0
		   : -1;
}
#else
/* A static build (-Dprefer_static=true) links libcurl in: there is no
 * dlopen. */
static int notify_library_load(void)
{
	CURL_API(DLIB_LINK)
	return 0;
}
#endif

int notify_library_init(void)
{
	if (notify_library_load() < 0)
		return -1;
	if (lib.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		/* Disabled, as the caller says: notify_start tests the table. */
		memset(&lib, 0, sizeof(lib));
		return -1;
	}
	return 0;
}

void notify_redact(const char *url, char *buf, size_t len)
{
	const char *scheme_end = strstr(url, "://");
	const char *start = scheme_end ? scheme_end + 3 : url;
	const char *path = start + strcspn(start, "/?#");
	const char *at = memchr(start, '@', (size_t)(path - start));
	size_t plen = strcspn(path, "?#");

	snprintf(buf, len, "%.*s%.*s%.*s", (int)(start - url), url, (int)(path - (at ? at + 1 : start)),
		 at ? at + 1 : start, (int)plen, path);
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/* One request with retries: a GET, or a POST of BODY as TYPE. Returns true
 * when the server answered 2xx. */
static bool notify_send(const char *url, const char *body, const char *type)
{
	char shown[512];
	long code = 0;
	CURLcode rc = CURLE_OK;

	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		CURL *c = lib.curl_easy_init();
		struct curl_slist *h = NULL;
		if (!c)
			return false;
		lib.curl_easy_setopt(c, CURLOPT_URL, url);
		lib.curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, TIMEOUT_MS);
		lib.curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		lib.curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
		lib.curl_easy_setopt(c, CURLOPT_USERAGENT, "leaderrun");
		lib.curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		if (body) {
			h = lib.curl_slist_append(h, type);
			lib.curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
			lib.curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		}
		rc = lib.curl_easy_perform(c);
		if (rc == CURLE_OK)
			lib.curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		lib.curl_slist_free_all(h);
		lib.curl_easy_cleanup(c);
		if (rc == CURLE_OK && code >= 200 && code < 300)
			return true;
		if (attempt + 1 < ATTEMPTS)
			usleep(500000);
	}
	notify_redact(url, shown, sizeof(shown));
	if (rc != CURLE_OK)
		log_warn("notification to %s failed: %s", shown, lib.curl_easy_strerror(rc));
	else
		log_warn("notification to %s failed: HTTP %ld", shown, code);
	return false;
}

/* --ping: Healthchecks.io's /start, /<exit status>, /fail and /log; /124
 * with a body for --max-runtime. */
static void notify_ping(struct notify *n, const struct note *e)
{
	const struct options *o = n->o;
	char url[2048], body[512], status[16], d[32];
	const char *ping = NULL, *note = NULL;
	size_t l;

	if (strcmp(e->event, "start") == 0)
		ping = "start";
	else if (strcmp(e->event, "timed_out") == 0 && !n->failed) {
		/* leaderrun's own exit status, as timeout(1)'s: a failure on
		 * the check, whose log then says it was the time limit (the
		 * ping's body), not the command failing by itself. The
		 * command's exit after the stop says no more. */
		duration_format(o->max_runtime_us, d, sizeof(d));
		snprintf(body, sizeof(body),
			 "leaderrun: lease %s, term %llu: timed out: the command ran for its --max-runtime %s "
			 "and was stopped; exit status 124\n",
			 o->lease, (unsigned long long)e->term, d);
		ping = "124";
		note = body;
		n->failed = true;
	} else if (strcmp(e->event, "exited") == 0 && e->exit_status >= 0 && !n->failed) {
		/* After /fail, a command that exited 0 on SIGTERM must not turn
		 * the check green again. */
		snprintf(status, sizeof(status), "%d", e->exit_status);
		ping = status;
	} else if (strcmp(e->event, "lost") == 0) {
		ping = "fail";
		n->failed = true;
	} else if (strcmp(e->event, "paused") == 0)
		/* Not a success or a failure: a note on the check's log that the
		 * run was skipped on purpose. */
		ping = "log";
	if (!ping)
		return;
	l = strlen(o->ping_url);
	snprintf(url, sizeof(url), "%s%s%s", o->ping_url, l && o->ping_url[l - 1] == '/' ? "" : "/", ping);
	notify_send(url, note, "Content-Type: text/plain; charset=utf-8");
}

/* --notify: one JSON body to every URL. */
static void notify_post(struct notify *n, const struct note *e)
{
	const struct options *o = n->o;
	char body[4096], qlease[800], qholder[800], qhost[600], status[16], slot[24], role[32] = "";

	json_quote(qlease, sizeof(qlease), o->lease);
	json_quote(qholder, sizeof(qholder), o->holder);
	json_quote(qhost, sizeof(qhost), n->host);
	if (e->exit_status >= 0)
		snprintf(status, sizeof(status), "%d", e->exit_status);
	else
		snprintf(status, sizeof(status), "null");
	/* "slot" only for a lease of several slots: a one-slot body is as it
	 * always was. */
	if (o->slots > 1 && e->slot >= 0)
		snprintf(slot, sizeof(slot), ",\"slot\":%d", e->slot);
	else if (o->slots > 1)
		snprintf(slot, sizeof(slot), ",\"slot\":null");
	else
		slot[0] = '\0';
	/* The role as it was when the event happened (role_name's). */
	if (e->role)
		snprintf(role, sizeof(role), ",\"role\":\"%s\"", e->role);
	snprintf(body, sizeof(body),
		 "{\"event\":\"%s\",\"lease\":%s%s,\"holder\":%s%s,\"term\":%llu,\"exit_status\":%s,"
		 "\"duration_ms\":%lld,\"host\":%s,\"ts\":\"%s\"}",
		 e->event, qlease, slot, qholder, role, (unsigned long long)e->term, status, (long long)e->duration_ms,
		 qhost, e->ts);
	for (int i = 0; i < o->nnotify; i++)
		notify_send(o->notify_urls[i], body, "Content-Type: application/json");
}

static void notify_deliver(struct notify *n, const struct note *e)
{
	if (n->o->ping_url)
		notify_ping(n, e);
	if (n->o->nnotify > 0 && strcmp(e->event, "start") != 0)
		notify_post(n, e);
}

static void *notify_main(void *arg)
{
	struct notify *n = arg;

	bgthread_lock(&n->t);
	for (;;) {
		struct note e;
		while (n->count == 0 && !n->t.quit)
			bgthread_wait(&n->t, 0);
		if (n->count == 0 && n->t.quit)
			break;
		e = n->q[n->head];
		n->head = (n->head + 1) % QUEUE_MAX;
		n->count--;
		n->busy = true;
		bgthread_unlock(&n->t);
		notify_deliver(n, &e);
		bgthread_lock(&n->t);
		n->busy = false;
		bgthread_idle(&n->t);
	}
	bgthread_unlock(&n->t);
	return NULL;
}

struct notify *notify_start(const struct options *o)
{
	struct notify *n;

	if ((!o->ping_url && o->nnotify == 0) || !lib.curl_easy_init)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n) {
		log_warn("notifications disabled: out of memory");
		return NULL;
	}
	n->o = o;
	n->slot = -1;
	if (gethostname(n->host, sizeof(n->host)) != 0)
		snprintf(n->host, sizeof(n->host), "localhost");
	bgthread_init(&n->t);
	if (bgthread_start(&n->t, notify_main, n) != 0) {
		log_warn("notifications disabled: cannot start their thread");
		bgthread_destroy(&n->t);
		free(n);
		return NULL;
	}
	return n;
}

void notify_set_slot(struct notify *n, unsigned slot)
{
	if (n)
		n->slot = (int)slot;
}

void notify_set_role(struct notify *n, const char *role)
{
	if (n)
		n->role = role;
}

void notify_event(struct notify *n, const char *event, uint64_t term, int exit_status, int64_t duration_ms)
{
	struct note *e;
	struct timespec now;
	struct tm tm;
	size_t k;

	if (!n)
		return;
	bgthread_lock(&n->t);
	if (n->count == QUEUE_MAX) {
		bgthread_unlock(&n->t);
		log_warn("notification '%s' dropped: the queue is full", event);
		return;
	}
	e = &n->q[(n->head + n->count) % QUEUE_MAX];
	snprintf(e->event, sizeof(e->event), "%s", event);
	e->slot = n->slot;
	e->role = n->role;
	e->term = term;
	e->exit_status = exit_status;
	e->duration_ms = duration_ms;
	/* Wall-clock time for the receiver; no interval is measured with it. */
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	k = strftime(e->ts, sizeof(e->ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(e->ts + k, sizeof(e->ts) - k, ".%03ldZ", now.tv_nsec / 1000000);
	n->count++;
	bgthread_wake(&n->t);
	bgthread_unlock(&n->t);
}

void notify_finish(struct notify *n, int64_t deadline)
{
	bool drained;

	if (!n)
		return;
	bgthread_lock(&n->t);
	while ((n->count > 0 || n->busy) && bgthread_wait_idle(&n->t, deadline) == 0)
		;
	drained = n->count == 0 && !n->busy;
	bgthread_quit(&n->t);
	if (!drained)
		bgthread_leave(&n->t);
	bgthread_unlock(&n->t);
	if (!drained) {
		/* A request still hangs: leave it behind, the process exits. */
		log_warn("notifications not delivered in time; giving up on them");
		return;
	}
	bgthread_join(&n->t);
	bgthread_destroy(&n->t);
	free(n);
}
