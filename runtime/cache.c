/*
 * cache.c - the disk cache of compiled objects, and the trust rules for
 * every directory the runtime compiles in.
 *
 * Layout of the cache directory (flat):
 *
 *     <key>.entry         the record for one cache key (text, below)
 *     <key>.lock          while a process compiles the key: its lock (empty)
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
 * Trust.  What is in the cache is loaded as code, so, as ssh does with
 * ~/.ssh and git with a repository, the cache is used only if nobody but
 * the user can change it: the directory must be the user's own and
 * writable by nobody else, and every directory above it must belong to
 * root or the user and be writable by nobody else unless it is sticky
 * (/tmp), so that no one can rename the cache away and put another in its
 * place.  A directory that fails is refused with TILEC_ERR_UNTRUSTED, a
 * message naming it and the fix.  The walk opens each component relative
 * to the one above with O_NOFOLLOW, and the cache is then used through
 * that directory descriptor.  Records and objects are opened with
 * O_NOFOLLOW and O_NONBLOCK (a FIFO cannot hang the open) and used only if
 * they are regular files of the user's that nobody else can write; one
 * that is not is reported like a damaged entry, and rebuilt over.
 *
 * Invariants: every file appears under its final name only by rename(2) of
 * a complete, fsync'd file written in the same directory, the object before
 * its record; so a reader never sees a half-written file, and two processes
 * storing the same key both succeed (the last rename wins, and either
 * record names a complete object).  A reader loads an object only after
 * checking its size and hash against the record; a mismatch (a truncated
 * or altered object, a damaged record) is reported as CORRUPT and the
 * caller rebuilds the entry, overwriting it the same atomic way.  The
 * per-key lock only saves work (concurrent cold processes compile a key
 * once); correctness never depends on it.  It is an flock, so a holder
 * that dies releases it; a waiter polls, for at most the compile timeout
 * (or LOCK_WAIT_MAX when compiles have no limit), so a holder that is
 * stopped delays the others but cannot stop them; and a lock file that
 * is not a regular file of the user's, writable by nobody else, is not
 * used at all.
 */
#define _GNU_SOURCE /* O_PATH */
#include "runtime_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD_MAGIC "tilec-cache-entry 1"
/* The longest a process waits for another's compile of a key when the
 * compile timeout is 0 (no limit), in seconds; then it compiles itself. */
#define LOCK_WAIT_MAX 600.0
/* A record is a few lines; anything larger is not one. */
#define RECORD_MAX 1024
/* Objects larger than this are not hashed (nor trusted). */
#define OBJECT_MAX ((uint64_t)4 << 30)

/* --- Trusted directories --------------------------------------------------- */

/* Why a directory (st) cannot be trusted, written into why[], with the fix
 * into fix[]; false if it can.  `own`: the directory the runtime writes
 * in, which must be the user's and writable by nobody else; otherwise one
 * above it, which may also be root's, and sticky if others can write. */
static bool
distrust(const struct stat *st, const char *path, bool own, char *why,
	 size_t nwhy, char *fix, size_t nfix)
{
	uid_t me = geteuid();
	unsigned mode = (unsigned)(st->st_mode & 07777);
	bool others_write = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
	if (st->st_uid != me && (own || st->st_uid != 0)) {
		snprintf(why, nwhy, "%s is owned by uid %ld, not by you (uid %ld)",
			 path, (long)st->st_uid, (long)me);
		snprintf(fix, nfix,
			 own ? "use a directory of your own"
			     : "use a directory outside %s",
			 path);
		return true;
	}
	if (others_write && (own || !(st->st_mode & S_ISVTX))) {
		snprintf(why, nwhy, "%s is writable by %s (mode %04o)", path,
			 st->st_mode & S_IWOTH ? "every user" : "its group",
			 mode);
		snprintf(fix, nfix, "run `chmod go-w %s`, or use another "
			 "directory", path);
		return true;
	}
	return false;
}

