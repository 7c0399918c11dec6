/*
 * test_buf.c - the text buffer: printf, growth, indentation, take.
 */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

START_TEST(printf_and_puts)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s = %d;", "x", 42);
	tc_buf_puts(&b, " // ok");
	ck_assert_str_eq(b.data, "x = 42; // ok");
	ck_assert_uint_eq(b.len, strlen(b.data));
	tc_buf_free(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

START_TEST(grows_past_any_size)
{
	TcBuf b;
	tc_buf_init(&b);
	for (int i = 0; i < 100000; i++)
		tc_buf_puts(&b, "ab");
	ck_assert_uint_eq(b.len, 200000);
	ck_assert_uint_eq(strlen(b.data), 200000);
	ck_assert_uint_ge(b.cap, b.len + 1);
	/* One printf longer than its stack buffer. */
	char big[5000];
	memset(big, 'q', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	tc_buf_printf(&b, "[%s]", big);
	ck_assert_uint_eq(b.len, 200000 + sizeof big + 1);
	ck_assert_int_eq(b.data[200000], '[');
	ck_assert_int_eq(b.data[b.len - 1], ']');
	ck_assert_int_eq(b.data[b.len - 2], 'q');
	tc_buf_free(&b);
}
END_TEST

START_TEST(indents_each_line_start)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_puts(&b, "{\n");
	b.indent++;
	tc_buf_puts(&b, "a;\nb;\n\n");
	tc_buf_printf(&b, "c%s", "");
	tc_buf_printf(&b, " = %d;\n", 1);
	b.indent++;
	tc_buf_puts(&b, "d;\n");
	b.indent -= 2;
	tc_buf_puts(&b, "}\n");
	/* Blank lines stay empty; text continuing a line is not indented. */
	ck_assert_str_eq(b.data, "{\n\ta;\n\tb;\n\n\tc = 1;\n\t\td;\n}\n");
	tc_buf_free(&b);
}
END_TEST

START_TEST(take_hands_over_the_text)
{
	TcBuf b;
	tc_buf_init(&b);
	char *empty = tc_buf_take(&b);
	ck_assert_str_eq(empty, "");
	free(empty);
	tc_buf_puts(&b, "kernel");
	char *s = tc_buf_take(&b);
	ck_assert_str_eq(s, "kernel");
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	tc_buf_puts(&b, "again");
	ck_assert_str_eq(b.data, "again");
	free(s);
	tc_buf_free(&b);
}
END_TEST

Suite *
unit_suite_buf(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");
	tcase_add_test(tc, printf_and_puts);
	tcase_add_test(tc, grows_past_any_size);
	tcase_add_test(tc, indents_each_line_start);
	tcase_add_test(tc, take_hands_over_the_text);
	suite_add_tcase(s, tc);
	return s;
}
