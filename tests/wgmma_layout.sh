#!/usr/bin/env bash
# wgmma_layout.sh - build tests/wgmma/layout.cu with nvcc and run it on
# the host: wgmma's descriptors read each shared tile element where
# copy_g2s wrote it.  Skips (77) without nvcc.
#
# usage: wgmma_layout.sh SRCROOT
set -u
command -v nvcc >/dev/null 2>&1 || { echo "no nvcc: skipped"; exit 77; }
src=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$src/templates" "$work/tilec"
nvcc -std=c++17 -I"$work" "$src/tests/wgmma/layout.cu" -o "$work/layout" >"$work/nvcc.log" 2>&1 ||
	{ echo "FAIL: nvcc"; cat "$work/nvcc.log"; exit 1; }
"$work/layout"
