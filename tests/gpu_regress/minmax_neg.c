/* Three-way integer max and min of a negated value.  ptxas of CUDA 13.0
 * for sm_90 fuses max(max(-x, a), b) into one three-input instruction
 * and drops the negation (three of four elements wrong on the H200; the
 * PTX is right); the CUDA output negates through tilec::neg, whose
 * negation it keeps (tests/gen/FINDINGS.md, bug 19).
 * Y[j] = max(max(-X[j], A[j]), B[j]) + min(min(-X[j], A[j]), B[j]) * 16,
 * and Z[j] the same of an i64 -X[j] narrowed to int (gen seed
 * 1215 k13).
 * shape: N=1000
 * expect-cuda: tilec::neg\(x\[j_r\]\)
 * expect-cuda: \(int\)tilec::neg\(w\[j_r\]\)
 * reject-hip: tilec::neg
 */
#include <tilec.h>

TILE_KERNEL void
minmax_neg(int N, const i32 X[N], const i32 A[N], const i32 B[N], i32 Y[N],
	   i32 Z[N])
{
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment i32 x[128];
	tile_fragment i32 a[128];
	tile_fragment i32 c[128];
	tile_fragment i64 w[128];
	tile_copy(x, &X[b * 128]);
	tile_copy(a, &A[b * 128]);
	tile_copy(c, &B[b * 128]);
	tile_copy(w, &X[b * 128]);
	tile_parallel(j, 128) {
		x[j] = max(max(-x[j], a[j]), c[j]) + min(min(-x[j], a[j]), c[j]) * 16;
		a[j] = max(max((i32)-w[j], a[j]), c[j]) + min(min((i32)-w[j], a[j]), c[j]) * 16;
	}
	tile_copy(&Y[b * 128], x);
	tile_copy(&Z[b * 128], a);
}
