/* systemd's notify protocol as a service manager sees it: a real unix
 * datagram socket that this test binds where NOTIFY_SOCKET points, and the
 * datagrams the real binary sends to it while it leads, waits, stops and
 * loses the database. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "harness.h"
#include "proxy.h"

HARNESS_MAIN

/* Every leaderrun a test starts, for kill_leftovers. */
static pid_t started[8];
static int nstarted;

static void track(const struct h_proc *p)
{
	if (nstarted < (int)(sizeof(started) / sizeof(started[0])))
		started[nstarted++] = p->pid;
}

/* A failed assertion ends a test before its processes: a standby whose
 * database is gone would retry for ever. (SIGKILL: the command dies with
 * leaderrun, through its parent-death signal and the watcher.) */
static void kill_leftovers(void)
{
	for (int i = 0; i < nstarted; i++)
		if (h_alive(started[i]))
			kill(started[i], SIGKILL);
}

#define LR(p, ...)                                                                                                     \
	do {                                                                                                           \
		h_leaderrun(p, (const char *const[]){__VA_ARGS__, NULL});                                              \
		track(p);                                                                                              \
	} while (0)

/* What the socket received, each datagram with its arrival time. A thread
 * drains it at once: a unix datagram socket queues only
 * net.unix.max_dgram_qlen (often 10) messages, and the timing of the
 * keep-alives is part of what is tested. */
struct dgram {
	int64_t at_ms;
	char text[700];
};

static struct {
	int fd;
	char env[160]; /* NOTIFY_SOCKET=... */
	pthread_t thread;
	pthread_mutex_t lock;
	volatile int stop;
	int n;
	struct dgram msgs[2048];
} sock = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static void *drain(void *arg)
{
	(void)arg;
	while (!sock.stop) {
		struct pollfd p = {.fd = sock.fd, .events = POLLIN};
		char buf[sizeof(sock.msgs[0].text)];
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		k = recv(sock.fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (k < 0)
			continue;
		buf[k] = '\0';
		pthread_mutex_lock(&sock.lock);
		if (sock.n < (int)(sizeof(sock.msgs) / sizeof(sock.msgs[0]))) {
			sock.msgs[sock.n].at_ms = h_now_ms();
			memcpy(sock.msgs[sock.n].text, buf, (size_t)k + 1);
			sock.n++;
		}
		pthread_mutex_unlock(&sock.lock);
	}
	return NULL;
}

/* Binds the socket: a file in the test's directory, or with ABSTRACT a
 * name in Linux's abstract namespace ("@name" in NOTIFY_SOCKET). */
static void listen_notify(bool abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	char name[100];

	sock.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(sock.fd, 0, "socket: %s", strerror(errno));
	if (abstract) {
		snprintf(name, sizeof(name), "leaderrun-test-%ld-%lld", (long)getpid(), (long long)h_now_ms());
		memcpy(sa.sun_path + 1, name, strlen(name));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
		snprintf(sock.env, sizeof(sock.env), "NOTIFY_SOCKET=@%s", name);
	} else {
		snprintf(name, sizeof(name), "%s", h_path("notify.sock"));
		cr_assert_lt(strlen(name), sizeof(sa.sun_path), "socket path too long: %s", name);
		memcpy(sa.sun_path, name, strlen(name));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + 1);
		snprintf(sock.env, sizeof(sock.env), "NOTIFY_SOCKET=%s", name);
	}
	cr_assert_eq(bind(sock.fd, (struct sockaddr *)&sa, len), 0, "bind %s: %s", sock.env, strerror(errno));
	cr_assert_eq(pthread_create(&sock.thread, NULL, drain, NULL), 0);
}

