#!/usr/bin/env bash
# compute-sanitizer over GPU cases, in one call on the GPU machine: each
# case of tools/gpu/cases.py whose name contains one of PARTS (default:
# the 64x64-tile gemm with the copies issued inside its gemm, and every
# regression program) runs once under racecheck, synccheck and memcheck,
# and must report nothing.  Needs bench-carry/ from tools/gpu_prepare.sh
# (run where the translator is); writes logs to $OUT when set.
#
#   tools/gpu_prepare.sh sm_90a && <device> tools/gpu_sanitize.sh [PARTS]
#
# The fast pipelined loop hands each stage back to the copies through an
# mbarrier ("empty") on which lane 0 of each warp arrives after a
# __syncwarp (tilec::StageBarriers::read).  Racecheck may not chain a
# warp barrier into another lane's arrival; to tell such a report from a
# real hazard, the same gemm is also built with every thread arriving on
# its own (TILEC_EMPTY_ARRIVE_PER_THREAD; case suffix _per_thread), which
# needs no such chaining.  A report on the first build alone is the
# tool's model, not a race: docs/backend-cuda.md, "Copies issued inside
# the gemm".
set -uo pipefail
cd "$(dirname "$0")/../bench-carry" || { echo "run tools/gpu_prepare.sh first" >&2; exit 2; }
out=${OUT:-/tmp}
parts=${1:-gemm_f16_64x64_fast,gemm_f16_64x64,regress_}
command -v compute-sanitizer >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
command -v compute-sanitizer >/dev/null || { echo "no compute-sanitizer" >&2; exit 2; }
# The per-thread variant of every selected fast-loop gemm.
python3 - "$parts" <<'PY'
import json, sys
cases = json.load(open("cases.json"))
parts = sys.argv[1].split(",")
extra = []
for c in cases:
    if "_fast" in c["name"] and any(p in c["name"] for p in parts):
        src = open(c["cu"]).read()
        v = dict(c, name=c["name"] + "_per_thread", cu=c["cu"][:-3] + "_per_thread.cu", kind="check")
        open(v["cu"], "w").write("#define TILEC_EMPTY_ARRIVE_PER_THREAD 1\n" + src)
        extra.append(v)
json.dump([c for c in cases if not c["name"].endswith("_per_thread")] + extra,
          open("cases_sanitize.json", "w"), indent=1)
PY
status=0
for tool in racecheck synccheck memcheck; do
	args=(--tool "$tool" --error-exitcode 3 --print-limit 20)
	[ "$tool" = racecheck ] && args+=(--racecheck-report all)
	echo "== $tool"
	PYTHONUNBUFFERED=1 compute-sanitizer "${args[@]}" python3 run.py cases_sanitize.json \
		--only "$parts" --repeat 1 >"$out/sanitize_$tool.log" 2>&1 || status=1
	grep -E '^========= (ERROR|WARNING|Error|Race|.*[Hh]azard)' "$out/sanitize_$tool.log" | sort | uniq -c | head -20
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed, [0-9]+ failed' "$out/sanitize_$tool.log" || true
done
# One racecheck process per fast-loop gemm and its per-thread variant: a
# report is then the case's own, and the two builds can be compared.  A
# hazard in the per-thread build is a race; one in the warp-arrival
# build alone is the tool not chaining __syncwarp into lane 0's arrival.
echo "== racecheck, one process per fast-loop gemm"
printf '%-40s %8s %8s\n' case hazards result
for name in $(python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(open("cases_sanitize.json")) if "_fast" in c["name"] and any(p in c["name"] for p in sys.argv[1].split(","))))' "$parts"); do
	log="$out/racecheck_$name.log"
	PYTHONUNBUFFERED=1 compute-sanitizer --tool racecheck --racecheck-report all \
		--print-limit 20 python3 run.py cases_sanitize.json --only "=$name" \
		--repeat 1 >"$log" 2>&1
	n=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" | tail -1)
	r=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	printf '%-40s %8s %8s\n' "$name" "${n:-?}" "${r:-?}"
	case $name in *_per_thread) [ "${n:-1}" = 0 ] || status=1 ;; esac
done
exit $status
