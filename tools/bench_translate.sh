#!/usr/bin/env bash
# Translator speed, per sample and target, median over N runs: the time
# tilec reports for the translation itself (--time: parse, check, passes,
# emit; what the runtime pays in-process) and the whole command's wall time
# (process start and loading libclang included).  No vendor compiler runs.
# Usage: tools/bench_translate.sh [N]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-30}
tilec=${TILEC:-build/tilec}
python3 - "$tilec" "$n" <<'PY'
import glob, os, statistics, subprocess, sys, time
tilec, n = sys.argv[1], int(sys.argv[2])
print(f"{'sample':20} {'target':7} {'translate ms':>12} {'command ms':>10}")
for src in sorted(glob.glob("samples/*.c")):
    for target in ("openmp", "cuda"):
        times, inner = [], []
        for _ in range(n):
            t0 = time.perf_counter()
            r = subprocess.run([tilec, src, "-t", target, "-o", os.devnull, "--time"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            times.append((time.perf_counter() - t0) * 1e3)
            for line in r.stderr.splitlines():
                if "translated in" in line:
                    inner.append(float(line.split("translated in")[1].split()[0]))
        if r.returncode:
            print(f"{os.path.basename(src):20} {target:7} {'error (see tilec ' + src + ' -t ' + target + ')':>12}")
            continue
        print(f"{os.path.basename(src):20} {target:7} {statistics.median(inner):12.1f} "
              f"{statistics.median(times):10.1f}")
PY
