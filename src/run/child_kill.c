/* The kill of every descendant outside the command's group: none left
 * (waitid), else the walk of the tree below leaderrun, else the scan of
 * every process; each signal through a pidfd. */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* One process as /proc shows it. */
struct proc_entry {
	pid_t pid, ppid, pgid;
	unsigned long long start; /* in clock ticks after boot: with the pid, who it is */
	bool mine;		  /* a descendant of this process, the watcher's line excepted */
};

/* Fields 3 to 22 of /proc/PID/stat from P, which starts at field 3 (the
 * state) after comm, into F[3..22]: each field's leading decimal digits (0
 * for the state, and for a negative nice). -1 if the line is shorter. */
static int proc_stat_fields(const char *p, unsigned long long f[23])
{
	for (int i = 3; i <= 22; i++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -1;
		for (f[i] = 0; *p >= '0' && *p <= '9'; p++)
			f[i] = f[i] * 10 + (unsigned long long)(*p - '0');
		p += strcspn(p, " ");
	}
	return 0;
}

/* Reads "pid (comm) state ppid pgrp ..." from /proc/PID/stat; comm may hold
 * ')' and spaces, so the fields are read after its last ')'. */
static int proc_read(pid_t pid, struct proc_entry *e)
{
	char path[64], buf[512], *rp;
	unsigned long long f[23];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	rp = strrchr(buf, ')');
	/* Fields 4, 5 and 22: ppid, pgrp, starttime. By hand: sscanf cost
	 * some 7,000 instructions a process, and the fallback scan
	 * (child_kill_scanned) reads every process on the machine. */
	if (!rp || proc_stat_fields(rp + 1, f) < 0)
		return -1;
	e->start = f[22];
	e->pid = pid;
	e->ppid = (pid_t)f[4];
	e->pgid = (pid_t)f[5];
	e->mine = false;
	return 0;
}

/* Every process on the system, or NULL (out of memory, no /proc). */
static struct proc_entry *proc_list(size_t *count)
{
	DIR *d = opendir("/proc");
	struct proc_entry *list = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char *rp;
		pid_t pid = (pid_t)strtol(de->d_name, &rp, 10);

		if (*rp || pid <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown)
				break;
			list = grown;
		}
		if (proc_read(pid, &list[n]) == 0)
			n++;
	}
	closedir(d);
	*count = n;
	return list;
}

static int proc_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
	return (x > y) - (x < y);
}

/* Marks the descendants of SELF, but not WATCHER's line. LIST is sorted by
 * pid; a pass marks each process whose parent is marked, until a pass marks
 * nothing new (as many passes as the tree is deep). */
static void proc_mark_descendants(struct proc_entry *list, size_t n, pid_t self, pid_t watcher)
{
	bool grew = true;

	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			struct proc_entry key = {.pid = list[i].ppid}, *parent;

			if (list[i].mine || list[i].pid == watcher)
				continue;
			parent = bsearch(&key, list, n, sizeof(*list), proc_cmp);
			if (list[i].ppid == self || (parent && parent->mine))
				list[i].mine = grew = true;
		}
	}
}

/* SIG to the process E names, and to no other: between the scan and the
 * kill its pid may have been freed and taken (by another user's process,
 * even). A pidfd pins the process; if the one it pins started when the
 * scanned one did, it is the same. Without pidfds (Linux < 5.3), kill. */
static int proc_kill(const struct proc_entry *e, int sig)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	struct proc_entry now;
	int fd = (int)syscall(SYS_pidfd_open, e->pid, 0), rc = -1;

	if (fd < 0)
		return errno == ENOSYS ? kill(e->pid, sig) : -1;
	if (proc_read(e->pid, &now) == 0 && now.start == e->start)
		rc = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
	close(fd);
	return rc;
#else
	return kill(e->pid, sig);
#endif
}

/* The full scan: every process on the system read from /proc, and the
 * descendants marked by parent. What child_kill_descendants falls back to
 * where the kernel lists no children (built without CONFIG_PROC_CHILDREN,
 * or older than Linux 3.17, which has no /proc/thread-self); it costs a
 * read of every process on the machine. */
static int child_kill_scanned(const struct child *c, int sig)
{
	size_t n = 0;
	struct proc_entry *list = proc_list(&n);
	int killed = 0;

	if (!list)
		return 0;
	qsort(list, n, sizeof(*list), proc_cmp);
	proc_mark_descendants(list, n, getpid(), c->watcher);
	for (size_t i = 0; i < n; i++)
		/* The group is child_signal's: one signal each, not two. */
		if (list[i].mine && list[i].pgid != c->pid && proc_kill(&list[i], sig) == 0)
			killed++;
	free(list);
	return killed;
}

/* The tree below this process as the walk finds it: LIST[0..N) in the
 * order found, parents before children. An entry's ppid is the parent it
 * was listed under until it is visited, then what /proc/PID/stat says. */
struct proc_walk {
	struct proc_entry *list;
	size_t n, cap;
	pid_t self, watcher;
	bool watcher_seen; /* the watcher's line was listed */
};

