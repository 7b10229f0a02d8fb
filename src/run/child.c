/* Starting COMMAND: the precheck, the fork and exec, its process group and
 * the terminal, signals to the group, the exit status. The watcher is
 * child_watch.c's, the descendants' kill child_kill.c's, the environment
 * child_env.c's. */
#include "child.h"
#include "child_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int can_exec(const char *path, int *err)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		*err = errno;
		return 0;
	}
	if (S_ISDIR(st.st_mode) || access(path, X_OK) != 0) {
		*err = EACCES;
		return 0;
	}
	return 1;
}

int child_precheck(const char *command, char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	int e = ENOENT, seen_eacces = 0;
	char buf[PATH_MAX];

	if (strchr(command, '/')) {
		if (can_exec(command, &e))
			return 0;
		if (e == ENOENT || e == ENOTDIR) {
			snprintf(err, errlen, "%s: command not found", command);
			return 127;
		}
		snprintf(err, errlen, "%s: %s", command, strerror(e));
		return 126;
	}
	/* execvp's default search path when PATH is unset. */
	if (!path)
		path = "/bin:/usr/bin";
	while (*command) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		/* An empty element means the current directory. */
		int w = n ? snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, command)
			  : snprintf(buf, sizeof(buf), "%s", command);
		if (w > 0 && (size_t)w < sizeof(buf)) {
			if (can_exec(buf, &e))
				return 0;
			if (e == EACCES)
				seen_eacces = 1;
		}
		if (!colon)
			break;
		path = colon + 1;
	}
	if (seen_eacces) {
		snprintf(err, errlen, "%s: permission denied", command);
		return 126;
	}
	snprintf(err, errlen, "%s: command not found", command);
	return 127;
}

/* In the vfork(2) child, which borrows the parent's memory and stack until
 * it execs: only system calls from here on, and no return. */
static void __attribute__((noreturn)) child_exec(pid_t parent, bool take_terminal, int watch_fd, int64_t deadline,
						 volatile int *exec_errno, char *const argv[], char *const envp[])
{
	int64_t msg[2];
	/* Larger than any kernel's struct sigaction. */
	struct {
		unsigned long words[8];
	} dfl;
	sigset_t empty;
	int e;

	setpgid(0, 0);
	/* Tell the watcher which group to kill, before anything runs in it;
	 * and, to one started ahead (child_prewatch), the deadline too, in
	 * the same write: there is no moment when the command runs and the
	 * watcher has no deadline. */
	msg[0] = getpid();
	msg[1] = deadline | WATCH_EXACT;
	if (watch_fd >= 0)
		(void)!write(watch_fd, msg, deadline ? sizeof(msg) : sizeof(msg[0]));
	/* Our SIGTTOU is blocked (inherited), so this works from a background
	 * job too; tini does the same so ^C reaches the command. */
	if (take_terminal)
		tcsetpgrp(STDIN_FILENO, getpid());
	/* Dies with leaderrun even on SIGKILL; a parent that already died
	 * before prctl took effect shows up as a changed getppid(). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);

	/* The MySQL client sets SIGPIPE to ignored, and an ignored disposition
	 * survives exec: give every signal back its default. The raw system
	 * call, because glibc refuses to touch the two real-time signals it
	 * reserves (32, 33), which an ignoring parent passes on all the same.
	 * An all-zero kernel sigaction is SIG_DFL with no flags on every
	 * architecture. */
	memset(&dfl, 0, sizeof(dfl));
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			syscall(SYS_rt_sigaction, s, &dfl, NULL, (size_t)(NSIG / 8));

	/* No database or other socket leaks into the command (vfork gives the
	 * child its own descriptor table). */
	syscall(SYS_close_range, 3, ~0U, 0); /* raw: musl has no wrapper */

	sigemptyset(&empty);
	sigprocmask(SIG_SETMASK, &empty, NULL);
	execvpe(argv[0], argv, envp);

	/* The parent is suspended until we exec or exit, and reads this. */
	e = errno;
	*exec_errno = e;
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

int child_spawn(struct child *c, char *const argv[], char *const envp[], int64_t deadline, const char *role_file,
		char *err, size_t errlen)
{
	volatile int exec_errno = 0;
	pid_t parent = getpid();
	bool take_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

	bool ahead = c->ahead && c->watcher > 0;

	if (ahead) {
		c->pid = 0;
		c->has_terminal = c->group_gone = false;
		c->exec_errno = 0;
	} else
		/* None started ahead, or it died: one now. */
		child_watch_anew(c, role_file, deadline);
	/* The deadline, for a watcher started without one. */
	volatile int64_t told = ahead ? deadline : 0;

	/* vfork: the parent sleeps until the child has exec'd, without copying
	 * the page tables of a process that maps the MySQL and TLS libraries.
	 * That is a measurable share of leaderrun's per-run cost. */
	c->pid = vfork();
	if (c->pid == 0)
		child_exec(parent, take_terminal, c->watch_fd, told, &exec_errno, argv, envp);
	if (c->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		child_unwatch(c);
		return -1;
	}
	/* The child set its group before exec; this only covers the case
	 * where it died first. */
	setpgid(c->pid, c->pid);
	c->has_terminal = take_terminal;
	if (exec_errno) {
		c->exec_errno = exec_errno;
		snprintf(err, errlen, "%s: %s", argv[0], strerror(exec_errno));
		return -1;
	}
	return 0;
}

pid_t child_spawn_hook(char *const argv[], char *const envp[], char *err, size_t errlen)
{
	volatile int exec_errno = 0;
	pid_t parent = getpid(), pid = vfork();

	if (pid == 0)
		child_exec(parent, false, -1, 0, &exec_errno, argv, envp);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	setpgid(pid, pid);
	if (exec_errno)
		snprintf(err, errlen, "%s: %s", argv[0], strerror(exec_errno));
	return pid;
}

int child_signal(struct child *c, int sig)
{
	if (c->group_gone) {
		errno = ESRCH;
		return -1;
	}
	if (kill(-c->pid, sig) == 0)
		return 0;
	if (errno == ESRCH) {
		/* The watcher too: a service's may stay while its term's
		 * hooks run, long after (sup_keeps_watcher). */
		c->group_gone = true;
		child_watch_forget(c, c->pid);
		errno = ESRCH;
	}
	return -1;
}

bool child_group_alive(struct child *c)
{
	return child_signal(c, 0) == 0 || errno == EPERM;
}

void child_restore_terminal(struct child *c)
{
	if (!c->has_terminal)
		return;
	tcsetpgrp(STDIN_FILENO, getpgrp());
	c->has_terminal = false;
}

int child_exit_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WEXITSTATUS(wstatus);
}
