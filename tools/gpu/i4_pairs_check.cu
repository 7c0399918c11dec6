// i4_pairs_check.cu - tilec::i4_pairs against the f32 arithmetic it
// stands for, bit for bit, exhaustively: every i4 value at every place of
// a word, every integer c in [-1000, 1000], every f16 factor f (all 65,536
// bit patterns: subnormals, infinities and NaNs included; two NaNs
// match).  The program's value is (f16)(((float)x + c) * f), and without
// a factor (f16)((float)x + c).
//
// Built on the GPU machine against any standalone CUDA output of tilec
// (it brings the helpers):
//
//   nvcc -std=c++17 -arch=sm_90a -include K.cu tools/gpu/i4_pairs_check.cu -o check && ./check
//
// Prints the mismatches (the first few) and ends with `i4_pairs: N
// mismatches in M values`; exits 1 on any.
#include <cstdio>

namespace {

constexpr int C_MAX = 1000;

__device__ unsigned long long d_bad, d_values;
__device__ unsigned d_first[4][4]; // word, c + C_MAX, f bits, element

__device__ bool
same(__half a, __half b)
{
	const unsigned short x = __half_as_ushort(a), y = __half_as_ushort(b);
	return x == y || (__hisnan(a) && __hisnan(b));
}

__device__ void
report(unsigned w, int c, unsigned f, int e)
{
	const unsigned long long n = atomicAdd(&d_bad, 1ull);
	if (n < 4) {
		d_first[n][0] = w;
		d_first[n][1] = (unsigned)(c + C_MAX);
		d_first[n][2] = f;
		d_first[n][3] = (unsigned)e;
	}
}

// Thread (f, c): 18 words, every value at every place (0x11111111 v) and
// two of distinct values, each with the factor and without.
__global__ void
check(void)
{
	const unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
	const int c = (int)blockIdx.y - C_MAX;
	if (f > 0xFFFFu)
		return;
	const __half fh = __ushort_as_half((unsigned short)f);
	const float ff = __half2float(fh);
	unsigned long long values = 0;
	for (int k = 0; k < 18; k++) {
		const unsigned w = k < 16 ? 0x11111111u * (unsigned)k : k == 16 ? 0x76543210u : 0xFEDCBA98u;
		tilec::Run<4, tilec::i4x2> x;
		x.w[0] = w;
		tilec::Run<8, __half> with, without;
		tilec::i4_pairs(with, x, (float)c, ff);
		tilec::i4_pairs(without, x, (float)c);
		for (int e = 0; e < 8; e++) {
			const int v = (int)(((w >> 4 * e) & 15u) ^ 8u) - 8;
			const float s = (float)v + (float)c;
			if (!same(with.e[e], __float2half_rn(s * ff)))
				report(w, c, f, e);
			if (!same(without.e[e], __float2half_rn(s)))
				report(w, c, f, e + 8);
			values += 2;
		}
	}
	atomicAdd(&d_values, values);
}

} // namespace

int
main(void)
{
	dim3 grid(65536 / 256, 2 * C_MAX + 1);
	check<<<grid, 256>>>();
	cudaError_t err = cudaDeviceSynchronize();
	if (err != cudaSuccess) {
		fprintf(stderr, "i4_pairs: %s\n", cudaGetErrorString(err));
		return 1;
	}
	unsigned long long bad = 0, values = 0;
	unsigned first[4][4];
	cudaMemcpyFromSymbol(&bad, d_bad, sizeof bad);
	cudaMemcpyFromSymbol(&values, d_values, sizeof values);
	cudaMemcpyFromSymbol(first, d_first, sizeof first);
	for (unsigned long long i = 0; i < bad && i < 4; i++)
		printf("mismatch: word %08x c %d f %04x element %u%s\n", first[i][0],
		       (int)first[i][1] - C_MAX, first[i][2], first[i][3] % 8,
		       first[i][3] >= 8 ? " (no factor)" : "");
	printf("i4_pairs: %llu mismatches in %llu values\n", bad, values);
	return bad != 0 || values == 0;
}
