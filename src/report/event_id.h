/* The names of a run's events, one per row of event_table.c, alone in a
 * header of their own: hold.c speaks them without including the report
 * code, and no event is renamed on its way from the decision to the log. */
#ifndef LEADERRUN_EVENT_ID_H
#define LEADERRUN_EVENT_ID_H

enum event_id {
	/* 1. waiting for the lease */
	EV_STARTING,	      /* connecting, before the first attempt */
	EV_SERVER,	      /* the first server that answered */
	EV_SERVER_MOVED,      /* a multi-host DSN moved on to another */
	EV_GALERA_SLOW,	      /* the timing does not fit the cluster's */
	EV_SERVER_UNSAFE,     /* the first server voids the promise: as --check-server says it */
	EV_WAITING,	      /* a holder (new, or another term) is waited for */
	EV_STANDBY,	      /* STATUS= after every look at a held lease */
	EV_WAITING_PAUSED,    /* a pause (new, or another end) is waited out */
	EV_STANDBY_PAUSED,    /* STATUS= after every look at a paused lease */
	EV_WOKEN,	      /* the holder's hint woke us: it died */
	EV_WOKEN_HANDED_ON,   /* ... woken by a waiter handing it on */
	EV_NO_HINT,	      /* the wake-up hint does not work: polling */
	EV_REFUSED,	      /* the server has no connection to spare (said once) */
	EV_STILL_REFUSED,     /* ... and after that */
	EV_RETRYING,	      /* another database error, retried after a pause */
	EV_CONNECTIONS_BACK,  /* the server takes connections again */
	EV_BUSY,	      /* not run: held by another */
	EV_PAUSED,	      /* not run: paused (--pause) */
	EV_SLOT_USED,	      /* not run: --once-per's slot already ran */
	EV_SLOT_TAKEN,	      /* not run: another instance runs (or ran) the scheduled slot */
	EV_SLOT_SKIPPED,      /* not run: a run of an earlier scheduled slot still holds the lease */
	EV_SLOT_PAUSED,	      /* not run: the scheduled slot came while the lease was paused */
	EV_SLOT_RETRYING,     /* a scheduled slot's try met a database error; tried again */
	EV_SLOT_MISSED,	      /* not run: the database failed until the scheduled slot's window closed */
	EV_UNAVAILABLE_AFTER, /* not run: the database still failed at --wait-timeout */
	EV_UNAVAILABLE,	      /* not run: the database failed, with --no-wait */
	EV_DENIED,	      /* not run: access denied */
	EV_UNTRUSTED,	      /* not run: the server is not verified (TLS) */
	EV_NO_TABLE,	      /* not run: no lease table, or an unknown one */
	EV_NO_DATABASE,	      /* not run: no such database */
	EV_SLOTS_DIFFER,      /* not run: the lease runs with another --slots */
	EV_WORKER_BUSY,	      /* not run: the database thread would not take the attempt */
	EV_WAIT_SIGNALLED,    /* a signal ended the wait */
	EV_QUIT_SIGNALLED,    /* the wait is over: STOPPING=1, by a signal */
	EV_QUIT_BUSY,	      /* ... not acquired */
	EV_QUIT_UNAVAILABLE,  /* ... the database is unavailable */
	EV_QUIT_FAILED,	      /* ... it cannot contend (denied, no table, ...) */
	EV_ACQUIRE_IN_FLIGHT, /* the wait ended, and an acquire in flight took the lease */
	EV_PREFERRED,	      /* free, but another candidate's to take for a while (choose.h) */
	EV_PREEMPTING,	      /* --preempt: the holder's term revoked, for us */
	EV_SPREAD_DEFERRED,   /* --spread: another host takes this lease first */

	/* 2. the command starts */
	EV_LOOP_FAILED,	      /* no signalfd or timerfd */
	EV_READY_FILE_STALE,  /* a --ready-file left behind could not be removed */
	EV_FENCE_ENDED,	      /* the session of a stale fenced transaction was ended */
	EV_FENCE_UNAVAILABLE, /* the table has no fence: the command runs without */
	EV_ACQUIRED,	      /* the lease is ours */
	EV_START_FAILED,      /* the command could not be started */
	EV_EXEC_FAILED,	      /* ... it started and could not exec (126, 127) */
	EV_READY_FILE_FAILED, /* --ready-file could not be written */
	EV_STARTED,	      /* it runs */

