#!/usr/bin/env bash
# cpu_gemm.sh - the CPU gemm helpers and what --arch asks of the CPU.
#
# usage: cpu_gemm.sh TILEC SRCROOT CASE
#
#   helpers   templates/cpu/gemm.h against a loop nest (tests/cpu_gemm/
#             helpers.c): the f32 micro-kernels this CPU runs, int8 on
#             VNNI, AMX bf16 and int8 on an emulation of the tiles
#   amx-code  --arch amx output compiled with gcc (-mamx-tile -mamx-bf16
#             -mamx-int8 and without): the object has ldtilecfg,
#             tdpbf16ps (bf16 gemm) and tdpbssd (int8 gemm); on an AMX
#             CPU the --standalone bf16 file run from a plain C program
#   run       bf16 and int8 gemms checked by `tilec run` with the richest
#             arch this CPU has (AMX and VNNI where present); bf16 with
#             every operand layout (tests/cpu_gemm/gemm_bf16_trans.c)
#   refuse    the runtime refuses, with a sentence and a non-zero exit, a
#             kernel for an ISA the CPU lacks (TILEC_CPU_HIDE stands in
#             for a missing feature; AMX where this CPU has none)
#   export    an --arch amx export's launch function on this CPU: -1 and
#             a sentence where there is no AMX (nothing runs), else a
#             checked product
#   strip     strips of blocks (--cpu-strip, passes/cpu_strip.c): f32,
#             int8 and bf16 gemms checked by `tilec run` on ragged shapes
#             (the last strip of a row short, a grid one block wide); the
#             IR's strip line; 4 blocks by default, none with 0; the note
#             where a gemm has nothing to share; --cpu-strip given to
#             `tilec run`, `tilec export` and `tilec tune` reaches the
#             translation (the run's report, the source, the record);
#             the strip length tilec_strip_blocks takes at run time for
#             each thread count (tests/cpu_gemm/strip_blocks.c)
#   prefetch  the next k step's rows are prefetched for a copy whose
#             slice fits in the target's L1d and not for a larger one
#             (passes/cpu_prefetch.c): a 64 x 256 x 48 fp32 gemm prefetches
#             A's 12 KiB slice on avx512 (32 KiB L1d) and amx (48 KiB),
#             B's 48 KiB slice on amx only; 256 x 256 x 128 neither
set -u
tilec=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
case=$3
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
flags=/proc/cpuinfo
has() { grep -qw "$1" "$flags"; }

case $case in
helpers)
	"$cc" -std=c11 -O2 -Wall -Wextra -Werror -I templates -o "$work/helpers" \
		tests/cpu_gemm/helpers.c || fail "helpers.c does not build"
	"$work/helpers" || fail "a helper disagrees with the loop nest"
	;;
