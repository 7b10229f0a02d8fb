/* A handle, and its connection: connect to the first usable host of
 * the DSN, fail over to the next, disconnect; the status of a failed
 * call. */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>

#include "tlspolicy.h"

/* The strings of a db_config, each owned by the handle: a handle that
 * outlives its creator on an abandoned thread must not read freed memory. */
#define DB_CONFIG_MAX_STRINGS (9 + DB_MAX_HOSTS)

/* The addresses of C's strings (the host names included) into OUT;
 * returns how many. */
static size_t db_config_strings(struct db_config *c, const char **out[DB_CONFIG_MAX_STRINGS])
{
	const char **fixed[] = {&c->user,   &c->password, &c->database, &c->socket,   &c->defaults_file,
				&c->ssl_ca, &c->ssl_cert, &c->ssl_key,	&c->system_ca};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		out[n++] = fixed[i];
	for (unsigned i = 0; i < c->nhosts && i < DB_MAX_HOSTS; i++)
		out[n++] = &c->hosts[i].name;
	return n;
}

/* Fisher-Yates with the kernel's randomness: contenders that share one
 * DSN should not all pile onto the same first host. */
static void db_shuffle(unsigned *v, unsigned n)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned r = 0, j;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (unsigned)i * 2654435761u;
		j = r % i;
		unsigned t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

struct db *db_new(const struct db_config *cfg)
{
	struct db *db = calloc(1, sizeof(*db));

	const char **s[DB_CONFIG_MAX_STRINGS];
	size_t n;

	if (!db)
		return NULL;
	db->cfg = *cfg;
	n = db_config_strings(&db->cfg, s);
	for (size_t i = 0; i < n; i++)
		if (*s[i] && !(*s[i] = strdup(*s[i]))) {
			for (size_t k = 0; k < i; k++)
				free((char *)*s[k]);
			free(db);
			return NULL;
		}
	db->fd = -1;
	pthread_mutex_init(&db->fd_lock, NULL);
	for (unsigned i = 0; i < DB_MAX_HOSTS; i++)
		db->order[i] = i;
	if (db->cfg.random_order && db->cfg.nhosts > 1)
		db_shuffle(db->order, db->cfg.nhosts);
	return db;
}

void db_free(struct db *db)
{
	const char **s[DB_CONFIG_MAX_STRINGS];
	size_t n;

	if (!db)
		return;
	n = db_config_strings(&db->cfg, s);
	db_disconnect(db);
	if (db->cfg.password)
		explicit_bzero((char *)db->cfg.password, strlen(db->cfg.password));
	for (size_t i = 0; i < n; i++)
		free((char *)*s[i]);
	pthread_mutex_destroy(&db->fd_lock);
	free(db);
}

unsigned db_errno(const struct db *db)
{
	return db->errnum;
}

bool db_connected(const struct db *db)
{
	return db->mysql != NULL;
}

/* Closes M, a connect that failed. The wait may have told db_abort its
 * socket: forgotten first, as in db_disconnect. */
static void db_close_failed(struct db *db, MYSQL *m)
{
	db_set_fd(db, -1);
	lib.mysql_close(m);
}

/* "NAME:PORT", "[V6]:PORT", or NAME alone when the port is the default. */
static void db_host_label(const struct db_host *h, char *buf, size_t len)
{
	bool v6 = strchr(h->name, ':') != NULL;

	snprintf(buf, len, "%s%s%s", v6 ? "[" : "", h->name, v6 ? "]" : "");
	if (h->port && strlen(buf) < len)
		snprintf(buf + strlen(buf), len - strlen(buf), ":%u", h->port);
}

/* Connects the handle M to host H (TLS MODE, verifying against CA): the
 * TCP connect, the greeting, TLS and the login. On failure M is closed and
 * ERR says why, naming the TLS mode when TLS refused the server; or, given
 * ABSENT, sets it when the server only offered no TLS (db_tls_absent). */
/* How a connect goes: to host H, in TLS mode MODE, verifying against CA. */
struct db_dial {
	const struct db_host *h;
	enum db_tls mode;
	const char *ca;
};

static enum db_status db_handshake(struct db *db, MYSQL *m, const struct db_dial *d, bool *absent, struct db_err *err)
{
	const struct db_config *c = &db->cfg;
	const struct db_host *h = d->h;
	enum db_tls mode = d->mode;
	const char *ca = d->ca;
	enum db_status st;
	bool connected;
	unsigned e;
	int slack;