tilec_status
tilec_rt_trusted_dir(tilec_context *ctx, const char *what, const char *dir,
		     bool own, int *fdp, char *real, size_t reallen)
{
	*fdp = -1;
	char *resolved = realpath(dir, NULL);
	if (!resolved)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot use %s %s: %s",
				     what, dir, strerror(errno));
	if (snprintf(real, reallen, "%s", resolved) >= (int)reallen) {
		free(resolved);
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "path too long: %s",
				     dir);
	}
	free(resolved);

	/* Walk from "/" one component at a time, never following a link
	 * (realpath resolved them; one appearing now is a change under us).
	 * O_PATH: a directory above may be searchable but not readable. */
	char prefix[4096] = "/";
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *p = real;
	for (;;) {
		struct stat st;
		char why[4400], fix[4400];
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (fd < 0 || fstat(fd, &st) != 0) {
			tilec_status s = tilec_rt_fail(
				ctx, TILEC_ERR_IO, "cannot use %s %s: %s: %s",
				what, real, prefix, strerror(errno));
			if (fd >= 0)
				close(fd);
			return s;
		}
		bool is_own = own && n == 0;
		if (distrust(&st, prefix, is_own, why, sizeof why, fix,
			     sizeof fix)) {
			close(fd);
			if (is_own || strcmp(prefix, real) == 0)
				return tilec_rt_fail(
					ctx, TILEC_ERR_UNTRUSTED,
					"refusing %s %s: %s, so another user "
					"could put code in it that tilec would "
					"load; %s",
					what, real, why, fix);
			return tilec_rt_fail(
				ctx, TILEC_ERR_UNTRUSTED,
				"refusing %s %s: %s, so another user could "
				"put a directory holding their code in its "
				"place; %s",
				what, real, why, fix);
		}
		if (n == 0)
			break;
		char comp[256];
		if (n >= sizeof comp) {
			close(fd);
			return tilec_rt_fail(ctx, TILEC_ERR_IO,
					     "cannot use %s %s: name too long",
					     what, real);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		int next = openat(fd, comp,
				  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(fd);
		size_t plen = strlen(prefix);
		snprintf(prefix + plen, sizeof prefix - plen, "%s%s",
			 plen > 1 ? "/" : "", comp);
		if (next < 0)
			return tilec_rt_fail(ctx,
					     saved == ELOOP ? TILEC_ERR_UNTRUSTED
							    : TILEC_ERR_IO,
					     "cannot use %s %s: %s: %s", what,
					     real, prefix,
					     saved == ELOOP
						     ? "it changed into a "
						       "symbolic link while "
						       "being checked"
						     : strerror(saved));
		fd = next;
		p += n;
	}
	/* The directory itself, open for use (reading, fsync). */
	*fdp = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int saved = errno;
	close(fd);
	if (*fdp < 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot use %s %s: %s",
				     what, real, strerror(saved));
	return TILEC_OK;
}

/* --- Opening cache files ------------------------------------------------------- */

/* Open `name` in the cache for reading if it is a regular file of the
 * user's that nobody else can write; else -1, with why[] saying what it
 * is instead ("is a symbolic link"; empty when it does not exist). */
static int
open_trusted_file(int dirfd, const char *name, struct stat *st, char *why,
		  size_t nwhy)
{
	why[0] = '\0';
	int fd = openat(dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(why, nwhy, "is a symbolic link");
		else if (errno != ENOENT)
			snprintf(why, nwhy, "cannot be opened (%s)",
				 strerror(errno));
		return -1;
	}
	const char *bad = NULL;
	if (fstat(fd, st) != 0)
		bad = strerror(errno);
	else if (!S_ISREG(st->st_mode))
		bad = S_ISFIFO(st->st_mode) ? "is a FIFO, not a regular file"
					    : "is not a regular file";
	else if (st->st_uid != geteuid())
		bad = "is owned by another user";
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		bad = "is writable by other users";
	if (bad) {
		snprintf(why, nwhy, "%s", bad);
		close(fd);
		return -1;
	}
	return fd;
}

static bool
is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

/* --- The cache ------------------------------------------------------------------ */

tilec_status
tilec_rt_cache_open(tilec_context *ctx, const char *dir, TilecCache *c)
{
	c->fd = -1;
	c->dir[0] = '\0';
	if (!dir || !*dir)
		return TILEC_OK;
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return TILEC_OK;
	/* mkdir -p, private to the user: objects in it are loaded as code.
	 * A directory that cannot be made is no cache, not an error. */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(path, 0700);
		*p = '/';
	}
	(void)mkdir(path, 0700);
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return TILEC_OK;
	tilec_status s = tilec_rt_trusted_dir(ctx, "the cache directory", path,
					      true, &c->fd, c->dir,
					      sizeof c->dir);
	if (s == TILEC_ERR_UNTRUSTED) {
		static const char hint[] = " (TILEC_CACHE_DIR picks the "
					   "cache directory; an empty one "
					   "disables the cache)";
		tilec_rt_fail_append(ctx, hint, sizeof hint - 1);
		return s;
	}
	if (s == TILEC_OK && faccessat(c->fd, ".", W_OK | X_OK, 0) == 0)
		return TILEC_OK;
	/* Unusable (read-only, gone meanwhile): compile uncached. */
	tilec_rt_cache_close(c);
	tilec_rt_clear_error(ctx);
	return TILEC_OK;
}

