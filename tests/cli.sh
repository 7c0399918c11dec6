#!/usr/bin/env bash
# The command lines' own diagnostics and their JSON output.
#
#   cli.sh TILEC SRCROOT CASE
#
# CASE  did-you-mean  a mistyped option or target of tilec, tilec run,
#                     tilec export and tilec tune is a usage error (status
#                     2) that suggests the nearest valid one; a word near
#                     none suggests nothing
#       arch-list     an unknown --arch lists the target's architectures,
#                     with the nearest one
#       list-json     `tilec --list-kernels --json` is one JSON object: the
#                     kernels with their lines, the tunables with their
#                     values, defaults and choices (-D reflected); a file
#                     name that is not UTF-8 still makes valid JSON
#       export-json   `tilec export --json` reports every file written,
#                     per kernel, and they exist; --prefix is in the names
#       export-names  a parameter the launch function would confuse with
#                     its own names (the kernel, with --prefix too; a local
#                     of the GPU launch) is a located error of export, on
#                     every target, and nothing is written; a --prefix
#                     beginning with tilec_ is a usage error, one that
#                     makes a C library name (ex + p) a located error
#       export-grid-casts  a GPU export's launch function computes a
#                     grid of integer casts as the kernel does ((bool),
#                     (u8), (i8), (i4), (int) of long long): its grid_x
#                     statement compiled and evaluated over N
#       tune-json     `tilec tune --json` prints only the summary object on
#                     stdout: the chosen values, the default's, their
#                     times, the record written, the counts by fate
set -u
tilec=$(realpath "$1") root=$2 case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 2

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect STATUS WANT CMD...: CMD exits with STATUS and its stderr holds WANT.
expect() {
	local status=$1 want=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	local got=$?
	[ $got -eq "$status" ] || { cat "$work/err"; fail "$*: status $got, not $status"; }
	grep -qF -- "$want" "$work/err" ||
		{ cat "$work/err"; fail "$*: no '$want' in stderr"; }
}

case $case in
did-you-mean)
	g=samples/gemm.c
	expect 2 "tilec: unknown option '--tagret'; did you mean '--target'?" \
		"$tilec" $g --tagret cuda
	expect 2 "unknown option '--emitt=ir'; did you mean '--emit'?" \
		"$tilec" $g --emitt=ir
	expect 2 "tilec: unknown target 'cdua'; did you mean 'cuda'? (targets: openmp, cuda, hip)" \
		"$tilec" $g -t cdua
	expect 2 "tilec run: unknown option '--shpe'; did you mean '--shape'?" \
		"$tilec" run $g --shpe M=1,N=1,K=1
	expect 2 "tilec run: unknown target 'hpi'; did you mean 'hip'?" \
		"$tilec" run $g -t hpi --shape M=1,N=1,K=1
	expect 2 "tilec export: unknown option '--prefx'; did you mean '--prefix'?" \
		"$tilec" export $g --prefx p_ -o "$work/x"
	expect 2 "tilec export: unknown target 'opnemp'; did you mean 'openmp'?" \
		"$tilec" export $g -t opnemp -o "$work/x"
	expect 2 "tilec tune: unknown option '--check-shap'; did you mean '--check-shape'?" \
		"$tilec" tune $g --shape M=1,N=1,K=1 --check-shap M=1
	expect 2 "tilec tune: unknown target 'cud'; did you mean 'cuda'?" \
		"$tilec" tune $g -t cud --shape M=1,N=1,K=1
	# Nothing near: no suggestion.
	expect 2 "tilec: unknown option '--xyzzy'" "$tilec" $g --xyzzy
	grep -q "did you mean" "$work/err" && fail "--xyzzy got a suggestion"
	expect 2 "unknown target 'metal' (targets: openmp, cuda, hip)" \
		"$tilec" $g -t metal
	[ -e "$work/x" ] && fail "export wrote something after a usage error"
	;;
arch-list)
	g=samples/gemm.c
	expect 2 "tilec: unknown architecture 'sm_90' for target cuda; did you mean 'sm_90a'? (cuda architectures: sm_80, sm_90a)" \
		"$tilec" $g -t cuda --arch sm_90
	expect 2 "unknown architecture 'volta' for target cuda (cuda architectures: sm_80, sm_90a)" \
		"$tilec" $g -t cuda --arch volta
	expect 2 "unknown architecture 'gfx90' for target hip; did you mean 'gfx90a'? (hip architectures: gfx90a, gfx942)" \
		"$tilec" $g -t hip --arch gfx90
	expect 2 "unknown architecture 'avx' for target openmp; did you mean 'avx2'? (openmp architectures: amx, avx512vnni, avx512, avx2, generic, native; sapphirerapids and emeraldrapids mean amx)" \
		"$tilec" $g --arch avx
	expect 2 "unknown architecture 'saphirerapids' for target openmp; did you mean 'sapphirerapids'?" \
		"$tilec" $g --arch saphirerapids
	expect 2 "tilec run: unknown architecture 'sm_9a' for target cuda; did you mean 'sm_90a'?" \
		"$tilec" run $g -t cuda --arch sm_9a --shape M=1,N=1,K=1
	expect 2 "tilec export: unknown architecture 'sm80' for target cuda; did you mean 'sm_80'?" \
		"$tilec" export $g -t cuda --arch sm80 -o "$work/x"
	expect 2 "tilec tune: unknown architecture 'avx513' for target openmp; did you mean 'avx512'?" \
		"$tilec" tune $g --arch avx513 --shape M=1,N=1,K=1
	;;
