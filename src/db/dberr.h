/* Database error classes, and the mapping from server/client error numbers.
 * Kept apart from db_*.c so that it is pure and unit-testable without a
 * server; the numbers are the same in MySQL and MariaDB. */
#ifndef LEADERRUN_DBERR_H
#define LEADERRUN_DBERR_H

enum db_status {
	DB_OK = 0,
	DB_UNAVAILABLE, /* cannot connect, connection lost, server going away */
	DB_DENIED,	/* access denied: wrong password, missing grant */
	DB_NO_TABLE,	/* the lease table is missing or lacks a column */
	DB_NO_DATABASE, /* unknown database, or none selected */
	DB_CONFLICT,	/* deadlock or lock wait timeout: "not acquired, retry" */
	DB_READ_ONLY,	/* the server refuses writes */
	DB_UNTRUSTED,	/* TLS refused: the server could not be verified, or offers no TLS */
	DB_ERROR,	/* anything else */
};

/* A database error as it travels up from a call: what it means for the
 * lease, the server's (or the library's) error number (0: none), and the
 * words for a message. Decisions read st and errnum, never msg. */
struct db_err {
	enum db_status st;
	unsigned errnum;
	char msg[1024];
};

/* ERR's message from FMT, cut at its size as snprintf cuts it: for a
 * message that quotes another error's words. */
void dberr_printf(struct db_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum db_status dberr_classify(unsigned errnum);

/* The same, for a failure whose meaning lies in its text as well: a
 * COMMIT that failed (1180) because a conflicting transaction won is a
 * conflict; on a Galera node cut off from the primary component it is
 * the node's failure. */
enum db_status dberr_classify_msg(unsigned errnum, const char *msg);

/* A connect that failed with ERRNUM and MSG while TLS was required: a
 * verification failure (wrong CA, wrong name, expired, no TLS offered) is
 * DB_UNTRUSTED, a setting no retry fixes; a network failure during the
 * handshake stays what dberr_classify says. */
enum db_status dberr_classify_tls(unsigned errnum, const char *msg);

/* What a DB_UNTRUSTED refusal with ERRNUM and MSG means, in leaderrun's
 * own words whichever library wrote MSG ("SSL connection error: ..." or
 * "TLS/SSL error: ..."): DBERR_TLS_ABSENT, or that the certificate failed
 * verification. */
/* The server's error numbers that decisions read (db_errno), by the
 * names MySQL's and MariaDB's manuals give them (ER_*). */
#define DBERR_CON_COUNT		1040 /* ER_CON_COUNT_ERROR: too many connections */
#define DBERR_DUP_FIELDNAME	1060 /* ER_DUP_FIELDNAME: the column is there already */
#define DBERR_KILL_DENIED	1095 /* ER_KILL_DENIED_ERROR: not this account's session */
#define DBERR_USER_CONNECTIONS	1203 /* ER_TOO_MANY_USER_CONNECTIONS */
#define DBERR_LOCK_WAIT_TIMEOUT 1205 /* ER_LOCK_WAIT_TIMEOUT */
#define DBERR_SP_DOES_NOT_EXIST 1305 /* ER_SP_DOES_NOT_EXIST: no such procedure */
#define DBERR_PROCACCESS_DENIED 1370 /* ER_PROCACCESS_DENIED_ERROR: no EXECUTE */
#define DBERR_SIGNAL_EXCEPTION	1644 /* ER_SIGNAL_EXCEPTION: a procedure's own SIGNAL */

#define DBERR_TLS_ABSENT "the server offers no TLS"
const char *dberr_tls_reason(unsigned errnum, const char *msg);

/* "unavailable", "access denied", ... for messages. */
const char *dberr_name(enum db_status st);

#endif
