#include "dberr.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* An error that says this server (or this connection) cannot serve now,
 * whereas another may: try again, elsewhere. */
static bool dberr_unavailable(unsigned errnum)
{
	switch (errnum) {
	/* A Galera node cut off from the primary component fails commits
	 * (1180), then every statement (1047) until it rejoins: this node is
	 * unusable, another may be fine. Never a success, and for an acquire
	 * never "busy" either: try again, elsewhere. */
	case 1047: /* ER_UNKNOWN_COM_ERROR: "WSREP has not yet prepared node" */
	case 1180: /* ER_ERROR_DURING_COMMIT */
	/* A Group Replication member that cannot commit now: not ONLINE
	 * (recovering, in ERROR, leaving), or its plugin stopping. Another
	 * member may be fine. */
	case 3100: /* ER_RUN_HOOK_ERROR: "... replication hook 'before_commit'" */
	case 3796: /* ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED: member state */
	case 3797: /* ER_GRP_TRX_CONSISTENCY_BEFORE: the wait for preceding ones failed */
	case 3798: /* ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN */
	case 3799: /* ER_GRP_TRX_CONSISTENCY_BEGIN_NOT_ALLOWED: plugin stopping */
	/* offline_mode (MySQL): no new sessions but an admin's; Group
	 * Replication turns it on in a member that left the group on a
	 * failure (group_replication_exit_state_action=OFFLINE_MODE, the
	 * default from 8.4). */
	case 3032: /* ER_SERVER_OFFLINE_MODE */
	case 6400: /* ER_SERVER_OFFLINE_MODE_REASON (MySQL 9) */
	case 1040: /* ER_CON_COUNT_ERROR */
	case 1053: /* ER_SERVER_SHUTDOWN */
	case 1077: /* ER_NORMAL_SHUTDOWN */
	case 1152: /* ER_ABORTING_CONNECTION */
	case 1158:
	case 1159:
	case 1160:
	case 1161: /* network read/write errors */
	case 1203: /* ER_TOO_MANY_USER_CONNECTIONS */
	case 1927: /* ER_CONNECTION_KILLED (MariaDB) */
	case 4031: /* ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8) */
		return true;
	default:
		/* 2000-2999 are client library errors: can't connect, unknown
		 * host, server gone away, lost connection, SSL failures. */
		return errnum >= 2000 && errnum < 3000;
	}
}

enum db_status dberr_classify(unsigned errnum)
{
	switch (errnum) {
	case 0:
		return DB_OK;
	case 1044: /* ER_DBACCESS_DENIED_ERROR */
	case 1045: /* ER_ACCESS_DENIED_ERROR */
	case 1142: /* ER_TABLEACCESS_DENIED_ERROR */
	case 1370: /* ER_PROCACCESS_DENIED_ERROR: no EXECUTE on a procedure */
	case 1143: /* ER_COLUMNACCESS_DENIED_ERROR */
	case 1227: /* ER_SPECIFIC_ACCESS_DENIED_ERROR */
	case 1698: /* ER_ACCESS_DENIED_NO_PASSWORD_ERROR */
		return DB_DENIED;
	case 1146: /* ER_NO_SUCH_TABLE */
	case 1054: /* ER_BAD_FIELD_ERROR: a column is missing */
	case 1264: /* ER_WARN_DATA_OUT_OF_RANGE: column too narrow */
	case 1406: /* ER_DATA_TOO_LONG: column too narrow */
		return DB_NO_TABLE;
	case 1049: /* ER_BAD_DB_ERROR */
	case 1046: /* ER_NO_DB_ERROR */
		return DB_NO_DATABASE;
	case 1205: /* ER_LOCK_WAIT_TIMEOUT */
	case 1213: /* ER_LOCK_DEADLOCK, also Galera certification failure */
	/* Group Replication's certification failed the COMMIT: a transaction
	 * on another member changed the row first (multi-primary), or came
	 * in the backlog a new primary had yet to apply. Rolled back: the
	 * row is as the winner left it. */
	case 3101: /* ER_TRANSACTION_ROLLBACK_DURING_COMMIT */
		return DB_CONFLICT;
	case 1290: /* ER_OPTION_PREVENTS_STATEMENT: --read-only */
	case 1792: /* ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION */
	case 1836: /* ER_READ_ONLY_MODE */
		return DB_READ_ONLY;
	default:
		return dberr_unavailable(errnum) ? DB_UNAVAILABLE : DB_ERROR;
	}
}

enum db_status dberr_classify_msg(unsigned errnum, const char *msg)
{
	const char *got = errnum == 1180 && msg ? strstr(msg, "Got error ") : NULL;

	/* "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT"
	 * (MySQL; MariaDB quotes the text otherwise): the handler's deadlock
	 * (149) or lock wait timeout (146). A Group Replication member's
	 * applier aborted this transaction for a conflicting one certified
	 * first, as 1213 and 1205 say outside a COMMIT. */
	if (got) {
		long h = strtol(got + strlen("Got error "), NULL, 10);
		if (h == 149 || h == 146)
			return DB_CONFLICT;
	}
	return dberr_classify(errnum);
}

enum db_status dberr_classify_tls(unsigned errnum, const char *msg)
{
	/* CR_SSL_CONNECTION_ERROR carries both kinds; the reason tells them
	 * apart. Words of OpenSSL's X509_verify_cert_error_string and of the
	 * libraries' own messages (Connector/C's "SSL is required, but the
	 * server does not support it", "Validation of SSL server certificate
	 * failed"; libmysqlclient's "SSL is required but the server doesn't
	 * support it"). */
	static const char *const words[] = {"certificate", "not support", "n't support",  "verif",
					    "Validation",  "issuer",	  "self-signed",  "self signed",
					    "hostname",	   "expired",	  "not yet valid"};

	if (errnum == 2026 && msg)
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strstr(msg, words[i]))
				return DB_UNTRUSTED;
	return dberr_classify(errnum);
}

const char *dberr_tls_reason(unsigned errnum, const char *msg)
{
	/* The two libraries word "no TLS on offer" apart (see above); users
	 * are told one thing on both, and what they can do about it. */
	if (errnum == 2026 && msg && (strstr(msg, "not support") || strstr(msg, "n't support")))
		return DBERR_TLS_ABSENT;
	return "its TLS certificate failed verification";
}

int db_tls_parse(const char *name)
{
	static const char *const names[] = {"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *a = name, *b = names[i];
		for (; *a && *b; a++, b++) {
			char c = *a == '-' ? '_' : (*a >= 'a' && *a <= 'z' ? (char)(*a - 'a' + 'A') : *a);
			if (c != *b)
				break;
		}
		if (!*a && !*b)
			return (int)DB_TLS_DISABLED + (int)i;
	}
	return -1;
}

const char *dberr_name(enum db_status st)
{
	switch (st) {
	case DB_OK:
		return "ok";
	case DB_UNAVAILABLE:
		return "database unavailable";
	case DB_DENIED:
		return "access denied";
	case DB_NO_TABLE:
		return "lease table missing or not as expected";
	case DB_NO_DATABASE:
		return "database missing";
	case DB_CONFLICT:
		return "conflict";
	case DB_READ_ONLY:
		return "server is read-only";
	case DB_UNTRUSTED:
		return "server not verified";
	case DB_ERROR:
		break;
	}
	return "database error";
}

void dberr_printf(struct db_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}
