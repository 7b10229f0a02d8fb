/* The role board: what the role file says, what /leader and /role answer,
 * and that nothing says "leader" past the deadline. The HTTP part runs the
 * real libmicrohttpd on a loopback port. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/timing.h"
#include "report/role.h"
#include "report/role_http.h"

static const char *tmpfile_path(const char *name)
{
	static char path[256];
	snprintf(path, sizeof(path), "/tmp/leaderrun-role-test.%d.%s", (int)getpid(), name);
	unlink(path);
	return path;
}

static const char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* "STATUS BODY" of REQUEST to 127.0.0.1:PORT. */
static const char *ask(int port, const char *request)
{
	static char buf[2048];
	struct sockaddr_in a = {
	    .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
	ssize_t n, got = 0;
	const char *body;
	static char out[2100];

	cr_assert(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	cr_assert(write(fd, request, strlen(request)) == (ssize_t)strlen(request));
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	sscanf(buf, "HTTP/%*s %d", &status);
	body = strstr(buf, "\r\n\r\n");
	snprintf(out, sizeof(out), "%d %s", status, body ? body + 4 : "");
	return out;
}

Test(role, the_file_says_standby_at_once_then_what_the_loop_says)
{
	const char *path = tmpfile_path("file");
	char err[256];
	FILE *f = fopen(path, "w");
	struct role *r;

	/* Left by a leaderrun that was killed while it led. */
	fputs("leader 41\n", f);
	fclose(f);
	r = role_open("job", "me", path, NULL, err, sizeof(err));
	cr_assert(r, "%s", err);
	cr_assert_str_eq(slurp(path), "standby\n");
	role_set(r, &(struct role_view){.role = ROLE_STANDBY, .term = 7, .leader = "other"}, err, sizeof(err));
	cr_assert_str_eq(slurp(path), "standby other\n");
	role_set(r, &(struct role_view){.role = ROLE_PROMOTING, .term = 8, .leader = "me"}, err, sizeof(err));
	cr_assert_str_eq(slurp(path), "standby me\n");
	role_set(r,
		 &(struct role_view){.role = ROLE_LEADER, .term = 8, .leader = "me", .until = timing_now() + 60000000},
		 err, sizeof(err));
	cr_assert_eq(strncmp(slurp(path), "leader 8 until 2", 16), 0, "%s", slurp(path));
	role_close(r);
	cr_assert_str_eq(slurp(path), "standby\n");
	unlink(path);
}

/* "leader TERM until TIME": the deadline by the wall clock, in UTC to the
 * millisecond, rounded down; what `read role term rest` splits. */
Test(role, the_leader_line_says_its_end_by_the_wall_clock)
{
	/* 2026-12-07T20:15:03.250Z is 1796674503.25 s after the epoch. */
	int64_t offset = INT64_C(1796674503250999) - 5000000;
	char line[128];

	role_file_line(&(struct role_view){.role = ROLE_LEADER, .term = 69, .until = 5000000}, "me", offset, line,
		       sizeof(line));
	cr_assert_str_eq(line, "leader 69 until 2026-12-07T20:15:03.250Z\n");
	role_file_line(&(struct role_view){.role = ROLE_DEMOTING, .term = 69, .until = 5000000}, "me", offset, line,
		       sizeof(line));
	cr_assert_str_eq(line, "standby me\n");
}

Test(role, the_file_is_replaced_when_what_it_says_changes_and_each_renew_moves_its_end)
{
	const char *path = tmpfile_path("same");
	char err[256], first[256];
	struct role *r = role_open("job", "me", path, NULL, err, sizeof(err));
	int64_t until = timing_now() + 10000000;
	struct stat a, b;

	cr_assert(r, "%s", err);
	role_set(r, &(struct role_view){.role = ROLE_LEADER, .term = 3, .until = until}, err, sizeof(err));
	cr_assert(stat(path, &a) == 0);
	snprintf(first, sizeof(first), "%s", slurp(path));
	role_set(r, &(struct role_view){.role = ROLE_LEADER, .term = 3, .until = until}, err, sizeof(err));
	cr_assert(stat(path, &b) == 0);
	cr_assert_eq(a.st_ino, b.st_ino, "replaced although it says the same");
	cr_assert_eq(role_extend(r, until + 1500000, err, sizeof(err)), 0, "%s", err);
	cr_assert(stat(path, &b) == 0);
	cr_assert_neq(a.st_ino, b.st_ino, "a renew did not replace it");
	cr_assert_gt(strcmp(slurp(path), first), 0, "the end did not move: %s, then %s", first, slurp(path));
	/* Not leading: a renew writes nothing. */
	role_set(r, &(struct role_view){.role = ROLE_DEMOTING, .term = 3, .until = until}, err, sizeof(err));
	cr_assert(stat(path, &a) == 0);
	role_extend(r, until + 3000000, err, sizeof(err));
	cr_assert(stat(path, &b) == 0);
	cr_assert_eq(a.st_ino, b.st_ino, "a demoting instance's file replaced at a renew");
	role_close(r);
	unlink(path);
}

Test(role, leader_turns_standby_once_the_deadline_passed)
{
	char err[256];
	struct role *r = role_open("job", "me", NULL, NULL, err, sizeof(err));
	struct role_view v;

	cr_assert(r, "%s", err);
	role_set(r, &(struct role_view){.role = ROLE_LEADER, .term = 5, .leader = "me", .until = 1000}, err,
		 sizeof(err));
	role_now(r, 999, &v);
	cr_assert_eq(v.role, ROLE_LEADER);
	role_now(r, 1000, &v);
	cr_assert_eq(v.role, ROLE_STANDBY);
	cr_assert_str_eq(v.leader, "");
	role_extend(r, 2000, err, sizeof(err));
	role_now(r, 1500, &v);
	cr_assert_eq(v.role, ROLE_LEADER);
	role_close(r);
}

Test(role, leader_endpoint_answers_200_only_while_leading_and_before_the_deadline)
{
	char err[256];
	struct role *r = role_open("job", "me", NULL, "127.0.0.1:0", err, sizeof(err));
	int port;

	cr_assert(r, "%s", err);
	port = role_http_port(r);
	cr_assert_gt(port, 0);
	cr_assert_str_eq(ask(port, "GET /leader HTTP/1.0\r\n\r\n"), "503 standby\n");
	role_set(r, &(struct role_view){.role = ROLE_LEADER, .term = 9, .until = timing_now() + 60000000}, err,
		 sizeof(err));
	cr_assert_str_eq(ask(port, "GET /leader HTTP/1.0\r\n\r\n"), "200 leader\n");
	role_set(r, &(struct role_view){.role = ROLE_DEMOTING, .term = 9, .until = timing_now() + 60000000}, err,
		 sizeof(err));
	cr_assert_str_eq(ask(port, "GET /leader HTTP/1.0\r\n\r\n"), "503 demoting\n");
	role_set(r, &(struct role_view){.role = ROLE_LEADER, .term = 9, .until = timing_now() - 1}, err, sizeof(err));
	cr_assert_str_eq(ask(port, "GET /leader HTTP/1.0\r\n\r\n"), "503 standby\n");
	role_close(r);
}

Test(role, role_endpoint_answers_json_and_nothing_else_is_served)
{
	char err[256];
	struct role *r = role_open("job\"x", "me", NULL, "127.0.0.1:0", err, sizeof(err));
	int port;

	cr_assert(r, "%s", err);
	port = role_http_port(r);
	role_set(r, &(struct role_view){.role = ROLE_STANDBY, .term = 4, .leader = "web\n1"}, err, sizeof(err));
	cr_assert_str_eq(
	    ask(port, "GET /role HTTP/1.0\r\n\r\n"),
	    "200 {\"lease\":\"job\\\"x\",\"role\":\"standby\",\"term\":4,\"holder\":\"me\",\"leader\":\"web\\n1\"}\n");
	cr_assert_eq(strncmp(ask(port, "GET /other HTTP/1.0\r\n\r\n"), "404 ", 4), 0);
	cr_assert_eq(strncmp(ask(port, "POST /leader HTTP/1.0\r\nContent-Length: 0\r\n\r\n"), "405 ", 4), 0);
	role_close(r);
}

Test(role, an_address_in_use_is_refused_with_what_to_do)
{
	char err[256];
	struct role *a = role_open("job", "me", NULL, "127.0.0.1:0", err, sizeof(err)), *b;
	char addr[64];

	cr_assert(a, "%s", err);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", role_http_port(a));
	b = role_open("job", "me", NULL, addr, err, sizeof(err));
	cr_assert_null(b);
	cr_assert(strstr(err, "cannot listen"), "%s", err);
	role_close(a);
}

/* A client that sends its header a byte at a time, each well within the
 * idle timeout, is cut ROLE_HTTP_REQUEST_MS after its connect (issue 51:
 * such clients held every slot for as long as they kept sending); one that
 * sends its request whole is answered, and its connection closed. */
Test(role, a_request_not_whole_in_time_is_cut_at_the_deadline)
{
	static const char header[] = "GET /leader HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	char err[256], c;
	struct role *r = role_open("job", "me", NULL, "127.0.0.1:0", err, sizeof(err));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tick = {.tv_usec = 200000};
	int64_t t0, took;
	size_t i = 0;

	cr_assert(r, "%s", err);
	a.sin_port = htons((uint16_t)role_http_port(r));
	cr_assert(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	t0 = timing_now();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof(tick));
	/* A byte every 200 ms; the server's end closes before the header
	 * does. */
	while (i < sizeof(header) - 1 && write(fd, header + i++, 1) == 1 && read(fd, &c, 1) < 0)
		cr_assert_lt(timing_now() - t0, 5000000, "still open after 5 s");
	took = (timing_now() - t0) / 1000;
	close(fd);
	cr_assert_lt(i, sizeof(header) - 1, "the whole header went in: never cut");
	cr_assert_geq(took, ROLE_HTTP_REQUEST_MS - 250, "cut after %lld ms", (long long)took);
	cr_assert_leq(took, ROLE_HTTP_REQUEST_MS + 1000, "cut after %lld ms", (long long)took);
	cr_assert_str_eq(ask(role_http_port(r), "GET /leader HTTP/1.1\r\nHost: x\r\n\r\n"), "503 standby\n");
	role_close(r);
}
