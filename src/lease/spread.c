/* --spread's choice (spread.h): deterministic from the rows alone. */
#include "spread.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s;; c++) {
		h = (h ^ *c) * UINT64_C(0x100000001b3);
		if (!*c)
			return h;
	}
}

#define FNV_SEED UINT64_C(0xcbf29ce484222325)

/* A free lease, in the order of the choice. */
struct spread_lease {
	const char *name;
	uint64_t h;
};

static int by_hash(const void *a, const void *b)
{
	const struct spread_lease *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct spread_state {
	const struct spread_row *rows;
	size_t n;
	const char *host[SPREAD_ROWS_MAX]; /* the hosts, and the leases each holds or was given */
	unsigned load[SPREAD_ROWS_MAX];
	size_t nhosts;
	struct spread_lease free[SPREAD_ROWS_MAX];
	size_t nfree;
};

static size_t host_index(struct spread_state *st, const char *host)
{
	for (size_t k = 0; k < st->nhosts; k++)
		if (strcmp(st->host[k], host) == 0)
			return k;
	st->host[st->nhosts] = host;
	st->load[st->nhosts] = 0;
	return st->nhosts++;
}

static bool lease_held(const struct spread_state *st, const char *lease)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->rows[i].held && strcmp(st->rows[i].lease, lease) == 0)
			return true;
	return false;
}

static void spread_collect(struct spread_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct spread_row *r = &st->rows[i];
		size_t k = host_index(st, r->host);
		bool known = false;

		if (r->held) {
			st->load[k]++;
			continue;
		}
		if (lease_held(st, r->lease))
			continue;
		for (size_t f = 0; f < st->nfree && !known; f++)
			known = strcmp(st->free[f].name, r->lease) == 0;
		if (!known)
			st->free[st->nfree++] = (struct spread_lease){r->lease, fnv(FNV_SEED, r->lease)};
	}
	qsort(st->free, st->nfree, sizeof(st->free[0]), by_hash);
}

/* The candidate host of LEASE with the least load, then the lowest hash. */
static const char *spread_pick(struct spread_state *st, const char *lease)
{
	const char *best = NULL;
	size_t bk = 0;
	uint64_t bh = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct spread_row *r = &st->rows[i];
		size_t k;
		uint64_t h;
		if (r->held || strcmp(r->lease, lease) != 0)
			continue;
		k = host_index(st, r->host);
		h = fnv(fnv(FNV_SEED, lease), r->host);
		if (!best || st->load[k] < st->load[bk] || (st->load[k] == st->load[bk] && h < bh)) {
			best = r->host;
			bk = k;
			bh = h;
		}
	}
	if (best)
		st->load[bk]++;
	return best;
}

const char *spread_choice(const struct spread_row *rows, size_t n, const char *lease)
{
	struct spread_state *st = calloc(1, sizeof(*st));
	const char *choice = NULL;

	if (!st)
		return NULL;
	st->rows = rows;
	st->n = n < SPREAD_ROWS_MAX ? n : SPREAD_ROWS_MAX;
	spread_collect(st);
	for (size_t f = 0; f < st->nfree; f++) {
		const char *pick = spread_pick(st, st->free[f].name);
		if (strcmp(st->free[f].name, lease) == 0) {
			choice = pick;
			break;
		}
	}
	free(st);
	return choice;
}

void spread_host(const char *holder, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)strcspn(holder, ":"), holder);
}
