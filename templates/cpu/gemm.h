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
#include <stdio.h>
#include <stdlib.h>

/* The trans_a / trans_b arguments. */
enum { TILEC_NOTRANS = 0, TILEC_TRANS = 1 };

/* Min of two ints (the drivers' edge arithmetic). */
static inline int
tilec_gemm_min(int x, int y)
{
	return x < y ? x : y;
}

/* Pack nr columns of op(b) (k-row stride rs, column stride cs) over kc
 * rows as pb[p][NR], columns past nr zero: one contiguous panel that
 * stays in L1 (a block buffer's rows, 1 KiB apart, would fall into a few
 * cache sets). */
static inline void
tilec_gemm_pack_b(float *restrict pb, int NR, const float *b, size_t rs,
		  size_t cs, int nr, int kc)
{
	if (cs == 1 && nr == NR) {
		for (int p = 0; p < kc; p++)
			for (int j = 0; j < NR; j++) /* NR is a constant */
				pb[p * NR + j] = b[p * rs + j];
		return;
	}
	for (int p = 0; p < kc; p++) {
		for (int j = 0; j < nr; j++)
			pb[p * NR + j] = b[p * rs + j * cs];
		for (int j = nr; j < NR; j++)
			pb[p * NR + j] = 0.0f;
	}
}

/* The loops around a micro-kernel (the GotoBLAS structure on a block's
 * tiles): for each kc-deep slice of k and each NR-column panel of op(b),
 * packed into an L1-resident kc x NR strip, every MR-row strip of op(a)
 * runs UKR(mr, kb, a, a_rs, a_cs, pb, c, ldc, nr), adding the strip's
 * product into c[mr][nr].  op(a) is read in place: a block's buffer is
 * contiguous and stays in L2, and a strip steps through it row by row (or,
 * transposed, along one row).  kc comes from the cpu_gemm pass (the L1
 * size); the panel lives on the thread's stack. */
#define TILEC_GEMM_F32_LOOPS(MR, NR, ALIGN, UKR)                              \
	if (m <= 0 || n <= 0 || k <= 0)                                      \
		return;                                                      \
	kc = kc < 1 ? 1 : tilec_gemm_min(kc, k);                             \
	_Alignas(ALIGN) float pb[kc * NR];                                   \
	size_t a_rs = trans_a ? 1 : (size_t)lda;                             \
	size_t a_cs = trans_a ? (size_t)lda : 1;                             \
	size_t b_rs = trans_b ? 1 : (size_t)ldb;                             \
	size_t b_cs = trans_b ? (size_t)ldb : 1;                             \
	for (int p0 = 0; p0 < k; p0 += kc) {                                 \
		int kb = tilec_gemm_min(kc, k - p0);                         \
		for (int j0 = 0; j0 < n; j0 += NR) {                         \
			int nr = tilec_gemm_min(NR, n - j0);                 \
			tilec_gemm_pack_b(pb, NR, b + p0 * b_rs + j0 * b_cs, \
					  b_rs, b_cs, nr, kb);               \
			for (int i0 = 0; i0 < m; i0 += MR)                   \
				UKR(tilec_gemm_min(MR, m - i0), kb,          \
				    a + i0 * a_rs + p0 * a_cs, a_rs, a_cs,   \
				    pb, c + (size_t)i0 * ldc + j0,           \
				    (size_t)ldc, nr);                        \
		}                                                            \
	}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Four rows of 16 bytes (row stride rs) as 16 quads, column by column:
 * d[4 j + h] = s[h rs + j], the layout vpdpbusd and tdpbssd read b in
 * (a 4 x 16 byte transpose; SSE2, which every x86-64 has). */
static inline void
tilec_gemm_quads_s8(signed char *restrict d, const signed char *s, size_t rs)
{
	__m128i r0 = _mm_loadu_si128((const __m128i *)s);
	__m128i r1 = _mm_loadu_si128((const __m128i *)(s + rs));
	__m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * rs));
	__m128i r3 = _mm_loadu_si128((const __m128i *)(s + 3 * rs));
	/* byte pairs of rows 0, 1 and of rows 2, 3, then quads */
	__m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
	__m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
	__m128i *o = (__m128i *)d;
	_mm_storeu_si128(o, _mm_unpacklo_epi16(lo01, lo23));
	_mm_storeu_si128(o + 1, _mm_unpackhi_epi16(lo01, lo23));
	_mm_storeu_si128(o + 2, _mm_unpacklo_epi16(hi01, hi23));
	_mm_storeu_si128(o + 3, _mm_unpackhi_epi16(hi01, hi23));
}

/* --- AVX-512: 14 x 32 (28 accumulators of 16 floats) ---------------------- */

/* Two 512-bit FMA pipes of 4 cycles need 8 independent accumulators; 28
 * leave 4 of the 32 registers for the two rows of b and a broadcast, and
 * a step loads 2 + 14 values for 28 FMAs. */
#define TILEC_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,fma")))
#define TILEC_AVX512_MR 14
#define TILEC_AVX512_NR 32

/* c[0 .. mr)[0 .. 32) += pa * pb over k steps, the columns of c past the
 * masks' untouched.  mr is a constant at every call. */
static inline __attribute__((always_inline)) TILEC_AVX512 void
tilec_ukr_f32_avx512(int mr, int k, const float *a, size_t a_rs,
		     size_t a_cs, const float *restrict pb, float *c, size_t ldc,
		     __mmask16 cmask0, __mmask16 cmask1)
{
	enum { MR = TILEC_AVX512_MR, NR = TILEC_AVX512_NR };
	__m512 acc[MR][2];
	/* c's lines come from L2 while the products run. */
#pragma GCC unroll 14
	for (int r = 0; r < mr; r++) {
		_mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(c + r * ldc + 16), _MM_HINT_T0);
	}
#pragma GCC unroll 14
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm512_setzero_ps();
		acc[r][1] = _mm512_setzero_ps();
	}
#pragma GCC unroll 2
	for (int p = 0; p < k; p++) {
		__m512 b0 = _mm512_load_ps(pb + p * NR);
		__m512 b1 = _mm512_load_ps(pb + p * NR + 16);
#pragma GCC unroll 14
		for (int r = 0; r < mr; r++) {
			__m512 ar = _mm512_set1_ps(a[r * a_rs + p * a_cs]);
			acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
			acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
		}
	}
#pragma GCC unroll 14
	for (int r = 0; r < mr; r++) {
		float *cr = c + r * ldc;
		_mm512_mask_storeu_ps(
			cr, cmask0,
			_mm512_add_ps(acc[r][0], _mm512_maskz_loadu_ps(cmask0, cr)));
		_mm512_mask_storeu_ps(
			cr + 16, cmask1,
			_mm512_add_ps(acc[r][1],
				      _mm512_maskz_loadu_ps(cmask1, cr + 16)));
	}
}

