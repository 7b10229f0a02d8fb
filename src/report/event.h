/* Every event of a run, one row each: its name, the log line (level, JSON
 * "event", words), what it tells --notify and --ping, its effect on the
 * metrics, systemd's STATUS=, and the run history's outcome. The lease loop
 * says what happened once, event_emit(ev, EV_X, &details); only event.c
 * calls log, metrics, notify, sdnotify and history for it. A new event is a
 * name in event_id.h, a row in event_table.c and a call.
 *
 * The names are the only ones: hold.c's decisions carry them as they are
 * (the command's exit among them), and the supervisor adds the details and
 * emits them; nothing maps one event to another on the way.
 *
 * event_table.c holds the rows and their words and is pure (the unit tests
 * check it, tests/unit/test_event.c); event.c carries a row out. */
#ifndef LEADERRUN_EVENT_H
#define LEADERRUN_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/options.h"
#include "db/db.h"
#include "lease/lease.h"
#include "event_id.h"
#include "log.h"
#include "role.h"

struct notify;
struct metrics;
struct history;
struct sdnotify;

/* Why a skip (busy, paused, slot used) ended the run. */
enum event_skip {
	SKIP_NOW,     /* the slot it was for was used: even a wait ends */
	SKIP_NO_WAIT, /* --no-wait */
	SKIP_WAITED,  /* --wait-timeout ran out, after a wait of us */
};

/* What varies from one emission of an event to the next; each event reads
 * the fields its words name, the rest stay zero. */
struct event {
	uint64_t term;		       /* the row's term: busy, paused, waiting, slot used, woken */
	int signo;		       /* a signal: forwarded, or the one that ended the wait */
	int wstatus;		       /* the command's wait status; -1: it never ran */
	int pid;		       /* the watcher's */
	unsigned failures;	       /* failed renews before this one */
	int64_t us;		       /* the duration the words name */
	int64_t kill_in;	       /* until SIGKILL follows the kill signal */
	int64_t now;		       /* when it happened, for the receivers' durations; 0: now */
	int64_t latency, margin;       /* a renew's: send to answer; deadline left at the answer */
	int64_t sent_at;	       /* the acquire's send time, for the history */
	enum db_status status;	       /* the database's answer */
	const char *err;	       /* its words, or the system's */
	enum event_skip skip;	       /* a skip's why */
	const struct lease_info *info; /* the row as a look saw it */
	const struct db_server *srv;   /* the server that answered */
	uint64_t session;	       /* a connection id on the server */
	bool revoked;		       /* the lease's end: revoked, not lost */
	const char *by;		       /* preempted by, switched over to; preempting: the holder */
	int priority;		       /* preempting: the holder's --priority */
};

/* Where events go, and what every one of them may name: the run's lease,
 * term and slot, once acquired. */
struct events {
	const struct options *o;
	struct notify *n;
	struct metrics *m;
	struct history *h;
	struct sdnotify *sd;
	const char *cmd; /* COMMAND's name, for the STATUS= lines */
	uint64_t term;
	unsigned slot;
	int64_t acquired_at;
	int exit_status;				    /* the command's; -1: none yet */
	char server[sizeof(((struct db_server *)0)->name)]; /* the last server that answered */
	bool lost_said;	     /* the lease's end went to the receivers and systemd (once) */
	enum role_kind role; /* this instance's, as the supervisor last said it (sup_role) */
	struct role *rb;     /* where it is published (role.h) */
};

/* Says EV happened, as its row says. D may be NULL (no details). */
void event_emit(struct events *ev, enum event_id id, const struct event *d);

/* ---- the table (event_table.c), pure ---- */

/* What a row tells --notify and --ping. */
enum event_tell {
	TELL_NONE,
	TELL_ROW,  /* the row's term (d->term), as a contender */
	TELL_RUN,  /* our term */
	TELL_HELD, /* our term, and for how long it was held */
	TELL_END,  /* ... and the command's exit status */
};

/* A row's effect on the metrics. */
enum event_metric {
	MET_NONE,
	MET_WAITING,	 /* waiting for the lease */
	MET_NOT_WAITING, /* not any longer, without it */
	MET_ACQUIRED,	 /* not waiting: acquired */
	MET_STARTED,
	MET_RENEWED,
	MET_RENEW_FAILED,
	MET_REVOKED,
	MET_PREEMPTED,	   /* revoked, by a preemption */
	MET_SWITCHED_OVER, /* revoked, by a switch-over */
	MET_PREEMPTING,	   /* this candidate preempted a holder */
	MET_TIMED_OUT,
	MET_EXITED,
	MET_RELEASED,
	MET_NOT_HELD,
	MET_LOST, /* a loss counted, then not held */
};

/* A row's STATUS= to systemd. */
enum event_sd {
	SD_NONE,
	SD_STATUS,   /* STATUS= */
	SD_STANDBY,  /* STATUS=, with READY=1 the first time */
	SD_LEADING,  /* ... unless the stop began */
	SD_STOPPING, /* STOPPING=1 the first time, with STATUS= */
};

/* Words from the details into BUF (LEN bytes, NUL-terminated). */
typedef void event_say(const struct events *ev, const struct event *d, char *buf, size_t len);

struct event_row {
	const char *name;  /* unique: the row's own, for tests and readers */
	const char *event; /* the log line's JSON "event"; NULL: none */
	enum log_level level;
	const char *text;   /* the log line's words when fixed; else ... */
	event_say *say;	    /* ... made from the details; both NULL: no log line */
	const char *notify; /* the receivers' event name (with tell) */
	enum event_tell tell;
	bool lease_end; /* the lease's end: "lost" to the receivers and STOPPING=1, once a run */
	enum event_metric metric;
	enum event_sd sd;
	const char *status;    /* STATUS= when fixed; else ... */
	event_say *status_say; /* ... made from the details */
	const char *history;   /* HISTORY_* outcome that ends the run's row; NULL: none */
	bool history_begin;    /* the run's row begins */
};

/* The row of ID; NULL for none. */
const struct event_row *event_row(enum event_id id);

/* A row's log words and STATUS= words, as event_emit makes them (D may be
 * NULL). */
void event_words(const struct event_row *row, const struct events *ev, const struct event *d, char *buf, size_t len);
void event_status_words(const struct event_row *row, const struct events *ev, const struct event *d, char *buf,
			size_t len);

/* Room for any message: the log's cut (log.h) and systemd's STATUS= both
 * fit, so a message cut here is cut where they would cut it. */
#define EVENT_TEXT_MAX (LOG_MSG_MAX + 8)

#endif
