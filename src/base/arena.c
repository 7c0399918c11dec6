/*
 * arena.c - bump allocation for one compilation, and pointer vectors.
 *
 * Everything the translator builds for a program (IR, names, vectors) lives
 * in one arena and dies with it: no frees, no ownership questions.  Out of
 * memory is fatal here, as in any compiler.
 */
#include "ir/tilec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TcChunk {
	struct TcChunk *next; /* older chunks */
	size_t used;          /* bytes handed out from data */
	size_t size;          /* bytes in data */
	_Alignas(16) unsigned char data[];
} TcChunk;

struct TcArena {
	TcChunk *head; /* the chunk being filled; NULL before the first alloc */
};

TC_NORETURN void
tc_bug(const char *file, int line, const char *msg)
{
	fprintf(stderr, "%s:%d: internal error: %s\n", file, line, msg);
	abort();
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fputs("tilec: out of memory\n", stderr);
		abort();
	}
	return p;
}

TcArena *
tc_arena_new(void)
{
	TcArena *a = xmalloc(sizeof *a);
	a->head = NULL;
	return a;
}

void
tc_arena_free(TcArena *a)
{
	if (!a)
		return;
	for (TcChunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *
tc_alloc(TcArena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	TcChunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t want = size > 64 * 1024 ? size : 64 * 1024;
		c = xmalloc(sizeof *c + want);
		c->next = a->head;
		c->used = 0;
		c->size = want;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *
tc_strndup(TcArena *a, const char *s, size_t n)
{
	char *p = tc_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
tc_strdup(TcArena *a, const char *s)
{
	return tc_strndup(a, s, strlen(s));
}

char *
tc_fmt(TcArena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = tc_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

void
tc_vec_push(TcArena *a, TcVec *v, void *item)
{
	if (v->len == v->cap) {
		int cap = v->cap ? v->cap * 2 : 8;
		void **items = tc_alloc(a, sizeof(void *) * (size_t)cap);
		if (v->len)
			memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
		v->items = items;
		v->cap = cap;
	}
	v->items[v->len++] = item;
}

/* "96 KiB", "1.5 MiB", "100 bytes". */
const char *
tc_size_text(TcArena *a, long long bytes)
{
	if (bytes < 1024)
		return tc_fmt(a, "%lld bytes", bytes);
	const char *unit = bytes < 1024 * 1024 ? "KiB" : "MiB";
	long long scale = bytes < 1024 * 1024 ? 1024 : 1024 * 1024;
	if (bytes % scale == 0)
		return tc_fmt(a, "%lld %s", bytes / scale, unit);
	return tc_fmt(a, "%.1f %s", (double)bytes / (double)scale, unit);
}
