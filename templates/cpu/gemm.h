/*
 * gemm.h - register-blocked matrix micro-kernels for tile_gemm on the CPU.
 *
 * tilec_gemm_f32_ARCH(m, n, k, c, ldc, a, lda, trans_a, b, ldb, trans_b)
 * computes c[m][n] += op(a)[m][k] * op(b)[k][n] on float tiles in a block's
 * buffers (row-major, leading dimensions lda, ldb, ldc; op transposes when
 * the flag is set: a stored k x m, b stored n x k).  The OpenMP backend
 * picks ARCH (avx512, avx2, generic) from the target at translation time;
 * the AVX versions carry target attributes, so they build whatever -m
 * flags the file is compiled with.
 *
 * Structure (the usual one for cache-resident tiles): the outer loop walks
 * NR-wide column panels of b, packed into a contiguous k x NR strip that
 * stays in L1 when b is transposed or the panel is partial; the inner loop
 * walks MR-row strips of a; the micro-kernel keeps an MR x NR block of c in
 * registers across all of k, loading one row of the b strip and
 * broadcasting MR elements of a per step (MR * NR / W FMAs per step).
 *
 * Self-contained (generated files include it before tilec_cpu.h).  Sizes
 * are small (one block's tiles); the k x NR panel lives on the stack.
 */
#ifndef TILEC_CPU_GEMM_H
#define TILEC_CPU_GEMM_H

/* Every helper is static inline and most files use a few: inlined into a
 * --standalone file, clang would call the rest unused. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

#include <stddef.h>

/* The trans_a / trans_b arguments. */
enum { TILEC_NOTRANS = 0, TILEC_TRANS = 1 };

/* Copy columns j0 .. j0 + nr of op(b) into panel[k][width], zero-padded. */
static inline void
tilec_gemm_pack_b(float *restrict panel, int width, int k, const float *b,
		  int ldb, int trans_b, int j0, int nr)
{
	for (int p = 0; p < k; p++) {
		for (int j = 0; j < nr; j++)
			panel[p * width + j] = trans_b ? b[(size_t)(j0 + j) * ldb + p]
						       : b[(size_t)p * ldb + j0 + j];
		for (int j = nr; j < width; j++)
			panel[p * width + j] = 0.0f;
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* --- AVX-512: 14 x 32 (28 accumulators of 16 floats) ---------------------- */

#define TILEC_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,fma")))
#define TILEC_AVX512_MR 14
#define TILEC_AVX512_NR 32

/* c[0 .. mr)[0 .. 32) += a-strip * b-strip; cmask0/1 select the valid
 * columns of c in each half.  mr is a constant at every call. */
static inline __attribute__((always_inline)) TILEC_AVX512 void
tilec_ukr_avx512(int mr, int k, const float *a, size_t a_rs, size_t a_cs,
		 const float *b, size_t ldb, float *c, size_t ldc,
		 __mmask16 cmask0, __mmask16 cmask1)
{
	__m512 acc[TILEC_AVX512_MR][2];
#pragma GCC unroll 14
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm512_maskz_loadu_ps(cmask0, c + r * ldc);
		acc[r][1] = _mm512_maskz_loadu_ps(cmask1, c + r * ldc + 16);
	}
	for (int p = 0; p < k; p++) {
		__m512 b0 = _mm512_loadu_ps(b + p * ldb);
		__m512 b1 = _mm512_loadu_ps(b + p * ldb + 16);
#pragma GCC unroll 14
		for (int r = 0; r < mr; r++) {
			__m512 ar = _mm512_set1_ps(a[r * a_rs + p * a_cs]);
			acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
			acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
		}
	}
#pragma GCC unroll 14
	for (int r = 0; r < mr; r++) {
		_mm512_mask_storeu_ps(c + r * ldc, cmask0, acc[r][0]);
		_mm512_mask_storeu_ps(c + r * ldc + 16, cmask1, acc[r][1]);
	}
}

static inline TILEC_AVX512 void
tilec_gemm_f32_avx512(int m, int n, int k, float *c, int ldc, const float *a,
		      int lda, int trans_a, const float *b, int ldb,
		      int trans_b)
{
	enum { MR = TILEC_AVX512_MR, NR = TILEC_AVX512_NR };
	_Alignas(64) float panel[k > 0 ? k : 1][NR];
	size_t a_rs = trans_a ? 1 : (size_t)lda;
	size_t a_cs = trans_a ? (size_t)lda : 1;
	for (int j0 = 0; j0 < n; j0 += NR) {
		int nr = n - j0 < NR ? n - j0 : NR;
		const float *bp = b + j0;
		size_t ldbp = (size_t)ldb;
		if (trans_b || nr < NR) {
			tilec_gemm_pack_b(&panel[0][0], NR, k, b, ldb, trans_b,
					  j0, nr);
			bp = &panel[0][0];
			ldbp = NR;
		}
		__mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
		__mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff
					   : nr <= 16  ? 0
						       : (1u << (nr - 16)) - 1);
		for (int i0 = 0; i0 < m; i0 += MR) {
			const float *ap = a + i0 * a_rs;
			float *cp = c + (size_t)i0 * ldc + j0;
			switch (m - i0 < MR ? m - i0 : MR) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_avx512(r, k, ap, a_rs, a_cs, bp, ldbp, cp,         \
				 (size_t)ldc, m0, m1);                        \
		break;
				TILEC_CASE(14) TILEC_CASE(13) TILEC_CASE(12)
				TILEC_CASE(11) TILEC_CASE(10) TILEC_CASE(9)
				TILEC_CASE(8) TILEC_CASE(7) TILEC_CASE(6)
				TILEC_CASE(5) TILEC_CASE(4) TILEC_CASE(3)
				TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
			}
		}
	}
}

