/* ADDR:PORT for a listening socket, parsed strictly: an IPv4 literal, an
 * IPv6 literal in brackets, or "localhost"; PORT from 0 (any free one) to
 * 65535. No name lookup: a listener's address is the operator's to state. */
#ifndef LEADERRUN_LISTENADDR_H
#define LEADERRUN_LISTENADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* Fills SS and LEN; 0, or -1 with what was wrong (and what to give) in ERR. */
int listenaddr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err, size_t errlen);

#endif