amx-code)
	command -v objdump >/dev/null || { echo "no objdump"; exit 77; }
	"$tilec" tests/cpu_gemm/gemm_bf16.c --arch amx --standalone -o "$work/bf16.c" &&
		"$tilec" samples/gemm_w8a8.c --arch amx --standalone -o "$work/i8.c" ||
		fail "translation for --arch amx"
	grep -q '	tilec_gemm_bf16_amx_stored(BLOCK_M' "$work/bf16.c" || fail "bf16 gemm not on AMX"
	grep -q 'tilec_gemm_i8_amx(' "$work/i8.c" || fail "int8 gemm not on AMX"
	for f in bf16 i8; do
		for m in "" "-mamx-tile -mamx-bf16 -mamx-int8"; do
			# shellcheck disable=SC2086
			"$cc" -std=c11 -O3 -fopenmp -fno-math-errno -Wall -Wextra -mavx512f \
				-mavx512bw -mavx512vl -mfma $m \
				-c "$work/$f.c" -o "$work/$f.o" || fail "cc $m $f.c"
		done
	done
	objdump -d "$work/bf16.o" >"$work/bf16.s" && objdump -d "$work/i8.o" >"$work/i8.s"
	for insn in ldtilecfg tileloadd tdpbf16ps tilestored tilerelease; do
		grep -q "$insn" "$work/bf16.s" || fail "no $insn in the bf16 gemm"
	done
	grep -q tdpbssd "$work/i8.s" || fail "no tdpbssd in the int8 gemm"
	# off the fast path (operands held as float): a note, always
	"$tilec" tests/cpu_gemm/amx_float_held.c --arch amx -o "$work/fh.c" \
		2>"$work/err" || fail "amx_float_held.c"
	grep -q "^tests/cpu_gemm/amx_float_held.c:25:3: note: this tile_gemm converts its bf16 operands from floats on every call: 'As' is used at line 24 other than as a copy of a bf16 tensor tile or an AMX gemm's operand$" \
		"$work/err" || { cat "$work/err"; fail "no note for float-held operands"; }
	grep -q "tilec_gemm_bf16_amx(" "$work/fh.c" || fail "not the float-held helper"
	if has amx_bf16; then
		"$tilec" run tests/cpu_gemm/amx_float_held.c --arch native \
			--shape M=77,N=130,K=100 >"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "float-held AMX operands"; }
	fi
	# A --standalone file called from a program of its own, which never
	# asked Linux for the tile state: the helpers ask (a fault before).
	if has amx_bf16; then
		cat >"$work/drv.c" <<-'EOF'
		#include <stdio.h>
		void gemm_bf16(int M, int N, int K, const void *A, const void *B,
			       float *C);
		int main(void)
		{
			static unsigned short a[70 * 50], b[40 * 50];
			static float c[70 * 40];
			for (int i = 0; i < 70 * 50; i++)
				a[i] = 0x3f80; /* 1.0 */
			for (int i = 0; i < 40 * 50; i++)
				b[i] = 0x4000; /* 2.0 */
			gemm_bf16(70, 40, 50, a, b, c);
			for (int i = 0; i < 70 * 40; i++)
				if (c[i] != 100.0f)
					return printf("c[%d] = %g, want 100\n", i, c[i]), 1;
			return 0;
		}
		EOF
		"$cc" -O2 -march=native -fopenmp -fno-math-errno "$work/bf16.c" "$work/drv.c" \
			-o "$work/drv" -lm && "$work/drv" || fail "standalone AMX file run from its own program"
	fi
	"$tilec" tests/cpu_gemm/gemm_bf16.c --arch amx -o /dev/null 2>"$work/err" &&
		! grep -q "note:" "$work/err" || { cat "$work/err"; fail "a note on the fast path"; }
	echo "bf16: $(grep -c tdpbf16ps "$work/bf16.s") tdpbf16ps; int8: $(grep -c tdpbssd "$work/i8.s") tdpbssd"
	;;
