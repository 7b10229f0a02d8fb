/* Signal names without the "SIG" prefix, as glibc's sigabbrev_np gives them,
 * on any C library (musl has no sigabbrev_np: the static build). */
#ifndef LEADERRUN_SIGNAME_H
#define LEADERRUN_SIGNAME_H

/* "TERM" for SIGTERM; NULL for a number without a name (real-time ones). */
const char *signame_abbrev(int sig);

#endif
