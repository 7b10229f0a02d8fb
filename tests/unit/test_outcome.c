#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "db/dberr.h"
#include "lease/history_sql.h"
#include "lease/choose.h"
#include "lease/lease.h"
#include "run/outcome.h"

static int status_of(enum outcome_kind k)
{
	struct outcome o = {.kind = k};
	return outcome_exit_status(&o, 75);
}

Test(outcome, documented_exit_statuses)
{
	cr_assert_eq(status_of(OUTCOME_BUSY), 75);
	cr_assert_eq(status_of(OUTCOME_LOST), 76);
	cr_assert_eq(status_of(OUTCOME_TIMED_OUT), 124, "as timeout(1)");
	cr_assert_eq(status_of(OUTCOME_USAGE), 64);
	cr_assert_eq(status_of(OUTCOME_UNAVAILABLE), 69);
	cr_assert_eq(status_of(OUTCOME_DENIED), 77);
	cr_assert_eq(status_of(OUTCOME_NO_TABLE), 78);
	cr_assert_eq(status_of(OUTCOME_NOT_EXECUTABLE), 126);
	cr_assert_eq(status_of(OUTCOME_NOT_FOUND), 127);
	cr_assert_eq(status_of(OUTCOME_INIT_DONE), 0);
	cr_assert_eq(status_of(OUTCOME_INTERNAL), 71);
}

Test(outcome, busy_code_is_configurable)
{
	struct outcome o = {.kind = OUTCOME_BUSY};
	cr_assert_eq(outcome_exit_status(&o, 0), 0);
}

Test(outcome, child_status_passes_through_like_a_shell)
{
	struct outcome o = {.kind = OUTCOME_CHILD_EXITED, .wstatus = 3 << 8};
	cr_assert_eq(outcome_exit_status(&o, 75), 3);
	o.wstatus = SIGTERM; /* WIFSIGNALED with signal 15 */
	cr_assert_eq(outcome_exit_status(&o, 75), 143);
	o = (struct outcome){.kind = OUTCOME_SIGNALLED, .signo = SIGINT};
	cr_assert_eq(outcome_exit_status(&o, 75), 130);
}

Test(outcome, compare_and_set_results)
{
	cr_assert_eq(lease_outcome_of(DB_OK, 1, 1), LEASE_OK);
	cr_assert_eq(lease_outcome_of(DB_OK, 0, 1), LEASE_BUSY);
	cr_assert_eq(lease_outcome_of(DB_OK, 1, 0), LEASE_OK);
	cr_assert_eq(lease_outcome_of(DB_OK, 0, 0), LEASE_LOST);
	cr_assert_eq(lease_outcome_of(DB_OK, 2, 0), LEASE_ERROR);
	/* A Galera certification failure is a lost race for an acquire... */
	cr_assert_eq(lease_outcome_of(DB_CONFLICT, 0, 1), LEASE_BUSY);
	/* ...but only an error for a renew: the retry finds out. */
	cr_assert_eq(lease_outcome_of(DB_CONFLICT, 0, 0), LEASE_ERROR);
	cr_assert_eq(lease_outcome_of(DB_UNAVAILABLE, 0, 0), LEASE_ERROR);
}

Test(outcome, server_errors_are_classified)
{
	cr_assert_eq(dberr_classify(1045), DB_DENIED);
	cr_assert_eq(dberr_classify(1142), DB_DENIED);
	cr_assert_eq(dberr_classify(1146), DB_NO_TABLE);
	cr_assert_eq(dberr_classify(1054), DB_NO_TABLE);
	cr_assert_eq(dberr_classify(1049), DB_NO_DATABASE);
	cr_assert_eq(dberr_classify(1213), DB_CONFLICT);
	cr_assert_eq(dberr_classify(1205), DB_CONFLICT);
	cr_assert_eq(dberr_classify(1290), DB_READ_ONLY);
	cr_assert_eq(dberr_classify(2002), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(2005), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(2013), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(1927), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(1064), DB_ERROR);
}

