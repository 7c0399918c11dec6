// tilec_sm90.cuh - sm_90a device helpers: tile_gemm by wgmma.
//
// Kernels whose gemms layout.c gave to wgmma include this file after
// tilec_cuda.cuh (docs/backend-cuda.md, "wgmma").  A warpgroup (4 warps,
// 128 threads) multiplies 64-row tiles of the accumulator, A and B read by
// the tensor cores straight from shared memory through matrix
// descriptors.  The shared tiles are the ones copy_g2s fills swizzled
// (tile_offset): rows of 32 or 64 bytes, or 128-byte rows in column
// panels, each 8-row atom 1024-byte aligned, which is the canonical
// swizzled layout of the PTX ISA ("Shared Memory Matrix Layout") for both
// K-major and MN-major operands.
#pragma once

#include "tilec/cuda/tilec_wgmma_insn.cuh"

// wgmma is in sm_90a's instruction set only.  `nvcc -arch=sm_90a` also
// compiles the source to compute_90 PTX (for later GPUs to JIT), which
// has none: there the helpers that issue it trap.  Device passes for
// sm_90a (nvcc's and NVRTC's) define __CUDA_ARCH_FEAT_SM90_ALL.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
#define TILEC_HAS_WGMMA 1
#else
#define TILEC_HAS_WGMMA 0
#endif

