#!/usr/bin/env bash
# A search run as Ray tasks, end to end (docs/tuning.md, "Work units"):
# the units `tilec tune --prepare` writes for Slurm, run by
# tools/tune_ray.py on a local Ray cluster it starts (and stops), merged
# with `tilec tune --finish`.
#
#   tune_ray.sh TILEC SRCROOT BUILDDIR
#
# Ray comes from the package index into a virtual environment under
# BUILDDIR (ray-venv/), made on the first run; exit 77 (skipped) only
# when Ray is not there and the index cannot be reached.
#
# What it checks, none of it by timing order:
#   - the units' faults ($TILEC_TUNE_TEST_FAULT): a wrong result, a crash
#     and a hang past the per-configuration timeout are failed
#     configurations with their reasons;
#   - a unit's process killed mid-run (SIGKILL, as a preempted node
#     leaves it) is run again by Ray (--retries) and finishes;
#   - a unit not submitted and another's result cut short: the merge of
#     that partial set names both, writes a record from the rest marked
#     partial, and gives the units to rerun;
#   - rerun through Ray (with every unit submitted again: the finished
#     ones rewrite nothing), the merge of the whole set chooses the
#     fastest passing configuration, by the record's own numbers;
#   - the configuration for one node with 8 GPUs (docs/tuning.md), dry:
#     a cluster declaring 8 GPUs runs a CUDA search's 8 units at once,
#     one GPU each (tune_ray.py --dry-run's barrier).
set -u
tilec=$(realpath "$1") root=$(realpath "$2") build=$(realpath "$3")
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-ray.XXXXXX")
driver=
stop() {
	[ -n "$driver" ] && kill "$driver" 2>/dev/null && wait "$driver" 2>/dev/null
	rm -rf "$work"
}
trap stop EXIT
trap 'exit 2' INT TERM HUP
cd "$root" || exit 2