Test(outcome, tls_refusals_are_untrusted_network_failures_are_not)
{
	cr_assert_eq(dberr_classify_tls(2026, "TLS/SSL error: SSL is required, but the server does not support it"),
		     DB_UNTRUSTED);
	cr_assert_eq(dberr_classify_tls(2026, "TLS/SSL error: self-signed certificate in certificate chain"),
		     DB_UNTRUSTED);
	cr_assert_eq(dberr_classify_tls(2026, "TLS/SSL error: Validation of SSL server certificate failed"),
		     DB_UNTRUSTED);
	cr_assert_eq(dberr_classify_tls(2026, "TLS/SSL error: unable to get local issuer certificate"), DB_UNTRUSTED);
	/* Oracle's libmysqlclient words the first one so (tls/required_...
	 * on a build against it exited 69, as for an outage, not 77). */
	cr_assert_eq(
	    dberr_classify_tls(2026, "SSL connection error: SSL is required but the server doesn't support it"),
	    DB_UNTRUSTED);
	/* A reset during the handshake: retry, as any lost connection. */
	cr_assert_eq(dberr_classify_tls(2026, "TLS/SSL error: unexpected eof while reading"), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify_tls(2013, "Lost connection to server at 'handshake'"), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify_tls(1045, "Access denied"), DB_DENIED);
	cr_assert_str_eq(dberr_name(DB_UNTRUSTED), "server not verified");
}

Test(outcome, tls_refusals_are_told_in_the_same_words_on_both_libraries)
{
	/* Connector/C's and libmysqlclient's wordings of each. */
	cr_assert_str_eq(dberr_tls_reason(2026, "TLS/SSL error: SSL is required, but the server does not support it"),
			 "the server offers no TLS");
	cr_assert_str_eq(
	    dberr_tls_reason(2026, "SSL connection error: SSL is required but the server doesn't support it"),
	    "the server offers no TLS");
	cr_assert_str_eq(dberr_tls_reason(2026, "TLS/SSL error: unable to get local issuer certificate"),
			 "its TLS certificate failed verification");
	cr_assert_str_eq(
	    dberr_tls_reason(2026, "SSL connection error: error:0A000086:SSL routines::certificate verify failed"),
	    "its TLS certificate failed verification");
}

Test(outcome, galera_errors_never_count_as_success)
{
	/* A node cut off from the primary component: go elsewhere. */
	cr_assert_eq(dberr_classify(1047), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(1180), DB_UNAVAILABLE);
	/* A certification failure: for an acquire someone else won, for a
	 * renew a failed attempt; never "acquired" or "renewed". */
	cr_assert_eq(lease_outcome_of(dberr_classify(1213), 1, 1), LEASE_BUSY);
	cr_assert_eq(lease_outcome_of(dberr_classify(1213), 1, 0), LEASE_ERROR);
	cr_assert_eq(lease_outcome_of(dberr_classify(1047), 1, 1), LEASE_ERROR);
	cr_assert_eq(lease_outcome_of(dberr_classify(1180), 1, 0), LEASE_ERROR);
}

Test(outcome, group_replication_conflicts_are_busy_and_unready_members_are_elsewhere)
{
	/* Certification failed the COMMIT, or the applier aborted it for a
	 * transaction certified first: someone else's write won. */
	cr_assert_eq(dberr_classify(3101), DB_CONFLICT);
	cr_assert_eq(dberr_classify_msg(1180, "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT"),
		     DB_CONFLICT);
	cr_assert_eq(dberr_classify_msg(1180, "Got error 149 \"Lock deadlock; Retry transaction\" during COMMIT"),
		     DB_CONFLICT);
	cr_assert_eq(lease_outcome_of(dberr_classify_msg(3101, "Plugin instructed the server to rollback"), 1, 1),
		     LEASE_BUSY);
	/* Any other failed COMMIT (a Galera node cut off) stays the node's. */
	cr_assert_eq(dberr_classify_msg(1180, "Got error 6 \"No such device or address\" during COMMIT"),
		     DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify_msg(1180, NULL), DB_UNAVAILABLE);
	/* A member that cannot commit now, or one in offline_mode. */
	cr_assert_eq(dberr_classify(3100), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(3799), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(6400), DB_UNAVAILABLE);
	cr_assert_eq(dberr_classify(3032), DB_UNAVAILABLE);
}

