/* The mode, COMMAND, and the options judged against each other: the
 * modes each goes with (the table's column), values that only mean
 * something together, and a run's timing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/listenaddr.h"
#include "options_int.h"

/* -q: quiet, unless a -v says otherwise. */
int options_take_verbosity(struct parse *p)
{
	if (!p->quiet)
		return 0;
	if (p->o->verbosity > 0)
		FAIL("-q and -v contradict each other; give one");
	p->o->verbosity = -1;
	return 0;
}

/* The table's modes column for one option: refused with its row's line
 * when given in a mode it does not go with. */
static int options_goes_with_mode(struct parse *p, const struct options_def *d)
{
	if (options_given(p, d) && !(d->modes & OPTIONS_MODE(p->o->mode)))
		FAIL("%s", d->modes_error);
	return 0;
}

/* Every option against the mode, the first refused in --help's order.
 * After options_check_shape: with two modes given, "the mode" would be
 * the last one only. */
int options_check_modes(struct parse *p)
{
	size_t n;
	const struct options_def *defs = options_table(&n);

	for (size_t i = 0; i < n; i++)
		if (options_goes_with_mode(p, &defs[i]) < 0)
			return -1;
	return 0;
}

/* COMMAND: argv's rest, or -c STRING as /bin/sh -c STRING. Before the
 * shape of the command line is checked, which looks at COMMAND. */
int options_take_command(struct parse *p)
{
	struct options *o = p->o;

	o->command = p->argv + p->command_at;
	if (!p->shell)
		return 0;
	/* -c's row of the modes column, ahead of the other rows: in another
	 * mode, options_check_shape would take its STRING for a COMMAND
	 * that the mode does not take. */
	if (options_goes_with_mode(p, options_row("command")) < 0)
		return -1;
	/* As flock -c: the string is the whole command; words after it
	 * would be a second one, or meant as its arguments. */
	if (o->command[0])
		FAIL("-c STRING and COMMAND '%s' contradict each other; give one: -c 'STRING' or -- COMMAND [ARG...]",
		     SHOWN(o->command[0]));
	o->shell_argv = calloc(4, sizeof(*o->shell_argv));
	if (!o->shell_argv)
		FAIL("out of memory");
	/* The shell's absolute path, not "sh" from PATH: a crontab's PATH
	 * is short, and flock(1) runs $SHELL or /bin/sh. */
	o->shell_argv[0] = "/bin/sh";
	o->shell_argv[1] = "-c";
	o->shell_argv[2] = (char *)p->shell;
	o->command = o->shell_argv;
	return 0;
}

/* One mode, and the operands it takes after the options. */
int options_check_shape(struct parse *p)
{
	const struct options *o = p->o;

	if (p->modes > 1)
		FAIL("--init, --status, --history, --release, --check, --check-server, --pause, --resume and --next "
		     "are modes of their own; give one");
	if (o->mode != MODE_RUN && o->mode != MODE_STATUS && o->command[0])
		FAIL("unexpected argument '%s'; this mode takes no COMMAND", SHOWN(o->command[0]));
	if (o->mode == MODE_STATUS && o->command[0] && o->command[1])
		FAIL("--status takes at most one LEASE, not '%s'", SHOWN(o->command[1]));
	return 0;
}

/* --format's value; before options_check_modes, so that a format that
 * does not exist is named as such in any mode. */
int options_take_format(struct parse *p)
{
	if (!p->format)
		return 0;
	if (strcmp(p->format, "json") == 0)
		p->o->json = true;
	else if (strcmp(p->format, "prometheus") == 0)
		p->o->format = FORMAT_PROMETHEUS;
	else if (strcmp(p->format, "text") != 0)
		FAIL("--format '%s' is not a format; use text, json or prometheus", SHOWN(p->format));
	return 0;
}

