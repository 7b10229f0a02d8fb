/* A loopback TCP proxy in the test process, to cut a leaderrun off from the
 * database in the ways networks fail. */
#ifndef LEADERRUN_TEST_PROXY_H
#define LEADERRUN_TEST_PROXY_H

#include <stdbool.h>

enum proxy_mode {
	PROXY_PASS,	    /* forward both ways */
	PROXY_BLACKHOLE,    /* swallow everything both ways: no RST, no FIN */
	PROXY_DROP_REPLIES, /* forward requests, swallow the server's replies */
	PROXY_DELAY,	    /* forward both ways, each chunk late by the delay */
	PROXY_CUT,	    /* a host cut off: as blackhole, and a client's close never
			     * reaches the server either (its session stays open)
			     * until the mode changes */
};

struct proxy;

/* Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:TARGET. */
struct proxy *proxy_start(int target_port);
int proxy_port(const struct proxy *p);
void proxy_set_mode(struct proxy *p, enum proxy_mode mode);
/* The delay of PROXY_DELAY, in milliseconds. */
void proxy_set_delay(struct proxy *p, int ms);
/* Did any client send NEEDLE through the proxy (within a read's worth of
 * bytes, among the first MiB sent)? A password sent in clear text. */
bool proxy_sent_contains(struct proxy *p, const char *needle);

#endif
