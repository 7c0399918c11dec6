/*
 * test_diag.c - diagnostics: `file:line:col: severity: message`, the
 * source line, a caret that keeps the line's tabs, counting.
 */
#include "unit.h"

#include <string.h>

static const char source[] =
	"int x;\n"
	"\tfoo(bar);\n"
	"\t\t  y = 1;\n"
	"last line without newline";

static void
init(TcDiags *d)
{
	tc_diags_init(d, "t.c", source, strlen(source));
}

START_TEST(error_with_line_and_caret)
{
	TcDiags d;
	init(&d);
	tc_diag(&d, TC_ERROR, (TcLoc){ "t.c", 1, 5 }, "unknown '%s'", "x");
	ck_assert_str_eq(d.text.data,
			 "t.c:1:5: error: unknown 'x'\n"
			 "int x;\n"
			 "    ^\n");
	ck_assert_int_eq(d.errors, 1);
	tc_diags_free(&d);
}
END_TEST

START_TEST(caret_keeps_tabs)
{
	TcDiags d;
	init(&d);
	tc_diag(&d, TC_ERROR, (TcLoc){ "t.c", 2, 6 }, "bad");
	tc_diag(&d, TC_ERROR, (TcLoc){ "t.c", 3, 5 }, "worse");
	ck_assert_str_eq(d.text.data,
			 "t.c:2:6: error: bad\n"
			 "\tfoo(bar);\n"
			 "\t    ^\n"
			 "t.c:3:5: error: worse\n"
			 "\t\t  y = 1;\n"
			 "\t\t  ^\n");
	ck_assert_int_eq(d.errors, 2);
	tc_diags_free(&d);
}
END_TEST

START_TEST(last_line_and_column_one)
{
	TcDiags d;
	init(&d);
	tc_diag(&d, TC_WARNING, (TcLoc){ "t.c", 4, 1 }, "w");
	ck_assert_str_eq(d.text.data,
			 "t.c:4:1: warning: w\n"
			 "last line without newline\n"
			 "^\n");
	ck_assert_int_eq(d.errors, 0);
	ck_assert_int_eq(d.warnings, 1);
	tc_diags_free(&d);
}
END_TEST

START_TEST(no_caret_without_a_line)
{
	TcDiags d;
	init(&d);
	tc_diag(&d, TC_NOTE, (TcLoc){ "t.c", 0, 0 }, "about the file");
	tc_diag(&d, TC_ERROR, (TcLoc){ 0 }, "no location");
	tc_diag(&d, TC_ERROR, (TcLoc){ "other.h", 2, 3 }, "elsewhere");
	tc_diag(&d, TC_ERROR, (TcLoc){ "t.c", 99, 1 }, "past the end");
	ck_assert_str_eq(d.text.data,
			 "t.c: note: about the file\n"
			 "tilec: error: no location\n"
			 "other.h:2:3: error: elsewhere\n"
			 "t.c:99:1: error: past the end\n");
	ck_assert_int_eq(d.errors, 3);
	ck_assert_int_eq(d.warnings, 0);
	tc_diags_free(&d);
}
END_TEST

START_TEST(column_past_the_line_end)
{
	TcDiags d;
	init(&d);
	tc_diag(&d, TC_ERROR, (TcLoc){ "t.c", 1, 40 }, "far");
	ck_assert_str_eq(d.text.data,
			 "t.c:1:40: error: far\n"
			 "int x;\n"
			 "      ^\n");
	tc_diags_free(&d);
}
END_TEST

Suite *
unit_suite_diag(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("diag");
	tcase_add_test(tc, error_with_line_and_caret);
	tcase_add_test(tc, caret_keeps_tabs);
	tcase_add_test(tc, last_line_and_column_one);
	tcase_add_test(tc, no_caret_without_a_line);
	tcase_add_test(tc, column_past_the_line_end);
	suite_add_tcase(s, tc);
	return s;
}
