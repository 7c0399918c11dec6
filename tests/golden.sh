#!/usr/bin/env bash
# golden.sh - compare tilec's output for one sample with its expectation.
#
# usage: golden.sh TILEC SRCROOT NAME
#
# NAME is a file in tests/golden/; its name says what to run:
#
#   SAMPLE[.VARIANT].ir          tilec samples/SAMPLE.c --emit=ir
#   SAMPLE[.VARIANT].openmp.c    tilec samples/SAMPLE.c -t openmp
#   SAMPLE[.VARIANT].cuda.cu     tilec samples/SAMPLE.c -t cuda
#   SAMPLE[.VARIANT].hip.cpp     tilec samples/SAMPLE.c -t hip
#
# always with --verify, run from SRCROOT so paths in the output are
# relative (samples/gemm.c).  Extra arguments come from the optional file
# tests/golden/SAMPLE[.VARIANT].KIND.args (KIND: ir, openmp, cuda, hip),
# split on whitespace; the ir and openmp kinds get --arch avx512 unless
# they name an arch.  The output must match the golden file exactly;
# on a mismatch a unified diff is printed.  With TILEC_UPDATE=1 the golden
# file is rewritten instead (review the diff with git).  Exit status: 0
# pass, 1 fail.
set -u

if [ $# -ne 3 ]; then
	echo "usage: golden.sh TILEC SRCROOT NAME" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
name=$3
golden=tests/golden/$name

case $name in
*.ir) kind=ir base=${name%.ir} flags=(--emit=ir) ;;
*.openmp.c) kind=openmp base=${name%.openmp.c} flags=(-t openmp) ;;
*.cuda.cu) kind=cuda base=${name%.cuda.cu} flags=(-t cuda) ;;
*.hip.cpp) kind=hip base=${name%.hip.cpp} flags=(-t hip) ;;
*)
	echo "golden.sh: $name: not a golden file name (see tests/README.md)" >&2
	exit 1
	;;
esac
sample=samples/${base%%.*}.c
argsfile=tests/golden/$base.$kind.args
extra=()
if [ -f "$argsfile" ]; then
	read -r -d '' -a extra < "$argsfile"
fi
if [ ! -f "$sample" ]; then
	echo "golden.sh: $name: no sample $sample" >&2
	exit 1
fi

# The CPU's code depends on the host (--arch native, its caches) unless
# an arch is named: the goldens name one, so they read the same on any
# machine.
case $kind in
ir | openmp)
	case " ${extra[*]-} " in
	*" --arch"*) ;;
	*) flags+=(--arch avx512) ;;
	esac
	;;
esac
cmd=("$tilec" "$sample" "${flags[@]}" --verify "${extra[@]}")
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"${cmd[@]}" >"$out" 2>"$err"
status=$?
echo "\$ tilec ${cmd[*]:1}"
if [ $status -ne 0 ]; then
	echo "FAIL: tilec exited with status $status"
	cat "$err"
	exit 1
fi
if [ -s "$err" ]; then
	echo "note: tilec wrote to stderr:"
	cat "$err"
fi

if [ "${TILEC_UPDATE:-0}" = 1 ]; then
	if cmp -s "$out" "$golden"; then
		echo "unchanged: $golden"
	else
		cp "$out" "$golden"
		echo "updated: $golden (review with git diff)"
	fi
	exit 0
fi
if ! diff -u --label "$golden" --label "tilec output" "$golden" "$out"; then
	echo "FAIL: output differs from $golden"
	echo "(TILEC_UPDATE=1 meson test -C build --suite golden rewrites it)"
	exit 1
fi
echo "ok: $golden"
