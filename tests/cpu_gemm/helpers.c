/*
 * helpers.c - templates/cpu/gemm.h's helpers against a plain loop nest:
 * every f32 micro-kernel the CPU can run (AVX-512, AVX2, portable), the
 * int8 VNNI kernel, and the AMX bf16 (operands held as float, and as
 * stored: the bits) and int8 kernels, and the 16 x 16 transpose their
 * packs use.  The AMX ones run
 * here on an emulation of the tile instructions (below), so the packing,
 * the tile layouts and the edges are checked on any x86-64 CPU; the
 * instructions themselves are only compiled (tests/cpu_gemm.sh looks for
 * them in the object).  Ragged shapes, both transposes, panel depths
 * smaller than k; c starts from random values (the helpers add into it),
 * and f32 results are compared with a double-precision sum, integers
 * exactly.  Exit 0 when all agree.
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- An emulation of the AMX tile instructions the helpers use ---------- */

static unsigned char emu_tile[8][16][64];

static void
emu_loadd(int t, const void *base, long stride)
{
	for (int r = 0; r < 16; r++)
		memcpy(emu_tile[t][r], (const char *)base + r * stride, 64);
}

static void
emu_stored(int t, void *base, long stride)
{
	for (int r = 0; r < 16; r++)
		memcpy((char *)base + r * stride, emu_tile[t][r], 64);
}

