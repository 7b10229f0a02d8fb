/* The statements' indexes: every statement that leaderrun renders is
 * declared once, in stmts.def, and numbered here from that list. A
 * connection keeps each prepared statement at its index (db_exec), so the
 * lease's, the history's and the operator modes' statements can share one
 * connection without counting each other's. */
#ifndef LEADERRUN_STMT_H
#define LEADERRUN_STMT_H

#include "db/db.h"

enum stmt_id {
#define LEASE_STMT(id, member, since, params, columns, ...) STMT_##id,
#define HISTORY_STMT(id, member, params, columns, ...)	    STMT_##id,
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
	STMT_COUNT
};

_Static_assert(STMT_COUNT <= DB_MAX_STMTS, "more statements than a connection holds: raise DB_MAX_STMTS (db.h)");

#define STMT_FITS(id, params, columns)                                                                                 \
	_Static_assert((params) <= DB_MAX_PARAMS, #id " has more parameters than db_exec binds (DB_MAX_PARAMS)");      \
	_Static_assert((columns) <= DB_MAX_COLS, #id " has more columns than db_exec binds (DB_MAX_COLS)");
#define LEASE_STMT(id, member, since, params, columns, ...) STMT_FITS(id, params, columns)
#define HISTORY_STMT(id, member, params, columns, ...)	    STMT_FITS(id, params, columns)
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
#undef STMT_FITS

/* A statement's buffer: its format as declared, and room for what its
 * renderer puts in (quoted table names, a schema's column expressions, at
 * most STMT_NAMES_MAX bytes: five quoted names in the fence's procedure).
 * tests/unit/test_outcome.c renders every statement with the longest names
 * and checks that none is cut short. */
#define STMT_NAMES_MAX		  768
#define STMT_FORMAT_(format, ...) format
#define STMT_FORMAT(...)	  STMT_FORMAT_(__VA_ARGS__, 0)
#define STMT_CAP(...)		  (sizeof(STMT_FORMAT(__VA_ARGS__)) + STMT_NAMES_MAX)
/* A member of the struct that holds the rendered statements
 * (struct lease_sql, struct history_sql), sized from its declaration. */
#define STMT_MEMBER(member, ...) char member[STMT_CAP(__VA_ARGS__)];
/* Renders one statement into S->MEMBER (inside a renderer, whose locals
 * the declaration's arguments name), checked at compile time against what
 * db_exec can send. */
#define STMT_RENDER(s, member, ...)                                                                                    \
	_Static_assert(STMT_CAP(__VA_ARGS__) <= DB_MAX_SQL, #member "'s text is longer than db_exec sends");           \
	snprintf((s)->member, sizeof((s)->member), __VA_ARGS__);

#endif
