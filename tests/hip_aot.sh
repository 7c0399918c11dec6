#!/usr/bin/env bash
# hip_aot.sh - every sample's standalone HIP output compiles ahead of time
# with hipcc.
#
# usage: hip_aot.sh TILEC SRCROOT [ARCH]
#
# For each samples/*.c (and flash_attention.c with -D CAUSAL=1), runs
# `tilec SAMPLE -t hip --arch ARCH --standalone` and compiles the result
# with `hipcc --offload-arch=ARCH -O3 -c`, host code included, as a project
# vendoring the file would.  ARCH defaults to gfx90a.  Exit status: 0 all
# compiled, 1 a failure (its log is printed), 77 (skipped) without hipcc.
set -u

if [ $# -lt 2 ]; then
	echo "usage: hip_aot.sh TILEC SRCROOT [ARCH]" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1
arch=${3:-gfx90a}
if ! command -v hipcc >/dev/null; then
	echo "skipped: no hipcc (Debian: apt-get install hipcc)"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
compile() { # NAME SAMPLE [TILEC ARGS...]
	local name=$1 sample=$2
	shift 2
	local src=$dir/$name.hip log=$dir/$name.log
	if ! "$tilec" "$sample" -t hip --arch "$arch" --standalone "$@" \
		-o "$src" 2>"$log"; then
		echo "FAIL: $name: tilec"
		cat "$log"
		failed=1
		return
	fi
	local t0
	t0=$(date +%s%N)
	if ! hipcc --offload-arch="$arch" -O3 -c "$src" -o "$dir/$name.o" \
		>"$log" 2>&1; then
		echo "FAIL: $name: hipcc --offload-arch=$arch"
		cat "$log"
		failed=1
		return
	fi
	printf 'ok: %-24s %s, %d ms\n' "$name" "$arch" \
		$((($(date +%s%N) - t0) / 1000000))
}

for f in samples/*.c; do
	compile "$(basename "$f" .c)" "$f"
done
compile flash_attention.causal samples/flash_attention.c -D CAUSAL=1
exit $failed