namespace tilec {

// --- The accumulator distribution of wgmma ---------------------------------------------
//
// Warpgroup g = threadIdx.x / 128, of a GROUPS_M x GROUPS_N grid (g =
// gm * GROUPS_N + gn), owns TILES 64-row (AXIS 0) or 8-column (AXIS 1)
// tiles; in each 64-row tile warp w = threadIdx.x / 32 % 4 of the group
// holds rows 16w .. 16w + 15, its lanes as in Mma's 16-row tiles (rows
// l / 4 and l / 4 + 8, columns 2 * (l % 4) and one more).
template <int AXIS, int TILES, int GROUPS_M, int GROUPS_N> struct Wgmma {
	static constexpr int count = 2 * TILES;
	// Rows: lane bits 2-4, the warp-in-group bits 5-6 and the group_m
	// bits; columns: lane bits 0-1 and the group_n bits.
	static constexpr unsigned BITS = AXIS == 0 ? (0x7cu | ((GROUPS_M - 1u) * GROUPS_N) << 7)
						   : (0x03u | (GROUPS_N - 1u) << 7);
	__device__ static __forceinline__ int index(int r)
	{
		const int lane = threadIdx.x % 32, warp = threadIdx.x / 32 % 4, group = threadIdx.x / 128;
		if (AXIS == 0)
			return (group / GROUPS_N) * TILES * 64 + (r / 2) * 64 + warp * 16 + lane / 4 + (r % 2) * 8;
		return (group % GROUPS_N) * TILES * 8 + (r / 2) * 8 + 2 * (lane % 4) + r % 2;
	}
};

template <int AXIS, int TILES, int GROUPS_M, int GROUPS_N> struct VecOf<Wgmma<AXIS, TILES, GROUPS_M, GROUPS_N>> {
	static constexpr int value = AXIS == 1 ? 2 : 1;
};

// --- Shared tiles as wgmma reads them ------------------------------------------------

// A ROWS x COLS tile of T at shared address s, swizzled as tile_offset
// lays it out: rows of ROW bytes whose 16-byte chunks are XOR-permuted
// over SPAN = min(ROW, 128) bytes, rows wider than 128 bytes in column
// panels of ROWS 128-byte rows.  The swizzle mode of its descriptors is
// SPAN's (128, 64 or 32 bytes); the hardware permutes by address bits,
// which is why smem.c starts such tiles 1024-byte aligned.
template <typename T, int ROWS, int COLS> struct SwizzledTile {
	static constexpr int E = (int)sizeof(T);
	static constexpr int ROW = COLS * E;
	static constexpr int SPAN = ROW < 128 ? ROW : 128;
	static constexpr int PANEL = ROWS * SPAN; // bytes of one column panel
	static_assert(ROW == 32 || ROW == 64 || ROW % 128 == 0, "SwizzledTile: rows of 32, 64 or whole 128 bytes");
	static_assert(ROWS % 8 == 0, "SwizzledTile: whole 8-row atoms");
	unsigned s;

	__device__ __forceinline__ explicit SwizzledTile(const T *p) : s(smem_u32(p)) {}
	// At shared address s (tests/wgmma_layout.cu checks the
	// descriptors on the host).
	__host__ __device__ __forceinline__ explicit SwizzledTile(unsigned s) : s(s) {}

	// The byte offset from s of element (r, c) unswizzled, c a whole
	// 16-byte chunk.
	__host__ __device__ static __forceinline__ unsigned offset(int r, int c)
	{
		return (unsigned)(c * E / SPAN * PANEL + r * SPAN + c * E % SPAN);
	}
	// A matrix descriptor: start address, leading and stride byte
	// offsets (bits 16 and 32, in 16-byte units), swizzle mode (bits
	// 62-63: 1 for 128 bytes, 2 for 64, 3 for 32).
	__host__ __device__ static __forceinline__ unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo)
	{
		constexpr unsigned long long MODE = SPAN == 128 ? 1 : SPAN == 64 ? 2 : 3;
		return (unsigned long long)((addr & 0x3ffff) >> 4) | (unsigned long long)(lbo >> 4) << 16 |
		       (unsigned long long)(sbo >> 4) << 32 | MODE << 62;
	}
	// The operand whose rows (M or N) start at row r and whose k-step
	// starts at column k: K-major, the k-step within each row; 8-row
	// groups SBO = 8 rows apart; no leading offset (1, as swizzled
	// K-major layouts assume).
	__host__ __device__ __forceinline__ unsigned long long k_major(int r, int k) const
	{
		return at(offset(r, k), 16, 8 * SPAN);
	}
	// The operand whose k-step starts at row k and whose M or N start at
	// column c, a whole SPAN: MN-major, SPAN-byte runs of it PANEL apart
	// (the leading offset), 8-row groups of K 8 rows apart.
	__host__ __device__ __forceinline__ unsigned long long mn_major(int k, int c) const
	{
		return at(offset(k, c), PANEL, 8 * SPAN);
	}
	// The descriptor of the operand `off` bytes from s: s's with off / 16
	// added to the start-address field.  Shared addresses stay below
	// 2^18, so the field (bits 0-13, in 16-byte units) never carries into
	// the next: s's descriptor is computed once for every operand of a
	// gemm, each operand's a 32-bit add of a constant (the address's own
	// mask, shift and merge for each cost the attention loop about two
	// instructions a score on the uniform datapath).
	__host__ __device__ __forceinline__ unsigned long long at(unsigned off, unsigned lbo, unsigned sbo) const
	{
		const unsigned long long d = desc(s, lbo, sbo);
		return (d & ~0xffffffffull) | (unsigned)((unsigned)d + (off >> 4));
	}
};

// Stop the kernel (a trap, which the launch reports) if the block's
// dynamic shared memory does not start ALIGN-byte aligned: the swizzled
// tiles' offsets assume it, and a misaligned atom would be read
// permuted, silently wrong.
template <unsigned ALIGN> __device__ __forceinline__ void require_aligned(const void *smem)
{
	if (smem_u32(smem) % ALIGN != 0)
		__trap();
}

