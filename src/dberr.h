/* Database error classes, and the mapping from server/client error numbers.
 * Kept apart from db.c so that it is pure and unit-testable without a
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
	DB_ERROR,	/* anything else */
};

enum db_status dberr_classify(unsigned errnum);

/* "unavailable", "access denied", ... for messages. */
const char *dberr_name(enum db_status st);

#endif