/* Every datagram received so far, one per line, for failure messages. */
static const char *received(void)
{
	static char all[65536];
	size_t k = 0;

	all[0] = '\0';
	pthread_mutex_lock(&sock.lock);
	for (int i = 0; i < sock.n && k + 2 < sizeof(all); i++) {
		int n =
		    snprintf(all + k, sizeof(all) - k, "[%lld] %s\n", (long long)sock.msgs[i].at_ms, sock.msgs[i].text);
		if (n < 0 || (size_t)n >= sizeof(all) - k)
			break;
		k += (size_t)n;
	}
	pthread_mutex_unlock(&sock.lock);
	for (char *c = all; *c; c++)
		if (*c == '\n' && c[1] && c[1] != '[')
			*c = '|'; /* a datagram's own lines stay on its line */
	return all;
}

/* The first datagram from index FROM on that holds NEEDLE, waiting up to
 * TIMEOUT_MS; its index, or -1. A copy of it into OUT (may be NULL). */
static int wait_msg(int from, const char *needle, int timeout_ms, struct dgram *out)
{
	int64_t until = h_now_ms() + timeout_ms;

	for (;;) {
		pthread_mutex_lock(&sock.lock);
		for (int i = from; i < sock.n; i++)
			if (strstr(sock.msgs[i].text, needle)) {
				if (out)
					*out = sock.msgs[i];
				pthread_mutex_unlock(&sock.lock);
				return i;
			}
		pthread_mutex_unlock(&sock.lock);
		if (h_now_ms() >= until)
			return -1;
		h_sleep_ms(10);
	}
}

/* How many datagrams equal to TEXT arrived in [FROM_MS, TO_MS); the first
 * and last arrival times in *FIRST and *LAST (may be NULL). */
static int count_msgs(const char *text, int64_t from_ms, int64_t to_ms, int64_t *first, int64_t *last)
{
	int n = 0;

	pthread_mutex_lock(&sock.lock);
	for (int i = 0; i < sock.n; i++) {
		const struct dgram *d = &sock.msgs[i];
		if (d->at_ms < from_ms || d->at_ms >= to_ms || strcmp(d->text, text) != 0)
			continue;
		if (n == 0 && first)
			*first = d->at_ms;
		if (last)
			*last = d->at_ms;
		n++;
	}
	pthread_mutex_unlock(&sock.lock);
	return n;
}

/* The arrival time of the last datagram equal to TEXT; 0: none. */
static int64_t last_msg(const char *text)
{
	int64_t last = 0;

	count_msgs(text, 0, INT64_MAX, NULL, &last);
	return last;
}

/* leaderrun with NOTIFY_SOCKET pointing at the socket, ENV (NULL or
 * NULL-terminated "NAME=value") and ARGS; through PROXY if not NULL. With
 * OWN_WATCHDOG_PID, WATCHDOG_PID names leaderrun itself, as systemd sets
 * it (a shell sets it to its own pid, then execs). */
static void lr_notify(struct h_proc *p, const struct proxy *proxy, bool own_watchdog_pid, const char *const env[],
		      const char *const args[])
{
	const char *argv[64], *envp[8];
	char dsn[600];
	size_t n = 0, m = 0;

	if (own_watchdog_pid) {
		argv[n++] = "sh";
		argv[n++] = "-c";
		argv[n++] = "WATCHDOG_PID=$$; export WATCHDOG_PID; exec \"$0\" \"$@\"";
	}
	argv[n++] = h_bin();
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(dsn, sizeof(dsn), "LEADERRUN_DSN=%s", proxy ? h_dsn_port(proxy_port(proxy)) : h_dsn());
	envp[m++] = dsn;
	envp[m++] = sock.env;
	for (size_t i = 0; env && env[i] && m < 7; i++)
		envp[m++] = env[i];
	envp[m] = NULL;
	h_start(p, argv, envp);
	track(p);
}

/* The first line of FILE, once the command wrote it. */
static const char *first_line(const char *file)
{
	static char line[600];

	cr_assert(h_wait_file(file, "\n", 10000), "the command did not write %s", file);
	snprintf(line, sizeof(line), "%s", h_slurp(file));
	line[strcspn(line, "\n")] = '\0';
	return line;
}

TestSuite(sdnotify, .timeout = 60, .fini = kill_leftovers);

