#!/usr/bin/env bash
# gpu_regress.sh - one regression program of the GPU backends, checked
# everywhere it can run on a machine without a GPU.
#
# usage: gpu_regress.sh TILEC SRCROOT FILE [-D NAME=VALUE]... [--shape S]...
#                       [--range R]... [--kernel K]
#
# FILE (from SRCROOT; tests/gpu_regress/NAME.c, or a sample) is translated
# with the -D given and checked:
#   - on the CPU: `tilec run FILE --shape S` against the reference
#     interpreter, for every --shape given and every `shape: S` line of
#     the file's opening comment (`shape: -` for a kernel without dims),
#     with the arguments of its `run: ARGS` lines (--range ...) and the
#     --range and --kernel arguments given (a sample has no such lines;
#     the compiles below cover every kernel of the file);
#   - for cuda, sm_80 and sm_90a: the standalone output compiles with nvcc
#     (-cubin; skipped without nvcc);
#   - for hip, gfx90a: the standalone output compiles with hipcc (device
#     code only; skipped without hipcc);
#   - lines `expect-T: REGEX` and `reject-T: REGEX` (T = cuda, hip,
#     openmp, the last for --arch avx2, or ir, which is `-t cuda
#     --emit=ir`): the output must (must not)
#     have a line matching the extended regular expression, where a
#     compile alone proves nothing (a bounds test, a type).
# The same programs run under the HIP wave emulator (the hip-emu-regress-*
# tests) and on the H200 (tools/gpu/cases.py).  Exit status: 0 pass,
# 1 fail.
set -u

if [ $# -lt 3 ]; then
	echo "usage: gpu_regress.sh TILEC SRCROOT FILE [-D NAME=VALUE]... [--shape S]..." >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
src=$3
shift 3
defines=()
shapes=()
ranges=()
while [ $# -gt 0 ]; do
	case $1 in
	-D) defines+=(-D "$2"); shift 2 ;;
	--shape) shapes+=("$2"); shift 2 ;;
	--range | --kernel) ranges+=("$1" "$2"); shift 2 ;;
	*) echo "gpu_regress.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
while IFS= read -r s; do
	shapes+=("$s")
done < <(sed -nE 's@^(//| \*) shape: *@@p' "$src")
# Extra arguments of tilec run (--range ...), from `run: ARGS` lines.
read -r -a run_args < <(sed -nE 's@^(//| \*) run: *@@p' "$src" | tr '\n' ' ')
run_args+=("${ranges[@]}")

status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*"
	status=1
}

# The output for target T (cuda, hip, openmp, ir) must (expect) or must not
# (reject) match each of the file's patterns for T.
patterns() {
	local kind=$1 t=$2 out=$3 re
	while IFS= read -r re; do
		if [ "$kind" = expect ] && ! grep -qE -- "$re" "$out"; then
			fail "$t output has no line matching: $re"
		elif [ "$kind" = reject ] && grep -qE -- "$re" "$out"; then
			fail "$t output has a line matching: $re"
			grep -nE -- "$re" "$out" | head -3
		fi
	done < <(sed -nE "s@^(//| \\*) $kind-$t: *@@p" "$src")
}

for s in "${shapes[@]}"; do
	shape=(--shape "$s")
	[ "$s" = - ] && shape=()
	"$tilec" run "$src" "${defines[@]}" "${shape[@]}" "${run_args[@]}" >"$work/run.log" 2>&1 ||
		{ fail "tilec run --shape $s"; cat "$work/run.log"; }
done

if grep -qE "^(//| \*) (expect|reject)-openmp:" "$src"; then
	"$tilec" "$src" -t openmp --arch avx2 --verify "${defines[@]}" -o "$work/k.c" ||
		fail "tilec -t openmp --arch avx2"
	patterns expect openmp "$work/k.c"
	patterns reject openmp "$work/k.c"
fi

"$tilec" "$src" -t cuda --emit=ir --verify "${defines[@]}" -o "$work/k.ir" ||
	fail "tilec -t cuda --emit=ir"
patterns expect ir "$work/k.ir"
patterns reject ir "$work/k.ir"

for arch in sm_80 sm_90a; do
	"$tilec" "$src" -t cuda --arch "$arch" --verify --standalone "${defines[@]}" \
		-o "$work/k.cu" || { fail "tilec -t cuda --arch $arch"; continue; }
	patterns expect cuda "$work/k.cu"
	patterns reject cuda "$work/k.cu"
	if command -v nvcc >/dev/null 2>&1; then
		nvcc -std=c++17 -gencode=arch=compute_${arch#sm_},code=$arch -cubin \
			-o "$work/k.cubin" "$work/k.cu" >"$work/nvcc.log" 2>&1 ||
			{ fail "nvcc $arch"; head -20 "$work/nvcc.log"; }
	fi
done
command -v nvcc >/dev/null 2>&1 || echo "note: no nvcc; the CUDA output is not compiled"

if "$tilec" "$src" -t hip --verify --standalone "${defines[@]}" -o "$work/k.hip"; then
	patterns expect hip "$work/k.hip"
	patterns reject hip "$work/k.hip"
	if command -v hipcc >/dev/null 2>&1; then
		hipcc -x hip --offload-arch=gfx90a -O3 --cuda-device-only -c \
			-o "$work/k.o" "$work/k.hip" >"$work/hipcc.log" 2>&1 ||
			{ fail "hipcc gfx90a"; head -20 "$work/hipcc.log"; }
	else
		echo "note: no hipcc; the HIP output is not compiled"
	fi
else
	fail "tilec -t hip"
fi
[ $status -eq 0 ] && echo PASS
exit $status
