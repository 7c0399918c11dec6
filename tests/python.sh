#!/usr/bin/env bash
# python.sh BUILD SRCROOT CASE - the Python package's pytest tests.
#
#   tree     python/tests against the package in the source tree, its
#            calls through ctypes alone (TILEC_PYTHON_CTYPES=1)
#   extension
#            python/tests against a copy of the package with its C
#            extension (tilec._fast) built in place by setup.py: the calls
#            go through it
#   install  `pip install ./python` (a copy of it) into a fresh virtual
#            environment, then python/tests against what it installed
#            (with the C extension where the interpreter has its headers);
#            and first with no C compiler (CC=false): the package must
#            install all the same and call kernels through ctypes
#   runtime-only
#            what a GPU machine without libclang runs
#            (tools/python_gpu_prepare.sh's folder): python/tests with
#            only libtilec_runtime.so in the library directory and every
#            kernel built by tilec.load from the pre-translated ones
#
# The interpreter is Debian's /usr/bin/python3 where it has numpy and
# pytest (tools/setup.sh installs python3-numpy and python3-pytest),
# else the python3 on PATH if that has them; with neither the test fails
# and says so: numpy is a dependency of the suite, not optional.  The
# libraries come from BUILD (TILEC_LIBRARY_DIR).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
case=$3

py=
for cand in /usr/bin/python3 python3; do
	if command -v "$cand" >/dev/null &&
		"$cand" -c 'import numpy, pytest' 2>/dev/null; then
		py=$(command -v "$cand")
		break
	fi
done
if [ -z "$py" ]; then
	echo "FAIL: no python3 with numpy and pytest (run tools/setup.sh:" \
		"python3-numpy, python3-pytest)" >&2
	exit 1
fi
export TILEC_LIBRARY_DIR=$build TILEC_SOURCE_ROOT=$src
# A sanitized build's libraries (meson's b_sanitize, passed by
# tests/meson.build) load into an interpreter only after the sanitizer
# runtimes they were built against.
preload=
for lib in $(echo "${TILEC_SANITIZE:-}" | tr , " "); do
	case $lib in
	address) preload="$preload $(cc -print-file-name=libasan.so)" ;;
	undefined) preload="$preload $(cc -print-file-name=libubsan.so)" ;;
	esac
done
sanitized() { LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}" "$@"; }
[ -n "$preload" ] || sanitized() { "$@"; }
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-$build/tests/jit-cache}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case $case in
tree)
	TILEC_PYTHON_CTYPES=1 TILEC_EXPECT_CALL_PATH=ctypes PYTHONPATH=$src/python \
		sanitized "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
	;;
extension)
	cp -r "$src/python" "$work/pkg"
	rm -rf "$work/pkg/build" "$work/pkg"/tilec/*.so
	(cd "$work/pkg" && "$py" setup.py build_ext --inplace) >"$work/build.log" 2>&1 ||
		{ cat "$work/build.log"; echo "FAIL: setup.py build_ext"; exit 1; }
	ls "$work/pkg"/tilec/_fast*.so >/dev/null 2>&1 ||
		{ cat "$work/build.log"; echo "FAIL: tilec._fast was not built"; exit 1; }
	cd "$work"
	TILEC_EXPECT_CALL_PATH=extension PYTHONPATH=$work/pkg \
		sanitized "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
	;;
install)
	# A copy: setuptools writes its build files next to the sources.
	cp -r "$src/python" "$work/pkg"
	rm -rf "$work/pkg/build" "$work/pkg"/tilec/*.so
	# Without a C compiler the extension is left out, nothing else.
	"$py" -m venv --system-site-packages "$work/bare"
	CC=false "$work/bare/bin/pip" install -q --no-build-isolation --no-deps \
		--no-index "$work/pkg" >"$work/pip-bare.log" 2>&1 ||
		{ cat "$work/pip-bare.log"; echo "FAIL: pip install ./python without a C compiler"; exit 1; }
	rm -rf "$work/pkg/build"
	path=$(cd "$work" && "$work/bare/bin/python" -c 'import tilec; print(tilec.call_path)')
	[ "$path" = ctypes ] ||
		{ echo "FAIL: installed without a C compiler, tilec.call_path is $path"; exit 1; }
	"$py" -m venv --system-site-packages "$work/venv"
	"$work/venv/bin/pip" install -q --no-build-isolation --no-deps \
		--no-index "$work/pkg" >"$work/pip.log" 2>&1 ||
		{ cat "$work/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
	cd "$work"
	where=$("$work/venv/bin/python" -c 'import tilec; print(tilec.__file__)')
	case $where in
	"$work/venv/"*) ;;
	*) echo "FAIL: tilec imported from $where, not the venv"; exit 1 ;;
	esac
	# The extension where this interpreter has its headers (Python.h).
	want=ctypes
	"$py" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' &&
		want=extension
	TILEC_EXPECT_CALL_PATH=$want sanitized "$work/venv/bin/python" -m pytest -q \
		-p no:cacheprovider "$src/python/tests"
	;;
runtime-only)
	# The prepare step translates through libtilec: in a sanitized build
	# its interpreter needs the preload too (and only it, not the shell).
	prepare_py=$py
	if [ -n "$preload" ]; then
		prepare_py=$work/python
		printf '#!/bin/sh\nLD_PRELOAD="%s${LD_PRELOAD:+ $LD_PRELOAD}" exec "%s" "$@"\n' \
			"$preload" "$py" >"$prepare_py"
		chmod +x "$prepare_py"
	fi
	PYTHON=$prepare_py BUILD_DIR=$build CARRY_DIR=$work/carry "$src/tools/python_gpu_prepare.sh" \
		>"$work/prepare.log" 2>&1 ||
		{ cat "$work/prepare.log"; echo "FAIL: tools/python_gpu_prepare.sh"; exit 1; }
	cd "$work"
	# meson's LD_LIBRARY_PATH names the build, which holds libtilec.
	unset LD_LIBRARY_PATH
	TILEC_LIBRARY_DIR=$work/carry/lib TILEC_SOURCE_ROOT=$work/carry \
		TILEC_PRETRANSLATED=$work/carry/kernels TILEC_EXPECT_CALL_PATH=ctypes \
		PYTHONPATH=$work/carry/python sanitized "$py" -m pytest -q -rs \
		-p no:cacheprovider "$work/carry/python/tests"
	;;
*)
	echo "python.sh: no case '$case'" >&2
	exit 2
	;;
esac
