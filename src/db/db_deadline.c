/* The deadline of a call, and the socket that db_abort cuts.
 *
 * The client library bounds each wait on the socket (MYSQL_OPT_CONNECT,
 * READ and WRITE_TIMEOUT), not a call: a server that sends a byte now and
 * then (announcing a 100 kB greeting, then one byte every 2 s) kept a
 * connect going for ever, and with it -n, --status and a renew's reconnect,
 * and a DSN's next host was never tried. db_abort could not cut it either:
 * the socket was known only once the connect had returned.
 *
 * Connector/C lets a function do every wait on the socket instead
 * (MARIADB_OPT_IO_WAIT; plugins/pvio/pvio_socket.c,
 * pvio_socket_wait_io_or_timeout, called when a read or write would
 * block, and for the TCP connect's EINPROGRESS). db_io_wait waits no
 * later than the deadline of the call in progress, whatever the library
 * asked: the connect timeout for the whole of a connect (TCP, greeting,
 * TLS, login, and the probe and set-up statements), the I/O timeout for
 * a statement with all its rows. It also learns the socket at its first
 * wait, so that db_abort can cut a connect.
 *
 * The function gets no user data, only the socket; each thread makes one
 * call at a time, on one handle, so the handle of that call is found in a
 * thread-local (db_active; NULL between calls).
 *
 * Connector/C's OpenSSL layer reads the socket directly (SSL_connect,
 * SSL_read), and the socket is a blocking one: pvio_socket_connect makes
 * it so after the TCP connect, and ma_tls_connect (libmariadb/secure/
 * openssl.c) leaves it so. Each read then has its own timeout
 * (SO_RCVTIMEO): a handshake trickled inside TLS never reached the wait. Its loops wait through the
 * same function on SSL_ERROR_WANT_READ, so the socket is made non-blocking
 * before the TLS handshake starts (db_on_io, after the greeting): its reads
 * then come back to db_io_wait too. The plain protocol reads and writes
 * with MSG_DONTWAIT already, and does not notice. Not with GnuTLS, whose
 * handshake would spin on a non-blocking socket: there, as with Oracle's
 * libmysqlclient (no such option at all), each read is bounded, not the
 * call; the supervisor still cuts a hung renew once the connection is up.
 *
 * Name resolution (getaddrinfo inside the library) is not a wait on a
 * socket and is not covered: the resolver's own timeouts apply. */
#include "db_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/duration.h"
#include "base/timing.h"

/* The handle of this thread's call in progress, NULL between calls. */
static _Thread_local struct db *db_active;

/* Starts a call on DB with BUDGET_S seconds to run, unless a call that contains
 * this one (a connect's set-up statements, a close after a failure) has
 * armed the deadline already. Returns whether this call armed it. */
bool db_arm(struct db *db, const char *limit, unsigned budget_s)
{
	if (db_active == db)
		return false;
	db_active = db;
	db->until = timing_now() + (int64_t)budget_s * USEC_PER_SEC;
	db->timed_out = false;
	db->limit = limit;
	db->limit_s = budget_s;
	return true;
}

void db_disarm(bool armed)
{
	if (armed)
		db_active = NULL;
}

/* Arms the I/O timeout for a statement, with all its rows, or a close. */
bool db_arm_io(struct db *db)
{
	return db_arm(db, "I/O timeout", db->cfg.io_timeout_s ? db->cfg.io_timeout_s : 10);
}

/* ERR, a failure's message, says so when the deadline of the call ran
 * out: the library's own words (a lost connection, a system error) do
 * not. */
void db_note_timeout(const struct db *db, char *err, size_t errlen)
{
	size_t n = strlen(err);

	if (db->timed_out && n < errlen)
		snprintf(err + n, errlen - n, "; the %s (%us) ran out", db->limit, db->limit_s);
}

#if defined(LIBMARIADB)
/* MARIADB_OPT_IO_WAIT: >0 ready, 0 timed out, <0 failed. TIMEOUT_MS, the
 * library's bound for this wait, is ignored for a call of ours: the call's
 * deadline is never later (and the TLS layer passes seconds there). */
int db_io_wait(my_socket fd, my_bool is_read, int timeout_ms)
{
	struct db *db = db_active;
	struct pollfd p = {.fd = (int)fd, .events = is_read ? POLLIN : POLLOUT};
	int rc;

	if (!db) {
		/* Not inside a call of ours: what the library would do. */
		while ((rc = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1)) < 0 && errno == EINTR)
			;
		return rc;
	}
	if (db->fd != (int)fd)
		db_set_fd(db, (int)fd);
	for (;;) {
		int64_t left = db->until - timing_now();
		if (left <= 0) {
			db->timed_out = true;
			errno = ETIMEDOUT;
			return 0;
		}
		rc = poll(&p, 1, (int)((left + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
		if (rc != 0 && !(rc < 0 && errno == EINTR))
			return rc;
	}
}

/* After every read and write: the first one of a connect in progress on
 * this thread (the greeting) makes its socket non-blocking, before TLS
 * begins (see above). Registered only when the library uses OpenSSL. */
void db_on_io(int mode, MYSQL *m, const unsigned char *buffer, size_t length)
{
	struct db *db = db_active;
	int fd, fl;

	(void)mode;
	(void)buffer;
	(void)length;
	if (!db || db->connecting != m)
		return;
	db->connecting = NULL; /* once */
	fd = (int)lib.mysql_get_socket(m);
	if (fd < 0 || (fl = fcntl(fd, F_GETFL)) < 0)
		return;
	if (!(fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (db->fd != fd)
		db_set_fd(db, fd);
}
#endif

/* Remembers FD as the socket of DB's call, for db_abort. */
void db_set_fd(struct db *db, int fd)
{
	pthread_mutex_lock(&db->fd_lock);
	db->fd = fd;
	pthread_mutex_unlock(&db->fd_lock);
}

void db_abort(struct db *db)
{
	pthread_mutex_lock(&db->fd_lock);
	if (db->fd >= 0)
		shutdown(db->fd, SHUT_RDWR);
	pthread_mutex_unlock(&db->fd_lock);
}
