/* The pure halves of the observability work: the shipped SQL against the
 * statements --init runs, the metrics file's path and text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/history_sql.h"
#include "lease/lease.h"
#include "report/escape.h"
#include "report/json.h"
#include "report/metrics.h"

/* The statement in sql/FILE: from "CREATE TABLE" or "ALTER TABLE" (the
 * AT-th such statement) to its ';'. */
static const char *shipped(const char *file, const char *start, int at)
{
	static char buf[32768];
	char path[4096];
	const char *dir = getenv("LEADERRUN_SQL_DIR");
	FILE *f;
	size_t n;
	char *p = buf;

	cr_assert_not_null(dir, "LEADERRUN_SQL_DIR is set by meson");
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (int i = 0; i <= at; i++) {
		p = strstr(i ? p + 1 : p, start);
		cr_assert_not_null(p, "%s has no statement %d starting %s", file, at, start);
	}
	*strchr(p, ';') = '\0';
	return p;
}

Test(observe, upgrade_scripts_are_what_init_runs)
{
	struct lease_sql sql;
	struct history_sql h;

	lease_sql_render(&sql, "leaderrun_lease");
	history_sql_render(&h, "leaderrun_history", "leaderrun_lease");
	cr_assert_str_eq(shipped("upgrade-1-to-2.sql", "ALTER TABLE", 0), sql.upgrade_1_2);
	cr_assert_str_eq(shipped("upgrade-2-to-3.sql", "ALTER TABLE", 0), sql.upgrade_2_3);
	cr_assert_str_eq(shipped("upgrade-4-to-5.sql", "ALTER TABLE", 0), sql.upgrade_4_5);
	cr_assert_str_eq(shipped("upgrade-4-to-5.sql", "ALTER TABLE", 1), h.upgrade);
	/* leaderrun.sql creates both tables, schema 5. */
	cr_assert_str_eq(shipped("leaderrun.sql", "CREATE TABLE", 0), sql.create);
	cr_assert_str_eq(shipped("leaderrun.sql", "CREATE TABLE", 1), h.create);
}

/* The procedure NAME's CREATE in sql/FILE, to its "END;;" (its body has
 * semicolons of its own: the file sets DELIMITER ;;). */
static const char *shipped_procedure(const char *file, const char *name)
{
	char start[128];
	char *p;

	snprintf(start, sizeof(start), "CREATE PROCEDURE `%s`(", name);
	p = (char *)shipped(file, start, 0);
	p[strlen(p)] = ';'; /* shipped cut it at the body's first ';' */
	*strstr(p, "END;;") = '\0';
	strcat(p, "END");
	return p;
}

/* Schema 7: the fence, in the file of a new database and in the upgrade
 * from schema 6, as --init makes it. */
Test(observe, the_fence_in_sql_is_what_init_makes)
{
	const char *files[] = {"leaderrun.sql", "upgrade-6-to-7.sql"};
	struct lease_sql sql;

	lease_sql_render(&sql, "leaderrun_lease");
	cr_assert_str_eq(shipped("leaderrun.sql", "CREATE TABLE IF NOT EXISTS `leaderrun_fence`", 0), sql.fence_create);
	cr_assert_str_eq(shipped("upgrade-6-to-7.sql", "ALTER TABLE", 0), sql.fence_upgrade);
	for (int k = 0; k < 2; k++) {
		cr_assert_str_eq(shipped_procedure(files[k], "leaderrun_fence_slot"), sql.fence_proc_slot);
		cr_assert_str_eq(shipped_procedure(files[k], "leaderrun_fence"), sql.fence_proc);
		cr_assert_str_eq(shipped_procedure(files[k], "leaderrun_fence_end"), sql.fence_proc_end);
		cr_assert_str_eq(shipped_procedure(files[k], "leaderrun_fence_move"), sql.fence_proc_move);
	}
}

/* The fence that leaderrun_fence runs is its own body: it calls no
 * routine by name, whatever stands under another name runs with nobody's
 * rights. */
Test(observe, the_fence_calls_no_other_routine)
{
	struct lease_sql sql;

	lease_sql_render(&sql, "leaderrun_lease");
	cr_assert_null(strstr(sql.fence_proc, "CALL"), "%s", sql.fence_proc);
	cr_assert_null(strstr(sql.fence_proc_slot, "CALL"), "%s", sql.fence_proc_slot);
	cr_assert_null(strstr(sql.fence_proc_end, "CALL"), "%s", sql.fence_proc_end);
	cr_assert_null(strstr(sql.fence_proc_move, "CALL"), "%s", sql.fence_proc_move);
}

/* Another --table's fence is named for it, in its database. */
Test(observe, the_fence_is_named_for_its_lease_table)
{
	struct lease_sql sql;

	lease_sql_render(&sql, "ops.jobs_lease");
	cr_assert_str_eq(sql.fence, "ops.jobs_fence");
	cr_assert_str_eq(sql.fence_end, "CALL `ops`.`jobs_fence_end`(?, ?, ?)");
	cr_assert_str_eq(sql.fence_move, "CALL `ops`.`jobs_fence_move`(?, ?, ?, ?)");
	cr_assert(strstr(sql.fence_proc_move, "FROM `ops`.`jobs_lease`"), "%s", sql.fence_proc_move);
	cr_assert(strstr(sql.fence_objects, "ROUTINE_SCHEMA='ops'"), "%s", sql.fence_objects);
	lease_sql_render(&sql, "jobs");
	cr_assert_str_eq(sql.fence, "jobs_fence");
	cr_assert(strstr(sql.fence_objects,
			 "ROUTINE_NAME IN ('jobs_fence', 'jobs_fence_slot', 'jobs_fence_end', 'jobs_fence_move')"),
		  "%s", sql.fence_objects);
}

