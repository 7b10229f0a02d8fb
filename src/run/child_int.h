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

/* C reset, whatever watcher it had gone, and a new watcher started with
 * DEADLINE (child_start_watcher's answer). */
pid_t child_watch_anew(struct child *c, const char *role_file, int64_t deadline);

/* The watcher's messages after the group's: a deadline that only moves
 * forward (a renew's), or one of these tags with its value. Deadlines are
 * CLOCK_BOOTTIME microseconds, far below 2^61, and pids far below too. */
#define WATCH_EXACT ((int64_t)1 << 61) /* a new term's deadline, earlier than the standby's none */
#define WATCH_HOOK  ((int64_t)1 << 62) /* a hook's group, killed with the command's; 0: none any more */
#define WATCH_HOOKS 2		       /* the hooks' groups it keeps: a term's promote and demote */
/* In a WATCH_HOOK message: the demote's slot (without it, the promote's). */
#define WATCH_DEMOTE ((int64_t)1 << 41)
/* In a WATCH_HOOK message: forget the group in the low bits, the command's
 * or a hook's (seen empty, or no longer pinned: its number may be reused). */
#define WATCH_FORGET ((int64_t)1 << 40)
#define WATCH_PID    (((int64_t)1 << 32) - 1)

#endif