	/* CLIENT_FOUND_ROWS: an UPDATE reports rows matched, so a renew that
	 * writes the same values (same microsecond) is not mistaken for a
	 * lost lease. No CLIENT_MULTI_STATEMENTS, ever. */
	/* Connector/C sleeps usleep(1) after its socket's connect(), even one
	 * that succeeded at once (pvio_socket_internal_connect); with the
	 * thread's default 50 us of timer slack that is tens of microseconds
	 * added to every connect, a run's start among them. This thread's
	 * slack is 1 ns meanwhile. */
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	db->connecting = m;
	connected = lib.mysql_real_connect(m, h->name, c->user, c->password, c->database, h->port, c->socket,
					   CLIENT_FOUND_ROWS) != NULL;
	db->connecting = NULL;
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	if (connected)
		return DB_OK;
	e = lib.mysql_errno(m);
	if (absent && !db->timed_out && db_tls_absent(m)) {
		*absent = true;
		db_close_failed(db, m);
		return DB_ERROR;
	}
	/* A deadline that ran out is that, whatever TLS made of the cut it
	 * met. */
	st = mode >= DB_TLS_REQUIRED && !db->timed_out ? dberr_classify_tls(e, lib.mysql_error(m))
						       : db_status_of(e, lib.mysql_error(m));
	/* Leaderrun's words first, the library's after: they differ between
	 * Connector/C and libmysqlclient, and only the first say "TLS". */
	if (st == DB_UNTRUSTED)
		snprintf(err->msg, sizeof(err->msg), "--ssl-mode %s%s%s refused the server: %s (%s, error %u)",
			 tlspolicy_mode_name(mode), tlspolicy_verifies(mode) ? " against " : "",
			 tlspolicy_verifies(mode) && ca ? ca : "", dberr_tls_reason(e, lib.mysql_error(m)),
			 lib.mysql_error(m), e);
	else
		snprintf(err->msg, sizeof(err->msg), "%s (error %u)", lib.mysql_error(m), e);
	db->errnum = e;
	db_note_timeout(db, err->msg, sizeof(err->msg));
	db_close_failed(db, m);
	return st == DB_OK ? DB_ERROR : st;
}

/* The connection M to host H becomes the live one: what db_server_info
 * says of it (its name, its TLS). */
static void db_take(struct db *db, MYSQL *m, const struct db_host *h, enum db_tls mode, const char *ca)
{
	const char *cipher = lib.mysql_get_ssl_cipher(m);

	db->mysql = m;
	db_set_fd(db, db_socket_of(m));
	memset(&db->server, 0, sizeof(db->server));
	if (!cipher)
		snprintf(db->server.tls, sizeof(db->server.tls), "no TLS");
	else if (tlspolicy_verifies(mode))
		snprintf(db->server.tls, sizeof(db->server.tls), "TLS %s, certificate verified (%s, CA %s)", cipher,
			 tlspolicy_mode_name(mode), ca);
	else
		snprintf(db->server.tls, sizeof(db->server.tls), "TLS %s, certificate not verified", cipher);
	/* The name users gave, or the socket's path; else the library's
	 * account of what the option files made of it. */
	if (h->name)
		db_host_label(h, db->server.name, sizeof(db->server.name));
	else
		snprintf(db->server.name, sizeof(db->server.name), "%s",
			 db->cfg.socket ? db->cfg.socket : lib.mysql_get_host_info(m));
}

/* Connects to host I of the configuration (or the library's default)
 * within CT seconds. */
static enum db_status db_connect_host(struct db *db, unsigned i, unsigned ct, struct db_err *err)
{
	const struct db_config *c = &db->cfg;
	const struct db_host none = {0}, *h = c->nhosts ? &c->hosts[i] : &none;
	/* A socket given without a host is local whatever the host says. */
	enum db_tls mode = tlspolicy_mode(c->tls, h->name);
	const char *ca = c->ssl_ca ? c->ssl_ca : tlspolicy_verifies(mode) ? c->system_ca : NULL;
	bool absent = false;
	enum db_status st;
	MYSQL *m = db_handle(c, h, mode, ca, ct);

