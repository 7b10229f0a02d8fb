/* Default lease and holder names. */
#ifndef LEADERRUN_LEASENAME_H
#define LEADERRUN_LEASENAME_H

#include <stddef.h>

/* A lease name derived from the command line: readable, and the same on
 * every host for the same argv. Long or unprintable command lines keep a
 * readable prefix and end in a hash of the exact bytes, so two different
 * command lines never share a name by being shortened alike. */
void leasename_from_argv(char *const argv[], char *out, size_t len);

/* A lease name derived from a shell string (-c STRING): STRING itself when
 * it is plain (printable ASCII without '~', words separated by single
 * spaces, at most the readable length), which is also the name of the same
 * words given as COMMAND; otherwise a readable prefix and a hash of the
 * exact bytes, so two different strings never share a name. */
void leasename_from_string(const char *s, char *out, size_t len);

/* "HOST:PID:RANDOM": unique per process, and says where to look. */
void leasename_holder(char *out, size_t len);

/* "USER@HOST": who paused a lease, for the operators who read --status. */
void leasename_operator(char *out, size_t len);

#endif
