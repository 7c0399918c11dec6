/*
 * strip_blocks.c - tilec_strip_blocks (templates/cpu/tilec_cpu.h): the
 * strip length a gemm kernel takes at run time, for every thread count
 * from 1 to 64 and grids from one block to 40 x 40.  The length must be
 * one whose busiest thread (schedule(static) over the strips) runs the
 * fewest blocks, the longest such; the grids the benchmarks use are
 * spelled out.  Prints the first disagreement (status 1) or a summary.
 */
#include "tilec/cpu/tilec_cpu.h"

#include <stdio.h>

/* Blocks the busiest thread runs: each of its strips counted whole. */
static long long
busiest(int n, int cols, long long rows, int threads)
{
	long long strips = rows * ((cols + n - 1) / n);
	return (strips + threads - 1) / threads * n;
}

static int
expect(int most, int cols, long long rows, int threads, int want)
{
	omp_set_num_threads(threads);
	int got = tilec_strip_blocks(most, cols, rows);
	if (got == want)
		return 0;
	printf("FAIL: %d columns, %lld rows, %d threads: strips of %d, not %d\n",
	       cols, rows, threads, got, want);
	return 1;
}

int
main(void)
{
	int bad = 0;
	/* M=16, N=K=8192 with 16 x 256 tiles: one row of 32 blocks. */
	bad |= expect(4, 32, 1, 16, 2);
	bad |= expect(4, 32, 1, 8, 4);
	bad |= expect(4, 32, 1, 2, 4);
	/* 4096^3 and 2048^3 with 256 x 256 tiles. */
	bad |= expect(4, 16, 16, 16, 4);
	bad |= expect(4, 8, 8, 16, 4);
	/* 2048^3 on 12 threads: strips of 3 (one each, 3 blocks) beat
	 * strips of 4 (two for some threads, 8 blocks). */
	bad |= expect(4, 8, 8, 12, 3);
	long long cases = 0;
	for (int threads = 1; threads <= 64; threads++) {
		omp_set_num_threads(threads);
		for (int rows = 1; rows <= 40; rows++)
			for (int cols = 1; cols <= 40; cols++) {
				int got = tilec_strip_blocks(4, cols, rows);
				long long b = busiest(got, cols, rows, threads);
				for (int n = 1; n <= 4; n++) {
					long long o = busiest(n, cols, rows, threads);
					if (o < b || (o == b && n > got)) {
						printf("FAIL: %d columns, %d rows, %d "
						       "threads: strips of %d (busiest "
						       "thread %lld blocks), not %d "
						       "(%lld)\n", cols, rows, threads,
						       got, b, n, o);
						return 1;
					}
				}
				cases++;
			}
	}
	if (bad)
		return 1;
	printf("strip lengths: %lld grids and thread counts\n", cases);
	return 0;
}
