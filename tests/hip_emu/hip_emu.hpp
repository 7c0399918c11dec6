// hip_emu.hpp - run tilec's HIP output on the host CPU, for checking its
// arithmetic where no AMD GPU exists.
//
// A test-only stand-in for the parts of HIP that generated kernels and
// their helpers (templates/hip/tilec_hip.hpp, templates/gpu/tilec_gpu.h)
// use, so a kernel compiles with the host's clang++ and runs with one OS
// thread per GPU thread:
//   - a block's threads run together (pthreads); __syncthreads() is a
//     barrier of the block, and blocks run one after another, so the
//     dynamic shared memory (tilec_smem) is one array;
//   - lanes are grouped in waves of 64; __shfl_xor and the MFMA builtins
//     are collective over a wave: every lane deposits its operands, a wave
//     barrier, every lane takes its result, a second barrier;
//   - the MFMA builtins compute what AMD's CDNA ISA documents for
//     v_mfma_f32_16x16x16{f16,bf16_1k}, v_mfma_f32_16x16x4f32,
//     v_mfma_i32_16x16x16i8 and v_mfma_i32_16x16x32_i8: lane
//     l = i + 16 * kb supplies A[i][4 kb + v] and B[4 kb + v][i] (v = 0..3;
//     one value, k = kb, for the f32 form; eight, 8 kb + v, for the
//     16x16x32 one) and receives D[4 * (l / 16) + v][l % 16].  That lane layout is the one assumption here that only
//     hardware can confirm; everything else in a kernel (the distributions,
//     the operand swap, reductions, copies, bounds) is checked for real.
// Used by hip_emu_run.py through `tilec run --source`; never part of
// generated code.
#pragma once

#define __HIPCC_RTC__ 1 /* the helpers then include no HIP header */

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __shared__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)

// --- Thread and block indices ------------------------------------------------

struct EmuDim3 {
	unsigned x, y, z; // as HIP's, unsigned
};

namespace hip_emu {

constexpr int WAVE = 64;

// One wave's exchange area: operands in, a barrier, results out.
struct Wave {
	pthread_barrier_t bar;  // the lanes of this wave
	float f[WAVE][8];       // per lane: values passed to a collective op
	int i[WAVE][16];        // per lane: the integer operands of an MFMA
	int lanes;              // lanes in the wave
};

// The block being run.
struct Block {
	pthread_barrier_t bar;    // every thread of the block
	std::vector<Wave *> waves; // per wave
};

inline thread_local EmuDim3 thread_idx, block_idx;
inline EmuDim3 grid_dim, block_dim;
inline Block *block;

inline Wave &my_wave() { return *block->waves[thread_idx.x / WAVE]; }
inline int my_lane() { return thread_idx.x % WAVE; }

inline void wave_sync() { pthread_barrier_wait(&my_wave().bar); }

} // namespace hip_emu

#define threadIdx (hip_emu::thread_idx)
#define blockIdx (hip_emu::block_idx)
#define gridDim (hip_emu::grid_dim)
#define blockDim (hip_emu::block_dim)

// The block's dynamic shared memory (generated kernels declare it extern
// inside their extern "C" function, which gives it C language linkage).
extern "C" {
alignas(128) unsigned char tilec_smem[256 * 1024];
}

inline void __syncthreads() { pthread_barrier_wait(&hip_emu::block->bar); }

// --- Scalars -----------------------------------------------------------------

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

inline unsigned __float_as_uint(float x)
{
	unsigned u;
	std::memcpy(&u, &x, sizeof u);
	return u;
}
inline float __uint_as_float(unsigned u)
{
	float x;
	std::memcpy(&x, &u, sizeof x);
	return x;
}

struct __half {
	_Float16 x; // IEEE half, as HIP's __half holds it
};
inline float __half2float(__half h) { return (float)h.x; }
inline __half __float2half_rn(float f) { return __half{ (_Float16)f }; }

