/* Helpers for the integration suites: the real leaderrun binary against a
 * real MariaDB started by scripts/sandbox-db. Criterion runs every test in
 * its own process; processes here are started with posix_spawn. */
#ifndef LEADERRUN_TEST_HARNESS_H
#define LEADERRUN_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <criterion/criterion.h>

/* A suite's main(): starts a private sandbox database unless LR_DB_SOCKET
 * names one already, runs the tests, stops it. */
#define HARNESS_MAIN                                                                                                   \
	int main(int argc, char *argv[])                                                                               \
	{                                                                                                              \
		return h_main(argc, argv);                                                                             \
	}
int h_main(int argc, char *argv[]);

/* A suite whose tests start their own servers: only a directory for them
 * (LR_DB_DIR), removed at the end. */
#define HARNESS_MAIN_BARE                                                                                              \
	int main(int argc, char *argv[])                                                                               \
	{                                                                                                              \
		return h_main_bare(argc, argv);                                                                        \
	}
int h_main_bare(int argc, char *argv[]);

/* Runs ARGV (argv[0] a path) to completion; its stdout, trimmed, into OUT
 * (may be NULL). Returns the exit status, 128+N for signal N. */
int h_run(const char *const argv[], char *out, size_t outlen);

struct h_proc {
	pid_t pid;
	char out[256], err[256]; /* stdout and stderr files */
	int status;		 /* exit status, 128+N for signal N; -1 running */
};

/* A fresh directory for this test. */
const char *h_dir(void);
/* h_dir()/NAME, in a static rotating buffer. */
const char *h_path(const char *name);

const char *h_bin(void);
/* DSN of the least-privileged test user, over TCP. */
const char *h_dsn(void);
/* Same, to another loopback PORT (a proxy in front of the server). Like
 * h_dsn, a static buffer that the next call of either overwrites. */
const char *h_dsn_port(int port);
/* Same user over the unix socket. */
const char *h_dsn_socket(void);
/* Root over the socket (may create tables). */
const char *h_dsn_root(void);
/* A lease name unique to this test process. */
const char *h_lease(const char *base);

/* Starts ARGV (NULL-terminated) with the extra environment ENV (NULL or
 * "NAME=value" entries, NULL-terminated); stdout/stderr go to files. */
void h_start(struct h_proc *p, const char *const argv[], const char *const env[]);
/* Starts leaderrun with LEADERRUN_DSN set to h_dsn() and ARGS. */
void h_leaderrun(struct h_proc *p, const char *const args[]);
/* The same through 127.0.0.1:PORT (a proxy in front of the server). */
void h_leaderrun_via(struct h_proc *p, int port, const char *const args[]);
/* Waits up to TIMEOUT_MS; returns the exit status, or -1 on timeout (the
 * process is left running). */
int h_wait(struct h_proc *p, int timeout_ms);
/* Like h_wait, but a timeout fails the test after killing the process. */
int h_finish(struct h_proc *p, int timeout_ms);

/* Whole file as a string (static buffer of 64 KiB), "" if missing. */
const char *h_slurp(const char *path);
/* Waits until PATH exists and holds NEEDLE (or is non-empty if NULL). */
bool h_wait_file(const char *path, const char *needle, int timeout_ms);
/* A loopback port nobody listens on now (bound, then closed): for a
 * server the test starts, which binds it again. */
int h_free_port(void);
/* Writes a line to the FIFO GO once its reader has opened it: a held
 * transaction's shell (read -r _ < GO) goes on to its COMMIT. */
void h_fifo_go(const char *go);

/* Runs SQL as root on the test database; returns its output, trimmed
 * (static buffer). Fails the test on error. */
const char *h_sql(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The most sessions seen blocked on LEASE's wake-up hint (followers in
 * GET_LOCK) over a second of samples: a follower polls the row between
 * waits. */
int h_hint_waiters(const char *lease);
/* The server's id of the session of LEASE's follower blocked on the hint
 * now (found by the hint's name; a test fails when none blocks). */
long h_follower_session(const char *lease);
/* The statements LEASE's follower, blocked on the hint now, sends in the
 * next WINDOW_S seconds, counted in the server's general log (its session
 * found by the hint's name; a test fails when none blocks). */
long h_follower_statements(const char *lease, int window_s);

/* KILL CONNECTION for every session of USER, server-side; returns how
 * many there were. */
int h_kill_connections(const char *user);

/* True when this suite's server is Oracle MySQL (LEADERRUN_TEST_SERVER=mysql:
 * scripts/sandbox-mysql), false for MariaDB. */
bool h_server_mysql(void);

/* True when leaderrun is built against Oracle's libmysqlclient (its
 * --version names the library), false for MariaDB Connector/C. */
bool h_client_oracle(void);

/* Runs scripts/sandbox-db SUBCOMMAND on this suite's sandbox. */
void h_sandbox(const char *subcommand);

/* A paused virtual machine: leaderrun P, its watcher and its command,
 * whose first line of output was its pid ("echo $$; exec ..."). h_vm_of
 * waits for that line and finds the watcher; h_vm_signal sends SIGSTOP
 * (leaderrun first) or SIGCONT (the command first) to all three. */
