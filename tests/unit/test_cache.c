/*
 * test_cache.c - sha256.c against the FIPS 180-4 / NIST example vectors,
 * and the disk cache (cache.c through tilec_compile): processes racing on
 * one key all succeed, compile it once and leave one complete entry;
 * truncated objects, altered objects and damaged records are detected and
 * rebuilt; entries planted where another user could write (a directory
 * owned by someone else, a 0777 or 1777 one, a writable directory above
 * the cache) are refused and their code never runs; symbolic links and
 * FIFOs in the cache are refused without hanging; the key changes with
 * every word of the compiler command and its whole version output; a
 * compiler that exits 0 with a useless object poisons nothing.
 */
#include "unit.h"
#include "runtime_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	tilec_context *ctx = context();
	TilecCache c;
	ck_assert_int_eq(tilec_rt_cache_open(ctx, dir, &c), TILEC_OK);
	ck_assert_int_ge(c.fd, 0);
	char path[4096], why[512];
	ck_assert_int_eq(tilec_rt_cache_lookup(&c, "00", ".so", path,
					       sizeof path, why, sizeof why),
			 TILEC_CACHE_MISS);
	tilec_rt_cache_close(&c);
	ck_assert_int_eq(tilec_rt_cache_open(ctx, "", &c), TILEC_OK);
	ck_assert_int_eq(c.fd, -1);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

START_TEST(racing_processes_all_succeed)
{
	enum { NPROC = 6 };
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
			tilec_module_info info;
			tilec_module_get_info(m, &info);
			tilec_module_free(m);
			tilec_context_free(ctx);
			_exit(info.from_cache ? 10 : 0);
		}
	}
	close(go[0]);
	close(go[1]); /* every child's read returns now */
	int compiled = 0;
	for (int i = 0; i < NPROC; i++) {
		int status;
		ck_assert(waitpid(pids[i], &status, 0) == pids[i]);
		ck_assert_msg(WIFEXITED(status) && (WEXITSTATUS(status) == 0 ||
						    WEXITSTATUS(status) == 10),
			      "child %d: status %d", i, status);
		compiled += WEXITSTATUS(status) == 0;
	}
	/* The key's lock: one of them compiled, the others waited and
	 * loaded its object. */
	ck_assert_int_eq(compiled, 1);
	/* One record, its object complete, no leftovers; a later compile
	 * hits. */
	ck_assert_int_eq(count(".entry"), 1);
	ck_assert_int_eq(count(".so"), 1);
	ck_assert_int_eq(count(".lock"), 0);
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

/* --- Trust: planted entries never run ------------------------------------------ */

/* The uid that owns what "another user" plants (nobody). */
#define OTHER_UID 65534

static char marker[4200];

/* Write an object that, when loaded, creates `marker` (a constructor) and
 * defines tilec_entry_seven giving 666, into dir/<its hash>.so, and a
 * record for `key` naming it; both owned by `owner` (-1: the caller) with
 * mode `mode`.  Returns the object's file name in obj[]. */
static void
plant(const char *d, const char *key, long owner, mode_t mode, char *obj,
      size_t objlen)
{
	char csrc[4300], so[4300], cmd[13000];
	snprintf(csrc, sizeof csrc, "%s/planted.c", d);
	snprintf(so, sizeof so, "%s/planted.so", d);
	FILE *f = fopen(csrc, "w");
	ck_assert(f);
	fprintf(f, "#include <fcntl.h>\n"
		   "__attribute__((constructor)) static void planted(void)\n"
		   "{ creat(\"%s\", 0600); }\n"
		   "void tilec_entry_seven(void **args)\n"
		   "{ **(int **)args[0] = 666; }\n",
		marker);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s'", so, csrc);
	ck_assert_int_eq(system(cmd), 0);
	unlink(csrc);
	int fd = open(so, O_RDONLY);
	ck_assert(fd >= 0);
	uint8_t d32[32];
	uint64_t size;
	char hash[65];
	ck_assert(tilec_rt_sha256_fd(fd, (uint64_t)1 << 30, d32, &size));
	close(fd);
	tilec_rt_sha256_hex(d32, hash);
	snprintf(obj, objlen, "%s.so", hash);
	char path[4300], rec[4300];
	snprintf(path, sizeof path, "%s/%s", d, obj);
	ck_assert(rename(so, path) == 0);
	snprintf(rec, sizeof rec, "%s/%s.entry", d, key);
	f = fopen(rec, "w");
	ck_assert(f);
	fprintf(f, "tilec-cache-entry 1\nobject %s\nsize %llu\nsha256 %s\n",
		obj, (unsigned long long)size, hash);
	fclose(f);
	ck_assert(chmod(path, mode) == 0 && chmod(rec, mode) == 0);
	if (owner >= 0)
		ck_assert(chown(path, (uid_t)owner, (gid_t)owner) == 0 &&
			  chown(rec, (uid_t)owner, (gid_t)owner) == 0);
}

