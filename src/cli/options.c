/* The command line into struct options: the defaults, argv read, then the
 * steps after it, in order. The table of options and how each stores its
 * value are in options_table.c; the steps live beside it by what they
 * judge: options_check.c, options_server.c, options_names.c,
 * options_secret.c; getopt_long's part in options_argv.c, --help in
 * options_help.c. */
#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/signame.h"
#include "options_int.h"

/* What holds when nothing on the command line or in the environment says
 * otherwise; first, so that every later step can override it. */
static void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->timing.ttl_us = 15 * USEC_PER_SEC;
	o->timing.renew_us = -1;
	o->timing.grace_us = -1;
	o->retry_us = USEC_PER_SEC;
	o->health_interval_us = 5 * USEC_PER_SEC;
	o->health_retries = 3;
	o->preempt_us = 30 * USEC_PER_SEC;
	/* Far above a promote that tells a local service to lead (ms, or
	 * seconds to warm up), and about what a dead leader costs at the
	 * default ttl: a hung promote keeps the lease from leading little
	 * longer than a failover does (issue 51: for good, before). */
	o->promote_timeout_us = 20 * USEC_PER_SEC;
	o->wait_timeout_us = -1;
	o->kill_signal = SIGTERM;
	o->busy_exit = 75;
	o->pause_for_us = -1;
	o->history_keep = 100;
	o->slots = 1;
}

/* What options_parse does once argv is read (options_read_argv), in this
 * order. Each step may use what the ones before it settled; and where one
 * command line is wrong twice, the order decides which message the user
 * sees. Each entry says why it stands where it does. */
typedef int options_step_fn(struct parse *p);
static options_step_fn *const options_steps[] = {
    /* Needs nothing; -q -v is named before any later fault. */
    options_take_verbosity,
    /* The DSN options_read_argv parsed: have_dsn, which the password,
     * option file and TLS steps read. */
    options_take_dsn,
    /* COMMAND or -c: before the shape, which counts COMMAND's words. */
    options_take_command,
    /* One mode and its operands: before the modes column, which judges
     * every option by the one mode. */
    options_check_shape,
    /* A --format that does not exist is named as such, in any mode. */
    options_take_format,
    /* The table's modes column: before the values that only some modes
     * use are parsed. */
    options_check_modes,
    /* --format's relations, --limit, --history-keep: their mode is right. */
    options_take_observe,
    /* --slots, --slot: the default slot depends on the mode. */
    options_take_slots,
    options_take_log_format,
    options_check_urls,
    /* A run's COMMAND, -n or -w: after the options' own faults, so that
     * "leaderrun --force" names --force, not the missing COMMAND. */
    options_check_run,
    /* --service against what only a job does. */
    options_check_service,
    options_check_choose,
    options_check_role,
    options_check_health,
    /* --schedule against a job's other ways to run, then SPEC, its zone
     * (read while no thread runs: tzoffsets.c) and --next's --from. */
    options_take_schedule,
    /* After the DSN, which may hold the password. */
    options_take_password,
    /* After the password: whether the client library reads the option
     * files depends on it. */
    options_read_files,
    /* After the option files, whose ssl-mode and ssl-ca count. */
    options_tls_sources,
    options_tls_files,
    /* Last of TLS: it needs the hosts (the DSN's or the option files'),
     * the mode and the CA settled. */
    options_tls_hosts,
    options_take_table,
    /* The LEASE of --status, --release and --history, then the history
     * table: a bad LEASE is named before a --table too long for it. */
    options_name_listed,
    options_take_history_table,
    options_name_pause,
    options_name_check,
    options_name_run,
    options_name_fence_user,
    /* Last: a run's ttl, renew and grace, judged together. */
    options_check_timing,
};

enum options_result options_parse(int argc, char *argv[], FILE *out, struct options *o, char *err, size_t errlen)
{
	/* The environment's fallbacks, which the command line overrides. */
	struct parse p = {
	    .o = o,
	    .out = out,
	    .err = err,
	    .errlen = errlen,
	    .dsn_text = getenv("LEADERRUN_DSN"),
	    .table = getenv("LEADERRUN_TABLE"),
	    .log_format = getenv("LEADERRUN_LOG_FORMAT"),
	};
	int rc;

	options_defaults(o);
	rc = options_read_argv(&p, argc, argv);
	if (rc == OPT_DONE) {
		if (p.show == SHOW_HELP)
			options_show_help(&p, NULL);
		else if (p.show == SHOW_VERSION)
			options_show_version(&p, NULL);
		return OPTIONS_EXIT;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(options_steps) / sizeof(options_steps[0]); i++)
		rc = options_steps[i](&p);
	if (rc < 0) {
		options_free(o);
		return OPTIONS_USAGE;
	}
	return OPTIONS_OK;
}

void options_free(struct options *o)
{
	if (o->command == o->shell_argv)
		o->command = NULL;
	free(o->shell_argv);
	o->shell_argv = NULL;
	dsn_free(&o->dsn);
	if (o->password) {
		explicit_bzero(o->password, strlen(o->password));
		free(o->password);
		o->password = NULL;
	}
}