struct h_vm {
	pid_t leaderrun, watcher, command;
};
void h_vm_of(const struct h_proc *p, struct h_vm *vm);
void h_vm_signal(const struct h_vm *vm, int sig);

/* True if PID exists and is not a zombie. */
bool h_alive(pid_t pid);
/* Waits until PID is gone; returns false on timeout. */
bool h_wait_gone(pid_t pid, int timeout_ms);

/* CLOCK_MONOTONIC milliseconds. */
int64_t h_now_ms(void);
void h_sleep_ms(int ms);

/* The --propagation for "unshare -m" here: "private" (its default), or
 * "unchanged" where / is no mount point (a chroot: unshare cannot remount
 * it, and the chroot's own mount namespace is private already). */
const char *h_unshare_propagation(void);

/* The path of the probe script (tests/integration/probe.sh). */
const char *h_probe(void);

/* The command of a run whose tree the watcher must take with it: a child
 * that prints "CHILD GRANDCHILD" and waits for the grandchild. */
#define H_TREE_CMD "sh", "-c", "sleep 30 & echo $$ $!; wait"
/* P runs H_TREE_CMD: P SIGKILLed, its command's child and grandchild die
 * with it (the watcher's promise; PR_SET_PDEATHSIG reaches one process). */
void h_sigkill_takes_the_tree(struct h_proc *p);
/* P holds LEASE (--ttl 2s) with probe.sh on LOG and LOCK: a standby comes,
 * P alone is frozen, and the watcher stops P's command at the deadline,
 * before the standby's starts (no overlap); thawed, P exits 76. */
void h_frozen_holders_command_stops_at_the_deadline(struct h_proc *p, const char *lease, const char *log,
						    const char *lock);

/* The overlap checker: reads a probe.sh log, fails the test on any
 * violation or on terms that do not grow from one start to the next, and
 * returns the number of starts. START_NS/TERMS (may be NULL) receive up to
 * MAX of them in order. */
int h_probe_check(const char *log, int64_t *start_ns, unsigned long long *terms, int max);

/* A replicated cluster that a sandbox script (LR_SANDBOX) started for a
 * whole suite: test_galera.c's and test_gr.c's. Its directory is in the
 * environment variable DIR_VAR, its members' SQL ports in PORTS_VAR
 * ("P1 P2 P3"). */
struct h_cluster {
	const char *ports_var, *dir_var;
	/* The statement that makes a session's reads causal: they see every
	 * transaction the cluster committed before they began. */
	const char *causal;
};

/* The SQL port of member N (1-3). */
int h_cluster_port(const struct h_cluster *c, int n);

/* LEADERRUN_DSN=... listing the members in ORDER ("231": member 2 first);
 * four such strings live at once. */
const char *h_cluster_dsn(const struct h_cluster *c, const char *order);

/* LR_SANDBOX SUBCOMMAND DIR [ARG]; fails the test on error. */
void h_cluster_do(const struct h_cluster *c, const char *subcommand, const char *arg);

/* Starts leaderrun ARGS (NULL-terminated) with the members listed in
 * ORDER. */
void h_cluster_lr(const struct h_cluster *c, struct h_proc *p, const char *order, const char *const args[]);

/* ROUNDS of two `-n -- sleep HOLD` on a fresh lease each, through members
 * 1 and 2 in turn ("12" and "21"), at once: exactly one runs, the other
 * exits 75 (not acquired), never an error. */
void h_cluster_race(const struct h_cluster *c, int rounds, const char *hold);

/* ROUNDS of six first uses of a 2-slot lease at once, listed in ORDERS[6]:
 * exactly two run and four exit 75, none fails. */
void h_cluster_slot_race(const struct h_cluster *c, int rounds, const char *const orders[6], const char *hold);

/* Root SQL FMT on member N, its reads causal; its output, trimmed (static
 * buffer). Fails the test on error. */
const char *h_cluster_sql(const struct h_cluster *c, int n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fenced writes across members. A lease held at term 1 through
 * member 1; a transaction of term 1 through member 1 fences, writes its row
 * and stays open; a new holder through member 2 takes the lease over once
 * it is released, and its command writes its row through member 2, fenced
 * with term 2. Then the open transaction commits: refused, and only term
 * 2's row is committed, on every member; the fence on every member refuses
 * term 1 and takes term 2. Returns the error code of the refused commit. */
int h_cluster_fence_takeover(const struct h_cluster *c);

/* What h_cluster_fence_race saw. */
struct h_fence_race {
	int rounds;
	int committed_first;	 /* term 1 committed before the move: allowed */
	int refused;		 /* term 1's commit failed */
	int codes[4], counts[4]; /* the refusals' error codes, how many each */
};

/* ROUNDS of a term-1 transaction through one member committing while a
 * new term's holder moves the fence through another (the commit sent from
 * 10 ms before to 120 ms after the holder starts). The new command's first
 * action is a causal read of term 1's rows: a term-1 row committed in the
 * end that this read did not see committed after the new command began,
 * and fails the test. */
void h_cluster_fence_race(const struct h_cluster *c, int rounds, struct h_fence_race *r);

#endif