/* The strip of mr rows (any of 1 .. 14, each a constant in its case). */
static inline TILEC_AVX512 void
tilec_strip_f32_avx512(int mr, int k, const float *a, size_t a_rs,
		       size_t a_cs, const float *pb, float *c, size_t ldc, int nr)
{
	__mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
	__mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff
				   : nr <= 16  ? 0
					       : (1u << (nr - 16)) - 1);
	switch (mr) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_f32_avx512(r, k, a, a_rs, a_cs, pb, c, ldc, m0, m1); \
		break;
		TILEC_CASE(14) TILEC_CASE(13) TILEC_CASE(12) TILEC_CASE(11)
		TILEC_CASE(10) TILEC_CASE(9) TILEC_CASE(8) TILEC_CASE(7)
		TILEC_CASE(6) TILEC_CASE(5) TILEC_CASE(4) TILEC_CASE(3)
		TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
	}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n], B packed in kc x NR panels. */
static inline TILEC_AVX512 void
tilec_gemm_f32_avx512(int m, int n, int k, float *c, int ldc, const float *a,
		      int lda, int trans_a, const float *b, int ldb, int trans_b,
		      int kc)
{
	TILEC_GEMM_F32_LOOPS(TILEC_AVX512_MR, TILEC_AVX512_NR, 64,
			     tilec_strip_f32_avx512)
}

/* --- AVX2: 6 x 16 (12 accumulators of 8 floats) --------------------------- */

/* Two 256-bit FMA pipes of 4-5 cycles need 8-10 accumulators; 12 leave 4
 * of the 16 registers for b's two halves and a broadcast. */
#define TILEC_AVX2 __attribute__((target("avx2,fma")))
#define TILEC_AVX2_MR 6
#define TILEC_AVX2_NR 16

/* The lane mask of the first n of 8 columns, for maskload / maskstore. */
static inline TILEC_AVX2 __m256i
tilec_avx2_mask(int n)
{
	const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

/* c[0 .. mr)[0 .. 16) += pa * pb over k steps, columns past the masks
 * untouched.  A whole strip (all 16 columns) adds into c with plain loads
 * and stores: AMD's cores run vmaskmovps to memory as a microcoded
 * sequence, which cost a sixth of the micro-kernel's time (80 % of peak
 * against 96 % on a Zen core, hot 256 x 256 x 128 tiles). */
static inline __attribute__((always_inline)) TILEC_AVX2 void
tilec_ukr_f32_avx2(int mr, int k, const float *a, size_t a_rs, size_t a_cs,
		   const float *restrict pb, float *c, size_t ldc, int whole,
		   __m256i cmask0, __m256i cmask1)
{
	enum { MR = TILEC_AVX2_MR, NR = TILEC_AVX2_NR };
	__m256 acc[MR][2];
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++)
		_mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm256_setzero_ps();
		acc[r][1] = _mm256_setzero_ps();
	}
#pragma GCC unroll 2
	for (int p = 0; p < k; p++) {
		__m256 b0 = _mm256_load_ps(pb + p * NR);
		__m256 b1 = _mm256_load_ps(pb + p * NR + 8);
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			__m256 ar = _mm256_broadcast_ss(a + r * a_rs + p * a_cs);
			acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);
			acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);
		}
	}
	if (whole) {
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			float *cr = c + r * ldc;
			_mm256_storeu_ps(cr, _mm256_add_ps(acc[r][0],
							   _mm256_loadu_ps(cr)));
			_mm256_storeu_ps(cr + 8,
					 _mm256_add_ps(acc[r][1],
						       _mm256_loadu_ps(cr + 8)));
		}
		return;
	}
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		float *cr = c + r * ldc;
		_mm256_maskstore_ps(
			cr, cmask0,
			_mm256_add_ps(acc[r][0], _mm256_maskload_ps(cr, cmask0)));
		_mm256_maskstore_ps(
			cr + 8, cmask1,
			_mm256_add_ps(acc[r][1],
				      _mm256_maskload_ps(cr + 8, cmask1)));
	}
}

static inline TILEC_AVX2 void
tilec_strip_f32_avx2(int mr, int k, const float *a, size_t a_rs,
		     size_t a_cs, const float *pb, float *c, size_t ldc, int nr)
{
	__m256i m0 = tilec_avx2_mask(nr), m1 = tilec_avx2_mask(nr - 8);
	switch (mr) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_f32_avx2(r, k, a, a_rs, a_cs, pb, c, ldc,         \
				   nr == TILEC_AVX2_NR, m0, m1);             \
		break;
		TILEC_CASE(6) TILEC_CASE(5) TILEC_CASE(4) TILEC_CASE(3)
		TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
	}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n], B packed in kc x NR panels. */
static inline TILEC_AVX2 void
tilec_gemm_f32_avx2(int m, int n, int k, float *c, int ldc, const float *a,
		    int lda, int trans_a, const float *b, int ldb, int trans_b,
		    int kc)
{
	TILEC_GEMM_F32_LOOPS(TILEC_AVX2_MR, TILEC_AVX2_NR, 32,
			     tilec_strip_f32_avx2)
}

/* --- int8 on AVX2: 6 x 16 (12 accumulators of 8 i32) ---------------------- */

/* Without VNNI the exact way to multiply bytes is in 16 bits: vpmaddwd
 * multiplies pairs of i16 and adds each pair into an i32 lane.  Both
 * operands are widened once, as pairs of k: a's rows as pa[i][k2][2],
 * b's panels as [k2][NR][2] (k padded to even with zeros).  A product of
 * two i8 is at most 2^14 in magnitude, a pair's sum 2^15: never the one
 * case vpmaddwd wraps (-2^15 * -2^15 twice), so every lane is the exact
 * sum wherever it fits in i32, as the loops would give.  A step loads two
 * vectors of b and broadcasts one pair of each row of a: 12 vpmaddwd and
 * 12 vpaddd for 192 products. */
#define TILEC_AVX2_I8_MR 6
#define TILEC_AVX2_I8_NR 16

/* Rows of op(a) as k2 pairs of i16 each (zero past k). */
static inline TILEC_AVX2 void
tilec_gemm_pack_a_i16(short *restrict pa, int k2, const signed char *a,
		      size_t rs, size_t cs, int m, int k)
{
	for (int i = 0; i < m; i++) {
		short *d = pa + (size_t)i * k2 * 2;
		int p = 0;
		if (cs == 1)
			for (; p + 16 <= k; p += 16)
				_mm256_storeu_si256(
					(__m256i *)(d + p),
					_mm256_cvtepi8_epi16(_mm_loadu_si128(
						(const __m128i *)(a + i * rs + p))));
		for (; p < k2 * 2; p++)
			d[p] = p < k ? a[i * rs + p * cs] : 0;
	}
}

/* An 8 x 8 transpose of 32-bit elements in v[0 .. 8). */
static inline __attribute__((always_inline)) TILEC_AVX2 void
tilec_avx2_transpose8(__m256i v[8])
{
	__m256i t[8], u[8];
	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
	}
	for (int i = 0; i < 8; i += 4)
		for (int h = 0; h < 2; h++) {
			u[i + h] = _mm256_unpacklo_epi64(t[i + h], t[i + 2 + h]);
			u[i + 2 + h] = _mm256_unpackhi_epi64(t[i + h], t[i + 2 + h]);
		}
	/* u[0], u[2], u[1], u[3] hold rows 0-3 (low halves) and 4-7 (high
	 * halves) of columns 0-3; u[4 ..] the same of columns 4-7 */
	static const int row[4] = { 0, 2, 1, 3 };
	for (int r = 0; r < 4; r++) {
		int i = row[r];
		v[r] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
		v[4 + r] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
	}
}

