#include <criterion/criterion.h>
#include <string.h>

#include "db/sqltext.h"

static const char *render(const char *sql, const struct db_value *p, unsigned n)
{
	static char out[512];
	size_t used = 0;

	return sqltext_render(out, sizeof(out), &used, &(struct db_call){.sql = sql, .params = p, .nparams = n}) ? out
														 : NULL;
}

Test(sqltext, strings_go_as_hexadecimal_literals_that_no_byte_can_leave)
{
	struct db_value p[] = {{.type = DB_STR, .str = "a'b\\c\"`;--"}};

	cr_assert_str_eq(render("x=?", p, 1), "x=_utf8mb4 X'6127625C6322603B2D2D'");
}

Test(sqltext, numbers_null_and_the_empty_string)
{
	struct db_value p[] = {{.type = DB_I64, .i64 = -42},
			       {.type = DB_U64, .u64 = UINT64_MAX},
			       {.type = DB_STR, .str = NULL},
			       {.type = DB_I64, .i64 = 7, .is_null = true},
			       {.type = DB_STR, .str = ""}};

	cr_assert_str_eq(render("?,?,?,?,?", p, 5), "-42,18446744073709551615,NULL,NULL,_utf8mb4''");
}

Test(sqltext, a_question_mark_in_quotes_or_comments_is_text)
{
	struct db_value p[] = {{.type = DB_I64, .i64 = 1}};

	cr_assert_str_eq(render("'?' \"?\" `?` /* ? */ ?", p, 1), "'?' \"?\" `?` /* ? */ 1");
	cr_assert_str_eq(render("'it''s ?' ?", p, 1), "'it''s ?' 1");
	cr_assert_str_eq(render("-- ?\n?", p, 1), "-- ?\n1");
}

Test(sqltext, a_count_of_placeholders_other_than_the_values_is_refused)
{
	struct db_value p[] = {{.type = DB_I64, .i64 = 1}, {.type = DB_I64, .i64 = 2}};

	cr_assert_null(render("? ?", p, 1));
	cr_assert_null(render("?", p, 2));
	cr_assert_null(render("'?", p, 1), "an unterminated quote swallows the rest");
}

Test(sqltext, what_does_not_fit_is_refused_and_the_text_stays_terminated)
{
	char out[8];
	size_t used = 0;
	struct db_value p[] = {{.type = DB_STR, .str = "abcdef"}};

	cr_assert_not(
	    sqltext_render(out, sizeof(out), &used, &(struct db_call){.sql = "x=?", .params = p, .nparams = 1}));
	cr_assert_lt(strlen(out), sizeof(out));
	cr_assert_not(sqltext_append(out, sizeof(out), &used, "more"));
}