/* A count from MIN to MAX (--limit, --history-keep, --slots, --slot). */
static int parse_count(const char *opt, const char *text, unsigned min, unsigned max, unsigned *out, char *err,
		       size_t errlen)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || end == text || *end || *text == '-' || n < min || n > max) {
		snprintf(err, errlen, "%s '%s' must be a number from %u to %u", opt, SHOWN(text), min, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* What --status and --history print, and the runs kept: after the modes,
 * which decide whether these go at all. */
int options_take_observe(struct parse *p)
{
	struct options *o = p->o;

	if (o->format == FORMAT_PROMETHEUS && o->mode != MODE_STATUS)
		FAIL("--format prometheus goes with --status");
	if (o->json && o->format == FORMAT_PROMETHEUS)
		FAIL("--json and --format prometheus contradict each other; give one");
	if (o->json)
		o->format = FORMAT_JSON;
	if (p->limit_text &&
	    parse_count("--limit", p->limit_text, 0, 1000000, &o->history_limit, p->err, p->errlen) < 0)
		return -1;
	if (p->keep_text &&
	    parse_count("--history-keep", p->keep_text, 0, 1000000, &o->history_keep, p->err, p->errlen) < 0)
		return -1;
	return 0;
}

/* --slots for a run; --slot (or the command's LEADERRUN_SLOT) for --check
 * and --release. After the modes: the default slot depends on the mode. */
int options_take_slots(struct parse *p)
{
	struct options *o = p->o;
	const char *slot = p->slot_text, *slot_from = "--slot";
	unsigned k = 0;

	o->slot = o->mode == MODE_RELEASE ? -1 : 0;
	if (p->slots_text) {
		if (parse_count("--slots", p->slots_text, 1, LEASE_SLOTS_MAX, &o->slots, p->err, p->errlen) < 0)
			return -1;
		/* A slot a period is another feature; one run a period across
		 * the fleet is what --once-per promises. */
		if (o->slots > 1 && o->once_per_us)
			FAIL("--once-per runs one command a period; it does not go with --slots %u", o->slots);
	}
	if (!slot && o->mode == MODE_CHECK && (slot = getenv("LEADERRUN_SLOT")) != NULL)
		slot_from = "LEADERRUN_SLOT";
	if (slot) {
		if (parse_count(slot_from, slot, 0, LEASE_SLOTS_MAX - 1, &k, p->err, p->errlen) < 0)
			return -1;
		o->slot = (int)k;
	}
	return 0;
}

/* --log-format, or LEADERRUN_LOG_FORMAT. */
int options_take_log_format(struct parse *p)
{
	if (!p->log_format || !*p->log_format)
		return 0;
	if (strcmp(p->log_format, "json") == 0)
		p->o->log_format = LOG_FORMAT_JSON;
	else if (strcmp(p->log_format, "text") != 0)
		FAIL("--log-format '%s' is not a format; use text or json", SHOWN(p->log_format));
	return 0;
}

int options_check_urls(struct parse *p)
{
	const struct options *o = p->o;

	for (int i = -1; i < o->nnotify; i++) {
		const char *u = i < 0 ? o->ping_url : o->notify_urls[i];
		if (u && strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
			FAIL("%s URL must start with http:// or https://", i < 0 ? "--ping" : "--notify");
	}
	return 0;
}

/* A run needs a COMMAND, and one way to wait. */
int options_check_run(struct parse *p)
{
	const struct options *o = p->o;

	if (o->mode == MODE_RUN && !o->command[0])
		FAIL("no COMMAND given; usage: leaderrun [OPTIONS] -- COMMAND [ARG...], or -c STRING");
	if (o->no_wait && o->wait_timeout_us >= 0)
		FAIL("--no-wait and --wait-timeout contradict each other; give one");
	return 0;
}

/* --health-interval and --health-retries tune --health-cmd. */
int options_check_health(struct parse *p)
{
	const struct options *o = p->o;

	if (o->health_cmd && !*o->health_cmd)
		FAIL("--health-cmd needs a command STRING");
	if (!o->health_cmd &&
	    (options_given(p, options_row("health-interval")) || options_given(p, options_row("health-retries"))))
		FAIL("--%s tunes --health-cmd; add --health-cmd CMD",
		     options_given(p, options_row("health-interval")) ? "health-interval" : "health-retries");
	return 0;
}

/* --role-file and --role-http: a path, and an address to listen on. */
int options_check_role(struct parse *p)
{
	const struct options *o = p->o;
	struct sockaddr_storage ss;
	socklen_t len;
	char why[200];

	if (o->role_file && !*o->role_file)
		FAIL("--role-file needs a path");
	if (o->role_http && listenaddr_parse(o->role_http, &ss, &len, why, sizeof(why)) < 0)
		FAIL("--role-http: %s", why);
	return 0;
}

/* --service: the hooks need it, and what ends a job's run has no meaning
 * for a service that runs on every instance. */
int options_check_service(struct parse *p)
{
	const struct options *o = p->o;

	if (!o->service) {
		if (o->on_promote || o->on_demote || options_given(p, options_row("promote-timeout")))
			FAIL("--%s goes with --service; add --service to run COMMAND on every instance",
			     o->on_promote  ? "on-promote"
			     : o->on_demote ? "on-demote"
					    : "promote-timeout");
		return 0;
	}
	if ((o->on_promote && !*o->on_promote) || (o->on_demote && !*o->on_demote))
		FAIL("--%s needs a command STRING", o->on_promote && !*o->on_promote ? "on-promote" : "on-demote");
	if (o->no_wait)
		FAIL("--service waits for the lease while COMMAND runs; it does not go with --no-wait");
	if (o->max_runtime_us)
		FAIL("--service runs COMMAND for as long as it runs; it does not go with --max-runtime");
	if (o->once_per_us || o->min_hold_us)
		FAIL("--service does not go with --%s, which are for cron jobs",
		     o->once_per_us ? "once-per" : "min-hold");
	if (o->slots > 1)
		FAIL("--service has one leader; it does not go with --slots %u", o->slots);
	return 0;
}

/* Choosing the leader (lease/choose.h): --preempt needs a priority to
 * preempt with and a wait to do it from; a choice is of one holder, so
 * not with --slots; --to names a standby as a holder id would. */
int options_check_choose(struct parse *p)
{
	const struct options *o = p->o;

	if (o->release_to) {
		if (lease_name_validate("--to", o->release_to, LEASE_HOLDER_MAX, p->err, p->errlen) < 0)
			return -1;
		if (o->force)
			FAIL("--to hands the lease to a standby; it does not go with --force, which frees it for "
			     "anyone");
		if (o->slot >= 0)
			FAIL("--to switches a one-slot lease over; it does not go with --slot");
	}
	if (o->preempt && !o->priority_given)
		FAIL("--preempt takes the lease from a holder of a lower priority; give this candidate --priority N");
	if (o->preempt && o->no_wait)
		FAIL("--preempt waits for its turn to take the lease over; it does not go with --no-wait");
	if ((o->priority_given || o->preempt || o->spread) && o->slots > 1)
		FAIL("--%s chooses one holder; it does not go with --slots %u",
		     o->priority_given ? "priority"
		     : o->preempt      ? "preempt"
				       : "spread",
		     o->slots);
	return 0;
}

/* A run's timing, the last check: --ttl, --renew-interval and --kill-grace
 * are judged together, with the defaults that scale with ttl. */
int options_check_timing(struct parse *p)
{
	if (p->o->mode != MODE_RUN)
		return 0;
	return timing_resolve(&p->o->timing, p->err, p->errlen);
}

/* --from TIME, else the local clock's now: where --next starts, and where
 * a zone's offsets are read from. */
static int schedule_from(struct parse *p)
{
	struct timespec now;
	char why[200];

	if (p->from_text) {
		if (schedule_parse_time(p->from_text, &p->o->from_us, why, sizeof(why)) < 0)
			FAIL("--from: %s", why);
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	p->o->from_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
	return 0;
}

/* --schedule: what a scheduled run does not go with, then SPEC in its
 * zone (a bad one named before any connection is made), for --next or a
 * run. */
int options_take_schedule(struct parse *p)
{
	struct options *o = p->o;
	char why[400];
	int rc;

	if (!p->schedule_text) {
		if (p->schedule_tz)
			FAIL("--schedule-tz ZONE is the time zone of a --schedule; add --schedule SPEC");
		if (o->mode == MODE_NEXT)
			FAIL("--next N prints a schedule's slots; add --schedule SPEC");
		if (o->catch_up_us)
			FAIL("--catch-up WINDOW runs a --schedule's lost slots again; add --schedule SPEC");
		return 0;
	}
	/* A slot is waited for within its own window (SCHEDULES). */
	if (o->mode == MODE_RUN && o->wait_timeout_us >= 0)
		FAIL("--schedule waits for each slot until its window closes; it does not go with --wait-timeout");
	if (o->mode == MODE_RUN && (o->no_wait || o->once_per_us || o->service || o->slots > 1))
		FAIL("--schedule runs COMMAND once a slot; it does not go with %s", o->no_wait	     ? "-n (--no-wait)"
										    : o->once_per_us ? "--once-per"
										    : o->service     ? "--service"
												 : "--slots above 1");
	if (schedule_from(p) < 0)
		return -1;
	rc = schedule_parse(&o->schedule, p->schedule_text, p->schedule_tz, o->from_us, why, sizeof(why));
	if (rc == SCHEDULE_BAD_ZONE)
		FAIL("--schedule-tz: %s", why);
	if (rc < 0)
		FAIL("--schedule: %s", why);
	o->have_schedule = true;
	return 0;
}
