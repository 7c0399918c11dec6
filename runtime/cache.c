/*
 * cache.c - the disk cache of compiled objects.
 *
 * Layout of the cache directory (flat):
 *
 *     <key>.entry         the record for one cache key (text, below)
 *     <objhash><ext>      an object file, named by the SHA-256 of its bytes
 *     tmp-XXXXXX/         a compile in progress (scratch directory)
 *
 * A record reads
 *
 *     tilec-cache-entry 1
 *     object <objhash><ext>
 *     size <bytes>
 *     sha256 <objhash>
 *
 * Invariants: every file appears under its final name only by rename(2) of
 * a complete, fsync'd file written in the same directory, the object before
 * its record; so a reader never sees a half-written file, and two processes
 * storing the same key both succeed (the last rename wins, and either
 * record names a complete object).  A reader loads an object only after
 * checking its size and hash against the record; a mismatch (a truncated
 * or altered object, a damaged record) is reported as CORRUPT and the
 * caller rebuilds the entry, overwriting it the same atomic way.
 */
#include "runtime_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAGIC "tilec-cache-entry 1"

/* fsync a file or directory by path; errors are ignored (best effort on
 * filesystems that refuse fsync on directories). */
static void
sync_path(const char *path, bool directory)
{
	int fd = open(path, O_RDONLY | (directory ? O_DIRECTORY : 0));
	if (fd < 0)
		return;
	(void)fsync(fd);
	close(fd);
}

static bool
is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

TilecCacheResult
tilec_rt_cache_lookup(const char *dir, const char *key, const char *ext,
		      char *path, size_t pathlen)
{
	char rec_path[4096];
	if (snprintf(rec_path, sizeof rec_path, "%s/%s.entry", dir, key) >=
	    (int)sizeof rec_path)
		return TILEC_CACHE_MISS;
	char *text;
	size_t len;
	if (tilec_rt_read_file(rec_path, &text, &len) != TILEC_OK)
		return TILEC_CACHE_MISS;

	/* Parse the record; anything unexpected means it is damaged. */
	char object[128], hash[80];
	unsigned long long size;
	char magic[32];
	int n = sscanf(text, "%31[^\n]\nobject %127s\nsize %llu\nsha256 %79s",
		       magic, object, &size, hash);
	free(text);
	if (n != 4 || strcmp(magic, RECORD_MAGIC) != 0 || !is_hex64(hash))
		return TILEC_CACHE_CORRUPT;
	char expect[128];
	snprintf(expect, sizeof expect, "%s%s", hash, ext);
	if (strcmp(object, expect) != 0)
		return TILEC_CACHE_CORRUPT;

	if (snprintf(path, pathlen, "%s/%s", dir, object) >= (int)pathlen)
		return TILEC_CACHE_MISS;
	uint8_t digest[32];
	uint64_t actual;
	char hex[65];
	if (!tilec_rt_sha256_file(path, digest, &actual))
		return TILEC_CACHE_CORRUPT;
	tilec_rt_sha256_hex(digest, hex);
	if (actual != size || strcmp(hex, hash) != 0)
		return TILEC_CACHE_CORRUPT;
	return TILEC_CACHE_HIT;
}

tilec_status
tilec_rt_cache_store(tilec_context *ctx, const char *dir, const char *key,
		     const char *ext, const char *object, char *path,
		     size_t pathlen)
{
	uint8_t digest[32];
	uint64_t size;
	char hash[65];
	if (!tilec_rt_sha256_file(object, digest, &size))
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot read %s: %s",
				     object, strerror(errno));
	tilec_rt_sha256_hex(digest, hash);

	/* The object: fsync, then rename to its content name. */
	sync_path(object, false);
	if (snprintf(path, pathlen, "%s/%s%s", dir, hash, ext) >= (int)pathlen)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cache path too long");
	if (rename(object, path) != 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot move %s to %s: %s", object, path,
				     strerror(errno));

	/* The record: a temporary file, fsync, rename. */
	char tmp[4096], rec_path[4096];
	if (snprintf(tmp, sizeof tmp, "%s/tmp-entry-XXXXXX", dir) >=
		    (int)sizeof tmp ||
	    snprintf(rec_path, sizeof rec_path, "%s/%s.entry", dir, key) >=
		    (int)sizeof rec_path)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cache path too long");
	int fd = mkstemp(tmp);
	if (fd < 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot create a file in %s: %s", dir,
				     strerror(errno));
	char rec[512];
	int len = snprintf(rec, sizeof rec, "%s\nobject %s%s\nsize %llu\nsha256 %s\n",
			   RECORD_MAGIC, hash, ext, (unsigned long long)size,
			   hash);
	bool ok = write(fd, rec, (size_t)len) == len && fsync(fd) == 0;
	int saved = errno;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, rec_path) != 0) {
		saved = ok ? errno : saved;
		unlink(tmp);
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot write cache record %s: %s",
				     rec_path, strerror(saved));
	}
	sync_path(dir, true);
	return TILEC_OK;
}

bool
tilec_rt_cache_prepare(const char *dir)
{
	if (!dir || !*dir)
		return false;
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return false;
	/* mkdir -p, private to the user: objects in it are loaded as code. */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return false;
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return false;
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	       access(path, W_OK | X_OK) == 0;
}

tilec_status
tilec_rt_scratch_dir(tilec_context *ctx, const char *parent, char *out,
		     size_t outlen)
{
	if (snprintf(out, outlen, "%s/tmp-XXXXXX", parent) >= (int)outlen)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "path too long: %s",
				     parent);
	if (!mkdtemp(out))
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot create a directory in %s: %s",
				     parent, strerror(errno));
	return TILEC_OK;
}
