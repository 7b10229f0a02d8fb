#include "httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct httpd {
	int fd, status;
	char log[512];
};

static void serve(struct httpd *h, int c)
{
	char buf[16384], method[16] = "", path[2048] = "";
	size_t n = 0;
	char *end = NULL, *cl;
	long body_len = 0;
	FILE *f;

	while (n < sizeof(buf) - 1) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			cl = strcasestr(buf, "\r\nContent-Length:");
			body_len = cl && cl < end ? strtol(cl + 17, NULL, 10) : 0;
		}
		if (end && n >= (size_t)(end + 4 - buf) + (size_t)body_len)
			break;
	}
	buf[n] = '\0';
	sscanf(buf, "%15s %2047s", method, path);
	f = fopen(h->log, "a");
	if (f) {
		fprintf(f, "%s %s %.*s\n", method, path, end ? (int)body_len : 0, end ? end + 4 : "");
		fclose(f);
	}
	snprintf(buf, sizeof(buf), "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", h->status);
	(void)!write(c, buf, strlen(buf));
	close(c);
}

static void *httpd_main(void *arg)
{
	struct httpd *h = arg;
	for (;;) {
		int c = accept(h->fd, NULL, NULL);
		if (c >= 0)
			serve(h, c);
	}
	return NULL;
}

int httpd_start(const char *log, int status)
{
	struct httpd *h = calloc(1, sizeof(*h));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	pthread_t t;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h->status = status;
	snprintf(h->log, sizeof(h->log), "%s", log);
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(h->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(h->fd, 16) != 0 ||
	    getsockname(h->fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	pthread_create(&t, NULL, httpd_main, h);
	pthread_detach(t);
	return ntohs(a.sin_port);
}
