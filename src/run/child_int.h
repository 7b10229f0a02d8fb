/* What the files of child.h share (child*.c). Not for use outside
 * src/run. */
#ifndef LEADERRUN_CHILD_INT_H
#define LEADERRUN_CHILD_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "child.h"

/* Forks the watcher with DEADLINE (child_watch.c), before the command;
 * keeps leaderrun's end of its pipe in C->watch_fd. Its pid, or 0 when
 * pipe or fork failed (the command then runs unwatched). */
pid_t child_start_watcher(struct child *c, int64_t deadline);

#endif
