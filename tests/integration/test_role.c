/* --role-http and --role-file as their readers meet them: the endpoint
 * answers a health checker while slow clients hold connections open, and
 * the file says when its leadership ends, so that one left behind by a
 * killed instance can be seen to be stale. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include "harness.h"

#define LR(p, ...) h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL})

/* Waits for FD to be ready for EVENTS until END (h_now_ms); false on time. */
static bool ready_by(int fd, short events, int64_t end)
{
	struct pollfd p = {.fd = fd, .events = events};
	int64_t left;

	while ((left = end - h_now_ms()) > 0) {
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
	return false;
}

/* GET /leader on a fresh connection to 127.0.0.1:PORT, as a health checker
 * asks: the status, or 0 when no whole answer came within TIMEOUT_MS, the
 * connect included. */
static int get_leader(int port, int timeout_ms)
{
	struct sockaddr_in a = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	static const char req[] = "GET /leader HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	int64_t end = h_now_ms() + timeout_ms;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), status = 0;
	char buf[2048];
	ssize_t got = 0, n;

	cr_assert(fd >= 0);
	if ((connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) ||
	    !ready_by(fd, POLLOUT, end) || write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return 0;
	}
	while (got < (ssize_t)sizeof(buf) - 1 && ready_by(fd, POLLIN, end) &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	/* The whole answer: its body is one word and a newline. */
	if (!strstr(buf, "\r\n\r\n") || buf[got - 1] != '\n' || sscanf(buf, "HTTP/%*s %d", &status) != 1)
		return 0;
	return status;
}

/* 500 connections from 127.0.0.1, each sending its header a byte every 2 s
 * and opened again whenever the server closes it (issue 51: 64 such made
 * every other /leader time out). A health checker on the same address
 * still gets its answer within 1 s, all through the attack. */
Test(role, leader_endpoint_answers_within_1s_while_500_slow_clients_are_connected)
{
	const char *lease = h_lease("role_slow");
	int port = h_free_port(), worst = 0;
	char addr[64], script[512], ports[16];
	struct h_proc a, slow;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(ports, sizeof(ports), "%d", port);
	snprintf(script, sizeof(script), "%s/slowhttp.py", getenv("LR_SERVICE_DIR"));
	LR(&a, "-t", "5s", "-l", lease, "--service", "--role-http", addr, "--", "sleep", "120");
	for (int64_t end = h_now_ms() + 10000; get_leader(port, 2000) != 200; h_sleep_ms(100))
		cr_assert(h_now_ms() < end, "never led: %s", h_slurp(a.err));

	h_start(&slow, (const char *const[]){"python3", script, ports, "500", "60", NULL}, NULL);
	cr_assert(h_wait_file(slow.out, "open 500", 20000), "the slow clients did not connect: %s", h_slurp(slow.err));
	/* Through several of the whole-request deadlines, while the slow
	 * clients' connections are cut and opened again. */
	for (int k = 0; k < 12; k++) {
		int64_t t0 = h_now_ms();
		int status = get_leader(port, 1000), took = (int)(h_now_ms() - t0);

		cr_assert_eq(status, 200, "GET /leader %d of 12 under 500 slow clients: %s after %d ms", k + 1,
			     status ? "answered" : "no answer", took);
		worst = took > worst ? took : worst;
		h_sleep_ms(500);
	}
	cr_assert(h_alive(slow.pid), "the slow clients gave up: %s", h_slurp(slow.err));
	/* slowhttp.py's last line: "reopened N", the connections cut so far. */
	printf("role-http under 500 slow clients: 12 answers, the slowest in %d ms; slowhttp.py %s", worst,
	       strrchr(h_slurp(slow.out), 'r') ? strrchr(h_slurp(slow.out), 'r') : "\n");
	kill(slow.pid, SIGTERM);
	h_wait(&slow, 5000);
	kill(a.pid, SIGTERM);
	h_finish(&a, 10000);
}

/* The end of leadership in the role file ("leader TERM until TIME") in
 * milliseconds since the epoch, or -1 when the file does not say one. */
static int64_t role_until_ms(const char *path)
{
	struct tm tm = {0};
	int ms = 0;

	if (sscanf(h_slurp(path), "leader %*u until %d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Issue 51: a role file said "leader 69" after the whole cgroup was killed
 * (leaderrun and its watcher, which would have replaced it), while another
 * instance led term 70. The file says until when it leads, by the wall
 * clock; renews move that, and once everything is killed it is past within
 * the ttl. */
Test(role, the_role_file_says_until_when_it_leads_and_a_killed_leaders_file_is_seen_to_be_stale)
{
	const char *lease = h_lease("role_until");
	const char *role = h_path("role");
	struct h_proc a;
	struct h_vm vm;
	int64_t first, later = -1, killed, until;

	LR(&a, "-t", "3s", "-l", lease, "--service", "--role-file", role, "--", "sh", "-c", "echo $$; exec sleep 60");
	h_vm_of(&a, &vm);
	cr_assert(h_wait_file(role, "leader 1 until ", 10000), "the role file says: %s", h_slurp(role));
	first = role_until_ms(role);
	cr_assert_gt(first, wall_ms(), "a leader's end already past: %s", h_slurp(role));
	cr_assert_leq(first, wall_ms() + 3000, "past the ttl: %s", h_slurp(role));
	/* A renew every second (ttl/3) moves it. */
	for (int64_t end = h_now_ms() + 5000; (later = role_until_ms(role)) <= first; h_sleep_ms(50))
		cr_assert(h_now_ms() < end, "the end did not move with the renews: %s", h_slurp(role));

	/* The whole cgroup at once, the watcher first: nothing replaces the
	 * file. */
	kill(vm.watcher, SIGKILL);
	kill(vm.leaderrun, SIGKILL);
	kill(-vm.command, SIGKILL);
	killed = wall_ms();
	h_wait(&a, 5000);
	cr_assert(h_wait_gone(vm.watcher, 5000));
	until = role_until_ms(role);
	cr_assert_geq(until, later, "the file after the kill says: %s", h_slurp(role));
	cr_assert_leq(until, killed + 3000, "a killed leader's end is more than the ttl away: %s", h_slurp(role));
	printf("role file: its end %lld ms after the kill\n", (long long)(until - killed));
}

HARNESS_MAIN