// Atomics: blocks run one at a time, so only a block's threads race.
inline float atomicAdd(float *p, float v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline double atomicAdd(double *p, double v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicCAS(unsigned *p, unsigned expected, unsigned desired)
{
	__atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected;
}
inline unsigned atomicAnd(unsigned *p, unsigned v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }

// --- Wave collectives ----------------------------------------------------------

inline float __shfl_xor(float v, int mask, int width = hip_emu::WAVE)
{
	hip_emu::Wave &w = hip_emu::my_wave();
	const int lane = hip_emu::my_lane();
	const int base = lane / width * width;
	w.f[lane][0] = v;
	hip_emu::wave_sync();
	const int other = base + ((lane - base) ^ mask);
	const float r = other < w.lanes ? w.f[other][0] : v;
	hip_emu::wave_sync();
	return r;
}

// __shfl_xor for the other types HIP shuffles, through the lanes' 32-bit
// slots (a 64-bit value in two, as the hardware moves it).
template <typename V> inline V emu_shfl_xor(V v, int mask, int width)
{
	static_assert(sizeof(V) == 4 || sizeof(V) == 8, "32- or 64-bit values");
	float part[2] = { 0.0f, 0.0f };
	std::memcpy(part, &v, sizeof v);
	for (int i = 0; i < (int)(sizeof v / 4); i++)
		part[i] = __shfl_xor(part[i], mask, width);
	V r;
	std::memcpy(&r, part, sizeof r);
	return r;
}
inline int __shfl_xor(int v, int mask, int width = hip_emu::WAVE) { return emu_shfl_xor(v, mask, width); }
inline long long __shfl_xor(long long v, int mask, int width = hip_emu::WAVE) { return emu_shfl_xor(v, mask, width); }
inline double __shfl_xor(double v, int mask, int width = hip_emu::WAVE) { return emu_shfl_xor(v, mask, width); }

typedef _Float16 emu_f16x4 __attribute__((ext_vector_type(4)));
typedef short emu_i16x4 __attribute__((ext_vector_type(4)));
typedef float emu_f32x4 __attribute__((ext_vector_type(4)));
typedef int emu_i32x4 __attribute__((ext_vector_type(4)));

namespace hip_emu {

// D = A * B + C on 16x16 tiles over K = 4 * KPL: lane i + 16 * kb holds
// A[i][KPL * kb + v] in a[v] and B[KPL * kb + v][i] in b[v], and D[4 * (l /
// 16) + v][l % 16] in c[v] (the CDNA layout of the single-block 16x16
// instructions).
inline emu_f32x4 mfma_16x16(const float *a, const float *b, emu_f32x4 c, int kpl)
{
	Wave &w = my_wave();
	const int lane = my_lane();
	for (int v = 0; v < kpl; v++) {
		w.f[lane][v] = a[v];
		w.f[lane][4 + v] = b[v];
	}
	wave_sync();
	emu_f32x4 d;
	const int j = lane % 16;
	for (int v = 0; v < 4; v++) {
		const int i = 4 * (lane / 16) + v;
		double sum = c[v];
		for (int k = 0; k < 4 * kpl; k++) {
			const int kb = k / kpl, kv = k % kpl;
			sum += (double)w.f[i + 16 * kb][kv] * (double)w.f[j + 16 * kb][4 + kv];
		}
		d[v] = (float)sum;
	}
	wave_sync();
	return d;
}

// The same for integers (v_mfma_i32_16x16x{16i8,32_i8}): KPL bytes of A
// and of B per lane, exact products summed in 64 bits, wrapped to the s32
// accumulator as the hardware's adds wrap.
inline emu_i32x4 mfma_i32_16x16(unsigned long long a, unsigned long long b, emu_i32x4 c, int kpl)
{
	Wave &w = my_wave();
	const int lane = my_lane();
	for (int v = 0; v < kpl; v++) {
		w.i[lane][v] = (signed char)(a >> (8 * v));
		w.i[lane][8 + v] = (signed char)(b >> (8 * v));
	}
	wave_sync();
	emu_i32x4 d;
	const int j = lane % 16;
	for (int v = 0; v < 4; v++) {
		const int i = 4 * (lane / 16) + v;
		long long sum = c[v];
		for (int k = 0; k < 4 * kpl; k++) {
			const int kb = k / kpl, kv = k % kpl;
			sum += (long long)w.i[i + 16 * kb][kv] * w.i[j + 16 * kb][8 + kv];
		}
		d[v] = (int)(unsigned)(unsigned long long)sum;
	}
	wave_sync();
	return d;
}

inline float bf16_bits_to_float(short s) { return __uint_as_float((unsigned)(unsigned short)s << 16); }

} // namespace hip_emu

inline emu_f32x4 emu_mfma_f32_16x16x16f16(emu_f16x4 a, emu_f16x4 b, emu_f32x4 c, int, int, int)
{
	float fa[4], fb[4];
	for (int v = 0; v < 4; v++) {
		fa[v] = (float)a[v];
		fb[v] = (float)b[v];
	}
	return hip_emu::mfma_16x16(fa, fb, c, 4);
}
inline emu_f32x4 emu_mfma_f32_16x16x16bf16_1k(emu_i16x4 a, emu_i16x4 b, emu_f32x4 c, int, int, int)
{
	float fa[4], fb[4];
	for (int v = 0; v < 4; v++) {
		fa[v] = hip_emu::bf16_bits_to_float(a[v]);
		fb[v] = hip_emu::bf16_bits_to_float(b[v]);
	}
	return hip_emu::mfma_16x16(fa, fb, c, 4);
}
inline emu_f32x4 emu_mfma_f32_16x16x4f32(float a, float b, emu_f32x4 c, int, int, int)
{
	return hip_emu::mfma_16x16(&a, &b, c, 1);
}

inline emu_i32x4 emu_mfma_i32_16x16x16i8(int a, int b, emu_i32x4 c, int, int, int)
{
	return hip_emu::mfma_i32_16x16((unsigned)a, (unsigned)b, c, 4);
}
inline emu_i32x4 emu_mfma_i32_16x16x32_i8(long a, long b, emu_i32x4 c, int, int, int)
{
	return hip_emu::mfma_i32_16x16((unsigned long long)a, (unsigned long long)b, c, 8);
}

#define __builtin_amdgcn_mfma_f32_16x16x16f16 emu_mfma_f32_16x16x16f16
#define __builtin_amdgcn_mfma_f32_16x16x16bf16_1k emu_mfma_f32_16x16x16bf16_1k
#define __builtin_amdgcn_mfma_f32_16x16x4f32 emu_mfma_f32_16x16x4f32
#define __builtin_amdgcn_mfma_i32_16x16x16i8 emu_mfma_i32_16x16x16i8
#define __builtin_amdgcn_mfma_i32_16x16x32_i8 emu_mfma_i32_16x16x32_i8

// --- Launching -----------------------------------------------------------------

namespace hip_emu {

// Run kernel() over the grid with `threads` threads per block, each block's
// threads together, blocks one after another.
inline void launch(const unsigned grid[3], unsigned threads, const std::function<void()> &kernel)
{
	grid_dim = EmuDim3{ grid[0], grid[1], grid[2] };
	block_dim = EmuDim3{ threads, 1, 1 };
	Block b;
	pthread_barrier_init(&b.bar, nullptr, threads);
	for (unsigned t = 0; t < threads; t += WAVE) {
		Wave *w = new Wave();
		w->lanes = (int)(threads - t < (unsigned)WAVE ? threads - t : (unsigned)WAVE);
		pthread_barrier_init(&w->bar, nullptr, (unsigned)w->lanes);
		b.waves.push_back(w);
	}
	block = &b;
	for (unsigned z = 0; z < grid[2]; z++)
		for (unsigned y = 0; y < grid[1]; y++)
			for (unsigned x = 0; x < grid[0]; x++) {
				std::memset(tilec_smem, 0xa5, sizeof tilec_smem); // stale LDS
				std::vector<std::thread> pool;
				for (unsigned t = 0; t < threads; t++)
					pool.emplace_back([&, t, x, y, z] {
						thread_idx = EmuDim3{ t, 0, 0 };
						block_idx = EmuDim3{ x, y, z };
						kernel();
					});
				for (std::thread &th : pool)
					th.join();
			}
	for (Wave *w : b.waves) {
		pthread_barrier_destroy(&w->bar);
		delete w;
	}
	pthread_barrier_destroy(&b.bar);
	block = nullptr;
}

} // namespace hip_emu
