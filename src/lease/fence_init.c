/* --init's part of the fence: what it makes, how it upgrades a fence of
 * schema 6, and the check that what stands under the fence's names is what
 * it makes. The procedures run with their definer's rights (an
 * administrator's, who may end sessions), so a procedure or trigger that
 * someone else planted under those names would run with them too the
 * first time a job fenced: --init trusts only what it made, and says what
 * to drop. The statements are in stmts.def. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lease.h"
#include "stmt.h"

/* Adds a warning to OUT's, after those it has ("; " between). */
static void __attribute__((format(printf, 2, 3))) warn_add(struct lease_fence_init *out, const char *fmt, ...)
{
	size_t n = strlen(out->warn);
	va_list ap;

	if (n && n + 2 < sizeof(out->warn)) {
		memcpy(out->warn + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(out->warn + n, sizeof(out->warn) - n, fmt, ap);
	va_end(ap);
}

/* What information_schema showed of the fence's procedures: for each of
 * enum fence_routine, whether it stands and, if it is not leaderrun's, why. */
struct routines_seen {
	const struct lease_sql *sql;
	bool mariadb;
	bool stands[FENCE_ROUTINES];
	bool outdated[FENCE_ROUTINES]; /* an older leaderrun's body: to replace */
	int foreign;		       /* the first one that is not ours (enum fence_routine); -1 none */
	char why[96];		       /* and why not */
	char cannot_kill[96];	       /* a definer that may not end sessions; "" none */
	char no_process[96];	       /* a definer without PROCESS; "" none */
	char old_definer[96];	       /* an outdated one's definer; "" none */
	int old_process, old_kill;     /* and whether it has PROCESS, may end sessions: 1, 0, -1 unknown */
};

/* How fence_body_normal reads a body: one of leaderrun's as MariaDB
 * stores it (its executable comment expanded), or as it is: a server's
 * own text (a marker there may stand inside a string, and hide code), and
 * leaderrun's as MySQL stores it (the comment kept, as text). */
enum body_of { BODY_OURS_MARIADB, BODY_AS_IS };

/* BODY for comparison: every run of white space one space, none at either
 * end; in one of leaderrun's for MariaDB, its executable comment kept
 * with its markers dropped, as MariaDB does when it stores a routine.
 * Leaderrun's bodies have no other comments. Returns OUT. */
static char *fence_body_normal(const char *body, enum body_of of, char *out, size_t len)
{
	size_t n = 0;
	bool space = false;

	for (const char *p = body; *p && n + 1 < len; p++) {
		if (of == BODY_OURS_MARIADB && p[0] == '/' && p[1] == '*' && p[2] == 'M' && p[3] == '!') {
			/* Only the markers go: the text between them is kept. */
			const char *end = strstr(p, "*/");
			const char *inner = p + 4;
			char piece[2048];
			while (*inner >= '0' && *inner <= '9')
				inner++;
			if (!end)
				break;
			if (space && n > 0 && n + 2 < len)
				out[n++] = ' ';
			snprintf(piece, sizeof(piece), "%.*s", (int)(end - inner), inner);
			fence_body_normal(piece, BODY_AS_IS, out + n, len - n);
			n += strlen(out + n);
			p = end + 1;
			space = true;
			continue;
		}
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			space = n > 0;
			continue;
		}
		if (space && n + 2 < len && out[n - 1] != ' ')
			out[n++] = ' ';
		space = false;
		out[n++] = *p;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return out;
}

/* The body of a CREATE PROCEDURE statement of stmts.def. */
static const char *fence_body_of(const char *create)
{
	const char *b = strstr(create, "\nBEGIN\n");

	return b ? b + 1 : create;
}

static const char *fence_create_of(const struct lease_sql *sql, int k)
{
	const char *const ddl[FENCE_ROUTINES] = {sql->fence_proc, sql->fence_proc_slot, sql->fence_proc_end,
						 sql->fence_proc_move};
	return ddl[k];
}

/* The bodies that older leaderruns made under routine K, which --init
 * replaces (AGE 0: 0.7.0 to 0.10.2's; 1: 0.11.0's); NULL when this
 * build's is the same. */
static const char *fence_create_older_of(const struct lease_sql *sql, int k, int age)
{
	if (k == FENCE_R_END)
		return age ? sql->fence_proc_end110 : sql->fence_proc_end70;
	return k == FENCE_R_MOVE ? (age ? sql->fence_proc_move110 : sql->fence_proc_move70) : NULL;
}

/* Whether BODY, as the server shows it, is that of CREATE. */
static bool fence_body_is(const struct routines_seen *s, const char *create, const char *body)
{
	char want[6144], got[6144];

	return strcmp(fence_body_normal(fence_body_of(create), s->mariadb ? BODY_OURS_MARIADB : BODY_AS_IS, want,
					sizeof(want)),
		      fence_body_normal(body, BODY_AS_IS, got, sizeof(got))) == 0;
}

/* Which of enum fence_routine NAME is (information_schema's, unquoted). */
static int fence_routine_of(const struct lease_sql *sql, const char *name)
{
	static const char *const suffix[FENCE_ROUTINES] = {"", "_slot", "_end", "_move"};
	const char *dot = strchr(sql->fence, '.');
	const char *base = dot ? dot + 1 : sql->fence;
	size_t n = strlen(base);

	for (int k = 0; k < FENCE_ROUTINES; k++)
		if (strncmp(name, base, n) == 0 && strcmp(name + n, suffix[k]) == 0)
			return k;
	return -1;
}

/* One row of FENCE_ROUTINES: name, security type, definer, body (NULL
 * when this account may not see it), whether the definer may end
 * sessions, whether it has PROCESS (NULL: unknown). */
static void on_routine(void *ctx, const char *const *row, unsigned ncols)
{
	struct routines_seen *s = ctx;
	int k = fence_routine_of(s->sql, row[0] ? row[0] : "");

	(void)ncols;
	if (k < 0)
		return;
	s->stands[k] = true;
	if (s->foreign >= 0)
		return;
	if (!row[1] || strcmp(row[1], "DEFINER") != 0)
		snprintf(s->why, sizeof(s->why), "it runs with SQL SECURITY %.20s", row[1] ? row[1] : "?");
	else if (row[3] && !fence_body_is(s, fence_create_of(s->sql, k), row[3])) {
		for (int age = 0; age < 2; age++) {
			const char *older = fence_create_older_of(s->sql, k, age);
			s->outdated[k] = s->outdated[k] || (older && fence_body_is(s, older, row[3]));
		}
		if (!s->outdated[k])
			snprintf(s->why, sizeof(s->why), "its body is not the one leaderrun writes");
		else if (!s->old_definer[0]) {
			snprintf(s->old_definer, sizeof(s->old_definer), "%.90s", row[2] ? row[2] : "?");
			s->old_kill = row[4] ? strcmp(row[4], "0") != 0 : -1;
			s->old_process = row[5] ? strcmp(row[5], "0") != 0 : -1;
		}
	}
	if (s->why[0]) {
		s->foreign = k;
		return;
	}
	if (row[4] && strcmp(row[4], "0") == 0 && !s->cannot_kill[0])
		snprintf(s->cannot_kill, sizeof(s->cannot_kill), "%.80s", row[2] ? row[2] : "?");
	if (row[5] && strcmp(row[5], "0") == 0 && !s->no_process[0])
		snprintf(s->no_process, sizeof(s->no_process), "%.80s", row[2] ? row[2] : "?");
}

/* The tables the procedures touch, the fence's and the lease table: base
 * tables of InnoDB keyed as leaderrun makes them (without its key, the
 * fence's INSERT IGNORE could add a row of an older term), names compared
 * byte for byte, and no trigger (one would run at every move or renewal,
 * with its own definer's rights). */
struct table_seen {
	const struct lease_sql *sql;
	char why[200];
};

static void on_table(void *ctx, const char *const *row, unsigned ncols)
{
	struct table_seen *t = ctx;
	const char *dot = strchr(t->sql->fence, '.');
	bool fence = row[0] && strcmp(row[0], dot ? dot + 1 : t->sql->fence) == 0;
	const char *key = fence ? "lease,slot" : "name,slot";

	(void)ncols;
	if (t->why[0])
		return;
	if (!row[1] || strcmp(row[1], "BASE TABLE") != 0)
		snprintf(t->why, sizeof(t->why), "%.64s is a %s, not a table", row[0], row[1] ? row[1] : "?");
	else if (!row[2] || strcasecmp(row[2], "InnoDB") != 0)
		snprintf(t->why, sizeof(t->why), "%.64s's engine is %s, not InnoDB", row[0], row[2] ? row[2] : "?");
	else if (!row[3] || strcmp(row[3], key) != 0 || !row[4] || strcmp(row[4], "utf8mb4_bin") != 0)
		snprintf(t->why, sizeof(t->why), "%.64s is not keyed by (%s), utf8mb4_bin", row[0], key);
	else if (row[5] && row[5][0])
		snprintf(t->why, sizeof(t->why), "trigger %.100s stands on %.64s: drop it", row[5], row[0]);
}

static enum db_status fence_check(struct db *db, const struct lease_sql *sql, struct routines_seen *rs,
				  struct db_err *err)
{
	struct table_seen t = {sql, ""};
	enum db_status st = db_query_rows(db, sql->fence_table_kind, &(struct db_rows){6, on_table, &t}, err);

	if (st == DB_OK && t.why[0]) {
		snprintf(err->msg, sizeof(err->msg),
			 "the fence's tables are not as leaderrun makes them (%s); as an administrator, set them right "
			 "or drop what is foreign, then run --init again",
			 t.why);
		return DB_NO_TABLE;
	}
	if (st == DB_OK)
		st = db_query_rows(db, sql->fence_routines, &(struct db_rows){6, on_routine, rs}, err);
	if (st == DB_OK && rs->foreign >= 0) {
		snprintf(err->msg, sizeof(err->msg),
			 "procedure %s is not the one leaderrun makes (%s): as an administrator, drop it (DROP "
			 "PROCEDURE %s) and run --init again",
			 sql->fence_routine[rs->foreign], rs->why, sql->fence_routine[rs->foreign]);
		return DB_NO_TABLE;
	}
	return st;
}

/* The grants an upgrade keeps: who may execute which procedure. */
#define FENCE_GRANTS_MAX 32
struct grants {
	const struct lease_sql *sql;
	struct {
		char user[81], host[256];
		int routine;
	} g[FENCE_GRANTS_MAX];
	int n;
	bool skipped; /* a name with a quote or backslash: granted by hand */
};

static bool grant_name_ok(const char *s)
{
	return s && !strpbrk(s, "'\\");
}

/* One row of FENCE_PROC_GRANTS: user, host, routine, privileges. */
static void on_proc_grant(void *ctx, const char *const *row, unsigned ncols)
{
	struct grants *gs = ctx;
	int k = fence_routine_of(gs->sql, row[2] ? row[2] : "");

	(void)ncols;
	if (k < 0 || !row[3] || !strstr(row[3], "Execute"))
		return;
	if (!grant_name_ok(row[0]) || !grant_name_ok(row[1]) || gs->n == FENCE_GRANTS_MAX) {
		gs->skipped = true;
		return;
	}
	snprintf(gs->g[gs->n].user, sizeof(gs->g[gs->n].user), "%s", row[0]);
	snprintf(gs->g[gs->n].host, sizeof(gs->g[gs->n].host), "%s", row[1]);
	gs->g[gs->n++].routine = k;
}

static void on_db_grantees(void *ctx, const char *const *row, unsigned ncols)
{
	(void)ncols;
	if (row[0])
		snprintf(ctx, 256, "%.255s", row[0]);
}

/* Accounts that may write, or create in, the fence's whole database: no
 * grant on the table can be taken from them there. Said, not changed:
 * their grant is an administrator's choice for the rest of the database. */
static void fence_db_grants(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out)
{
	char who[256] = "";
	struct db_err err;

	if (db_query_rows(db, sql->fence_db_grants, &(struct db_rows){1, on_db_grantees, who}, &err) == DB_OK && who[0])
		warn_add(out,
			 "%s may write or create in the fence's whole database (a database-level grant): such an "
			 "account can write the fence's table, shadow it with a temporary table or plant a routine; "
			 "grant it table by table, or keep the lease's tables in a database of their own",
			 who);
}

/* EXECUTE again for whoever had it on a procedure of MADE; leaderrun's
 * own account (the one that may end stale sessions) also on the move,
 * which schema 6 lacked. */
static enum db_status fence_regrant(struct db *db, const struct grants *gs, const bool made[FENCE_ROUTINES],
				    struct db_err *err)
{
	char q[1024];
	enum db_status st = DB_OK;

	for (int i = 0; i < gs->n && st == DB_OK; i++) {
		if (!made[gs->g[i].routine])
			continue;
		snprintf(q, sizeof(q), "GRANT EXECUTE ON PROCEDURE %s TO '%s'@'%s'",
			 gs->sql->fence_routine[gs->g[i].routine], gs->g[i].user, gs->g[i].host);
		st = db_query(db, q, err);
		if (st == DB_OK && gs->g[i].routine == FENCE_R_END) {
			snprintf(q, sizeof(q), "GRANT EXECUTE ON PROCEDURE %s TO '%s'@'%s'",
				 gs->sql->fence_routine[FENCE_R_MOVE], gs->g[i].user, gs->g[i].host);
			st = db_query(db, q, err);
		}
	}
	return st;
}

/* Nobody keeps a right to write the fence's table: the procedures write
 * it, and a direct write could move it back (a stale transaction would
 * then commit) or name any session for leaderrun_fence_end. */
struct table_grants {
	const struct lease_sql *sql;
	struct db *db;
	enum db_status st;
	int revoked;
	struct db_err *err;
};

static void on_table_grant(void *ctx, const char *const *row, unsigned ncols)
{
	static const char *const writes[] = {"Insert", "Update", "Delete", "Alter", "Drop", "Trigger"};
	struct table_grants *t = ctx;
	char q[1024];

	(void)ncols;
	if (t->st != DB_OK || !row[2] || !grant_name_ok(row[0]) || !grant_name_ok(row[1]))
		return;
	for (size_t k = 0; k < sizeof(writes) / sizeof(writes[0]) && t->st == DB_OK; k++) {
		if (!strstr(row[2], writes[k]))
			continue;
		snprintf(q, sizeof(q), "REVOKE %s ON %s FROM '%s'@'%s'", writes[k],
			 t->sql->fence_routine[FENCE_R_FENCE], row[0], row[1]);
		t->st = db_query(t->db, q, t->err);
		t->revoked += t->st == DB_OK;
	}
}

/* Only an administrator may read the grant tables and revoke: for anyone
 * else there is nothing to do here (and nothing they could have granted). */
static int fence_revoke_writes(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out)
{
	struct db_err err;
	struct table_grants t = {sql, db, DB_OK, 0, &err};

	if (db_query_rows(db, sql->fence_table_grants, &(struct db_rows){3, on_table_grant, &t}, &err) == DB_OK &&
	    t.st != DB_OK)
		warn_add(out, "could not take an account's write grant on the fence's table %s away: %s", sql->fence,
			 err.msg);
	return t.revoked;
}

struct fence_plan {
	bool drop[FENCE_ROUTINES], make[FENCE_ROUTINES];
};

/* PLAN carried out: procedures dropped, then made. A DROP takes their
 * grants with it, so the EXECUTE grants are read first and given again
 * (only EXECUTE, so a creator keeps no right to alter them); a warning says
 * when they could not be read (only an administrator may). */
static enum db_status fence_replace(struct db *db, const struct lease_sql *sql, const struct fence_plan *plan,
				    struct lease_fence_init *out, struct db_err *err)
{
	struct grants gs = {.sql = sql};
	char q[LEASE_TABLE_MAX + 64];
	struct db_err why = {.msg = ""};
	bool read = true, dropped = false;
	enum db_status st = DB_OK;

	for (int k = 0; k < FENCE_ROUTINES; k++)
		dropped = dropped || plan->drop[k];
	if (dropped)
		read =
		    db_query_rows(db, sql->fence_proc_grants, &(struct db_rows){4, on_proc_grant, &gs}, &why) == DB_OK;
	for (int k = 0; k < FENCE_ROUTINES && st == DB_OK; k++) {
		snprintf(q, sizeof(q), "DROP PROCEDURE IF EXISTS %s", sql->fence_routine[k]);
		if (plan->drop[k])
			st = db_query(db, q, err);
	}
	for (int k = 0; k < FENCE_ROUTINES && st == DB_OK; k++)
		if (plan->make[k])
			st = db_query(db, fence_create_of(sql, k), err);
	if (st == DB_OK)
		st = fence_regrant(db, &gs, plan->make, err);
	if (st == DB_OK && (!read || gs.skipped))
		warn_add(out,
			 "the fence's procedures were made anew, and some EXECUTE grants on them could not be given "
			 "again (%.255s): grant them as sql/grants.sql shows",
			 read ? "an account's name holds a quote" : why.msg);
	return st;
}

/* Schema 6 to 7: the column, the procedures replaced, and the table's
 * write grants taken away. */
static enum db_status fence_upgrade(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out,
				    struct db_err *err)
{
	const struct fence_plan all = {{true, true, true, true}, {true, true, true, true}};
	enum db_status st = db_query(db, sql->fence_upgrade, err);

	if (st == DB_OK)
		st = fence_replace(db, sql, &all, out, err);
	if (st != DB_OK)
		return st;
	snprintf(out->done, sizeof(out->done), "upgraded the fence %s to schema %d", sql->fence, LEASE_SCHEMA);
	fence_revoke_writes(db, sql, out);
	fence_db_grants(db, sql, out);
	return DB_OK;
}

/* What the definer may not do, in one warning: without the right to end
 * other accounts' sessions it ends only its own account's; without PROCESS,
 * only where no session-less transaction can be (issue 47). */
#define FENCE_NO_PROCESS                                                                                               \
	"of a term begun since the server's last start, and neither on MySQL with xa_detach_on_prepare ON (its "       \
	"default) nor on Galera or Group Replication; else the takeover waits"
static void fence_warn_definer(const struct routines_seen *rs, struct lease_fence_init *out)
{
	if (rs->cannot_kill[0] && rs->no_process[0])
		warn_add(out,
			 "the fence's procedures are defined by %s, who may not end other accounts' sessions, nor has "
			 "PROCESS: a takeover ends a stale job's session only of that account, " FENCE_NO_PROCESS
			 "; grant it PROCESS and CONNECTION ADMIN (MariaDB) or CONNECTION_ADMIN (MySQL) to end any",
			 rs->cannot_kill);
	else if (rs->cannot_kill[0])
		warn_add(out,
			 "the fence's procedures are defined by %s, who may not end other accounts' sessions: a stale "
			 "job's open transaction of another account (--fence-user) would then hold up every takeover; "
			 "grant it CONNECTION ADMIN (MariaDB) or CONNECTION_ADMIN (MySQL)",
			 rs->cannot_kill);
	else if (rs->no_process[0])
		warn_add(out,
			 "the fence's procedures are defined by %s, who lacks PROCESS: a takeover ends a stale job's "
			 "session only " FENCE_NO_PROCESS "; grant it PROCESS",
			 rs->no_process);
}
#undef FENCE_NO_PROCESS

/* What is made here has this account for definer: an older leaderrun's
 * procedures are replaced only if that takes nothing from them (this
 * account defined them, or has what their definer had of PROCESS and the
 * right to end sessions; unknown: both), and only once a scratch
 * procedure was made and dropped: no DROP before a CREATE can follow. */
struct init_account {
	const char *old_definer;
	bool process, kill, same; /* it has PROCESS, may end sessions, is OLD_DEFINER */
};

static void on_account(void *ctx, const char *const *row, unsigned ncols)
{
	struct init_account *me = ctx;

	(void)ncols;
	me->process = row[1] && strcmp(row[1], "1") == 0;
	me->kill = row[2] && strcmp(row[2], "1") == 0;
	me->same = row[0] && strcmp(row[0], me->old_definer) == 0;
}

static enum db_status fence_may_replace(struct db *db, const struct lease_sql *sql, const struct routines_seen *rs,
					struct db_err *err)
{
	struct init_account me = {.old_definer = rs->old_definer};
	char q[2 * LEASE_TABLE_MAX + 96], name[LEASE_TABLE_MAX + 24];
	enum db_status st = db_query_rows(db, sql->fence_init_account, &(struct db_rows){3, on_account, &me}, err);

	if (st != DB_OK)
		return st;
	if (!me.same && ((rs->old_process != 0 && !me.process) || (rs->old_kill != 0 && !me.kill))) {
		snprintf(
		    err->msg, sizeof(err->msg),
		    "the fence's procedures were made by an older leaderrun, defined by %s, and this account lacks "
		    "what they may need (PROCESS, CONNECTION ADMIN or CONNECTION_ADMIN): run leaderrun --init "
		    "as %s or as an administrator who has both",
		    rs->old_definer, rs->old_definer);
		return DB_NO_TABLE;
	}
	/* The scratch procedure's name: the end's, with _try for _end. */
	snprintf(name, sizeof(name), "%s", sql->fence_routine[FENCE_R_END]);
	memcpy(strrchr(name, '_'), "_try", 4);
	snprintf(q, sizeof(q), "CREATE PROCEDURE %s() BEGIN END", name);
	st = db_query(db, q, err);
	snprintf(q, sizeof(q), "DROP PROCEDURE IF EXISTS %s", name);
	return st == DB_OK ? db_query(db, q, err) : st;
}

/* A fence of schema 7 that stands: checked, an older leaderrun's move and
 * end replaced, and any procedure missing made (an administrator dropped
 * a foreign one, or a grant hides it: then the CREATE is refused, and the
 * caller says which grant). */
static enum db_status fence_current(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out,
				    struct db_err *err)
{
	struct routines_seen rs = {
	    .sql = sql, .foreign = -1, .mariadb = strstr(db_server_version(db), "MariaDB") != NULL};
	enum db_status st = fence_check(db, sql, &rs, err);
	struct fence_plan plan;
	int made = 0, replaced = 0;

	for (int k = 0; k < FENCE_ROUTINES; k++) {
		plan.make[k] = !rs.stands[k] || rs.outdated[k];
		rs.outdated[k] = rs.stands[k] && rs.outdated[k];
		plan.drop[k] = rs.outdated[k];
		made += !rs.stands[k];
		replaced += rs.outdated[k];
	}
	if (st == DB_OK && replaced)
		st = fence_may_replace(db, sql, &rs, err);
	if (st == DB_OK && (made || replaced))
		st = fence_replace(db, sql, &plan, out, err);
	/* What was made has this account for its definer: looked at again
	 * for whether that definer may end sessions. */
	if (st == DB_OK && (made || replaced)) {
		rs = (struct routines_seen){.sql = sql, .foreign = -1, .mariadb = rs.mariadb};
		st = fence_check(db, sql, &rs, err);
	}
	if (st != DB_OK)
		return st;
	if (replaced)
		snprintf(out->done, sizeof(out->done),
			 "replaced %d of the fence's procedures made by an older leaderrun", replaced + made);
	else if (made)
		snprintf(out->done, sizeof(out->done), "made %d of the fence's procedures", made);
	fence_warn_definer(&rs, out);
	fence_db_grants(db, sql, out);
	if (fence_revoke_writes(db, sql, out) && !out->done[0])
		snprintf(out->done, sizeof(out->done), "took the write grants on the fence's table away");
	return DB_OK;
}

/* A denial, in words that say which grant or whom to ask: an account
 * sees only the procedures it may execute, and a server tells no one
 * without a grant whether a table exists. */
static void fence_denied(const struct lease_sql *sql, const struct lease_fence_seen *seen, struct db_err *err)
{
	char why[256];

	snprintf(why, sizeof(why), "%.255s", err->msg);
	if (!seen->table)
		snprintf(err->msg, sizeof(err->msg),
			 "this account does not see the fence %s, and may not make it (%s): if an administrator made "
			 "it, grant this account SELECT on it and EXECUTE on its procedures (sql/grants.sql); if "
			 "not, run --init once as an administrator",
			 sql->fence, why);
	else if (!seen->fencer)
		snprintf(err->msg, sizeof(err->msg),
			 "upgrading the fence %s to schema %d needs ALTER, CREATE ROUTINE, ALTER ROUTINE and GRANT "
			 "OPTION (%s): run --init once as an administrator, or apply sql/upgrade-6-to-7.sql",
			 sql->fence, LEASE_SCHEMA, why);
	else
		snprintf(err->msg, sizeof(err->msg),
			 "this account sees %d of the fence's 4 procedures (%s): grant it EXECUTE on each of them "
			 "(sql/grants.sql); if one is missing, run --init once as an administrator",
			 seen->routines, why);
}

enum db_status lease_fence_init(struct db *db, const struct lease_sql *sql, struct lease_fence_init *out,
				struct db_err *err)
{
	struct lease_fence_seen seen;
	enum db_status st = lease_fence_seen(db, sql, &seen, err);

	memset(out, 0, sizeof(*out));
	if (st != DB_OK)
		return st;
	out->from = seen.schema;
	if (!seen.table) {
		/* None that this account sees: made here, or refused (a
		 * fence this account may not see: fence_denied names the
		 * grants). CREATE PROCEDURE, not IF NOT EXISTS: a procedure
		 * of these names that stands already is checked, not kept. */
		st = db_query(db, sql->fence_create, err);
		if (st == DB_OK)
			st = fence_current(db, sql, out, err);
		if (st == DB_OK)
			snprintf(out->done, sizeof(out->done), "made the fence %s", sql->fence);
	} else if (!seen.fencer) {
		struct routines_seen rs = {.sql = sql, .foreign = -1};
		/* The table must be one to upgrade; the old procedures are
		 * replaced whatever their bodies, never called. */
		st = fence_check(db, sql, &rs, err);
		if (st == DB_NO_TABLE && rs.foreign >= 0)
			st = DB_OK;
		if (st == DB_OK)
			st = fence_upgrade(db, sql, out, err);
	} else
		st = fence_current(db, sql, out, err);
	if (st == DB_DENIED)
		fence_denied(sql, &seen, err);
	return st;
}
