#!/usr/bin/env bash
# hostile_names.sh - file names from outside never become code.
#
#   hostile_names.sh TILEC SRCROOT
#
# Copies tests/hostile/scale.c to a path whose directories and file name
# hold what could end or continue a comment or a string in the generated
# source: newlines followed by #error and by a constructor that traps,
# "*" + "/" (a directory ending in '*'), a '"', backslashes (one before a
# space, where a comment may wrap), a trigraph "??/", non-ASCII and
# invalid UTF-8 bytes.  Then, for openmp, cuda and hip:
#
#   - the source (with --line-directives and --standalone) and what
#     `tilec export` writes (source and header), their #include lines
#     dropped, go through the C preprocessor (trigraphs on): no payload
#     word survives outside comments and #line strings;
#   - the OpenMP source is compiled with cc -std=c11 (trigraphs on,
#     -Werror=comment) and `tilec run` runs and checks it; the OpenMP
#     export is compiled and linked with cc; the CUDA and HIP exports are
#     compiled with nvcc and hipcc where present.
#
# A payload that became code would be an #error, a syntax error, a trap
# at load time, or a word the preprocessor keeps.
set -u
tilec=$(realpath "$1") root=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

nl=$'\n'
d1="a${nl}#error INJECTED_NEWLINE${nl}__attribute__((constructor)) static void INJECTED_CTOR(void) { __builtin_trap(); }${nl}"
d2='b\ "INJECTED_QUOTE" ??'      # with the '/' after it, the trigraph "??/"
d3=' INJECTED_AFTER_TRIGRAPH *'   # and here "*/"
d4=' int INJECTED_AFTER_STAR; '
f=$'c \xc3\xa9 \xff \\" INJECTED_FILE;\nint INJECTED_FILE_LINE;.c'
dir=$work/$d1/$d2/$d3/$d4
mkdir -p "$dir" || fail "mkdir"
src=$dir/$f
cp "$root/tests/hostile/scale.c" "$src" || fail "cp"
payload='INJECTED_[A-Z_]*'

# preprocess FILE LANG: comments and #line strings gone, nothing included.
preprocess() {
	grep -v '^[[:space:]]*#[[:space:]]*include' "$1" |
		gcc -E -P -trigraphs -x "$2" -D__global__= -D__device__= \
			-D__forceinline__= - 2>"$work/cpp.log"
}
check_clean() { # FILE LANG WHAT
	local out
	out=$(preprocess "$1" "$2") || { cat "$work/cpp.log"; fail "$3: cpp"; }
	if printf '%s\n' "$out" | grep -n "$payload"; then
		fail "$3: a payload from the file name is code"
	fi
	# The name does appear, quoted, in the comments.
	grep -q 'INJECTED_FILE' "$1" || fail "$3: the file name is missing"
}

n=0
for t in openmp cuda hip; do
	case $t in
	openmp) lang=c ext=c ;;
	*) lang=c++ ext=cpp ;;
	esac
	out=$work/out-$t.$ext
	"$tilec" "$src" -t "$t" --verify --line-directives --standalone \
		>"$out" 2>"$work/err" || { cat "$work/err"; fail "tilec -t $t"; }
	check_clean "$out" "$lang" "tilec -t $t"
	"$tilec" export "$src" -t "$t" -o "$work/export-$t" \
		>/dev/null 2>"$work/err" || { cat "$work/err"; fail "export -t $t"; }
	for g in "$work/export-$t"/*; do
		case $g in *.json) continue ;; esac
		check_clean "$g" "$lang" "export -t $t ${g##*/}"
	done
	n=$((n + 1))
done

# The OpenMP source compiles warning-free where it matters, trigraphs on.
cc=${CC:-cc}
"$cc" -std=c11 -trigraphs -Werror=comment -Werror=trigraphs -march=native -fopenmp -O1 \
	-c "$work/out-openmp.c" -o "$work/out.o" 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; fail "cc on the OpenMP source"; }
"$cc" -std=c11 -trigraphs -Werror=comment -Werror=trigraphs -march=native -fopenmp -O1 \
	-c "$work/export-openmp/scale.c" -o "$work/export.o" 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; fail "cc on the OpenMP export"; }
printf '#include "scale.h"\nint main(void) { return 0; }\n' >"$work/main.c"
"$cc" -std=c11 -fopenmp -I"$work/export-openmp" "$work/main.c" \
	"$work/export.o" -lm -o "$work/main" 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; fail "linking the OpenMP export"; }
"$work/main" || fail "the vendored program did not run cleanly"

# tilec run: JIT-compiled, loaded, run and checked.
TILEC_CACHE_DIR=$work/cache "$tilec" run "$src" --shape N=1000 \
	>"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "tilec run"; }

if command -v nvcc >/dev/null; then
	nvcc -arch=sm_80 -c "$work/export-cuda/scale.cu" -o "$work/cuda.o" \
		2>"$work/nvcc.log" || { cat "$work/nvcc.log"; fail "nvcc"; }
fi
if command -v hipcc >/dev/null; then
	hipcc --offload-arch=gfx90a -c "$work/export-hip/scale.hip" \
		-o "$work/hip.o" 2>"$work/hipcc.log" ||
		{ cat "$work/hipcc.log"; fail "hipcc"; }
fi
echo "ok: $n targets, hostile path kept out of the code"