// Keep the compiler from moving accesses of acc across the asynchronous
// region: wgmma writes the registers until wgmma.wait_group returns.
template <int RS, int CS> __device__ __forceinline__ void fence_operands(float (&acc)[RS][CS])
{
#pragma unroll
	for (int i = 0; i < RS; i++)
#pragma unroll
		for (int j = 0; j < CS; j++)
			asm volatile("" : "+f"(acc[i][j])::"memory");
}
template <int RS, int CS> __device__ __forceinline__ void fence_operands(int (&acc)[RS][CS])
{
#pragma unroll
	for (int i = 0; i < RS; i++)
#pragma unroll
		for (int j = 0; j < CS; j++)
			asm volatile("" : "+r"(acc[i][j])::"memory");
}

// --- Matrix multiply (sm_90a: wgmma.mma_async) -----------------------------------------
//
// acc += A * B for one warpgroup's TM x TN tiles (64 rows, 8 columns
// each), starting at row m0 and column n0, in instructions of NI columns
// (a power of two from 16 to 256 dividing TN * 8; layout.c picks it).  A
// is M x K (K x M when TRANS_A: M-major), B is K x N (N x K when TRANS_B:
// K-major).  16-bit operands take k-steps of 16 and f32 accumulators;
// 8-bit ones (fp8, K-major A and B only) k-steps of 32, into f32 (fp8)
// or s32 (s8).  Every thread of the group calls it with the same
// arguments.
//
// The shared tiles were written by this thread's and other threads'
// copies, which the caller waited for; fence.proxy.async orders those
// generic-proxy writes before the tensor cores' reads.  All k-steps of
// all tiles are issued, then committed as one group; hook() runs while
// they execute (a pipelined loop's next copies), and the helper returns
// once the group has completed, so the stages it read may be refilled and
// acc read.
//
// With SUM_PROMOTED (layout.c asks for it where the form sums below the
// accumulator's precision: fp8 into f32, which keeps about 14 bits) the
// instructions sum into a zeroed accumulator of the same shape, added
// into acc in f32 once they complete: the reduced-precision sums are
// then only over this gemm's K, not the whole loop's.
enum Sum { SUM_IN_PLACE, SUM_PROMOTED };

template <int TM, int TN, int NI, bool TRANS_A, bool TRANS_B, typename Acc, typename T, int AR, int AC, int BR,
	  int BC>
__device__ __forceinline__ void wgmma_issue_ss(Acc (&acc)[2 * TM][2 * TN], SwizzledTile<T, AR, AC> A,
					       SwizzledTile<T, BR, BC> B, int m0, int n0)
{
	constexpr int K = TRANS_A ? AR : AC, KK = 32 / (int)sizeof(T); // k-step
	static_assert(K % KK == 0 && (TRANS_B ? BC : BR) == K, "wgmma_ss: K is whole k-steps of A and B");
	static_assert(TN * 8 % NI == 0 && NI >= 16 && NI <= 256, "wgmma_ss: whole instructions of NI columns");
#pragma unroll
	for (int k = 0; k < K; k += KK)
#pragma unroll
		for (int mi = 0; mi < TM; mi++)
#pragma unroll
			for (int ni = 0; ni < TN * 8 / NI; ni++) {
				const int m = m0 + mi * 64, n = n0 + ni * NI;
				const unsigned long long a = TRANS_A ? A.mn_major(k, m) : A.k_major(m, k);
				const unsigned long long b = TRANS_B ? B.k_major(n, k) : B.mn_major(k, n);
				// M-major A is TILE_TRANS_A's; N-major B is B
				// stored [K][N], without TILE_TRANS_B.
				WgmmaInsn<T, NI>::template issue<TRANS_A, !TRANS_B>(acc, 2 * mi, ni * NI / 4, a, b);
			}
}

// Wait until at most PENDING of this warpgroup's wgmma groups, which
// write acc, are in flight; acc may be read once no group is.
template <int PENDING, typename Acc, int RS, int CS> __device__ __forceinline__ void wgmma_wait(Acc (&acc)[RS][CS])
{
#if TILEC_HAS_WGMMA
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
	fence_operands(acc);
#else
	__trap();
#endif
}

