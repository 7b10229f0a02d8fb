/* Process and time helpers shared by the integration harness and the soak
 * (neither needs Criterion for these). */
#ifndef LEADERRUN_TEST_PROCS_H
#define LEADERRUN_TEST_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* True if PID exists and is not a zombie (kill -0 cannot tell). */
bool procs_alive(pid_t pid);

/* CLOCK_MONOTONIC milliseconds; a sleep that survives signals. */
int64_t procs_now_ms(void);
void procs_sleep_ms(int ms);

/* Reads the `export NAME='value'` lines that scripts/sandbox-db writes to
 * DIR/env and calls SET for each. Returns -1 if the file cannot be read. */
int procs_load_env(const char *path, void (*set)(void *ctx, const char *name, const char *value), void *ctx);

/* Pids of PID's children, from /proc (its main thread's list), at most
 * MAX of them into OUT. Returns how many. */
int procs_children_of(pid_t pid, pid_t *out, int max);

#endif