/* nr columns of op(b) over k rows (zero past k and nr) as a panel of
 * [k2][NR][2] i16: each column's pair of k rows side by side, so one
 * 32-bit lane of a vector holds what a broadcast pair of a multiplies.
 * Pairs of whole rows (column stride 1, all NR = 16 columns) are widened
 * and interleaved 16 columns at a time; columns contiguous along k (b
 * stored n x k, all 16 columns) 16 k at a time, 8 columns' pairs
 * transposed into 8 rows of the panel. */
static inline TILEC_AVX2 void
tilec_gemm_pack_b_i16(short *restrict pb, int NR, const signed char *b,
		      size_t rs, size_t cs, int nr, int k, int k2)
{
	int p0 = 0;
	if (rs == 1 && nr == NR && NR == 16)
		for (; p0 + 16 <= k; p0 += 16)
			for (int j0 = 0; j0 < 16; j0 += 8) {
				__m256i v[8];
				for (int j = 0; j < 8; j++)
					v[j] = _mm256_cvtepi8_epi16(_mm_loadu_si128(
						(const __m128i *)(b + (j0 + j) * cs + p0)));
				tilec_avx2_transpose8(v);
				for (int q = 0; q < 8; q++)
					_mm256_storeu_si256(
						(__m256i *)(pb + ((size_t)(p0 / 2 + q) * NR + j0) * 2),
						v[q]);
			}
	if (cs == 1 && nr == NR && NR == 16)
		for (; p0 + 2 <= k; p0 += 2) {
			__m256i r0 = _mm256_cvtepi8_epi16(
				_mm_loadu_si128((const __m128i *)(b + p0 * rs)));
			__m256i r1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
				(const __m128i *)(b + (p0 + 1) * rs)));
			/* columns 0-3 and 8-11, then 4-7 and 12-15, paired */
			__m256i lo = _mm256_unpacklo_epi16(r0, r1);
			__m256i hi = _mm256_unpackhi_epi16(r0, r1);
			short *d = pb + (size_t)(p0 / 2) * NR * 2;
			_mm256_storeu_si256((__m256i *)d,
					    _mm256_permute2x128_si256(lo, hi, 0x20));
			_mm256_storeu_si256((__m256i *)(d + 16),
					    _mm256_permute2x128_si256(lo, hi, 0x31));
		}
	for (int p = p0; p < k2 * 2; p++)
		for (int j = 0; j < NR; j++)
			pb[(size_t)(p / 2) * NR * 2 + j * 2 + p % 2] =
				p < k && j < nr ? b[p * rs + j * cs] : 0;
}

/* c[0 .. mr)[0 .. 16) += pa * pb over k2 pair steps; a whole strip adds
 * into c with plain loads and stores (see tilec_ukr_f32_avx2), a partial
 * one under the masks. */
static inline __attribute__((always_inline)) TILEC_AVX2 void
tilec_ukr_i8_avx2(int mr, int k2, const short *pa, size_t lda2,
		  const short *restrict pb, int *c, size_t ldc, int whole,
		  __m256i cmask0, __m256i cmask1)
{
	enum { MR = TILEC_AVX2_I8_MR, NR = TILEC_AVX2_I8_NR };
	__m256i acc[MR][2];
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm256_setzero_si256();
		acc[r][1] = _mm256_setzero_si256();
	}
#pragma GCC unroll 2
	for (int q = 0; q < k2; q++) {
		__m256i b0 = _mm256_loadu_si256((const __m256i *)(pb + (size_t)q * NR * 2));
		__m256i b1 = _mm256_loadu_si256(
			(const __m256i *)(pb + (size_t)q * NR * 2 + 16));
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			int pair;
			__builtin_memcpy(&pair, pa + r * lda2 + q * 2, 4);
			__m256i ar = _mm256_set1_epi32(pair);
			acc[r][0] = _mm256_add_epi32(acc[r][0],
						     _mm256_madd_epi16(ar, b0));
			acc[r][1] = _mm256_add_epi32(acc[r][1],
						     _mm256_madd_epi16(ar, b1));
		}
	}
	if (whole) {
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			__m256i *cr = (__m256i *)(c + r * ldc);
			_mm256_storeu_si256(cr, _mm256_add_epi32(
							acc[r][0], _mm256_loadu_si256(cr)));
			_mm256_storeu_si256(cr + 1,
					    _mm256_add_epi32(acc[r][1],
							     _mm256_loadu_si256(cr + 1)));
		}
		return;
	}
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		int *cr = c + r * ldc;
		_mm256_maskstore_epi32(
			cr, cmask0,
			_mm256_add_epi32(acc[r][0], _mm256_maskload_epi32(cr, cmask0)));
		_mm256_maskstore_epi32(
			cr + 8, cmask1,
			_mm256_add_epi32(acc[r][1],
					 _mm256_maskload_epi32(cr + 8, cmask1)));
	}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n] in i32, a widened once, b in
 * panels of kc (even) x 16. */
static inline TILEC_AVX2 void
tilec_gemm_i8_avx2(int m, int n, int k, int *c, int ldc, const signed char *a,
		   int lda, int trans_a, const signed char *b, int ldb,
		   int trans_b, int kc)
{
	enum { MR = TILEC_AVX2_I8_MR, NR = TILEC_AVX2_I8_NR };
	if (m <= 0 || n <= 0 || k <= 0)
		return;
	kc = (tilec_gemm_min(kc < 2 ? 2 : kc, k) + 1) / 2 * 2;
	int k2 = (k + 1) / 2;
	_Alignas(32) short pa[(size_t)m * k2 * 2];
	_Alignas(32) short pb[(size_t)kc * NR];
	size_t a_rs = trans_a ? 1 : (size_t)lda;
	size_t a_cs = trans_a ? (size_t)lda : 1;
	size_t b_rs = trans_b ? 1 : (size_t)ldb;
	size_t b_cs = trans_b ? (size_t)ldb : 1;
	tilec_gemm_pack_a_i16(pa, k2, a, a_rs, a_cs, m, k);
	for (int p0 = 0; p0 < k; p0 += kc) {
		int kb = tilec_gemm_min(kc, k - p0);
		int kb2 = (kb + 1) / 2;
		for (int j0 = 0; j0 < n; j0 += NR) {
			int nr = tilec_gemm_min(NR, n - j0);
			tilec_gemm_pack_b_i16(pb, NR, b + p0 * b_rs + j0 * b_cs,
					      b_rs, b_cs, nr, kb, kb2);
			__m256i m0 = tilec_avx2_mask(nr);
			__m256i m1 = tilec_avx2_mask(nr - 8);
			for (int i0 = 0; i0 < m; i0 += MR) {
				const short *ap = pa + (size_t)i0 * k2 * 2 + p0;
				int *cp = c + (size_t)i0 * ldc + j0;
				switch (tilec_gemm_min(MR, m - i0)) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_i8_avx2(r, kb2, ap, (size_t)k2 * 2, pb, cp,         \
				  (size_t)ldc, nr == NR, m0, m1);             \
		break;
					TILEC_CASE(6) TILEC_CASE(5) TILEC_CASE(4)
					TILEC_CASE(3) TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
				}
			}
		}
	}
}

