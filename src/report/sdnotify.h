/* The systemd notify protocol (sd_notify(3)), written here: one datagram
 * per message to the AF_UNIX socket that $NOTIFY_SOCKET names, no
 * libsystemd. Every send is non-blocking and its failure is logged once
 * (-v) and otherwise ignored: systemd being slow or gone must never delay
 * a renew or a kill. The supervisor decides what to say and when; this
 * file only knows the wire format and the environment's rules. */
#ifndef LEADERRUN_SDNOTIFY_H
#define LEADERRUN_SDNOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* $NOTIFY_SOCKET as a socket address: "/path" (a file system socket) or
 * "@name" (Linux's abstract namespace: the '@' becomes a NUL byte, and the
 * length counts no terminating NUL). Returns 0, or -1 with a message in ERR
 * (relative paths, "vsock:" addresses and names too long for sun_path are
 * refused). Pure, for the unit tests. */
int sdnotify_address(const char *value, struct sockaddr_un *sa, socklen_t *len, char *err, size_t errlen);

/* sd_watchdog_enabled(3)'s rule: the keep-alive interval asked for by
 * $WATCHDOG_USEC, honoured only when $WATCHDOG_PID is unset or names
 * SELF. Returns the watchdog timeout in microseconds (keep-alives go out
 * at half of it), 0 when none is asked of this process, or -1 with a
 * message in ERR when a variable is malformed. Pure, for the unit tests. */
int64_t sdnotify_watchdog_usec(const char *usec, const char *pid, pid_t self, char *err, size_t errlen);

struct sdnotify;

/* NULL when SOCKET (the value of $NOTIFY_SOCKET) is NULL or empty, or
 * unusable (logged as a warning: a Type=notify unit would wait for a
 * READY=1 that never comes). USEC and PID: $WATCHDOG_USEC, $WATCHDOG_PID. */
struct sdnotify *sdnotify_open(const char *socket, const char *usec, const char *pid);

/* The watchdog timeout asked of this process (us); 0: none. SD may be NULL. */
int64_t sdnotify_watchdog(const struct sdnotify *sd);

/* STATUS=TEXT (one line; a newline in it becomes a space), only when it
 * differs from the last one sent; with READY=1 in the same datagram the
 * first time READY is true. */
void sdnotify_status(struct sdnotify *sd, bool ready, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* STOPPING=1 (once; after it, READY is never sent) with STATUS=TEXT. */
void sdnotify_stopping(struct sdnotify *sd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True once STOPPING=1 went out. */
bool sdnotify_is_stopping(const struct sdnotify *sd);

/* WATCHDOG=1. */
void sdnotify_keepalive(struct sdnotify *sd);

void sdnotify_close(struct sdnotify *sd);

#endif
