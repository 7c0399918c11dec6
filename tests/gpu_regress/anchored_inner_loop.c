/* A tile_parallel loop over shared memory inside one that follows a
 * register fragment's rows: the inner loop is spread over the threads
 * that hold the same row (its peers), and the fragments stay in
 * registers (every fragment once moved to shared memory, because no
 * thread mapping served such a nest).  With 96 threads, not a power of
 * two, the inner loop runs serially in each peer and one stores.
 * Y[i][j] = X[i][j] + W[i][j] * sum_j X[i][j].
 * shape: M=70
 * shape: M=3
 * expect-ir: parallel j in 0 \.\. BN spread over peers \{
 * expect-ir: fragment f32 x\[BM\]\[BN\] \(layout blocked
 * reject-ir: fragment f32 s\[BM\] \(layout smem
 * expect-cuda: tilec::peer_rank<x_rows::BITS>\(\)
 */
#include <tilec.h>

TILE_PARAM(BM, 32);
TILE_PARAM(BN, 64);
TILE_PARAM(THREADS, 128, 96, 128, 256);

TILE_KERNEL void
anchored_inner_loop(int M, const f32 X[M][BN], const f32 W[M][BN],
		    f32 Y[M][BN])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(M, BM));
	tile_shared f32 Ws[BM][BN];
	tile_shared f32 Zs[BM][BN];
	tile_fragment f32 x[BM][BN];
	tile_fragment f32 s[BM];
	tile_copy(Ws, &W[bm * BM][0]);
	tile_copy(x, &X[bm * BM][0]);
	tile_reduce_sum(s, x, 1);
	tile_parallel(i, BM) {
		float sc = s[i];
		tile_parallel(j, BN)
			Zs[i][j] = Ws[i][j] * sc;
	}
	tile_parallel(i, BM) tile_parallel(j, BN)
		x[i][j] += Zs[i][j];
	tile_copy(&Y[bm * BM][0], x);
}
