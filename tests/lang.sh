#!/usr/bin/env bash
# lang.sh - one program of tests/lang/ (each shows a language construct
# on every backend), checked everywhere it can run without a GPU.
#
# usage: lang.sh TILEC SRCROOT FILE
#
# FILE (from SRCROOT) holds one kernel and an opening comment with
# `shape: S` and `run: ARGS` lines, as tests/gpu_regress/ files do:
#   - gpu_regress.sh's checks: `tilec run` on the CPU against the
#     reference for every shape, the CUDA output through nvcc (sm_80,
#     sm_90a), the HIP output through hipcc (gfx90a), the expect-T and
#     reject-T patterns;
#   - the HIP output run on the host CPU under the wave emulator
#     (hip_emu/hip_emu_run.py) against the reference, for every shape;
#     a note, not a failure, without clang++ 15 or later.
# Exit status: 0 pass, 1 fail.
set -u
if [ $# -ne 3 ]; then
	echo "usage: lang.sh TILEC SRCROOT FILE" >&2
	exit 2
fi
tilec=$1 root=$2 src=$3
here=$(dirname "$(realpath "$0")")
status=0
bash "$here/gpu_regress.sh" "$tilec" "$root" "$src" || status=1
read -r -a run_args < <(sed -nE 's@^(//| \*) run: *@@p' "$root/$src" | tr '\n' ' ')
while IFS= read -r s; do
	python3 "$here/hip_emu/hip_emu_run.py" "$tilec" "$root" "$src" \
		--shape "$s" "${run_args[@]}" >"${TMPDIR:-/tmp}/lang-emu.$$" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "note: no clang++ 15 or later; the HIP output is not run"
		break
	elif [ $rc -ne 0 ]; then
		echo "FAIL: hip emulator, --shape $s"
		cat "${TMPDIR:-/tmp}/lang-emu.$$"
		status=1
	fi
done < <(sed -nE 's@^(//| \*) shape: *@@p' "$root/$src")
rm -f "${TMPDIR:-/tmp}/lang-emu.$$"
[ $status -eq 0 ] && echo "PASS (all)"
exit $status
