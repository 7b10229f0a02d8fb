/* An acquisition and a release as one compound statement each, where the
 * server runs them (MariaDB's BEGIN NOT ATOMIC): the statements that a
 * run needs around its command, in two round trips and two commits
 * (src/README.md lists them).
 *
 * The acquisition: the compare-and-set, and when it matched, the fence's
 * move to the new term and the wake-up hint, one commit. The move keeps
 * every property it has as a statement of its own (fence.c): it runs with
 * its definer's rights, waits for a stale fenced transaction, and the
 * command starts only once it has moved. Where it fails the acquisition is
 * committed all the same, as when the move followed its commit, and
 * lease_fence_move carries on from that error; where the failure has
 * rolled the transaction back (a deadlock), nothing was acquired.
 * Not on Galera (db_blocks): a statement at a time there.
 * A compare-and-set that matched nothing locks nothing past the block: its
 * commit ends the transaction in the same round trip, so a contender
 * frozen or cut off after it never holds the row against its holder.
 *
 * The release: the run history's row first, so that its failure (a
 * missing table, a grant, even a deadlock that rolls it back) leaves the
 * release to commit by itself, then the release, one commit. */
#include "lease_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sqltext.h"
#include "hint.h"

/* Room for a block: the statements (< DB_MAX_SQL each) and the text
 * around them. */
#define BLOCK_MAX (3 * DB_MAX_SQL)

/* The error a handler caught: its number and message, which the block's
 * last SELECT hands back. */
#define BLOCK_CATCH                                                                                                    \
	"DECLARE CONTINUE HANDLER FOR SQLEXCEPTION GET DIAGNOSTICS CONDITION 1 lr_e = MYSQL_ERRNO, lr_m = "            \
	"MESSAGE_TEXT; "

bool lease_block_ok(struct db *db, const struct lease_sql *sql)
{
	return sql->schema >= LEASE_ROWS_SCHEMA && !sql->older && db_blocks(db);
}

/* The fence's move to the block's new term lr_t, inside the transaction. */
static bool block_fence(char *q, size_t len, size_t *used, const struct lease_block_stmt *s,
			const struct lease_with *with)
{
	const struct lease_sql *sql = s->sql;
	struct db_value v[] = {{.type = DB_STR, .str = s->name},
			       {.type = DB_I64, .i64 = s->slot},
			       {.type = DB_STR, .str = with->fencer, .is_null = !with->fencer}};

	return sqltext_append(q, len, used, "IF lr_n = 1 THEN BEGIN " BLOCK_CATCH "CALL %s(",
			      sql->fence_routine[FENCE_R_MOVE]) &&
	       sqltext_literal(q, len, used, &v[0]) && sqltext_append(q, len, used, ", ") &&
	       sqltext_literal(q, len, used, &v[1]) && sqltext_append(q, len, used, ", lr_t, ") &&
	       sqltext_literal(q, len, used, &v[2]) &&
	       /* A failure that rolled the transaction back took the
		* acquisition with it. */
	       sqltext_append(q, len, used,
			      "); END; IF lr_e <> 0 AND @@in_transaction = 0 THEN SET lr_n = 0, lr_t = 0; END IF; "
			      "END IF; ");
}

/* After the commit: the hint and the term's mark (hint_take's). Its
 * failure is the hint's (-1), never the committed acquisition's. */
static bool block_hint(char *q, size_t len, size_t *used, const struct lease_sql *sql, unsigned slot)
{
	char hint[192];

	hint_sql(hint, sizeof(hint), sql, slot);
	return sqltext_append(
	    q, len, used,
	    "IF lr_n = 1 AND lr_e = 0 THEN BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET lr_h = -1; "
	    "SET lr_h = (SELECT GET_LOCK(CONCAT(h, ':', lr_t), 0) + 2 * GET_LOCK(h, 0) "
	    "FROM (SELECT %s AS h) AS hint); END; END IF; ",
	    hint);
}

