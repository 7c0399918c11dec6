/* A copy into a register fragment of a narrower float type rounds each
 * element to it, as a store into the fragment does: the GPU backends hold
 * f16, bf16 and fp8 fragments as floats, and their vectorized copies from
 * a tensor or a shared tile of another type (bf16 into fp8e4m3, f32 into
 * f16) converted to float only, so 0.51953125 (bf16) stayed itself where
 * fp8e4m3 holds 0.5 (tests/gen/FINDINGS.md; seed 7004 k11 of
 * +narrow_all on the H200).  The copy element by element (a tensor dim
 * with a stride, here W's column into w) missed the rounding too: f16
 * into fp8e5m2 kept the f16 value (seed 10049 k0 under the HIP emulator;
 * the CUDA output was the same).  A copy from the fragment's own type, or
 * fp8 into f16, needs no rounding and gets none.
 * shape: N=300
 * run: --tol 1e-6
 * expect-cuda: x\[r0\] = tilec::to_float\(tilec::from_float<tilec::fp8e4m3>\(x\[r0\]\)\)
 * expect-cuda: w\[r0\] = tilec::to_float\(tilec::from_float<tilec::fp8e5m2>\(w\[r0\]\)\)
 */
#include <tilec.h>

TILE_KERNEL void
narrow_fragment_copy(int N, const bf16 X[N], const f32 Y[N],
		     const f16 W[N][2], f16 A[N], f16 B[N], f16 C[N], f32 D[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment fp8e4m3 x[64];
	tile_fragment f16 y[64];
	tile_shared f32 ys[64];
	tile_fragment f16 z[64];
	tile_fragment fp8e5m2 w[64];
	tile_copy(x, &X[b * 64]);
	tile_copy(w, tile_dims(&W[b * 64][1], 0));
	tile_copy(y, &Y[b * 64]);
	tile_copy(ys, &Y[b * 64]);
	tile_copy(z, ys);
	tile_parallel(i, 64)
		y[i] = y[i] * 3.0f;
	tile_copy(&A[b * 64], x);
	tile_copy(&B[b * 64], y);
	tile_copy(&C[b * 64], z);
	tile_copy(&D[b * 64], w);
}
