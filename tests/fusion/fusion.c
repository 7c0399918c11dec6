/*
 * fusion.c - what the OpenMP backend may and may not fuse into one pass
 * per row (emitters/openmp.c, "Fusion"), for tests/fusion.sh: each kernel
 * is checked against the reference with `tilec run` on ragged shapes, and
 * its generated C against fusion.openmp.c.  A wrong fusion reads a value
 * before it is computed, and the check fails.  Not a sample.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 2);
TILE_PARAM(BLOCK_N, 128);

/* Everything fuses: two copies in that are never stored (x, and b read
 * from a tensor of another length, so the two have different edges), a
 * nest, a sum into the rows, the copy out.  y is stored: the copy out
 * reads it. */
TILE_KERNEL void
fused(int M, int N, int K, const f16 X[M][N], const f32 B[K], f32 Y[M][N],
      f32 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];
	tile_fragment f32 s[BLOCK_M];

	tile_clear(s);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_copy(b, &B[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			float t = x[i][j] + b[j];
			y[i][j] = t * t;
		}
		tile_reduce_sum(s, y, 1, TILE_ACCUMULATE);
		tile_copy(&Y[bm * BLOCK_M][n0], y);
	}
	tile_copy(&S[bm * BLOCK_M], s);
}

/* The second nest reads the element right of its own in y: in the loop
 * that computes y it would read it before it is computed, so it runs
 * after, and y is stored.  Fused: the copy in with the first nest, the
 * second nest with the copy out. */
TILE_KERNEL void
neighbour(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 z[BLOCK_M][BLOCK_N];

	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = 2.0f * x[i][j] + 1.0f;
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		z[i][j] = j + 1 < BLOCK_N ? y[i][j + 1] : y[i][j];
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], z);
}

/* The nest divides by the row sums the reduction before it computes:
 * the reduction's run ends before the nest. */
TILE_KERNEL void
row_result(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 s[BLOCK_M];

	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_reduce_sum(s, x, 1);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = x[i][j] / (s[i] + 1000.0f);
	tile_copy(&Y[bm * BLOCK_M][0], y);
}

/* The nest writes t only where x is positive; elsewhere t keeps the ones
 * tile_fill put there, so t is read from memory and not elided, although
 * nothing reads it after the reduction. */
TILE_KERNEL void
partial_write(int M, int N, const f32 X[M][N], f32 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], t[BLOCK_M][BLOCK_N];
	tile_fragment f32 s[BLOCK_M];

	tile_fill(t, 1.0f);
	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		if (x[i][j] > 0.0f)
			t[i][j] = x[i][j];
	}
	tile_reduce_sum(s, t, 1);
	tile_copy(&S[bm * BLOCK_M], s);
}

/* Max, min and absmax of the same elements in one loop (integer keys),
 * one of them accumulating across the chunks, with a sum beside them. */
TILE_KERNEL void
extremes(int M, int N, const f16 X[M][N], f32 S[M][4])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 hi[BLOCK_M], lo[BLOCK_M], mag[BLOCK_M], sum[BLOCK_M];
	tile_fragment f32 out[BLOCK_M][4];

	tile_fill(mag, 0.5f);
	tile_clear(sum);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = n0 + j < N ? x[i][j] - 0.25f : 0.0f;
		tile_reduce_max(hi, x, 1);
		tile_reduce_min(lo, x, 1);
		tile_reduce_absmax(mag, x, 1, TILE_ACCUMULATE);
		tile_reduce_sum(sum, x, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M) {
		out[i][0] = hi[i];
		out[i][1] = lo[i];
		out[i][2] = mag[i];
		out[i][3] = sum[i];
	}
	tile_copy(&S[bm * BLOCK_M][0], out);
}

/* The last nest reads x, which the run of the max computed from X and a
 * mask: its run computes x again instead, and x is never stored. */
TILE_KERNEL void
recompute(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 m[BLOCK_M];

	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		x[i][j] = j < N ? x[i][j] : -INFINITY;
	tile_reduce_max(m, x, 1);
	tile_parallel(i, BLOCK_M)
		m[i] = 0.5f * m[i];
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = x[i][j] - m[i];
	tile_copy(&Y[bm * BLOCK_M][0], y);
}

/* The same, but the nest that computed x read w, which changes before
 * the last nest: x is stored, not computed again with the new w. */
TILE_KERNEL void
no_recompute(int M, int N, const f32 X[M][N], const f32 W[N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 w[BLOCK_N], m[BLOCK_M];

	tile_copy(w, &W[0]);
	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		x[i][j] = j < N ? x[i][j] * w[j] : -INFINITY;
	tile_reduce_max(m, x, 1);
	tile_parallel(j, BLOCK_N)
		w[j] = w[j] + 1.0f;
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = x[i][j] * w[j] - m[i];
	tile_copy(&Y[bm * BLOCK_M][0], y);
}

/* In the loop over the columns inside X, n0 + j < N is known and goes;
 * n0 + j < K is not (K is not X's extent) and stays. */
TILE_KERNEL void
masks(int M, int N, int K, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];

	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			y[i][j] = n0 + j < N ? (n0 + j < K ? x[i][j] : 2.0f) : -1.0f;
		tile_copy(&Y[bm * BLOCK_M][n0], y);
	}
}

