#!/usr/bin/env bash
# Translate every GPU case (tools/gpu/cases.py) on this machine, which has
# the translator, into bench-carry/: one standalone .cu and one launch
# manifest per case, plus cases.json.  tools/gpu_bench.sh runs them on the
# GPU machine.  Usage: tools/gpu_prepare.sh [ARCH]   (default sm_90a)
#
# For a small carry: ONLY=NAME,NAME,... translates only the cases named
# (=NAME: exactly; else every case whose name contains NAME), and neither
# the runtime's samples nor the vendored gemm; BENCH_CARRY=DIR writes
# into DIR instead of bench-carry; TILEC=PATH translates with another
# tilec binary (a parent commit's, for A/B runs).
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-sm_90a}
tilec=${TILEC:-build/tilec}
[ -x "$tilec" ] || { echo "build tilec first (tools/setup.sh)" >&2; exit 1; }
out=${BENCH_CARRY:-bench-carry}
only=${ONLY:-}
rm -rf "$out" && mkdir -p "$out/src"
cp ../shared/bench/gpu_anchors.py "$out/" 2>/dev/null ||
	echo "note: ../shared/bench/gpu_anchors.py not found; anchors will be skipped" >&2
python3 - "$tilec" "$arch" "$out" "$only" <<'PY'
import json, os, subprocess, sys
sys.path[:0] = ["tools/gpu", "tools"]
from cases import CASES, FLAGS, source
import launch_manifest
tilec, arch, out, only = sys.argv[1:5]
manifest = []
for name, sample, variant, defines, shapes, ref, kind in CASES:
    if only and not any(name == o[1:] if o.startswith("=") else o in name for o in only.split(",")):
        continue
    src, kernel = source(sample)
    if variant:
        text = open(src).read()
        for a, b in zip(variant[::2], variant[1::2]):
            text = text.replace(a, b)
        src = f"{out}/src/{name}.c"
        open(src, "w").write(text)
    args = [tilec, src, "-t", "cuda", "--arch", arch] + FLAGS.get(name, [])
    if kernel:
        args += ["--kernel", kernel]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    cu = f"{out}/{name}.cu"
    subprocess.run(args + ["--standalone", "-o", cu], check=True)
    launch = launch_manifest.only(subprocess.run(
        args + ["--emit=launch"], check=True, capture_output=True,
        text=True).stdout)
    manifest.append({"name": name, "cu": os.path.basename(cu), "launch": launch,
                     "shapes": shapes, "reference": ref, "kind": kind})
json.dump(manifest, open(f"{out}/cases.json", "w"), indent=1)
print(f"{len(manifest)} cases in {out}/")
PY
cp tools/gpu/run.py tools/launch_manifest.py "$out/"
[ -z "$only" ] || exit 0
# Every sample with its defaults, for the runtime's own check (NVRTC and
# the driver API through tilec's runtime, not CuPy).
mkdir -p "$out/rt"
for f in samples/*.c; do
	n=$(basename "$f" .c)
	"$tilec" "$f" -t cuda --arch "$arch" --standalone -o "$out/rt/$n.cu" 2>/dev/null &&
		"$tilec" "$f" -t cuda --arch "$arch" --emit=launch -o "$out/rt/$n.launch.json" ||
		echo "note: $n does not translate for cuda with its defaults" >&2
done
# The vendored gemm (tilec export --tma, gemm_launch building the tensor
# maps), which samples/vendor/main.c checks on ragged shapes.
rm -rf "$out/vendor_tma"
"$tilec" export samples/gemm.c -t cuda --arch "$arch" --tma -D STAGES=3 -o "$out/vendor_tma" >/dev/null
# The gemm at 3 stages with its copies by TMA (tensor maps built by the
# runtime), and the same without TMA to time it against.
for v in tma s3; do
	flags=(-DSTAGES=3 -DBLOCK_N=256 --no-tma)
	[ $v = tma ] && flags=(-DSTAGES=3 -DBLOCK_N=256 --tma)
	"$tilec" samples/gemm.c -t cuda --arch "$arch" "${flags[@]}" --standalone -o "$out/rt/gemm_$v.cu" &&
		"$tilec" samples/gemm.c -t cuda --arch "$arch" "${flags[@]}" --emit=launch \
			-o "$out/rt/gemm_$v.launch.json"
done
