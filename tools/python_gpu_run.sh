#!/usr/bin/env bash
# python_gpu_run.sh - on a GPU machine without libclang, as
# python-carry/run.sh (tools/python_gpu_prepare.sh copies it there): the
# package's C extension (tilec._fast) built for the interpreter there,
# the launch-overhead benchmark (tools/bench_python_launch.py
# --breakdown, which times each tilec call through the extension and
# through ctypes alone, alternating), then the Python package's tests on
# both call paths, every kernel built with tilec.load from the
# pre-translated kernels, in one call of under six minutes.
# Logs go to $OUT (build_ext.log, bench.log, pytest.log,
# pytest-ctypes.log) when it is set.
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
echo "== the C extension: setup.py build_ext --inplace"
# setup.py where setuptools is; else the compiler by hand, as it would.
if ! (cd "$here/python" && python3 setup.py build_ext --inplace) >"$out/build_ext.log" 2>&1; then
	echo "note: setup.py build_ext failed (tail below); compiling with cc"
	tail -n 5 "$out/build_ext.log"
	inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	cc -std=c11 -O2 -fPIC -shared -I"$inc" "$here/python/tilec/_fast.c" \
		-o "$here/python/tilec/_fast$suffix" >>"$out/build_ext.log" 2>&1 ||
		{ tail -n 20 "$out/build_ext.log"; status=1; }
fi
path=$(cd "$here" && python3 -c 'import tilec; print(tilec.call_path)')
echo "tilec.call_path: $path"
[ "$path" = extension ] || status=1
echo "== tools/bench_python_launch.py --breakdown"
OMP_NUM_THREADS=1 timeout -s INT 150 python3 "$here/tools/bench_python_launch.py" --breakdown 2>&1 |
	tee "$out/bench.log" || status=1
echo "== pytest python/tests, calls through the extension (kernels by tilec.load of $TILEC_PRETRANSLATED)"
TILEC_EXPECT_CALL_PATH=extension timeout -s INT 100 python3 -m pytest -v -rs --tb=short \
	-p no:cacheprovider "$here/python/tests" "$@" 2>&1 | tee "$out/pytest.log" || status=1
echo "== pytest python/tests, calls through ctypes alone (TILEC_PYTHON_CTYPES=1)"
TILEC_PYTHON_CTYPES=1 TILEC_EXPECT_CALL_PATH=ctypes timeout -s INT 100 python3 -m pytest -q -rs \
	--tb=short -p no:cacheprovider "$here/python/tests" "$@" 2>&1 |
	tee "$out/pytest-ctypes.log" || status=1
rm -rf "$TILEC_CACHE_DIR"
exit $status