// One group of wgmma_issue_ss into d.  With PENDING 0, hook() runs while
// it executes, and d may be read once it returns.  With PENDING 1 (the
// pipelined loop's gemm, whose acc nothing else touches in the loop) it
// returns with this group in flight, once the previous one completed,
// and hook() runs after that wait (it may refill the stage the previous
// group read); a later wgmma_wait<0>(d) ends it.  Groups into the same
// accumulator run in order without a fence between them.
template <int TM, int TN, int NI, bool TRANS_A, bool TRANS_B, int PENDING, typename Acc, typename T, int AR,
	  int AC, int BR, int BC, typename Hook>
__device__ __forceinline__ void wgmma_group_ss(Acc (&d)[2 * TM][2 * TN], SwizzledTile<T, AR, AC> A,
					       SwizzledTile<T, BR, BC> B, int m0, int n0, Hook &&hook)
{
	static_assert(PENDING == 0 || PENDING == 1, "wgmma_ss: 0 or 1 groups left in flight");
#if TILEC_HAS_WGMMA
	fence_operands(d);
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
	wgmma_issue_ss<TM, TN, NI, TRANS_A, TRANS_B>(d, A, B, m0, n0);
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	if (PENDING == 0)
		hook();
	wgmma_wait<PENDING>(d);
	if (PENDING == 1)
		hook();
#else
	__trap();
#endif
}

// The two ways wgmma_ss sums (a specialization each, so that neither
// holds the other's dead code).
template <Sum SUM> struct SumInto;
template <> struct SumInto<SUM_IN_PLACE> {
	template <int TM, int TN, int NI, bool TRANS_A, bool TRANS_B, int PENDING, typename Acc, typename T,
		  int AR, int AC, int BR, int BC, typename Hook>
	__device__ static __forceinline__ void gemm(Acc (&acc)[2 * TM][2 * TN], SwizzledTile<T, AR, AC> A,
						    SwizzledTile<T, BR, BC> B, int m0, int n0, Hook &&hook)
	{
		wgmma_group_ss<TM, TN, NI, TRANS_A, TRANS_B, PENDING>(acc, A, B, m0, n0, hook);
	}
};
template <> struct SumInto<SUM_PROMOTED> {
	template <int TM, int TN, int NI, bool TRANS_A, bool TRANS_B, int PENDING, typename Acc, typename T,
		  int AR, int AC, int BR, int BC, typename Hook>
	__device__ static __forceinline__ void gemm(Acc (&acc)[2 * TM][2 * TN], SwizzledTile<T, AR, AC> A,
						    SwizzledTile<T, BR, BC> B, int m0, int n0, Hook &&hook)
	{
		static_assert(PENDING == 0, "wgmma_ss: a promoted sum is read when it returns");
		Acc part[2 * TM][2 * TN];
#pragma unroll
		for (int i = 0; i < 2 * TM; i++)
#pragma unroll
			for (int j = 0; j < 2 * TN; j++)
				part[i][j] = 0;
		wgmma_group_ss<TM, TN, NI, TRANS_A, TRANS_B, 0>(part, A, B, m0, n0, hook);
#pragma unroll
		for (int i = 0; i < 2 * TM; i++)
#pragma unroll
			for (int j = 0; j < 2 * TN; j++)
				acc[i][j] += part[i][j];
	}
};

template <int TM, int TN, int NI, bool TRANS_A, bool TRANS_B, Sum SUM = SUM_IN_PLACE, int PENDING = 0,
	  typename Acc, typename T, int AR, int AC, int BR, int BC, typename Hook = NoHook>
__device__ __forceinline__ void wgmma_ss(Acc (&acc)[2 * TM][2 * TN], SwizzledTile<T, AR, AC> A,
					 SwizzledTile<T, BR, BC> B, int m0, int n0, Hook &&hook = Hook())
{
	SumInto<SUM>::template gemm<TM, TN, NI, TRANS_A, TRANS_B, PENDING>(acc, A, B, m0, n0, hook);
}