run)
	"$tilec" run tests/cpu_gemm/gemm_bf16.c --arch native \
		--shape M=77,N=70,K=131 >"$work/out" 2>&1 ||
		{ cat "$work/out"; fail "bf16 gemm, --arch native"; }
	# every operand layout, ragged and whole (on AMX: buffers held as
	# stored, a's tiles read in place or packed, b's interleaved or
	# transposed)
	for k in gemm_nn gemm_tn gemm_tt; do
		for t in "-D BLOCK_M=32 -D BLOCK_N=32 -D BLOCK_K=32" \
			"-D BLOCK_M=128 -D BLOCK_N=64 -D BLOCK_K=128"; do
			for s in M=77,N=70,K=131 M=256,N=128,K=256; do
				# shellcheck disable=SC2086
				"$tilec" run tests/cpu_gemm/gemm_bf16_trans.c --kernel $k \
					--arch native $t --shape $s >"$work/out" 2>&1 ||
					{ cat "$work/out"; fail "bf16 $k $t at $s"; }
			done
		done
	done
	# the host benchmark's large AMX tiles (tools/cpu_host_prepare.sh)
	"$tilec" run tests/cpu_gemm/gemm_bf16.c --arch native -D BLOCK_M=512 \
		-D BLOCK_N=128 -D BLOCK_K=256 --shape M=600,N=300,K=300 \
		>"$work/out" 2>&1 || { cat "$work/out"; fail "bf16, 512-row tiles"; }
	"$tilec" run tests/cpu_gemm/gemm_i8.c --arch native -D BLOCK_M=512 \
		-D BLOCK_N=128 -D BLOCK_K=512 --shape M=600,N=300,K=700 \
		>"$work/out" 2>&1 || { cat "$work/out"; fail "int8, 512-row tiles"; }
	if has amx_bf16; then
		"$tilec" tests/cpu_gemm/gemm_bf16_trans.c --arch native \
			--emit=ir >"$work/ir" || fail "--emit=ir"
		[ "$(grep -c 'as stored' "$work/ir")" = 6 ] ||
			{ cat "$work/ir"; fail "bf16 buffers not held as stored"; }
	fi
	"$tilec" run samples/gemm_w8a8.c --arch native \
		--shape M=70,N=131,K=203 >"$work/out" 2>&1 ||
		{ cat "$work/out"; fail "int8 gemm, --arch native"; }
	if has avx512_vnni; then
		"$tilec" run samples/gemm_w8a8.c --arch avx512vnni -D BLOCK_K=32 \
			--shape M=33,N=200,K=97 >"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "int8 gemm on VNNI"; }
		# k of 256 a call: the 64-byte packs of A and of B stored [N][K]
		"$tilec" run tests/cpu_gemm/gemm_i8.c --arch avx512vnni \
			-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=256 \
			--shape M=131,N=77,K=300 >"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "int8 gemm on VNNI, k 256 a call"; }
	fi
	"$tilec" samples/gemm_w8a8.c --arch native --emit=ir | grep 'gemm acc'
	;;
refuse)
	export TILEC_CPU_HIDE="avx512bw,fma"
	"$tilec" run samples/gemm_f32.c --arch avx512 --shape M=30,N=20,K=10 \
		>"$work/out" 2>&1 && fail "an avx512 kernel ran without AVX-512 BW"
	grep -q "this CPU lacks \(avx512f, \)\?\(avx512bw, \)\?\(avx512vl, \)\?fma (translate with --arch native" "$work/out" ||
		{ cat "$work/out"; fail "no clear message"; }
	grep -q "Illegal instruction\|signal" "$work/out" && fail "it ran"
	"$tilec" run samples/gemm_f32.c --arch generic --shape M=30,N=20,K=10 \
		>"$work/out" 2>&1 || { cat "$work/out"; fail "generic refused"; }
	unset TILEC_CPU_HIDE
	if has amx_tile; then
		TILEC_CPU_HIDE=amx-int8 "$tilec" run samples/gemm_w8a8.c --arch amx \
			--shape M=30,N=20,K=10 >"$work/out" 2>&1 &&
			fail "an AMX kernel ran with AMX-INT8 hidden"
		grep -q "this CPU lacks amx-int8" "$work/out" || { cat "$work/out"; fail "no clear message"; }
	else
		"$tilec" run tests/cpu_gemm/gemm_bf16.c --arch sapphirerapids \
			--shape M=30,N=20,K=10 >"$work/out" 2>&1 &&
			fail "an AMX kernel ran on a CPU without AMX"
		grep -q "this CPU lacks .*amx-tile, amx-bf16, amx-int8 (" "$work/out" ||
			{ cat "$work/out"; fail "no clear message"; }
	fi
	sed -n 's/^tilec run: //p' "$work/out"
	;;
