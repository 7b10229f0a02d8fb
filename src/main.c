/* leaderrun: run a command only while holding a lease in MySQL/MariaDB.
 *
 * Map of the code (data flows one way, down the folders; src/README.md
 * says more):
 *
 *   main.c     options -> mode -> outcome -> exit status (only main exits)
 *   cli/       argv, LEADERRUN_* and option files -> const struct options
 *              (options.c: one table of options, the steps after it in
 *              options_*.c; dsn.c, leasename.c)
 *   run/       runmode.c: a run: precheck, subreaper, the
 *              database thread (worker.c, worker_op.c), the supervisor;
 *              supervisor.c: the lease loop in order: sup_wait.c (waiting),
 *              sup_hold.c (the command under the lease, acting on hold.c's
 *              pure decisions), sup_end.c (sup_end_run: every run
 *              ends there); sup_loop.c the one poll(); sup_service.c
 *              (--service: promote, hold, demote, stand by again;
 *              backoff.c: its pauses after failed promotes);
 *              sup_health.c with health.c (--health-cmd);
 *              child*.c: fork/exec, the watcher, a hook group's anchor, every descendant's kill;
 *              outcome.c: what happened -> the exit status
 *   lease/     the protocol: lease.c (compare-and-set on one row; its
 *              look in lease_look.c),
 *              fence.c (the fence a job's transactions prove their term
 *              with), standby.c (the standbys' rows), lease_block.c (an acquisition, a release: one round
 *              trip and one commit each), every statement declared once
 *              in stmts.def
 *   db/        db_*.c, the only files that include <mysql.h> (db_lib.c,
 *              db_conn.c, db_probe.c, db_stmt.c, db_block.c,
 *              db_deadline.c); dberr.c classifies errors; tlspolicy.c;
 *              galera.c; sqltext.c
 *   report/    beside the loop: event.c and event_table.c (every event of a
 *              run, one row each: log line, --notify/--ping, metrics,
 *              STATUS=, history; the names in event_id.h, which hold.c
 *              speaks too), log.c, metrics.c, history.c, notify.c,
 *              sdnotify.c, role.c (--role-file, --role-http), role_http.c
 *              (--role-http's server), report.c
 *              (--status, --history), escape.c, json.c
 *   admin/     --init (init.c), --status, --history, --release, --pause,
 *              --resume, --check;
 *              servercheck.c --check-server (db/promise.c words its lines)
 *   base/      bgthread.c (the four background threads' lock, wake, quit),
 *              dlib.c (dlopen), timing.c, duration.c, atomicfile.c, signame.c,
 *              listenaddr.c
 */
#include <stdio.h>
#include <sys/prctl.h>

#include "admin/admin.h"
#include "admin/init.h"
#include "admin/servercheck.h"
#include "cli/options.h"
#include "report/log.h"
#include "run/outcome.h"
#include "run/runmode.h"

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
	 * no ptrace or /proc/PID/mem for COMMAND, which runs as the same user;
	 * COMMAND's exec makes it dumpable again. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	log_init(o.verbosity, o.mode == MODE_RUN ? o.lease : NULL, o.log_format == LOG_FORMAT_JSON);
	switch (o.mode) {
	case MODE_INIT:
		init_run(&o, &out);
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
	case MODE_CHECK_SERVER:
		servercheck_run(&o, &out);
		break;
	}

	status = outcome_exit_status(&out, o.busy_exit);
	options_free(&o);
	return status;
}
