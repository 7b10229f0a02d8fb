/* What the soak's mixes share (soak.c, schedule.c): processes run and
 * waited for, root's SQL on the throwaway server, the seeded random
 * numbers. */
#ifndef LEADERRUN_SOAK_UTIL_H
#define LEADERRUN_SOAK_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Runs ARGV with stdin from /dev/null and stdout to OUTPATH (NULL:
 * /dev/null); returns its exit status (128 + N for a signal), or -1. */
int soak_run_quiet(char *const argv[], const char *outpath);

/* Runs SQL Q as root on the server at SOCKET, database DB; its output, the
 * trailing blanks cut, into OUT (when OUT and LEN), by way of the file
 * PATH. Returns the client's exit status. */
int soak_sql(const char *socket, const char *db, const char *path, const char *q, char *out, size_t len);

/* PID's exit status once it exited (reaped now), else -1 after
 * TIMEOUT_MS. */
int soak_status(pid_t pid, int timeout_ms);

/* xorshift64: the next number of the sequence *STATE (never 0) seeds. */
uint64_t soak_rnd(uint64_t *state);

#endif