Test(observe, metrics_path_puts_the_lease_in)
{
	char out[256];

	cr_assert_eq(metrics_path("/var/lib/ne/lr-%l.prom", "nightly backup/x", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/var/lib/ne/lr-nightly_backup_x.prom");
	cr_assert_eq(metrics_path("/a/100%%-%l", "j", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/a/100%-j");
	cr_assert_eq(metrics_path("/a/%p", "j", out, sizeof(out)), -1);
	cr_assert_eq(metrics_path("/a/%", "j", out, sizeof(out)), -1);
	cr_assert_eq(metrics_path("/a/%l", "j", out, 4), -1);
}

/* promtool check metrics (Debian: prometheus; scripts/install-deps test). */
static void promtool_accepts(const char *text)
{
	char cmd[] = "promtool check metrics > /tmp/lr-promtool.$$ 2>&1; rc=$?; cat /tmp/lr-promtool.$$ >&2; "
		     "rm -f /tmp/lr-promtool.$$; exit $rc";
	FILE *p;

	cr_assert_eq(system("command -v promtool > /dev/null"), 0,
		     "promtool is missing: scripts/install-deps test installs it (package prometheus)");
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	fputs(text, p);
	cr_assert_eq(pclose(p), 0, "promtool check metrics rejected:\n%s", text);
}

Test(observe, metrics_text_passes_promtool)
{
	struct metrics_state st = {.lease = "night\"ly\\job",
				   .held = true,
				   .term = 42,
				   .acquisitions = 3,
				   .timeouts = 1,
				   .renews = 2,
				   .renew_sum_s = 0.004,
				   .margin_s = 8.5,
				   .last_renew_time = 1.7e9,
				   .wait_s = 1.5,
				   .have_exit = true,
				   .last_exit = 137,
				   .command_start = 1.7e9};
	char buf[16384];

	for (int i = 0; i < METRICS_NBUCKETS; i++)
		st.bucket_le[i] = 0.005 * (i + 1);
	st.bucket_count[0] = 2;
	cr_assert_gt(metrics_render(&st, buf, sizeof(buf)), 0);
	cr_assert(strstr(buf, "leaderrun_process_holds_lease{lease=\"night\\\"ly\\\\job\"} 1\n"), "%s", buf);
	cr_assert(
	    strstr(buf, "leaderrun_lease_renew_duration_seconds_bucket{lease=\"night\\\"ly\\\\job\",le=\"+Inf\"} 2"),
	    "%s", buf);
	cr_assert(strstr(buf, "leaderrun_command_timeouts_total{lease=\"night\\\"ly\\\\job\"} 1\n"), "%s", buf);
	promtool_accepts(buf);
	cr_assert_eq(metrics_render(&st, buf, 100), -1, "a buffer too small is an error, not a cut file");
}

Test(observe, metric_families_have_one_name_help_and_type_each)
{
	/* node_exporter drops a family written with two HELPs or TYPEs, and a
	 * series two files both carry: one entry a name, in one table. */
	for (int i = 0; i < MF_COUNT; i++) {
		cr_assert_not_null(metrics_families[i].name, "family %d has no entry", i);
		cr_assert(metrics_families[i].help[0] && metrics_families[i].type[0], "%s", metrics_families[i].name);
		for (int j = 0; j < i; j++)
			cr_assert_str_neq(metrics_families[i].name, metrics_families[j].name);
	}
}

Test(observe, text_shows_control_characters_as_escapes)
{
	char buf[128];

	escape_text(buf, sizeof(buf), "a\x1b[2J\r\n\t\x7f\xc2\x9b\xff\xc3\xa9\\");
	cr_assert_str_eq(buf, "a\\x1b[2J\\r\\n\\t\\x7f\\xc2\\x9b\\xff\xc3\xa9\\");
	/* A short buffer ends at a whole escape. */
	escape_text(buf, 7, "ab\x1b\x1b");
	cr_assert_str_eq(buf, "ab\\x1b");
}

Test(observe, json_quote_of_a_short_buffer_still_closes_the_string)
{
	char buf[16];

	cr_assert_eq(json_quote(buf, sizeof(buf), "\x01\x01\x01"), 20);
	cr_assert_str_eq(buf, "\"\\u0001\\u0001\"");
	json_quote(buf, sizeof(buf), "\xc2\x85\xff\"");
	cr_assert_str_eq(buf, "\"\\u0085\\ufffd\"");
}

Test(observe, label_values_carry_no_control_character)
{
	char buf[64];

	metrics_label(buf, sizeof(buf), "a\"b\\c\nd\x1b");
	cr_assert_str_eq(buf, "a\\\"b\\\\c\\\\nd\\\\x1b");
}