// acc += A * B with A in registers: a fragment spread like acc's rows
// whose group holds all K of its columns (K / 4 per thread, the Wgmma
// columns of another gemm's accumulator, converted), whose 16-column
// k-steps are exactly wgmma's A operand once packed to 16 bits: per warp
// the A fragment of mma.sync.m16n8k16 in its 16 rows.  B and the rest as
// for wgmma_ss.  ptxas keeps the packed registers alive until the
// instructions that read them have completed.
template <int TM, int TN, int NI, bool TRANS_B, typename T, int K4, int BR, int BC, typename Hook = NoHook>
__device__ __forceinline__ void wgmma_rs(float (&acc)[2 * TM][2 * TN], const float (&A)[2 * TM][K4],
					 SwizzledTile<T, BR, BC> B, int n0, Hook &&hook = Hook())
{
	constexpr int K = K4 * 4;
	static_assert(K % 16 == 0 && (TRANS_B ? BC : BR) == K, "wgmma_rs: K is whole k-steps of A and B");
	static_assert(TN * 8 % NI == 0 && NI >= 16 && NI <= 256, "wgmma_rs: whole instructions of NI columns");
#if TILEC_HAS_WGMMA
	fence_operands(acc);
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
	for (int kk = 0; kk < K / 16; kk++)
#pragma unroll
		for (int mi = 0; mi < TM; mi++) {
			unsigned a[4];
			pack_a16<T>(a, A, mi, kk);
#pragma unroll
			for (int ni = 0; ni < TN * 8 / NI; ni++) {
				const int n = n0 + ni * NI;
				const unsigned long long b = TRANS_B ? B.k_major(n, kk * 16) : B.mn_major(kk * 16, n);
				WgmmaInsnRS<T, NI>::template issue<!TRANS_B>(acc, 2 * mi, ni * NI / 4, a, b);
			}
		}
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	hook();
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	fence_operands(acc);
#else
	__trap();
#endif
}


// --- Tile copies by the tensor memory accelerator (TMA) ---------------------------------

// A tensor map parameter: the 128-byte descriptor the host builds with
// cuTensorMapEncodeTiled (CUtensorMap's layout; NVRTC has no cuda.h),
// which holds the tensor's base, extents and strides, the box one copy
// moves and the swizzle of the box's rows in shared memory; then whether
// the host built it (nonzero), which it does when the tensor's base is
// 16-byte aligned, its rows whole 16-byte multiples and no extent 0.
// Passed as a __grid_constant__ kernel parameter (docs/launch.md).
struct alignas(64) TensorMap {
	unsigned long long desc[16];
	unsigned usable;
};

// A tile copy of a pipelined loop's fast loop by TMA: a ROWS x COLS tile
// of T whose rows are stored as tile_offset lays them out with SPAN-byte
// swizzled chunks (SPAN = min(COLS * sizeof(T), 128)), in PANELS column
// panels of ROWS SPAN-byte rows when rows are wider than 128 bytes.
// Thread 0 moves it as one bulk tensor copy per panel, each a box of
// ROWS x SPAN bytes, after arriving on the stage's full barrier with the
// bytes to expect (one of the barrier's TMA_COPIES arrivals); the phase
// completes once they have landed and every thread has arrived.  Elements outside the tensor (any coordinate below
// 0 or at or past its extent) land as zeros: the hardware's bounds, no
// predicates.  The map's rank is the tensor's, its box 1 along the dims
// the tile does not cover; coordinates are innermost first.
//
// `aligned` holds when the host built the map (TensorMap::usable) and
// every iteration's box starts at a whole 16-byte vector: the first tile
// at `first` 16-byte aligned and the advance between two iterations'
// tiles whole vectors.  The hardware takes no other start: a box whose
// innermost coordinate is not a whole vector stops the kernel (an
// illegal instruction).  With the map built, the tensor's base and row
// strides are whole vectors, so this is the innermost coordinate's test.
// The caller keeps its other loop otherwise.
template <typename T, int ROWS, int COLS, int RANK>
struct TmaCopy {
	static constexpr int E = (int)sizeof(T);
	static constexpr int ROW = COLS * E;
	static constexpr int SPAN = ROW < 128 ? ROW : 128;
	static constexpr int PANELS = ROW / SPAN;
	static constexpr unsigned BYTES = (unsigned)(ROWS * ROW);
	static_assert(ROW == 32 || ROW == 64 || ROW % 128 == 0, "TmaCopy: rows of 32, 64 or whole 128 bytes");
	static_assert(ROWS <= 256 && SPAN / E <= 256, "TmaCopy: a box is at most 256 elements along each dim");
	static_assert(RANK >= 2 && RANK <= 5, "TmaCopy: tensors of rank 2 to 5");
	const TensorMap *map;
	bool aligned;