/* The key src compiles under (compiled once in a private cache). */
static void
key_of_src(char key[65])
{
	make_dir();
	tilec_context *ctx = context();
	tilec_module_info info = compile_and_run(ctx);
	snprintf(key, 65, "%s", info.key);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
	snprintf(marker, sizeof marker, "%s/tilec-planted-%ld",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
						       : "/tmp",
		 (long)getpid());
	unlink(marker);
}

static bool
planted_code_ran(void)
{
	return access(marker, F_OK) == 0;
}

/* Compile src with the cache in d; the error, or "" if it compiled (and
 * then it ran and gave 7, never the planted 666). */
static const char *
compile_in_dir(tilec_context *ctx, const char *d, tilec_module_info *info)
{
	ck_assert_int_eq(tilec_set_cache_dir(ctx, d), TILEC_OK);
	tilec_module *m = tilec_compile(ctx, src, sizeof src - 1, NULL);
	if (!m)
		return tilec_error(ctx);
	tilec_kernel *k = tilec_module_kernel(m, "seven");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	int out = 0;
	void *p = &out;
	void *args[] = { &p };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	if (info)
		tilec_module_get_info(m, info);
	tilec_module_free(m);
	ck_assert_int_eq(out, 7);
	return "";
}

START_TEST(a_planted_entry_in_a_private_cache_would_run)
{
	/* The control: the planted entry is well formed, and where the
	 * cache trusts it (a directory of the user's own, the files the
	 * user's) it is loaded and its constructor runs.  The tests below
	 * plant the same thing where it must be refused. */
	char key[65], obj[128];
	key_of_src(key);
	make_dir();
	plant(dir, key, -1, 0600, obj, sizeof obj);
	tilec_context *ctx = context();
	tilec_module *m = tilec_compile(ctx, src, sizeof src - 1, NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_info info;
	tilec_module_get_info(m, &info);
	ck_assert(info.from_cache);
	ck_assert(planted_code_ran());
	tilec_module_free(m);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
	unlink(marker);
}
END_TEST

/* Plant an entry in a directory with `mode` owned by `owner` (-1: the
 * caller), then compile with the cache there: refused with a message
 * that names the directory and says `because`; the planted code never
 * ran. */
static void
refused_dir_case(mode_t mode, long owner, const char *because)
{
	char key[65], obj[128];
	key_of_src(key);
	make_dir();
	char d[4300];
	snprintf(d, sizeof d, "%s/shared", dir);
	ck_assert(mkdir(d, 0700) == 0);
	plant(d, key, owner, 0644, obj, sizeof obj);
	if (owner >= 0)
		ck_assert(chown(d, (uid_t)owner, (gid_t)owner) == 0);
	ck_assert(chmod(d, mode) == 0);
	tilec_context *ctx = context();
	const char *e = compile_in_dir(ctx, d, NULL);
	ck_assert_msg(strstr(e, "refusing the cache directory") &&
			      strstr(e, d) && strstr(e, because),
		      "mode %o owner %ld: %s", (unsigned)mode, owner, e);
	ck_assert_msg(strstr(e, "TILEC_CACHE_DIR"), "%s", e);
	ck_assert(!planted_code_ran());
	tilec_context_free(ctx);
	chmod(d, 0700);
	tilec_rt_remove_tree(dir);
}

START_TEST(a_cache_directory_others_can_write_is_refused)
{
	refused_dir_case(01777, geteuid() == 0 ? OTHER_UID : -1,
			 geteuid() == 0 ? "owned by uid 65534"
					: "writable by every user (mode 1777)");
	refused_dir_case(0777, -1, "writable by every user (mode 0777)");
	refused_dir_case(01777, -1, "writable by every user (mode 1777)");
	refused_dir_case(0770, -1, "writable by its group (mode 0770)");
	if (geteuid() == 0) {
		/* Owned by another user, even with a private mode. */
		refused_dir_case(0755, OTHER_UID,
				 "owned by uid 65534, not by you (uid 0)");
		refused_dir_case(0700, OTHER_UID, "owned by uid 65534");
	}
}
END_TEST

START_TEST(a_directory_above_the_cache_others_can_write_is_refused)
{
	char key[65], obj[128];
	key_of_src(key);
	make_dir();
	char parent[4300], d[4400];
	snprintf(parent, sizeof parent, "%s/open", dir);
	snprintf(d, sizeof d, "%s/cache", parent);
	ck_assert(mkdir(parent, 0700) == 0 && mkdir(d, 0700) == 0);
	plant(d, key, -1, 0600, obj, sizeof obj);
	ck_assert(chmod(parent, 0777) == 0);
	tilec_context *ctx = context();
	const char *e = compile_in_dir(ctx, d, NULL);
	ck_assert_msg(strstr(e, "refusing the cache directory") &&
			      strstr(e, parent) &&
			      strstr(e, "writable by every user (mode 0777)") &&
			      strstr(e, "in its place"),
		      "%s", e);
	ck_assert(!planted_code_ran());

	/* Sticky, like /tmp: nobody else can rename the cache away, so the
	 * cache is used (without the plant, which was the user's own). */
	ck_assert(chmod(parent, 01777) == 0);
	char rec[4500];
	snprintf(rec, sizeof rec, "%s/%s.entry", d, key);
	ck_assert(unlink(rec) == 0);
	tilec_module_info info;
	e = compile_in_dir(ctx, d, &info);
	ck_assert_msg(!*e, "%s", e);
	e = compile_in_dir(ctx, d, &info);
	ck_assert_msg(!*e && info.from_cache, "%s", e);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

START_TEST(a_default_cache_directory_others_can_write_is_refused)
{
	/* A pre-existing ~/.cache/tilec with mode 0777. */
	make_dir();
	char cache[4300], dotcache[4300];
	snprintf(dotcache, sizeof dotcache, "%s/.cache", dir);
	snprintf(cache, sizeof cache, "%s/.cache/tilec", dir);
	ck_assert(mkdir(dotcache, 0755) == 0 && mkdir(cache, 0777) == 0);
	ck_assert(chmod(cache, 0777) == 0);
	setenv("HOME", dir, 1);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("TILEC_CACHE_DIR");
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_OPENMP, 0, NULL);
	ck_assert(ctx);
	ck_assert_str_eq(tilec_cache_dir(ctx), cache);
	ck_assert(!tilec_compile(ctx, src, sizeof src - 1, NULL));
	const char *e = tilec_error(ctx);
	ck_assert_msg(strstr(e, cache) && strstr(e, "chmod go-w"), "%s", e);

	/* Created by the runtime: private. */
	ck_assert(rmdir(cache) == 0);
	tilec_module_info info = compile_and_run(ctx);
	ck_assert(!info.from_cache);
	struct stat st;
	ck_assert(stat(cache, &st) == 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert(stat(info.path, &st) == 0);
	ck_assert_int_eq(st.st_mode & 077, 0);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

/* In a trusted cache, replace src's entry by `how`; the next compile
 * refuses it (note says `because`), rebuilds, and the one after hits. */
static void
refused_entry_case(int how, const char *because)
{
	char key[65], obj[128];
	key_of_src(key);
	make_dir();
	char rec[4300], objpath[8192], elsewhere[8192];
	snprintf(rec, sizeof rec, "%s/%s.entry", dir, key);
	char other[4300];
	snprintf(other, sizeof other, "%s/other", dir);
	ck_assert(mkdir(other, 0700) == 0);
	switch (how) {
	case 0: /* an entry and object of another user's */
		plant(dir, key, OTHER_UID, 0644, obj, sizeof obj);
		break;
	case 1: /* the user's, but writable by everyone */
		plant(dir, key, -1, 0666, obj, sizeof obj);
		break;
	case 2: /* the entry is a symbolic link to a good record */
		plant(other, key, -1, 0600, obj, sizeof obj);
		snprintf(objpath, sizeof objpath, "%s/%s", other, obj);
		snprintf(elsewhere, sizeof elsewhere, "%s/%s", dir, obj);
		ck_assert(rename(objpath, elsewhere) == 0);
		snprintf(elsewhere, sizeof elsewhere, "%s/%s.entry", other, key);
		ck_assert(symlink(elsewhere, rec) == 0);
		break;
	case 3: /* the object is a symbolic link to the planted one */
		plant(dir, key, -1, 0600, obj, sizeof obj);
		snprintf(objpath, sizeof objpath, "%s/%s", dir, obj);
		snprintf(elsewhere, sizeof elsewhere, "%s/%s", other, obj);
		ck_assert(rename(objpath, elsewhere) == 0);
		ck_assert(symlink(elsewhere, objpath) == 0);
		break;
	case 4: /* the entry is a FIFO (opening it used to hang) */
		ck_assert(mkfifo(rec, 0600) == 0);
		break;
	case 5: /* the object is a FIFO */
		plant(dir, key, -1, 0600, obj, sizeof obj);
		snprintf(objpath, sizeof objpath, "%s/%s", dir, obj);
		ck_assert(unlink(objpath) == 0 && mkfifo(objpath, 0600) == 0);
		break;
	}
	tilec_context *ctx = context();
	tilec_module_info info;
	const char *e = compile_in_dir(ctx, dir, &info);
	ck_assert_msg(!*e, "case %d: %s", how, e);
	ck_assert_msg(!info.from_cache && info.rebuilt_corrupt &&
			      strstr(info.note, dir) &&
			      strstr(info.note, because),
		      "case %d: note '%s'", how, info.note);
	ck_assert_msg(!planted_code_ran(), "case %d", how);
	e = compile_in_dir(ctx, dir, &info);
	ck_assert_msg(!*e && info.from_cache && !info.rebuilt_corrupt,
		      "case %d: %s", how, e);
	ck_assert(!planted_code_ran());
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}

START_TEST(entries_others_could_have_written_are_refused)
{
	if (geteuid() == 0)
		refused_entry_case(0, "is owned by another user");
	refused_entry_case(1, "is writable by other users");
	refused_entry_case(2, "is a symbolic link");
	refused_entry_case(3, "is a symbolic link");
	refused_entry_case(4, "is a FIFO");
	refused_entry_case(5, "is a FIFO");
}
END_TEST

/* --- The key and what is stored ----------------------------------------------- */

/* An executable script at dir/name. */
static void
script(const char *name, const char *text, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	fputs(text, f);
	fclose(f);
	ck_assert(chmod(path, 0755) == 0);
}

static const char *
key_with_compiler(tilec_context *ctx, const char *cc, char key[65])
{
	ck_assert_int_eq(tilec_set_compiler(ctx, cc), TILEC_OK);
	tilec_module_info info = compile_and_run(ctx);
	snprintf(key, 65, "%s", info.key);
	return info.from_cache ? "hit" : "miss";
}

START_TEST(the_key_holds_the_whole_compiler_command_and_version)
{
	make_dir();
	tilec_context *ctx = context();
	char k_cc[65], k_o0[65], k_again[65], k_a[65], k_b[65];
	ck_assert_str_eq(key_with_compiler(ctx, "cc", k_cc), "miss");
	/* Flags in the compiler command build another object. */
	ck_assert_str_eq(key_with_compiler(ctx, "cc -O0 -g", k_o0), "miss");
	ck_assert_str_ne(k_o0, k_cc);
	ck_assert_str_eq(key_with_compiler(ctx, "cc", k_again), "hit");
	ck_assert_str_eq(k_again, k_cc);
	/* Two compilers whose version output differs after its first
	 * line. */
	char a[4300], b[4300];
	script("cc-a", "#!/bin/sh\n"
		       "if [ \"$1\" = --version ]; then echo 'cc 1.0'; "
		       "echo 'configured: A'; exit 0; fi\n"
		       "exec cc \"$@\"\n", a, sizeof a);
	script("cc-b", "#!/bin/sh\n"
		       "if [ \"$1\" = --version ]; then echo 'cc 1.0'; "
		       "echo 'configured: B'; exit 0; fi\n"
		       "exec cc \"$@\"\n", b, sizeof b);
	ck_assert_str_eq(key_with_compiler(ctx, a, k_a), "miss");
	ck_assert_str_eq(key_with_compiler(ctx, b, k_b), "miss");
	ck_assert_str_ne(k_a, k_b);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

START_TEST(a_compiler_that_lies_poisons_nothing)
{
	make_dir();
	tilec_context *ctx = context();
	/* Exits 0 having written garbage. */
	char garbage[4300], empty[4300];
	script("cc-garbage", "#!/bin/sh\n"
			     "if [ \"$1\" = --version ]; then echo 'lying cc'; "
			     "exit 0; fi\n"
			     "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && "
			     "out=$2; shift; done\n"
			     "echo garbage > \"$out\"\n", garbage,
	       sizeof garbage);
	ck_assert_int_eq(tilec_set_compiler(ctx, garbage), TILEC_OK);
	ck_assert(!tilec_compile(ctx, src, sizeof src - 1, NULL));
	ck_assert_msg(strstr(tilec_error(ctx), "nothing was cached"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(count(".entry") + count(".so"), 0);

	/* Exits 0 with a valid object that lacks the kernel. */
	script("cc-empty", "#!/bin/sh\n"
			   "if [ \"$1\" = --version ]; then echo 'empty cc'; "
			   "exit 0; fi\n"
			   "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && "
			   "out=$2; shift; done\n"
			   "exec cc -shared -fPIC -o \"$out\" -x c /dev/null\n",
	       empty, sizeof empty);
	ck_assert_int_eq(tilec_set_compiler(ctx, empty), TILEC_OK);
	const char *want[] = { "seven" };
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.kernels = want;
	o.nkernels = 1;
	ck_assert(!tilec_compile(ctx, src, sizeof src - 1, &o));
	ck_assert_msg(strstr(tilec_error(ctx), "defines no kernel 'seven'") &&
			      strstr(tilec_error(ctx), "nothing was cached"),
		      "%s", tilec_error(ctx));
	ck_assert_int_eq(count(".entry") + count(".so"), 0);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

START_TEST(an_entry_whose_object_lacks_the_kernel_is_rebuilt)
{
	make_dir();
	tilec_context *ctx = context();
	const char *want[] = { "seven" };
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.kernels = want;
	o.nkernels = 1;
	tilec_module *m = tilec_compile(ctx, src, sizeof src - 1, &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_info first;
	tilec_module_get_info(m, &first);
	tilec_module_free(m);
	/* Point the entry at another kernel's (valid, intact) object. */
	static const char eight[] = "void tilec_entry_eight(void **args)\n"
				    "{ **(int **)args[0] = 8; }\n";
	m = tilec_compile(ctx, eight, sizeof eight - 1, NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_info other;
	tilec_module_get_info(m, &other);
	tilec_module_free(m);
	char rec[4300], orec[4300], cmd[9000];
	snprintf(rec, sizeof rec, "%s/%s.entry", dir, first.key);
	snprintf(orec, sizeof orec, "%s/%s.entry", dir, other.key);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", orec, rec);
	ck_assert_int_eq(system(cmd), 0);

	/* Without a kernel list the lookup says where the module came
	 * from. */
	m = tilec_compile(ctx, src, sizeof src - 1, NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "seven"));
	ck_assert_msg(strstr(tilec_error(ctx), "loaded from the cache") &&
			      strstr(tilec_error(ctx), dir),
		      "%s", tilec_error(ctx));
	tilec_module_free(m);

	/* With one, the entry is rebuilt, saying which and why. */
	m = tilec_compile(ctx, src, sizeof src - 1, &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_info info;
	tilec_module_get_info(m, &info);
	ck_assert(!info.from_cache && info.rebuilt_corrupt);
	ck_assert_msg(strstr(info.note, rec) &&
			      strstr(info.note, "defines no kernel 'seven'"),
		      "%s", info.note);
	tilec_module_free(m);
	tilec_module_info again = compile_and_run(ctx);
	ck_assert(again.from_cache);
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
	TCase *t = tcase_create("trust");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, a_planted_entry_in_a_private_cache_would_run);
	tcase_add_test(t, a_cache_directory_others_can_write_is_refused);
	tcase_add_test(t, a_directory_above_the_cache_others_can_write_is_refused);
	tcase_add_test(t, a_default_cache_directory_others_can_write_is_refused);
	tcase_add_test(t, entries_others_could_have_written_are_refused);
	tcase_add_test(t, the_key_holds_the_whole_compiler_command_and_version);
	tcase_add_test(t, a_compiler_that_lies_poisons_nothing);
	tcase_add_test(t, an_entry_whose_object_lacks_the_kernel_is_rebuilt);
	suite_add_tcase(s, t);
	return s;
}