/* PID, listed as a child of PARENT, to be visited. -1 when out of memory. */
static int walk_add(struct proc_walk *w, pid_t pid, pid_t parent)
{
	struct proc_entry *grown;

	/* The watcher's line is not ours to signal (it never forks). */
	if (pid == w->watcher)
		w->watcher_seen = true;
	if (pid <= 0 || pid == w->watcher)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 32;
		if (!(grown = realloc(w->list, cap * sizeof(*grown))))
			return -1;
		w->list = grown;
		w->cap = cap;
	}
	w->list[w->n++] = (struct proc_entry){.pid = pid, .ppid = parent};
	return 0;
}

/* Adds the pids in the children file PATH ("pid pid ... "), their parent
 * PARENT. A file that is gone (its thread exited) lists nothing. */
static int walk_read_children(struct proc_walk *w, const char *path, pid_t parent)
{
	char buf[1024];
	long pid = -1; /* the digits so far; -1: between numbers */
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return 0;
	while (rc == 0 && (len = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < len && rc == 0; i++) {
			if (buf[i] >= '0' && buf[i] <= '9' && pid < INT_MAX / 10)
				pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
			else if (pid >= 0) {
				rc = walk_add(w, (pid_t)pid, parent);
				pid = -1;
			}
		}
	if (rc == 0 && pid >= 0)
		rc = walk_add(w, (pid_t)pid, parent);
	close(fd);
	return rc;
}

/* Adds the children of PID (0: this process) to W: each thread has its
 * own list, /proc/PID/task/TID/children, of the children it forked (or
 * that were reparented to it), so every thread's is read. */
static int walk_children(struct proc_walk *w, pid_t pid)
{
	struct dirent *de;
	char dir[64], path[sizeof(dir) + sizeof(de->d_name) + 16];
	DIR *d;
	int rc = 0;

	if (pid)
		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	else
		snprintf(dir, sizeof(dir), "/proc/self/task");
	if (!(d = opendir(dir)))
		return 0; /* gone meanwhile: its children are reparented to us */
	while (rc == 0 && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s/children", dir, de->d_name);
			rc = walk_read_children(w, path, pid ? pid : w->self);
		}
	closedir(d);
	return rc;
}

/* Whether the process FD pins (or, without pidfds, PID) still holds its
 * pid: a zombie does too, until it is reaped. EPERM: it is there, and not
 * ours to signal (a set-user-ID descendant). */
static bool walk_alive(int fd, pid_t pid)
{
	int rc = -1;

#if defined(SYS_pidfd_send_signal)
	if (fd >= 0)
		rc = (int)syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0);
#endif
	if (fd < 0)
		rc = kill(pid, 0);
	return rc == 0 || errno == EPERM;
}

/* Visits LIST[I]: pins it, checks that it is the child it was listed as
 * (or, orphaned since, ours), and adds its children. Its pid may have been
 * freed and taken by anyone since its parent's list was read: the pidfd
 * holds the process it names, and if that process still holds the pid
 * after its stat and its children were read, both were its own. Marks it
 * mine, with the start time that proc_kill checks again before the
 * signal. Without a pidfd (Linux < 5.3, or no descriptor left),
 * kill(PID, 0) says the same, less surely: skipping the process would
 * leave its subtree unseen. */
