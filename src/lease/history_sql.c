/* The run history's statements, rendered for its table: their text is in
 * stmts.def. */
#include "history_sql.h"

#include <stdio.h>
#include <string.h>

void history_sql_render(struct history_sql *s, const char *history, const char *lease_table)
{
	char h[LEASE_TABLE_MAX + 24], l[LEASE_TABLE_MAX + 8], hdb[96];
	const char *dot = strchr(history, '.'), *ldot = strchr(lease_table, '.');
	const char *hname = dot ? dot + 1 : history, *lname = ldot ? ldot + 1 : lease_table;

	/* The history sits next to the lease table, in its database. */
	if (dot)
		snprintf(hdb, sizeof(hdb), "'%.*s'", (int)(dot - history), history);
	else
		snprintf(hdb, sizeof(hdb), "DATABASE()");
	lease_sql_quote_table(h, sizeof(h), history);
	lease_sql_quote_table(l, sizeof(l), lease_table);
	/* Each HISTORY_STMT of stmts.def, from the names above. */
#define LEASE_STMT(...)
#define HISTORY_STMT(id, member, params, columns, ...) STMT_RENDER(s, member, __VA_ARGS__)
#include "stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
}