Test(sdnotify, leader_is_ready_with_its_term_and_says_stopping_on_sigterm)
{
	struct h_proc leader;
	const char *lease = h_lease("lead");
	const char *info = h_path("info");
	char script[700], want[400], term[32];
	struct dgram ready, stopping;
	int r, s;

	listen_notify(false);
	/* The command reports its term and whether systemd's variables
	 * reached it: they must not (leaderrun speaks for the unit). */
	snprintf(script, sizeof(script),
		 "echo \"$LEADERRUN_TERM ${NOTIFY_SOCKET-unset} ${WATCHDOG_USEC-unset} ${WATCHDOG_PID-unset}\" > %s; "
		 "exec sleep 30",
		 info);
	lr_notify(&leader, NULL, false, (const char *const[]){"WATCHDOG_USEC=300000", "WATCHDOG_PID=", NULL},
		  (const char *const[]){"-t", "3s", "-l", lease, "--", "sh", "-c", script, NULL});
	r = wait_msg(0, "READY=1", 10000, &ready);
	cr_assert_geq(r, 0, "no READY=1: %s\n%s", received(), h_slurp(leader.err));
	sscanf(first_line(info), "%31s", term);
	snprintf(want, sizeof(want), "%s unset unset unset", term);
	cr_assert_str_eq(first_line(info), want, "systemd's variables reached the command");
	snprintf(want, sizeof(want), "READY=1\nSTATUS=leader of %s, term %s", lease, term);
	cr_assert_str_eq(ready.text, want, "%s", received());
	/* Before it: what the first moments of a run look like. */
	cr_assert_geq(wait_msg(0, "STATUS=starting: connecting to the database", 0, NULL), 0, "%s", received());

	/* WATCHDOG_PID empty counts as unset: keep-alives, every 150 ms. */
	for (int64_t end = h_now_ms() + 10000; count_msgs("WATCHDOG=1", 0, INT64_MAX, NULL, NULL) < 3; h_sleep_ms(20))
		cr_assert(h_now_ms() < end, "fewer than 3 keep-alives: %s", received());

	kill(leader.pid, SIGTERM);
	s = wait_msg(r + 1, "STOPPING=1", 10000, &stopping);
	cr_assert_gt(s, r, "no STOPPING=1 after SIGTERM: %s\n%s", received(), h_slurp(leader.err));
	cr_assert_str_eq(stopping.text, "STOPPING=1\nSTATUS=stopping sh: got SIGTERM", "%s", received());
	cr_assert_eq(h_finish(&leader, 10000), 143, "%s", h_slurp(leader.err));
	cr_assert_eq(wait_msg(r + 1, "READY=1", 0, NULL), -1, "READY=1 twice: %s", received());
	/* Nothing after STOPPING=1 feeds the watchdog. */
	cr_assert_eq(count_msgs("WATCHDOG=1", stopping.at_ms + 1, INT64_MAX, NULL, NULL), 0, "%s", received());
}