prefetch)
	# prefetched ARCH TUNABLES...: the copies whose next rows the IR
	# prefetches, as "A B", "A", "" ...
	prefetched() {
		local arch=$1
		shift
		"$tilec" samples/gemm_f32.c --emit=ir --arch "$arch" "$@" \
			>"$work/ir" 2>/dev/null || fail "gemm_f32 --arch $arch $*"
		sed -nE 's/.*prefetch ([AB])\[.*/\1/p' "$work/ir" | sort | tr '\n' ' '
	}
	mid=(-D BLOCK_M=64 -D BLOCK_N=256 -D BLOCK_K=48)
	big=(-D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128)
	[ "$(prefetched avx512 "${mid[@]}")" = "A " ] ||
		fail "avx512 64x256x48: prefetched '$(prefetched avx512 "${mid[@]}")', want A"
	[ "$(prefetched amx "${mid[@]}")" = "A B " ] ||
		fail "amx 64x256x48: prefetched '$(prefetched amx "${mid[@]}")', want A B"
	[ -z "$(prefetched avx512 "${big[@]}")" ] ||
		fail "avx512 256x256x128: prefetched '$(prefetched avx512 "${big[@]}")', want none"
	[ "$(prefetched avx512)" = "A B " ] ||
		fail "avx512 defaults: prefetched '$(prefetched avx512)', want A B"
	;;
