/*
 * test_cache.c - sha256.c against the FIPS 180-4 / NIST example vectors,
 * and the disk cache (cache.c through tilec_compile): processes racing on
 * one key all succeed and leave one complete entry; truncated objects,
 * altered objects and damaged records are detected and rebuilt.
 */
#include "unit.h"
#include "runtime_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void
hex_of(const void *data, size_t n, char hex[65])
{
	uint8_t d[32];
	tilec_rt_sha256(data, n, d);
	tilec_rt_sha256_hex(d, hex);
}

START_TEST(sha256_standard_vectors)
{
	static const struct {
		const char *msg;
		const char *digest;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
		  "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char hex[65];
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		hex_of(v[i].msg, strlen(v[i].msg), hex);
		ck_assert_str_eq(hex, v[i].digest);
	}

	/* One million 'a', fed in uneven pieces. */
	static char a[1000000];
	memset(a, 'a', sizeof a);
	TilecSha256 s;
	tilec_rt_sha256_init(&s);
	size_t done = 0, step = 1;
	while (done < sizeof a) {
		size_t n = step < sizeof a - done ? step : sizeof a - done;
		tilec_rt_sha256_update(&s, a + done, n);
		done += n;
		step = step * 3 % 1000 + 1;
	}
	uint8_t d[32];
	tilec_rt_sha256_final(&s, d);
	tilec_rt_sha256_hex(d, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
			      "f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(sha256_every_length_around_the_padding)
{
	/* Lengths 0 .. 200 cross the 55/56/64-byte padding boundaries; byte
	 * at a time must equal one shot. */
	uint8_t msg[200];
	for (int i = 0; i < 200; i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	for (size_t n = 0; n <= 200; n++) {
		char one[65], bytes[65];
		hex_of(msg, n, one);
		TilecSha256 s;
		tilec_rt_sha256_init(&s);
		for (size_t i = 0; i < n; i++)
			tilec_rt_sha256_update(&s, msg + i, 1);
		uint8_t d[32];
		tilec_rt_sha256_final(&s, d);
		tilec_rt_sha256_hex(d, bytes);
		ck_assert_str_eq(one, bytes);
	}
}
END_TEST

/* --- The cache ---------------------------------------------------------------- */

static const char src[] = "void tilec_entry_seven(void **args)\n"
			  "{ **(int **)args[0] = 7; }\n";

static char dir[4096];

static void
make_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/tilec-cache-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ck_assert(mkdtemp(dir));
}

static tilec_context *
context(void)
{
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_OPENMP, 0, NULL);
	ck_assert(ctx);
	ck_assert_int_eq(tilec_set_cache_dir(ctx, dir), TILEC_OK);
	return ctx;
}

/* Compile src, run it, return how the module was made. */
static tilec_module_info
compile_and_run(tilec_context *ctx)
{
	tilec_module *m = tilec_compile(ctx, src, sizeof src - 1, NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "seven");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	int out = 0;
	void *p = &out;
	void *args[] = { &p };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert_int_eq(out, 7);
	tilec_module_info info;
	tilec_module_get_info(m, &info);
	tilec_module_free(m);
	return info;
}

/* Names in dir, by suffix. */
static int
count(const char *suffix)
{
	DIR *d = opendir(dir);
	ck_assert(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), s = strlen(suffix);
		if (e->d_name[0] != '.' && l >= s &&
		    strcmp(e->d_name + l - s, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

START_TEST(lookup_of_a_missing_key_is_a_miss)
{
	make_dir();
	char path[4096];
	ck_assert_int_eq(tilec_rt_cache_lookup(dir, "00", ".so", path,
					       sizeof path),
			 TILEC_CACHE_MISS);
	ck_assert(tilec_rt_cache_prepare(dir));
	ck_assert(!tilec_rt_cache_prepare(""));
	tilec_rt_remove_tree(dir);
}
END_TEST

START_TEST(racing_processes_all_succeed)
{
	enum { NPROC = 4 };
	make_dir();
	int go[2];
	ck_assert(pipe(go) == 0);
	pid_t pids[NPROC];
	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ck_assert(pids[i] >= 0);
		if (pids[i] == 0) {
			/* Wait for the start signal, then compile the same
			 * key at the same moment as the others. */
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(3);
			tilec_context *ctx = tilec_context_new(
				TILEC_BACKEND_OPENMP, 0, NULL);
			if (!ctx || tilec_set_cache_dir(ctx, dir) != TILEC_OK)
				_exit(4);
			tilec_module *m = tilec_compile(ctx, src, sizeof src - 1,
							NULL);
			if (!m)
				_exit(5);
			tilec_kernel *k = tilec_module_kernel(m, "seven");
			int out = 0;
			void *p = &out;
			void *args[] = { &p };
			if (!k || tilec_launch(k, args, NULL) != TILEC_OK ||
			    out != 7)
				_exit(6);
			tilec_module_free(m);
			tilec_context_free(ctx);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]); /* every child's read returns now */
	for (int i = 0; i < NPROC; i++) {
		int status;
		ck_assert(waitpid(pids[i], &status, 0) == pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "child %d: status %d", i, status);
	}
	/* One record, its object complete, no leftovers; a later compile
	 * hits. */
	ck_assert_int_eq(count(".entry"), 1);
	tilec_context *ctx = context();
	tilec_module_info info = compile_and_run(ctx);
	ck_assert(info.from_cache);
	tilec_context_free(ctx);
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		ck_assert_msg(strncmp(e->d_name, "tmp-", 4) != 0,
			      "left behind: %s", e->d_name);
	closedir(d);
	tilec_rt_remove_tree(dir);
}
END_TEST

/* Damage the cached object (or its record) with `how`, then compile
 * again: the damage is detected, the entry rebuilt, the module works. */
static void
damage_case(int how)
{
	make_dir();
	tilec_context *ctx = context();
	tilec_module_info first = compile_and_run(ctx);
	ck_assert(!first.from_cache);
	char rec[4200];
	snprintf(rec, sizeof rec, "%s/%s.entry", dir, first.key);
	FILE *f;
	switch (how) {
	case 0: /* truncate the object */
		ck_assert(truncate(first.path, 100) == 0);
		break;
	case 1: /* flip one byte of the object, same size */
		f = fopen(first.path, "r+b");
		ck_assert(f);
		fseek(f, 600, SEEK_SET);
		int c = fgetc(f);
		fseek(f, 600, SEEK_SET);
		fputc(c ^ 0x40, f);
		fclose(f);
		break;
	case 2: /* garbage record */
		f = fopen(rec, "wb");
		fputs("not a record\n", f);
		fclose(f);
		break;
	case 3: /* the object is gone */
		ck_assert(unlink(first.path) == 0);
		break;
	}
	tilec_module_info again = compile_and_run(ctx);
	ck_assert_msg(!again.from_cache && again.rebuilt_corrupt,
		      "damage %d not detected", how);
	tilec_module_info third = compile_and_run(ctx);
	ck_assert(third.from_cache && !third.rebuilt_corrupt);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}

START_TEST(damaged_entries_are_rebuilt)
{
	for (int how = 0; how < 4; how++)
		damage_case(how);
}
END_TEST

START_TEST(an_unusable_cache_dir_falls_back_to_no_cache)
{
	make_dir();
	char file[4200];
	snprintf(file, sizeof file, "%s/plain-file", dir);
	FILE *f = fopen(file, "wb");
	fclose(f);
	tilec_context *ctx = context();
	ck_assert_int_eq(tilec_set_cache_dir(ctx, file), TILEC_OK);
	tilec_module_info info = compile_and_run(ctx);
	ck_assert(!info.from_cache);
	ck_assert_str_eq(info.path, "");
	ck_assert_int_eq(tilec_set_cache_dir(ctx, ""), TILEC_OK);
	info = compile_and_run(ctx);
	ck_assert(!info.from_cache);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

Suite *
unit_suite_cache(void)
{
	Suite *s = suite_create("cache");
	TCase *h = tcase_create("sha256");
	tcase_add_test(h, sha256_standard_vectors);
	tcase_add_test(h, sha256_every_length_around_the_padding);
	suite_add_tcase(s, h);
	TCase *c = tcase_create("disk");
	tcase_set_timeout(c, 120);
	tcase_add_test(c, lookup_of_a_missing_key_is_a_miss);
	tcase_add_test(c, racing_processes_all_succeed);
	tcase_add_test(c, damaged_entries_are_rebuilt);
	tcase_add_test(c, an_unusable_cache_dir_falls_back_to_no_cache);
	suite_add_tcase(s, c);
	return s;
}