	__device__ __forceinline__ TmaCopy(const TensorMap &map, const T *first, long long advance)
		: map(&map),
		  aligned(map.usable != 0 && reinterpret_cast<unsigned long long>(first) % 16 == 0 &&
			  advance % (16 / E) == 0)
	{
	}
	// Iteration's tile into smem (1024-byte aligned, as smem.c places
	// swizzled tiles), completing on the mbarrier at shared address
	// `full`: by thread 0.  c holds the tile's origin, innermost first
	// (the column, then the row and the uncovered dims' indices).
	__device__ __forceinline__ void issue(T *smem, unsigned full, const int (&c)[RANK]) const
	{
		if (threadIdx.x == 0)
			issue_here(smem, full, c);
	}
	// The same by the calling thread (a producer warpgroup's, Roles).
	__device__ __forceinline__ void issue_here(T *smem, unsigned full, const int (&c)[RANK]) const
	{
#if TILEC_HAS_WGMMA
		// One of the barrier's TMA_COPIES arrivals (StageBarriers), with
		// the bytes it is to wait for.
		asm volatile("{\n.reg .b64 state;\n"
			     "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, [%0], %1;\n}\n"
			     ::"r"(full), "r"(BYTES) : "memory");
		const unsigned s = smem_u32(smem);
		const unsigned long long m = reinterpret_cast<unsigned long long>(map->desc);
#pragma unroll
		for (int p = 0; p < PANELS; p++) {
			const unsigned d = s + (unsigned)(p * ROWS * SPAN);
			const int c0 = c[0] + p * (SPAN / E);
			if constexpr (RANK == 2)
				asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
					     " [%0], [%1, {%3, %4}], [%2];\n"
					     ::"r"(d), "l"(m), "r"(full), "r"(c0), "r"(c[1]) : "memory");
			else if constexpr (RANK == 3)
				asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
					     " [%0], [%1, {%3, %4, %5}], [%2];\n"
					     ::"r"(d), "l"(m), "r"(full), "r"(c0), "r"(c[1]), "r"(c[2]) : "memory");
			else if constexpr (RANK == 4)
				asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
					     " [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
					     ::"r"(d), "l"(m), "r"(full), "r"(c0), "r"(c[1]), "r"(c[2]), "r"(c[3])
					     : "memory");
			else
				asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
					     " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
					     ::"r"(d), "l"(m), "r"(full), "r"(c0), "r"(c[1]), "r"(c[2]), "r"(c[3]),
					     "r"(c[4]) : "memory");
		}
#else
		__trap();
#endif
	}
};