strip)
	# strip_run PROGRAM ARCH N SHAPE: translated with a strip of N,
	# verified, compiled clean, checked against the reference
	strip_run() {
		local src=$1 arch=$2 n=$3 shape=$4
		"$tilec" "$src" --arch "$arch" --cpu-strip="$n" --verify \
			-o "$work/s.c" 2>"$work/err" ||
			{ cat "$work/err"; fail "$src --cpu-strip=$n"; }
		grep -q "no strip" "$work/err" && { cat "$work/err"; fail "$src not stripped"; }
		grep -q "for (int b = 0; b < nbx; b++)" "$work/s.c" ||
			fail "$src: no loop over a strip's blocks"
		"$tilec" "$src" --arch "$arch" --cpu-strip="$n" --standalone \
			-o "$work/alone.c" 2>/dev/null &&
		"$cc" -std=c11 -O2 -fopenmp -march=native -Wall -Wextra -Werror \
			-c "$work/alone.c" -o "$work/s.o" ||
			fail "$src --cpu-strip=$n does not compile clean"
		"$tilec" run "$src" --arch "$arch" --source "$work/s.c" \
			--shape "$shape" >"$work/out" 2>&1 ||
			{ cat "$work/out"; fail "$src --cpu-strip=$n at $shape"; }
	}
	# grid x of 8 (strips 3, 3, 2) and of 1; K ragged
	strip_run samples/gemm_f32.c native 3 M=300,N=1000,K=259
	strip_run samples/gemm_f32.c native 3 M=17,N=100,K=7
	strip_run samples/gemm_f32.c native 4 M=129,N=515,K=64
	# int8 with its fused epilogue (scales, f16 out) and bf16
	strip_run samples/gemm_w8a8.c native 2 M=70,N=400,K=203
	strip_run tests/cpu_gemm/gemm_bf16.c native 3 M=77,N=300,K=131
	strip_run tests/cpu_gemm/gemm_i8.c native 2 M=131,N=300,K=300
	# a 1-D buffer kept for each block (its view a plain pointer)
	strip_run tests/cpu_gemm/gemm_colmax.c native 3 M=130,N=300,K=70,MB=3
	# scalars of each block's accumulator (tile_max), after the loop and
	# in it: each block's own, set and read in its turn
	strip_run tests/cpu_gemm/strip_epilogue_scalar.c native 4 M=8,N=256,K=32
	strip_run tests/cpu_gemm/strip_epilogue_scalar.c native 3 M=17,N=300,K=70
	strip_run tests/cpu_gemm/strip_loop_scalar.c native 4 M=16,N=64,K=64
	strip_run tests/cpu_gemm/strip_loop_scalar.c native 2 M=33,N=70,K=40
	"$tilec" tests/cpu_gemm/strip_epilogue_scalar.c -o /dev/null 2>"$work/err" &&
		! grep -q "no strip" "$work/err" ||
		{ cat "$work/err"; fail "the default does not strip the epilogue's scalar"; }
	# a sum the top level carries over the iterations: no strip, a note
	"$tilec" tests/cpu_gemm/strip_carried_scalar.c --cpu-strip=4 \
		-o "$work/x.c" 2>"$work/err" || fail "strip_carried_scalar.c"
	grep -q "strip_carried_scalar.c:[0-9]*:[0-9]*: note: no strip of blocks for kernel 'strip_carried_scalar': 'total' depends on grid x" \
		"$work/err" || { cat "$work/err"; fail "no note for the carried sum"; }
	"$tilec" run tests/cpu_gemm/strip_carried_scalar.c --source "$work/x.c" \
		--shape M=16,N=64,K=64 >"$work/out" 2>&1 ||
		{ cat "$work/out"; fail "the carried sum's check"; }
	"$tilec" samples/gemm_f32.c --cpu-strip=3 --emit=ir --verify >"$work/ir" ||
		fail "--emit=ir"
	grep -q "^	strip 3 blocks along x, each keeping acc$" "$work/ir" ||
		{ cat "$work/ir"; fail "no strip line in the IR"; }
	grep -q "^		copy As <- A" "$work/ir" || fail "A's copy not shared"
	grep -q "each block: gemm acc" "$work/ir" || fail "the gemm not each block's"
	# the default is 4 blocks; 0 and 1 are none
	"$tilec" samples/gemm_f32.c >"$work/a.c" &&
		"$tilec" samples/gemm_f32.c --cpu-strip=4 >"$work/b.c" &&
		"$tilec" samples/gemm_f32.c --cpu-strip=0 >"$work/c.c" &&
		"$tilec" samples/gemm_f32.c --cpu-strip=1 >"$work/d.c" ||
		fail "translation"
	cmp -s "$work/a.c" "$work/b.c" || fail "the default is not 4 blocks"
	cmp -s "$work/c.c" "$work/d.c" || fail "--cpu-strip=0 and 1 differ"
	grep -q "nbx" "$work/c.c" && fail "--cpu-strip=0 made a strip"
	"$tilec" tests/cpu_gemm/gemm_batched.c --cpu-strip=2 --verify \
		-o "$work/x.c" 2>"$work/err" || fail "the batched gemm"
	grep -q "gemm_batched.c:[0-9]*:[0-9]*: note: no strip of blocks for kernel 'gemm_batched': no copy of its loop is the same for every block of a row" \
		"$work/err" || { cat "$work/err"; fail "no note for the batched gemm"; }
	"$tilec" run tests/cpu_gemm/gemm_batched.c --source "$work/x.c" \
		--shape BATCH=3,M=70,N=90,K=40 >"$work/out" 2>&1 ||
		{ cat "$work/out"; fail "the batched gemm's check"; }
	"$tilec" samples/gemm_f32.c --cpu-strip=99 -o /dev/null 2>"$work/err" &&
		fail "--cpu-strip=99 accepted"
	grep -q "cpu-strip wants a number of blocks" "$work/err" ||
		{ cat "$work/err"; fail "no usage message"; }
	# --cpu-strip in tilec run, export and tune: what each translates
	"$tilec" run samples/gemm_f32.c --cpu-strip=3 --shape M=70,N=900,K=40 \
		>"$work/out" 2>&1 || { cat "$work/out"; fail "run --cpu-strip=3"; }
	grep -q "strips of up to 3 blocks of a grid row" "$work/out" ||
		{ cat "$work/out"; fail "run --cpu-strip=3 did not strip by 3"; }
	"$tilec" run samples/gemm_f32.c --cpu-strip=0 --shape M=70,N=900,K=40 \
		--json >"$work/out" 2>&1 || { cat "$work/out"; fail "run --cpu-strip=0"; }
	grep -q '"cpu_strip": 1,' "$work/out" ||
		{ cat "$work/out"; fail "run --cpu-strip=0 made a strip"; }
	"$tilec" export samples/gemm_f32.c --cpu-strip=3 -o "$work/x3" >/dev/null &&
		"$tilec" export samples/gemm_f32.c --cpu-strip=0 -o "$work/x0" >/dev/null ||
		fail "export --cpu-strip"
	grep -q "tilec_strip_blocks(3," "$work/x3/gemm_f32.c" ||
		fail "export --cpu-strip=3 did not strip by 3"
	grep -q "nbx" "$work/x0/gemm_f32.c" && fail "export --cpu-strip=0 made a strip"
	"$tilec" tune samples/gemm_f32.c --cpu-strip=2 --shape M=64,N=300,K=32 \
		--choices BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=32 -D STAGES=2 \
		--repeat 1 --warmup 0 --confirm 0 --jobs 1 -o "$work/rec.json" \
		>"$work/out" 2>&1 || { cat "$work/out"; fail "tune --cpu-strip=2"; }
	grep -q '"cpu_strip": 2' "$work/rec.json" ||
		{ cat "$work/rec.json"; fail "the record does not say cpu_strip 2"; }
	for cmd in run export tune; do
		"$tilec" $cmd samples/gemm_f32.c --cpu-strip=17 -o "$work/bad" \
			>"$work/out" 2>&1
		[ $? = 2 ] || { cat "$work/out"; fail "$cmd --cpu-strip=17: not status 2"; }
		grep -q "cpu-strip wants a number of blocks, 0 to 16, not '17'" \
			"$work/out" || { cat "$work/out"; fail "$cmd: no usage message"; }
	done
	mkdir -p "$work/inc/tilec"
	ln -s "$PWD/templates/cpu" "$work/inc/tilec/cpu"
	"$cc" -std=c11 -O2 -march=native -fopenmp -Wall -Wextra -Werror \
		-I "$work/inc" -o "$work/strip_blocks" tests/cpu_gemm/strip_blocks.c -lm ||
		fail "strip_blocks.c does not build"
	"$work/strip_blocks" || fail "a strip length spreads the grid unevenly"
	echo "strips: f32, int8, bf16 checked; run, export and tune take --cpu-strip"
	;;
