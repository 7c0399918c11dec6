/*
 * stream_out.c - templates/cpu/tilec_cpu.h's row stores for outputs a
 * kernel only writes (tilec_store_T_out, passes/cpu_stream.c): for every
 * row type, every length 0 .. 200 and every element boundary 0 .. 15
 * bytes past a 64-byte boundary, with the output's size below
 * TILEC_STREAM_OUT (the cached path) and at it (non-temporal stores), the
 * bytes written equal tilec_store_T's, bit for bit, and nothing before or
 * after the row changes.  The floats are random bit patterns (NaNs, infinities,
 * subnormals, ties among them).  Built by tests/cpu_math.sh with the flags
 * generated kernels get.
 */
#include "tilec/cpu/tilec_cpu.h"

#include <stdio.h>
#include <stdlib.h>

enum { MAXN = 200, PAD = 64 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

#define CHECK(T, SIZE)                                                        \
	static int check_##T(const float *src)                                \
	{                                                                     \
		_Alignas(64) unsigned char want[MAXN * SIZE + 2 * PAD],       \
			got[MAXN * SIZE + 2 * PAD];                           \
		int bad = 0;                                                  \
		for (int n = 0; n <= MAXN; n++)                               \
			for (int off = 0; off < 16; off += SIZE)              \
				for (int big = 0; big < 2; big++) {           \
					memset(want, 0xa5, sizeof want);      \
					memset(got, 0xa5, sizeof got);        \
					tilec_store_##T((void *)(want + PAD + \
								 off),        \
							src, n);              \
					tilec_store_##T##_out(                \
						(void *)(got + PAD + off),    \
						src, n,                       \
						big ? TILEC_STREAM_OUT        \
						    : TILEC_STREAM_OUT - 1);  \
					tilec_stream_fence();                 \
					if (memcmp(want, got, sizeof want) && \
					    bad++ < 3)                        \
						printf("FAIL: %s, %d "        \
						       "elements at +%d, %s\n", \
						       #T, n, off,            \
						       big ? "streamed"       \
							   : "cached");       \
				}                                             \
		return bad;                                                   \
	}

/* Rows start at every element boundary of a 16-byte line. */
CHECK(f32, 4)
CHECK(f16, 2)
CHECK(bf16, 2)
CHECK(fp8e4m3, 1)
CHECK(fp8e5m2, 1)

int
main(void)
{
	float src[MAXN];
	for (int i = 0; i < MAXN; i++) {
		uint32_t u = next();
		memcpy(&src[i], &u, 4);
	}
	int bad = check_f32(src) + check_f16(src) + check_bf16(src) +
		  check_fp8e4m3(src) + check_fp8e5m2(src);
	if (bad) {
		printf("stream_out: %d rows differ\n", bad);
		return 1;
	}
	printf("stream_out: every row type, length and start the same, "
	       "streamed and cached\n");
	return 0;
}
