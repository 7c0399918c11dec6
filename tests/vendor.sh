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
#                  and sm_90a, and a cubin for sm_90a, with nvcc
#       aot-hip    exported gemm to a code object for gfx90a with hipcc
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
cuda)
	command -v nvcc >/dev/null || skip "no nvcc"
	dir=$(export_to gemm cuda) || exit $?
	nvcc -arch=sm_80 -DVENDOR_CUDA -I "$dir" samples/vendor/main.c \
		"$dir/gemm.cu" -o "$work/vendor" || fail "nvcc did not build it"
	echo "built $work/vendor with nvcc (not run: needs a GPU)"
	dir=$(export_included gemm cuda) || exit $?
	nvcc -arch=sm_80 -I "$dir" -c "$dir/gemm.cu" -o "$work/gemm-inc.o" ||
		fail "nvcc did not build the --no-standalone export"
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
			elfs=$(cuobjdump --list-elf "$work/$s.fatbin")
			echo "$elfs"
			for a in sm_80 sm_90a; do
				echo "$elfs" | grep -q "$a" || fail "$s.fatbin has no $a code"
			done
		fi
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