/* --- AVX2: 6 x 16 (12 accumulators of 8 floats) --------------------------- */

#define TILEC_AVX2 __attribute__((target("avx2,fma")))
#define TILEC_AVX2_MR 6
#define TILEC_AVX2_NR 16

/* c[0 .. mr)[0 .. 16) += a-strip * b-strip, c a full-width block. */
static inline __attribute__((always_inline)) TILEC_AVX2 void
tilec_ukr_avx2(int mr, int k, const float *a, size_t a_rs, size_t a_cs,
	       const float *b, size_t ldb, float *c, size_t ldc)
{
	__m256 acc[TILEC_AVX2_MR][2];
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm256_loadu_ps(c + r * ldc);
		acc[r][1] = _mm256_loadu_ps(c + r * ldc + 8);
	}
	for (int p = 0; p < k; p++) {
		__m256 b0 = _mm256_loadu_ps(b + p * ldb);
		__m256 b1 = _mm256_loadu_ps(b + p * ldb + 8);
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			__m256 ar = _mm256_broadcast_ss(a + r * a_rs + p * a_cs);
			acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);
			acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		_mm256_storeu_ps(c + r * ldc, acc[r][0]);
		_mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
	}
}

static inline TILEC_AVX2 void
tilec_gemm_f32_avx2(int m, int n, int k, float *c, int ldc, const float *a,
		    int lda, int trans_a, const float *b, int ldb, int trans_b)
{
	enum { MR = TILEC_AVX2_MR, NR = TILEC_AVX2_NR };
	_Alignas(32) float panel[k > 0 ? k : 1][NR];
	_Alignas(32) float edge[MR][NR]; /* c's block when n - j0 < NR */
	size_t a_rs = trans_a ? 1 : (size_t)lda;
	size_t a_cs = trans_a ? (size_t)lda : 1;
	for (int j0 = 0; j0 < n; j0 += NR) {
		int nr = n - j0 < NR ? n - j0 : NR;
		const float *bp = b + j0;
		size_t ldbp = (size_t)ldb;
		if (trans_b || nr < NR) {
			tilec_gemm_pack_b(&panel[0][0], NR, k, b, ldb, trans_b,
					  j0, nr);
			bp = &panel[0][0];
			ldbp = NR;
		}
		for (int i0 = 0; i0 < m; i0 += MR) {
			int mr = m - i0 < MR ? m - i0 : MR;
			const float *ap = a + i0 * a_rs;
			float *cp = c + (size_t)i0 * ldc + j0;
			size_t ldcp = (size_t)ldc;
			if (nr < NR) {
				for (int r = 0; r < mr; r++)
					for (int j = 0; j < NR; j++)
						edge[r][j] = j < nr ? cp[r * ldc + j] : 0.0f;
				cp = &edge[0][0];
				ldcp = NR;
			}
			switch (mr) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_avx2(r, k, ap, a_rs, a_cs, bp, ldbp, cp, ldcp);    \
		break;
				TILEC_CASE(6) TILEC_CASE(5) TILEC_CASE(4)
				TILEC_CASE(3) TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
			}
			if (nr < NR)
				for (int r = 0; r < mr; r++)
					for (int j = 0; j < nr; j++)
						c[(size_t)(i0 + r) * ldc + j0 + j] = edge[r][j];
		}
	}
}
#endif /* x86-64 */

/* --- Portable: 4 x 16 in arrays the compiler vectorizes ------------------- */

#define TILEC_GENERIC_MR 4
#define TILEC_GENERIC_NR 16

static inline void
tilec_gemm_f32_generic(int m, int n, int k, float *c, int ldc,
		       const float *a, int lda, int trans_a, const float *b,
		       int ldb, int trans_b)
{
	enum { MR = TILEC_GENERIC_MR, NR = TILEC_GENERIC_NR };
	float panel[k > 0 ? k : 1][NR];
	size_t a_rs = trans_a ? 1 : (size_t)lda;
	size_t a_cs = trans_a ? (size_t)lda : 1;
	for (int j0 = 0; j0 < n; j0 += NR) {
		int nr = n - j0 < NR ? n - j0 : NR;
		tilec_gemm_pack_b(&panel[0][0], NR, k, b, ldb, trans_b, j0, nr);
		for (int i0 = 0; i0 < m; i0 += MR) {
			int mr = m - i0 < MR ? m - i0 : MR;
			float acc[MR][NR] = { { 0 } };
			for (int p = 0; p < k; p++)
				for (int r = 0; r < MR; r++) {
					float ar = r < mr ? a[(i0 + r) * a_rs + p * a_cs]
							  : 0.0f;
					for (int j = 0; j < NR; j++)
						acc[r][j] += ar * panel[p][j];
				}
			for (int r = 0; r < mr; r++)
				for (int j = 0; j < nr; j++)
					c[(size_t)(i0 + r) * ldc + j0 + j] += acc[r][j];
		}
	}
}

#pragma GCC diagnostic pop

#endif /* TILEC_CPU_GEMM_H */
