/* The scheduled soak's checks (schedule.c runs it): every slot of the
 * soak's span judged from the job's log (sched-job.sh) and the instances'
 * "skipped" lines, then the summary table.
 *
 * A slot whose time lay while an instance was up has exactly one attempt
 * whose job reached its end, unless an instance said it was skipped (an
 * earlier slot's run still ran): then it has none. A slot whose time lay
 * while every instance was down (before the first start, an alldown fault,
 * after the wind-down) is run only if it is the latest one before the
 * first start again, within the window: once, attempt 1; the older ones
 * never. Every slot's attempts count 1, 2, ... with growing terms, none
 * after the one that reached its end, and the jobs' flocks saw no two runs
 * at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"

int64_t sk_parse_time(const char *t)
{
	struct tm tm = {0};

	if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000;
}

int sk_read_log(const struct sk *s, struct sk_line *l, int max)
{
	char line[256], slot[32];
	int n = 0;
	FILE *f = fopen(s->log, "r");

	while (f && n < max && fgets(line, sizeof(line), f)) {
		struct sk_line *x = &l[n];
		const char *rest = line;
		/* A violation's WHAT comes first: skipped as the word is. */
		if (!strncmp(line, "violation ", 10))
			rest = line + 10;
		if (sscanf(rest, "%*s %31s %u %llu %lld %d", slot, &x->attempt, &x->term, (long long *)&x->ns,
			   &x->pid) != 5 &&
		    strncmp(line, "violation ", 10) != 0)
			continue;
		sscanf(line, "%11s", x->what);
		x->slot_us = sk_parse_time(slot);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* The slots the instances said were skipped, into SKIP (at most MAX);
 * returns how many. "the T slot was skipped: ...", "N slots from T1 to T2
 * were skipped: ..." (the holder's), "the T slot is skipped: ..." (a
 * waiter's, at -v). */
static int read_skipped(const struct sk *s, int64_t *skip, int max)
{
	char path[340], line[1024], a[32], b[32];
	int n = 0;

	for (int i = 0; i < SK_INSTANCES; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/instance%d.err", s->dir, i);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			const char *p;
			int64_t from, to;
			if ((p = strstr(line, " slots from ")) &&
			    sscanf(p, " slots from %31s to %31s were skipped:", a, b) == 2)
				from = sk_parse_time(a), to = sk_parse_time(b);
			else if ((p = strstr(line, " slot was skipped: ")) && p - line > 24)
				from = to = sk_parse_time(p - 20);
			/* -v: a waiter's word for a slot that came while the lease
			 * was held (its holder may be the one cut off, who cannot
			 * say it). */
			else if ((p = strstr(line, " slot is skipped: ")) && p - line > 24)
				from = to = sk_parse_time(p - 20);
			else
				continue;
			for (int64_t t = from; t >= 0 && t <= to && n < max; t += SK_PERIOD_US)
				skip[n++] = t;
		}
		fclose(f);
	}
	return n;
}

