// mma_peak.cu - the ceiling of the sm_80 matrix path on this GPU: how many
// TFLOP/s mma.sync.m16n8k16 (f16 in, f32 accumulate) issues when it waits
// on nothing (operands in registers, no memory traffic), against ldmatrix
// fed from shared memory as a GEMM's inner loop does; and the same
// registers-only ceiling of the 8-bit forms, m16n8k32 s8 -> s32 and (sm_89
// and later) e4m3 -> f32, in TOPS.  The numbers bound what tilec's
// mma.sync GEMMs can reach; docs/perf-gpu.md quotes them.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o mma_peak mma_peak.cu && ./mma_peak
#include <cstdio>
#include <cuda_fp16.h>

template <int CHAINS>
__global__ void __launch_bounds__(256) mma_regs(float *out, int iters)
{
	unsigned a[4], b[2];
	for (int i = 0; i < 4; i++)
		a[i] = threadIdx.x * 0x00010001u + i;
	b[0] = threadIdx.x;
	b[1] = ~threadIdx.x;
	float d[CHAINS][4] = {};
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int c = 0; c < CHAINS; c++)
			asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
				     : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
				     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
	}
	float s = 0;
	for (int c = 0; c < CHAINS; c++)
		s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The 8-bit forms, operands in registers: m16n8k32, twice the multiplies
// of m16n8k16 per instruction.
template <int CHAINS, bool FP8>
__global__ void __launch_bounds__(256) mma8_regs(int *out, int iters)
{
	unsigned a[4], b[2];
	for (int i = 0; i < 4; i++)
		a[i] = threadIdx.x * 0x01010101u + i;
	b[0] = threadIdx.x;
	b[1] = ~threadIdx.x & 0x3f3f3f3fu;
	int d[CHAINS][4] = {};
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int c = 0; c < CHAINS; c++)
			if (FP8)
				asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
					     : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
					     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
			else
				asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
					     : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
					     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
	}
	int s = 0;
	for (int c = 0; c < CHAINS; c++)
		s += d[c][0] ^ d[c][1] ^ d[c][2] ^ d[c][3];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// A warp's 64x64 tile per 16-wide k step: 4 A and 4 B ldmatrix.x4 from
// shared memory, 32 mma; the shared tile is read-only, so only the issue
// rates of ldmatrix and mma and their overlap are measured.
__global__ void __launch_bounds__(256) mma_smem(float *out, int iters)
{
	__shared__ __align__(128) __half tile[64 * 72 * 2];
	for (int i = threadIdx.x; i < 64 * 72 * 2; i += blockDim.x)
		tile[i] = __float2half((float)(i % 7));
	__syncthreads();
	const int lane = threadIdx.x % 32;
	float d[4][8][4] = {};
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int ks = 0; ks < 4; ks++) {
			unsigned a[4][4], b[4][4];
#pragma unroll
			for (int m = 0; m < 4; m++) {
				unsigned s = (unsigned)__cvta_generic_to_shared(tile + (m * 16 + lane % 16) * 72 + ks * 16 + (lane / 16) * 8);
				asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
					     : "=r"(a[m][0]), "=r"(a[m][1]), "=r"(a[m][2]), "=r"(a[m][3]) : "r"(s));
				unsigned t = (unsigned)__cvta_generic_to_shared(tile + 64 * 72 + (ks * 16 + lane % 16) * 72 + m * 16 + (lane / 16) * 8);
				asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
					     : "=r"(b[m][0]), "=r"(b[m][1]), "=r"(b[m][2]), "=r"(b[m][3]) : "r"(t));
			}
#pragma unroll
			for (int m = 0; m < 4; m++)
#pragma unroll
				for (int n = 0; n < 8; n++)
					asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
						     : "+f"(d[m][n][0]), "+f"(d[m][n][1]), "+f"(d[m][n][2]), "+f"(d[m][n][3])
						     : "r"(a[m][0]), "r"(a[m][1]), "r"(a[m][2]), "r"(a[m][3]),
						       "r"(b[n / 2][(n % 2) * 2]), "r"(b[n / 2][(n % 2) * 2 + 1]));
		}
	}
	float s = 0;
	for (int m = 0; m < 4; m++)
		for (int n = 0; n < 8; n++)
			s += d[m][n][0] + d[m][n][1] + d[m][n][2] + d[m][n][3];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <typename F>
static double time_ms(F launch)
{
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	launch();
	cudaEventRecord(a);
	for (int i = 0; i < 5; i++)
		launch();
	cudaEventRecord(b);
	cudaEventSynchronize(b);
	float ms;
	cudaEventElapsedTime(&ms, a, b);
	return ms / 5;
}

int main()
{
	int sms;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	float *out;
	cudaMalloc(&out, sizeof(float) * 256 * sms * 8);
	const int iters = 4096;
	for (int warps = 4; warps <= 8; warps *= 2) {
		int blocks = sms * 8 / warps * 4; // several waves of resident blocks
		double ms = time_ms([&] { mma_regs<8><<<blocks, warps * 32>>>(out, iters); });
		double flops = 2.0 * 16 * 8 * 16 * 8 * iters * (double)blocks * warps;
		printf("mma.sync registers only, %d warps/block: %.0f TFLOP/s\n", warps, flops / ms / 1e9);
	}
	for (int warps = 4; warps <= 8; warps *= 2) {
		int blocks = sms * 8 / warps * 4;
		double flops = 2.0 * 16 * 8 * 32 * 8 * iters * (double)blocks * warps;
		double ms = time_ms([&] { mma8_regs<8, false><<<blocks, warps * 32>>>((int *)out, iters); });
		printf("mma.sync m16n8k32 s8, registers only, %d warps/block: %.0f TOPS\n", warps, flops / ms / 1e9);
		ms = time_ms([&] { mma8_regs<8, true><<<blocks, warps * 32>>>((int *)out, iters); });
		printf("mma.sync m16n8k32 e4m3, registers only, %d warps/block: %.0f TFLOP/s\n", warps, flops / ms / 1e9);
	}
	for (int warps = 4; warps <= 8; warps *= 2) {
		int blocks = sms * 2 * 8 / warps;
		double ms = time_ms([&] { mma_smem<<<blocks, warps * 32>>>(out, iters / 4); });
		double flops = 2.0 * 64 * 64 * 64 * (iters / 4) * (double)blocks * warps;
		printf("ldmatrix + mma.sync, 64x64 warp tile, %d warps/block: %.0f TFLOP/s\n", warps, flops / ms / 1e9);
	}
	cudaError_t e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("error: %s\n", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}