// --- Warp specialization -------------------------------------------------------------
//
// A kernel whose pipelined loop expand_pipeline.c warp-specialized runs a
// producer warpgroup after the program's THREADS threads: it gives back
// registers (setmaxnreg.dec: it keeps PRODUCER_REGS), and its first
// thread issues the loop's TMA copies, waiting for each stage's empty
// barrier; the program's threads take the registers it gave
// (setmaxnreg.inc to CONSUMER_REGS) and run the program, the loop's
// copies replaced by waits on the full barriers.  Every warp of a
// warpgroup executes its setmaxnreg (.sync.aligned).
template <int THREADS, int PRODUCER_REGS, int CONSUMER_REGS> struct Roles {
	__device__ static __forceinline__ bool producer() { return threadIdx.x >= THREADS; }
	// The producer thread: the first of the producer warpgroup.
	__device__ static __forceinline__ bool producer_thread() { return threadIdx.x == THREADS; }
	__device__ static __forceinline__ void producer_registers()
	{
#if TILEC_HAS_WGMMA
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
#endif
	}
	__device__ static __forceinline__ void consumer_registers()
	{
#if TILEC_HAS_WGMMA
		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
#endif
	}
};

// A barrier of the first N threads (named barrier 1), which a producer
// warpgroup does not take part in.
template <int N> __device__ __forceinline__ void sync_threads()
{
	asm volatile("bar.sync 1, %0;\n" ::"n"(N) : "memory");
}

// --- Tile stores by TMA ----------------------------------------------------------------

// A tile store of the epilogue by TMA (tma_store.c): register fragment x
// (an R x C distribution, wgmma's accumulator layout) into the ROWS x COLS
// tile of T at g (row stride ld), through shared memory at `stage`
// (1024-byte aligned).  The tile is PANELS column panels of SPAN-byte rows
// (SPAN = min(COLS * sizeof(T), 128)), each one box of the map, its rows'
// 16-byte chunks swizzled as the map's SPAN-byte swizzle permutes them
// (tile_offset), so a warp's stores of its rows' pairs fall in distinct
// banks.  BUFFERS panels fit in `stage` at once (PANELS, or fewer: then
// the panels go BUFFERS at a time).  The barriers are the block's (SYNC
// 0) or the first SYNC threads' (a consumer block's, sync_threads).
//
//   every thread done with `stage` (the pipeline's stages, or the last
//   store's region, whose bulk reads thread 0 waited for): a barrier;
//   per group of BUFFERS panels: each thread writes its elements of them
//   and fences its writes for the async proxy (fence.proxy.async); a
//   barrier; thread 0 stores each panel (cp.async.bulk.tensor
//   .global.shared::cta, the hardware clipping the box at the tensor's
//   extents, before and after: no predicates) and commits them as one
//   bulk group; before the next group, it waits for their reads and the
//   threads meet again;
//   thread 0 waits for the last group's reads (cp.async.bulk.wait_group
//   .read), so the region is free when the next store (a persistent
//   block's next tile) or the block's end comes; the writes to global
//   memory complete on their own.
//
// c holds the tile's origin in the tensor, innermost first (the column,
// then the row and the other dims' indices).  Where the host did not
// build the map (TensorMap::usable) or the tile's first column is not a
// whole 16-byte vector, the hardware takes no such box: copy_r2g stores
// the registers instead (rows, cols, r_lo and c_lo as its box).  With
// ALIGNED (an aligned launch's tile whose first column is a whole
// vector: TILEC_ALIGNED) neither can happen, and that path is not
// compiled.
template <typename R, typename C, typename T, int ROWS, int COLS, int RANK, int BUFFERS, int SYNC, bool ALIGNED = false>
struct TmaStore {
	static constexpr int E = (int)sizeof(T);
	static constexpr int ROW = COLS * E;
	static constexpr int SPAN = ROW < 128 ? ROW : 128;
	static constexpr int PANELS = ROW / SPAN;
	static constexpr int PANEL_COLS = SPAN / E;
	static constexpr int BOX = ROWS * SPAN;
	static_assert(ROW == 32 || ROW == 64 || ROW % 128 == 0, "TmaStore: rows of 32, 64 or whole 128 bytes");
	static_assert(ROWS % 8 == 0 && ROWS <= 256, "TmaStore: at most 256 rows, whole 8-row atoms");
	static_assert(BUFFERS >= 1 && BUFFERS <= PANELS, "TmaStore: 1 to PANELS panels at a time");
	static_assert(RANK >= 2 && RANK <= 5, "TmaStore: tensors of rank 2 to 5");