/* --- int8 on AVX512-VNNI: 8 x 32 (16 accumulators of 16 i32) ------------- */

/* vpdpbusd multiplies unsigned bytes by signed bytes and adds each group
 * of four products into an i32 lane.  a's signed bytes are flipped to
 * a + 128 (unsigned), so each lane gains 128 * (b's four bytes); that sum
 * over k, per column, is subtracted at the end.  i32 arithmetic wraps
 * the same way in both, so the result is the exact sum wherever it fits
 * in i32. */
#define TILEC_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define TILEC_VNNI_MR 8
#define TILEC_VNNI_NR 32

/* acc + the four-byte dot products of u8 a and s8 b, lane by lane
 * (vpdpbusd).  gcc 12 copies the intrinsic's accumulator through extra
 * registers and the stack on every use in the micro-kernel (60
 * instructions for its 16 products a step); the instruction written out
 * accumulates in place. */
static inline __attribute__((always_inline)) TILEC_VNNI __m512i
tilec_dpbusd(__m512i acc, __m512i a, __m512i b)
{
#if defined(__GNUC__) && !defined(__clang__)
	__asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
	return acc;
#else
	return _mm512_dpbusd_epi32(acc, a, b);
#endif
}

/* Rows of op(a) as k4 bytes each (k padded to a multiple of 4 with
 * a = 0), flipped to unsigned: pa[i][p] = a[i][p] + 128 (a ^ 0x80). */
static inline TILEC_VNNI void
tilec_gemm_pack_a_u8(unsigned char *restrict pa, int k4, const signed char *a,
		     size_t rs, size_t cs, int m, int k)
{
	const __m512i flip = _mm512_set1_epi8((char)0x80);
	for (int i = 0; i < m; i++) {
		unsigned char *d = pa + (size_t)i * k4;
		int p = 0;
		if (cs == 1)
			for (; p + 64 <= k; p += 64)
				_mm512_storeu_si512(
					d + p,
					_mm512_xor_si512(
						_mm512_loadu_si512(a + i * rs + p), flip));
		for (; p < k4; p++)
			d[p] = (unsigned char)((p < k ? a[i * rs + p * cs] : 0) + 128);
	}
}

/* nr columns of op(b) over k4 rows (zero past k and nr) as panels of
 * [k4 / 4][NR][4] bytes, and each column's sum times 128 into corr.  Whole
 * quads of rows of b (column stride 1, all NR = 32 columns) go 16 columns
 * at a time, their sums by vpdpbusd with 128 in every byte of a. */
static inline TILEC_VNNI void
tilec_gemm_pack_b_s8(signed char *restrict pb, int *restrict corr, int NR,
		     const signed char *b, size_t rs, size_t cs, int nr, int k,
		     int k4)
{
	int p0 = 0;
	for (int j = 0; j < NR; j++)
		corr[j] = 0;
	if (cs == 1 && nr == NR && NR == 32) {
		const __m512i flip = _mm512_set1_epi8((char)0x80);
		__m512i c0 = _mm512_setzero_si512(), c1 = _mm512_setzero_si512();
		for (; p0 + 4 <= k; p0 += 4) {
			signed char *d = pb + (size_t)(p0 / 4) * NR * 4;
			tilec_gemm_quads_s8(d, b + p0 * rs, rs);
			tilec_gemm_quads_s8(d + 64, b + p0 * rs + 16, rs);
			c0 = _mm512_dpbusd_epi32(c0, flip, _mm512_loadu_si512(d));
			c1 = _mm512_dpbusd_epi32(c1, flip, _mm512_loadu_si512(d + 64));
		}
		_mm512_storeu_si512(corr, c0);
		_mm512_storeu_si512(corr + 16, c1);
	} else if (rs == 1 && NR == 32) {
		/* columns of op(b) contiguous along k: 64 bytes (16 quads) of
		 * each scattered into the panel's rows of quads, and summed */
		const __m512i flip = _mm512_set1_epi8((char)0x80);
		const __m512i quads = _mm512_setr_epi32(
			0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384,
			416, 448, 480);
		for (; p0 + 64 <= k; p0 += 64)
			for (int j = 0; j < NR; j++) {
				__m512i v = j < nr ? _mm512_loadu_si512(b + p0 + j * cs)
						   : _mm512_setzero_si512();
				_mm512_i32scatter_epi32(pb + (size_t)(p0 / 4) * NR * 4 +
								j * 4,
							quads, v, 4);
				corr[j] += _mm512_reduce_add_epi32(_mm512_dpbusd_epi32(
					_mm512_setzero_si512(), flip, v));
			}
	}
	for (int p = p0; p < k4; p++)
		for (int j = 0; j < NR; j++) {
			signed char v = p < k && j < nr ? b[p * rs + j * cs] : 0;
			pb[(size_t)(p / 4) * NR * 4 + j * 4 + p % 4] = v;
			corr[j] += 128 * v;
		}
}

/* c[0 .. mr)[0 .. 32) += pa * pb - corr over k4 / 4 steps. */
static inline __attribute__((always_inline)) TILEC_VNNI void
tilec_ukr_i8_vnni(int mr, int k4, const unsigned char *pa, size_t lda4,
		  const signed char *restrict pb, const int *corr, int *c,
		  size_t ldc, __mmask16 cmask0, __mmask16 cmask1)
{
	enum { MR = TILEC_VNNI_MR, NR = TILEC_VNNI_NR };
	__m512i acc[MR][2];
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++) {
		acc[r][0] = _mm512_setzero_si512();
		acc[r][1] = _mm512_setzero_si512();
	}
	for (int q = 0; q < k4 / 4; q++) {
		__m512i b0 = _mm512_loadu_si512(pb + (size_t)q * NR * 4);
		__m512i b1 = _mm512_loadu_si512(pb + (size_t)q * NR * 4 + 64);
#pragma GCC unroll 8
		for (int r = 0; r < mr; r++) {
			int word;
			__builtin_memcpy(&word, pa + r * lda4 + q * 4, 4);
			__m512i ar = _mm512_set1_epi32(word);
			acc[r][0] = tilec_dpbusd(acc[r][0], ar, b0);
			acc[r][1] = tilec_dpbusd(acc[r][1], ar, b1);
		}
	}
	__m512i corr0 = _mm512_loadu_si512(corr);
	__m512i corr1 = _mm512_loadu_si512(corr + 16);
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++) {
		int *cr = c + r * ldc;
		__m512i v0 = _mm512_sub_epi32(acc[r][0], corr0);
		__m512i v1 = _mm512_sub_epi32(acc[r][1], corr1);
		_mm512_mask_storeu_epi32(
			cr, cmask0,
			_mm512_add_epi32(v0, _mm512_maskz_loadu_epi32(cmask0, cr)));
		_mm512_mask_storeu_epi32(
			cr + 16, cmask1,
			_mm512_add_epi32(v1,
					 _mm512_maskz_loadu_epi32(cmask1, cr + 16)));
	}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n] in i32, a packed once (flipped),
 * b in panels of kc (a multiple of 4) x 32. */
