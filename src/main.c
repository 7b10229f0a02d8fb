/* leaderrun: run a command only while holding a lease in MySQL/MariaDB.
 *
 * Map of the code (data flows one way):
 *
 *   main.c        options -> mode -> outcome -> exit status (only main exits)
 *   options.c     argv + LEADERRUN_* -> const struct options
 *     duration.c, dsn.c, leasename.c, timing.c (defaults, safety check)
 *   runmode.c     --init, or a run: precheck, subreaper, worker, supervisor
 *   admin.c       --status (also as Prometheus metrics), --history, --release, --check
 *   metrics.c     --metrics-file: counters, and a thread that writes the file
 *   history.c     the run history's writes: a thread and connection of their own
 *                 while held; a short run's one row after the release, on
 *                 the lease's connection (the worker's)
 *   supervisor.c  the lease loop in order: wait, spawn, hold, release (sup.h)
 *     sup_loop.c    the one poll(), reaping, the watchdog: what the parts share
 *     sup_wait.c    1. waiting for the lease (the wake-up hint, polling)
 *     sup_hold.c    2.-4. the command under the lease: acts on hold.c's
 *                   decisions and emits their events
 *     sup_release.c 5. giving it back
 *   event.c       every event of a run, one row each in event_table.c (log
 *                 line, --notify/--ping, metrics, STATUS=, history); the
 *                 only caller of those for the loop
 *   hold.c        the decisions while holding: lease and command states,
 *                 what to do next given them and the time (pure, unit-tested)
 *   worker.c      database thread: one statement at a time, own connection
 *   bgthread.c    what the four background threads share (lock, wake, quit)
 *   lease.c       the SQL protocol (compare-and-set on one row)
 *   stmts.def     every statement, declared once (stmt.h: its index)
 *   db.c          the only file that includes <mysql.h>; dberr.c classifies
 *   dlib.c        dlopen of the client library and libcurl, one table style
 *   child.c       fork/exec, process group, watcher, every descendant's kill
 *   atomicfile.c  --ready-file and --metrics-file: written beside, renamed over
 *   escape.c, report.c  what rows say, escaped for terminals, logs and JSON
 *   sdnotify.c    systemd's notify protocol; the events say what and when
 *   outcome.c     outcome -> documented exit status
 *   log.c         one line per event on stderr
 */
#include <stdio.h>
#include <sys/prctl.h>

#include "admin.h"
#include "log.h"
#include "options.h"
#include "outcome.h"
#include "runmode.h"

int main(int argc, char *argv[])
{
	struct options o;
	struct outcome out = {.kind = OUTCOME_INTERNAL};
	char err[512];
	int status;

	switch (options_parse(argc, argv, stdout, &o, err, sizeof(err))) {
	case OPTIONS_EXIT:
		return fflush(stdout) == 0 ? 0 : 1;
	case OPTIONS_USAGE:
		fprintf(stderr, "leaderrun: %s\n", err);
		return EXIT_USAGE;
	case OPTIONS_OK:
		break;
	}

	/* This process holds the database password: no core dump of it, and
	 * no ptrace or /proc/PID/mem for COMMAND, which runs as the same user
	 * (issue 25); COMMAND's exec makes it dumpable again. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	log_init(o.verbosity, o.mode == MODE_RUN ? o.lease : NULL, o.log_format == LOG_FORMAT_JSON);
	switch (o.mode) {
	case MODE_INIT:
		runmode_init(&o, &out);
		break;
	case MODE_RUN:
		runmode_run(&o, &out);
		break;
	case MODE_STATUS:
	case MODE_RELEASE:
	case MODE_CHECK:
	case MODE_PAUSE:
	case MODE_RESUME:
	case MODE_HISTORY:
		admin_run(&o, &out);
		break;
	}

	status = outcome_exit_status(&out, o.busy_exit);
	options_free(&o);
	return status;
}
