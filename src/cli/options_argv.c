/* argv up to COMMAND, read with getopt_long from the table: each option
 * given stored (options_store), one line for any getopt refuses, and the
 * DSN's password wiped from argv whatever happened. */
#include <getopt.h>
#include <string.h>

#include "options_int.h"

/* getopt_long's view of the table: the long options, and the short ones
 * as "+:d:l:...". An option's getopt value is its short letter, or 256
 * plus its index. */
static void options_getopt_table(struct option *longs, char *shorts, size_t shortcap)
{
	size_t ndefs, k = 0;
	const struct options_def *defs = options_table(&ndefs);

	/* '+': stop at the first non-option, so COMMAND's options stay its
	 * own. ':' first: report missing arguments ourselves, in one line. */
	shorts[k++] = '+';
	shorts[k++] = ':';
	for (size_t i = 0; i < ndefs; i++) {
		longs[i] = (struct option){defs[i].name,
					   defs[i].takes_value == OPTIONS_VALUE_OPTIONAL ? optional_argument
					   : defs[i].takes_value			 ? required_argument
											 : no_argument,
					   NULL, defs[i].short_name ? defs[i].short_name : 256 + (int)i};
		if (defs[i].short_name && k + 3 < shortcap) {
			shorts[k++] = (char)defs[i].short_name;
			if (defs[i].takes_value == 1)
				shorts[k++] = ':';
		}
	}
	longs[ndefs] = (struct option){NULL, 0, NULL, 0};
	shorts[k] = '\0';
}

static const struct options_def *options_def_of(int c)
{
	size_t ndefs;
	const struct options_def *defs = options_table(&ndefs);

	if (c >= 256 && c < 256 + (int)ndefs)
		return &defs[c - 256];
	for (size_t i = 0; i < ndefs; i++)
		if (defs[i].short_name && defs[i].short_name == c)
			return &defs[i];
	return NULL;
}

/* The name as written when --password-file was given as --password (or
 * shorter), else NULL: getopt_long takes any unique prefix, and
 * "--password SECRET" would be read as a file name, then printed as one
 * that does not exist. */
static const char *options_password_abbrev(char *argv[], const char *value)
{
	/* "--pass FILE" leaves optind past FILE, "--pass=FILE" past itself. */
	const char *written = value == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];

	return strcspn(written + 2, "=") < strlen("password-") ? written : NULL;
}

/* A long option getopt_long refused: unknown, ambiguous, or a flag given
 * a value (--init=1). Named up to its '=' only: the value may be a secret
 * (--dns=mysql://app:pw@db/ops, a typo of --dsn). */
static int options_unknown_long(struct parse *p, const char *arg)
{
	const char *name = arg + 2;
	size_t ndefs, n = strcspn(name, "="), matches = 0;
	const struct options_def *defs = options_table(&ndefs), *d = NULL;

	for (size_t i = 0; i < ndefs; i++)
		if (strncmp(defs[i].name, name, n) == 0) {
			if (strlen(defs[i].name) == n) {
				d = &defs[i];
				matches = 1;
				break;
			}
			d = &defs[i];
			matches++;
		}
	if (matches > 1)
		FAIL("option '--%.*s' is ambiguous; write it out in full (see leaderrun --help)", (int)n, name);
	if (matches == 1 && !d->takes_value && name[n] == '=')
		FAIL("option '--%s' takes no value; see leaderrun --help", d->name);
	FAIL("unknown option '--%.*s'; see leaderrun --help", (int)n, name);
}

/* Reads the options up to COMMAND into P. Returns 0, -1 (usage) or
 * OPT_DONE. */
static int options_read(struct parse *p, int argc, char *argv[])
{
	struct option longs[DEFS_MAX + 1];
	char shorts[2 * DEFS_MAX + 3];
	int c;

	options_getopt_table(longs, shorts, sizeof(shorts));
	opterr = 0;
	/* 0, not 1: glibc's full reset, which also forgets a half-read
	 * bundle (-Vv) of an earlier call. */
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct options_def *d = options_def_of(c);
		int rc;

		if (d) {
			const char *w =
			    strcmp(d->name, "password-file") == 0 ? options_password_abbrev(argv, optarg) : NULL;
			if (w)
				FAIL("unknown option '%.*s': there is no --password (a password in argv shows in "
				     "ps); write --password-file FILE in full, or use LEADERRUN_PASSWORD",
				     (int)strcspn(w, "="), w);
			rc = options_store(p, d, optarg);
			if (rc != 0)
				return rc;
			continue;
		}
		if (c == ':')
			FAIL("option '%s' needs a value; see leaderrun --help", SHOWN(argv[optind - 1]));
		if (strncmp(argv[optind - 1], "--", 2) == 0)
			return options_unknown_long(p, argv[optind - 1]);
		if (optopt)
			FAIL("unknown option '-%c'; see leaderrun --help", optopt);
		FAIL("unknown option '%.2s'; see leaderrun --help", argv[optind - 1]);
	}
	return 0;
}

/* Reads argv up to COMMAND, then parses the DSN and wipes argv. The DSN
 * is parsed before the wipe because its text may lie in argv; the wipe
 * comes before any other check can fail, because even a refused command
 * line must not linger with the secret. A refused one (a typo,
 * --dns=...) is wiped all through: nothing runs, and the rest was never
 * parsed. The DSN's own errors wait for options_take_dsn. Returns 0, -1
 * (usage) or OPT_DONE. */
int options_read_argv(struct parse *p, int argc, char *argv[])
{
	int rc = options_read(p, argc, argv);

	p->argv = argv;
	p->command_at = optind;
	if (rc == 0 && p->dsn_text && *p->dsn_text)
		p->dsn_rc = dsn_parse(p->dsn_text, &p->o->dsn, p->dsn_why, sizeof(p->dsn_why));
	options_wipe_argv(argv, rc < 0 ? argc : optind, p->shell_at);
	return rc;
}
