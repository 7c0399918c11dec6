/*
 * buf.c - the growable text buffer every printer writes through.
 *
 * Appends are printf-checked.  The buffer owns indentation: text that starts
 * a line is preceded by `indent` tabs, so printers never count spaces.
 * tc_read_file reads a whole file through one; tc_write_file writes one
 * whole or not at all (a temporary file in the same directory, renamed
 * over the old one), which every command that writes files uses.
 */
#include "ir/tilec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void
tc_buf_init(TcBuf *b)
{
	memset(b, 0, sizeof *b);
	b->at_bol = true;
}

void
tc_buf_free(TcBuf *b)
{
	free(b->data);
	tc_buf_init(b);
}

static void
reserve(TcBuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p) {
		fputs("tilec: out of memory\n", stderr);
		abort();
	}
	b->data = p;
	b->cap = cap;
}

/* Append raw bytes, inserting indentation at each line start. */
static void
append(TcBuf *b, const char *s, size_t n)
{
	while (n > 0) {
		if (b->at_bol && *s != '\n') {
			reserve(b, (size_t)b->indent);
			for (int i = 0; i < b->indent; i++)
				b->data[b->len++] = '\t';
		}
		const char *nl = memchr(s, '\n', n);
		size_t k = nl ? (size_t)(nl - s) + 1 : n;
		reserve(b, k);
		memcpy(b->data + b->len, s, k);
		b->len += k;
		b->data[b->len] = '\0';
		b->at_bol = nl != NULL;
		s += k;
		n -= k;
	}
	if (!b->data) {
		reserve(b, 0);
		b->data[0] = '\0';
	}
}

void
tc_buf_vprintf(TcBuf *b, const char *fmt, va_list ap)
{
	char small[512];
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return;
	}
	if ((size_t)n < sizeof small) {
		append(b, small, (size_t)n);
	} else {
		char *big = malloc((size_t)n + 1);
		if (!big) {
			fputs("tilec: out of memory\n", stderr);
			abort();
		}
		vsnprintf(big, (size_t)n + 1, fmt, ap2);
		append(b, big, (size_t)n);
		free(big);
	}
	va_end(ap2);
}

void
tc_buf_printf(TcBuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
tc_buf_puts(TcBuf *b, const char *s)
{
	append(b, s, strlen(s));
}

void
tc_buf_append(TcBuf *b, const void *data, size_t n)
{
	append(b, data, n);
}

char *
tc_buf_take(TcBuf *b)
{
	if (!b->data)
		append(b, "", 0);
	char *p = b->data;
	tc_buf_init(b);
	return p;
}

char *
tc_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	TcBuf b;
	tc_buf_init(&b);
	char chunk[16384];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		tc_buf_append(&b, chunk, n);
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		tc_buf_free(&b);
		errno = EIO;
		return NULL;
	}
	if (len)
		*len = b.len;
	return tc_buf_take(&b);
}

/* Create a new temporary file next to path, "<path>.tmp-<pid>-<n>", with
 * mode 0666 less the umask (mkstemp's 0600 would be kept by the rename);
 * its name in *tmp (malloc'd).  Returns the descriptor, or -1 with errno
 * set. */
static int
create_temporary(const char *path, char **tmp)
{
	static atomic_uint counter;
	size_t n = strlen(path) + 48;
	*tmp = malloc(n);
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned salt = (unsigned)ts.tv_nsec;
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned k = atomic_fetch_add(&counter, 1);
		snprintf(*tmp, n, "%s.tmp-%ld-%x", path, (long)getpid(),
			 (salt + k * 2654435761u) & 0xffffffu);
		int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
					    O_NOFOLLOW,
			      0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* The signals that end a process by default when a user or a job
 * scheduler stops it, held back while a temporary file exists so that
 * none is left behind: they are delivered once it is renamed or gone. */
static void
hold_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* All of data to fd; false with errno set. */
static bool
write_all(int fd, const char *data, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return false;
		}
		done += (size_t)w;
	}
	return true;
}

/* Sync the directory that holds path, so a rename in it is durable. */
static void
sync_directory(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path))
			  : strdup(".");
	if (!dir)
		return;
	int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

bool
tc_write_file(const char *path, const void *data, size_t len)
{
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return false;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		/* A device or a pipe (/dev/null, /dev/stdout): nothing to
		 * rename over, written as it is. */
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		bool ok = write_all(fd, data, len);
		int e = errno;
		ok = close(fd) == 0 && ok;
		errno = ok ? 0 : e;
		return ok;
	}
	/* Through a symbolic link, the file it names is replaced and the
	 * link kept. */
	char *real = NULL;
	struct stat lst;
	if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) &&
	    !(real = realpath(path, NULL)))
		return false;
	const char *target = real ? real : path;

	sigset_t old;
	hold_signals(&old);
	char *tmp = NULL;
	int fd = create_temporary(target, &tmp);
	bool ok = fd >= 0 && write_all(fd, data, len);
	int e = errno;
	if (fd >= 0) {
		/* The old file's permissions carry over to the new one. */
		if (ok && exists)
			ok = fchmod(fd, st.st_mode & 07777) == 0;
		ok = ok && fsync(fd) == 0;
		e = ok ? e : errno;
		ok = close(fd) == 0 && ok;
		e = ok ? e : errno;
	}
	if (ok && rename(tmp, target) != 0) {
		ok = false;
		e = errno;
	}
	if (!ok && fd >= 0)
		unlink(tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ok)
		sync_directory(target);
	free(tmp);
	free(real);
	errno = ok ? 0 : (e ? e : EIO);
	return ok;
}

bool
tc_check_writable(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return false;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 && errno != ENXIO)
			return false;
		if (fd >= 0)
			close(fd);
		return true;
	}
	char *real = realpath(path, NULL);
	const char *target = real ? real : path;
	sigset_t old;
	hold_signals(&old);
	char *tmp = NULL;
	int fd = create_temporary(target, &tmp);
	int e = errno;
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(tmp);
	free(real);
	errno = fd >= 0 ? 0 : e;
	return fd >= 0;
}
