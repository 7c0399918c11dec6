#!/usr/bin/env bash
# python_gpu_prepare.sh - everything the Python package's tests and the
# launch-overhead benchmark need on a GPU machine that has Python, torch
# and NVRTC but no libclang (so no libtilec), in python-carry/:
#
#   python/tilec, python/tests   the package and its tests, with
#   python/setup.py              which builds its C extension there
#                                (tilec/_fast.c; run.sh does)
#   lib/libtilec_runtime.so      the runtime (it needs only libc)
#   kernels/                     every kernel the tests and the benchmark
#                                build, translated here (standalone source
#                                and launch document, index.json;
#                                python/tests/pretranslated.py lists them):
#                                cuda for ARCH, openmp for avx2
#   samples/, tests/launch/      the tile programs, which the tests read
#                                and which find their translations by hash
#   templates/                   the helper headers (a test includes them)
#   tools/bench_python_launch.py
#   run.sh                       the command for the GPU machine
#                                (tools/python_gpu_run.sh)
#
# usage: tools/python_gpu_prepare.sh [ARCH]     (default sm_90a)
# (BUILD_DIR names the build, default build; CARRY_DIR the folder written,
# default python-carry: tests/python.sh's runtime-only case uses both.)
# then, on the GPU machine, from the repository root, carrying
# python-carry:  bash python-carry/run.sh
# There the tests build every kernel with tilec.load (TILEC_PRETRANSLATED)
# and make the same calls and assertions as with tilec.compile; the ones
# that need the translator itself skip, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-sm_90a}
build=${BUILD_DIR:-build}
for f in libtilec.so libtilec_runtime.so; do
	[ -e "$build/$f" ] || { echo "python_gpu_prepare.sh: no $build/$f; build first (tools/setup.sh)" >&2; exit 1; }
done
# $PYTHON if set (tests/python.sh passes a sanitized build's preloading
# wrapper), else the system's python3, where the Debian packages are.
py=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || { /usr/bin/python3 -c '' 2>/dev/null && py=/usr/bin/python3; }
out=${CARRY_DIR:-python-carry}
rm -rf "$out"
mkdir -p "$out/lib" "$out/python/tests" "$out/tools" "$out/tests/launch" "$out/samples"
cp -r python/tilec "$out/python/"
cp python/setup.py python/pyproject.toml python/README.md "$out/python/"
# No extension built here: run.sh builds it for the interpreter there.
rm -rf "$out/python/tilec/__pycache__" "$out"/python/tilec/*.so
cp python/tests/*.py "$out/python/tests/"
cp tools/bench_python_launch.py "$out/tools/"
cp -r templates "$out/" # the helper headers, which one test includes
# The real file under the name the package looks for (links may not travel).
cp -L "$build/libtilec_runtime.so" "$out/lib/libtilec_runtime.so"
programs=$(PYTHONPATH=python/tests "$py" -c \
	'import pretranslated; print(" ".join(pretranslated.PROGRAMS))')
for p in $programs; do
	cp "$p" "$out/$p"
done
TILEC_LIBRARY_DIR=$build TILEC_SOURCE_ROOT=. PYTHONPATH=python \
	"$py" python/tests/pretranslated.py "$out/kernels" --cuda-arch "$arch" --cpu-arch avx2
cp tools/python_gpu_run.sh "$out/run.sh"
git describe --always --dirty >"$out/REVISION" 2>/dev/null || echo unknown >"$out/REVISION"
bytes=$(du -sb "$out" | cut -f1)
echo "$out/: $(find "$out" -type f | wc -l) files, $((bytes / 1024)) KiB (the carry limit is 64 MiB)"
if [ "$bytes" -gt $((32 * 1024 * 1024)) ]; then
	echo "python_gpu_prepare.sh: $out/ is over 32 MiB; the working tree travels too" >&2
	exit 1
fi
echo "on the GPU machine, from the repository root, carrying $out: bash $out/run.sh"
