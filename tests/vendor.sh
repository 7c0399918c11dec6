#!/usr/bin/env bash
# Vendoring and ahead-of-time builds: `tilec export` output built with
# nothing but the vendor compilers (docs/export.md).
#
#   vendor.sh TILEC SRCROOT CASE
#
# CASE  openmp     export samples/gemm.c, build samples/vendor/main.c with
#                  cc, run it (ragged shapes against a naive product)
#       cuda       the same with nvcc (built, not run: no GPU here); the
#                  --no-standalone export compiled with -I DIR (the helper
#                  headers it writes, and the one they include)
#       hip        the same with hipcc (built, not run; main.c with cc),
#                  and its --no-standalone export
#       aot-cuda   exported gemm and flash_attention to a fatbin for sm_80
#                  and sm_90a, and a cubin for sm_90a, with nvcc; the
#                  fatbin's entries hold sm_80 and sm_90a code (read with
#                  cuobjdump where the toolkit has it, else with
#                  fatbin_archs.py, which reads the container itself)
#       aot-hip    exported gemm to a code object for gfx90a with hipcc
#       tunings    two tunings of gemm_f32 (--prefix a_, --prefix b_) linked
#                  into one program and both checked against a naive
#                  product; without --prefix the link fails (the reason)
#       dispatch   two records of gemm_f32 at different shapes (every
#                  tunable pinned, so each record's choice is known) into
#                  one gemm_f32_launch: the rule is in the source, smallest
#                  bucket first whatever the order of --config; built with
#                  cc and run at shapes in each bucket and past both, each
#                  checked against a naive product, with the variant each
#                  launch took counted (ld --wrap); two records of one
#                  bucket, a record of another kernel and a bucket naming
#                  no parameter are located errors; for CUDA (where nvcc
#                  is) the shipped gemm record and a small-shape copy,
#                  built, not run
#       large      a u8 kernel over a 65537 x 32769 tensor (more than
#                  2^31 elements, both dims ragged), exported for openmp
#                  and checked element by element: no 32-bit offset wraps
#       cpu-check  an avx512 export on a CPU that lacks AVX-512 (the CPU
#                  query compiled to "no"): -1 and a sentence, nothing run;
#                  the provenance lines (SPDX, version, git, SHA-256)
# Exit 77 (skipped) when the compiler, or tilec's backend, is missing.
set -u
tilec=$(realpath "$1") root=$2 case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-vendor.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 2

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# export SAMPLE TARGET [ARGS...]: into $work/SAMPLE-TARGET; skip if the
# backend is not built.
export_to() {
	local sample=$1 target=$2
	shift 2
	local dir=$work/$sample-$target
	if ! "$tilec" export "samples/$sample.c" -t "$target" -o "$dir" "$@" \
		>"$work/export.log" 2>&1; then
		cat "$work/export.log"
		grep -q "not built" "$work/export.log" && skip "the $target backend is not built"
		fail "tilec export $sample -t $target"
	fi
	# Self-contained: nothing of tilec is included.
	if grep -nE '^[[:space:]]*#[[:space:]]*include.*tilec' "$dir"/*; then
		fail "the exported files include tilec"
	fi
	echo "$dir"
}

# export SAMPLE TARGET with --no-standalone, into $work/SAMPLE-TARGET-inc:
# the sources include the helpers, written under DIR/tilec/.
export_included() {
	local sample=$1 target=$2
	local dir=$work/$sample-$target-inc
	"$tilec" export "samples/$sample.c" -t "$target" --no-standalone \
		-o "$dir" >"$work/export.log" 2>&1 ||
		{ cat "$work/export.log"; fail "tilec export --no-standalone $sample -t $target"; }
	echo "$dir"
}

case $case in
openmp)
	dir=$(export_to gemm openmp) || exit $?
	cc=${CC:-cc}
	"$cc" -std=c11 -O2 -Wall -Wextra -pedantic -Werror -fopenmp -march=native \
		-I "$dir" samples/vendor/main.c "$dir/gemm.c" -lm -o "$work/vendor" ||
		fail "cc did not build the vendored gemm"
	"$work/vendor" || fail "the vendored gemm is wrong"
	;;
dispatch)
	cc=${CC:-cc}
	# record SHAPE TUNABLES...: a one-configuration search, so the record
	# chooses what it is told.
	record() {
		local out=$1 shape=$2
		shift 2
		"$tilec" tune samples/gemm_f32.c --shape "$shape" \
			--check-shape M=37,N=50,K=21 "$@" -D STAGES=2 --repeat 1 \
			--warmup 0 --confirm 0 -o "$out" >/dev/null 2>"$work/tune.err" ||
			{ cat "$work/tune.err"; fail "tilec tune $shape"; }
	}
	record "$work/small.json" M=64,N=64,K=64 -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=16
	record "$work/large.json" M=1000,N=1000,K=300 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32
	# The large one first: the order is the buckets', not the command line's.
	dir=$(export_to gemm_f32 openmp --config "$work/large.json" \
		--config "$work/small.json") || exit $?
	for f in gemm_f32.c gemm_f32.h gemm_f32_b0.c gemm_f32_b0.h gemm_f32_b1.c gemm_f32_b1.h; do
		[ -f "$dir/$f" ] || fail "no $f"
	done
	grep -A2 "gemm_f32_b0: M <= 64, N <= 64, K <= 64$" "$dir/gemm_f32.c" |
		tr -d '\n *' | grep -q "therecord.*small.json:BLOCK_M=64BLOCK_N=64BLOCK_K=16STAGES=2" &&
		grep -A2 "gemm_f32_b1: M <= 1024, N <= 1024, K <= 512$" "$dir/gemm_f32.c" |
		tr -d '\n *' | grep -q "therecord.*large.json:BLOCK_M=128BLOCK_N=128BLOCK_K=32STAGES=2" ||
		{ cat "$dir/gemm_f32.c"; fail "the rule is not in the comment"; }
	grep -A1 "if (M <= 64 && N <= 64 && K <= 64)" "$dir/gemm_f32.c" |
		grep -q "return gemm_f32_b0_launch(M, N, K, A, B, C);" ||
		{ cat "$dir/gemm_f32.c"; fail "the rule is not in the code"; }
	grep -q "Tunables: BLOCK_M=64 BLOCK_N=64 BLOCK_K=16 STAGES=2" "$dir/gemm_f32_b0.h" ||
		fail "gemm_f32_b0 is not the small record's configuration"
	cat >"$work/dispatch.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemm_f32.h"
#include "gemm_f32_b0.h"
#include "gemm_f32_b1.h"

/* Each variant's launches counted on their way through (ld --wrap). */
static int calls[2];
int __real_gemm_f32_b0_launch(int, int, int, const float *, const float *, float *);
int __real_gemm_f32_b1_launch(int, int, int, const float *, const float *, float *);
int
__wrap_gemm_f32_b0_launch(int M, int N, int K, const float *A, const float *B, float *C)
{
	calls[0]++;
	return __real_gemm_f32_b0_launch(M, N, K, A, B, C);
}
int
__wrap_gemm_f32_b1_launch(int M, int N, int K, const float *A, const float *B, float *C)
{
	calls[1]++;
	return __real_gemm_f32_b1_launch(M, N, K, A, B, C);
}

/* One launch of the entry point at M x N x K against a double-precision
 * product; the variant it took. */
static int
one(int M, int N, int K)
{
	float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
	float *C = malloc(sizeof(float) * M * N);
	for (int i = 0; i < M * K; i++)
		A[i] = (float)rand() / RAND_MAX - 0.5f;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)rand() / RAND_MAX - 0.5f;
	for (int i = 0; i < M * N; i++)
		C[i] = NAN;
	int before[2] = { calls[0], calls[1] }, bad = 0;
	if (gemm_f32_launch(M, N, K, A, B, C))
		return -2;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += (double)A[i * K + k] * B[k * N + j];
			bad += !(fabs(C[i * N + j] - want) <= 1e-5 * (1 + fabs(want)) * sqrt(K));
		}
	free(A);
	free(B);
	free(C);
	int took = calls[0] > before[0] ? 0 : calls[1] > before[1] ? 1 : -1;
	printf("%dx%dx%d: gemm_f32_b%d, %d wrong\n", M, N, K, took, bad);
	return bad ? -1 : took;
}

