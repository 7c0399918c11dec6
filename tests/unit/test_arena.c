/*
 * test_arena.c - the arena (zeroed, aligned, large blocks, strings) and
 * pointer vectors.
 */
#include "unit.h"

#include <stdint.h>
#include <string.h>

START_TEST(alloc_is_zeroed_and_aligned)
{
	TcArena *a = tc_arena_new();
	for (size_t n = 1; n < 300; n += 7) {
		unsigned char *p = tc_alloc(a, n);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(p[i], 0);
		memset(p, 0xab, n);
	}
	tc_arena_free(a);
}
END_TEST

START_TEST(large_allocations_get_their_own_chunk)
{
	TcArena *a = tc_arena_new();
	char *small = tc_alloc(a, 10);
	size_t big = 1 << 20;
	unsigned char *p = tc_alloc(a, big);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p[0], 0);
	ck_assert_uint_eq(p[big - 1], 0);
	memset(p, 1, big);
	/* Earlier allocations survive the new chunk. */
	strcpy(small, "intact");
	char *after = tc_alloc(a, 10);
	ck_assert_str_eq(small, "intact");
	ck_assert_ptr_ne(after, small);
	tc_arena_free(a);
}
END_TEST

START_TEST(strings)
{
	TcArena *a = tc_arena_new();
	ck_assert_str_eq(tc_strdup(a, "tile"), "tile");
	ck_assert_str_eq(tc_strdup(a, ""), "");
	ck_assert_str_eq(tc_strndup(a, "tilec", 3), "til");
	ck_assert_str_eq(tc_fmt(a, "%s_%d", "BLOCK", 128), "BLOCK_128");
	char longer[3000];
	memset(longer, 'x', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	ck_assert_str_eq(tc_fmt(a, "%s", longer), longer);
	tc_arena_free(a);
}
END_TEST

START_TEST(free_null)
{
	tc_arena_free(NULL);
}
END_TEST

START_TEST(vec_keeps_order_while_growing)
{
	TcArena *a = tc_arena_new();
	TcVec v = { 0 };
	static int items[1000];
	for (int i = 0; i < 1000; i++)
		tc_vec_push(a, &v, &items[i]);
	ck_assert_int_eq(v.len, 1000);
	ck_assert_int_ge(v.cap, 1000);
	for (int i = 0; i < 1000; i++)
		ck_assert_ptr_eq(v.items[i], &items[i]);
	tc_arena_free(a);
}
END_TEST

Suite *
unit_suite_arena(void)
{
	Suite *s = suite_create("arena");
	TCase *tc = tcase_create("arena");
	tcase_add_test(tc, alloc_is_zeroed_and_aligned);
	tcase_add_test(tc, large_allocations_get_their_own_chunk);
	tcase_add_test(tc, strings);
	tcase_add_test(tc, free_null);
	tcase_add_test(tc, vec_keeps_order_while_growing);
	suite_add_tcase(s, tc);
	return s;
}
