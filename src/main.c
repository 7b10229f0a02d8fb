/* leaderrun: run a command only while holding a lease in MySQL/MariaDB.
 *
 * The map of the code, and the layering, are in src/README.md.
 */
#include <stdio.h>
#include <sys/prctl.h>

#include "admin/admin.h"
#include "admin/init.h"
#include "admin/nextslots.h"
#include "admin/servercheck.h"
#include "cli/options.h"
#include "report/log.h"
#include "run/outcome.h"
#include "run/cron.h"
#include "run/run.h"
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
		if (o.have_schedule)
			cron_run(&o, &out);
		else
			run_plain(&o, &out);
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
	case MODE_NEXT:
		nextslots_run(&o, &out);
		break;
	}

	status = outcome_exit_status(&out, o.busy_exit);
	options_free(&o);
	return status;
}