	if (!m)
		goto oom;
	st = db_handshake(db, m, &(struct db_dial){h, mode, ca}, db_tls_opportunistic(c, mode, ca) ? &absent : NULL,
			  err);
	/* No TLS on offer: a plain connection, with no TLS option that could
	 * let the login think itself secure, within the same deadline. */
	if (absent) {
		m = db_handle(c, h, DB_TLS_DISABLED, NULL, ct);
		if (!m)
			goto oom;
		st = db_handshake(db, m, &(struct db_dial){h, mode, NULL}, NULL, err);
	}
	if (st != DB_OK)
		return st;
	/* A backstop, on both flavours: whatever the library (or an option
	 * file it read) made of the options, a required mode never carries
	 * on in plain text. */
	if (mode >= DB_TLS_REQUIRED && !lib.mysql_get_ssl_cipher(m)) {
		snprintf(err->msg, sizeof(err->msg), "--ssl-mode %s refused the server: %s", tlspolicy_mode_name(mode),
			 DBERR_TLS_ABSENT);
		db_close_failed(db, m);
		return DB_UNTRUSTED;
	}
	db_take(db, m, h, mode, ca);
	return db_session(db, err);
oom:
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	return DB_ERROR;
}

static enum db_status db_connect_one(struct db *db, unsigned i, struct db_err *err)
{
	unsigned ct = db->cfg.connect_timeout_s ? db->cfg.connect_timeout_s : 10;
	/* One deadline for the whole attempt on this host: TCP, greeting,
	 * TLS, login, probe and session set-up: a server that trickles any
	 * of them cannot hold the connect, nor keep the next host untried. */
	bool armed = db_arm(db, "connect timeout", ct);
	enum db_status st = db_connect_host(db, i, ct, err);

	db_disarm(armed);
	return st;
}

/* Of two failures, the one to report: a setting that no retry fixes
 * (denied, no such database or table) over a passing condition. */
static enum db_status db_worse(enum db_status a, enum db_status b)
{
	static const enum db_status rank[] = {DB_OK,	      DB_CONFLICT, DB_READ_ONLY, DB_UNAVAILABLE, DB_ERROR,
					      DB_NO_DATABASE, DB_NO_TABLE, DB_DENIED,	 DB_UNTRUSTED};
	unsigned ra = 0, rb = 0;

	for (unsigned i = 0; i < sizeof(rank) / sizeof(rank[0]); i++) {
		if (rank[i] == a)
			ra = i;
		if (rank[i] == b)
			rb = i;
	}
	return rb > ra ? b : a;
}

enum db_status db_connect(struct db *db, struct db_err *err)
{
	unsigned n = db->cfg.nhosts ? db->cfg.nhosts : 1;
	enum db_status worst = DB_OK;
	size_t used = 0;

	/* The start is read once: a failure inside the loop may move next. */
	unsigned start = db->next;

	db_disconnect(db);
	err->msg[0] = '\0';
	for (unsigned k = 0; k < n; k++) {
		unsigned pos = (start + k) % n, i = db->order[pos];
		struct db_err why = {0};
		enum db_status st;

		db->cur = pos;
		st = db_connect_one(db, i, &why);
		if (st == DB_OK) {
			db->next = pos;
			return DB_OK;
		}
		worst = db_worse(worst, st);
		/* One host: its message as it is (named when TLS refused
		 * it: the way out depends on which server it was). Several:
		 * each, by name. */
		if (n == 1 && st == DB_UNTRUSTED && db->cfg.nhosts) {
			char name[128];
			db_host_label(&db->cfg.hosts[i], name, sizeof(name));
			dberr_printf(err, "%s: %.383s", name, why.msg);
		} else if (n == 1)
			dberr_printf(err, "%.383s", why.msg);
		else if (used < sizeof(err->msg)) {
			char name[128];
			db_host_label(&db->cfg.hosts[i], name, sizeof(name));
			int w = snprintf(err->msg + used, sizeof(err->msg) - used, "%s%s: %.383s", k ? "; " : "", name,
					 why.msg);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	err->errnum = db->errnum;
	return worst;
}

bool db_server_info(const struct db *db, struct db_server *out)
{
	if (!db->mysql)
		return false;
	*out = db->server;
	return true;
}

const char *db_server_version(const struct db *db)
{
	return db->mysql ? lib.mysql_get_server_info(db->mysql) : "";
}
