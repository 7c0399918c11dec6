#!/usr/bin/env bash
# A search run as Slurm array tasks, end to end (docs/tuning.md, "Work
# units"): a single-node Slurm on localhost (munged, slurmctld and slurmd
# started here with their own slurm.conf in a temporary directory, and
# stopped on every way out), a CPU search prepared as units, submitted
# with sbatch, and merged with `tilec tune --finish`.
#
#   tune_slurm.sh TILEC SRCROOT [gpus]
#
# With `gpus`, the node instead says it has 8 GPUs (generic resources
# over stand-in device files) and 16 CPUs, and the test checks the
# configuration for one node with 8 GPUs (docs/tuning.md): a CUDA search
# prepared as 8 units (no GPU needed to prepare), `sbatch --test-only`
# of its script, then the array run with a stand-in for tilec that
# records its GPU and waits until all 8 units run at once: each task had
# one GPU of its own (`--gpus-per-task=1`), the 8 together all of them.
#
# What it checks, none of it by timing order:
#   - the units' faults ($TILEC_TUNE_TEST_FAULT): a wrong result (the
#     reference data changed), a crash and a hang (the per-configuration
#     timeout) are failed configurations with their reasons, never chosen;
#   - a unit stopped mid-run (its task cancelled while it runs) leaves no
#     result, only its marker; another unit's result is corrupted by hand;
#   - the merge of that partial set names both, writes a record from the
#     rest marked partial, and prints the array indices to rerun;
#   - rerun through sbatch, the two units finish; resubmitting the whole
#     array rewrites none of the results already there (idempotent);
#   - the merge of the whole set chooses the fastest passing
#     configuration, by the record's own numbers.
# Exit 77 (skipped) only when the Slurm or munge programs are absent
# (tools/setup.sh installs slurm-wlm and munge).
set -u
tilec=$(realpath "$1") root=$2 mode=${3:-}
for p in munged slurmctld slurmd sbatch squeue scancel sinfo; do
	if ! command -v "$p" >/dev/null 2>&1 &&
		! [ -x "/usr/sbin/$p" ]; then
		echo "SKIP: $p is not installed (Debian: slurm-wlm, munge)"
		exit 77
	fi
done
PATH=$PATH:/usr/sbin
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-slurm.XXXXXX")
chmod 700 "$work"
pids=()
stop() {
	# Every daemon started here, by its pid; then the directory.
	if [ -f "$work/slurm.conf" ]; then
		SLURM_CONF=$work/slurm.conf scancel --quiet --user="$(id -un)" \
			>/dev/null 2>&1 || true
	fi
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	done
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

# Wait until a command succeeds, at most $1 seconds.
wait_for() {
	local limit=$1
	shift
	for _ in $(seq $((limit * 5))); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# --- munge and Slurm on localhost ------------------------------------------
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged --foreground --force --key-file="$work/munge.key" \
	--socket="$work/munge.sock" --pid-file="$work/munged.pid" \
	--log-file="$work/munged.log" --seed-file="$work/munged.seed" \
	>"$work/munged.out.log" 2>&1 &
pids+=($!)
wait_for 20 test -S "$work/munge.sock" || fail "munged did not start"

host=$(hostname -s)
user=$(id -un)
# Two ports nobody listens on.
read -r p1 p2 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))')
mkdir -p "$work/state" "$work/spool"
node="CPUs=2"
if [ "$mode" = gpus ]; then
	# Eight stand-ins for /dev/nvidia0..7 (character devices, as Slurm
	# wants, with /dev/null's numbers): Slurm hands them out by index
	# and sets CUDA_VISIBLE_DEVICES; nothing opens them.
	mkdir -p "$work/dev"
	for g in 0 1 2 3 4 5 6 7; do
		mknod "$work/dev/nvidia$g" c 1 3 2>/dev/null || {
			echo "SKIP: cannot make stand-in devices (mknod needs root)"
			exit 77
		}
	done
	echo "NodeName=$host Name=gpu File=$work/dev/nvidia[0-7]" >"$work/gres.conf"
	node="CPUs=16 Gres=gpu:8"
