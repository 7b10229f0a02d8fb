/* The watcher beside the command, and leaderrun's end of its pipe. */
#include "child.h"
#include "child_int.h"

#include "base/timing.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* M's hook group joins the ones the watcher kills, in its hook's slot
 * (promote, demote: a term has one of each); 0 forgets them all (the
 * term's end). */
static void watch_hook_note(int64_t hooks[WATCH_HOOKS], int64_t m)
{
	int64_t g = m & WATCH_PID;

	if (!g) {
		for (int i = 0; i < WATCH_HOOKS; i++)
			hooks[i] = 0;
		return;
	}
	hooks[(m & WATCH_DEMOTE) ? 1 : 0] = g;
}

/* Group G is no longer to be killed: seen empty, its number may be anyone's
 * soon. -1 for the command's: its first message is taken already. */
static void watch_forget(int64_t *group, int64_t hooks[WATCH_HOOKS], int64_t g)
{
	if (*group == g)
		*group = -1;
	for (int i = 0; i < WATCH_HOOKS; i++)
		if (hooks[i] == g)
			hooks[i] = 0;
}

/* One message from leaderrun. The first is the command's own, its pid
 * (= group), sent before it execs; then deadlines and hooks' groups. */
static void watch_take(int64_t next, int64_t *group, int64_t hooks[WATCH_HOOKS], int64_t *deadline)
{
	if (!*group)
		*group = next;
	else if ((next & WATCH_HOOK) && (next & WATCH_FORGET))
		watch_forget(group, hooks, next & WATCH_PID);
	else if (next & WATCH_HOOK)
		watch_hook_note(hooks, next);
	else if (next & WATCH_EXACT)
		*deadline = next & ~WATCH_EXACT;
	else if (next > *deadline)
		*deadline = next;
}

/* The watcher: a small process beside leaderrun that SIGKILLs the command's
 * whole group when either
 *   - leaderrun dies, even by SIGKILL (its end of the pipe closes):
 *     PR_SET_PDEATHSIG reaches only the direct child, and grandchildren
 *     would keep working unsupervised; or
 *   - the lease deadline passes without leaderrun moving it: leaderrun is
 *     stopped (SIGSTOP, a debugger) while the command runs on.
 * With --service it guards the term's hooks' groups too (child_watch_hook),
 * after the hooks exited as well: a demote that runs on while leaderrun is
 * frozen, or a worker a promote left in its group, still leads.
 * It sits in its own process group, so that a signal aimed at leaderrun's
 * group does not stop or kill it too. Forked from a threaded process: only
 * system calls here. */
static void __attribute__((noreturn))
watcher_main(int fd, int64_t deadline, const char *role_tmp, const char *role_file)
{
	sigset_t all;
	/* The hooks' groups of the term: a promote's stays after it exited,
	 * with what it left running (`worker &`), until the term ends. */
	int64_t group = 0, hooks[WATCH_HOOKS] = {0};
	int tfd;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setpgid(0, 0);
	if (fd != 3) {
		dup2(fd, 3);
		fd = 3;
	}
	syscall(SYS_close_range, 4, ~0U, 0); /* raw: musl has no wrapper */
	tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = tfd, .events = POLLIN}};
		int64_t next;
		ssize_t n;

		if (tfd < 0 || timing_arm(tfd, deadline) < 0)
			break;
		if (poll(p, 2, -1) < 0)
			continue;
		/* A new deadline first: a renew that landed just in time must
		 * win over the timer of the old one. */
		if (p[0].revents) {
			n = read(fd, &next, sizeof(next));
			if (n == (ssize_t)sizeof(next)) {
				watch_take(next, &group, hooks, &deadline);
				continue;
			}
			if (n == 0 || (n < 0 && errno != EINTR))
				break; /* leaderrun is gone */
		}
		/* Trust the clock, not the wake-up. */
		if (p[1].revents && timing_now() >= deadline)
			break;
	}
	/* No group yet: leaderrun died before the command existed. */
	if (group > 0)
		kill(-(pid_t)group, SIGKILL);
	for (int i = 0; i < WATCH_HOOKS; i++)
		if (hooks[i] > 0)
			kill(-(pid_t)hooks[i], SIGKILL);
	/* Nobody leads here any more: the role file says so. */
	if (role_tmp[0])
		rename(role_tmp, role_file);
	_exit(0);
}

