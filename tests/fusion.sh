#!/usr/bin/env bash
# fusion.sh - the OpenMP backend's fused row loops (planned by the fuse pass,
# src/passes/cpu_fuse.c; printed by emitters/openmp_fuse.c), on
# tests/fusion/fusion.c.
#
# usage: fusion.sh TILEC SRCROOT CASE
#
# CASE is `output` or a kernel of fusion.c:
#
#   output      `tilec tests/fusion/fusion.c -t openmp --arch avx512
#               --verify` must print tests/fusion/fusion.openmp.c exactly:
#               which statements fuse, which buffers are not stored (with
#               TILEC_UPDATE=1 the file is rewritten; review the diff)
#   KERNEL      `tilec run` of that kernel on ragged shapes, with the
#               tunables at their defaults and with other tile shapes:
#               a wrong fusion reads values before they are computed
#
# Exit status: 0 pass, 1 fail.
set -u

if [ $# -ne 3 ]; then
	echo "usage: fusion.sh TILEC SRCROOT CASE" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
case=$3
src=tests/fusion/fusion.c

if [ "$case" = output ]; then
	golden=tests/fusion/fusion.openmp.c
	out=$(mktemp)
	trap 'rm -f "$out"' EXIT
	if ! "$tilec" "$src" -t openmp --arch avx512 --verify >"$out"; then
		echo "FAIL: tilec exited with status $?"
		exit 1
	fi
	if [ "${TILEC_UPDATE:-0}" = 1 ]; then
		cp "$out" "$golden"
		echo "updated: $golden (review with git diff)"
		exit 0
	fi
	if ! diff -u --label "$golden" --label "tilec output" "$golden" "$out"; then
		echo "FAIL: output differs from $golden"
		echo "(TILEC_UPDATE=1 bash tests/fusion.sh TILEC . output rewrites it)"
		exit 1
	fi
	echo "ok: $golden"
	exit 0
fi

case $case in
fused | masks) shapes=(M=5,N=300,K=200 M=4,N=256,K=300) ;;
neighbour) shapes=(M=5,N=300 M=4,N=256) ;;
row_result | partial_write | recompute | no_recompute) shapes=(M=5,N=60 M=4,N=64) ;;
recompute_all | shifted) shapes=(M=5,N=300 M=4,N=256) ;;
extremes) shapes=(M=5,N=300 M=4,N=256) ;;
vector_exp | vector_not | vector_local) shapes=(M=5,N=300 M=4,N=256 M=3,N=7) ;;
square) shapes=(M=13 M=16) ;;
*)
	echo "fusion.sh: no case $case" >&2
	exit 2
	;;
esac
status=0
tileset=("" "-D BLOCK_M=1 -D BLOCK_N=64" "-D BLOCK_M=3 -D BLOCK_N=256")
# Vector loops: a tile that is not whole vectors (a scalar tail in every
# row) and one wider than a prefetch strip.
case $case in
vector_*) tileset+=("-D BLOCK_M=2 -D BLOCK_N=24" "-D BLOCK_M=1 -D BLOCK_N=512") ;;
esac
for tiles in "${tileset[@]}"; do
	for shape in "${shapes[@]}"; do
		# shellcheck disable=SC2086 # $tiles is a list of arguments
		if "$tilec" run "$src" --kernel "$case" $tiles --shape "$shape" \
			>/dev/null 2>&1; then
			echo "ok: $case $tiles $shape"
		else
			echo "FAIL: $case $tiles $shape:"
			# shellcheck disable=SC2086
			"$tilec" run "$src" --kernel "$case" $tiles --shape "$shape" 2>&1 |
				tail -n 20
			status=1
		fi
	done
done
exit $status
