/*
 * buf.c - the growable text buffer every printer writes through.
 *
 * Appends are printf-checked.  The buffer owns indentation: text that starts
 * a line is preceded by `indent` tabs, so printers never count spaces.
 * tc_read_file reads a whole file through one.
 */
#include "tilec_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