int
main(void)
{
	srand(11);
	return !(one(50, 61, 33) == 0 && one(64, 64, 64) == 0 &&
		 one(65, 20, 7) == 1 && one(700, 300, 400) == 1 &&
		 one(1500, 9, 3) == 1);
}
C
	"$cc" -std=c11 -O2 -Wall -Wextra -Werror -fopenmp -march=native -I "$dir" \
		"$work/dispatch.c" "$dir/gemm_f32.c" "$dir/gemm_f32_b0.c" "$dir/gemm_f32_b1.c" \
		-Wl,--wrap=gemm_f32_b0_launch -Wl,--wrap=gemm_f32_b1_launch -lm \
		-o "$work/dispatch" || fail "cc did not build the dispatch"
	"$work/dispatch" || fail "a launch took the wrong record, or is wrong"
	# Bad sets of records: located errors, nothing written.
	bad_export() {
		local want=$1
		shift
		st=0
		"$tilec" export samples/gemm_f32.c -o "$work/bad" "$@" 2>"$work/bad.txt" || st=$?
		[ "$st" -ne 0 ] && grep -q "$want" "$work/bad.txt" ||
			{ cat "$work/bad.txt"; fail "export $*: status $st"; }
		[ -e "$work/bad" ] && fail "a refused export wrote files"
		return 0
	}
	cp "$work/small.json" "$work/small2.json"
	bad_export 'small2.json:[0-9]*:[0-9]*: error: key "shape_bucket": the bucket of .*small.json too' \
		--config "$work/small.json" --config "$work/small2.json"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["kernel"]="other"; json.dump(r, open(sys.argv[2],"w"), indent=2)' \
		"$work/small.json" "$work/other.json"
	bad_export 'other.json:[0-9]*:[0-9]*: error: key "kernel": the record is for other, not gemm_f32' \
		--config "$work/large.json" --config "$work/other.json"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["shape_bucket"]["Q"]=8; json.dump(r, open(sys.argv[2],"w"), indent=2)' \
		"$work/small.json" "$work/q.json"
	bad_export 'q.json:[0-9]*:[0-9]*: error: key "shape_bucket.Q": gemm_f32 has no integer scalar parameter of that name' \
		--config "$work/large.json" --config "$work/q.json"
	# For CUDA: the shipped gemm record and a copy of it for small
	# shapes, built with nvcc (not run: no GPU here).
	command -v nvcc >/dev/null || { echo "no nvcc: the CUDA dispatch not built"; exit 0; }
	python3 - samples/tuned/gemm.cuda.sm_90a.json "$work/gemm-small.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["shape_bucket"] = {"M": 256, "N": 256, "K": 256}
