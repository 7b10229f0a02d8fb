/* The standbys of a lease, for --status: every waiting contender keeps a row
 * in the lease table's sibling TABLE_standby (holder, host, since, healthy),
 * and holds a named lock of its own on its database connection. The row
 * says who it is; the lock says it is alive: its session ends with it (a
 * crash, a SIGKILL, a cut connection), and IS_USED_LOCK turns NULL. So a
 * waiter pays its row once a wait (and again after a reconnect or a change
 * of health), never a heartbeat: a hinted waiter's cost stays what it was.
 *
 * The table is optional: --init makes it; without it (a database not yet
 * --init'ed by this version, or no grant on it) a waiter keeps no row and
 * --status lists no standbys. The lock's name is this module's: a hash of
 * table, lease and holder, never user text. */
#ifndef LEADERRUN_STANDBY_H
#define LEADERRUN_STANDBY_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"
#include "lease.h"

#define STANDBY_LOCK_MAX 48
#define STANDBY_HOST_MAX 255

struct standby_row {
	char lease[LEASE_NAME_MAX + 1];
	char holder[LEASE_HOLDER_MAX + 1];
	char host[STANDBY_HOST_MAX + 1];
	char since[32]; /* when it began to wait, the server's UTC, ISO 8601 */
	bool healthy;	/* its --health-cmd passes (or it has none) */
	int priority;	/* its --priority */
	bool chosen;	/* chosen by --release --to, the choice still running */
};

/* The named lock of HOLDER waiting for LEASE of TABLE. */
void standby_lock_name(const char *table, const char *lease, const char *holder, char *out, size_t len);

/* The columns of the claims (choose.h): a waiter's --priority and
 * --spread, the switch-over's choice (until when, and the term it was made
 * in: the next term spends it), the term it preempted. */
#define STANDBY_CLAIMS_COLUMNS                                                                                         \
	"priority INT NOT NULL DEFAULT 0, chosen_until DATETIME(6) NULL, "                                             \
	"chosen_term BIGINT UNSIGNED NOT NULL DEFAULT 0, preempt_term BIGINT UNSIGNED NOT NULL DEFAULT 0, "            \
	"spread BOOLEAN NOT NULL DEFAULT FALSE"

/* The table's CREATE TABLE IF NOT EXISTS, into OUT. */
void standby_create_sql(const struct lease_sql *sql, char *out, size_t len);

/* The ALTER TABLE that gives a table of the build before them the claims'
 * columns, into OUT (--init; error 1060 says they are there). */
void standby_upgrade_sql(const struct lease_sql *sql, char *out, size_t len);

/* A waiter's row: who, its lock, healthy or not, its --priority and
 * --spread; CLAIMS: the table has the columns of the claims (choose.h),
 * else the row is written as an older table holds it. */
struct standby_reg {
	const char *lease, *holder, *lock;
	bool healthy;
	int priority;
	bool spread, claims;
};

/* Takes the row's lock on DB's session, writes the row (since: now), and
 * drops the rows of the lease's dead standbys. DB_NO_TABLE or DB_DENIED:
 * no table to keep one in. */
enum db_status standby_register(struct db *db, const struct lease_sql *sql, const struct standby_reg *reg,
				struct db_err *err);

/* The live standbys of LEASE (NULL: of every lease), oldest first, to
 * EACH->on_row(EACH->ctx, ROW); not a lease's holder. */
typedef void standby_row_fn(void *ctx, const struct standby_row *row);
struct standby_each {
	standby_row_fn *on_row;
	void *ctx;
};
enum db_status standby_list(struct db *db, const struct lease_sql *sql, const char *lease,
			    const struct standby_each *each, struct db_err *err);

#endif
