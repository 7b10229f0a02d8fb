/* Starting COMMAND, and the process housekeeping around it. */
#ifndef LEADERRUN_CHILD_H
#define LEADERRUN_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct child {
	pid_t pid;	   /* also its process group id */
	pid_t watcher;	   /* kills the group if leaderrun dies or stalls; 0: none */
	int watch_fd;	   /* deadlines to the watcher; -1: none */
	bool has_terminal; /* the child's group is the terminal's foreground */
	bool group_gone;   /* the group was seen empty: its id may be anyone's now */
	int exec_errno;	   /* set when exec failed */
	/* --role-file: a file beside it that says "standby", made before the
	 * watcher starts, which renames it over the role file when it kills
	 * the group (leaderrun dead, or frozen past the deadline: nobody
	 * leads here then); "": none. */
	char role_tmp[4096 + 16];
	const char *role_file;
	bool ahead; /* the watcher was started ahead of the command (child_prewatch) */
};

/* Looks COMMAND up as execvp(3) will. Returns 0 when it can run, else 127
 * (not found) or 126 (found, not executable) with a message in ERR. */
int child_precheck(const char *command, char *err, size_t errlen);

/* Forks and execs ARGV with ENVP in a new process group, with default
 * signal dispositions, an empty signal mask, only descriptors 0-2, and
 * SIGKILL as its parent-death signal; and starts the watcher, which
 * SIGKILLs the group at DEADLINE (CLOCK_BOOTTIME us) unless moved, or when
 * leaderrun dies (ROLE_FILE, when not NULL, then says "standby").
 * Returns 0; or -1 when fork failed or exec failed (C->exec_errno, and the
 * child still needs reaping). */
int child_spawn(struct child *c, char *const argv[], char *const envp[], int64_t deadline, const char *role_file,
		char *err, size_t errlen);

/* Starts the watcher ahead of the command, for child_spawn to use: with
 * no group to kill and no deadline yet, both of which the command's child
 * gives it before it execs. A waiter's, so that the fork of a process that
 * maps the client libraries is off the path from the acquisition to the
 * command's start. C as child_spawn will get it (its watch_fd -1 when
 * nothing was started before). Returns -1 when pipe or fork failed
 * (child_spawn then tries again). */
int child_prewatch(struct child *c, const char *role_file);

/* Moves the watcher's deadline (after a successful renew). */
void child_set_deadline(struct child *c, int64_t deadline);

/* --service: the watcher's deadline set to DEADLINE even when earlier (a
 * term begins; CHILD_NO_DEADLINE while standing by); and a hook's GROUP,
 * the promote's or the DEMOTE's (one slot each), which it kills with the
 * service's until told 0 (the term's end: every process the term's hooks
 * started is gone). */
#define CHILD_NO_DEADLINE ((int64_t)1 << 60)
void child_set_deadline_exact(struct child *c, int64_t deadline);
void child_watch_hook(struct child *c, pid_t group, bool demote);
/* The watcher no longer kills GROUP (the command's or a hook's): it was
 * seen empty, or its number is no longer pinned, and may be reused. */
void child_watch_forget(struct child *c, pid_t group);

/* Starts a --service hook, ARGV with ENVP, as the command is started but in
 * a process group of its own, without the terminal, and without a watcher
 * of its own (the service's guards it: child_watch_hook). Returns its pid
 * (= group), or -1 with ERR (exec failures exit 126/127, as the command's). */
pid_t child_spawn_hook(char *const argv[], char *const envp[], char *err, size_t errlen);

/* --service: forks a child of this process into GROUP (a hook's, just
 * spawned, not yet reaped) that waits there until a signal ends it, so
 * that GROUP's number stays taken until it is reaped (child_anchor.c).
 * Its pid; 0 when it could not be made (the group is then pinned only as
 * long as its leader is unreaped). */
pid_t child_anchor(pid_t group);

/* Sends SIG to the child's whole process group; -1 with ESRCH once the
 * group was seen empty, for good: the number is free then, and a group of
 * someone else's may take it. */
int child_signal(struct child *c, int sig);

/* True while any process is left in the child's process group. */
bool child_group_alive(struct child *c);

/* Stops the watcher once the group is empty, and reaps it. */
void child_unwatch(struct child *c);

/* True when the watcher is the one child of this process (every
 * thread's children file lists it, and nothing else): then nothing is left
 * below this process. As a subreaper it is the parent of every orphaned
 * descendant, and an orphan is moved onto its list before its dying parent
 * (on the list until reaped) leaves it; the watcher never forks. False
 * when anything else is listed (a health check, too), or the kernel lists
 * no children. */
bool child_only_watcher_left(const struct child *c);

/* Hands the terminal back to leaderrun's own process group, if the child
 * had it. */
void child_restore_terminal(struct child *c);

/* Sends SIG to every descendant of this process outside the command's
 * process group (that group is child_signal's), the watcher excepted: the
 * processes that left the group (setsid), whether orphaned to us (we are a
 * subreaper) or still the children of one that did. With the watcher gone
 * and no child left, returns at once (waitid); else walks the tree below
 * this process in /proc (each thread's children file), never every
 * process, unless the kernel lists no children. Returns how many were
 * signalled. Processes forked meanwhile are the next call's: the caller
 * repeats it until nothing is left. */
int child_kill_descendants(const struct child *c, int sig);

/* --service, the end of a term: SIG to every descendant of this process
 * below a child of its own that started at or after SINCE (clock ticks
 * after boot, /proc/PID/stat's starttime), except the children SPARE[0..N)
 * (the service, the health check: group leaders) and the members of their
 * groups, and the watcher, with what is below them: what the term's hooks
 * left, orphaned to this process (a subreaper)
 * or below a hook that still runs, whatever group it moved to (setsid).
 * Returns how many were found, zombies included: 0 once all are reaped
 * (where the kernel lists no children, after a scan of every process). */
int child_kill_term(const struct child *c, const pid_t *spare, int n, unsigned long long since, int sig);

/* When PID started, in clock ticks after boot; 0 when it cannot be read. */
unsigned long long child_started(pid_t pid);

/* 128+N for a signal death, the exit code otherwise: what sh reports. */
int child_exit_status(int wstatus);

/* What the command learns of its lease (and a hook of its role). */
struct child_lease {
	const char *lease, *holder;
	unsigned long long term;
	unsigned slot;
	const char *role;     /* a --service hook's: leader or standby; NULL: none */
	long service_pid;     /* with ROLE: the service's */
	int64_t scheduled_us; /* --schedule: the slot's time, us since the epoch; 0: none */
	unsigned attempt;     /* with SCHEDULED_US: 1 for the slot's first run */
};

/* The command's environment: BASE without leaderrun's secrets
 * (LEADERRUN_PASSWORD and MYSQL_PWD dropped, the password cut out of
 * LEADERRUN_DSN), without systemd's NOTIFY_SOCKET, WATCHDOG_USEC and
 * WATCHDOG_PID (leaderrun speaks for the unit), and with LEADERRUN_LEASE,
 * LEADERRUN_TERM, LEADERRUN_SLOT and LEADERRUN_HOLDER set from L; a hook's
 * with LEADERRUN_ROLE and LEADERRUN_SERVICE_PID too, a scheduled run's with
 * LEADERRUN_SCHEDULED and LEADERRUN_ATTEMPT. Returns a NULL-terminated
 * array for child_env_free, or NULL when out of memory. */
char **child_env_build(char *const base[], const struct child_lease *l);
void child_env_free(char **env);

#endif
