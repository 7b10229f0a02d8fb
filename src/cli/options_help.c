/* --help, made from the table, and --version. */
#include "config.h"
#include "options_int.h"
#include "revision.h"

int options_show_version(struct parse *p, const char *arg)
{
	fprintf(p->out, "leaderrun %s (git %s, %s)\n", LEADERRUN_VERSION, LEADERRUN_REVISION, LEADERRUN_CLIENT);
	return OPT_DONE;
}

/* The left column of --help: "  -d, --dsn DSN" or "      --table NAME". */
#define HELP_COLUMN 27

int options_show_help(struct parse *p, const char *arg)
{
	FILE *f = p->out;
	size_t ndefs;
	const struct options_def *defs = options_table(&ndefs);

	fputs("Usage: leaderrun [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       leaderrun [OPTIONS] -c STRING\n"
	      "       leaderrun [CONNECTION OPTIONS] --init\n"
	      "       leaderrun [CONNECTION OPTIONS] --status [--json | --format prometheus] [LEASE]\n"
	      "       leaderrun [CONNECTION OPTIONS] --release LEASE [--slot K] [--force]\n"
	      "       leaderrun [CONNECTION OPTIONS] --pause LEASE [--for DURATION] | --resume LEASE\n"
	      "       leaderrun [CONNECTION OPTIONS] --check [--lease L --holder H --term N] [--slot K]\n"
	      "       leaderrun [CONNECTION OPTIONS] --history LEASE [--json] [--limit N]\n"
	      "       leaderrun [CONNECTION OPTIONS] --check-server [--json]\n"
	      "\n"
	      "Run COMMAND only while holding a lease row in MySQL/MariaDB: at most one\n"
	      "copy (N with --slots N) runs across all hosts, and it is stopped before\n"
	      "anyone else can take its lease.\n"
	      "\n",
	      f);
	for (size_t i = 0; i < ndefs; i++) {
		const struct options_def *d = &defs[i];
		char left[64];
		int n;

		if (d->section)
			fprintf(f, "%s:\n", d->section);
		/* Options described in another's line (--ssl-key, --for, ...). */
		if (!d->help)
			continue;
		if (d->short_name)
			n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", d->short_name, d->name,
				     d->arg && d->arg[0] != '[' ? " " : "", d->arg ? d->arg : "");
		else
			n = snprintf(left, sizeof(left), "      --%s%s%s", d->name,
				     d->arg && d->arg[0] != '[' ? " " : "", d->arg ? d->arg : "");
		fprintf(f, "%-*s", HELP_COLUMN - 1, left);
		fputc(' ', f);
		(void)n;
		for (const char *h = d->help; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
		fputc('\n', f);
	}
	fputs("\n"
	      "DURATION: a number with unit ms, s, m or h (500ms, 15s, 1.5m); bare numbers are seconds.\n"
	      "Exit status: COMMAND's, or 75 busy, 76 lease lost, 124 --max-runtime reached,\n"
	      "64 usage, 69 database unavailable, 77 access denied or server not verified (TLS),\n"
	      "78 lease table missing, 126/127 COMMAND not executable/not found.\n"
	      "See leaderrun(1).\n",
	      f);
	return OPT_DONE;
}