fi
cat >"$work/slurm.conf" <<EOF
ClusterName=tilectest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
SlurmctldPort=$p1
SlurmdPort=$p2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
$([ "$mode" = gpus ] && echo GresTypes=gpu)
NodeName=$host NodeAddr=127.0.0.1 $node RealMemory=1000 State=UNKNOWN
PartitionName=tilec Nodes=$host Default=YES MaxTime=60 State=UP
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/slurmd.out.log" 2>&1 &
pids+=($!)
idle() { [ "$(sinfo -h -n "$host" -o %T 2>/dev/null)" = idle ]; }
wait_for 60 idle || fail "the Slurm node did not come up"
echo "slurm up: node $host, ports $p1 $p2"

if [ "$mode" = gpus ]; then
	# --- one node with 8 GPUs: the units' script, dry and with a stand-in ---
	export TILEC_CACHE_DIR=$work/cache
	prep=$work/prep
	"$tilec" tune samples/gemm.c -t cuda --arch sm_90a \
		--shape M=8192,N=8192,K=8192 --check-shape M=200,N=136,K=72 \
		--choices BLOCK_M=64,128 --choices BLOCK_N=64,128 --choices STAGES=2,3 \
		-D BLOCK_K=32 -D THREADS=128 --unit-size 1 --prepare "$prep" \
		>"$work/prep.log" 2>&1 || fail "--prepare for cuda"
	grep -q "^#SBATCH --array=0-7$" "$prep/tune.sbatch" || fail "not 8 array tasks"
	grep -q "^#SBATCH --gpus-per-task=1$" "$prep/tune.sbatch" ||
		fail "no --gpus-per-task=1"
	sbatch --test-only "$prep/tune.sbatch" >"$work/test-only.log" 2>&1 &&
		grep -q "to start at" "$work/test-only.log" ||
		fail "sbatch --test-only: $(cat "$work/test-only.log")"
	cat "$work/test-only.log"
	# The stand-in: where its task is, then a barrier on all 8 (each
	# waits until every one has started, so none ends unless all 8 ran
	# at once).
	mkdir -p "$work/seen"
	cat >"$work/fake-tilec" <<STAND_IN
#!/bin/bash
echo "\$SLURM_ARRAY_TASK_ID \${CUDA_VISIBLE_DEVICES:-none}" >"$work/seen/\$SLURM_ARRAY_TASK_ID"
for _ in \$(seq 600); do
	[ \$(ls "$work/seen" | wc -l) -ge 8 ] && exit 0
	sleep 0.1
done
echo "not 8 at once" >&2
exit 1
STAND_IN
	chmod +x "$work/fake-tilec"
	job=$(TILEC=$work/fake-tilec sbatch --parsable "$prep/tune.sbatch") ||
		fail "sbatch"
	job=${job%%;*}
	wait_for 120 eval '[ -z "$(squeue -h -j "$job" 2>/dev/null)" ]' ||
		{ squeue; fail "the 8 GPU tasks did not finish"; }
	python3 - "$work/seen" "$prep/logs" <<'PY' || fail "the 8 GPU tasks"
import os, sys
seen = dict(open(os.path.join(sys.argv[1], f)).read().split()
            for f in os.listdir(sys.argv[1]))
assert sorted(seen) == [str(i) for i in range(8)], seen
assert sorted(seen.values()) == [str(i) for i in range(8)], seen  # one each
for i in range(8):  # every stand-in passed the barrier: 8 ran at once
    log = os.path.join(sys.argv[2], f"{i}.log")
    text = open(log).read() if os.path.exists(log) else ""
    assert "not 8 at once" not in text, (i, text)
print("8 units at once, GPUs", ",".join(seen[str(i)] for i in range(8)))
PY
	echo PASS
	exit 0
fi

# --- the search, prepared as units --------------------------------------------
# Six configurations with distinct code, one unit each.
export TILEC_CACHE_DIR=$work/cache
prep=$work/prep
"$tilec" tune samples/gemm.c --shape M=96,N=80,K=48 \
	--check-shape M=37,N=50,K=21 --choices BLOCK_M=64,128 \
	--choices BLOCK_N=64,128,256 -D BLOCK_K=32 -D STAGES=3 -D THREADS=128 \
	--repeat 3 --warmup 1 --confirm 1 --unit-size 1 --cpus-per-unit 1 \
	--config-timeout 20 --prepare "$prep" >"$work/prep.txt" 2>&1 ||
	{ cat "$work/prep.txt"; fail "--prepare"; }