list-json)
	"$tilec" samples/gemm.c --list-kernels --json -D BLOCK_M=64 >"$work/out" ||
		fail "--list-kernels --json"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["file"] == "samples/gemm.c", d["file"]
assert [k["name"] for k in d["kernels"]] == ["gemm"], d["kernels"]
src = open("samples/gemm.c").read().split("\n")
line = d["kernels"][0]["line"]
assert src[line - 1].startswith("gemm("), (line, src[line - 1])
t = {x["name"]: x for x in d["tunables"]}
assert list(t) == ["BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "THREADS"], list(t)
m = t["BLOCK_M"]
assert m["value"] == 64 and m["default"] == 128 and m["bound"], m
assert m["choices"] == [64, 128, 256], m
assert src[m["line"] - 1].startswith("TILE_PARAM(BLOCK_M,"), m
assert not t["BLOCK_N"]["bound"] and t["BLOCK_N"]["value"] == t["BLOCK_N"]["default"]
' "$work/out" || fail "the JSON"
	# Several kernels, in order.
	"$tilec" tests/run/partial_write.c --list-kernels --json >"$work/two" 2>/dev/null &&
	"$tilec" tests/run/partial_write.c --list-kernels >"$work/two.txt" &&
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = open(sys.argv[2]).read().split()
assert [k["name"] for k in d["kernels"]] == names and len(names) > 1, (d, names)
' "$work/two" "$work/two.txt" || fail "several kernels"
	expect 2 "--json goes with --list-kernels" "$tilec" samples/gemm.c --json
	# A file name that is not UTF-8 still gives valid JSON ('?' for the
	# bytes that are not), here and in export's report.
	bad="$work"/$'g\xffm'.c
	cp samples/gemm.c "$bad"
	"$tilec" "$bad" --list-kernels --json >"$work/bad.json" || fail "non-UTF-8 name"
	"$tilec" export "$bad" --json -o "$work"/$'d\xff' >"$work/bad-export.json" ||
		fail "export of a non-UTF-8 name"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["file"].endswith("/g?m.c"), d["file"]
e = json.load(open(sys.argv[2]))
assert e["file"] == d["file"] and e["dir"].endswith("/d?"), e
assert e["files"] and all(f.startswith(e["dir"] + "/") for f in e["files"]), e
' "$work/bad.json" "$work/bad-export.json" || fail "the JSON of a non-UTF-8 name"
	;;
export-json)
	"$tilec" export samples/gemm.c -t cuda --prefix big_ --json \
		-o "$work/vendor/" >"$work/out" || fail "export --json"
	python3 -c '
import hashlib, json, os, sys
d = json.load(open(sys.argv[1]))
w = sys.argv[2]
assert d["target"] == "cuda" and d["arch"] == "sm_80", d
assert d["source_sha256"] == hashlib.sha256(open("samples/gemm.c", "rb").read()).hexdigest()
[k] = d["kernels"]
assert k["name"] == "big_gemm" and k["launch"] == "big_gemm_launch", k
want = [w + "/vendor/big_gemm" + e for e in (".cu", ".h", ".launch.json")]
assert k["files"] == want, k["files"]
assert d["files"] == want, d["files"]
for f in want:
    assert os.path.isfile(f), f
' "$work/out" "$work" || fail "the JSON"
	;;
export-names)
	cat >"$work/scale.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