/* The watcher is started before the command, and the command tells it its
 * group before it execs: there is no moment when the command runs and a
 * SIGKILL of leaderrun would leave its grandchildren behind (under ASan the
 * fork after the exec was slow enough for a test to find that window). */
/* The watcher's "standby" for --role-file, written now: after the fork it
 * may only rename. */
static void child_role_tmp(struct child *c)
{
	static const char line[] = "standby\n";
	int fd;

	c->role_tmp[0] = '\0';
	if (!c->role_file ||
	    snprintf(c->role_tmp, sizeof(c->role_tmp), "%s.tmpXXXXXX", c->role_file) >= (int)sizeof(c->role_tmp)) {
		c->role_tmp[0] = '\0';
		return;
	}
	fd = mkostemp(c->role_tmp, O_CLOEXEC);
	if (fd < 0 || write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1) || fchmod(fd, 0644) != 0) {
		if (fd >= 0) {
			close(fd);
			unlink(c->role_tmp);
		}
		c->role_tmp[0] = '\0';
		return;
	}
	close(fd);
}

pid_t child_start_watcher(struct child *c, int64_t deadline)
{
	int fds[2];
	pid_t pid;

	child_role_tmp(c);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return 0;
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		watcher_main(fds[0], deadline, c->role_tmp, c->role_file);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return 0;
	}
	c->watch_fd = fds[1];
	return pid;
}

pid_t child_watch_anew(struct child *c, const char *role_file, int64_t deadline)
{
	/* One started ahead that died (sup_reap) leaves its pipe and file. */
	if (c->ahead)
		child_unwatch(c);
	memset(c, 0, sizeof(*c));
	c->watch_fd = -1;
	c->role_file = role_file;
	return c->watcher = child_start_watcher(c, deadline);
}

int child_prewatch(struct child *c, const char *role_file)
{
	if (c->ahead && c->watcher > 0)
		return 0;
	/* No group yet: until the command names it, the watcher's end (its
	 * deadline, or leaderrun's) kills nothing. */
	if (child_watch_anew(c, role_file, CHILD_NO_DEADLINE) <= 0)
		return -1;
	c->ahead = true;
	return 0;
}

void child_set_deadline(struct child *c, int64_t deadline)
{
	/* 8 bytes are written whole to a pipe, and the watcher reads them as
	 * fast as leaderrun renews. */
	if (c->watch_fd >= 0)
		(void)!write(c->watch_fd, &deadline, sizeof(deadline));
}

void child_set_deadline_exact(struct child *c, int64_t deadline)
{
	int64_t m = deadline | WATCH_EXACT;

	if (c->watch_fd >= 0)
		(void)!write(c->watch_fd, &m, sizeof(m));
}

void child_watch_hook(struct child *c, pid_t group, bool demote)
{
	int64_t m = (int64_t)group | WATCH_HOOK | (demote ? WATCH_DEMOTE : 0);

	if (c->watch_fd >= 0)
		(void)!write(c->watch_fd, &m, sizeof(m));
}

void child_watch_forget(struct child *c, pid_t group)
{
	int64_t m = (int64_t)group | WATCH_HOOK | WATCH_FORGET;

	if (c->watch_fd >= 0 && group > 0)
		(void)!write(c->watch_fd, &m, sizeof(m));
}

void child_unwatch(struct child *c)
{
	/* Kill it before closing the pipe: EOF would make it kill the group,
	 * whose id may by now belong to someone else. */
	if (c->watcher > 0) {
		kill(c->watcher, SIGKILL);
		while (waitpid(c->watcher, NULL, 0) < 0 && errno == EINTR)
			;
		c->watcher = 0;
	}
	if (c->watch_fd >= 0) {
		close(c->watch_fd);
		c->watch_fd = -1;
	}
	if (c->role_tmp[0]) {
		unlink(c->role_tmp);
		c->role_tmp[0] = '\0';
	}
}
