// layout.cu - wgmma's view of the shared tiles copy_g2s writes, checked on
// the host.
//
// For each shape of operand tile the wgmma path uses (K-major and
// MN-major, rows of 32, 64 and 128 bytes, 128-byte column panels), every
// instruction's descriptor (SwizzledTile::k_major, mn_major) is decoded and
// the address of each element of its operand is computed from the
// canonical layouts of the PTX ISA ("Shared Memory Matrix Layout":
// K-major ((8,m),(T,2k)):((S,SBO),(1,T)), MN-major
// ((T,S/16,m),(8,k)):((1,T,LBO),(S,SBO)) for a swizzle of S bytes, then
// Swizzle<log2(S/16),4,3> on the address bits).  It must be where
// copy_g2s put that element (tile_offset).  Exit status 0 when every
// element matches; otherwise the first mismatches are printed.
#include "tilec/cuda/tilec_cuda.cuh"
#include "tilec/cuda/tilec_sm90.cuh"

#include <cstdio>

static int failures;

struct Desc {
	unsigned start, lbo, sbo, span;
};

static Desc
decode(unsigned long long d)
{
	const unsigned mode = (unsigned)(d >> 62);
	return Desc{ (unsigned)(d & 0x3fff) << 4, (unsigned)((d >> 16) & 0x3fff) << 4,
		     (unsigned)((d >> 32) & 0x3fff) << 4, mode == 1 ? 128u : mode == 2 ? 64u : 32u };
}

// Swizzle<B, 4, 3>: address bits 7 .. 7 + B - 1 XORed into bits 4 ...
static unsigned
swizzle(unsigned addr, unsigned span)
{
	return addr ^ (((addr >> 7) & (span / 16 - 1)) << 4);
}

// Where copy_g2s puts element (r, c) of the tile at base.
template <typename T, int ROWS, int COLS>
static unsigned
placed(unsigned base, int r, int c)
{
	constexpr int SWIZZLE = COLS * (int)sizeof(T) > 128 ? tilec::SWIZZLE_PANELS : 1;
	using L = tilec::SmemRows<T, ROWS, COLS, SWIZZLE>;
	return base + tilec::tile_offset<L::SW, T, L::PR>(r, c, COLS);
}

static void
expect(const char *what, int r, int c, unsigned got, unsigned want)
{
	if (got != want && failures++ < 10)
		std::printf("%s: element (%d, %d) read at %u, written at %u\n", what, r, c, got, want);
}

// A K-major operand: NR rows (M or N) of each instruction, k-steps of 32
// bytes (16 elements of 16 bits, 32 of 8).
template <typename T, int ROWS, int COLS, int NR>
static void
check_k_major(const char *what)
{
	constexpr unsigned E = sizeof(T), TE = 16 / E, KS = 32 / E;
	const unsigned base = 32768;
	const tilec::SwizzledTile<T, ROWS, COLS> tile(base);
	for (int r0 = 0; r0 < ROWS; r0 += NR)
		for (int k0 = 0; k0 < COLS; k0 += KS) {
			const Desc d = decode(tile.k_major(r0, k0));
			for (int i = 0; i < NR; i++)
				for (int j = 0; j < (int)KS; j++) {
					const unsigned off = i % 8 * d.span + i / 8 * d.sbo + j % TE * E + j / TE * 16;
					expect(what, r0 + i, k0 + j, swizzle(d.start + off, d.span),
					       placed<T, ROWS, COLS>(base, r0 + i, k0 + j));
				}
		}
}

// An MN-major operand: rows are K (k-steps of 16), NC columns (M or N) of
// each instruction.
template <typename T, int ROWS, int COLS, int NC>
static void
check_mn_major(const char *what)
{
	constexpr unsigned E = sizeof(T), TE = 16 / E;
	const unsigned base = 32768;
	const tilec::SwizzledTile<T, ROWS, COLS> tile(base);
	for (int k0 = 0; k0 < ROWS; k0 += 16)
		for (int c0 = 0; c0 < COLS; c0 += NC) {
			const Desc d = decode(tile.mn_major(k0, c0));
			const unsigned run = d.span / 16 * TE; // elements of one swizzle row
			for (int i = 0; i < NC; i++)
				for (int j = 0; j < 16; j++) {
					const unsigned off = i % TE * E + i % run / TE * 16 + i / run * d.lbo +
							     j % 8 * d.span + j / 8 * d.sbo;
					expect(what, k0 + j, c0 + i, swizzle(d.start + off, d.span),
					       placed<T, ROWS, COLS>(base, k0 + j, c0 + i));
				}
		}
}

int
main()
{
	// A[M][K]: K-major, 64-row instructions.
	check_k_major<__half, 128, 64, 64>("A 128x64");
	check_k_major<__half, 64, 32, 64>("A 64x32");
	check_k_major<__half, 64, 16, 64>("A 64x16");
	check_k_major<__nv_bfloat16, 128, 128, 64>("A 128x128 panels");
	check_k_major<__half, 256, 256, 64>("A 256x256 panels");
	// B[N][K] (TILE_TRANS_B): K-major, NI-row instructions.
	check_k_major<__half, 256, 64, 128>("B^T 256x64");
	check_k_major<__half, 128, 128, 64>("B^T 128x128 panels");
	// 8-bit operands (fp8, s8), K-major only: k-steps of 32.
	check_k_major<tilec::fp8e4m3, 128, 128, 64>("fp8 A 128x128");
	check_k_major<tilec::fp8e4m3, 128, 64, 64>("fp8 A 128x64");
	check_k_major<signed char, 256, 256, 128>("s8 B^T 256x256 panels");
	check_k_major<signed char, 64, 32, 64>("s8 A 64x32");
	// B[K][N]: N-major, NI columns per instruction.
	check_mn_major<__half, 64, 256, 128>("B 64x256 panels n128");
	check_mn_major<__half, 64, 256, 256>("B 64x256 panels n256");
	check_mn_major<__nv_bfloat16, 32, 128, 64>("B 32x128 panels n64");
	check_mn_major<__half, 64, 64, 64>("B 64x64");
	check_mn_major<__half, 32, 32, 32>("B 32x32");
	check_mn_major<__half, 16, 16, 16>("B 16x16");
	// A[K][M] (TILE_TRANS_A): M-major, 64 columns per instruction.
	check_mn_major<__half, 64, 128, 64>("A^T 64x128 panels");
	check_mn_major<__half, 32, 64, 64>("A^T 32x64");
	if (failures)
		std::printf("%d elements read where they were not written\n", failures);
	else
		std::printf("every wgmma operand element is read where copy_g2s wrote it\n");
	return failures ? 1 : 0;
}
