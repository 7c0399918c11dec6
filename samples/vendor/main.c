/*
 * main.c - a program that uses a GEMM exported by `tilec export`, and
 * nothing else of tilec.
 *
 * `tilec export samples/gemm.c -t T -o DIR` writes DIR/gemm.h and the
 * kernel's source (gemm.c, gemm.cu or gemm.hip); this file includes
 * gemm.h, fills A and B with random fp16 values, calls gemm_launch and
 * compares C with a naive double-precision product, over ragged shapes
 * (none a multiple of the 128 x 128 tile).  Build (samples/vendor/README.md):
 *
 *   cc -O2 -fopenmp -march=native -I DIR main.c DIR/gemm.c -lm        (CPU)
 *   nvcc -DVENDOR_CUDA -I DIR main.c DIR/gemm.cu                      (CUDA)
 *   hipcc -DVENDOR_HIP -I DIR main.c DIR/gemm.hip                     (HIP)
 *
 * Exit status 0 when every shape matches within 1e-2 of the largest
 * reference value (fp16 output, fp32 accumulation), 1 otherwise, 2 when
 * the GPU is missing or a call fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"

#if defined(VENDOR_CUDA)
#include <cuda_runtime_api.h>
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuToDevice cudaMemcpyHostToDevice
#define gpuToHost cudaMemcpyDeviceToHost
#define gpuSynchronize cudaDeviceSynchronize
#define gpuErrorString cudaGetErrorString
#define GPU 1
#elif defined(VENDOR_HIP)
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)
/* hipcc says which platform for HIP sources only; this is C. */
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuToDevice hipMemcpyHostToDevice
#define gpuToHost hipMemcpyDeviceToHost
#define gpuSynchronize hipDeviceSynchronize
#define gpuErrorString hipGetErrorString
#define GPU 1
#else
#define GPU 0
#endif

/* IEEE half from float, rounding to nearest even (finite inputs in the
 * half range, as here). */
static uint16_t
half_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint32_t sign = (x >> 16) & 0x8000;
	int exp = (int)((x >> 23) & 0xff) - 127 + 15;
	uint32_t mant = x & 0x7fffff;
	if (exp <= 0) {
		/* Subnormal half (or zero). */
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		int shift = 14 - exp;
		uint32_t h = mant >> shift;
		uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
	uint32_t rest = mant & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

static float
half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	float f;
	if (exp == 0)
		f = ldexpf((float)mant, -24);
	else if (exp == 31)
		f = mant ? NAN : INFINITY;
	else
		f = ldexpf((float)(mant | 0x400), (int)exp - 25);
	uint32_t bits;
	memcpy(&bits, &f, sizeof bits);
	bits |= sign;
	memcpy(&f, &bits, sizeof f);
	return f;
}

/* A small xorshift generator: values in [-1, 1], never exactly zero. */
static float
next_value(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (float)((*s >> 11) % 2000 + 1) / 1000.0f - 1.0005f;
}

/* C = A * B for one shape; returns 0 on a match, 1 on a mismatch, 2 if a
 * call failed. */
static int
check(int M, int N, int K)
{
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
	uint16_t *A = (uint16_t *)malloc(na * 2 + 1);
	uint16_t *B = (uint16_t *)malloc(nb * 2 + 1);
	uint16_t *C = (uint16_t *)malloc(nc * 2 + 1);
	if (!A || !B || !C) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)(M * 131 + N * 7 + K);
	for (size_t i = 0; i < na; i++)
		A[i] = half_from_float(next_value(&seed));
	for (size_t i = 0; i < nb; i++)
		B[i] = half_from_float(next_value(&seed));
	for (size_t i = 0; i < nc; i++)
		C[i] = 0x7e00; /* NaN: whatever is left unwritten shows */
	int status = 0;
#if GPU
	uint16_t *dA = NULL, *dB = NULL, *dC = NULL;
	if (gpuMalloc((void **)&dA, na * 2 + 1) ||
	    gpuMalloc((void **)&dB, nb * 2 + 1) ||
	    gpuMalloc((void **)&dC, nc * 2 + 1) ||
	    gpuMemcpy(dA, A, na * 2, gpuToDevice) ||
	    gpuMemcpy(dB, B, nb * 2, gpuToDevice) ||
	    gpuMemcpy(dC, C, nc * 2, gpuToDevice)) {
		fprintf(stderr, "device memory: %s\n", gpuErrorString(gpuSynchronize()));
		status = 2;
	}
	int err = status ? 0 : gemm_launch(M, N, K, dA, dB, dC, NULL);
	if (!status && (err || (err = (int)gpuSynchronize()) ||
			(err = (int)gpuMemcpy(C, dC, nc * 2, gpuToHost)))) {
		fprintf(stderr, "gemm_launch: error %d\n", err);
		status = 2;
	}
	gpuFree(dA);
	gpuFree(dB);
	gpuFree(dC);
#else
	if (gemm_launch(M, N, K, A, B, C) != 0)
		status = 2; /* the CPU lacks the ISA it was exported for */
#endif
	double max_err = 0, max_ref = 0;
	size_t bad = 0;
	for (int i = 0; !status && i < M; i++)
		for (int j = 0; j < N; j++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += (double)half_to_float(A[(size_t)i * K + k]) *
					half_to_float(B[(size_t)k * N + j]);
			double got = half_to_float(C[(size_t)i * N + j]);
			if (!isfinite(got)) {
				bad++;
				continue;
			}
			if (fabs(got - want) > max_err)
				max_err = fabs(got - want);
			if (fabs(want) > max_ref)
				max_ref = fabs(want);
		}
	double rel = max_ref > 0 ? max_err / max_ref : max_err;
	if (!status) {
		status = bad || rel > 1e-2;
		printf("gemm %dx%dx%d: max rel err %.2e, %zu unwritten or "
		       "non-finite  %s\n", M, N, K, rel, bad,
		       status ? "FAIL" : "ok");
	}
	free(A);
	free(B);
	free(C);
	return status;
}

int
main(void)
{
	static const int shapes[][3] = {
		{ 100, 130, 70 }, { 1, 1, 1 }, { 65, 1, 129 }, { 257, 300, 33 },
		/* Rows of whole 16-byte vectors: the pipelined loop's fast
		 * path (TMA's, exported with --tma), ragged at every edge. */
		{ 300, 264, 136 },
	};
	int status = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int s = check(shapes[i][0], shapes[i][1], shapes[i][2]);
		status = s > status ? s : status;
	}
	printf("%s\n", status ? "FAIL" : "PASS");
	return status;
}
