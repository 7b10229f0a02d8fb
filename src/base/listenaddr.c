#include "listenaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int listenaddr_port(const char *text, unsigned *port)
{
	char *end;
	unsigned long n;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || *end || n > 65535)
		return -1;
	*port = (unsigned)n;
	return 0;
}

int listenaddr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err, size_t errlen)
{
	const char *colon = strrchr(text, ':');
	char host[64];
	size_t n = colon ? (size_t)(colon - text) : 0;
	unsigned port;

	memset(ss, 0, sizeof(*ss));
	if (!colon || n == 0 || n >= sizeof(host) || listenaddr_port(colon + 1, &port) < 0) {
		snprintf(err, errlen, "'%.80s' is not ADDR:PORT; give an address and a port, like 127.0.0.1:4040",
			 text);
		return -1;
	}
	memcpy(host, text, n);
	host[n] = '\0';
	if (host[0] == '[' && host[n - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		host[n - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1)
			return 0;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
		if (strcmp(host, "localhost") == 0)
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &a->sin_addr) == 1)
			return 0;
	}
	snprintf(err, errlen,
		 "'%.80s' is not an address to listen on; give an IPv4 address (0.0.0.0 for all), [an IPv6 one] or "
		 "localhost",
		 host);
	return -1;
}