r["chosen"].update(BLOCK_M=64, BLOCK_N=64)
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
	cu=$(export_to gemm cuda --arch sm_90a --config samples/tuned/gemm.cuda.sm_90a.json \
		--config "$work/gemm-small.json") || exit $?
	grep -A1 "if (M <= 256 && N <= 256 && K <= 256)" "$cu/gemm.c" |
		grep -q "return gemm_b0_launch(M, N, K, A, B, C, stream);" ||
		{ cat "$cu/gemm.c"; fail "the CUDA rule"; }
	nvcc -arch=sm_90a -c "$cu/gemm_b0.cu" -o "$work/b0.o" &&
		nvcc -arch=sm_90a -c "$cu/gemm_b1.cu" -o "$work/b1.o" &&
		"$cc" -std=c11 -Wall -Wextra -Werror -I "$cu" -c "$cu/gemm.c" -o "$work/d.o" ||
		fail "the CUDA dispatch does not build"
	echo "the CUDA dispatch built with nvcc (not run: needs a GPU)"
	;;
large)
	cc=${CC:-cc}
	mkdir -p "$work/large"
	cat >"$work/large/affine_u8.c" <<'TILE'
#include <tilec.h>

TILE_KERNEL void
affine_u8(int M, int N, const u8 X[M][N], u8 Y[M][N])
{
	int b0 = tile_grid_x(ceildiv(M, 64));
	int b1 = tile_grid_y(ceildiv(N, 256));
	tile_fragment u8 x[64][256];
	tile_copy(x, &X[b0 * 64][b1 * 256]);
	tile_parallel(i, 64) tile_parallel(j, 256)
		x[i][j] = x[i][j] * 3 + 1;
	tile_copy(&Y[b0 * 64][b1 * 256], x);
}
TILE
	"$tilec" export "$work/large/affine_u8.c" -o "$work/large" >"$work/export.log" 2>&1 ||
		{ cat "$work/export.log"; fail "tilec export affine_u8"; }
	cat >"$work/large/main.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affine_u8.h"