void
tilec_rt_cache_close(TilecCache *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->dir[0] = '\0';
}

TilecCacheResult
tilec_rt_cache_lookup(const TilecCache *c, const char *key, const char *ext,
		      char *path, size_t pathlen, char *why, size_t nwhy)
{
	char name[128], bad[512];
	why[0] = '\0';
	snprintf(name, sizeof name, "%s.entry", key);
	struct stat st;
	int fd = open_trusted_file(c->fd, name, &st, bad, sizeof bad);
	if (fd < 0) {
		if (!bad[0])
			return TILEC_CACHE_MISS;
		snprintf(why, nwhy, "cache entry %s/%s refused: it %s", c->dir,
			 name, bad);
		return TILEC_CACHE_CORRUPT;
	}
	char text[RECORD_MAX + 1];
	ssize_t len = st.st_size <= RECORD_MAX ? read(fd, text, RECORD_MAX) : -1;
	close(fd);
	if (len < 0) {
		snprintf(why, nwhy, "cache entry %s/%s is not a record", c->dir,
			 name);
		return TILEC_CACHE_CORRUPT;
	}
	text[len] = '\0';

	/* Parse the record; anything unexpected means it is damaged. */
	char object[128], hash[80];
	unsigned long long size;
	char magic[32];
	int n = sscanf(text, "%31[^\n]\nobject %127s\nsize %llu\nsha256 %79s",
		       magic, object, &size, hash);
	char expect[128];
	if (n == 4)
		snprintf(expect, sizeof expect, "%s%s", hash, ext);
	if (n != 4 || strcmp(magic, RECORD_MAGIC) != 0 || !is_hex64(hash) ||
	    strcmp(object, expect) != 0) {
		snprintf(why, nwhy, "cache entry %s/%s is damaged", c->dir,
			 name);
		return TILEC_CACHE_CORRUPT;
	}

	fd = open_trusted_file(c->fd, object, &st, bad, sizeof bad);
	if (fd < 0) {
		if (bad[0])
			snprintf(why, nwhy,
				 "cache entry %s/%s: its object %s refused: it "
				 "%s",
				 c->dir, name, object, bad);
		else
			snprintf(why, nwhy,
				 "cache entry %s/%s: its object %s is missing",
				 c->dir, name, object);
		return TILEC_CACHE_CORRUPT;
	}
	uint8_t digest[32];
	uint64_t actual = 0;
	char hex[65];
	bool ok = (uint64_t)st.st_size == size &&
		  tilec_rt_sha256_fd(fd, size, digest, &actual);
	close(fd);
	if (ok) {
		tilec_rt_sha256_hex(digest, hex);
		ok = actual == size && strcmp(hex, hash) == 0;
	}
	if (!ok) {
		snprintf(why, nwhy,
			 "cache entry %s/%s: its object %s does not match the "
			 "record (truncated or altered)",
			 c->dir, name, object);
		return TILEC_CACHE_CORRUPT;
	}
	if (snprintf(path, pathlen, "%s/%s", c->dir, object) >= (int)pathlen)
		return TILEC_CACHE_MISS;
	return TILEC_CACHE_HIT;
}