	__device__ static __forceinline__ void sync()
	{
		if constexpr (SYNC > 0)
			sync_threads<SYNC>();
		else
			__syncthreads();
	}
	// Panel p of the group at `at` into tensor coordinates c, by thread 0.
	__device__ static __forceinline__ void issue(const TensorMap &map, unsigned at, const int (&c)[RANK], int p)
	{
#if TILEC_HAS_WGMMA
		const unsigned long long m = reinterpret_cast<unsigned long long>(map.desc);
		const int c0 = c[0] + p * PANEL_COLS;
		if constexpr (RANK == 2)
			asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
				     ::"l"(m), "r"(at), "r"(c0), "r"(c[1]) : "memory");
		else if constexpr (RANK == 3)
			asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
				     ::"l"(m), "r"(at), "r"(c0), "r"(c[1]), "r"(c[2]) : "memory");
		else if constexpr (RANK == 4)
			asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"
				     " [%0, {%2, %3, %4, %5}], [%1];\n"
				     ::"l"(m), "r"(at), "r"(c0), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
		else
			asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group"
				     " [%0, {%2, %3, %4, %5, %6}], [%1];\n"
				     ::"l"(m), "r"(at), "r"(c0), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
				     : "memory");
#endif
	}
	template <typename X, int NR, int NC>
	__device__ static __forceinline__ void store(const TensorMap &map, T *g, long long ld, int rows, int cols,
						     const int (&c)[RANK], unsigned char *stage,
						     const X (&x)[NR][NC], int r_lo = 0, int c_lo = 0)
	{
		if (!ALIGNED && (map.usable == 0 || reinterpret_cast<unsigned long long>(g) % 16 != 0)) {
			copy_r2g<R, C>(g, ld, rows, cols, x, r_lo, c_lo);
			return;
		}
#if TILEC_HAS_WGMMA
		constexpr int V = VecOf<C>::value;
		const bool lead = leader<R::BITS | C::BITS>();
		const unsigned s = smem_u32(stage);
		sync();
#pragma unroll
		for (int p0 = 0; p0 < PANELS; p0 += BUFFERS) {
			if (p0 > 0) {
				if (threadIdx.x == 0)
					asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
				sync();
			}
			if (lead) {
#pragma unroll
				for (int r = 0; r < NR; r++) {
					const int row = R::index(r);
#pragma unroll
					for (int j = 0; j < NC; j += V) {
						const int col = C::index(j), p = col / PANEL_COLS - p0;
						if (BUFFERS < PANELS && (p < 0 || p >= BUFFERS))
							continue;
						T *at = reinterpret_cast<T *>(
							stage + p * BOX + tile_offset<SPAN, T>(row, col % PANEL_COLS, 0));
						if constexpr (E == 1) {
#pragma unroll
							for (int v = 0; v < V; v++)
								put(at + v, from_value<T>(x[r][j + v]));
						} else {
							Run<V, T> w;
#pragma unroll
							for (int v = 0; v < V; v++)
								w.e[v] = from_value<T>(x[r][j + v]);
							w.store(at);
						}
					}
				}
			}
			// This thread's writes, seen by the bulk copies (the async proxy).
			asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
			sync();
			if (threadIdx.x == 0) {
#pragma unroll
				for (int p = 0; p < BUFFERS && p0 + p < PANELS; p++)
					issue(map, s + (unsigned)(p * BOX), c, p0 + p);
				asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
			}
		}
		if (threadIdx.x == 0)
			asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#else
		__trap();
#endif
	}
};

} // namespace tilec