static float
emu_bf16(const unsigned char *p)
{
	unsigned int u = (unsigned)(p[0] | p[1] << 8) << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* tdpbf16ps c, a, b: c[m][n] += sum over pairs of a[m][2p+h] * b[p][n][h] */
static void
emu_dpbf16ps(int c, int a, int b)
{
	for (int m = 0; m < 16; m++)
		for (int n = 0; n < 16; n++) {
			float acc;
			memcpy(&acc, &emu_tile[c][m][4 * n], 4);
			for (int p = 0; p < 16; p++)
				for (int h = 0; h < 2; h++)
					acc += emu_bf16(&emu_tile[a][m][4 * p + 2 * h]) *
					       emu_bf16(&emu_tile[b][p][4 * n + 2 * h]);
			memcpy(&emu_tile[c][m][4 * n], &acc, 4);
		}
}

/* tdpbssd c, a, b: signed bytes in quads, i32 sums */
static void
emu_dpbssd(int c, int a, int b)
{
	for (int m = 0; m < 16; m++)
		for (int n = 0; n < 16; n++) {
			int acc;
			memcpy(&acc, &emu_tile[c][m][4 * n], 4);
			for (int p = 0; p < 16; p++)
				for (int h = 0; h < 4; h++)
					acc += (signed char)emu_tile[a][m][4 * p + h] *
					       (signed char)emu_tile[b][p][4 * n + h];
			memcpy(&emu_tile[c][m][4 * n], &acc, 4);
		}
}

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#undef _tile_dpbssd
#undef _tile_release
#define _tile_loadd(t, p, s) emu_loadd(t, p, s)
#define _tile_stored(t, p, s) emu_stored(t, p, s)
#define _tile_zero(t) memset(emu_tile[t], 0, sizeof emu_tile[t])
#define _tile_dpbf16ps(c, a, b) emu_dpbf16ps(c, a, b)
#define _tile_dpbssd(c, a, b) emu_dpbssd(c, a, b)
#define _tile_release() ((void)0)
#define _tile_loadconfig(cfg) ((void)(cfg))
#define TILEC_AMX_PERMIT() ((void)0)

#include "cpu/gemm.h"

static unsigned int seed = 12345;

static float
rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float
round_bf16(float x)
{
	unsigned int u;
	memcpy(&u, &x, 4);
	u = (u + 0x7fff + (u >> 16 & 1)) & 0xffff0000u;
	memcpy(&x, &u, 4);
	return x;
}

typedef void (*GemmF32)(int, int, int, float *, int, const float *, int, int,
			const float *, int, int, int);
typedef void (*GemmI8)(int, int, int, int *, int, const signed char *, int,
		       int, const signed char *, int, int, int);
typedef void (*GemmBits)(int, int, int, float *, int, const unsigned short *,
			 int, int, const unsigned short *, int, int, int);

/* What a helper takes and gives: f32 operands, bf16 ones (held in
 * floats, or as their bits), into f32; int8 operands into i32, exact. */
typedef enum { F32, BF16, BF16_BITS, I8 } Kind;

/* One helper under test. */
typedef struct Helper {
	const char *name;
	Kind kind;
	GemmF32 f32;   /* F32, BF16 */
	GemmI8 i8;     /* I8 */
	GemmBits bits; /* BF16_BITS */
} Helper;

/* A random operand of the kind's type, as a double. */
static double
operand(Kind kind)
{
	switch (kind) {
	case F32:
		return rnd();
	case BF16:
	case BF16_BITS:
		return round_bf16(rnd());
	default:
		return (signed char)(rnd() * 128.0f);
	}
}

/* v[0 .. n) in the helper's types (malloc'd): float for F32 and BF16,
 * bf16 bits for BF16_BITS operands, int8 operands and int c for I8. */
static void *
typed(const double *v, size_t n, Kind kind, int is_c)
{
	if (kind == BF16_BITS && !is_c) {
		unsigned short *p = malloc(sizeof *p * n);
		for (size_t i = 0; i < n; i++) {
			float f = (float)v[i];
			unsigned int u;
			memcpy(&u, &f, 4);
			p[i] = (unsigned short)(u >> 16);
		}
		return p;
	}
	if (kind != I8) {
		float *p = malloc(sizeof *p * n);
		for (size_t i = 0; i < n; i++)
			p[i] = (float)v[i];
		return p;
	}
	if (is_c) {
		int *p = malloc(sizeof *p * n);
		for (size_t i = 0; i < n; i++)
			p[i] = (int)v[i];
		return p;
	}
	signed char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (signed char)v[i];
	return p;
}

/* c = h(a, b) + c, on the helper's types; every value is exact in a
 * double (int8 and bf16 operands, c's starting values), and c holds what
 * the helper left, padding included. */
static void
call(const Helper *h, int m, int n, int k, double *c, int ldc,
     const double *a, int lda, int ta, const double *b, int ldb, int tb,
     int kc)
{
	size_t na = (size_t)(ta ? k : m) * lda, nb = (size_t)(tb ? n : k) * ldb;
	size_t nc = (size_t)m * ldc;
	void *pa = typed(a, na, h->kind, 0), *pb = typed(b, nb, h->kind, 0);
	void *pc = typed(c, nc, h->kind, 1);
	if (h->kind == I8)
		h->i8(m, n, k, pc, ldc, pa, lda, ta, pb, ldb, tb, kc);
	else if (h->kind == BF16_BITS)
		h->bits(m, n, k, pc, ldc, pa, lda, ta, pb, ldb, tb, kc);
	else
		h->f32(m, n, k, pc, ldc, pa, lda, ta, pb, ldb, tb, kc);
	for (size_t i = 0; i < nc; i++)
		c[i] = h->kind == I8 ? ((int *)pc)[i] : ((float *)pc)[i];
	free(pa);
	free(pb);
	free(pc);
}

static int failures;

/* Helper h on one shape against a double-precision loop nest from the
 * same random c: floats within 1e-4 per step of k, integers exactly, and
 * the padding of c's rows untouched (its starting values, exact in a
 * double). */
static void
check(const Helper *h, int m, int n, int k, int ta, int tb, int kc)
{
	int lda = (ta ? m : k) + (k % 2 ? 5 : 8), ldb = (tb ? k : n) + 3,
	    ldc = n + 1;
	size_t na = (size_t)(ta ? k : m) * lda, nb = (size_t)(tb ? n : k) * ldb;
	size_t nc = (size_t)m * ldc;
	double *a = malloc(sizeof *a * na), *b = malloc(sizeof *b * nb);
	double *c = malloc(sizeof *c * nc), *r = malloc(sizeof *r * nc);
	for (size_t i = 0; i < na; i++)
		a[i] = operand(h->kind);
	for (size_t i = 0; i < nb; i++)
		b[i] = operand(h->kind);
	if (h->kind == I8) {
		a[0] = -128; /* the extremes the flip to unsigned must survive */
		b[0] = -128;
	}
	for (size_t i = 0; i < nc; i++)
		r[i] = c[i] = h->kind == I8 ? (int)(rnd() * 1000.0f)
					    : (float)rnd();
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			for (int p = 0; p < k; p++)
				r[i * ldc + j] += (ta ? a[p * lda + i] : a[i * lda + p]) *
						  (tb ? b[j * ldb + p] : b[p * ldb + j]);
	call(h, m, n, k, c, ldc, a, lda, ta, b, ldb, tb, kc);
	double tol = h->kind == I8 ? 0 : 1e-4 * k;
	for (size_t i = 0; i < nc; i++) {
		double d = c[i] - r[i];
		int pad = (int)(i % ldc) >= n;
		if ((pad && c[i] != r[i]) || d > tol || d < -tol) {
			printf("FAIL %s m=%d n=%d k=%d trans_a=%d trans_b=%d kc=%d: "
			       "c[%zu][%zu] = %.9g, expected %.9g\n", h->name, m,
			       n, k, ta, tb, kc, i / ldc, i % ldc, c[i], r[i]);
			failures++;
			break;
		}
	}
	free(a);
	free(b);
	free(c);
	free(r);
}

/* tilec_amx_transpose against its definition: d[r][j] = s[j][r], 32-bit
 * elements, s's rows rs bytes apart. */
static void
check_transpose(void)
{
	static unsigned int s[16][19], d[16][16];
	for (int j = 0; j < 16; j++)
		for (int r = 0; r < 19; r++)
			s[j][r] = (unsigned)(j * 1000 + r);
	tilec_amx_transpose(d, s, sizeof s[0]);
	for (int r = 0; r < 16; r++)
		for (int j = 0; j < 16; j++)
			if (d[r][j] != s[j][r]) {
				printf("FAIL transpose: d[%d][%d] = %u, expected "
				       "%u\n", r, j, d[r][j], s[j][r]);
				failures++;
				return;
			}
}

int
main(void)
{
	/* m of 32 and 64 and k of 64 and 128 (with lda a multiple of 8):
	 * a's tiles read in place by the AMX helpers whose buffers hold
	 * what the tiles do */
	static const int ms[] = { 1, 5, 14, 16, 29, 32, 33, 64 };
	static const int ns[] = { 1, 7, 16, 17, 33, 64 };
	static const int ks[] = { 1, 3, 37, 64, 70, 128 };
	__builtin_cpu_init();
	int avx512 = __builtin_cpu_supports("avx512f") &&
		     __builtin_cpu_supports("avx512bw") &&
		     __builtin_cpu_supports("avx512vl") &&
		     __builtin_cpu_supports("fma");
	int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	int vnni = avx512 && __builtin_cpu_supports("avx512vnni");
	Helper helpers[8];
	int nhelpers = 0;
	helpers[nhelpers++] = (Helper){ .name = "generic", .kind = F32,
					.f32 = tilec_gemm_f32_generic };
	if (avx2)
		helpers[nhelpers++] = (Helper){ .name = "avx2", .kind = F32,
						.f32 = tilec_gemm_f32_avx2 };
	if (avx512)
		helpers[nhelpers++] = (Helper){ .name = "avx512", .kind = F32,
						.f32 = tilec_gemm_f32_avx512 };
	if (avx2)
		helpers[nhelpers++] = (Helper){ .name = "avx2 int8", .kind = I8,
						.i8 = tilec_gemm_i8_avx2 };
	if (vnni)
		helpers[nhelpers++] = (Helper){ .name = "vnni", .kind = I8,
						.i8 = tilec_gemm_i8_vnni };
	/* The AMX helpers are compiled for AVX-512 (TILEC_AMX) around the
	 * emulated tile instructions: they run where AVX-512 does. */
	if (avx512) {
		helpers[nhelpers++] = (Helper){ .name = "amx bf16 (emulated)",
						.kind = BF16,
						.f32 = tilec_gemm_bf16_amx };
		helpers[nhelpers++] = (Helper){
			.name = "amx bf16 as stored (emulated)",
			.kind = BF16_BITS, .bits = tilec_gemm_bf16_amx_stored };
		helpers[nhelpers++] = (Helper){ .name = "amx int8 (emulated)",
						.kind = I8,
						.i8 = tilec_gemm_i8_amx };
	}
	if (avx512)
		check_transpose();
	int runs = 0;
	for (int x = 0; x < 8; x++)
		for (int y = 0; y < 6; y++)
			for (int z = 0; z < 6; z++)
				for (int t = 0; t < 4; t++) {
					int m = ms[x], n = ns[y], k = ks[z];
					int ta = t & 1, tb = t >> 1;
					int kc = (x + y + z) % 2 ? 16 : 256;
					for (int h = 0; h < nhelpers; h++)
						check(&helpers[h], m, n, k, ta, tb, kc);
					runs++;
				}
	printf("%d shapes; f32 on generic%s%s; int8 on AVX2 %s, on VNNI %s; "
	       "AMX bf16 (as float and as stored) and int8 %s; %d failures\n",
	       runs, avx2 ? ", avx2" : "", avx512 ? ", avx512" : "",
	       avx2 ? "checked" : "skipped (no AVX2)",
	       vnni ? "checked" : "skipped (no AVX512-VNNI)",
	       avx512 ? "emulated" : "skipped (no AVX-512)", failures);
	return failures != 0;
}