Test(outcome, table_names_are_identifiers)
{
	char err[256];

	cr_assert_eq(lease_table_validate("leaderrun_lease", err, sizeof(err)), 0);
	cr_assert_eq(lease_table_validate("ops.leaderrun_lease", err, sizeof(err)), 0);
	cr_assert_eq(lease_table_validate("t$1", err, sizeof(err)), 0);
	cr_assert_eq(lease_table_validate("`x`", err, sizeof(err)), -1);
	cr_assert_eq(lease_table_validate("a.b.c", err, sizeof(err)), -1);
	cr_assert_eq(lease_table_validate("a.", err, sizeof(err)), -1);
	cr_assert_eq(lease_table_validate(".a", err, sizeof(err)), -1);
	cr_assert_eq(lease_table_validate("123", err, sizeof(err)), -1);
	cr_assert_eq(lease_table_validate("", err, sizeof(err)), -1);
}

Test(outcome, init_ddl_is_the_shipped_schema)
{
	char path[4096], file[8192], *p;
	struct lease_sql sql;
	FILE *f;
	size_t n;
	const char *dir = getenv("LEADERRUN_SQL_DIR");

	cr_assert_not_null(dir, "LEADERRUN_SQL_DIR is set by meson");
	snprintf(path, sizeof(path), "%s/leaderrun.sql", dir);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(file, 1, sizeof(file) - 1, f);
	fclose(f);
	file[n] = '\0';
	p = strstr(file, "CREATE TABLE");
	cr_assert_not_null(p);
	*strchr(p, ';') = '\0'; /* the lease table: the first statement */
	lease_sql_render(&sql, "leaderrun_lease");
	cr_assert_str_eq(sql.create, p, "sql/leaderrun.sql and lease.c disagree");
}

/* A rendered statement, and what its line in stmts.def declares. */
struct declared {
	const char *id, *text;
	size_t cap;
	unsigned params, columns;
};

/* Every statement of stmts.def, as rendered into SQL and H, in OUT (room
 * for STMT_COUNT); returns how many. */
