#!/usr/bin/env bash
# Profile cases of tools/gpu/cases.py with Nsight Compute on the GPU
# machine (hardware counters: throughput of each unit, warp stalls,
# occupancy), and measure the sm_80 matrix path's ceiling with
# tools/gpu/mma_peak.cu.  Needs bench-carry/ from tools/gpu_prepare.sh;
# reports go to $OUT.  Clocks are left as found (--clock-control none).
#
#   <device> tools/gpu_profile.sh [--peak] CASE [CASE...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp}
cd "$root/bench-carry" || { echo "run tools/gpu_prepare.sh first" >&2; exit 2; }
if [ "${1:-}" = --peak ]; then
	shift
	nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o "$out/mma_peak" "$root/tools/gpu/mma_peak.cu" &&
		"$out/mma_peak" | tee "$out/mma_peak.log"
fi
for c in "$@"; do
	k=$(python3 -c 'import json, sys
print(next(x["launch"]["kernel"] for x in json.load(open("cases.json")) if x["name"] == sys.argv[1]))' "$c") || continue
	ncu --clock-control none --launch-count 1 --kernel-name-base function -k "$k" -f -o "$out/$c" \
		--section SpeedOfLight --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis --section WarpStateStats \
		--section Occupancy --section LaunchStats --section SchedulerStats \
		--section SourceCounters \
		--metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
		python3 run.py cases.json --only "$c" --repeat 1 >"$out/run_$c.txt" 2>&1
	ncu -i "$out/$c.ncu-rep" --page details >"$out/ncu_$c.txt" 2>&1
	# Per machine instruction: stall samples, excess sectors and wavefronts.
	ncu -i "$out/$c.ncu-rep" --page source --print-source sass --csv >"$out/$c.source.csv" 2>&1
	# The machine code, for reading the inner loops.
	nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o "$out/$c.cubin" "$c.cu" 2>&1 | grep registers
	cuobjdump -sass "$out/$c.cubin" >"$out/$c.sass" 2>&1
	echo "== $c"
	grep -E "smsp__average_warps_issue_stalled" "$out/ncu_$c.txt" | sort -k3 -g -r | head -8
	grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issue Slots Busy|No Eligible|Stall|Shared Memory Configuration Size|L1/TEX Hit|Executed Ipc A" "$out/ncu_$c.txt" | head -40
done