tilec_status
tilec_rt_cache_store(tilec_context *ctx, const TilecCache *c, const char *key,
		     const char *ext, const char *object, char *path,
		     size_t pathlen)
{
	/* The object: the compiler's output must be a regular file; make
	 * it private, hash it, fsync it, rename it to its content name. */
	int fd = open(object, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	uint8_t digest[32];
	uint64_t size;
	char hash[65];
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    fchmod(fd, 0600) != 0 ||
	    !tilec_rt_sha256_fd(fd, OBJECT_MAX, digest, &size)) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot cache %s: %s", object,
				     fd >= 0 && !S_ISREG(st.st_mode)
					     ? "not a regular file"
					     : strerror(saved));
	}
	(void)fsync(fd);
	close(fd);
	tilec_rt_sha256_hex(digest, hash);
	char objname[128];
	snprintf(objname, sizeof objname, "%s%s", hash, ext);
	if (snprintf(path, pathlen, "%s/%s", c->dir, objname) >= (int)pathlen)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cache path too long");
	if (renameat(AT_FDCWD, object, c->fd, objname) != 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot move %s to %s: %s", object, path,
				     strerror(errno));

	/* The record: a temporary file, fsync, rename. */
	char tmp[4200], rec[128];
	snprintf(tmp, sizeof tmp, "%s/tmp-entry-XXXXXX", c->dir);
	snprintf(rec, sizeof rec, "%s.entry", key);
	fd = mkstemp(tmp);
	if (fd < 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot create a file in %s: %s", c->dir,
				     strerror(errno));
	char text[512];
	int len = snprintf(text, sizeof text,
			   "%s\nobject %s\nsize %llu\nsha256 %s\n", RECORD_MAGIC,
			   objname, (unsigned long long)size, hash);
	bool ok = write(fd, text, (size_t)len) == len && fsync(fd) == 0;
	int saved = errno;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(AT_FDCWD, tmp, c->fd, rec) != 0) {
		saved = ok ? errno : saved;
		unlink(tmp);
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot write cache record %s/%s: %s",
				     c->dir, rec, strerror(saved));
	}
	(void)fsync(c->fd);
	return TILEC_OK;
}

void
tilec_rt_cache_drop(const TilecCache *c, const char *key)
{
	char rec[128];
	snprintf(rec, sizeof rec, "%s.entry", key);
	(void)unlinkat(c->fd, rec, 0);
}

int
tilec_rt_cache_lock(const TilecCache *c, const char *key, double wait_s)
{
	char name[128];
	snprintf(name, sizeof name, "%s.lock", key);
	if (wait_s <= 0)
		wait_s = LOCK_WAIT_MAX;
	double until = tilec_now() + wait_s;
	for (;;) {
		int fd = openat(c->fd, name,
				O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
					O_CLOEXEC,
				0600);
		struct stat held, now;
		/* The lock file obeys the rule records and objects do: a
		 * regular file of the user's that nobody else can write.
		 * Another lock is not waited on (it could be held forever by
		 * whoever made it); the caller compiles without one. */
		if (fd < 0 || fstat(fd, &held) != 0 || !S_ISREG(held.st_mode) ||
		    held.st_uid != geteuid() || (held.st_mode & 022)) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		/* Poll rather than block: a holder that is stopped must not
		 * stop everyone else past the compile timeout. */
		while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if ((errno != EWOULDBLOCK && errno != EINTR) ||
			    tilec_now() > until) {
				close(fd);
				return -1;
			}
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		/* The holder removes the file before it lets go: the lock is
		 * ours only if the file is still the one under the name. */
		if (fstatat(c->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == held.st_dev && now.st_ino == held.st_ino)
			return fd;
		close(fd);
	}
}

void
tilec_rt_cache_unlock(const TilecCache *c, const char *key, int fd)
{
	if (fd < 0)
		return;
	char name[128];
	snprintf(name, sizeof name, "%s.lock", key);
	(void)unlinkat(c->fd, name, 0);
	close(fd); /* releases the flock */
}

tilec_status
tilec_rt_scratch_dir(tilec_context *ctx, const TilecCache *c, char *out,
		     size_t outlen)
{
	char parent[4096];
	if (c->fd >= 0) {
		snprintf(parent, sizeof parent, "%s", c->dir);
	} else {
		/* Uncached: in $TMPDIR, which must be safe as a parent. */
		const char *tmp = getenv("TMPDIR");
		int fd;
		tilec_status s = tilec_rt_trusted_dir(
			ctx, "the temporary directory (TMPDIR)",
			tmp && *tmp ? tmp : "/tmp", false, &fd, parent,
			sizeof parent);
		if (s != TILEC_OK)
			return s;
		close(fd);
	}
	if (snprintf(out, outlen, "%s/tmp-XXXXXX", parent) >= (int)outlen)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "path too long: %s",
				     parent);
	if (!mkdtemp(out))
		return tilec_rt_fail(ctx, TILEC_ERR_IO,
				     "cannot create a directory in %s: %s",
				     parent, strerror(errno));
	return TILEC_OK;
}