static size_t declared_all(const struct lease_sql *sql, const struct history_sql *h, struct declared *out)
{
	size_t n = 0;

#define LEASE_STMT(id, member, since, np, nc, ...)                                                                     \
	out[n++] = (struct declared){#id, sql->member, sizeof(sql->member), np, nc};
#define HISTORY_STMT(id, member, np, nc, ...) out[n++] = (struct declared){#id, h->member, sizeof(h->member), np, nc};
#include "lease/stmts.def"
#undef HISTORY_STMT
#undef LEASE_STMT
	return n;
}

/* Every statement fits its buffer with the longest table names allowed:
 * a truncated statement would be a different statement. */
Test(outcome, statements_fit_with_the_longest_table_name)
{
	char table[LEASE_TABLE_MAX + 1], hist[LEASE_TABLE_MAX + 1];
	struct lease_sql sql;
	struct history_sql h;
	struct declared all[STMT_COUNT];
	size_t n;

	memset(table, 'a', 64);
	table[64] = '.';
	memset(table + 65, 'b', 64);
	table[129] = '\0';
	cr_assert_eq(lease_table_validate(table, NULL, 0), 0);
	/* The longest history name: 56 characters and "_history". */
	snprintf(hist, sizeof(hist), "%.65s%.56s_history", table, table + 65);
	cr_assert_eq(lease_table_validate(hist, NULL, 0), 0);
	lease_sql_render(&sql, table);
	/* With the candidates' claims at their longest (choose.h). */
	choose_render(&sql, "leaderrun-standby:0123456789abcdef", -1000000, INT64_MAX / 2);
	cr_assert(sql.choose_on, "the claims do not fit with the longest names");
	history_sql_render(&h, hist, table);
	n = declared_all(&sql, &h, all);
	cr_assert_eq(n, STMT_COUNT);
	for (size_t i = 0; i < n; i++) {
		cr_assert_lt(strlen(all[i].text), all[i].cap - 1, "statement %s fills its buffer (%zu bytes)",
			     all[i].id, all[i].cap);
		cr_assert_lt(strlen(all[i].text), DB_MAX_SQL, "statement %s is longer than db_exec sends", all[i].id);
	}
}

/* How many '?' TEXT has outside its string literals. */
static unsigned count_params(const char *text)
{
	unsigned n = 0;
	bool quoted = false;

	for (const char *p = text; *p; p++)
		if (*p == '\'')
			quoted = !quoted;
		else if (*p == '?' && !quoted)
			n++;
	return n;
}

/* How many result columns a SELECT names: the commas between SELECT and
 * its FROM (or its end) outside parentheses and literals, plus one. */
static unsigned count_columns(const char *text)
{
	unsigned n = 1, depth = 0;
	bool quoted = false;

	if (strncmp(text, "SELECT ", 7) != 0)
		return 0;
	for (const char *p = text + 7; *p; p++) {
		if (*p == '\'')
			quoted = !quoted;
		if (quoted)
			continue;
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (depth == 0 && *p == ',')
			n++;
		else if (depth == 0 && strncmp(p, " FROM ", 6) == 0)
			break;
	}
	return n;
}

/* The counts in stmts.def are what the text holds (at the newest schema):
 * they size what db_exec binds. */
Test(outcome, statements_have_the_parameters_and_columns_declared)
{
	struct lease_sql sql;
	struct history_sql h;
	struct declared all[STMT_COUNT];
	size_t n;

	lease_sql_render(&sql, "leaderrun_lease");
	/* The claims add no parameter and no column (choose.h). */
	choose_render(&sql, "leaderrun-standby:0123456789abcdef", 5, 2000000);
	cr_assert(sql.choose_on);
	history_sql_render(&h, "leaderrun_history", "leaderrun_lease");
	n = declared_all(&sql, &h, all);
	for (size_t i = 0; i < n; i++) {
		cr_assert_neq(all[i].text[0], '\0', "statement %s is empty at the newest schema", all[i].id);
		cr_assert_eq(count_params(all[i].text), all[i].params, "statement %s: %u parameters, declared %u",
			     all[i].id, count_params(all[i].text), all[i].params);
		cr_assert_eq(count_columns(all[i].text), all[i].columns, "statement %s: %u columns, declared %u",
			     all[i].id, count_columns(all[i].text), all[i].columns);
	}
}

Test(outcome, once_per_slot_is_the_nearest_multiple_of_the_period)
{
	const int64_t m = 60 * INT64_C(1000000);

	/* 02:05 with 5m: 02:02:30 up to 02:07:29.999999 land there. */
	int64_t slot = (int64_t)1795917900 * 1000000; /* 2026-11-29 02:05:00 UTC */
	cr_assert_eq(lease_slot_of(slot, 5 * m), slot);
	cr_assert_eq(lease_slot_of(slot - 150 * 1000000 + 1, 5 * m), slot);
	cr_assert_eq(lease_slot_of(slot - 150 * 1000000, 5 * m), slot, "a tie goes to the later slot");
	cr_assert_eq(lease_slot_of(slot + 150 * 1000000 - 1, 5 * m), slot);
	cr_assert_eq(lease_slot_of(slot + 150 * 1000000, 5 * m), slot + 5 * m);
	cr_assert_eq(lease_slot_of(slot - 151 * 1000000, 5 * m), slot - 5 * m);
}
