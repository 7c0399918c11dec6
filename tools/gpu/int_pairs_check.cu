// int_pairs_check.cu - tilec::int_pairs against the f32 arithmetic it
// stands for, bit for bit: every i4 value at every place of a word, every
// integer c in [-1000, 1000] into f16 ([-120, 120] into bf16), every
// factor f of the type (all 65,536 bit patterns: subnormals, infinities
// and NaNs included; two NaNs match); every i8 and u8 value at every
// place of a word into f16, with every 7th c of [-890, 890] (i8) and
// [-1000, 1000] (u8) and its ends, and every f.  The program's value is
// (T)(((float)x + c) * f), and without a factor (T)((float)x + c).
//
// Built on the GPU machine against any standalone CUDA output of tilec
// (it brings the helpers):
//
//   nvcc -std=c++17 -arch=sm_90a -include K.cu tools/gpu/int_pairs_check.cu -o check && ./check
//
// Prints the mismatches (the first few) and ends with `int_pairs: N
// mismatches in M values`; exits 1 on any.
#include <cstdio>
#include <type_traits>

namespace {

constexpr int C_MAX = 1000, C_MAX_BF16 = 120, C_MAX_I8 = 890;

__device__ unsigned long long d_bad, d_values;
__device__ unsigned d_first[4][5]; // type, word, c, f bits, element

__device__ bool
same(__half a, __half b)
{
	const unsigned short x = __half_as_ushort(a), y = __half_as_ushort(b);
	return x == y || (__hisnan(a) && __hisnan(b));
}

__device__ bool
same(__nv_bfloat16 a, __nv_bfloat16 b)
{
	const unsigned short x = __bfloat16_as_ushort(a), y = __bfloat16_as_ushort(b);
	return x == y || (__hisnan(a) && __hisnan(b));
}

__device__ void
report(int bf16, unsigned w, int c, unsigned f, int e)
{
	const unsigned long long n = atomicAdd(&d_bad, 1ull);
	if (n < 4) {
		d_first[n][0] = (unsigned)bf16;
		d_first[n][1] = w;
		d_first[n][2] = (unsigned)c;
		d_first[n][3] = f;
		d_first[n][4] = (unsigned)e;
	}
}

__device__ __half
from_bits(unsigned short b, __half)
{
	return __ushort_as_half(b);
}
__device__ __nv_bfloat16
from_bits(unsigned short b, __nv_bfloat16)
{
	return __ushort_as_bfloat16(b);
}
__device__ __half
round_to(float v, __half)
{
	return __float2half_rn(v);
}
__device__ __nv_bfloat16
round_to(float v, __nv_bfloat16)
{
	return __float2bfloat16_rn(v);
}

// Thread (f, c): 18 words, every value at every place (0x11111111 v) and
// two of distinct values, each with the factor and without.
template <typename T>
__global__ void
check(int c_max)
{
	const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
	const int c = (int)blockIdx.y - c_max;
	if (f > 0xFFFFu)
		return;
	constexpr int BF16 = std::is_same<T, __nv_bfloat16>::value;
	const float ff = (float)from_bits((unsigned short)f, T());
	unsigned long long values = 0;
	for (int k = 0; k < 18; k++) {
		const unsigned w = k < 16 ? 0x11111111u * (unsigned)k : k == 16 ? 0x76543210u : 0xFEDCBA98u;
		tilec::Run<4, tilec::i4x2> x;
		x.w[0] = w;
		tilec::Run<8, T> with, without;
		tilec::int_pairs(with, x, (float)c, ff);
		tilec::int_pairs(without, x, (float)c);
		for (int e = 0; e < 8; e++) {
			const int v = (int)(((w >> 4 * e) & 15u) ^ 8u) - 8;
			const float s = (float)v + (float)c;
			if (!same(with.e[e], round_to(s * ff, T())))
				report(BF16, w, c, f, e);
			if (!same(without.e[e], round_to(s, T())))
				report(BF16, w, c, f, e + 8);
			values += 2;
		}
	}
	atomicAdd(&d_values, values);
}

// Thread (f, c) for 8-bit sources S: 256 words, every value at every
// place (four rotations of the 64 words of consecutive values); c from
// -c_max by 7, and c_max.
template <typename S>
__global__ void
check_bytes(int c_max)
{
	const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
	const int c = min(-c_max + 7 * (int)blockIdx.y, c_max);
	if (f > 0xFFFFu)
		return;
	const float ff = __half2float(__ushort_as_half((unsigned short)f));
	unsigned long long values = 0;
	for (int k = 0; k < 256; k++) {
		unsigned w = 0;
		for (int b = 0; b < 4; b++)
			w |= ((4u * (k % 64) + (b + k / 64) % 4) & 255u) << 8 * b;
		tilec::Run<4, S> x;
		x.w[0] = w;
		tilec::Run<4, __half> with, without;
		tilec::int_pairs(with, x, (float)c, ff);
		tilec::int_pairs(without, x, (float)c);
		for (int e = 0; e < 4; e++) {
			const float s = (float)x.e[e] + (float)c;
			if (!same(with.e[e], __float2half_rn(s * ff)))
				report(2 + (S(-1) < S(0)), w, c, f, e);
			if (!same(without.e[e], __float2half_rn(s)))
				report(2 + (S(-1) < S(0)), w, c, f, e + 8);
			values += 2;
		}
	}
	atomicAdd(&d_values, values);
}

} // namespace

int
main(void)
{
	dim3 grid(65536 / 256, 2 * C_MAX + 1), grid_bf16(65536 / 256, 2 * C_MAX_BF16 + 1);
	check<__half><<<grid, 256>>>(C_MAX);
	check<__nv_bfloat16><<<grid_bf16, 256>>>(C_MAX_BF16);
	check_bytes<signed char><<<dim3(256, 2 * C_MAX_I8 / 7 + 2), 256>>>(C_MAX_I8);
	check_bytes<unsigned char><<<dim3(256, 2 * C_MAX / 7 + 2), 256>>>(C_MAX);
	cudaError_t err = cudaDeviceSynchronize();
	if (err != cudaSuccess) {
		fprintf(stderr, "int_pairs: %s\n", cudaGetErrorString(err));
		return 1;
	}
	unsigned long long bad = 0, values = 0;
	unsigned first[4][5];
	cudaMemcpyFromSymbol(&bad, d_bad, sizeof bad);
	cudaMemcpyFromSymbol(&values, d_values, sizeof values);
	cudaMemcpyFromSymbol(first, d_first, sizeof first);
	for (unsigned long long i = 0; i < bad && i < 4; i++)
		printf("mismatch: %s word %08x c %d f %04x element %u%s\n",
		       first[i][0] == 3 ? "i8" : first[i][0] == 2 ? "u8" : first[i][0] ? "bf16" : "f16",
		       first[i][1],
		       (int)first[i][2], first[i][3], first[i][4] % 8,
		       first[i][4] >= 8 ? " (no factor)" : "");
	printf("int_pairs: %llu mismatches in %llu values (i4 into f16 and bf16, i8 and u8 into f16)\n", bad,
	       values);
	return bad != 0 || values == 0;
}