/* The acquisition's block; S->p NULL: the compare-and-set's placeholders
 * kept, to be prepared (lease_block_prepare_acquire). */
static bool block_acquire_text(char *q, size_t len, const struct lease_block_stmt *s, const struct lease_with *with)
{
	size_t used = 0;

	return sqltext_append(q, len, &used,
			      "DECLARE lr_n, lr_e INT DEFAULT 0; DECLARE lr_t BIGINT UNSIGNED DEFAULT 0; "
			      "DECLARE lr_h INT DEFAULT NULL; DECLARE lr_m VARCHAR(512) DEFAULT ''; "
			      "START TRANSACTION; ") &&
	       (s->p
		    ? sqltext_render(q, len, &used, &(struct db_call){.sql = s->text, .params = s->p, .nparams = s->np})
		    : sqltext_append(q, len, &used, "%s", s->text)) &&
	       /* The term only from a statement that matched one row: after
		* none LAST_INSERT_ID() may hold a stranger's. */
	       sqltext_append(q, len, &used,
			      "; SET lr_n = ROW_COUNT(); IF lr_n = 1 THEN SET lr_t = LAST_INSERT_ID(); "
			      "END IF; ") &&
	       block_fence(q, len, &used, s, with) && sqltext_append(q, len, &used, "COMMIT; ") &&
	       (!with->hint || block_hint(q, len, &used, s->sql, s->slot)) &&
	       sqltext_append(q, len, &used, "SELECT lr_n, lr_t, lr_e, lr_m, lr_h;");
}

/* A block to run: TEXT with every value in it (malloc'd, BLOCK_MAX bytes;
 * FITS: made whole), or, when KEPT (its text with the values that came
 * late as '?'s; NULL: none) is the one prepared as ID, that one with ARGS.
 * Frees both. WHAT names it in errors. */
struct block_go {
	enum db_prepared id;
	char *kept, *text;
	bool fits;
	const struct db_value *args;
	unsigned nargs;
	const char *what;
};

/* Runs G's TEXT and frees it; its last row into C's columns. */
static enum db_status block_run(struct db *db, const struct block_go *g, struct db_call *c, struct db_err *err)
{
	enum db_status st;

	if (!g->text || !g->fits) {
		free(g->text);
		snprintf(err->msg, sizeof(err->msg),
			 g->text ? "internal error: %s's statement did not fit" : "out of memory for %s", g->what);
		return DB_ERROR;
	}
	c->sql = g->text;
	st = db_block(db, c, err);
	free(g->text);
	if (st == DB_OK && !c->res->have_row) {
		snprintf(err->msg, sizeof(err->msg), "the server gave no result for %s", g->what);
		st = DB_ERROR;
	}
	return st;
}

/* Runs G, the last row into C's columns. */
static enum db_status block_go(struct db *db, const struct block_go *g, struct db_call *c, struct db_err *err)
{
	enum db_status st;
	bool prepared = g->kept && db_block_prepared(db, g->id, g->kept);

	free(g->kept);
	if (!prepared)
		return block_run(db, g, c, err);
	free(g->text);
	c->params = g->args;
	c->nparams = g->nargs;
	st = db_block_execute(db, g->id, c, err);
	if (st == DB_OK && !c->res->have_row) {
		snprintf(err->msg, sizeof(err->msg), "the server gave no result for %s", g->what);
		st = DB_ERROR;
	}
	return st;
}

/* Prepares G's KEPT (FITS: made whole) as its ID, with WARM, unless it
 * is already; frees it. */
static enum db_status block_prepare(struct db *db, const struct block_go *g, const char *warm, struct db_err *err)
{
	enum db_status st = DB_OK;