grep -q "#SBATCH --array=0-5" "$prep/tune.sbatch" || fail "not 6 array tasks"
grep -q "^#SBATCH --cpus-per-task=1" "$prep/tune.sbatch" || fail "no --cpus-per-task"
if grep -q "gpus-per-task" "$prep/tune.sbatch"; then
	fail "a CPU search asks for GPUs"
fi
# Which unit holds which configuration, from the manifest.
read -r u_wrong u_crash u_hang u_stall u_bad < <(python3 - "$prep" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
units = m["units"]
assert len(units) == 6 and all(len(u["configs"]) == 1 for u in units), units
# The default's unit stays clean, so the record always has a default.
dflt = next(c["id"] for c in m["configs"] if c.get("default"))
others = [i for i, u in enumerate(units) if u["configs"][0] != dflt]
print(*others[:5])
PY
)
cid() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["units"][int(sys.argv[2])]["configs"][0])' "$prep/manifest.json" "$1"; }
faults="$(cid "$u_wrong"):wrong,$(cid "$u_crash"):crash,$(cid "$u_hang"):hang,$(cid "$u_stall"):stall"
echo "faults: $faults"

# --- first submission: faults, a unit stopped mid-run ---------------------------
job=$(TILEC_TUNE_TEST_FAULT=$faults sbatch --parsable "$prep/tune.sbatch") ||
	fail "sbatch"
job=${job%%;*}
# The stalled unit is mid-run once its marker is there, and stays so
# until it is cancelled; every other unit finishes.
others_done() {
	for i in 0 1 2 3 4 5; do
		[ "$i" = "$u_stall" ] && continue
		[ -f "$prep/results/u00$i.json" ] || return 1
	done
	[ -f "$prep/results/u00$u_stall.started" ]
}
array_gone() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; }
wait_for 240 eval 'others_done || array_gone' || { squeue; fail "the units did not run"; }
others_done || fail "the array ended without the units' results"
[ -f "$prep/results/u00$u_stall.json" ] && fail "the stalled unit wrote a result"
scancel "${job}_$u_stall" || fail "scancel"
gone() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; }
wait_for 60 gone || fail "the cancelled task is still there"
[ -f "$prep/results/u00$u_stall.json" ] && fail "the cancelled unit wrote a result"
# A corrupt result: cut short, as a full disk or a torn copy leaves it.
head -c 100 "$prep/results/u00$u_bad.json" >"$work/cut" &&
	cp "$work/cut" "$prep/results/u00$u_bad.json"

# --- the merge of the partial set ------------------------------------------------
st=0
"$tilec" tune --finish "$prep" -o "$work/partial.json" >"$work/finish1.txt" \
	2>"$work/finish1.err" || st=$?
[ "$st" -eq 0 ] || { cat "$work/finish1.err"; fail "--finish of a partial set: status $st"; }
cat "$work/finish1.err"
grep -q "sbatch --array=.* $prep/tune.sbatch" "$work/finish1.err" ||
	fail "--finish did not say how to resume"
python3 - "$work/partial.json" "$prep/manifest.json" "$u_wrong" "$u_crash" \
	"$u_hang" "$u_stall" "$u_bad" <<'PY' || fail "the partial record"
import json, re, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
w, c, h, s, b = (int(x) for x in sys.argv[3:])
ids = [u["id"] for u in m["units"]]
units = r["farm"]["units"]
assert units["total"] == 6, units
assert ids[s] in units["missing"] and "started on" in units["missing"][ids[s]], units
assert ids[b] in units["failed"] and "corrupt" in units["failed"][ids[b]], units
assert sorted(units["done"]) == sorted(set(ids) - {ids[s], ids[b]}), units
rerun = set()
for part in units["rerun"].split(","):
    lo, _, hi = part.partition("-")
    rerun |= set(range(int(lo), int(hi or lo) + 1))
