/*
 * i4_store.c - two threads writing the two nibbles of one byte of a
 * packed i4 tensor at once, as two blocks do where their regions meet
 * inside a byte (tilec_i4_set).  Built with ThreadSanitizer, which
 * reports two threads' plain read-modify-writes of the byte as a data
 * race whether or not they happened to overlap in this run; each thread
 * also checks, before each write, that its nibble still holds its last
 * one (a lost write, where the updates did overlap).  Exit 0 when
 * neither happened.
 */
#include <pthread.h>
#include <stdio.h>

#include "tilec_cpu.h"

enum { ROUNDS = 20000 };

static tilec_i4x2 bytes[1];
static long lost[2];

static void *
writer(void *arg)
{
	int t = (int)(long)arg, last = 0;
	for (int r = 0; r < ROUNDS; r++) {
		tilec_i4x2 b = __atomic_load_n(bytes, __ATOMIC_RELAXED);
		if (r > 0 && tilec_i4_get(&b, t) != last)
			lost[t]++;
		last = (r + 3 * t) % 16 - 8;
		tilec_i4_set(bytes, t, last);
	}
	return NULL;
}

int
main(void)
{
	pthread_t other;
	if (pthread_create(&other, NULL, writer, (void *)1L) != 0)
		return 2;
	writer((void *)0L);
	pthread_join(other, NULL);
	printf("lost writes: %ld and %ld of %d each\n", lost[0], lost[1],
	       ROUNDS);
	return lost[0] || lost[1];
}
