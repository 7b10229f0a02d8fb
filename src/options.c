#include "options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "revision.h"
#include "duration.h"
#include "leasename.h"
#include "optfile.h"
#include "signame.h"
#include "tlspolicy.h"

#define PASSWORD_FILE_MAX 4096

enum {
	OPT_PASSWORD_FILE = 256,
	OPT_DEFAULTS_FILE,
	OPT_TABLE,
	OPT_INIT,
	OPT_HOLDER,
	OPT_RENEW,
	OPT_GRACE,
	OPT_SIGNAL,
	OPT_RETRY,
	OPT_SSL_MODE,
	OPT_SSL_CA,
	OPT_SSL_CERT,
	OPT_SSL_KEY,
	OPT_STATUS,
	OPT_RELEASE,
	OPT_CHECK,
	OPT_JSON,
	OPT_TERM,
	OPT_MIN_HOLD,
	OPT_PING,
	OPT_NOTIFY,
	OPT_LOG_FORMAT,
	OPT_READY_FILE,
	OPT_NO_WAKE_HINT,
	OPT_PAUSE,
	OPT_RESUME,
	OPT_FOR,
	OPT_FORCE,
	OPT_ONCE_PER,
};

static const struct option long_options[] = {
    {"dsn", required_argument, NULL, 'd'},
    {"password-file", required_argument, NULL, OPT_PASSWORD_FILE},
    {"defaults-file", required_argument, NULL, OPT_DEFAULTS_FILE},
    {"table", required_argument, NULL, OPT_TABLE},
    {"ssl-mode", required_argument, NULL, OPT_SSL_MODE},
    {"ssl-ca", required_argument, NULL, OPT_SSL_CA},
    {"ssl-cert", required_argument, NULL, OPT_SSL_CERT},
    {"ssl-key", required_argument, NULL, OPT_SSL_KEY},
    {"init", no_argument, NULL, OPT_INIT},
    {"status", no_argument, NULL, OPT_STATUS},
    {"release", required_argument, NULL, OPT_RELEASE},
    {"check", no_argument, NULL, OPT_CHECK},
    {"pause", required_argument, NULL, OPT_PAUSE},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"for", required_argument, NULL, OPT_FOR},
    {"force", no_argument, NULL, OPT_FORCE},
    {"once-per", required_argument, NULL, OPT_ONCE_PER},
    {"json", no_argument, NULL, OPT_JSON},
    {"term", required_argument, NULL, OPT_TERM},
    {"min-hold", required_argument, NULL, OPT_MIN_HOLD},
    {"ping", required_argument, NULL, OPT_PING},
    {"notify", required_argument, NULL, OPT_NOTIFY},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"ready-file", required_argument, NULL, OPT_READY_FILE},
    {"no-wake-hint", no_argument, NULL, OPT_NO_WAKE_HINT},
    {"lease", required_argument, NULL, 'l'},
    {"holder", required_argument, NULL, OPT_HOLDER},
    {"ttl", required_argument, NULL, 't'},
    {"renew-interval", required_argument, NULL, OPT_RENEW},
    {"kill-grace", required_argument, NULL, OPT_GRACE},
    {"kill-signal", required_argument, NULL, OPT_SIGNAL},
    {"no-wait", no_argument, NULL, 'n'},
    {"wait-timeout", required_argument, NULL, 'w'},
    {"retry-interval", required_argument, NULL, OPT_RETRY},
    {"busy-exit-code", required_argument, NULL, 'E'},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void options_help(FILE *f)
{
	fputs("Usage: leaderrun [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       leaderrun [CONNECTION OPTIONS] --init\n"
	      "       leaderrun [CONNECTION OPTIONS] --status [--json] [LEASE]\n"
	      "       leaderrun [CONNECTION OPTIONS] --release LEASE [--force]\n"
	      "       leaderrun [CONNECTION OPTIONS] --pause LEASE [--for DURATION] | --resume LEASE\n"
	      "       leaderrun [CONNECTION OPTIONS] --check [--lease L --holder H --term N]\n"
	      "\n"
	      "Run COMMAND only while holding a lease row in MySQL/MariaDB: at most one\n"
	      "copy runs across all hosts, and it is stopped before anyone else can lead.\n"
	      "\n"
	      "Connection:\n"
	      "  -d, --dsn DSN            mysql://USER[:PASS]@HOST[:PORT][,HOST[:PORT]...]/DB[?PARAM=VALUE&...]\n"
	      "                           (socket, connect-timeout, host-order=random, ssl-*)\n"
	      "      --password-file FILE read the password from FILE\n"
	      "      --defaults-file FILE MySQL option file (groups [client] and [leaderrun])\n"
	      "      --table NAME         lease table (default leaderrun_lease)\n"
	      "      --ssl-mode MODE      DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY\n"
	      "                           (default: VERIFY_IDENTITY for any host but the socket,\n"
	      "                           localhost, 127.0.0.0/8 and ::1)\n"
	      "      --ssl-ca FILE        CA certificate(s) to verify the server with (default: the\n"
	      "                           system's bundle, or $SSL_CERT_FILE)\n"
	      "      --ssl-cert FILE      client certificate; --ssl-key FILE: its key\n"
	      "      --init               create (or upgrade) the lease table, then exit\n"
	      "Operator:\n"
	      "      --status [LEASE]     show every lease, or one (--json for JSON)\n"
	      "      --release LEASE      revoke it: the holder stops its command, then lets go\n"
	      "      --force              with --release: free it at once (the old command may\n"
	      "                           still run until its next renew)\n"
	      "      --pause LEASE        nobody acquires it until --resume (or --for D)\n"
	      "      --resume LEASE       end a pause\n"
	      "      --check              exit 0 while LEADERRUN_LEASE/HOLDER/TERM still lead\n"
	      "Lease:\n"
	      "  -l, --lease NAME         lease name (default: derived from COMMAND)\n"
	      "      --holder ID          holder identity (default HOST:PID:RANDOM)\n"
	      "  -t, --ttl DURATION       lease time to live (default 15s)\n"
	      "      --renew-interval D   renew period (default ttl/3)\n"
	      "      --kill-grace D       kill signal to SIGKILL (default min(3s, ttl/4))\n"
	      "      --kill-signal SIG    signal that asks COMMAND to stop (default TERM)\n"
	      "Waiting:\n"
	      "  -n, --no-wait            try once; exit 75 if the lease is held\n"
	      "  -w, --wait-timeout D     give up waiting after D; exit 75\n"
	      "      --retry-interval D   how often a follower looks (default 1s)\n"
	      "      --no-wake-hint       poll; do not block on the GET_LOCK hint (for proxies)\n"
	      "  -E, --busy-exit-code N   exit status when not acquired (default 75)\n"
	      "      --min-hold D         keep the lease until acquisition + D (cron dedupe)\n"
	      "      --once-per PERIOD    run at most once per PERIOD slot (cron); exit 75 if done\n"
	      "Notifications:\n"
	      "      --ping URL           Healthchecks-style pings: URL/start, URL/STATUS, URL/fail\n"
	      "      --notify URL         POST a JSON event (acquired, lost, released, exited)\n"
	      "      --ready-file PATH    exists while the command runs (readiness probe)\n"
	      "Output:\n"
	      "  -v, --verbose            more messages (repeatable)\n"
	      "  -q, --quiet              errors only\n"
	      "      --log-format F       text (default) or json\n"
	      "  -h, --help               this help\n"
	      "  -V, --version            version\n"
	      "\n"
	      "DURATION: a number with unit ms, s, m or h (500ms, 15s, 1.5m); bare numbers are seconds.\n"
	      "Exit status: COMMAND's, or 75 busy, 76 lease lost, 64 usage, 69 database unavailable,\n"
	      "77 access denied or server not verified (TLS), 78 lease table missing,\n"
	      "126/127 COMMAND not executable/not found.\n"
	      "See leaderrun(1).\n",
	      f);
}

