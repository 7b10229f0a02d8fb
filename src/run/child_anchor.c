/* A hook's anchor: a process of leaderrun's in the hook's group that holds
 * the group's number while it lives (a number stays taken while any
 * member of its group exists, a zombie too), so that a kill of the group,
 * leaderrun's or the watcher's, never reaches a group that took the
 * number after the hook's group emptied (review S1). */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The anchor's life: joined to GROUP, no descriptor of leaderrun's (the
 * watcher's pipe held open would hide leaderrun's death from the watcher;
 * a database socket would keep its session), and every signal at its
 * default, so that the kill signal a term's leftovers get ends it too.
 * Forked from a threaded process: only system calls here. */
static void __attribute__((noreturn)) anchor_main(pid_t group)
{
	struct sigaction dfl;
	sigset_t empty;

	setpgid(0, group);
	if (syscall(SYS_close_range, 0, ~0U, 0) != 0) /* raw: musl has no wrapper */
		for (int fd = 0; fd < 4096; fd++)
			close(fd);
	/* As child_exec: glibc's sigaction refuses its reserved signals. */
	memset(&dfl, 0, sizeof(dfl));
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			syscall(SYS_rt_sigaction, s, &dfl, NULL, (size_t)(NSIG / 8));
	sigemptyset(&empty);
	sigprocmask(SIG_SETMASK, &empty, NULL);
	for (;;)
		pause();
}

pid_t child_anchor(pid_t group)
{
	pid_t pid = fork();

	if (pid == 0)
		anchor_main(group);
	if (pid < 0)
		return 0;
	/* In the parent as well, so that it is in the group when fork
	 * returns. It fails only if the hook moved to a session of its own
	 * already (setsid): then its group has no other member to pin. */
	if (setpgid(pid, group) != 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return 0;
	}
	return pid;
}