static inline TILEC_VNNI void
tilec_gemm_i8_vnni(int m, int n, int k, int *c, int ldc, const signed char *a,
		   int lda, int trans_a, const signed char *b, int ldb,
		   int trans_b, int kc)
{
	enum { MR = TILEC_VNNI_MR, NR = TILEC_VNNI_NR };
	if (m <= 0 || n <= 0 || k <= 0)
		return;
	kc = (tilec_gemm_min(kc < 4 ? 4 : kc, k) + 3) / 4 * 4;
	int k4 = (k + 3) / 4 * 4;
	_Alignas(64) unsigned char pa[(size_t)m * k4];
	_Alignas(64) signed char pb[(size_t)kc * NR];
	_Alignas(64) int corr[NR];
	size_t a_rs = trans_a ? 1 : (size_t)lda;
	size_t a_cs = trans_a ? (size_t)lda : 1;
	size_t b_rs = trans_b ? 1 : (size_t)ldb;
	size_t b_cs = trans_b ? (size_t)ldb : 1;
	tilec_gemm_pack_a_u8(pa, k4, a, a_rs, a_cs, m, k);
	for (int p0 = 0; p0 < k; p0 += kc) {
		int kb = tilec_gemm_min(kc, k - p0);
		int kb4 = (kb + 3) / 4 * 4;
		for (int j0 = 0; j0 < n; j0 += NR) {
			int nr = tilec_gemm_min(NR, n - j0);
			tilec_gemm_pack_b_s8(pb, corr, NR, b + p0 * b_rs + j0 * b_cs,
					     b_rs, b_cs, nr, kb, kb4);
			__mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
			__mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff
						   : nr <= 16  ? 0
							       : (1u << (nr - 16)) - 1);
			for (int i0 = 0; i0 < m; i0 += MR) {
				const unsigned char *ap = pa + (size_t)i0 * k4 + p0;
				int *cp = c + (size_t)i0 * ldc + j0;
				switch (tilec_gemm_min(MR, m - i0)) {
#define TILEC_CASE(r)                                                        \
	case r:                                                              \
		tilec_ukr_i8_vnni(r, kb4, ap, (size_t)k4, pb, corr, cp,       \
				  (size_t)ldc, m0, m1);                       \
		break;
					TILEC_CASE(8) TILEC_CASE(7) TILEC_CASE(6)
					TILEC_CASE(5) TILEC_CASE(4) TILEC_CASE(3)
					TILEC_CASE(2) TILEC_CASE(1)
#undef TILEC_CASE
				}
			}
		}
	}
}

/* --- AMX: bf16 and int8 on 16 x 16 tiles of c, 2 x 2 at a time ---------- */

/* Tiles 0-3 hold a 32 x 32 block of c (f32 or i32), 4-5 two 16-row tiles
 * of a (64 bytes of k each: 32 bf16 or 64 int8), 6-7 two tiles of b in the
 * layout the instructions read: k in pairs (bf16) or quads (int8) side
 * by side, 16 columns of 4 bytes per tile row.  Operands are packed once
 * per call (bf16 from float-held buffers exactly, as they hold bf16
 * values, or from buffers that hold the bits; whole tiles of b with 16
 * vector rows or one transpose, not element by element), zero past the
 * tile edges, except a stored m x k in whole tiles in a buffer that holds
 * what the tiles hold, which the tile loads read in place; each whole
 * 32 x 32 block of c is loaded into
 * tiles 0-3, accumulates over all of k and is stored back, and a block on
 * c's edge is computed from zero into a small buffer and added into c
 * element by element.  Linux grants the
 * tile state to a process that asks (arch_prctl ARCH_REQ_XCOMP_PERM);
 * tilec_amx_ready() (tilec_cpu.h) asks, as the runtime does before it
 * loads such a kernel: without it the first tile instruction would
 * fault. */
#define TILEC_AMX                                                            \
	__attribute__((target("avx512f,avx512bw,avx512vl,amx-tile,amx-bf16,"  \
			      "amx-int8")))

/* The tile configuration (palette 1): rows and bytes per row of each of
 * the 8 tiles. */
typedef struct {
	unsigned char palette, start_row, reserved[14];
	unsigned short colsb[16];
	unsigned char rows[16];
} tilec_amx_config;

/* Ask Linux for this process's tile state (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XTILEDATA, feature 18), once: the runtime and
 * an export's launch function have asked already (tilec_amx_ready), but
 * a kernel called from a file of its own (--standalone) has not, and
 * its first tile instruction would fault.  Stops with a message where
 * the request is refused.  (tests/cpu_gemm/helpers.c, which emulates the
 * tiles, defines TILEC_AMX_PERMIT away.) */
#ifndef TILEC_AMX_PERMIT
static int tilec_amx_granted;

static inline void
tilec_amx_permit(void)
{
	if (__atomic_load_n(&tilec_amx_granted, __ATOMIC_RELAXED))
		return;
	long rc = -1;
#if defined(__linux__) && defined(__x86_64__)
	__asm__ volatile("syscall" : "=a"(rc)
			 : "a"(158L), "D"(0x1023L), "S"(18L)
			 : "rcx", "r11", "memory");
#endif
	if (rc != 0) {
		fputs("tilec: this kernel multiplies with AMX, and the system "
		      "does not give this process the tile state\n", stderr);
		abort();
	}
	__atomic_store_n(&tilec_amx_granted, 1, __ATOMIC_RELAXED);
}
#define TILEC_AMX_PERMIT() tilec_amx_permit()
#endif

static inline TILEC_AMX void
tilec_amx_configure(void)
{
	TILEC_AMX_PERMIT();
	tilec_amx_config cfg;
	__builtin_memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	for (int t = 0; t < 8; t++) {
		cfg.rows[t] = 16;
		cfg.colsb[t] = 64;
	}
	_tile_loadconfig(&cfg);
}

/* The bf16 bits of a float holding a bf16 value (its top half). */
static inline unsigned short
tilec_bf16_bits(float x)
{
	unsigned int u;
	__builtin_memcpy(&u, &x, 4);
	return (unsigned short)(u >> 16);
}

/* A 16 x 16 transpose of 32-bit elements: row r of d (64 bytes) takes
 * element r of each of the 16 rows of s (rs bytes apart).  A pair of
 * bf16 or a quad of int8 along k is one element, so this turns 16 rows of
 * b stored [n][k] into the tile the instructions read.  Three rounds of
 * shuffles, 64 in all: pairs within 128-bit lanes, quads within them,
 * then the lanes themselves. */