Test(sdnotify, standby_is_ready_naming_the_holder_and_reports_its_takeover)
{
	struct h_proc leader, standby;
	const char *lease = h_lease("standby");
	const char *info = h_path("info");
	char script[600], want[600], holder[300];
	unsigned long long term;
	struct dgram ready, lead, stopping;
	int r, l;

	listen_notify(false);
	snprintf(script, sizeof(script), "echo \"$LEADERRUN_TERM $LEADERRUN_HOLDER\" > %s; exec sleep 30", info);
	LR(&leader, "-t", "3s", "-l", lease, "--", "sh", "-c", script);
	cr_assert_eq(sscanf(first_line(info), "%llu %299s", &term, holder), 2, "%s", h_slurp(info));

	lr_notify(&standby, NULL, false, NULL, (const char *const[]){"-t", "3s", "-l", lease, "--", "true", NULL});
	r = wait_msg(0, "READY=1", 10000, &ready);
	cr_assert_geq(r, 0, "no READY=1 from the standby: %s\n%s", received(), h_slurp(standby.err));
	snprintf(want, sizeof(want), "READY=1\nSTATUS=standby: waiting for lease %s held by %s (term %llu)", lease,
		 holder, term);
	cr_assert_str_eq(ready.text, want, "%s", received());

	/* The leader goes; the standby leads, says so, runs true, stops. */
	kill(leader.pid, SIGTERM);
	cr_assert_eq(h_finish(&leader, 10000), 143, "%s", h_slurp(leader.err));
	snprintf(want, sizeof(want), "STATUS=leader of %s, term %llu", lease, term + 1);
	l = wait_msg(r + 1, want, 10000, &lead);
	cr_assert_gt(l, r, "no leading status: %s\n%s", received(), h_slurp(standby.err));
	cr_assert_str_eq(lead.text, want, "a second READY=1, or more: %s", received());
	cr_assert_eq(h_finish(&standby, 10000), 0, "%s", h_slurp(standby.err));
	cr_assert_gt(wait_msg(l + 1, "STOPPING=1", 5000, &stopping), l, "%s", received());
	cr_assert_str_eq(stopping.text, "STOPPING=1\nSTATUS=stopping: true exited with status 0", "%s", received());
}

Test(sdnotify, watchdog_keepalives_at_half_the_interval_while_leading_stop_when_the_database_is_cut)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc leader;
	const char *lease = h_lease("wd");
	struct dgram stopping;
	int64_t t0, first, last, cut, quiet_from;
	int n;

	cr_assert_not_null(proxy);
	listen_notify(false);
	/* ttl 6 s, renew every 500 ms (each attempt cut off after 250 ms);
	 * margin 1 s, kill-grace 1.5 s: the command is asked to stop 3.5 s
	 * after the last renew that got through. */
	lr_notify(
	    &leader, proxy, true, (const char *const[]){"WATCHDOG_USEC=400000", NULL},
	    (const char *const[]){"-t", "6s", "--renew-interval", "500ms", "-l", lease, "--", "sleep", "60", NULL});
	cr_assert_geq(wait_msg(0, "READY=1", 10000, NULL), 0, "%s\n%s", received(), h_slurp(leader.err));
	t0 = h_now_ms();
	h_sleep_ms(2000);
	/* Every 200 ms: about 10 in 2 s; never further apart than the
	 * watchdog's 400 ms on average (its own limit: a busy machine may
	 * come near it), nor much closer than 200 ms. */
	n = count_msgs("WATCHDOG=1", t0, t0 + 2000, &first, &last);
	cr_assert_geq(n, 5, "%d keep-alives in 2 s: %s", n, received());
	cr_assert_leq(n, 12, "%d keep-alives in 2 s: %s", n, received());
	cr_assert(last - first >= (n - 1) * 180 && last - first <= (n - 1) * 400,
		  "%d keep-alives from %lld to %lld ms: %s", n, (long long)first, (long long)last, received());

	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	cut = h_now_ms();
	cr_assert_geq(wait_msg(0, ": renew failing", 5000, NULL), 0, "%s", received());
	cr_assert_geq(wait_msg(0, "STOPPING=1", 10000, &stopping), 0, "%s\n%s", received(), h_slurp(leader.err));
	cr_assert_str_eq(stopping.text, "STOPPING=1\nSTATUS=stopping sleep: lease lost", "%s", received());
	cr_assert_eq(h_finish(&leader, 10000), 76, "%s", h_slurp(leader.err));
	/* The first renew after the cut goes out within 500 ms and fails
	 * 250 ms later; from then on (plus scheduling slack) no keep-alive,
	 * although the command still ran until STOPPING=1, at least 3 s
	 * after the cut. */
	quiet_from = cut + 1500;
	cr_assert_geq(stopping.at_ms - quiet_from, 1000, "stopped too soon to judge: %s", received());
	cr_assert_eq(count_msgs("WATCHDOG=1", quiet_from, INT64_MAX, NULL, NULL), 0,
		     "keep-alives while renews failed (cut at %lld): %s", (long long)cut, received());
	cr_assert_gt(last_msg("WATCHDOG=1"), cut - 400, "%s", received());
}