scale(int N, float scale, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128)
		x[i] = x[i] * scale;
	tile_copy(&Y[b * 128], x);
}
PROG
	sed 's/float scale,/float p_scale,/; s/\* scale;/* p_scale;/' \
		"$work/scale.c" >"$work/prefixed.c"
	sed 's/float scale,/float stream,/; s/\* scale;/* stream;/' \
		"$work/scale.c" >"$work/stream.c"
	for t in openmp cuda hip; do
		expect 1 "scale.c:4:20: error: parameter 'scale' has the name of the exported kernel, which the launch function calls; rename it to export" \
			"$tilec" export "$work/scale.c" -t $t -o "$work/x-$t"
		expect 1 "prefixed.c:4:20: error: parameter 'p_scale' has the name of the exported kernel" \
			"$tilec" export "$work/prefixed.c" -t $t --prefix p_ -o "$work/x-$t"
		[ -e "$work/x-$t" ] && fail "export -t $t wrote something after an error"
	done
	expect 1 "stream.c:4:20: error: parameter 'stream' has the name of a variable of the launch function" \
		"$tilec" export "$work/stream.c" -t cuda -o "$work/x"
	# Without --prefix the same parameter names nothing of the export.
	"$tilec" export "$work/prefixed.c" -t openmp -o "$work/ok" >/dev/null ||
		fail "export of a parameter named like nothing of the export"
	# A prefix that makes names of the generated code's helpers
	# (tilec_extent, ...) is refused before anything is written.
	expect 2 "--prefix 'tilec_' begins with 'tilec_'" \
		"$tilec" export "$work/scale.c" --prefix tilec_ -o "$work/pt"
	[ ! -e "$work/pt" ] || fail "--prefix tilec_: something written"
	# So is one that makes the kernel's name a C library function's.
	printf '#include <tilec.h>\nTILE_KERNEL void\np(int N, f32 Y[N])\n{\n\ttile_parallel(i, 64)\n\t\tif (i < N)\n\t\t\tY[i] = 1.0f;\n}\n' \
		>"$work/p.c"
	expect 1 "p.c:3:1: error: kernel 'p' would be exported as 'exp'" \
		"$tilec" export "$work/p.c" --prefix ex -o "$work/pe"
	[ ! -e "$work/pe" ] || fail "--prefix ex: something written"
	# A kernel named as another's launch function (or a helper of it):
	# one symbol twice once both are linked.
	{ cat "$work/scale.c"; sed 's/^scale(/scale_launch_cpu_ok(/; s/scale;/2;/' \
		"$work/scale.c" | grep -v include; } >"$work/two.c"
	for t in openmp cuda hip; do
		expect 1 "two.c:16:1: error: kernel 'scale_launch_cpu_ok' is named as a function of the export of kernel 'scale' (scale_launch...)" \
			"$tilec" export "$work/two.c" -t $t -o "$work/two-$t"
		[ -e "$work/two-$t" ] && fail "export -t $t wrote something after an error"
	done
	;;
export-grid-casts)
	# grid x = (i32)(bool)N + (u8)(N + 232) + (i8)(N + 100) + (i4)N +
	# (int)(long long)N * 2, each cast's own conversion.
	cat >"$work/casts.c" <<'PROG'
#include <tilec.h>

TILE_KERNEL void
casts(int N, long long L, i32 Y[N])
{
	tile_threads(32);
	int b = tile_grid_x((int)(bool)N + (int)(u8)(N + 232) + (int)(i8)(N + 100) +
			    (int)(i4)N + (int)L * 2);
	tile_shared i32 t[1];
	tile_parallel(i, 1)
		t[i] = b;
	tile_copy(&Y[b], t);
}
PROG
	for t in cuda hip; do
		"$tilec" export "$work/casts.c" -t $t -o "$work/x-$t" >/dev/null ||
			fail "export -t $t"
		f=$work/x-$t/casts.$([ $t = cuda ] && echo cu || echo hip)
		expr=$(sed -n '/const long long grid_x =/,/;/p' "$f" | tr -d '\n' |
			sed 's/.*grid_x =//; s/;.*//')
		[ -n "$expr" ] || fail "$t: no grid_x statement in $f"
		cat >"$work/eval.c" <<EOF2
#include <stdio.h>
int main(void)
{
	int bad = 0;
	for (int N = -300; N <= 300; N++) {
		long long L = (long long)N * 3 + (1LL << 33);
		long long got = $expr;
		long long want = (int)(N != 0) + (unsigned char)(N + 232) +
				 (signed char)(N + 100) + (((N & 15) ^ 8) - 8) +
				 (int)L * 2;
		if (got != want && bad++ < 3)
			printf("N=%d: %lld, not %lld\\n", N, got, want);
	}
	return bad != 0;
}
EOF2
		cc -o "$work/eval" "$work/eval.c" || fail "$t: the grid expression does not compile: $expr"
		"$work/eval" || fail "$t: the exported grid differs from the kernel's: $expr"
	done
	;;
tune-json)
	TILEC_CACHE_DIR=$work/cache "$tilec" tune samples/gemm.c \
		--shape M=192,N=160,K=96 --check-shape M=100,N=130,K=70 \
		--choices BLOCK_M=64,128 -D BLOCK_N=64 -D BLOCK_K=32 -D STAGES=3 \
		-D THREADS=128 --repeat 3 --warmup 1 --confirm 1 --json \
		-o "$work/rec.json" >"$work/out" 2>"$work/err" ||
		{ cat "$work/err"; fail "tune --json"; }
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
assert s["record"] == sys.argv[2], s["record"]
assert s["kernel"] == "gemm" and s["target"] == "openmp", s
assert s["chosen"] == r["chosen"], (s["chosen"], r["chosen"])
assert s["chosen"]["BLOCK_M"] in (64, 128) and s["chosen"]["BLOCK_N"] == 64
assert s["default"]["BLOCK_M"] == 128, s["default"]
assert s["default_status"] == "ok" and s["default_ms"] > 0 and s["chosen_ms"] > 0
assert s["chosen_is_default"] == (s["chosen"] == s["default"])
assert s["configs"] == {"ok": 2}, s["configs"]
' "$work/out" "$work/rec.json" || { cat "$work/out"; fail "the JSON"; }
	;;
*)
	echo "cli.sh: unknown case $case" >&2
	exit 2
	;;
esac
echo ok
