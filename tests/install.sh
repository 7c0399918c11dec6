#!/usr/bin/env bash
# What a user of the installed files gets (README.md, "Using tilec from C"
# and "Using tilec from CMake").
#
#   install.sh BUILD SRCROOT CASE
#
# Each case runs `meson install --destdir` of BUILD into a fresh directory
# and builds against that tree only:
#   c      README's jit.c example with cc and pkg-config (tilec.pc), run
#          on samples/colsum.c; install/api_errors.c (located errors
#          through the API and tilec_jit, refused options); every sample
#          passes `cc -fsyntax-only`
#          with the installed tilec.h; a --no-standalone export builds
#          against the installed helper headers; libtilec.so exports only
#          tilec_* symbols
#   cmake  README's CMake example (find_package(tilec), tilec_add_kernel
#          for openmp, two tunings of colsum in one program), built and run
# Exit 77 (skipped) without cmake or pkg-config.
set -u
build=$(realpath "$1") root=$(realpath "$2") case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

dest=$work/dest
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet \
	>"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "meson install"; }
read -r prefix libdir includedir < <(meson introspect --buildoptions "$build" |
	python3 -c 'import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], o["libdir"], o["includedir"])')
root_prefix=$dest$prefix
export LD_LIBRARY_PATH=$root_prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$root_prefix/bin:$PATH

# The README block after "<!-- example: NAME -->", into $work/app/NAME.
mkdir -p "$work/app"
example() {
	python3 - "$root/README.md" "$1" "$work/app/$1" <<'PY' || fail "README.md has no example $1"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- example: %s -->\n```\w*\n(.*?)```" % re.escape(sys.argv[2]),
              text, re.S)
if not m:
    sys.exit(1)
open(sys.argv[3], "w").write(m.group(1))
PY
}

# A sanitized build (meson's b_sanitize, passed by tests/meson.build)
# installs sanitized libraries: programs linking them need the same
# runtime first.
san=
if [ -n "${TILEC_SANITIZE:-}" ] && [ "$TILEC_SANITIZE" != none ]; then
	san=-fsanitize=$TILEC_SANITIZE
fi

case $case in
c)
	command -v pkg-config >/dev/null || skip "no pkg-config"
	export PKG_CONFIG_PATH=$root_prefix/$libdir/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$dest
	example jit.c
	cp "$root/samples/colsum.c" "$work/app/"
	cd "$work/app" || exit 2
	cc -std=c11 -Wall -Wextra -Werror $san jit.c $(pkg-config --cflags --libs tilec) \
		-o jit || fail "cc jit.c with pkg-config"
	readelf -d jit | grep -q 'libtilec.so.0' || fail "jit does not use libtilec.so.0"
	./jit colsum.c || fail "the JIT example"
	cc -std=c11 -Wall -Wextra -Werror $san "$root/tests/install/api_errors.c" \
		$(pkg-config --cflags --libs tilec) -o api_errors ||
		fail "cc api_errors.c with pkg-config"
	./api_errors || fail "the API's errors"
	# Tile programs are C to any compiler, from the installed tilec.h.
	for s in "$root"/samples/*.c; do
		cc -std=c11 -fsyntax-only $(pkg-config --cflags tilec_runtime) "$s" ||
			fail "cc -fsyntax-only $s with the installed tilec.h"
	done
	# --no-standalone output finds its helpers among the installed headers.
	tilec export colsum.c --no-standalone -o inc >/dev/null || fail "tilec export"
	rm -r inc/tilec # the copies export writes beside it
	cc -std=c11 -O2 -fopenmp -march=native -fno-math-errno -c inc/colsum.c \
		$(pkg-config --cflags tilec_runtime) -o colsum.o 2>"$work/cc.log" ||
		{ cat "$work/cc.log"; fail "--no-standalone export against the installed helpers"; }
	# Only the public API is exported.
	for lib in libtilec.so libtilec_runtime.so; do
		other=$(nm -D --defined-only "$root_prefix/$libdir/$lib" |
			awk '{print $3}' | grep -v '^tilec_' || true)
		[ -z "$other" ] || fail "$lib exports non-API symbols: $other"
	done
	readelf -d "$root_prefix/$libdir/libtilec.so" | grep -q 'SONAME.*libtilec.so.0' ||
		fail "libtilec.so has no soname"
	;;
cmake)
	command -v cmake >/dev/null || skip "no cmake"
	example CMakeLists.txt
	example main.c
	cp "$root/samples/colsum.c" "$work/app/"
	cmake -S "$work/app" -B "$work/app/build" -DCMAKE_PREFIX_PATH="$root_prefix" \
		>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "cmake configure"; }
	cmake --build "$work/app/build" >"$work/build.log" 2>&1 ||
		{ cat "$work/build.log"; fail "cmake --build"; }
	grep -q "tilec: colsum of colsum.c for openmp" "$work/build.log" ||
		fail "tilec_add_kernel did not translate at build time"
	"$work/app/build/app" || fail "the CMake example"
	;;
*)
	fail "unknown case '$case'"
	;;
esac
echo "OK: install $case"