static bool has(const int64_t *v, int n, int64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void fmt(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The all-down span slot AT lay in, or NULL. */
static const struct sk_down *down_at(const struct sk *s, int64_t at)
{
	for (int i = 0; i < s->ndown; i++)
		if (s->down[i].from_us <= at && at < s->down[i].to_us)
			return &s->down[i];
	return NULL;
}

/* Whether some instance's log says it released TERM. */
static bool released(const struct sk *s, unsigned long long term)
{
	char path[340], line[1024], want[64];
	bool yes = false;

	snprintf(want, sizeof(want), "released term %llu\n", term);
	for (int i = 0; i < SK_INSTANCES && !yes; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/instance%d.err", s->dir, i);
		if (!(f = fopen(path, "r")))
			continue;
		while (!yes && fgets(line, sizeof(line), f))
			yes = strstr(line, want) != NULL;
		fclose(f);
	}
	return yes;
}

/* Whether end line E came while the soak had its run's holder cut off,
 * and its release never reached the server: the others cannot tell that
 * end from a loss (the lease ran out unreleased), and run the slot again.
 * Counted apart (the table's row), and said. */
static bool unrecorded_end(const struct sk *s, const struct sk_line *e)
{
	for (int c = 0; c < s->st.ncut; c++)
		if (s->st.cut[c].term == e->term && e->ns >= s->st.cut[c].from_ns && e->ns <= s->st.cut[c].to_ns &&
		    !released(s, e->term)) {
			char when[32];
			fmt(e->slot_us, when, sizeof(when));
			printf("soak: slot %s: attempt %u (term %llu) ended %lld ms into its holder's cut-off, "
			       "unreleased\n",
			       when, e->attempt, e->term, (long long)(e->ns - s->st.cut[c].from_ns) / 1000000);
			return true;
		}
	return false;
}

/* One slot's attempts, in the log's order: 1, 2, ... with growing terms,
 * none after an end. Returns the ends; *STARTS, *FIRST: the starts, the
 * first's attempt. */
static int check_attempts(struct sk *s, const struct sk_line *l, int n, int64_t at, int *starts, unsigned *first,
			  int *unrecorded)
{
	const struct sk_line *prev = NULL;
	int ends = 0;
	char when[32];

	fmt(at, when, sizeof(when));
	*starts = 0;
	*first = 0;
	*unrecorded = 0;
	for (int k = 0; k < n; k++) {
		if (l[k].slot_us != at)
			continue;
		if (!strcmp(l[k].what, "end")) {
			if (unrecorded_end(s, &l[k]))
				++*unrecorded;
			else
				ends++;
			continue;
		}
		if (strcmp(l[k].what, "start") != 0)
			continue;
		if (!(*starts)++)
			*first = l[k].attempt;
		if (ends) {
			s->st.extra++;
			sk_fail(s, "slot %s: attempt %u (term %llu) began after the slot's run ended", when,
				l[k].attempt, l[k].term);
		}
		if (prev && (l[k].attempt != prev->attempt + 1 || l[k].term <= prev->term)) {
			s->st.bad_reruns++;
			sk_fail(s, "slot %s: attempt %u (term %llu) followed attempt %u (term %llu)", when,
				l[k].attempt, l[k].term, prev->attempt, prev->term);
		}
		s->st.reruns += l[k].attempt > 1;
		prev = &l[k];
	}
	return ends;
}

/* A slot while every instance was down (D): only the latest one before the
 * first start again runs, once, attempt 1, if that start came within the
 * window. */
static void check_down_slot(struct sk *s, const struct sk_down *d, int64_t at, int starts, int ends, unsigned first)
{
	int64_t latest = d->to_us == INT64_MAX ? -1 : (d->to_us - 1) - (d->to_us - 1) % SK_PERIOD_US;
	char when[32];

	fmt(at, when, sizeof(when));
	if (at == latest && d->to_us < at + SK_WINDOW_US) {
		/* A fault may have hit it too: then its reruns follow. */
		if (ends == 1 && first == 1)
			s->st.caught_up++;
		else
			sk_fail(s,
				"slot %s, the latest while every instance was down: %d starts (first attempt %u), "
				"%d ends; want one run to its end, attempt 1 first",
				when, starts, first, ends);
	} else if (starts == 0)
		s->st.missed++;
	else
		sk_fail(s, "slot %s, missed while every instance was down and not the latest: %d starts", when, starts);
}

/* A slot while an instance was up: run to its end exactly once, unless an
 * instance said it was skipped (SKIPPED) and nobody ran it. */
static void check_up_slot(struct sk *s, int64_t at, bool skipped, int starts, int ends)
{
	char when[32];

	fmt(at, when, sizeof(when));
	if (skipped && !starts) {
		s->st.skipped++;
		return;
	}
	if (skipped) {
		/* A false skip line (and history row): judged as any run, too. */
		s->st.skipped_ran++;
		sk_fail(s, "slot %s: an instance said it was skipped, yet it ran (%d starts, %d ends)", when, starts,
			ends);
	}
	if (ends == 1)
		s->st.ran_once++;
	else if (ends == 0) {
		s->st.missing++;
		sk_fail(s, "slot %s: no run reached its end (%d starts)", when, starts);
	} else {
		s->st.doubled++;
		sk_fail(s, "slot %s: %d runs reached their end", when, ends);
	}
}

void sk_check(struct sk *s)
{
	static struct sk_line l[SK_MAX];
	static int64_t skip[SK_MAX];
	int n = sk_read_log(s, l, SK_MAX), nskip = read_skipped(s, skip, SK_MAX);
	int64_t first = s->down[0].to_us - SK_WINDOW_US, last = s->down[s->ndown - 1].from_us + SK_PERIOD_US;

	first += SK_PERIOD_US - first % SK_PERIOD_US;
	for (int k = 0; k < n; k++)
		if (!strcmp(l[k].what, "violation")) {
			s->st.violations++;
			sk_fail(s, "overlap: a job found a lock held (slot %lld µs, attempt %u, term %llu)",
				(long long)l[k].slot_us, l[k].attempt, l[k].term);
		} else if (l[k].slot_us < first || l[k].slot_us > last) {
			s->st.extra++;
			sk_fail(s, "a run of a slot outside the soak's span (%lld µs)", (long long)l[k].slot_us);
		}
	for (int64_t at = first; at <= last; at += SK_PERIOD_US) {
		const struct sk_down *d = down_at(s, at);
		unsigned att;
		int starts, unrec, ends = check_attempts(s, l, n, at, &starts, &att, &unrec);

		/* An end that no instance could record, then a rerun's: counted
		 * apart, the slot judged by the recorded one. */
		if (unrec && ends + unrec >= 2)
			s->st.cut_doubled++;
		if (unrec && !ends)
			ends = 1;
		s->st.slots++;
		if (d)
			check_down_slot(s, d, at, starts, ends, att);
		else
			check_up_slot(s, at, has(skip, nskip, at), starts, ends);
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void sk_table(const struct sk *s)
{
	const struct sk_stats *t = &s->st;
	int64_t ms[SK_MAX];

	memcpy(ms, t->rerun_ms, sizeof(ms[0]) * (size_t)t->nrerun);
	qsort(ms, (size_t)t->nrerun, sizeof(ms[0]), cmp64);
	printf("\n| soak --schedule '@every 3s' --catch-up 30s | value |\n|---|---|\n");
	printf("| episodes | %d |\n", t->episodes);
	printf("| slots in the span | %d |\n", t->slots);
	printf("| slots run once to their end | %d |\n", t->ran_once);
	printf("| slots skipped (an earlier slot's run still ran, per the instances' logs) | %d |\n", t->skipped);
	printf("| slots while every instance was down: the latest run late, once (attempt 1) / older, not run | %d / "
	       "%d |\n",
	       t->caught_up, t->missed);
	printf("| reruns (attempt 2 or more) | %d |\n", t->reruns);
	printf("| fault to the rerun's start: median / max | %lld / %lld ms |\n",
	       t->nrerun ? (long long)ms[t->nrerun / 2] : 0LL, t->nrerun ? (long long)ms[t->nrerun - 1] : 0LL);
	printf("| faults that found the run ended (no rerun due) | %d |\n", t->no_run);
	printf("| overlaps (the jobs' flocks: two runs at once, or two attempts of a slot) | %d |\n", t->violations);
	printf("| slots with no run that reached its end | %d |\n", t->missing);
	printf("| slots with two runs that reached their end | %d |\n", t->doubled);
	printf("| slots run to their end twice: the first job ended while its holder was cut off, its release "
	       "lost (no instance can tell that from a lost run: not a failed check) | %d |\n",
	       t->cut_doubled);
	printf("| reruns whose attempt was not one more, or whose term did not grow | %d |\n", t->bad_reruns);
	printf("| runs after a slot's end, or outside the span | %d |\n", t->extra);
	printf("| slots said skipped that ran | %d |\n", t->skipped_ran);
	printf("| ttl | %d ms |\n", s->ttl_ms);
	printf("| faults |");
	for (int f = 0, first = 1; f < SK_FAULTS; f++)
		if (t->per_fault[f]) {
			printf("%s %s %d", first ? "" : ",", sk_fault_names[f], t->per_fault[f]);
			first = 0;
		}
	printf(" |\n| failed checks | %d |\n", t->failures);
}