static inline TILEC_AMX void
tilec_amx_transpose(void *restrict d, const void *s, size_t rs)
{
	__m512i r[16], t[16];
	for (int i = 0; i < 16; i++)
		r[i] = _mm512_loadu_si512((const char *)s + i * rs);
	/* t[2i], t[2i + 1]: in lane L, rows 2i and 2i + 1 at columns
	 * 4L .. 4L + 1 and 4L + 2 .. 4L + 3, interleaved */
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	/* r[4g + c]: in lane L, rows 4g .. 4g + 3 at column 4L + c */
	for (int g = 0; g < 16; g += 4) {
		r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
		r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
		r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
		r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
	}
	/* column 4L + c: lane L of r[c], r[4 + c], r[8 + c], r[12 + c] */
	char *o = d;
	for (int c = 0; c < 4; c++) {
		__m512i v0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44);
		__m512i v1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xee);
		__m512i v2 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
		__m512i v3 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xee);
		_mm512_storeu_si512(o + (0 + c) * 64,
				    _mm512_shuffle_i32x4(v0, v2, 0x88));
		_mm512_storeu_si512(o + (4 + c) * 64,
				    _mm512_shuffle_i32x4(v0, v2, 0xdd));
		_mm512_storeu_si512(o + (8 + c) * 64,
				    _mm512_shuffle_i32x4(v1, v3, 0x88));
		_mm512_storeu_si512(o + (12 + c) * 64,
				    _mm512_shuffle_i32x4(v1, v3, 0xdd));
	}
}

/* One 16-column, 32-deep tile of op(b) from rows of b (column stride 1,
 * row stride rs) as the instruction reads it, row r of the tile holding k
 * rows 2r and 2r + 1 of the 16 columns in pairs: each pair one 32-bit
 * lane, the even row's bf16 bits low and the odd row's high (the floats
 * hold bf16 values, so their top halves are exact). */
static inline TILEC_AMX void
tilec_amx_pack_b_tile_bf16(unsigned short *restrict d, const float *s,
			   size_t rs)
{
	const __m512i high = _mm512_set1_epi32((int)0xffff0000u);
	for (int r = 0; r < 16; r++) {
		__m512i even = _mm512_castps_si512(_mm512_loadu_ps(s + 2 * r * rs));
		__m512i odd =
			_mm512_castps_si512(_mm512_loadu_ps(s + (2 * r + 1) * rs));
		_mm512_storeu_si512(d + r * 32,
				    _mm512_or_si512(_mm512_srli_epi32(even, 16),
						    _mm512_and_si512(odd, high)));
	}
}

/* The 32-bit lane offsets of a tile's 16 rows (64 bytes apart): where a
 * column's 16 pairs or quads go. */
#define tilec_amx_rows                                                       \
	_mm512_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, \
			  192, 208, 224, 240)

/* op(a) as bf16 [mt][kt][16][32] (unless pa is NULL) and op(b) as
 * [nt][kt][16][16][2], zero past m, n and k. */
static inline TILEC_AMX void
tilec_amx_pack_bf16(unsigned short *restrict pa, unsigned short *restrict pb,
		    int m, int n, int k, const float *a, size_t a_rs,
		    size_t a_cs, const float *b, size_t b_rs, size_t b_cs)
{
	int mt = (m + 31) / 32 * 2, nt = (n + 31) / 32 * 2, kt = (k + 31) / 32;
	for (int t = 0; pa && t < mt; t++)
		for (int q = 0; q < kt; q++)
			for (int r = 0; r < 16; r++) {
				int i = t * 16 + r;
				unsigned short *d = pa + (((size_t)t * kt + q) * 16 + r) * 32;
				if (i < m && a_cs == 1 && q * 32 + 32 <= k) {
					/* a row's 32 consecutive values: their top
					 * halves */
					const float *s = a + i * a_rs + q * 32;
					for (int h = 0; h < 2; h++) {
						__m512i v = _mm512_castps_si512(
							_mm512_loadu_ps(s + 16 * h));
						_mm256_storeu_si256(
							(__m256i *)(d + 16 * h),
							_mm512_cvtepi32_epi16(
								_mm512_srli_epi32(v, 16)));
					}
					continue;
				}
				for (int p = 0; p < 32; p++) {
					int kk = q * 32 + p;
					d[p] = i < m && kk < k
						       ? tilec_bf16_bits(a[i * a_rs + kk * a_cs])
						       : 0;
				}
			}
	for (int t = 0; t < nt; t++)
		for (int q = 0; q < kt; q++) {
			unsigned short *tb = pb + ((size_t)t * kt + q) * 16 * 32;
			if (b_cs == 1 && t * 16 + 16 <= n && q * 32 + 32 <= k) {
				/* 16 whole columns along rows of b */
				tilec_amx_pack_b_tile_bf16(
					tb, b + (size_t)q * 32 * b_rs + t * 16, b_rs);
				continue;
			}
			for (int j = 0; j < 16; j++) {
				int col = t * 16 + j;
				unsigned short *d = tb + j * 2;
				if (col < n && b_rs == 1 && q * 32 + 32 <= k) {
					/* a column of op(b) is contiguous: its 16
					 * pairs, one lane each, scattered down the
					 * tile's rows */
					const float *s = b + col * b_cs + q * 32;
					__m256i lo = _mm512_cvtepi32_epi16(_mm512_srli_epi32(
						_mm512_castps_si512(_mm512_loadu_ps(s)), 16));
					__m256i hi = _mm512_cvtepi32_epi16(_mm512_srli_epi32(
						_mm512_castps_si512(_mm512_loadu_ps(s + 16)), 16));
					_mm512_i32scatter_epi32(
						d, tilec_amx_rows, _mm512_inserti64x4(
							_mm512_castsi256_si512(lo), hi, 1), 4);
					continue;
				}
				for (int r = 0; r < 16; r++)
					for (int h = 0; h < 2; h++) {
						int kk = q * 32 + 2 * r + h;
						d[r * 32 + h] =
							col < n && kk < k
								? tilec_bf16_bits(b[kk * b_rs + col * b_cs])
								: 0;
					}
			}
		}
}

/* c += x, as the two kinds of accumulator add a block into c: f32, and
 * i32 wrapping as the tile instruction does (in unsigned arithmetic, so
 * C sees no overflow). */
static inline void
tilec_amx_add_f32(float *c, float x)
{
	*c += x;
}

static inline void
tilec_amx_add_i32(int *c, int x)
{
	*c = (int)((unsigned)*c + (unsigned)x);
}

/* The body of an AMX gemm, the same for bf16 and int8 but for the pieces
 * named: op(b), and op(a) unless its tiles are read in place, packed by
 * PACK into 1 KiB tiles of T, KT of k in each (64 bytes a row); then for
 * each 32 x 32 block of c, tiles 0-3 loaded from c (or zeroed on c's
 * edge), TDP on the 2 x 2 tile products at each of the kt steps of k, the
 * block stored back into c (on the edge: stored as ACC and added into c
 * by ADD(&c element, block element)).  With IN_PLACE (a holds T as the
 * tiles do), a stored m x k with m a multiple of 32 and k of KT is read
 * by the tile loads where it is, lda elements a row.  kc is unused: a
 * call's k is one tile run. */