	if (!g->kept || !g->fits) {
		snprintf(err->msg, sizeof(err->msg),
			 g->kept ? "internal error: %s's statement did not fit" : "out of memory for %s", g->what);
		st = DB_ERROR;
	} else if (!db_block_prepared(db, g->id, g->kept))
		st = db_block_prepare(db, g->id, g->kept, warm, err);
	free(g->kept);
	return st;
}

enum db_status lease_block_acquire(struct db *db, const struct lease_block_stmt *s, struct lease_with *with,
				   struct db_result *r, struct db_err *err)
{
	struct lease_block_stmt kept = *s;
	struct block_go g = {.id = DB_PREPARED_ACQUIRE,
			     .text = malloc(BLOCK_MAX),
			     .args = s->p,
			     .nargs = s->np,
			     .what = "the acquisition"};
	struct db_value c[] = {{.type = DB_U64},
			       {.type = DB_U64},
			       {.type = DB_I64},
			       {.type = DB_STR, .buf = with->fence_err, .cap = sizeof(with->fence_err)},
			       {.type = DB_I64}};
	struct db_call call = {.cols = c, .ncols = 5, .res = r};
	enum db_status st;

	kept.p = NULL;
	with->ran = with->hint_got = with->hint_failed = with->alone = false;
	with->fence_errno = 0;
	with->fence_err[0] = '\0';
	g.fits = g.text && block_acquire_text(g.text, BLOCK_MAX, s, with);
	/* Prepared while it waited: the same block, parsed already. */
	if (db_block_prepared(db, g.id, NULL) && (g.kept = malloc(BLOCK_MAX)) &&
	    !block_acquire_text(g.kept, BLOCK_MAX, &kept, with)) {
		free(g.kept);
		g.kept = NULL;
	}
	st = block_go(db, &g, &call, err);
	if (st != DB_OK)
		return st;
	with->ran = true;
	r->affected = c[0].u64;
	r->insert_id = c[1].u64;
	with->fence_errno = (unsigned)c[2].i64;
	with->hint_got = !c[4].is_null && c[4].i64 == 3;
	with->hint_failed = !c[4].is_null && c[4].i64 == -1;
	/* Matched, then rolled back with the move: nothing was acquired.
	 * Two causes need the acquisition to go again a statement at a time
	 * (lease.c: the compare-and-set commits alone, then the move, each
	 * of its statements its own transaction): a lock wait behind a stale
	 * fenced transaction (innodb_rollback_on_timeout), which only an
	 * acquisition that stands ends; and a deadlock between two leases'
	 * first moves, whose UPDATE of a fence row not yet there locks the
	 * gap until the commit, so that two INSERTs into one gap wait for
	 * each other. A retry in a block could meet the same gap again. */
	if (c[0].u64 == 0 && c[2].i64 != 0) {
		with->alone = true;
		snprintf(err->msg, sizeof(err->msg), "the acquisition was rolled back: %s (error %u)", with->fence_err,
			 with->fence_errno);
		return DB_CONFLICT;
	}
	return DB_OK;
}

enum db_status lease_block_prepare_acquire(struct db *db, const struct lease_block_stmt *s,
					   const struct lease_with *with, struct db_err *err)
{
	struct lease_block_stmt kept = *s;
	struct block_go g = {.id = DB_PREPARED_ACQUIRE, .kept = malloc(BLOCK_MAX), .what = "the acquisition"};
	char warm[256];

	kept.p = NULL;
	kept.np = 0;
	/* The fence's routine, read into the session's cache by its
	 * prepare: its first call would read and parse it. */
	snprintf(warm, sizeof(warm), "CALL %s(?, ?, ?, ?)", s->sql->fence_routine[FENCE_R_MOVE]);
	g.fits = g.kept && block_acquire_text(g.kept, BLOCK_MAX, &kept, with);
	return block_prepare(db, &g, warm, err);
}

/* The release's block into Q; KEEP: the values known only at the end (the
 * command's status, P[1], and WITH's also_kept ones) as '?'s, to be
 * prepared. */
