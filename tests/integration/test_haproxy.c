/* A real HAProxy in front of three instances of a small HTTP service, each
 * under `leaderrun --service --role-http`, with `option httpchk GET
 * /leader`: requests reach only the leader, and move to the next one within
 * ttl + 2 s after the leader is killed. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "harness.h"

#define N 3

/* GET / through the proxy: the status, and the body's first word (the
 * instance that answered) into WHO. */
static int get(int port, char *who, size_t len)
{
	struct sockaddr_in a = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const char req[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";
	char buf[4096];
	ssize_t n, got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
	struct timeval tv = {.tv_sec = 2};
	const char *body;

	who[0] = '\0';
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || write(fd, req, sizeof(req) - 1) < 0) {
		close(fd);
		return 0;
	}
	while (got < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	if (sscanf(buf, "HTTP/%*s %d", &status) != 1)
		return 0;
	if ((body = strstr(buf, "\r\n\r\n")) != NULL)
		sscanf(body + 4, "%31s", who);
	(void)len;
	return status;
}

/* The holder of LEASE, from its row ("" when free). */
static const char *holder_of(const char *lease)
{
	return h_sql("SELECT holder FROM leaderrun_lease WHERE name = '%s' AND expires_at > UTC_TIMESTAMP(6)", lease);
}

Test(haproxy, requests_reach_only_the_leader_and_move_after_it_is_killed)
{
	const char *lease = h_lease("web");
	struct h_proc lr[N], proxy;
	int role_port[N], web_port[N], front = h_free_port();
	char cfg[4096], path[600], holder[N][8], who[32];
	FILE *f;
	int64_t t0;
	int dead = -1;

	snprintf(cfg, sizeof(cfg),
		 "global\n  maxconn 100\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n"
		 "  timeout server 5s\nfrontend web\n  bind 127.0.0.1:%d\n  default_backend app\nbackend app\n"
		 "  option httpchk GET /leader\n  default-server inter 200ms fall 1 rise 1\n",
		 front);
	for (int i = 0; i < N; i++) {
		char dir[400], line[256];
		role_port[i] = h_free_port();
		web_port[i] = h_free_port();
		snprintf(holder[i], sizeof(holder[i]), "web%d", i);
		snprintf(dir, sizeof(dir), "%s/%s", h_dir(), holder[i]);
		mkdir(dir, 0755);
		snprintf(path, sizeof(path), "%s/index.html", dir);
		f = fopen(path, "w");
		cr_assert(f);
		fprintf(f, "%s\n", holder[i]);
		fclose(f);
		snprintf(line, sizeof(line), "  server %s 127.0.0.1:%d check port %d\n", holder[i], web_port[i],
			 role_port[i]);
		strncat(cfg, line, sizeof(cfg) - strlen(cfg) - 1);
	}
	snprintf(path, sizeof(path), "%s/haproxy.cfg", h_dir());
	f = fopen(path, "w");
	cr_assert(f);
	fputs(cfg, f);
	fclose(f);

	for (int i = 0; i < N; i++) {
		char addr[64], port[16], dir[400];
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", role_port[i]);
		snprintf(port, sizeof(port), "%d", web_port[i]);
		snprintf(dir, sizeof(dir), "%s/%s", h_dir(), holder[i]);
		h_leaderrun(&lr[i], (const char *const[]){"-t", "2s", "-l", lease, "--holder", holder[i], "--service",
							  "--role-http", addr, "--", "python3", "-m", "http.server",
							  port, "--bind", "127.0.0.1", "--directory", dir, NULL});
	}
	h_start(&proxy, (const char *const[]){"haproxy", "-db", "-f", path, NULL}, NULL);

	/* Steady: every answer is the leader's. */
	for (int64_t end = h_now_ms() + 15000; get(front, who, sizeof(who)) != 200; h_sleep_ms(100))
		cr_assert(h_now_ms() < end, "no answer through HAProxy:\n%s", h_slurp(proxy.err));
	/* HAProxy counts a server up until its first check says otherwise:
	 * waited for until every standby's 503 counts (10 answers in a row
	 * from the leader), not for a fixed time that a busy machine misses. */
	for (int64_t end = h_now_ms() + 15000, run = 0; run < 10; h_sleep_ms(50)) {
		char lead[64];
		snprintf(lead, sizeof(lead), "%s", holder_of(lease));
		run = get(front, who, sizeof(who)) == 200 && strcmp(who, lead) == 0 ? run + 1 : 0;
		cr_assert(h_now_ms() < end, "answered by %s while %s leads", who, lead);
	}
	for (int k = 0; k < 30; k++, h_sleep_ms(50)) {
		char lead[64];
		snprintf(lead, sizeof(lead), "%s", holder_of(lease));
		cr_assert_eq(get(front, who, sizeof(who)), 200);
		cr_assert_str_eq(who, lead, "answered by %s while %s leads", who, lead);
	}

	/* The leader killed: the next answers come from the new leader,
	 * within ttl + 2 s; bounded at twice that and the killed one's
	 * answers at 2 s (its service is killed at once, a check is 200 ms)
	 * for a busy machine. */
	for (int i = 0; i < N; i++)
		if (strcmp(holder[i], who) == 0)
			dead = i;
	cr_assert_geq(dead, 0);
	t0 = h_now_ms();
	kill(lr[dead].pid, SIGKILL);
	h_wait(&lr[dead], 5000);
	for (;;) {
		int st = get(front, who, sizeof(who));
		if (st == 200 && strcmp(who, holder[dead]) != 0)
			break;
		cr_assert(st != 200 || h_now_ms() - t0 < 2000, "the killed leader still answers after 2 s");
		cr_assert_lt(h_now_ms() - t0, 8000, "traffic did not move within 2 x (ttl + 2 s)");
		h_sleep_ms(50);
	}
	h_sleep_ms(500);
	for (int k = 0; k < 20; k++, h_sleep_ms(50)) {
		char lead[64];
		snprintf(lead, sizeof(lead), "%s", holder_of(lease));
		cr_assert_eq(get(front, who, sizeof(who)), 200);
		cr_assert_str_eq(who, lead, "answered by %s while %s leads", who, lead);
	}

	kill(proxy.pid, SIGTERM);
	h_wait(&proxy, 5000);
	for (int i = 0; i < N; i++)
		if (i != dead) {
			kill(lr[i].pid, SIGTERM);
			h_wait(&lr[i], 10000);
		}
}

HARNESS_MAIN