#define TILEC_AMX_GEMM(T, KT, PACK, TDP, ACC, ADD, IN_PLACE)                 \
	(void)kc;                                                            \
	if (m <= 0 || n <= 0 || k <= 0)                                      \
		return;                                                      \
	size_t tile = 1024 / sizeof(T); /* elements of a tile */             \
	int mt = (m + 31) / 32 * 2, nt = (n + 31) / 32 * 2;                  \
	int kt = (k + KT - 1) / KT;                                          \
	int in_place = IN_PLACE && !trans_a && m % 32 == 0 && k % KT == 0;   \
	_Alignas(64) T pa[in_place ? 1 : (size_t)mt * kt * tile];            \
	_Alignas(64) T pb[(size_t)nt * kt * tile];                           \
	_Alignas(64) ACC blk[32][32];                                        \
	PACK(in_place ? NULL : pa, pb, m, n, k, a,                           \
	     trans_a ? 1 : (size_t)lda, trans_a ? (size_t)lda : 1, b,        \
	     trans_b ? 1 : (size_t)ldb, trans_b ? (size_t)ldb : 1);          \
	/* a's tiles: where the q-th of a 16-row tile starts, and the bytes \
	 * between its rows */                                               \
	size_t a_step = in_place ? (size_t)KT : (size_t)kt * tile;           \
	size_t a_q = in_place ? (size_t)KT : tile;                           \
	size_t a_rows = in_place ? (size_t)lda * sizeof(T) : 64;             \
	tilec_amx_configure();                                               \
	for (int i0 = 0; i0 < m; i0 += 32)                                   \
		for (int j0 = 0; j0 < n; j0 += 32) {                         \
			/* a's two 16-row tiles and b's, over all of k */    \
			const T *a0 = in_place                               \
				? (const T *)(const void *)a + (size_t)i0 * lda \
				: pa + (size_t)(i0 / 16) * kt * tile;        \
			const T *a1 = in_place ? a0 + 16 * (size_t)lda       \
					       : a0 + a_step;                \
			const T *b0 = pb + (size_t)(j0 / 16) * kt * tile;    \
			const T *b1 = b0 + (size_t)kt * tile;                \
			/* a whole block of c accumulates in place */        \
			int whole = i0 + 32 <= m && j0 + 32 <= n;            \
			ACC *cb = c + (size_t)i0 * ldc + j0;                 \
			size_t cs = (size_t)ldc * sizeof(ACC);               \
			if (whole) {                                         \
				_tile_loadd(0, cb, cs);                      \
				_tile_loadd(1, cb + 16, cs);                 \
				_tile_loadd(2, cb + 16 * (size_t)ldc, cs);   \
				_tile_loadd(3, cb + 16 * (size_t)ldc + 16, cs); \
			} else {                                             \
				_tile_zero(0);                               \
				_tile_zero(1);                               \
				_tile_zero(2);                               \
				_tile_zero(3);                               \
			}                                                    \
			/* each load just before the first product that   \
			 * reads it (tiles are not renamed: a load waits   \
			 * for the last product that read its tile) */     \
			for (int q = 0; q < kt; q++) {                       \
				_tile_loadd(4, a0 + q * a_q, a_rows);        \
				_tile_loadd(6, b0 + q * tile, 64);           \
				TDP(0, 4, 6);                                \
				_tile_loadd(7, b1 + q * tile, 64);           \
				TDP(1, 4, 7);                                \
				_tile_loadd(5, a1 + q * a_q, a_rows);        \
				TDP(2, 5, 6);                                \
				TDP(3, 5, 7);                                \
			}                                                    \
			if (whole) {                                         \
				_tile_stored(0, cb, cs);                     \
				_tile_stored(1, cb + 16, cs);                \
				_tile_stored(2, cb + 16 * (size_t)ldc, cs);  \
				_tile_stored(3, cb + 16 * (size_t)ldc + 16, cs); \
				continue;                                    \
			}                                                    \
			_tile_stored(0, &blk[0][0], 128);                    \
			_tile_stored(1, &blk[0][16], 128);                   \
			_tile_stored(2, &blk[16][0], 128);                   \
			_tile_stored(3, &blk[16][16], 128);                  \
			int rows = tilec_gemm_min(32, m - i0);               \
			int cols = tilec_gemm_min(32, n - j0);               \
			for (int r = 0; r < rows; r++) {                     \
				ACC *cr = cb + (size_t)r * ldc;              \
				for (int j = 0; j < cols; j++)               \
					ADD(&cr[j], blk[r][j]);              \
			}                                                    \
		}                                                            \
	_tile_release();

/* c[m][n] += op(a)[m][k] * op(b)[k][n]: bf16 operands (held as float),
 * f32 accumulate, on AMX tiles (tdpbf16ps on pairs of k). */
static inline TILEC_AMX void
tilec_gemm_bf16_amx(int m, int n, int k, float *c, int ldc, const float *a,
		    int lda, int trans_a, const float *b, int ldb, int trans_b,
		    int kc)
{
	TILEC_AMX_GEMM(unsigned short, 32, tilec_amx_pack_bf16, _tile_dpbf16ps,
		       float, tilec_amx_add_f32, 0)
}

/* op(a) (row stride rs, column stride cs, in elements of es bytes: 2 for
 * bf16 bits, 1 for int8) as tiles of 16 rows of 64 bytes,
 * [mt][kt][16][64 / es], zero past m and k; a row's 64 consecutive bytes
 * in one copy. */
static inline void
tilec_amx_pack_a(void *restrict pa, const void *a, int m, int k, size_t rs,
		 size_t cs, int es)
{
	int per = 64 / es; /* elements of k in a tile row */
	int mt = (m + 31) / 32 * 2, kt = (k + per - 1) / per;
	const char *src = a;
	for (int t = 0; t < mt; t++)
		for (int q = 0; q < kt; q++)
			for (int r = 0; r < 16; r++) {
				int i = t * 16 + r;
				char *d = (char *)pa + (((size_t)t * kt + q) * 16 + r) * 64;
				if (i < m && cs == 1 && q * per + per <= k) {
					__builtin_memcpy(d, src + (i * rs + (size_t)q * per) * es,
							 64);
					continue;
				}
				for (int p = 0; p < per; p++) {
					int kk = q * per + p;
					if (i < m && kk < k)
						__builtin_memcpy(d + p * es,
								 src + (i * rs + kk * cs) * es,
								 (size_t)es);
					else
						__builtin_memset(d + p * es, 0, (size_t)es);
				}
			}
}

/* The same from buffers that hold bf16 as stored (the bits, as tensors
 * hold them; passes/cpu_gemm.c decides which): op(a) as [mt][kt][16][32]
 * unless pa is NULL (its tiles are then read in place), op(b) as
 * [nt][kt][16][16][2], zero past m, n and k.  b stored [n][k] is 16 x 16
 * transposes of pairs; b stored [k][n] interleaves pairs of its rows. */
