#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct proxy {
	int listen_fd, port, target;
	atomic_int mode;
	atomic_int delay_ms;
	/* What clients sent, every connection's in the order it came (the
	 * first SENT_MAX bytes), for proxy_sent_contains. */
	pthread_mutex_t lock;
	char *sent;
	size_t nsent;
};

#define SENT_MAX (1u << 20)

struct pipe_pair {
	struct proxy *p;
	int client, server;
};

static int connect_loopback(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies one read's worth from FROM to TO unless the mode swallows it.
 * Returns -1 when FROM is closed. */
static int shovel(struct proxy *p, int from, int to, int swallow, int delay_ms)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return -1;
	if (p) {
		pthread_mutex_lock(&p->lock);
		size_t k = (size_t)n < SENT_MAX - p->nsent ? (size_t)n : SENT_MAX - p->nsent;
		memcpy(p->sent + p->nsent, buf, k);
		p->nsent += k;
		pthread_mutex_unlock(&p->lock);
	}
	if (swallow)
		return 0;
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	for (ssize_t off = 0; off < n;) {
		/* MSG_NOSIGNAL: a peer that closed (a killed leaderrun, a
		 * restarted server) is an error here, not a SIGPIPE that ends
		 * the test process (a 1000-episode soak died of one). */
		ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		off += w;
	}
	return 0;
}

static void *pipe_main(void *arg)
{
	struct pipe_pair *pp = arg;
	bool client_gone = false;

	for (;;) {
		struct pollfd f[2] = {{.fd = client_gone ? -1 : pp->client, .events = POLLIN},
				      {.fd = pp->server, .events = POLLIN}};
		int mode, delay;
		if (poll(f, 2, client_gone ? 50 : -1) < 0 && errno != EINTR)
			break;
		mode = atomic_load(&pp->p->mode);
		delay = mode == PROXY_DELAY ? atomic_load(&pp->p->delay_ms) : 0;
		/* The cut healed: the server may learn of the close now. */
		if (client_gone && mode != PROXY_CUT)
			break;
		if (f[0].revents &&
		    shovel(pp->p, pp->client, pp->server, mode == PROXY_BLACKHOLE || mode == PROXY_CUT, delay) < 0) {
			if (mode != PROXY_CUT)
				break;
			client_gone = true;
		}
		if (f[1].revents &&
		    shovel(NULL, pp->server, pp->client,
			   mode == PROXY_BLACKHOLE || mode == PROXY_DROP_REPLIES || mode == PROXY_CUT, delay) < 0)
			break;
	}
	close(pp->client);
	close(pp->server);
	free(pp);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct proxy *p = arg;

	for (;;) {
		int c = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		struct pipe_pair *pp;
		pthread_t t;
		if (c < 0)
			continue;
		pp = calloc(1, sizeof(*pp));
		pp->p = p;
		pp->client = c;
		/* In blackhole mode the connection is accepted and then starved:
		 * the client's handshake never gets an answer. */
		pp->server = connect_loopback(p->target);
		if (pp->server < 0) {
			close(c);
			free(pp);
			continue;
		}
		pthread_create(&t, NULL, pipe_main, pp);
		pthread_detach(t);
	}
	return NULL;
}

struct proxy *proxy_start(int target_port)
{
	struct proxy *p = calloc(1, sizeof(*p));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	pthread_t t;
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->target = target_port;
	atomic_init(&p->mode, PROXY_PASS);
	pthread_mutex_init(&p->lock, NULL);
	p->sent = malloc(SENT_MAX);
	p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(p->listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(p->listen_fd, 64) != 0 ||
	    getsockname(p->listen_fd, (struct sockaddr *)&a, &len) != 0) {
		close(p->listen_fd);
		free(p->sent);
		free(p);
		return NULL;
	}
	p->port = ntohs(a.sin_port);
	pthread_create(&t, NULL, accept_main, p);
	pthread_detach(t);
	return p;
}

int proxy_port(const struct proxy *p)
{
	return p->port;
}

void proxy_set_delay(struct proxy *p, int ms)
{
	atomic_store(&p->delay_ms, ms);
}

void proxy_set_mode(struct proxy *p, enum proxy_mode mode)
{
	atomic_store(&p->mode, mode);
}

bool proxy_sent_contains(struct proxy *p, const char *needle)
{
	size_t n = strlen(needle);
	bool found = false;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; n && i + n <= p->nsent && !found; i++)
		found = memcmp(p->sent + i, needle, n) == 0;
	pthread_mutex_unlock(&p->lock);
	return found;
}
