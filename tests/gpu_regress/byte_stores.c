/* One thread's stores of adjacent bytes in shared memory.  NVRTC 13.0
 * merged them into 16- and 32-bit stores at addresses they are not
 * aligned to (st.shared.u16 at t + 8 * i + 1, st.shared.u32 at
 * t + 8 * i + 2): CUDA_ERROR_MISALIGNED_ADDRESS on the H200 (gen seed
 * 4095 k4; nvcc of the same toolkit is right).  The CUDA output stores
 * one-byte shared elements through tilec::put, a volatile store NVRTC
 * keeps whole (tests/gen/FINDINGS.md, bug 20); tests/nvrtc_align.py
 * checks the PTX NVRTC makes of this file.
 * shape: M=7,K=5,sel=1
 * shape: M=1,K=1,sel=0
 * expect-cuda: tilec::put\(&t\[
 * expect-cuda: tilec::put\(&u\[
 * reject-hip: tilec::put
 */
#include <tilec.h>

TILE_KERNEL void
byte_stores(int M, int K, int sel, i64 Y[M][2][4], u8 Z[M][2][4])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 2));
	tile_shared u8 u[2][2][4];
	tile_shared i8 t[2][2][4];
	for (int c = 0; c < K; c++) {
		tile_fill(u, c);
		tile_parallel(i, 2) {
			int s = c > b0 ? c : min(i, b0);
			tile_parallel(j, 2) {
				tile_parallel(l, 4) {
					if (l == 0 && sel < b0 && s != 3)
						t[i][j][l] = sel;
					else
						t[i][j][l] = j;
				}
			}
		}
		tile_copy(&Y[b0 * 2][0][0], t);
		tile_copy(&Z[b0 * 2][0][0], u);
	}
}