/* Y = 3 X + 1 (mod 256) over more than 2^31 elements; X's pattern
 * changes with the row and the column, so an offset that wrapped at 32
 * bits reads or writes the wrong element. */
int
main(void)
{
	int M = 65537, N = 32769;
	size_t n = (size_t)M * N;
	uint8_t *X = malloc(n), *Y = malloc(n);
	if (!X || !Y) {
		puts("no memory for the large tensors");
		return 77;
	}
	for (size_t i = 0; i < n; i++)
		X[i] = (uint8_t)(i * 7 + (i >> 20));
	memset(Y, 0xa5, n);
	if (affine_u8_launch(M, N, X, Y))
		return 2;
	size_t bad = 0, first = n;
	for (size_t i = 0; i < n; i++)
		if (Y[i] != (uint8_t)(X[i] * 3 + 1) && bad++ == 0)
			first = i;
	printf("affine_u8 %dx%d (%zu elements): %zu wrong", M, N, n, bad);
	if (bad)
		printf(", the first at %zu", first);
	puts("");
	return bad != 0;
}
C
	"$cc" -std=c11 -O2 -fopenmp -march=native -I "$work/large" "$work/large/main.c" \
		"$work/large/affine_u8.c" -o "$work/large/run" || fail "cc did not build affine_u8"
	"$work/large/run"
	rc=$?
	[ $rc = 77 ] && skip "not enough memory"
	[ $rc = 0 ] || fail "affine_u8 over 2^31 elements is wrong"
	;;
tunings)
	cc=${CC:-cc}
	a=$(export_to gemm_f32 openmp --prefix a_ -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=16) || exit $?
	b=$(export_to gemm_f32 openmp --prefix b_) || exit $?
	[ -f "$a/a_gemm_f32.c" ] && [ -f "$b/b_gemm_f32.h" ] || fail "prefixed file names"
	cat >"$work/two.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "a_gemm_f32.h"
#include "b_gemm_f32.h"

/* C = A B by both tunings, against a double-precision product. */
int
main(void)
{
	int M = 131, N = 70, K = 301, bad = 0;
	float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
	float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
	srand(7);
	for (int i = 0; i < M * K; i++)
		A[i] = (float)rand() / RAND_MAX - 0.5f;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)rand() / RAND_MAX - 0.5f;
	for (int i = 0; i < M * N; i++)
		C1[i] = C2[i] = NAN;
	if (a_gemm_f32_launch(M, N, K, A, B, C1) || b_gemm_f32_launch(M, N, K, A, B, C2))
		return 2;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += (double)A[i * K + k] * B[k * N + j];
			double tol = 1e-5 * (1 + fabs(want)) * sqrt(K);
			bad += !(fabs(C1[i * N + j] - want) <= tol);
			bad += !(fabs(C2[i * N + j] - want) <= tol);
		}
	printf("two tunings of gemm_f32 %dx%dx%d: %d wrong\n", M, N, K, bad);
	return bad != 0;
}
C
	"$cc" -std=c11 -O2 -Wall -Wextra -pedantic -Werror -fopenmp -march=native \
		-I "$a" -I "$b" "$work/two.c" "$a/a_gemm_f32.c" "$b/b_gemm_f32.c" -lm \
		-o "$work/two" || fail "the two tunings do not link into one program"
	"$work/two" || fail "a tuning is wrong"
	# Without prefixes the same two tunings cannot link: that is what
	# --prefix is for.
	c=$(export_to gemm_f32 openmp -D BLOCK_M=64) || exit $?
	d=$(export_to gemm_f32 openmp) || exit $?
	"$cc" -fopenmp -march=native -c "$c/gemm_f32.c" -o "$work/c.o" &&
		"$cc" -fopenmp -march=native -c "$d/gemm_f32.c" -o "$work/d.o" ||
		fail "cc gemm_f32.c"
	if "$cc" -fopenmp -shared "$work/c.o" "$work/d.o" -o "$work/cd.so" 2>"$work/link.log"; then
		fail "two unprefixed exports linked: the test proves nothing"
	fi
	grep -q "multiple definition" "$work/link.log" || { cat "$work/link.log"; fail "unexpected link error"; }
	"$tilec" export samples/gemm_f32.c --prefix 9x -o "$work/bad" 2>"$work/bad.log" &&
		fail "--prefix 9x accepted"
	grep -q "C identifier" "$work/bad.log" || fail "--prefix 9x: $(cat "$work/bad.log")"
	;;
