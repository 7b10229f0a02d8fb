/* What leaderrun reads of a Galera node (MariaDB Galera Cluster, Percona
 * XtraDB Cluster): pure parsing, kept apart from db_probe.c for the unit tests. */
#ifndef LEADERRUN_GALERA_H
#define LEADERRUN_GALERA_H

#include <stdint.h>

/* wsrep_local_state of a node that serves clients. */
#define GALERA_SYNCED 4

/* evs.suspect_timeout from a wsrep_provider_options string ("a = 1; b =
 * PT5S; ..."), in microseconds; 0 when absent or unreadable. */
int64_t galera_suspect_timeout_us(const char *provider_options);

/* An ISO 8601 duration as Galera writes them (PT5S, PT1.5S, PT1M30S,
 * P1DT2H) in microseconds; -1 if malformed. */
int64_t galera_parse_duration(const char *text, const char **end);

/* "Synced", "Donor/Desynced", ... for a wsrep_local_state number. */
const char *galera_state_name(int64_t state);

#endif