int options_parse_signal(const char *text)
{
	const char *name = text;
	char *end;
	long n;

	if (!text || !*text)
		return -1;
	if (*text >= '0' && *text <= '9') {
		errno = 0;
		n = strtol(text, &end, 10);
		if (errno || *end || n < 1 || n >= NSIG)
			return -1;
		return (int)n;
	}
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (int s = 1; s < NSIG; s++) {
		const char *abbrev = signame_abbrev(s);
		if (abbrev && strcasecmp(abbrev, name) == 0)
			return s;
	}
	return -1;
}

static bool signal_stops_process(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGURG:
	case SIGWINCH:
		return false;
	default:
		return true;
	}
}

static int parse_duration_opt(const char *opt, const char *text, int64_t *out, char *err, size_t errlen)
{
	char why[160];

	if (duration_parse(text, out, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", opt, why);
		return -1;
	}
	return 0;
}

static int read_password_file(const char *path, char **out, char *err, size_t errlen)
{
	char buf[PASSWORD_FILE_MAX + 1];
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errlen, "--password-file %s: %s", path, strerror(errno));
		return -1;
	}
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "--password-file %s: %s", path, strerror(errno));
			close(fd);
			explicit_bzero(buf, sizeof(buf));
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	if (n > PASSWORD_FILE_MAX) {
		snprintf(err, errlen, "--password-file %s is longer than %d bytes; is it the right file?", path,
			 PASSWORD_FILE_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	/* "echo secret > file" adds a newline that is not part of the secret;
	 * a Kubernetes Secret has none. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (memchr(buf, '\0', n) || memchr(buf, '\n', n)) {
		snprintf(err, errlen, "--password-file %s holds more than one line", path);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	*out = strndup(buf, n);
	explicit_bzero(buf, sizeof(buf));
	return *out ? 0 : -1;
}

/* A DSN typed on the command line is visible to every local user in
 * /proc/PID/cmdline; overwrite its password in place, as mysql(1) does.
 * Every argument before COMMAND is searched, so repeated, bundled (-nd...)
 * and abbreviated (--ds=...) forms are covered too. */
static void wipe_argv_passwords(char *argv[], int end)
{
	static const char *const schemes[] = {"mysql://", "mariadb://"};

	for (int i = 1; i < end; i++)
		for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
			for (char *p = argv[i]; (p = strstr(p, schemes[k])); p++) {
				size_t off, len;
				if (dsn_password_span(p, &off, &len))
					memset(p + off, 'x', len);
			}
}

static int set_name(const char *what, char *dst, size_t cap, const char *value, size_t max, char *err, size_t errlen)
{
	if (lease_name_validate(what, value, max, err, errlen) < 0)
		return -1;
	snprintf(dst, cap, "%s", value);
	return 0;
}

/* Each host's TLS (tlspolicy_mode): a host that verifies needs a CA (the
 * system's when --ssl-ca is not given) and an environment that does not
 * switch verification off inside the client library; a networked host
 * with DISABLED is remembered for the warning at start. */
static int options_tls_hosts(struct options *o, char *err, size_t errlen)
{
	unsigned n = o->dsn.nhosts ? o->dsn.nhosts : 1;
	const char *verifying = NULL, *envvar;
	enum db_tls mode = DB_TLS_DEFAULT;

	for (unsigned i = 0; i < n; i++) {
		/* No host: the socket, or the library's localhost. */
		const char *host = o->dsn.nhosts ? o->dsn.hosts[i].name : NULL;
		enum db_tls m = tlspolicy_mode(o->tls, host);
		if (tlspolicy_verifies(m) && !verifying) {
			verifying = host ? host : "localhost";
			mode = m;
		}
		if (m == DB_TLS_DISABLED && !tlspolicy_host_is_local(host) && !o->unverified_host)
			o->unverified_host = host;
	}
	if (!verifying)
		return 0;
	/* Refused, not overridden: unsetting it would take it from COMMAND
	 * too, which may want it; and a warning scrolls by unseen. */
	if ((envvar = tlspolicy_env_disabling(getenv))) {
		snprintf(err, errlen,
			 "%s is set: it would switch off the verification of %s (--ssl-mode %s); unset it (COMMAND "
			 "can still get it: env %s=1 COMMAND), or give --ssl-mode=DISABLED, which accepts forgeable "
			 "lease replies",
			 envvar, verifying, tlspolicy_mode_name(mode), envvar);
		return -1;
	}
	if (!o->ssl_ca && !tlspolicy_system_ca(o->system_ca, sizeof(o->system_ca))) {
		snprintf(err, errlen,
			 "no system CA bundle (/etc/ssl/certs/ca-certificates.crt and the like, or $SSL_CERT_FILE) to "
			 "verify %s with; " TLSPOLICY_WAYS_OUT,
			 verifying);
		return -1;
	}
	return 0;
}

enum options_result options_parse(int argc, char *argv[], FILE *out, struct options *o, char *err, size_t errlen)
{
	const char *dsn_text = getenv("LEADERRUN_DSN"), *dsn_from = "LEADERRUN_DSN";
	const char *table = getenv("LEADERRUN_TABLE"), *password_file = NULL;
	bool quiet = false;
	const char *ssl_mode = NULL, *ssl_ca = NULL, *ssl_cert = NULL, *ssl_key = NULL;
	const char *release_lease = NULL, *term_text = NULL, *log_format = getenv("LEADERRUN_LOG_FORMAT");
	const char *pause_lease = NULL, *for_text = NULL;
	const char *lease_arg = NULL, *holder_arg = NULL;
	int modes = 0;
	bool dsn_from_argv = false;
	int c;
	char why[256];

	memset(o, 0, sizeof(*o));
	o->timing.ttl_us = 15 * USEC_PER_SEC;
	o->timing.renew_us = -1;
	o->timing.grace_us = -1;
	o->retry_us = USEC_PER_SEC;
	o->wait_timeout_us = -1;
	o->kill_signal = SIGTERM;
	o->busy_exit = 75;
	o->pause_for_us = -1;

	/* '+': stop at the first non-option, so COMMAND's options stay its own.
	 * ':' first: report missing arguments ourselves, in one line. */
	opterr = 0;
	/* 0, not 1: glibc's full reset, which also forgets a half-read
	 * bundle (-Vv) of an earlier call. */
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:d:l:t:nw:E:vqhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'd':
			dsn_text = optarg;
			dsn_from = "--dsn";
			dsn_from_argv = true;
			break;
		case OPT_PASSWORD_FILE:
			password_file = optarg;
			break;
		case OPT_DEFAULTS_FILE: {
			struct stat st;
			if (access(optarg, R_OK) != 0) {
				snprintf(err, errlen, "--defaults-file %s: %s", optarg, strerror(errno));
				goto usage;
			}
			/* The client library would read a device like /dev/zero
			 * for ever. */
			if (stat(optarg, &st) != 0 || !S_ISREG(st.st_mode)) {
				snprintf(err, errlen, "--defaults-file %s: not a regular file", optarg);
				goto usage;
			}
			o->defaults_file = optarg;
			break;
		}
		case OPT_TABLE:
			table = optarg;
			break;
		case OPT_SSL_MODE:
			ssl_mode = optarg;
			break;
		case OPT_SSL_CA:
			ssl_ca = optarg;
			break;
		case OPT_SSL_CERT:
			ssl_cert = optarg;
			break;
		case OPT_SSL_KEY:
			ssl_key = optarg;
			break;
		case OPT_INIT:
			o->mode = MODE_INIT;
			modes++;
			break;
		case OPT_STATUS:
			o->mode = MODE_STATUS;
			modes++;
			break;
		case OPT_RELEASE:
			o->mode = MODE_RELEASE;
			release_lease = optarg;
			modes++;
			break;
		case OPT_CHECK:
			o->mode = MODE_CHECK;
			modes++;
			break;
		case OPT_PAUSE:
		case OPT_RESUME:
			o->mode = c == OPT_PAUSE ? MODE_PAUSE : MODE_RESUME;
			pause_lease = optarg;
			modes++;
			break;
		case OPT_FOR:
			for_text = optarg;
			if (parse_duration_opt("--for", optarg, &o->pause_for_us, err, errlen) < 0)
				goto usage;
			if (o->pause_for_us <= 0) {
				snprintf(err, errlen, "--for %s is not a time to pause for; give a positive duration",
					 optarg);
				goto usage;
			}
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_ONCE_PER:
			if (parse_duration_opt("--once-per", optarg, &o->once_per_us, err, errlen) < 0)
				goto usage;
			/* A second at least: slots are cron's, and a period past a
			 * year is surely a typo (and keeps the arithmetic far from
			 * overflowing). */
			if (o->once_per_us < USEC_PER_SEC || o->once_per_us > 366 * 24 * 3600 * USEC_PER_SEC) {
				snprintf(err, errlen, "--once-per %s is out of range; use 1s to 366 days (as 8784h)",
					 optarg);
				goto usage;
			}
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_TERM:
			term_text = optarg;
			break;
		case OPT_MIN_HOLD:
			if (parse_duration_opt("--min-hold", optarg, &o->min_hold_us, err, errlen) < 0)
				goto usage;
			break;
		case OPT_PING:
			o->ping_url = optarg;
			break;
		case OPT_NOTIFY:
			if (o->nnotify == OPTIONS_MAX_NOTIFY) {
				snprintf(err, errlen, "at most %d --notify URLs", OPTIONS_MAX_NOTIFY);
				goto usage;
			}
			o->notify_urls[o->nnotify++] = optarg;
			break;
		case OPT_LOG_FORMAT:
			log_format = optarg;
			break;
		case OPT_READY_FILE:
			o->ready_file = optarg;
			break;
		case OPT_NO_WAKE_HINT:
			o->no_wake_hint = true;
			break;
		case 'l':
			lease_arg = optarg;
			break;
		case OPT_HOLDER:
			holder_arg = optarg;
			break;
		case 't':
			if (parse_duration_opt("--ttl", optarg, &o->timing.ttl_us, err, errlen) < 0)
				goto usage;
			break;
		case OPT_RENEW:
			if (parse_duration_opt("--renew-interval", optarg, &o->timing.renew_us, err, errlen) < 0)
				goto usage;
			break;
		case OPT_GRACE:
			if (parse_duration_opt("--kill-grace", optarg, &o->timing.grace_us, err, errlen) < 0)
				goto usage;
			break;
		case OPT_SIGNAL:
			o->kill_signal = options_parse_signal(optarg);
			if (o->kill_signal < 0) {
				snprintf(err, errlen,
					 "--kill-signal '%s' is not a signal; use a name like TERM or INT, or a number",
					 optarg);
				goto usage;
			}
			if (!signal_stops_process(o->kill_signal)) {
				snprintf(err, errlen,
					 "--kill-signal %s does not stop a process; use TERM, INT, HUP, QUIT or KILL",
					 optarg);
				goto usage;
			}
			break;
		case 'n':
			o->no_wait = true;
			break;
		case 'w':
			if (parse_duration_opt("--wait-timeout", optarg, &o->wait_timeout_us, err, errlen) < 0)
				goto usage;
			break;
		case OPT_RETRY:
			if (parse_duration_opt("--retry-interval", optarg, &o->retry_us, err, errlen) < 0)
				goto usage;
			if (o->retry_us < 10 * USEC_PER_MSEC) {
				snprintf(err, errlen, "--retry-interval %s is too short; use at least 10ms", optarg);
				goto usage;
			}
			break;
		case 'E': {
			char *end;
			long n;
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 0 || n > 255) {
				snprintf(err, errlen, "--busy-exit-code '%s' must be a number from 0 to 255", optarg);
				goto usage;
			}
			o->busy_exit = (int)n;
			break;
		}
		case 'v':
			o->verbosity++;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			options_help(out);
			return OPTIONS_EXIT;
		case 'V':
			fprintf(out, "leaderrun %s (git %s, %s)\n", LEADERRUN_VERSION, LEADERRUN_REVISION,
				LEADERRUN_CLIENT);
			return OPTIONS_EXIT;
		case ':':
			snprintf(err, errlen, "option '%s' needs a value; see leaderrun --help", argv[optind - 1]);
			goto usage;
		default:
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				/* Also "--init=1": a value for a flag that takes none. */
				snprintf(err, errlen,
					 "unknown option '%s' (or one that takes no value); see leaderrun --help",
					 argv[optind - 1]);
			else if (optopt)
				snprintf(err, errlen, "unknown option '-%c'; see leaderrun --help", optopt);
			else
				snprintf(err, errlen, "unknown option '%s'; see leaderrun --help", argv[optind - 1]);
			goto usage;
		}
	}
	if (quiet) {
		if (o->verbosity > 0) {
			snprintf(err, errlen, "-q and -v contradict each other; give one");
			goto usage;
		}
		o->verbosity = -1;
	}
	/* Parse the DSN first and wipe its password from argv right after,
	 * before any other check can fail: even a rejected command line must
	 * not linger with the secret. */
	if (dsn_text && *dsn_text) {
		int rc = dsn_parse(dsn_text, &o->dsn, why, sizeof(why));
		if (dsn_from_argv)
			wipe_argv_passwords(argv, optind);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", dsn_from, why);
			goto usage;
		}
		o->have_dsn = true;
	}
	o->command = argv + optind;

	if (modes > 1) {
		snprintf(err, errlen,
			 "--init, --status, --release, --check, --pause and --resume are modes of their own; give one");
		goto usage;
	}
	if ((o->mode == MODE_INIT || o->mode == MODE_RELEASE || o->mode == MODE_CHECK || o->mode == MODE_PAUSE ||
	     o->mode == MODE_RESUME) &&
	    o->command[0]) {
		snprintf(err, errlen, "unexpected argument '%s'; this mode takes no COMMAND", o->command[0]);
		goto usage;
	}
	if (o->mode == MODE_STATUS && o->command[0] && o->command[1]) {
		snprintf(err, errlen, "--status takes at most one LEASE, not '%s'", o->command[1]);
		goto usage;
	}
	if (o->json && o->mode != MODE_STATUS) {
		snprintf(err, errlen, "--json goes with --status (for JSON logs: --log-format json)");
		goto usage;
	}
	if (term_text && o->mode != MODE_CHECK) {
		snprintf(err, errlen, "--term goes with --check");
		goto usage;
	}
	if (o->force && o->mode != MODE_RELEASE) {
		snprintf(err, errlen, "--force goes with --release");
		goto usage;
	}
	if (for_text && o->mode != MODE_PAUSE) {
		snprintf(err, errlen, "--for goes with --pause");
		goto usage;
	}
	if (o->once_per_us && o->mode != MODE_RUN) {
		snprintf(err, errlen, "--once-per goes with a COMMAND to run");
		goto usage;
	}
	if (log_format && *log_format) {
		if (strcmp(log_format, "json") == 0)
			o->log_format = LOG_FORMAT_JSON;
		else if (strcmp(log_format, "text") != 0) {
			snprintf(err, errlen, "--log-format '%s' is not a format; use text or json", log_format);
			goto usage;
		}
	}
	for (int i = -1; i < o->nnotify; i++) {
		const char *u = i < 0 ? o->ping_url : o->notify_urls[i];
		if (u && strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
			snprintf(err, errlen, "%s URL must start with http:// or https://",
				 i < 0 ? "--ping" : "--notify");
			goto usage;
		}
	}
	if (o->mode == MODE_RUN && !o->command[0]) {
		snprintf(err, errlen, "no COMMAND given; usage: leaderrun [OPTIONS] -- COMMAND [ARG...]");
		goto usage;
	}
	if (o->no_wait && o->wait_timeout_us >= 0) {
		snprintf(err, errlen, "--no-wait and --wait-timeout contradict each other; give one");
		goto usage;
	}

	if (password_file) {
		if (o->dsn.password) {
			snprintf(err, errlen, "the DSN already holds a password; drop it or --password-file");
			goto usage;
		}
		if (read_password_file(password_file, &o->password, err, errlen) < 0)
			goto usage;
	} else if (!o->dsn.password) {
		const char *env = getenv("LEADERRUN_PASSWORD");
		if (!env)
			env = getenv("MYSQL_PWD");
		if (env && !(o->password = strdup(env))) {
			snprintf(err, errlen, "out of memory");
			goto usage;
		}
	}

	/* A host in the option files ([client] host=h1,h2:3307) is
	 * leaderrun's to walk, as one in the DSN: the library would take a
	 * list for one host name (or, Connector/C 3.3, walk it without
	 * asking whether a host is writable); and even a single host must be
	 * known here to choose its TLS (issue 20). Only without a DSN, which
	 * always names its host or socket. Blanks around the commas go: no
	 * host name holds one. */
	if (!o->have_dsn) {
		char host[1024], *w = host;
		if (optfile_host(o->defaults_file, host, sizeof(host))) {
			for (const char *r = host; *r; r++)
				if (*r != ' ' && *r != '\t')
					*w++ = *r;
			*w = '\0';
		}
		if (w != host && dsn_parse_hosts(host, strlen(host), &o->dsn, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "option file host=%s: %s", host, why);
			goto usage;
		}
	}

	/* TLS: the command line over the DSN's parameters over the option
	 * files' (those only when the library reads the files too: see
	 * runmode_db_config). */
	if (!o->have_dsn || (!o->dsn.password && !o->password)) {
		if (!ssl_mode && !o->dsn.ssl_mode &&
		    optfile_get(o->defaults_file, "ssl-mode", o->optfile_mode, sizeof(o->optfile_mode)))
			ssl_mode = o->optfile_mode;
		if (!ssl_ca && !o->dsn.ssl_ca &&
		    optfile_get(o->defaults_file, "ssl-ca", o->optfile_ca, sizeof(o->optfile_ca)))
			ssl_ca = o->optfile_ca;
	}
	if (!ssl_mode)
		ssl_mode = o->dsn.ssl_mode;
	if (ssl_mode) {
		int m = db_tls_parse(ssl_mode);
		if (m < 0) {
			snprintf(err, errlen,
				 "--ssl-mode '%s' is not a mode; use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or "
				 "VERIFY_IDENTITY",
				 ssl_mode);
			goto usage;
		}
		o->tls = (enum db_tls)m;
	}
	o->ssl_ca = ssl_ca ? ssl_ca : o->dsn.ssl_ca;
	o->ssl_cert = ssl_cert ? ssl_cert : o->dsn.ssl_cert;
	o->ssl_key = ssl_key ? ssl_key : o->dsn.ssl_key;
	{
		const char *const files[][2] = {
		    {"--ssl-ca", o->ssl_ca}, {"--ssl-cert", o->ssl_cert}, {"--ssl-key", o->ssl_key}};
		for (size_t i = 0; i < 3; i++)
			if (files[i][1] && access(files[i][1], R_OK) != 0) {
				snprintf(err, errlen, "%s %s: %s", files[i][0], files[i][1], strerror(errno));
				goto usage;
			}
	}
	if (!o->ssl_cert != !o->ssl_key) {
		snprintf(err, errlen, "--ssl-cert and --ssl-key go together; give both or neither");
		goto usage;
	}
	if (o->tls == DB_TLS_DISABLED && (o->ssl_ca || o->ssl_cert)) {
		snprintf(err, errlen, "--ssl-mode DISABLED contradicts --ssl-ca/--ssl-cert; give one");
		goto usage;
	}
	if (options_tls_hosts(o, err, errlen) < 0)
		goto usage;

	if (!table || !*table)
		table = LEASE_DEFAULT_TABLE;
	if (strlen(table) > LEASE_TABLE_MAX) {
		snprintf(err, errlen, "--table name is longer than %d characters", LEASE_TABLE_MAX);
		goto usage;
	}
	if (lease_table_validate(table, err, errlen) < 0)
		goto usage;
	snprintf(o->table, sizeof(o->table), "%s", table);

	if (o->mode == MODE_STATUS) {
		o->all_leases = !o->command[0];
		if (o->command[0] &&
		    set_name("lease name", o->lease, sizeof(o->lease), o->command[0], LEASE_NAME_MAX, err, errlen) < 0)
			goto usage;
	}
	if (o->mode == MODE_RELEASE &&
	    set_name("lease name", o->lease, sizeof(o->lease), release_lease, LEASE_NAME_MAX, err, errlen) < 0)
		goto usage;
	if (o->mode == MODE_PAUSE || o->mode == MODE_RESUME) {
		/* Who paused it, for --status and the skipped runs' messages:
		 * --holder, else user@host. */
		if (set_name("lease name", o->lease, sizeof(o->lease), pause_lease, LEASE_NAME_MAX, err, errlen) < 0)
			goto usage;
		if (holder_arg && *holder_arg) {
			if (set_name("holder", o->holder, sizeof(o->holder), holder_arg, LEASE_HOLDER_MAX, err,
				     errlen) < 0)
				goto usage;
		} else
			leasename_operator(o->holder, sizeof(o->holder));
	}
	if (o->mode == MODE_CHECK) {
		/* The command's own environment names the lease it runs under:
		 * here LEADERRUN_TERM is the input, not a sign of nesting. */
		const char *l = lease_arg ? lease_arg : getenv("LEADERRUN_LEASE");
		const char *h = holder_arg ? holder_arg : getenv("LEADERRUN_HOLDER");
		const char *t = term_text ? term_text : getenv("LEADERRUN_TERM");
		char *end;
		if (!l || !h || !t) {
			snprintf(err, errlen,
				 "--check needs the lease, holder and term: run it inside leaderrun's command, "
				 "or give --lease, --holder and --term");
			goto usage;
		}
		if (set_name("lease name", o->lease, sizeof(o->lease), l, LEASE_NAME_MAX, err, errlen) < 0 ||
		    set_name("holder", o->holder, sizeof(o->holder), h, LEASE_HOLDER_MAX, err, errlen) < 0)
			goto usage;
		errno = 0;
		o->check_term = strtoull(t, &end, 10);
		if (errno || end == t || *end || *t == '-') {
			snprintf(err, errlen, "--term '%s' is not a term number", t);
			goto usage;
		}
	}

	if (o->mode == MODE_RUN) {
		/* Inside a leaderrun's command (LEADERRUN_TERM is set) these
		 * variables describe the outer lease: a nested leaderrun taking
		 * them as defaults would wait for its own parent forever. */
		bool nested = getenv("LEADERRUN_TERM") != NULL;
		const char *lease = lease_arg ? lease_arg : nested ? NULL : getenv("LEADERRUN_LEASE");
		const char *holder = holder_arg ? holder_arg : nested ? NULL : getenv("LEADERRUN_HOLDER");

		if (lease && *lease) {
			if (set_name("lease name", o->lease, sizeof(o->lease), lease, LEASE_NAME_MAX, err, errlen) < 0)
				goto usage;
		} else {
			leasename_from_argv(o->command, o->lease, sizeof(o->lease));
			o->lease_derived = true;
		}
		if (holder && *holder) {
			if (set_name("holder", o->holder, sizeof(o->holder), holder, LEASE_HOLDER_MAX, err, errlen) < 0)
				goto usage;
		} else
			leasename_holder(o->holder, sizeof(o->holder));

		if (timing_resolve(&o->timing, err, errlen) < 0)
			goto usage;
	}
	return OPTIONS_OK;

usage:
	options_free(o);
	return OPTIONS_USAGE;
}

void options_free(struct options *o)
{
	dsn_free(&o->dsn);
	if (o->password) {
		explicit_bzero(o->password, strlen(o->password));
		free(o->password);
		o->password = NULL;
	}
}
