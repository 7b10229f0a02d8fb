/* --spread: which of the hosts that contend for a set of leases should
 * take each free one, so that they end up spread across them. Every
 * candidate computes the same answer from the same rows (its look at the
 * standbys' table and the held leases), with no coordinator: the free
 * leases in the order of a hash of their names, each to the candidate host
 * that holds the fewest leases so far (ties broken by a hash of lease and
 * host, so that no host is everyone's first choice). A host is a holder's
 * name up to its first ':' (the default HOST:PID:RANDOM's HOST). Pure. */
#ifndef LEADERRUN_SPREAD_H
#define LEADERRUN_SPREAD_H

#include <stdbool.h>
#include <stddef.h>

#define SPREAD_ROWS_MAX 4096

struct spread_row {
	const char *lease, *host;
	bool held; /* HOST holds LEASE now; else it waits for it, with --spread */
};

/* Of ROWS (N), the host that should take LEASE; NULL when LEASE is held or
 * has no candidate. The result points into ROWS. */
const char *spread_choice(const struct spread_row *rows, size_t n, const char *lease);

/* The host part of HOLDER into OUT. */
void spread_host(const char *holder, char *out, size_t len);

#endif