	/* 3. holding: the renews */
	EV_RENEWED,	       /* a renew succeeded */
	EV_RECOVERED,	       /* ... after failed ones */
	EV_RENEW_FAILED,       /* the first renew failed */
	EV_RENEW_FAILED_AGAIN, /* ... and the ones after it */
	EV_RENEW_CUT,	       /* a renew took longer than its budget */

	/* 3. holding: the lease's end, and the command's stop */
	EV_REVOKED,	     /* --release: the kill signal */
	EV_REVOKED_STOPPING, /* ... while the command was stopping already */
	EV_PREEMPTED,	     /* revoked by a candidate of a higher --priority (--preempt) */
	EV_SWITCHED_OVER,    /* revoked by --release --to, for a named standby */
	EV_LOST,	     /* the row is someone else's: SIGKILL */
	EV_LATE,	     /* no renew by the stop time: the kill signal */
	EV_LATE_KILLING,     /* ... while what the command left is killed */
	EV_DEADLINE,	     /* the deadline passed: SIGKILL */
	EV_GRACE_OVER,	     /* --kill-grace after the kill signal: SIGKILL */
	EV_TIMED_OUT,	     /* --max-runtime: the kill signal */
	EV_TIMED_OUT_KILL,   /* ... and SIGKILL after --kill-grace */
	EV_FORWARDED,	     /* a signal passed on to the command */
	EV_ASKED_TO_STOP,    /* ... one that a service manager stops with */
	EV_WATCHER_DIED,     /* the watcher process was killed */

	/* 4. the command's end, and what it left */
	EV_EXITED,	/* the command exited, or a signal killed it */
	EV_LEFT_BEHIND, /* it left processes: the kill signal */
	EV_OUTLIVED,	/* they outlived --kill-grace: SIGKILL */
	EV_RUN_EXITED,	/* the history's outcome, before the release */
	EV_RUN_SIGNALED,
	EV_RUN_TIMED_OUT,
	EV_RUN_LOST,
	EV_RUN_REVOKED,
	EV_RUN_PREEMPTED,
	EV_RUN_SWITCHED_OVER,

	/* 5. the release, and the run's end */
	EV_RELEASED,
	EV_RELEASE_LATE,    /* the database did not answer in time */
	EV_RELEASE_EXPIRED, /* the lease had expired already */
	EV_RELEASE_FAILED,
	EV_FINISHED,	       /* the run is over, the lease given back */
	EV_FINISHED_TIMED_OUT, /* ... after --max-runtime stopped the command */
	EV_STOPPED_LOST,       /* the run is over: the lease was lost */
	EV_STOPPED_REVOKED,    /* ... revoked */

	/* --service: the service on every instance, the role of this one */
	EV_SERVICE_STARTED,  /* the service runs: standby */
	EV_SERVICE_EXITED,   /* it exited while this instance stood by */
	EV_PROMOTING,	     /* the lease is ours: --on-promote runs */
	EV_PROMOTED,	     /* it exited 0 (or there is none): leader */
	EV_PROMOTE_FAILED,   /* it failed: stepping down */
	EV_STEPPING_DOWN,    /* leading must end, the lease still fine: a stop asked, a promote failed;
			      * --on-demote runs (or the service is stopped) */
	EV_DEMOTED,	     /* it exited 0: standby again, the service untouched */
	EV_DEMOTE_FAILED,    /* it failed: the service is killed */
	EV_DEMOTE_LATE,	     /* it ran past the grace or the deadline: the same */
	EV_HOOK_FAILED,	     /* a hook could not be started */
	EV_ROLE_FILE_FAILED, /* --role-file could not be replaced */

	/* --health-cmd */
	EV_HEALTH_FAILING,	/* failed --health-retries times in a row: not competing, stepping down */
	EV_HEALTH_OK,		/* passed again: competing */
	EV_HEALTH_FAILED_START, /* the check could not be started (counts as failed) */
	EV_HEALTH_WAIT,		/* not competing until the check passes (said once a wait) */
	EV_STOPPED_UNHEALTHY,	/* the run is over: the command was stopped for the check */
	EV_STOPPED_DEMOTE,	/* the run is over: the service was killed, its demote failed or ran late */
	EV_RUN_STEPPED_DOWN,	/* the history's outcome of a term that ended in a clean demote */
	EV_COUNT
};

#endif
