/* A tile copy whose origin is negative along a tensor dim the tile does
 * not cover: the whole row reads as zeros (the GPU copies once tested only
 * row < N and read X[0][N - 1] for X[1][-1]).  Y = X[1][row], or zeros
 * where row is outside [0, N).
 * shape: N=4,D=64,row=-1
 * shape: N=4,D=64,row=2
 * shape: N=4,D=64,row=4
 * shape: N=3,D=50,row=-3
 * expect-cuda: \(1 < 2 && 0 <= row && row < N\) \? 1 : 0
 */
#include <tilec.h>

TILE_KERNEL void
neg_origin_uncovered(int N, int D, int row, const f32 X[2][N][D], f32 Y[D])
{
	tile_fragment f32 r[64];
	tile_copy(r, &X[1][row][0]);
	tile_copy(&Y[0], r);
}