assert rerun == {s, b}, units["rerun"]
assert r["partial"]["stage"] == "units", r.get("partial")
def key(v):
    return (v["BLOCK_M"], v["BLOCK_N"])
cfg_of = {c["id"]: c for c in m["configs"]}
unit_of = {key(cfg_of[u["configs"][0]]["values"]): i for i, u in enumerate(m["units"])}
by = {unit_of[key(x["values"])]: x for x in r["configs"]}
assert by[w]["status"] == "wrong" and "max rel err" in by[w]["reason"], by[w]
# A segfault; under AddressSanitizer (abort_on_error) the same crash is
# reported as an abort, signal 6.
assert by[c]["status"] == "failed" and re.search(r"crashed: signal (11|6)\b", by[c]["reason"]), by[c]
assert by[h]["status"] == "failed" and "timed out" in by[h]["reason"], by[h]
assert by[s]["status"] == "failed" and "wrote no result" in by[s]["reason"], by[s]
assert by[b]["status"] == "failed" and "corrupt" in by[b]["reason"], by[b]
ok = [x for x in r["configs"] if x["status"] == "ok"]
assert len(ok) == 1, [x["status"] for x in r["configs"]]
assert all(r["chosen"][k] == v for k, v in ok[0]["values"].items()), (r["chosen"], ok)
print("partial merge: 1 of 6 measured, the other 5 failed or missing with reasons")
PY
# --config takes it with a warning.
"$tilec" samples/gemm.c --config "$work/partial.json" -o "$work/g.c" \
	2>"$work/config.err" || fail "--config of the partial record"
grep -q 'key "partial"' "$work/config.err" || fail "no warning for the partial record"

# --- rerun what is missing, then everything (idempotent) ----------------------------
sum_before=$(sha256sum "$prep/results/u00$u_wrong.json")
rerun=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["partial"]["rerun"])' "$work/partial.json")
job2=$(sbatch --parsable --array="$rerun" "$prep/tune.sbatch") || fail "sbatch --array=$rerun"
job2=${job2%%;*}
wait_for 240 eval '[ -z "$(squeue -h -j "$job2" 2>/dev/null)" ]' ||
	{ squeue; fail "the rerun did not finish"; }
for i in 0 1 2 3 4 5; do
	[ -f "$prep/results/u00$i.json" ] || fail "the rerun left unit $i without a result"
done
job3=$(sbatch --parsable "$prep/tune.sbatch") || fail "sbatch of the whole array"
job3=${job3%%;*}
wait_for 120 eval '[ -z "$(squeue -h -j "$job3" 2>/dev/null)" ]' ||
	fail "the whole array did not finish"
grep -l "is done already" "$prep"/logs/*.log >/dev/null ||
	fail "a resubmitted unit ran again"
[ "$(sha256sum "$prep/results/u00$u_wrong.json")" = "$sum_before" ] ||
	fail "a finished unit's result changed on resubmission"

# --- the merge of the whole set ------------------------------------------------------
"$tilec" tune --finish "$prep" -o "$work/rec.json" >"$work/finish2.txt" \
	2>"$work/finish2.err" || { cat "$work/finish2.err"; fail "--finish"; }
if grep -q "resume" "$work/finish2.err"; then
	fail "a complete set asks to resume"
fi
python3 - "$work/rec.json" <<'PY' || fail "the record"
import json, sys
r = json.load(open(sys.argv[1]))
assert "partial" not in r, r["partial"]
units = r["farm"]["units"]
assert len(units["done"]) == 6 and not units["missing"] and not units["failed"], units
st = sorted(c["status"] for c in r["configs"])
# The faults of the first submission stay: wrong, crash, hang.
assert st == ["failed", "failed", "ok", "ok", "ok", "wrong"], st
ok = [c for c in r["configs"] if c["status"] == "ok"]
best = min(ok, key=lambda c: c["final_ms"])
assert all(r["chosen"][k] == v for k, v in best["values"].items()), (r["chosen"], best)
assert r["result"]["chosen_ms"] == best["final_ms"], r["result"]
print("full merge: 3 measured, the fastest chosen; 3 failed, none chosen")
PY
echo PASS