fail() {
	echo "FAIL: $*" >&2
	for f in "$work"/*.log "$work"/prep/logs/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; } >&2
	done
	exit 1
}

# --- Ray, in a virtual environment of its own ------------------------------------
venv=$build/ray-venv
py=$venv/bin/python
if ! "$py" -c 'import ray' 2>/dev/null; then
	rm -rf "$venv"
	python3 -m venv "$venv" >"$work/venv.log" 2>&1 ||
		{ cat "$work/venv.log"; fail "python3 -m venv (Debian: python3-venv)"; }
	if ! "$venv/bin/pip" install -q 'ray>=2.9' >"$work/pip.log" 2>&1; then
		if ! "$venv/bin/pip" index versions ray >/dev/null 2>&1; then
			rm -rf "$venv"
			echo "SKIP: Ray is not installed and the package index cannot be reached"
			exit 77
		fi
		cat "$work/pip.log"
		rm -rf "$venv"
		fail "pip install ray"
	fi
fi
echo "ray $("$py" -c 'import ray; print(ray.__version__)') in $venv"
# Ray's own files under $work, not the user's home.
export RAY_TMPDIR=$work/ray TMPDIR=$work HOME=$work/home RAY_AUTH_MODE=disabled
mkdir -p "$RAY_TMPDIR" "$HOME"

ray_run() {
	"$py" "$root/tools/tune_ray.py" --num-cpus 2 --tilec "$tilec" "$@"
}

# --- the search, prepared as units --------------------------------------------------
# Six configurations with distinct code, one unit each (as tune_slurm.sh).
export TILEC_CACHE_DIR=$work/cache
prep=$work/prep
"$tilec" tune samples/gemm.c --shape M=96,N=80,K=48 \
	--check-shape M=37,N=50,K=21 --choices BLOCK_M=64,128 \
	--choices BLOCK_N=64,128,256 -D BLOCK_K=32 -D STAGES=3 -D THREADS=128 \
	--repeat 3 --warmup 1 --confirm 1 --unit-size 1 --cpus-per-unit 1 \
	--config-timeout 20 --prepare "$prep" >"$work/prep.log" 2>&1 ||
	fail "--prepare"
# The default's unit (d), one per fault, and one stalled once (s).
read -r u_dflt u_wrong u_crash u_hang u_stall u_bad < <(python3 - "$prep" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
units = m["units"]
assert len(units) == 6 and all(len(u["configs"]) == 1 for u in units), units
dflt = next(i for i, u in enumerate(units)
            if u["configs"][0] == next(c["id"] for c in m["configs"] if c.get("default")))
others = [i for i in range(6) if i != dflt]
print(dflt, *others)
PY
)
cid() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["units"][int(sys.argv[2])]["configs"][0])' "$prep/manifest.json" "$1"; }
faults="$(cid "$u_wrong"):wrong,$(cid "$u_crash"):crash,$(cid "$u_hang"):hang,$(cid "$u_stall"):stall-once"
echo "faults: $faults; the default's unit $u_dflt not submitted at first"

# --- first run: faults, a task killed and retried, one unit left out -------------------
first=$(python3 -c 'import sys; print(",".join(str(i) for i in range(6) if i != int(sys.argv[1])))' "$u_dflt")
TILEC_TUNE_TEST_FAULT=$faults ray_run "$prep" --units "$first" --retries 1 \
	>"$work/ray1.log" 2>&1 &
driver=$!
marker=$prep/results/u00$u_stall.started
for _ in $(seq 600); do
	[ -f "$marker" ] && break
	kill -0 "$driver" 2>/dev/null || fail "tune_ray.py ended before the stalled unit started"
	sleep 0.2
done
[ -f "$marker" ] || fail "the stalled unit never started"
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$marker")
# The unit's own process (it stalls before its configuration), by the
# pid it wrote: killed as a preempted node would leave it.
grep -q "tune" "/proc/$pid/cmdline" 2>/dev/null || fail "pid $pid is not the unit"
kill -KILL "$pid"
st=0
wait "$driver" || st=$?
driver=
cat "$work/ray1.log"
[ "$st" -eq 0 ] || fail "tune_ray.py: status $st"
grep -q "unit u00$u_stall ($u_stall) done" "$work/ray1.log" ||
	fail "the killed unit was not run again"
[ "$(grep -c "^--- ray task: unit $u_stall " "$prep/logs/$u_stall.log")" -eq 2 ] ||
	fail "the killed unit did not run twice"
for i in 0 1 2 3 4 5; do
	if [ "$i" = "$u_dflt" ]; then
		[ -f "$prep/results/u00$i.json" ] && fail "the unit left out ran"
	else
		[ -f "$prep/results/u00$i.json" ] || fail "unit $i has no result"
	fi
done
python3 - "$prep/results/u00$u_stall.json" <<'PY' || fail "the killed unit's result"
import json, sys
r = json.load(open(sys.argv[1]))
assert [c["status"] for c in r["configs"].values()] == ["ok"], r["configs"]
assert r["elapsed_s"] > 0 and r["finished_unix_ms"] >= r["started_unix_ms"], r
PY
# A corrupt result: cut short, as a full disk or a torn copy leaves it.
head -c 100 "$prep/results/u00$u_bad.json" >"$work/cut" &&
	cp "$work/cut" "$prep/results/u00$u_bad.json"

# --- the merge of the partial set ------------------------------------------------------
"$tilec" tune --finish "$prep" -o "$work/partial.json" >"$work/finish1.txt" \
	2>"$work/finish1.log" || fail "--finish of a partial set"
python3 - "$work/partial.json" "$prep/manifest.json" "$u_dflt" "$u_wrong" \
	"$u_crash" "$u_hang" "$u_stall" "$u_bad" <<'PY' || fail "the partial record"
import json, re, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
d, w, c, h, s, b = (int(x) for x in sys.argv[3:])
ids = [u["id"] for u in m["units"]]
units = r["farm"]["units"]
assert units["missing"] == {ids[d]: "not run"}, units
assert list(units["failed"]) == [ids[b]] and "corrupt" in units["failed"][ids[b]], units
assert r["partial"]["stage"] == "units", r["partial"]
rerun = set()
for part in r["partial"]["rerun"].split(","):
    lo, _, hi = part.partition("-")
    rerun |= set(range(int(lo), int(hi or lo) + 1))
assert rerun == {d, b}, r["partial"]
def key(v):
    return (v["BLOCK_M"], v["BLOCK_N"])
cfg_of = {c["id"]: c for c in m["configs"]}
unit_of = {key(cfg_of[u["configs"][0]]["values"]): i for i, u in enumerate(m["units"])}
by = {unit_of[key(x["values"])]: x for x in r["configs"]}
assert by[w]["status"] == "wrong" and "max rel err" in by[w]["reason"], by[w]
assert by[c]["status"] == "failed" and re.search(r"crashed: signal (11|6)\b", by[c]["reason"]), by[c]
assert by[h]["status"] == "failed" and "timed out" in by[h]["reason"], by[h]
assert by[d]["status"] == "failed" and "not run" in by[d]["reason"], by[d]
assert by[b]["status"] == "failed" and "corrupt" in by[b]["reason"], by[b]
assert by[s]["status"] == "ok", by[s]
assert all(r["chosen"][k] == v for k, v in by[s]["values"].items()), r["chosen"]
assert r["result"]["wall_s"] > 0 and units["unit_s"] > 0, (r["result"], units)
print("partial merge: 1 of 6 measured (the unit killed and rerun), 5 failed or missing")
PY

# --- rerun through Ray: every unit submitted, only the two missing run ----------------
sum_before=$(sha256sum "$prep/results/u00$u_wrong.json")
ray_run "$prep" --finish "$work/rec.json" >"$work/ray2.log" 2>&1 ||
	{ cat "$work/ray2.log"; fail "tune_ray.py --finish"; }
cat "$work/ray2.log"
grep -q "is done already" "$prep/logs/$u_wrong.log" || fail "a finished unit ran again"
[ "$(sha256sum "$prep/results/u00$u_wrong.json")" = "$sum_before" ] ||
	fail "a finished unit's result changed"
if grep -q "To resume" "$work/ray2.log"; then
	fail "a complete set asks to resume"
fi
python3 - "$work/rec.json" <<'PY' || fail "the record"
import json, sys
r = json.load(open(sys.argv[1]))
assert "partial" not in r, r["partial"]
units = r["farm"]["units"]
assert len(units["done"]) == 6 and not units["missing"] and not units["failed"], units
st = sorted(c["status"] for c in r["configs"])
assert st == ["failed", "failed", "ok", "ok", "ok", "wrong"], st
ok = [c for c in r["configs"] if c["status"] == "ok"]
best = min(ok, key=lambda c: c["final_ms"])
assert all(r["chosen"][k] == v for k, v in best["values"].items()), (r["chosen"], best)
assert r["result"]["chosen_ms"] == best["final_ms"], r["result"]
print("full merge: 3 measured, the fastest chosen; 3 failed, none chosen")
PY

# --- one node with 8 GPUs, checked dry: Ray's resources for the units ---------------
# A local cluster that says it has 8 GPUs (none is opened): a CUDA search
# as 8 units, each task num_gpus=1; the dry run's tasks wait until 8 run
# at once, and each says which GPU Ray gave it.
"$tilec" tune samples/gemm.c -t cuda --arch sm_90a \
	--shape M=8192,N=8192,K=8192 --check-shape M=200,N=136,K=72 \
	--choices BLOCK_M=64,128 --choices BLOCK_N=64,128 --choices STAGES=2,3 \
	-D BLOCK_K=32 -D THREADS=128 --unit-size 1 --prepare "$work/gpu" \
	>"$work/gpu-prep.log" 2>&1 || fail "--prepare for cuda"
ray_run "$work/gpu" --num-cpus 8 --num-gpus 8 --dry-run >"$work/ray3.log" 2>&1 ||
	{ cat "$work/ray3.log"; fail "the dry run on 8 GPUs"; }
grep "^tune_ray:" "$work/ray3.log"
grep -q "num_gpus=1," "$work/ray3.log" &&
	grep -q "dry run: 8 units placed; 8 at once as the resources allow; GPUs used: 0,1,2,3,4,5,6,7$" \
		"$work/ray3.log" || fail "not 8 units at once, one GPU each"
[ "$(grep -c "placed on .*, GPUs [0-7], " "$work/ray3.log")" -eq 8 ] ||
	fail "a unit without exactly one GPU"
[ -z "$(ls "$work/gpu/results" 2>/dev/null)" ] || fail "the dry run ran a unit"
echo PASS
