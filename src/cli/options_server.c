/* Which server and how to reach it: the DSN, the hosts of the option
 * files, and each host's TLS with the files it needs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/tlspolicy.h"
#include "optfile.h"
#include "options_int.h"

/* The DSN of --dsn, else of LEADERRUN_DSN, as options_read_argv parsed
 * it. */
int options_take_dsn(struct parse *p)
{
	if (!p->dsn_text || !*p->dsn_text)
		return 0;
	if (p->dsn_rc < 0)
		FAIL("%s: %s", options_given(p, options_row("dsn")) ? "--dsn" : "LEADERRUN_DSN", p->dsn_why);
	p->o->have_dsn = true;
	return 0;
}

/* The option files, when the client library will read them too: after
 * options_take_password, as whether it reads them depends on the
 * password (runmode_db_config). */
int options_read_files(struct parse *p)
{
	struct options *o = p->o;
	char host[1024], *w = host, why[512];
	const char *at;

	/* A FIFO among them would hang the library's connect, and us first. */
	if ((o->defaults_file || !o->have_dsn || (!o->dsn.password && !o->password)) &&
	    optfile_check(o->defaults_file, p->err, p->errlen) < 0)
		return -1;
	/* A host in the option files ([client] host=h1,h2:3307) is
	 * leaderrun's to walk, as one in the DSN: the library would take a
	 * list for one host name (or, Connector/C 3.3, walk it without
	 * asking whether a host is writable); and even a single host must be
	 * known here to choose its TLS, which is verified unless the host is
	 * local (options_tls_hosts). Only without a DSN, which always names
	 * its host or socket. Blanks around the commas go: no host name holds
	 * one. */
	if (o->have_dsn)
		return 0;
	if (optfile_host(o->defaults_file, host, sizeof(host))) {
		for (const char *r = host; *r; r++)
			if (*r != ' ' && *r != '\t')
				*w++ = *r;
		*w = '\0';
	}
	if (w == host || dsn_parse_hosts(host, strlen(host), &o->dsn, why, sizeof(why)) == 0)
		return 0;
	/* A host holds no '@': what comes before one may be a password
	 * (host=app:pw@db), as in dsn_parse_hosts. */
	at = strrchr(host, '@');
	FAIL("option file host=%s%s: %s", at ? "***" : "", at ? at : host, why);
}

/* TLS: the command line over the DSN's parameters over the option files'
 * (those only when the library reads the files too: see
 * runmode_db_config). After options_read_files, which checked them. */
int options_tls_sources(struct parse *p)
{
	struct options *o = p->o;
	int m;

	if (!o->have_dsn || (!o->dsn.password && !o->password)) {
		if (!p->ssl_mode && !o->dsn.ssl_mode &&
		    optfile_get(o->defaults_file, "ssl-mode", o->optfile_mode, sizeof(o->optfile_mode)))
			p->ssl_mode = o->optfile_mode;
		if (!p->ssl_ca && !o->dsn.ssl_ca &&
		    optfile_get(o->defaults_file, "ssl-ca", o->optfile_ca, sizeof(o->optfile_ca)))
			p->ssl_ca = o->optfile_ca;
	}
	if (!p->ssl_mode)
		p->ssl_mode = o->dsn.ssl_mode;
	if (p->ssl_mode) {
		if ((m = db_tls_parse(p->ssl_mode)) < 0)
			FAIL("--ssl-mode '%s' is not a mode; use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or "
			     "VERIFY_IDENTITY",
			     SHOWN(p->ssl_mode));
		o->tls = (enum db_tls)m;
	}
	o->ssl_ca = p->ssl_ca ? p->ssl_ca : o->dsn.ssl_ca;
	o->ssl_cert = p->ssl_cert ? p->ssl_cert : o->dsn.ssl_cert;
	o->ssl_key = p->ssl_key ? p->ssl_key : o->dsn.ssl_key;
	return 0;
}

/* "a FIFO" when PATH exists and is a FIFO, device or socket (stat does
 * not block), else NULL. */
static const char *options_special_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return NULL;
	return S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
}

/* The certificate files, wherever options_tls_sources found them. */
int options_tls_files(struct parse *p)
{
	const struct options *o = p->o;
	const char *const files[][2] = {
	    {"--ssl-ca", o->ssl_ca}, {"--ssl-cert", o->ssl_cert}, {"--ssl-key", o->ssl_key}};

	for (size_t i = 0; i < 3; i++) {
		const char *kind = files[i][1] ? options_special_file(files[i][1]) : NULL;
		if (files[i][1] && access(files[i][1], R_OK) != 0)
			FAIL("%s %s: %s", files[i][0], SHOWN(files[i][1]), strerror(errno));
		/* The TLS library reads them at every connect: a FIFO would
		 * hang the first and be empty for the next. */
		if (kind)
			FAIL("%s %s is %s, not a regular file", files[i][0], SHOWN(files[i][1]), kind);
	}
	if (!o->ssl_cert != !o->ssl_key)
		FAIL("--ssl-cert and --ssl-key go together; give both or neither");
	if (o->tls == DB_TLS_DISABLED && (o->ssl_ca || o->ssl_cert))
		FAIL("--ssl-mode DISABLED contradicts --ssl-ca/--ssl-cert; give one");
	return 0;
}

/* Each host's TLS (tlspolicy_mode): a host that verifies needs a CA (the
 * system's when --ssl-ca is not given) and an environment that does not
 * switch verification off inside the client library; a networked host
 * with DISABLED is remembered for the warning at start. Last of the TLS
 * steps: it needs the hosts, the mode and the CA settled. */
int options_tls_hosts(struct parse *p)
{
	struct options *o = p->o;
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
	if ((envvar = tlspolicy_env_disabling(getenv)))
		FAIL("%s is set: it would switch off the verification of %s (--ssl-mode %s); unset it (COMMAND "
		     "can still get it: env %s=1 COMMAND), or give --ssl-mode=DISABLED, which accepts forgeable "
		     "lease replies",
		     envvar, verifying, tlspolicy_mode_name(mode), envvar);
	if (!o->ssl_ca && !tlspolicy_system_ca(o->system_ca, sizeof(o->system_ca)))
		FAIL("no system CA bundle (/etc/ssl/certs/ca-certificates.crt and the like, or $SSL_CERT_FILE) to "
		     "verify %s with; " TLSPOLICY_WAYS_OUT,
		     verifying);
	return 0;
}