static inline TILEC_AMX void
tilec_amx_pack_bf16_stored(unsigned short *restrict pa,
			   unsigned short *restrict pb, int m, int n, int k,
			   const unsigned short *a, size_t a_rs, size_t a_cs,
			   const unsigned short *b, size_t b_rs, size_t b_cs)
{
	int nt = (n + 31) / 32 * 2, kt = (k + 31) / 32;
	if (pa)
		tilec_amx_pack_a(pa, a, m, k, a_rs, a_cs, 2);
	for (int t = 0; t < nt; t++)
		for (int q = 0; q < kt; q++) {
			unsigned short *tb = pb + ((size_t)t * kt + q) * 16 * 32;
			int whole = t * 16 + 16 <= n && q * 32 + 32 <= k;
			if (whole && b_rs == 1) {
				/* 16 columns of op(b), each contiguous along k */
				tilec_amx_transpose(tb, b + (size_t)t * 16 * b_cs + q * 32,
						    b_cs * sizeof *b);
				continue;
			}
			if (whole && b_cs == 1) {
				/* tile row r: k rows 2r and 2r + 1 of 16
				 * columns, one pair a 32-bit lane */
				const unsigned short *s = b + (size_t)q * 32 * b_rs + t * 16;
				for (int r = 0; r < 16; r++) {
					__m512i even = _mm512_cvtepu16_epi32(_mm256_loadu_si256(
						(const __m256i *)(s + 2 * r * b_rs)));
					__m512i odd = _mm512_cvtepu16_epi32(_mm256_loadu_si256(
						(const __m256i *)(s + (2 * r + 1) * b_rs)));
					_mm512_storeu_si512(tb + r * 32,
							    _mm512_or_si512(even, _mm512_slli_epi32(odd, 16)));
				}
				continue;
			}
			for (int r = 0; r < 16; r++)
				for (int j = 0; j < 16; j++)
					for (int h = 0; h < 2; h++) {
						int col = t * 16 + j, kk = q * 32 + 2 * r + h;
						tb[r * 32 + j * 2 + h] =
							col < n && kk < k ? b[kk * b_rs + col * b_cs] : 0;
					}
		}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n]: bf16 operands held as stored (the
 * bits), f32 accumulate, on AMX tiles; a's tiles read in place where it
 * is stored m x k in whole tiles. */
static inline TILEC_AMX void
tilec_gemm_bf16_amx_stored(int m, int n, int k, float *c, int ldc,
			   const unsigned short *a, int lda, int trans_a,
			   const unsigned short *b, int ldb, int trans_b, int kc)
{
	TILEC_AMX_GEMM(unsigned short, 32, tilec_amx_pack_bf16_stored,
		       _tile_dpbf16ps, float, tilec_amx_add_f32, 1)
}

/* One 16-column, 64-deep tile of op(b) from rows of b (column stride 1,
 * row stride rs): tile row r holds k rows 4r .. 4r + 3 of the 16 columns
 * in quads. */
static inline void
tilec_amx_pack_b_tile_i8(signed char *restrict d, const signed char *s,
			 size_t rs)
{
	for (int r = 0; r < 16; r++)
		tilec_gemm_quads_s8(d + r * 64, s + 4 * r * rs, rs);
}

/* op(a) as int8 [mt][kt][16][64] and op(b) as [nt][kt][16][16][4]. */
static inline TILEC_AMX void
tilec_amx_pack_i8(signed char *restrict pa, signed char *restrict pb, int m,
		  int n, int k, const signed char *a, size_t a_rs, size_t a_cs,
		  const signed char *b, size_t b_rs, size_t b_cs)
{
	int nt = (n + 31) / 32 * 2, kt = (k + 63) / 64;
	if (pa)
		tilec_amx_pack_a(pa, a, m, k, a_rs, a_cs, 1);
	for (int t = 0; t < nt; t++)
		for (int q = 0; q < kt; q++) {
			signed char *tb = pb + ((size_t)t * kt + q) * 16 * 64;
			if (b_cs == 1 && t * 16 + 16 <= n && q * 64 + 64 <= k) {
				/* 16 whole columns along rows of b */
				tilec_amx_pack_b_tile_i8(
					tb, b + (size_t)q * 64 * b_rs + t * 16, b_rs);
				continue;
			}
			if (b_rs == 1 && t * 16 + 16 <= n && q * 64 + 64 <= k) {
				/* 16 whole columns of op(b), each contiguous:
				 * their quads transposed into the tile's rows */
				tilec_amx_transpose(tb, b + (size_t)t * 16 * b_cs + q * 64,
						    b_cs);
				continue;
			}
			if (b_rs == 1 && q * 64 + 64 <= k) {
				/* columns of op(b) are contiguous: each one's 16
				 * quads scattered down the tile's rows */
				for (int j = 0; j < 16; j++) {
					int col = t * 16 + j;
					__m512i v = col < n ? _mm512_loadu_si512(
								      b + col * b_cs + q * 64)
							    : _mm512_setzero_si512();
					_mm512_i32scatter_epi32(tb + j * 4, tilec_amx_rows,
								v, 4);
				}
				continue;
			}
			for (int r = 0; r < 16; r++)
				for (int j = 0; j < 16; j++)
					for (int h = 0; h < 4; h++) {
						int col = t * 16 + j, kk = q * 64 + 4 * r + h;
						tb[(r * 16 + j) * 4 + h] =
							col < n && kk < k ? b[kk * b_rs + col * b_cs] : 0;
					}
		}
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n]: int8 operands, i32 accumulate
 * (exact, wrapping as i32 does), on AMX tiles (tdpbssd on quads of k). */
static inline TILEC_AMX void
tilec_gemm_i8_amx(int m, int n, int k, int *c, int ldc, const signed char *a,
		  int lda, int trans_a, const signed char *b, int ldb,
		  int trans_b, int kc)
{
	TILEC_AMX_GEMM(signed char, 64, tilec_amx_pack_i8, _tile_dpbssd, int,
		       tilec_amx_add_i32, 1)
}
#endif /* x86-64 */

/* --- Portable: 4 x 16 in arrays the compiler vectorizes ------------------- */

#define TILEC_GENERIC_MR 4
#define TILEC_GENERIC_NR 16

static inline void
tilec_strip_f32_generic(int mr, int k, const float *a, size_t a_rs,
			size_t a_cs, const float *restrict pb, float *c,
			size_t ldc, int nr)
{
	enum { MR = TILEC_GENERIC_MR, NR = TILEC_GENERIC_NR };
	float acc[MR][NR] = { { 0 } };
	for (int p = 0; p < k; p++)
		for (int r = 0; r < MR; r++)
			for (int j = 0; j < NR; j++)
				acc[r][j] += (r < mr ? a[r * a_rs + p * a_cs]
						     : 0.0f) *
					     pb[p * NR + j];
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < nr; j++)
			c[r * ldc + j] += acc[r][j];
}

/* c[m][n] += op(a)[m][k] * op(b)[k][n], B packed in kc x NR panels. */
static inline void
tilec_gemm_f32_generic(int m, int n, int k, float *c, int ldc,
		       const float *a, int lda, int trans_a, const float *b,
		       int ldb, int trans_b, int kc)
{
	TILEC_GEMM_F32_LOOPS(TILEC_GENERIC_MR, TILEC_GENERIC_NR, 16,
			     tilec_strip_f32_generic)
}

#pragma GCC diagnostic pop

#endif /* TILEC_CPU_GEMM_H */
