#!/usr/bin/env bash
# warnings.sh - the generated code of every sample compiles without a
# warning under -Wall -Wextra -Werror.
#
# usage: warnings.sh TILEC SRCROOT BACKEND [SAMPLE...]
#
# BACKEND is cuda, hip or openmp.  For each samples/*.c (and
# flash_attention.c with -D CAUSAL=1), or the SAMPLEs named, translates
# the sample (`tilec SAMPLE -t BACKEND --verify`, the plain output, which
# includes the helper headers) and compiles it with the headers of
# templates/ on the include path, as tilec/cuda, tilec/hip, tilec/gpu and
# tilec/cpu:
#   cuda:   nvcc -std=c++17 -c for sm_80 and sm_90a, -Werror all-warnings
#           (the device front end's warnings) and -Wall -Wextra -Werror
#           for the host compiler;
#   hip:    hipcc -std=c++17 -c --offload-arch=gfx90a -Wall -Wextra
#           -Werror (device and host code);
#   openmp: cc -std=c11 -fopenmp -c -Wall -Wextra -Werror, for the
#           default --arch with -march=native (as the JIT builds it), for
#           avx512 (-mavx512f -mavx512bw -mavx512vl -mfma), which the
#           golden files use, and for avx2 (-mavx2 -mfma -mf16c): the
#           two widths of explicit vectors.
#   openmp-clang: the openmp output compiled as the JIT compiles it (-O3
#           -fno-math-errno -fopenmp -march=native) by clang, for every
#           sample, tests/lang/*.c and tests/kernels/*.c: clang warns of
#           an `omp simd` loop it cannot vectorize (-Wpass-failed).
# Any warning fails the sample; its compiler log is printed.  Exit
# status: 0 clean, 1 a failure, 77 (skipped) without the compiler.
set -u

if [ $# -lt 3 ]; then
	echo "usage: warnings.sh TILEC SRCROOT BACKEND [SAMPLE...]" >&2
	exit 2
fi
tilec=$(realpath "$1")
root=$(realpath "$2")
backend=$3
shift 3
cd "$root" || exit 1

case $backend in
cuda) compiler=nvcc ;;
hip) compiler=hipcc ;;
openmp) compiler=${CC:-cc} ;;
openmp-clang) compiler=clang ;;
*) echo "warnings.sh: unknown backend $backend" >&2; exit 2 ;;
esac
target=${backend%-clang}
if ! command -v "$compiler" >/dev/null; then
	echo "skipped: no $compiler"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/include/tilec"
for d in cuda hip gpu cpu; do
	ln -s "$root/templates/$d" "$dir/include/tilec/$d"
done

# Each case: a name, the sample, tilec's extra arguments.
cases=()
if [ $# -gt 0 ]; then
	for s in "$@"; do cases+=("$s|samples/$s.c|"); done
else
	for f in samples/*.c; do
		n=$(basename "$f" .c)
		cases+=("$n|$f|")
	done
	cases+=("flash_attention.causal|samples/flash_attention.c|-D CAUSAL=1")
	if [ "$backend" = openmp-clang ]; then
		for f in tests/lang/*.c tests/kernels/*.c; do
			cases+=("$(basename "$(dirname "$f")").$(basename "$f" .c)|$f|")
		done
	fi
fi

failed=0
fail() {
	echo "FAIL: $1"
	sed -n 1,40p "$2"
	failed=1
}

for c in "${cases[@]}"; do
	IFS='|' read -r name src args <<<"$c"
	case $backend in
	cuda) out=$dir/$name.cu ;;
	hip) out=$dir/$name.hip ;;
	openmp*) out=$dir/$name.c ;;
	esac
	# shellcheck disable=SC2086
	if ! "$tilec" "$src" -t "$target" --verify $args -o "$out" \
		2>"$dir/tilec.log"; then
		fail "$name: tilec -t $target" "$dir/tilec.log"
		continue
	fi
	case $backend in
	cuda)
		for arch in sm_80 sm_90a; do
			nvcc -std=c++17 -arch="$arch" -c -I"$dir/include" \
				-Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror \
				-o "$dir/$name.o" "$out" >"$dir/cc.log" 2>&1 ||
				fail "$name: nvcc -arch=$arch" "$dir/cc.log"
		done
		;;
	hip)
		hipcc -std=c++17 --offload-arch=gfx90a -c -I"$dir/include" \
			-Wall -Wextra -Werror -o "$dir/$name.o" "$out" \
			>"$dir/cc.log" 2>&1 ||
			fail "$name: hipcc --offload-arch=gfx90a" "$dir/cc.log"
		;;
	openmp)
		"$compiler" -std=c11 -O2 -fopenmp -march=native -c -I"$dir/include" \
			-Wall -Wextra -Werror -o "$dir/$name.o" "$out" \
			>"$dir/cc.log" 2>&1 ||
			fail "$name: $compiler" "$dir/cc.log"
		for a in "avx512|-mavx512f -mavx512bw -mavx512vl -mfma" \
			"avx2|-mavx2 -mfma -mf16c"; do
			arch=${a%%|*}
			# shellcheck disable=SC2086
			if "$tilec" "$src" -t openmp --arch "$arch" --verify \
				$args -o "$dir/$name.$arch.c" 2>"$dir/tilec.log"; then
				"$compiler" -std=c11 -O2 -fopenmp ${a#*|} -c \
					-I"$dir/include" -Wall -Wextra -Werror \
					-o "$dir/$name.o" "$dir/$name.$arch.c" \
					>"$dir/cc.log" 2>&1 ||
					fail "$name: $compiler ($arch)" "$dir/cc.log"
			else
				fail "$name: tilec -t openmp --arch $arch" \
					"$dir/tilec.log"
			fi
		done
		;;
	openmp-clang)
		clang -std=c11 -O3 -fno-math-errno -fopenmp -march=native -c \
			-I"$dir/include" -Wall -Wextra -Werror -o "$dir/$name.o" \
			"$out" >"$dir/cc.log" 2>&1 ||
			fail "$name: clang" "$dir/cc.log"
		;;
	esac
done
[ $failed -eq 0 ] && echo "clean: ${#cases[@]} programs, $backend"
exit $failed