static int walk_visit(struct proc_walk *w, size_t i)
{
	struct proc_entry e;
	pid_t parent = w->list[i].ppid;
	size_t mark = w->n;
	int fd = -1, rc = 0;

#if defined(SYS_pidfd_open)
	fd = (int)syscall(SYS_pidfd_open, w->list[i].pid, 0);
	if (fd < 0 && errno == ESRCH)
		return 0; /* gone: its children, if any, are ours now */
#endif
	if (proc_read(w->list[i].pid, &e) == 0 && (e.ppid == parent || e.ppid == w->self)) {
		rc = walk_children(w, e.pid);
		e.mine = walk_alive(fd, e.pid);
		if (!e.mine)
			w->n = mark; /* another's children, maybe */
		w->list[i] = e;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Signals the tree below this process, breadth first from its own
 * children (the watcher's line excepted): only its own descendants are
 * read, however many processes the machine runs. Out of
 * memory, what was found so far. */
static int child_kill_walked(const struct child *c, int sig)
{
	struct proc_walk w = {.self = getpid(), .watcher = c->watcher};
	int killed = 0, rc = walk_children(&w, 0);

	for (size_t i = 0; rc == 0 && i < w.n; i++)
		rc = walk_visit(&w, i);
	for (size_t i = 0; i < w.n; i++)
		/* The group is child_signal's: one signal each, not two. */
		if (w.list[i].mine && w.list[i].pgid != c->pid && proc_kill(&w.list[i], sig) == 0)
			killed++;
	free(w.list);
	return killed;
}

bool child_only_watcher_left(const struct child *c)
{
	struct proc_walk w = {.self = getpid(), .watcher = c->watcher};
	bool only;

	if (c->watcher <= 0)
		return false;
	/* Listed, the watcher proves the lists are read at all. */
	only = walk_children(&w, 0) == 0 && w.n == 0 && w.watcher_seen;
	free(w.list);
	return only;
}

/* True when nothing is left below this process. As a subreaper it is the
 * parent of every orphaned descendant, so each descendant, alive or a
 * zombie, is its child or below one: no child at all (waitid's ECHILD)
 * proves the tree empty, with no look at /proc. The watcher is a child
 * too, so this holds only once it is gone. __WALL: without it, waitid
 * skips a child whose exit signal is not SIGCHLD (clone(2)) and would
 * answer ECHILD with that child alive. */
static bool child_none_left(const struct child *c)
{
	siginfo_t si;

	if (c->watcher > 0)
		return false;
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD;
}

int child_kill_descendants(const struct child *c, int sig)
{
	if (child_none_left(c))
		return 0;
	/* Each thread's children file needs CONFIG_PROC_CHILDREN (Debian's
	 * kernels have it); without it, the scan of every process. */
	if (access("/proc/thread-self/children", F_OK) != 0)
		return child_kill_scanned(c, sig);
	return child_kill_walked(c, sig);
}

unsigned long long child_started(pid_t pid)
{
	struct proc_entry e;

	return proc_read(pid, &e) == 0 ? e.start : 0;
}

/* Whether E, a child of this process, is the term's: not spared, and
 * started at or after SINCE. A spared child's group is spared too: the
 * service's processes that were orphaned to us are still the service's. */
/* The term's bounds: the SPARE (N of them) and its start (SINCE). */
struct term_of {
	const pid_t *spare;
	int n;
	unsigned long long since;
};

static bool term_child(const struct proc_entry *e, const struct term_of *t)
{
	const pid_t *spare = t->spare;

	for (int k = 0; k < t->n; k++)
		if (spare[k] > 0 && (e->pid == spare[k] || e->pgid == spare[k]))
			return false;
	return e->start >= t->since;
}

/* Whether the walk's LIST[I] is the term's: below a child of this process
 * that is (term_child). Parents come before children in the list, so a
 * process's is its parent's, found before it. */
static bool term_owned(const struct proc_walk *w, const bool *term, size_t i, const struct term_of *t)
{
	const struct proc_entry *e = &w->list[i];

	if (e->ppid == w->self)
		return term_child(e, t);
	for (size_t k = i; k-- > 0;)
		if (w->list[k].pid == e->ppid)
			return term[k];
	return false;
}

/* child_kill_term where the kernel lists no children: every process read
 * (child_kill_scanned's way), the term's marked from this process's own
 * children down, pass after pass until a pass adds none. Out of memory,
 * or no /proc: not proven empty (1). */
static int child_kill_term_scanned(const struct child *c, const struct term_of *t, int sig)
{
	size_t count = 0;
	struct proc_entry *list = proc_list(&count);
	bool *term = list ? calloc(count ? count : 1, sizeof(*term)) : NULL, grew = true;
	pid_t self = getpid();
	int found = 0;

	if (!term) {
		free(list);
		return 1;
	}
	qsort(list, count, sizeof(*list), proc_cmp);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < count; i++) {
			struct proc_entry key = {.pid = list[i].ppid}, *parent;

			if (term[i] || list[i].pid == c->watcher)
				continue;
			if (list[i].ppid == self)
				term[i] = term_child(&list[i], t);
			else if ((parent = bsearch(&key, list, count, sizeof(*list), proc_cmp)))
				term[i] = term[parent - list];
			grew = grew || term[i];
		}
	}
	for (size_t i = 0; i < count; i++)
		if (term[i]) {
			found++;
			proc_kill(&list[i], sig);
		}
	free(term);
	free(list);
	return found;
}

int child_kill_term(const struct child *c, const pid_t *spare, int n, unsigned long long since, int sig)
{
	struct proc_walk w = {.self = getpid(), .watcher = c->watcher};
	const struct term_of t = {spare, n, since};
	int found = 0, rc;
	bool *term;

	/* Without children files (no CONFIG_PROC_CHILDREN) the walk would
	 * find nothing, and the term be declared clear unproven (review S3):
	 * the scan, as child_kill_descendants falls back to. */
	if (access("/proc/thread-self/children", F_OK) != 0)
		return child_kill_term_scanned(c, &t, sig);
	rc = walk_children(&w, 0);

	for (size_t i = 0; rc == 0 && i < w.n; i++)
		rc = walk_visit(&w, i);
	term = calloc(w.n ? w.n : 1, sizeof(*term));
	for (size_t i = 0; term && i < w.n; i++) {
		term[i] = w.list[i].mine && term_owned(&w, term, i, &t);
		/* The zombies too: the term ends once they are reaped. */
		if (term[i]) {
			found++;
			proc_kill(&w.list[i], sig);
		}
	}
	/* Out of memory, or the lists unread: not proven empty. */
	if (!term || rc != 0)
		found++;
	free(term);
	free(w.list);
	return found;
}
