#!/usr/bin/env bash
# python_gpu_run.sh - on a GPU machine without libclang, as
# python-carry/run.sh (tools/python_gpu_prepare.sh copies it there): the
# Python package's tests, every kernel built with tilec.load from the
# pre-translated kernels, then the launch-overhead benchmark
# (tools/bench_python_launch.py --breakdown), in one call of under
# four minutes.
# Logs go to $OUT (pytest.log, bench.log) when it is set.
#
#   bash python-carry/run.sh [PYTEST ARGS...]   e.g. -k "torch or cuda"
#
# The carried libtilec_runtime.so was built on the development machine;
# if it does not load here (other system libraries), the runtime is built
# from the working tree with meson (-Dtranslator=disabled) and used.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
export TILEC_LIBRARY_DIR=$here/lib TILEC_SOURCE_ROOT=$here
export TILEC_PRETRANSLATED=$here/kernels PYTHONPATH=$here/python
TILEC_CACHE_DIR=$(mktemp -d) # cold: every kernel compiled here
export TILEC_CACHE_DIR PYTHONUNBUFFERED=1
command -v nvidia-smi >/dev/null &&
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import sys, numpy, torch; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())' ||
	echo "note: this python3 has no numpy or torch"
if ! python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$TILEC_LIBRARY_DIR/libtilec_runtime.so"; then
	echo "note: the carried libtilec_runtime.so does not load here; building the runtime"
	rt=$(mktemp -d)
	(cd "$here/.." && meson setup "$rt" -Dtranslator=disabled >"$rt.log" 2>&1 &&
		ninja -C "$rt" >>"$rt.log" 2>&1) || { tail -n 30 "$rt.log"; exit 1; }
	export TILEC_LIBRARY_DIR=$rt
fi
status=0
echo "== tools/bench_python_launch.py"
OMP_NUM_THREADS=1 timeout -s INT 90 python3 "$here/tools/bench_python_launch.py" --breakdown 2>&1 |
	tee "$out/bench.log" || status=1
echo "== pytest python/tests (kernels by tilec.load of $TILEC_PRETRANSLATED)"
timeout -s INT 100 python3 -m pytest -v -rs --tb=short -p no:cacheprovider \
	"$here/python/tests" "$@" 2>&1 | tee "$out/pytest.log" || status=1
rm -rf "$TILEC_CACHE_DIR"
exit $status