export)
	"$tilec" export tests/cpu_gemm/gemm_bf16.c -t openmp --arch amx -o "$work/x" ||
		fail "export --arch amx"
	cat >"$work/main.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "gemm_bf16.h"

/* bf16 values as stored: the top half of a float. */
static uint16_t
bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	return (uint16_t)(u >> 16);
}

static float
wide(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

int
main(void)
{
	enum { M = 37, N = 45, K = 70 };
	static uint16_t A[M][K], B[N][K];
	static float C[M][N];
	unsigned s = 7;
	for (int i = 0; i < M * K; i++)
		A[i / K][i % K] = bf16((float)((s = s * 1103515245u + 12345u) >> 20) / 2048.0f - 1.0f);
	for (int i = 0; i < N * K; i++)
		B[i / K][i % K] = bf16((float)((s = s * 1103515245u + 12345u) >> 20) / 2048.0f - 1.0f);
	for (int i = 0; i < M * N; i++)
		C[i / N][i % N] = -7.0f;
	int r = gemm_bf16_launch(M, N, K, (void *)A, (void *)B, &C[0][0]);
	if (r != 0) {
		for (int i = 0; i < M * N; i++)
			if (C[i / N][i % N] != -7.0f)
				return 1;
		printf("refused, nothing written\n");
		return 3;
	}
	double worst = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double ref = 0;
			for (int p = 0; p < K; p++)
				ref += (double)wide(A[i][p]) * wide(B[j][p]);
			worst = fmax(worst, fabs(C[i][j] - ref));
		}
	printf("AMX export ran: max abs error %.3g\n", worst);
	return worst < 1e-3 ? 0 : 1;
}
C
	"$cc" -std=c11 -O2 -fopenmp -I "$work/x" "$work/main.c" "$work/x/gemm_bf16.c" \
		-lm -o "$work/main" || fail "cc the AMX export"
	"$work/main" 2>"$work/err"
	rc=$?
	if has amx_tile; then
		[ $rc = 0 ] || { cat "$work/err"; fail "the AMX export on an AMX CPU: status $rc"; }
	else
		[ $rc = 3 ] || { cat "$work/err"; fail "the AMX export on a CPU without AMX: status $rc"; }
		grep -q "gemm_bf16_launch: gemm_bf16.c was exported for amx" "$work/err" ||
			fail "no clear message: $(cat "$work/err")"
		cat "$work/err"
	fi
	;;
*)
	fail "unknown case $case"
	;;
esac