cpu-check)
	cc=${CC:-cc}
	dir=$(export_to colsum openmp --arch avx512) || exit $?
	src=$dir/colsum.c
	sha=$(sha256sum samples/colsum.c | cut -d' ' -f1)
	rev=$("$tilec" --version | head -n 1)
	for f in "$src" "$dir/colsum.h"; do
		head -n 1 "$f" | grep -q 'SPDX-License-Identifier: MIT' || fail "$f: no SPDX line first"
		tr -d '\n *' <"$f" | grep -q "$sha" || fail "$f: no SHA-256 of the program"
		tr -d '\n *' <"$f" | grep -q '(git[0-9a-z]' || fail "$f: no git revision"
	done
	grep -q "\"source_sha256\": \"$sha\"" "$dir/colsum.launch.json" &&
		grep -q '"spdx_license": "MIT"' "$dir/colsum.launch.json" &&
		grep -q '"tilec_revision": ' "$dir/colsum.launch.json" ||
		fail "colsum.launch.json lacks its provenance"
	cat >"$work/cpu.c" <<'C'
#include <stdio.h>

#include "colsum.h"

int
main(void)
{
	float X[6] = { 1, 2, 3, 4, 5, 6 }, Y[3] = { -1, -1, -1 };
	int r = colsum_launch(2, 3, X, Y);
	printf("colsum_launch returned %d; Y = %g %g %g\n", r, Y[0], Y[1], Y[2]);
	return r == -1 && Y[0] == -1 && Y[1] == -1 && Y[2] == -1 ? 0 : 1;
}
C
	# The CPU query answers "no" here, as on a machine without AVX-512.
	"$cc" -std=c11 -O2 -fopenmp -march=native '-D__builtin_cpu_supports(x)=0' \
		-I "$dir" "$work/cpu.c" "$src" -lm -o "$work/cpu" || fail "cc colsum"
	"$work/cpu" 2>"$work/cpu.err" || { cat "$work/cpu.err"; fail "the launch ran without AVX-512"; }
	grep -q "colsum_launch: colsum.c was exported for avx512 (AVX-512 F, BW and VL, and FMA), which this CPU lacks" "$work/cpu.err" ||
		fail "no clear message: $(cat "$work/cpu.err")"
	echo "$rev: $(cat "$work/cpu.err")"
	;;
cuda)
	command -v nvcc >/dev/null || skip "no nvcc"
	dir=$(export_to gemm cuda) || exit $?
	nvcc -arch=sm_80 -DVENDOR_CUDA -I "$dir" samples/vendor/main.c \
		"$dir/gemm.cu" -o "$work/vendor" || fail "nvcc did not build it"
	echo "built $work/vendor with nvcc (not run: needs a GPU)"
	dir=$(export_included gemm cuda) || exit $?
	nvcc -arch=sm_80 -I "$dir" -c "$dir/gemm.cu" -o "$work/gemm-inc.o" ||
		fail "nvcc did not build the --no-standalone export"
	# With --tma on sm_90a, gemm_launch builds the tensor maps the
	# kernel takes after its parameters (the loop's, and C's for the
	# epilogue's TMA store).
	dir=$(export_to gemm cuda --arch sm_90a --tma -D STAGES=3) || exit $?
	grep -q 'gemm_launch_tensor_map(&A_map, A, 2, A_map_dims, A_map_box, 128, 2);' "$dir/gemm.cu" &&
		grep -q 'gemm_launch_tensor_map(&C_map, C, 2, C_map_dims, C_map_box, 128, 2);' "$dir/gemm.cu" &&
		grep -q 'void \*args\[\] = {&M, &N, &K, &A, &B, &C, &A_map, &B_map, &C_map};' "$dir/gemm.cu" ||
		fail "the --tma export does not build and pass its tensor maps"
	nvcc -arch=sm_90a -DVENDOR_CUDA -I "$dir" samples/vendor/main.c \
		"$dir/gemm.cu" -o "$work/vendor-tma" || fail "nvcc did not build the --tma export"
	;;