Test(sdnotify, standby_keepalives_stop_when_the_database_is_unreachable)
{
	struct proxy *proxy = proxy_start(atoi(getenv("LR_DB_PORT")));
	struct h_proc leader, standby;
	const char *lease = h_lease("wdwait");
	struct dgram stopping;
	char want[300];
	int64_t cut;

	cr_assert_not_null(proxy);
	listen_notify(false);
	LR(&leader, "-t", "1s", "-l", lease, "--", "sh", "-c", "echo up; exec sleep 30");
	cr_assert(h_wait_file(leader.out, "up", 10000), "%s", h_slurp(leader.err));
	/* Healthy while a look got its answer within ttl + retry-interval +
	 * 2 s: 3.2 s here. */
	lr_notify(&standby, proxy, false, (const char *const[]){"WATCHDOG_USEC=400000", NULL},
		  (const char *const[]){"-t", "1s", "--retry-interval", "200ms", "-l", lease, "--", "true", NULL});
	cr_assert_geq(wait_msg(0, "READY=1\nSTATUS=standby: waiting for lease", 10000, NULL), 0, "%s\n%s", received(),
		      h_slurp(standby.err));
	/* Keep-alives flow: 3 in the last second, waited for. */
	for (int64_t end = h_now_ms() + 10000;; h_sleep_ms(20)) {
		cut = h_now_ms();
		if (count_msgs("WATCHDOG=1", cut - 1000, cut, NULL, NULL) >= 3)
			break;
		cr_assert(h_now_ms() < end, "fewer than 3 keep-alives a second: %s", received());
	}
	proxy_set_mode(proxy, PROXY_BLACKHOLE);
	h_sleep_ms(5500);
	cr_assert_eq(count_msgs("WATCHDOG=1", cut + 4000, INT64_MAX, NULL, NULL), 0,
		     "keep-alives without a database (cut at %lld): %s", (long long)cut, received());
	/* The wait ends on SIGTERM: STOPPING=1 says so. */
	kill(standby.pid, SIGTERM);
	cr_assert_geq(wait_msg(0, "STOPPING=1", 10000, &stopping), 0, "%s\n%s", received(), h_slurp(standby.err));
	snprintf(want, sizeof(want), "STOPPING=1\nSTATUS=exiting: got SIGTERM while waiting for lease %s", lease);
	cr_assert_str_eq(stopping.text, want, "%s", received());
	h_finish(&standby, 10000);
	kill(leader.pid, SIGTERM);
	h_finish(&leader, 10000);
}

Test(sdnotify, no_keepalives_when_watchdog_pid_names_another_process)
{
	struct h_proc leader;
	const char *lease = h_lease("otherpid");
	char pid[64];

	listen_notify(false);
	/* This test's own pid: the variables were meant for another
	 * process, and leaderrun inherited them. */
	snprintf(pid, sizeof(pid), "WATCHDOG_PID=%ld", (long)getpid());
	lr_notify(&leader, NULL, false, (const char *const[]){"WATCHDOG_USEC=200000", pid, NULL},
		  (const char *const[]){"-t", "3s", "-l", lease, "--", "sleep", "1.5", NULL});
	cr_assert_geq(wait_msg(0, "READY=1", 10000, NULL), 0, "%s\n%s", received(), h_slurp(leader.err));
	cr_assert_eq(h_finish(&leader, 10000), 0, "%s", h_slurp(leader.err));
	cr_assert_geq(wait_msg(0, "STOPPING=1", 2000, NULL), 0, "%s", received());
	cr_assert_eq(count_msgs("WATCHDOG=1", 0, INT64_MAX, NULL, NULL), 0, "%s", received());
}