static bool block_release_text(char *q, size_t len, const struct lease_block_stmt *s,
			       const struct lease_release_with *with, bool keep)
{
	const struct db_value *p = s->p;
	unsigned np = s->np;
	const char *also = keep ? with->also_kept : with->also;
	struct db_value v[6];
	size_t used = 0;

	if (np > 6)
		return false;
	memcpy(v, p, np * sizeof(*p));
	v[1].kept = keep;
	return sqltext_append(q, len, &used,
			      "DECLARE lr_n, lr_e INT DEFAULT 0; DECLARE lr_m VARCHAR(512) DEFAULT ''; "
			      "START TRANSACTION; ") &&
	       (!also || sqltext_append(q, len, &used, "BEGIN " BLOCK_CATCH "%s END; ", also)) &&
	       sqltext_render(q, len, &used, &(struct db_call){.sql = s->text, .params = v, .nparams = np}) &&
	       /* The hint before the commit: the woken follower's
		* compare-and-set waits on the row's lock, which InnoDB lets go
		* of before the commit's log flush, and its own commit's flush
		* covers this one, so its wake-up no longer waits for that
		* flush (on disk, a millisecond of the hand-over). The hint
		* decides nothing: a release that fails to commit leaves the
		* row held, and the follower waits for its expiry. Nothing may
		* fail the block past the commit: a committed release read as
		* failed would be retried, its row written twice
		* (RELEASE_ALL_LOCKS: MariaDB 10.5.2). */
	       sqltext_append(q, len, &used, "; SET lr_n = ROW_COUNT(); %sCOMMIT; SELECT lr_n, lr_e, lr_m;",
			      with->drop_hints ? "BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; "
						 "DO RELEASE_ALL_LOCKS(); END; "
					       : "");
}

enum db_status lease_block_prepare_release(struct db *db, const struct lease_block_stmt *s,
					   const struct lease_release_with *with, struct db_err *err)
{
	struct block_go g = {.id = DB_PREPARED_RELEASE, .kept = malloc(BLOCK_MAX), .what = "the release"};

	g.fits = g.kept && block_release_text(g.kept, BLOCK_MAX, s, with, true);
	return block_prepare(db, &g, NULL, err);
}

enum db_status lease_block_release(struct db *db, const struct lease_block_stmt *s, struct lease_release_with *with,
				   struct db_result *r, struct db_err *err)
{
	struct db_value args[4];
	struct block_go g = {.id = DB_PREPARED_RELEASE, .text = malloc(BLOCK_MAX), .args = args, .what = "the release"};
	struct db_value c[] = {
	    {.type = DB_U64}, {.type = DB_I64}, {.type = DB_STR, .buf = with->also_err, .cap = sizeof(with->also_err)}};
	struct db_call call = {.cols = c, .ncols = 3, .res = r};
	enum db_status st;

	with->ran = false;
	with->also_errno = 0;
	with->also_err[0] = '\0';
	g.fits = g.text && block_release_text(g.text, BLOCK_MAX, s, with, false);
	/* Prepared while the command ran, its late values as arguments. A
	 * history row that cannot be kept (ALSO with no ALSO_KEPT) goes as
	 * text, never left out. */
	if (db_block_prepared(db, g.id, NULL) && (!with->also || with->also_kept) && (g.kept = malloc(BLOCK_MAX))) {
		if (block_release_text(g.kept, BLOCK_MAX, s, with, true)) {
			for (unsigned i = 0; with->also_kept && i < 3; i++)
				args[g.nargs++] = with->also_vals[i];
			args[g.nargs++] = s->p[1];
		} else {
			free(g.kept);
			g.kept = NULL;
		}
	}
	st = block_go(db, &g, &call, err);
	if (st != DB_OK)
		return st;
	with->ran = true;
	r->affected = c[0].u64;
	with->also_errno = (unsigned)c[1].i64;
	return DB_OK;
}
