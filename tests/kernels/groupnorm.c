/* GroupNorm over NCHW activations: the C channels of each sample fall in
 * G groups of CPG adjacent channels, and each group's CPG * HW values
 * (contiguous in memory) are normalized by their own mean and variance,
 * then scaled and shifted per channel.  One block per (sample, group):
 * the statistics are block-level sums (tile_sum) gathered over chunks,
 * then each element finds its channel's gamma and beta through a guarded
 * element-wise load.
 * shape: B=2,G=4,CPG=3,HW=300
 * shape: B=1,G=1,CPG=1,HW=1
 * shape: B=3,G=2,CPG=8,HW=49
 */
#include <tilec.h>

TILE_PARAM(BLOCK_L, 512);

TILE_KERNEL void
groupnorm(int B, int G, int CPG, int HW, const f32 X[B][G][CPG * HW],
	  const f32 gamma[G * CPG], const f32 beta[G * CPG],
	  f32 Y[B][G][CPG * HW])
{
	tile_threads(256);
	int g = tile_grid_x(G);
	int b = tile_grid_y(B);

	tile_fragment f32 x[BLOCK_L];
	tile_fragment f32 x2[BLOCK_L];
	tile_fragment f32 y[BLOCK_L];

	int L = CPG * HW;
	float sum = 0.0f;
	float sumsq = 0.0f;
	for (int c = 0; c < ceildiv(L, BLOCK_L); c++) {
		tile_copy(x, &X[b][g][c * BLOCK_L]);
		tile_parallel(i, BLOCK_L)
			x2[i] = x[i] * x[i];
		float s1 = tile_sum(x);
		float s2 = tile_sum(x2);
		sum = sum + s1;
		sumsq = sumsq + s2;
	}
	float mean = sum / L;
	float rstd = rsqrtf(sumsq / L - mean * mean + 1e-5f);
	for (int c = 0; c < ceildiv(L, BLOCK_L); c++) {
		tile_copy(x, &X[b][g][c * BLOCK_L]);
		tile_parallel(i, BLOCK_L) {
			int l = c * BLOCK_L + i;
			int ch = g * CPG + (l < L ? l / HW : 0);
			y[i] = (x[i] - mean) * rstd * gamma[ch] + beta[ch];
		}
		tile_copy(&Y[b][g][c * BLOCK_L], y);
	}
}