hip)
	command -v hipcc >/dev/null || skip "no hipcc"
	dir=$(export_to gemm hip) || exit $?
	src=$(ls "$dir"/gemm.hip* "$dir"/gemm.cpp 2>/dev/null | head -n 1)
	# main.c is C (hipcc compiles everything as C++): cc, then hipcc
	# compiles the kernel and links.
	"${CC:-cc}" -std=c11 -O2 -Wall -Wextra -Werror -DVENDOR_HIP -I "$dir" \
		-c samples/vendor/main.c -o "$work/main.o" ||
		fail "cc did not compile main.c against hip_runtime_api.h"
	hipcc --offload-arch=gfx90a -c "$src" -o "$work/gemm.o" ||
		fail "hipcc did not compile the kernel"
	hipcc --offload-arch=gfx90a "$work/main.o" "$work/gemm.o" \
		-o "$work/vendor" || fail "hipcc did not link"
	echo "built $work/vendor with hipcc for gfx90a (not run: needs a GPU)"
	dir=$(export_included gemm hip) || exit $?
	src=$(ls "$dir"/gemm.hip* "$dir"/gemm.cpp 2>/dev/null | head -n 1)
	hipcc --offload-arch=gfx90a -I "$dir" -c "$src" -o "$work/gemm-inc.o" ||
		fail "hipcc did not compile the --no-standalone export"
	;;
aot-cuda)
	command -v nvcc >/dev/null || skip "no nvcc"
	for s in gemm flash_attention; do
		dir=$(export_to $s cuda --arch sm_80) || exit $?
		nvcc -fatbin -gencode arch=compute_80,code=sm_80 \
			-gencode arch=compute_90a,code=sm_90a \
			"$dir/$s.cu" -o "$work/$s.fatbin" || fail "nvcc -fatbin $s"
		if command -v cuobjdump >/dev/null; then
			elfs=$(cuobjdump --list-elf "$work/$s.fatbin") ||
				fail "cuobjdump $s.fatbin"
			echo "$s.fatbin (cuobjdump --list-elf):"
		else
			elfs=$(python3 tests/fatbin_archs.py "$work/$s.fatbin") ||
				fail "fatbin_archs.py $s.fatbin"
			echo "$s.fatbin (no cuobjdump; fatbin_archs.py):"
		fi
		echo "$elfs"
		# Whole words: sm_90a, not the sm_90 in it.
		for a in sm_80 sm_90a; do
			echo "$elfs" | grep -qw "$a" || fail "$s.fatbin has no $a code"
		done
		dir=$(export_to $s cuda --arch sm_90a) || exit $?
		nvcc -cubin -arch=sm_90a "$dir/$s.cu" -o "$work/$s.sm_90a.cubin" ||
			fail "nvcc -cubin $s for sm_90a"
	done
	ls -l "$work"/*.fatbin "$work"/*.cubin
	;;
aot-hip)
	command -v hipcc >/dev/null || skip "no hipcc"
	dir=$(export_to gemm hip --arch gfx90a) || exit $?
	src=$(ls "$dir"/gemm.hip* "$dir"/gemm.cpp 2>/dev/null | head -n 1)
	hipcc --offload-arch=gfx90a --genco "$src" -o "$work/gemm.hsaco" ||
		fail "hipcc --genco"
	ls -l "$work/gemm.hsaco"
	;;
*)
	echo "unknown case $case" >&2
	exit 2
	;;
esac
echo PASS