TILE_PARAM(SQUARE, 8);

/* On a square tile, v is copied by the column (v[j]) and read by the row
 * (v[i]): in one row loop the copy would give each row the column's
 * value, so the nest starts a new run. */
TILE_KERNEL void
square(int M, const f32 X[M][SQUARE], const f32 V[SQUARE], f32 Y[M][SQUARE])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, SQUARE));

	tile_fragment f32 x[SQUARE][SQUARE], y[SQUARE][SQUARE];
	tile_fragment f32 v[SQUARE];

	tile_copy(x, &X[bm * SQUARE][0]);
	tile_copy(v, &V[0]);
	tile_parallel(i, SQUARE) tile_parallel(j, SQUARE)
		y[i][j] = x[i][j] * v[i];
	tile_copy(&Y[bm * SQUARE][0], y);
}

/* Explicit vectors (emitters/openmp_vec.c): the loop calls exp, so on
 * AVX-512 its whole vectors run as tilec_vf.  The body mixes what varies
 * across the lanes (x, the local t, the column buffer b, the elided e)
 * with what does not (the row's scale, a uniform exp2f of it, which stays
 * a scalar call); the sum of e reduces in a vector accumulator. */
TILE_KERNEL void
vector_exp(int M, int N, const f32 X[M][N], const f32 B[N], const f32 R[M],
	   f32 Y[M][N], f32 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], e[BLOCK_M][BLOCK_N];
	tile_fragment f32 y[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];
	tile_fragment f32 r[BLOCK_M], s[BLOCK_M];

	tile_copy(r, &R[bm * BLOCK_M]);
	tile_clear(s);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_copy(b, &B[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			float t = x[i][j] * r[i] - b[j];
			e[i][j] = expf(t) + exp2f(r[i] * 0.5f);
			y[i][j] = -exp2f(0.25f * t) / e[i][j];
		}
		tile_reduce_sum(s, e, 1, TILE_ACCUMULATE);
		tile_copy(&Y[bm * BLOCK_M][n0], y);
	}
	tile_copy(&S[bm * BLOCK_M], s);
}

/* A select on a value that varies keeps the loop scalar (C has no vector
 * ?:), as does an f16 copy in. */
TILE_KERNEL void
vector_not(int M, int N, const f32 X[M][N], const f16 H[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], h[BLOCK_M][BLOCK_N];
	tile_fragment f32 y[BLOCK_M][BLOCK_N];

	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			y[i][j] = x[i][j] > 0.0f ? expf(-x[i][j]) : 1.0f;
		tile_copy(&Y[bm * BLOCK_M][n0], y);
		tile_copy(h, &H[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			y[i][j] = expf(h[i][j]);
		tile_copy(&Y[bm * BLOCK_M][n0], y);
	}
}

/* Vector loops keep buffers in registers too: z, written before it is
 * read and read by nothing after, is a vector local (its first write
 * declares it, the next ones assign it); w is one written once. */
TILE_KERNEL void
vector_local(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 z[BLOCK_M][BLOCK_N], w[BLOCK_M][BLOCK_N];

	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		z[i][j] = expf(-x[i][j] * x[i][j]);
		w[i][j] = 0.5f;
		z[i][j] = z[i][j] * w[i][j] + 1.0f;
		y[i][j] = z[i][j] - x[i][j];
	}
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], y);
}

/* As in recompute, but the run that reads x is the last of a loop and
 * another statement sits between: the run that first computed x (the
 * copy and the mask) then does nothing anyone reads, and is left out
 * (once, its element loop declared x as a loop body, a cc error). */
TILE_KERNEL void
recompute_all(int M, int N, const f32 X[M][N], f32 S[M], f32 T[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 m[BLOCK_M], s[BLOCK_M], t[BLOCK_M];

	tile_fill(m, -INFINITY);
	tile_clear(s);
	tile_clear(t);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			if (c * BLOCK_N + j >= N)
				x[i][j] = -INFINITY;
		}
		tile_parallel(i, BLOCK_M)
			s[i] = s[i] + m[i];
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			y[i][j] = fmaxf(x[i][j], 0.0f);
		tile_reduce_sum(t, y, 1, TILE_ACCUMULATE);
		tile_reduce_max(m, x, 1);
	}
	tile_copy(&S[bm * BLOCK_M], s);
	tile_copy(&T[bm * BLOCK_M], t);
}

/* A copy whose origin may be negative (a tile one column to the left of
 * the block's) keeps its lower-bound test, so it does not join a run: a
 * row copy would read X[-1] for the first block.  The nest and the
 * reduction after it still fuse. */
TILE_KERNEL void
shifted(int M, int N, const f32 X[M][N], f32 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment f32 s[BLOCK_M];

	tile_clear(s);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N - 1]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			y[i][j] = x[i][j] * x[i][j];
		tile_reduce_sum(s, y, 1, TILE_ACCUMULATE);
	}
	tile_copy(&S[bm * BLOCK_M], s);
}