Test(sdnotify, abstract_socket_address_works)
{
	struct h_proc p;
	const char *lease = h_lease("abstract");
	char want[300];

	listen_notify(true);
	lr_notify(&p, NULL, false, NULL, (const char *const[]){"-n", "-l", lease, "--", "true", NULL});
	cr_assert_eq(h_finish(&p, 10000), 0, "%s", h_slurp(p.err));
	snprintf(want, sizeof(want), "READY=1\nSTATUS=leader of %s, term ", lease);
	cr_assert_geq(wait_msg(0, want, 2000, NULL), 0, "%s", received());
	cr_assert_geq(wait_msg(0, "STOPPING=1\nSTATUS=stopping: true exited with status 0", 2000, NULL), 0, "%s",
		      received());
}

/* --max-runtime stops the command with the lease still good: the loop stops
 * feeding the watchdog then, so it says STOPPING=1 at once, or systemd would
 * kill the unit during a long --kill-grace (it used to say nothing until the
 * end). */
Test(sdnotify, max_runtime_says_stopping_when_it_stops_the_command)
{
	struct h_proc leader;
	const char *lease = h_lease("maxrt");
	struct dgram ready, stopping;
	int r;

	listen_notify(false);
	lr_notify(&leader, NULL, false, (const char *const[]){"WATCHDOG_USEC=400000", NULL},
		  (const char *const[]){"-t", "6s", "-l", lease, "--max-runtime", "1s", "--kill-grace", "2s", "--",
					"sh", "-c", "trap '' TERM; sleep 30", NULL});
	r = wait_msg(0, "READY=1", 10000, &ready);
	cr_assert_geq(r, 0, "no READY=1: %s\n%s", received(), h_slurp(leader.err));
	cr_assert_gt(wait_msg(r + 1, "STOPPING=1", 10000, &stopping), r, "no STOPPING=1: %s\n%s", received(),
		     h_slurp(leader.err));
	cr_assert_str_eq(stopping.text, "STOPPING=1\nSTATUS=stopping sh: ran for 1s (--max-runtime)", "%s", received());
	/* Before the grace ran out: said when the stop began. */
	cr_assert_lt(stopping.at_ms - ready.at_ms, 1900, "%s", received());
	cr_assert_eq(h_finish(&leader, 10000), 124, "%s", h_slurp(leader.err));
	cr_assert_eq(count_msgs("WATCHDOG=1", stopping.at_ms + 1, INT64_MAX, NULL, NULL), 0, "%s", received());
}

Test(sdnotify, status_shows_a_hostile_paused_by_escaped_on_one_line)
{
	struct h_proc first, standby;
	const char *lease = h_lease("sdhostile");
	struct dgram d;
	const char *status;

	/* Any contender may write the row: a paused_by that would forge a
	 * second assignment and clear the screen of systemctl status. */
	LR(&first, "-l", lease, "--", "true");
	cr_assert_eq(h_finish(&first, 10000), 0, "%s", h_slurp(first.err));
	h_sql("UPDATE leaderrun_lease SET paused_until='9999-12-31 00:00:00', "
	      "paused_by=CONCAT('evil', CHAR(27), '[2J', CHAR(10), 'MAINPID=1', CHAR(13)) WHERE name='%s'",
	      lease);
	listen_notify(false);
	lr_notify(&standby, NULL, false, NULL, (const char *const[]){"-l", lease, "--", "true", NULL});
	cr_assert_geq(wait_msg(0, "paused by evil", 10000, &d), 0, "%s\n%s", received(), h_slurp(standby.err));
	status = strstr(d.text, "STATUS=");
	cr_assert_not_null(status, "%s", d.text);
	cr_assert_null(strchr(d.text, 27), "a raw ESC reached systemd: %s", received());
	cr_assert_null(strchr(status, '\n'), "a newline from the row made a second assignment: %s", received());
	cr_assert_null(strchr(status, '\r'), "%s", received());
	cr_assert(strstr(status, "evil\\x1b[2J\\nMAINPID=1\\r"), "%s", received());
	kill(standby.pid, SIGTERM);
	h_finish(&standby, 10000);
}
