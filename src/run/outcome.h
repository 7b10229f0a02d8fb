/* How a run ended, and the exit status that tells the caller. */
#ifndef LEADERRUN_OUTCOME_H
#define LEADERRUN_OUTCOME_H

enum outcome_kind {
	OUTCOME_CHILD_EXITED, /* COMMAND ran; wstatus says how it ended */
	OUTCOME_BUSY,	      /* not acquired: --no-wait or --wait-timeout */
	OUTCOME_LOST,	      /* the lease was lost and COMMAND was stopped */
	OUTCOME_TIMED_OUT,    /* --max-runtime ran out: COMMAND was stopped, the lease released */
	OUTCOME_SIGNALLED,    /* a signal ended the wait before COMMAND ran */
	OUTCOME_USAGE,
	OUTCOME_UNAVAILABLE,
	OUTCOME_DENIED,
	OUTCOME_NO_TABLE,
	OUTCOME_NOT_EXECUTABLE,
	OUTCOME_NOT_FOUND,
	OUTCOME_INIT_DONE, /* also: --status, --release and --check succeeded */
	OUTCOME_NO,	   /* --status/--release: no such lease; --check: not held */
	OUTCOME_INTERNAL,  /* fork, pipe, thread or memory failure */
	OUTCOME_STOPPED,   /* --schedule: TERM or INT (or QUIT) stopped it, its run ended */
};

struct outcome {
	enum outcome_kind kind;
	int wstatus; /* OUTCOME_CHILD_EXITED */
	int signo;   /* OUTCOME_SIGNALLED */
};

/* The documented exit statuses (leaderrun(1), EXIT STATUS). */
enum {
	EXIT_USAGE = 64,
	EXIT_UNAVAILABLE = 69,
	EXIT_INTERNAL = 71,
	EXIT_BUSY = 75,
	EXIT_LOST = 76,
	EXIT_DENIED = 77,
	EXIT_NO_TABLE = 78,
	EXIT_TIMED_OUT = 124, /* as timeout(1) */
	EXIT_NOT_EXECUTABLE = 126,
	EXIT_NOT_FOUND = 127,
};

int outcome_exit_status(const struct outcome *o, int busy_exit);

#endif
