#!/usr/bin/env bash
# `tilec tune` and tuning records (docs/tuning.md).
#
#   tune.sh TILEC SRCROOT CASE
#
# CASE  search    a small search over samples/gemm.c on the CPU: the record
#                 is valid JSON with sorted keys, its configurations in
#                 the documented order, the choice the fastest finalist
#                 and no slower than the default, and `tilec run
#                 --config`, `tilec FILE --config` and `tilec export
#                 --config` bind its values.  Nothing here depends on
#                 which configuration is faster: the machine may be busy
#       noise     timings made noisy on purpose (TILEC_TUNE_TEST_NOISE):
#                 the search warns, takes more rounds, and says so in
#                 the record
#       records   malformed and mismatched records: errors naming the
#                 file, line and key; a record for another target or
#                 kernel refused (--check: status 2), one for another
#                 source warned about
#       interrupt a search stopped midway leaves the old record intact,
#                 no temporary file, and RECORD.partial with every timing
#                 it had reported; --config takes that with a warning
#       destination  a record that cannot be written is an error before
#                 the search starts, not after it
#       farm      --prepare for CUDA (no GPU needed), tools/tune_farm.py
#                 --dry-run, --finish: the record and the pruned ones
#       shipped   every record in samples/tuned/ binds to its program for
#                 its target and arch without a warning: none is stale
#                 (its source_sha256 is the program's) and none names a
#                 tunable or value the program lacks
#       range     --range through a search here and through --prepare:
#                 the ids of tests/run/embedding.c in range at the check
#                 shape (the reference runs) and, for the farm, at the
#                 tuning shape; the records keep the ranges
#       units     --prepare for the CPU as work units: --unit runs one
#                 (by --index, SLURM_ARRAY_TASK_ID or
#                 JOB_COMPLETION_INDEX), a finished unit is not run again, --finish
#                 merges; bad manifests (a unit naming no configuration,
#                 reference data outside the directory) are located
#                 errors; a result with a bad timing, or reference data
#                 that is not what its name says, is a failure with its
#                 reason; a program name that is no shell word stays
#                 out of the Slurm script (tune_slurm.sh runs units
#                 through Slurm)
#       check     --check RECORD: exit 0 while the choice wins by
#                 --margin, 1 when it does not, with margins no timing can
#                 cross; a choice that is the default always passes
#       dispatch  `tilec run` with several --config records picks the one
#                 whose shape bucket holds --shape, by export's rule
#                 (record.c): smallest bucket first whatever the order on
#                 the command line, the largest past every bucket; the
#                 tunables bound are that record's; two records of one
#                 bucket and a bucket naming no scalar of the shape are
#                 located errors
#       bucket    the shape bucket holds the kernel's integer scalars
#                 alone (a float's whole value stays out), each at
#                 least 1; export and run take two such records
#       one-choice  --choices with one value other than the default: two
#                 configurations, each named by its value in the output
#                 and the record
#       failures  configurations outside --tol dropped as wrong with
#                 their errors, a compiler that rejects everything makes
#                 every one a compile error (the harness's failure kinds),
#                 a bad --seed or --tol stops before any work
set -u
tilec=$(realpath "$1") root=$2 case=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-tune.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 2

fail() { echo "FAIL: $*" >&2; exit 1; }

# A quick search: 4 configurations with distinct code, small shapes.
search() {
	"$tilec" tune samples/gemm.c --shape M=192,N=160,K=96 \
		--check-shape M=100,N=130,K=70 --choices BLOCK_M=64,128 \
		--choices BLOCK_N=64,128 -D BLOCK_K=32 -D STAGES=3 -D THREADS=128 \
		--repeat 5 --warmup 1 --confirm 1 "$@"
}

# Every object's keys in sorted order, and the fields a record has.
check_record() {
	python3 - "$1" <<'PY' || fail "record $1"
import json, sys
def hook(pairs):
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys), f"keys not sorted: {keys}"
    return dict(pairs)
r = json.load(open(sys.argv[1]), object_pairs_hook=hook)
for k in ("format", "kernel", "source", "source_sha256", "shape", "shape_bucket",
          "target", "arch", "device", "compilers", "tilec_version",
          "tilec_revision", "spdx_license", "chosen",
          "default", "configs", "measure", "result"):
    assert k in r, f"no {k}"
assert r["format"] == "tilec-tune-record/1"
ok = [c for c in r["configs"] if c["status"] == "ok"]
assert ok, "nothing measured"
default = [c for c in r["configs"] if c.get("default")]
assert len(default) == 1, "one default"
# The order the record promises, from its own numbers: the finalists
# (timed again) fastest first, then the others fastest first.  Which
# configuration is fastest depends on the machine, and is not checked.
fin = [c for c in ok if c["timings"] > 1]
rest = [c for c in ok if c["timings"] == 1]
assert ok == fin + rest, "finalists first"
for group in (fin, rest):
    times = [c["final_ms"] for c in group]
    assert times == sorted(times), f"not sorted by final_ms: {times}"
best = (fin or rest)[0]
chosen = {k: v for k, v in r["chosen"].items() if k in best["values"]}
assert chosen == best["values"], (chosen, best["values"])
assert r["result"]["chosen_ms"] == best["final_ms"], r["result"]
if default[0]["status"] == "ok":
    # The default is a finalist, so this holds however noisy the timings.
    assert default[0] in fin or len(ok) == 1, "the default is a finalist"
    assert r["result"]["chosen_ms"] <= r["result"]["default_ms"], r["result"]
m = r["measure"]
assert isinstance(m["noisy"], bool) and m["extra_rounds"] >= 0, m
for c in ok:
    if c["timings"] > 1:
        assert c["spread"] >= 1, c
    if c.get("noisy"):
        assert m["noisy"], "a noisy configuration, but the record is not"
print("record ok:", r["chosen"], r["result"], "noisy" if m["noisy"] else "quiet")
PY
}

case $case in
search)
	search -o "$work/rec.json" || fail "tilec tune"
	check_record "$work/rec.json"
	values=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["chosen"]; print(" ".join(f"{k}={v}" for k, v in c.items()))' "$work/rec.json")
	echo "chosen: $values"
	# tilec run binds them (its header line lists the tunables).
	"$tilec" run samples/gemm.c --config "$work/rec.json" \
		--shape M=65,N=33,K=17 >"$work/run.txt" || fail "tilec run --config"
	for v in $values; do
		grep -q "$v" "$work/run.txt" || fail "tilec run --config did not bind $v"
	done
	# -D wins over the record.
	"$tilec" run samples/gemm.c --config "$work/rec.json" -D BLOCK_K=64 \
		--shape M=65,N=33,K=17 | grep -q "BLOCK_K=64" || fail "-D does not win"
	# The translator and export too.
	"$tilec" samples/gemm.c --config "$work/rec.json" | grep '^// Tunables:' >"$work/src.txt"
	for v in $values; do
		grep -q "$v" "$work/src.txt" || fail "tilec --config did not bind $v"
	done
	"$tilec" export samples/gemm.c --config "$work/rec.json" -o "$work/x" >/dev/null ||
		fail "tilec export --config"
	for v in $values; do
		grep -q "$v" "$work/x/gemm.h" || fail "tilec export --config did not bind $v"
	done
	# The replay: the record's choice against the default, timed again.
	"$tilec" tune samples/gemm.c --config "$work/rec.json" --shape M=192,N=160,K=96 \
		--check-shape M=100,N=130,K=70 --repeat 3 --warmup 1 --confirm 1 \
		>"$work/replay.txt" || fail "tilec tune --config (replay)"
	grep -q "replayed here" "$work/replay.txt" || fail "no replay line"
	cat "$work/replay.txt"
	;;
noise)
	# Every third timing 50 times slower, as if the machine were busy
	# then: among the finalists' timings at least one is.
	TILEC_TUNE_TEST_NOISE=3 search -o "$work/rec.json" 2>"$work/err.txt" ||
		{ cat "$work/err.txt"; fail "tilec tune"; }
	cat "$work/err.txt"
	check_record "$work/rec.json"
	grep -q "tilec tune: the finalists' timings are noisy; 2 more rounds" "$work/err.txt" ||
		fail "no extra rounds"
	grep -q "tilec tune: warning: the timings are noisy: .* timed from .* ms (.*x) over [0-9]* timings" \
		"$work/err.txt" || fail "no warning"
	python3 - "$work/rec.json" <<'PY' || fail "the record does not say it was noisy"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["measure"]
assert m["noisy"] is True and m["extra_rounds"] == 2 and m["confirm_rounds"] == 1, m
fin = [c for c in r["configs"] if c.get("timings", 0) > 1]
# Every finalist timed in the first round, the confirmation and the
# two extra rounds.
assert fin and all(c["timings"] == 4 for c in fin), fin
assert any(c.get("noisy") and c["spread"] > 10 for c in fin), fin
PY
	;;
records)
	search -o "$work/rec.json" 2>/dev/null || fail "tilec tune"
	expect() { # expect STATUS PATTERN ARGS...: stderr must match
		local want=$1 pat=$2
		shift 2
		"$tilec" "$@" >/dev/null 2>"$work/err.txt"
		local got=$?
		[ "$got" = "$want" ] || { cat "$work/err.txt"; fail "status $got, not $want: $*"; }
		grep -qE "$pat" "$work/err.txt" || { cat "$work/err.txt"; fail "no '$pat' for: $*"; }
		head -n 2 "$work/err.txt"
	}
	sed 's/"BLOCK_N": \([0-9]*\),/"BLOCK_N": \1,,/' "$work/rec.json" >"$work/syntax.json"
	expect 1 "syntax.json:[0-9]+:[0-9]+: error: malformed JSON" \
		samples/gemm.c --config "$work/syntax.json"
	python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
r = json.load(open(f"{w}/rec.json"))
r["chosen"]["BLOCK_M"] = "big"
json.dump(r, open(f"{w}/type.json", "w"), indent=2, sort_keys=True)
r = json.load(open(f"{w}/rec.json"))
del r["chosen"]
json.dump(r, open(f"{w}/missing.json", "w"), indent=2, sort_keys=True)
r = json.load(open(f"{w}/rec.json"))
r["chosen"]["NO_SUCH"] = 4
json.dump(r, open(f"{w}/unknown.json", "w"), indent=2, sort_keys=True)
r = json.load(open(f"{w}/rec.json"))
r["chosen"]["BLOCK_M"] = 9223372036854775807
json.dump(r, open(f"{w}/huge.json", "w"), indent=2, sort_keys=True)
PY
	# A value past an int passed every check and printed an enum cc
	# rejects; from a record or -D it is an error where it was given.
	line=$(grep -n '"BLOCK_M": 9223372036854775807' "$work/huge.json" | cut -d: -f1)
	expect 1 "huge.json:$line:[0-9]+: error: -D BLOCK_M=9223372036854775807: a tunable is an int" \
		samples/gemm.c --config "$work/huge.json"
	expect 1 "<command line>: error: -D BLOCK_M=2147483648: a tunable is an int" \
		samples/gemm.c -D BLOCK_M=2147483648
	expect 1 "<command line>: error: -D BLOCK_M=-2147483649: a tunable is an int" \
		export samples/gemm.c -t cuda -o "$work/exp" -D BLOCK_M=-2147483649
	line=$(grep -n '"BLOCK_M": "big"' "$work/type.json" | cut -d: -f1)
	expect 1 "type.json:$line:[0-9]+: error: key \"chosen.BLOCK_M\": expected an integer" \
		samples/gemm.c --config "$work/type.json"
	expect 1 "missing.json: error: key \"chosen\" is missing" \
		samples/gemm.c --config "$work/missing.json"
	line=$(grep -n '"NO_SUCH"' "$work/unknown.json" | cut -d: -f1)
	expect 1 "unknown.json:$line:[0-9]+: error: .*NO_SUCH: no tunable" \
		samples/gemm.c --config "$work/unknown.json"
	expect 1 "error: key \"target\": the record was tuned for openmp, not cuda" \
		samples/gemm.c -t cuda --config "$work/rec.json"
	expect 2 "cannot use the tuning record" \
		run samples/gemm.c -t openmp --config "$work/missing.json" --shape M=1,N=1,K=1
	{ cat samples/gemm.c; echo "/* edited */"; } >"$work/gemm.c"
	expect 0 "warning: key \"source_sha256\": the record was tuned on another version" \
		"$work/gemm.c" --config "$work/rec.json"
	expect 1 "cannot read the tuning record" samples/gemm.c --config "$work/none.json"
	# A record for another kernel: refused by every command that takes
	# one, as tilec export refuses it among several.
	sed 's/"kernel": "gemm"/"kernel": "other"/' "$work/rec.json" >"$work/other.json"
	grep -q '"kernel": "other"' "$work/other.json" || fail "no kernel key to edit"
	line=$(grep -n '"kernel": "other"' "$work/other.json" | cut -d: -f1)
	pat="other.json:$line:[0-9]+: error: key \"kernel\": the record is for other, not gemm"
	expect 1 "$pat" samples/gemm.c --kernel gemm --config "$work/other.json"
	expect 1 "$pat" export samples/gemm.c --kernel gemm -o "$work/exp" \
		--config "$work/other.json"
	expect 2 "$pat" run samples/gemm.c --kernel gemm --config "$work/other.json" \
		--shape M=1,N=1,K=1
	expect 2 "$pat" tune samples/gemm.c --kernel gemm --config "$work/other.json" \
		--shape M=64,N=64,K=64 --repeat 1 --warmup 0 --confirm 0
	# --check: 2, a record that cannot be used, not 1 (stale).
	expect 2 "$pat" tune samples/gemm.c --kernel gemm --check "$work/other.json" \
		--shape M=64,N=64,K=64 --repeat 1 --warmup 0 --confirm 0
	;;
interrupt)
	echo '{"an": "old record"}' >"$work/rec.json"
	cp "$work/rec.json" "$work/before.json"
	# Three configurations, each timed for a second or more, then timed
	# again: stopped once it has reported its first timing.  (A background job of
	# a script ignores SIGINT, so it is stopped with SIGTERM, as a
	# killed job would be.)
	"$tilec" tune samples/gemm_f32.c --shape M=1024,N=1024,K=1024 \
		--check-shape M=65,N=33,K=17 --repeat 50 --choices BLOCK_M=64,128,256 \
		-D BLOCK_N=64 -D BLOCK_K=32 -D STAGES=2 \
		-o "$work/rec.json" 2>"$work/err.txt" &
	pid=$!
	for _ in $(seq 500); do
		[ "$(grep -c ' ms (min ' "$work/err.txt")" -ge 1 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	kill -TERM $pid || fail "the search ended before it was stopped"
	wait $pid
	echo "tune stopped with status $?"
	cat "$work/err.txt"
	timed=$(grep -c ' ms (min ' "$work/err.txt")
	[ "$timed" -ge 1 ] || fail "the search reported no timing before it was stopped"
	cmp "$work/rec.json" "$work/before.json" || fail "the old record changed"
	if ls "$work"/rec.json.tmp-* "$work"/rec.json.partial.tmp-* 2>/dev/null; then
		fail "a temporary file was left"
	fi
	# The partial record has at least every timing reported.
	python3 - "$work/rec.json.partial" "$timed" <<'PY' || fail "the partial record"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["partial"]
ok = [c for c in r["configs"] if c["status"] == "ok"]
assert p["timed"] == len(ok) >= int(sys.argv[2]), (p, len(ok))
assert all(c["final_ms"] > 0 for c in ok), ok
assert p["stage"] in ("timing", "confirming") and p["to_time"] == 3, p
assert set(r["chosen"]) >= set(ok[0]["values"]), r["chosen"]
print("partial record:", p)
PY
	"$tilec" run samples/gemm_f32.c --config "$work/rec.json.partial" \
		--shape M=65,N=33,K=17 >/dev/null 2>"$work/warn.txt" ||
		fail "tilec run --config with the partial record"
	grep -q 'warning: key "partial": the record is what an interrupted search had measured' \
		"$work/warn.txt" || { cat "$work/warn.txt"; fail "no warning"; }
	;;
destination)
	# The search would take minutes: the error must come before it.
	"$tilec" tune samples/gemm_f32.c --shape M=1024,N=1024,K=1024 \
		--check-shape M=65,N=33,K=17 --repeat 200 \
		-o "$work/no/such/dir/rec.json" 2>"$work/err.txt"
	st=$?
	cat "$work/err.txt"
	[ $st = 2 ] || fail "status $st, not 2"
	grep -q "cannot write the record $work/no/such/dir/rec.json: No such file or directory; nothing searched" \
		"$work/err.txt" || fail "no message naming the record"
	grep -q "compiling and checking" "$work/err.txt" && fail "it searched first"
	mkdir "$work/rec.json"
	"$tilec" tune samples/gemm_f32.c --shape M=64,N=64,K=64 -o "$work/rec.json" \
		2>"$work/err.txt"
	[ $? = 2 ] || fail "a directory as the record"
	grep -q "Is a directory; nothing searched" "$work/err.txt" ||
		{ cat "$work/err.txt"; fail "no message for a directory"; }
	;;
shipped)
	n=0
	for rec in samples/tuned/*.json; do
		read -r src target arch < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["source"], r["target"], r["arch"])' "$rec") || fail "$rec: unreadable"
		"$tilec" "$src" -t "$target" --arch "$arch" --config "$rec" \
			-o "$work/out.src" 2>"$work/err.txt" ||
			{ cat "$work/err.txt"; fail "$rec does not bind to $src"; }
		grep -q "warning:" "$work/err.txt" &&
			{ cat "$work/err.txt"; fail "$rec: a warning binding it to $src"; }
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "no records in samples/tuned/"
	echo "$n records bind without a warning"
	;;
range)
	emb=tests/run/embedding.c
	"$tilec" tune $emb --shape N=300,V=5000,D=256 --check-shape N=37,V=50,D=100 \
		--range ids=0:V-1 --choices BLOCK_N=2,4 -D BLOCK_D=64 --repeat 3 \
		--warmup 1 --confirm 1 -o "$work/rec.json" 2>"$work/err.txt" ||
		{ cat "$work/err.txt"; fail "tilec tune --range"; }
	grep -q '"ids=0:V-1"' "$work/rec.json" || fail "the record has no ranges"
	# Without the range the reference stops at the check shape.
	"$tilec" tune $emb -t cuda --arch sm_90a --shape N=4096,V=50000,D=1024 \
		--check-shape N=37,V=50,D=100 --prepare "$work/bad" >/dev/null 2>&1 &&
		fail "--prepare without --range passed"
	"$tilec" tune $emb -t cuda --arch sm_90a --shape N=4096,V=50000,D=1024 \
		--check-shape N=37,V=50,D=100 --range ids=0:V-1 --prepare "$work/prep" \
		>"$work/prep.txt" 2>&1 || { cat "$work/prep.txt"; fail "--prepare --range"; }
	python3 - "$work/prep" <<'PY' || fail "the manifest's ranges"
import json, os, struct, sys
d = sys.argv[1]
m = json.load(open(f"{d}/manifest.json"))
assert m["ranges"] == ["ids=0:V-1"], m["ranges"]
# The farm times at N=4096, V=50000: ids in 0 .. 49999, as integers.
assert m["value_ranges"] == {"ids": [0, 49999]}, m["value_ranges"]
for c in m["configs"]:
    raw = open(os.path.join(d, c["check"]["inputs"]["ids"]), "rb").read()
    ids = struct.unpack(f"{len(raw) // 4}i", raw)
    assert len(ids) == 37 and 0 <= min(ids) and max(ids) <= 49, (min(ids), max(ids))
print(len(m["configs"]), "configurations, ids in range")
PY
	python3 tools/tune_farm.py "$work/prep" --dry-run >/dev/null || fail "tune_farm.py --dry-run"
	"$tilec" tune --finish "$work/prep" -o "$work/farm.json" >/dev/null || fail "--finish"
	grep -q '"ids=0:V-1"' "$work/farm.json" || fail "the farm's record has no ranges"
	;;
farm)
	"$tilec" tune samples/gemm.c -t cuda --arch sm_90a \
		--shape M=4096,N=4096,K=4096 --check-shape M=200,N=130,K=70 \
		--choices BLOCK_M=128,256 --choices BLOCK_N=128,256 -D BLOCK_K=32 \
		-D THREADS=128 --prepare "$work/prep" >"$work/prep.txt" 2>&1 ||
		{ cat "$work/prep.txt"; fail "--prepare"; }
	cat "$work/prep.txt"
	python3 - "$work/prep" <<'PY' || fail "the manifest"
import json, os, sys
d = sys.argv[1]
m = json.load(open(f"{d}/manifest.json"))
assert m["format"] == "tilec-tune-prepared/1"
assert m["roles"] == {"A": "in", "B": "in", "C": "out"}, m["roles"]
pruned = [e for e in m["excluded"] if e["status"] == "pruned"]
assert any("registers" in e["reason"] for e in pruned), m["excluded"]
for c in m["configs"]:
    assert os.path.exists(os.path.join(d, c["source"]))
    for f in list(c["check"]["inputs"].values()) + list(c["check"]["expected"].values()):
        assert os.path.getsize(os.path.join(d, f)) > 0
    assert c["launch"]["kernel"] == "gemm"
print(len(m["configs"]), "configurations,", len(pruned), "pruned")
PY
	python3 tools/tune_farm.py "$work/prep:matmul" --dry-run || fail "tune_farm.py --dry-run"
	"$tilec" tune --finish "$work/prep" -o "$work/rec.json" || fail "--finish"
	check_record "$work/rec.json"
	grep -q '"dry_run": true' "$work/rec.json" || fail "the dry run is not marked"
	# Timings for another manifest are refused.
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); t["manifest_sha256"]="0"*64; json.dump(t, open(sys.argv[1], "w"))' "$work/prep/timings.json"
	if "$tilec" tune --finish "$work/prep" -o "$work/rec2.json" 2>"$work/err.txt"; then
		fail "--finish took timings for another manifest"
	fi
	grep -q "manifest_sha256" "$work/err.txt" || fail "no reason given"
	# The same directory as work units on the GPU machine (tune_farm.py
	# --unit, tilec tune --unit's protocol without tilec): two units at
	# once, a configuration that crashes and one that hangs past the
	# timeout, the results merged by tilec tune --finish.
	"$tilec" tune samples/gemm.c -t cuda --arch sm_90a \
		--shape M=4096,N=4096,K=4096 --check-shape M=200,N=130,K=70 \
		--choices BLOCK_M=128,256 --choices BLOCK_N=128,256 -D BLOCK_K=32 \
		-D THREADS=128 --unit-size 2 --config-timeout 3 \
		--prepare "$work/units" >"$work/prep.txt" 2>&1 ||
		{ cat "$work/prep.txt"; fail "--prepare of units"; }
	read -r c_crash c_hang < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(*[c["id"] for c in m["configs"] if not c.get("default")][:2])' "$work/units/manifest.json")
	TILEC_TUNE_TEST_FAULT=$c_crash:crash,$c_hang:hang python3 tools/tune_farm.py \
		--unit "$work/units" --index all --jobs 2 --dry-run >"$work/units.txt" 2>&1 ||
		{ cat "$work/units.txt"; fail "tune_farm.py --unit"; }
	python3 tools/tune_farm.py --unit "$work/units" --index 0 --dry-run 2>&1 |
		grep -q "is done already" || fail "a finished unit ran again"
	"$tilec" tune --finish "$work/units" -o "$work/urec.json" 2>"$work/err.txt" ||
		{ cat "$work/units.txt" "$work/err.txt"; fail "--finish of the farm's units"; }
	python3 - "$work/urec.json" "$c_crash" "$c_hang" "$work/units/manifest.json" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[4]))
vals = {c["id"]: c["values"] for c in m["configs"]}
def find(cid):
    return next(x for x in r["configs"] if all(x["values"][k] == v for k, v in vals[cid].items() if k in x["values"]))
crash, hang = find(sys.argv[2]), find(sys.argv[3])
assert crash["status"] == "failed" and "crashed: signal 11" in crash["reason"], crash
assert hang["status"] == "failed" and "timed out after 3 s" in hang["reason"], hang
assert r["device"] == "dry run" and not r["farm"]["units"]["failed"], r["farm"]
assert sorted(c["status"] for c in r["configs"]).count("ok") == len(m["configs"]) - 2
PY
		{ cat "$work/units.txt"; fail "the record from the farm's units"; }
	;;
units)
	prep=$work/prep
	search --unit-size 2 --config-timeout 120 --prepare "$prep" \
		>"$work/prep.txt" 2>&1 || { cat "$work/prep.txt"; fail "--prepare"; }
	grep -q "as 3 units" "$work/prep.txt" || { cat "$work/prep.txt"; fail "not 3 units"; }
	grep -q "^#SBATCH --array=0-2$" "$prep/tune.sbatch" || fail "the array"
	grep -q "^#SBATCH --exclusive$" "$prep/tune.sbatch" || fail "CPU units are not exclusive"
	cp "$prep/manifest.json" "$work/manifest.good"
	# Which unit: --index, else Slurm's task id; nothing else.
	st=0
	"$tilec" tune --unit "$prep" 2>"$work/err.txt" || st=$?
	[ "$st" -eq 2 ] && grep -q "give --index N" "$work/err.txt" ||
		fail "--unit without an index: status $st"
	st=0
	"$tilec" tune --unit "$prep" --index 3 2>"$work/err.txt" || st=$?
	[ "$st" -eq 2 ] && grep -q "expected a unit in 0 .. 2" "$work/err.txt" ||
		fail "--index 3: status $st"
	"$tilec" tune --unit "$prep" --index 0 2>"$work/u0.txt" || { cat "$work/u0.txt"; fail "unit 0"; }
	SLURM_ARRAY_TASK_ID=1 "$tilec" tune --unit "$prep" 2>"$work/u1.txt" ||
		{ cat "$work/u1.txt"; fail "unit 1 by SLURM_ARRAY_TASK_ID"; }
	sum=$(sha256sum "$prep/results/u000.json")
	"$tilec" tune --unit "$prep" --index 0 2>"$work/u0b.txt" || fail "unit 0 again"
	grep -q "unit u000 is done already" "$work/u0b.txt" || fail "unit 0 ran again"
	[ "$(sha256sum "$prep/results/u000.json")" = "$sum" ] || fail "unit 0's result changed"
	# The last unit's reference data is not what its name says: the
	# configuration fails with the reason, and is never chosen.
	cp -r "$prep" "$work/tampered"
	last=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); c=[c for c in m["configs"] if c["id"]==m["units"][2]["configs"][0]][0]; print(c["check"]["expected"]["C"])' "$prep/manifest.json")
	printf 'x' | dd of="$work/tampered/$last" bs=1 seek=3 conv=notrunc status=none
	"$tilec" tune --unit "$work/tampered" --index 2 2>"$work/u2t.txt" || fail "the tampered unit"
	grep -q "is corrupt (its SHA-256 is not its name)" "$work/u2t.txt" ||
		{ cat "$work/u2t.txt"; fail "tampered reference data not noticed"; }
	# A configuration whose values name no tunable of the program fails
	# with that name; the values are never bound.
	cp -r "$prep" "$work/stray"
	python3 - "$work/stray/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
first = m["units"][2]["configs"][0]
[c for c in m["configs"] if c["id"] == first][0]["values"]["NOPE"] = 3
json.dump(m, open(sys.argv[1], "w"), indent=2)
PY
	"$tilec" tune --unit "$work/stray" --index 2 2>"$work/u2s.txt" || fail "the stray unit"
	grep -q "the unit's values name NOPE, which is no tunable of" "$work/u2s.txt" ||
		{ cat "$work/u2s.txt"; fail "a stray value not noticed"; }
	JOB_COMPLETION_INDEX=2 "$tilec" tune --unit "$prep" 2>"$work/u2.txt" ||
		fail "unit 2 by JOB_COMPLETION_INDEX"
	grep -q "unit u002 (3 of 3)" "$work/u2.txt" || fail "not unit 2"
	"$tilec" tune --finish "$prep" -o "$work/rec.json" 2>"$work/fin.txt" >/dev/null ||
		{ cat "$work/fin.txt"; fail "--finish"; }
	check_record "$work/rec.json"
	grep -q '"partial"' "$work/rec.json" && fail "a complete merge marked partial"
	# A result with a timing that is no time: the unit is failed with
	# the reason, its configurations are not chosen, the rest merge.
	python3 - "$prep/results/u001.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["configs"].values():
    if c["status"] == "ok":
        c["timings_ms"][0] = -1
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
	"$tilec" tune --finish "$prep" -o "$work/rec2.json" 2>"$work/fin2.txt" >/dev/null ||
		{ cat "$work/fin2.txt"; fail "--finish with a bad result"; }
	grep -q 'u001.json:[0-9]*:[0-9]*: warning: key "configs.c00[23].timings_ms": expected 1 to 16 times > 0' "$work/fin2.txt" ||
		{ cat "$work/fin2.txt"; fail "the bad timing is not located"; }
	grep -q "sbatch --array=1 " "$work/fin2.txt" || fail "no resume for unit 1"
	python3 - "$work/rec2.json" <<'PY' || fail "the record of a partial merge"
import json, sys
r = json.load(open(sys.argv[1]))
assert "u001" in r["farm"]["units"]["failed"], r["farm"]["units"]
bad = [c for c in r["configs"] if "unit u001: corrupt result" in c.get("reason", "")]
assert len(bad) == 2 and all(c["status"] == "failed" for c in bad), r["configs"]
assert r["partial"]["stage"] == "units"
PY
	# A program whose name is no shell word: copied under a plain name,
	# and nothing of the name reaches the Slurm script.
	odd=$work/$'x y\nrm -rf z;.c'
	cp samples/gemm.c "$odd"
	"$tilec" tune "$odd" --shape M=64,N=64,K=64 --choices BLOCK_M=64 \
		--choices BLOCK_N=64 -D BLOCK_K=32 --prepare "$work/odd" >/dev/null 2>&1 ||
		fail "--prepare of an odd name"
	[ -f "$work/odd/src/x_y_rm_-rf_z_.c" ] || fail "the copy's name: $(ls "$work/odd/src")"
	bash -n "$work/odd/tune.sbatch" || fail "the script does not parse"
	if grep -q "rm -rf" "$work/odd/tune.sbatch"; then
		fail "the program's name reached the script"
	fi
	# Bad manifests: located errors, nothing run.
	bad_manifest() {
		cp "$work/manifest.good" "$prep/manifest.json"
		python3 -c "import json,sys; m=json.load(open(sys.argv[1])); $1; json.dump(m, open(sys.argv[1],'w'), indent=2)" "$prep/manifest.json"
		st=0
		"$tilec" tune --unit "$prep" --index 0 2>"$work/bad.txt" || st=$?
		[ "$st" -eq 2 ] && grep -q "manifest.json:[0-9]*:[0-9]*: error: $2" "$work/bad.txt" ||
			{ cat "$work/bad.txt"; fail "manifest ($1): status $st"; }
	}
	bad_manifest 'm["units"][0]["configs"] = ["c999"]' 'key "units": unit u000: "c999" is no configuration'
	bad_manifest 'm["configs"][0]["check"]["inputs"]["A"] = "data/../../x"' 'configuration c000: "check.inputs.A" must name a file data/NAME'
	bad_manifest 'm["unit"]["config_timeout_s"] = 0' 'key "unit.config_timeout_s"'
	bad_manifest 'm["program"] = "/etc/passwd"' 'key "program": expected src/NAME'
	bad_manifest 'm["measure"]["repeat"] = "x"' 'key "measure.repeat"'
	;;
check)
	# A one-configuration search: every tunable at the program's
	# default, so the choice is the default.
	defaults=$(python3 -c '
import re, sys
for name, v in re.findall(r"TILE_PARAM\((\w+),\s*(-?\d+)", open(sys.argv[1]).read()):
    print(f"--choices {name}={v}")' samples/gemm.c)
	# shellcheck disable=SC2086
	"$tilec" tune samples/gemm.c --shape M=192,N=160,K=96 \
		--check-shape M=100,N=130,K=70 $defaults --repeat 3 --warmup 1 \
		--confirm 1 -o "$work/one.json" 2>"$work/err.txt" >/dev/null ||
		{ cat "$work/err.txt"; fail "the search"; }
	grep -q "1 configurations" "$work/err.txt" || { cat "$work/err.txt"; fail "not one configuration"; }
	"$tilec" tune samples/gemm.c --check "$work/one.json" --repeat 3 \
		--warmup 1 --confirm 1 >"$work/out.txt" 2>"$work/err.txt" ||
		{ cat "$work/err.txt"; fail "--check of the default"; }
	grep -q "^OK: the record's choice is the default" "$work/out.txt" ||
		{ cat "$work/out.txt"; fail "no verdict"; }
	grep -q "checking at the record's shape K=96,M=192,N=160" "$work/err.txt" ||
		fail "--check without --shape does not take the record's"
	# A choice that is not the default (set by hand: which one a search
	# picks depends on the machine).  No timing crosses these margins.
	python3 - "$work/one.json" "$work/other.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["chosen"]["BLOCK_M"] = 128 if r["default"]["BLOCK_M"] != 128 else 64
json.dump(r, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
	st=0
	"$tilec" tune samples/gemm.c --check "$work/other.json" --margin 100000 \
		--repeat 3 --warmup 1 --confirm 1 >"$work/out.txt" 2>/dev/null || st=$?
	[ "$st" -eq 1 ] && grep -q "^STALE: .*(--margin 100000%)" "$work/out.txt" ||
		{ cat "$work/out.txt"; fail "--margin 100000: status $st"; }
	"$tilec" tune samples/gemm.c --check "$work/other.json" --margin -99.99 \
		--repeat 3 --warmup 1 --confirm 1 --json >"$work/out.json" 2>/dev/null ||
		{ cat "$work/out.json"; fail "--margin -99.99"; }
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["wins"] is True and o["margin_pct"] == -99.99, o' "$work/out.json" ||
		fail "--check --json"
	st=0
	"$tilec" tune samples/gemm.c --check "$work/other.json" --margin -100 \
		2>"$work/err.txt" || st=$?
	[ "$st" -eq 2 ] && grep -q "expected a percentage above -100" "$work/err.txt" ||
		fail "--margin -100: status $st"
	;;
failures)
	# Outside a tolerance tighter than the f16 gemm's rounding: each
	# checked configuration is dropped as wrong, with the numbers from
	# the harness's comparison.
	st=0
	search --tol 1e-9 -o "$work/rec.json" 2>"$work/err.txt" || st=$?
	grep -q "WRONG, dropped: C: max rel err .* (tol 1e-09)" "$work/err.txt" ||
		{ cat "$work/err.txt"; fail "no configuration dropped as wrong"; }
	if grep "WRONG" "$work/err.txt" | grep -qv "(tol 1e-09)"; then
		fail "a wrong configuration without its tolerance"
	fi
	[ "$st" -le 1 ] || { cat "$work/err.txt"; fail "--tol 1e-9 stopped the search"; }
	# A compiler that rejects everything: every configuration is a
	# compile error (its kind, not its message), none failed otherwise.
	st=0
	TILEC_CACHE_DIR="$work/cache" search --cc false -o "$work/rec2.json" \
		2>"$work/err2.txt" || st=$?
	[ "$st" -eq 1 ] || { cat "$work/err2.txt"; fail "status $st with no compiler"; }
	[ "$(grep -c "COMPILE ERROR, skipped" "$work/err2.txt")" -eq 5 ] ||
		{ cat "$work/err2.txt"; fail "not 5 compile errors (4 and the default)"; }
	if grep -q "FAILED\|WRONG" "$work/err2.txt"; then
		fail "a compile error classified as something else"
	fi
	grep -q "no configuration of gemm passed its check" "$work/err2.txt" ||
		fail "no summary"
	# A bad --seed or --tol is an error of the command line, before any
	# work.
	for bad in "--seed x" "--tol -1"; do
		st=0
		# shellcheck disable=SC2086
		"$tilec" tune samples/gemm.c --shape M=1,N=1,K=1 $bad \
			2>"$work/err3.txt" || st=$?
		[ "$st" -eq 2 ] && grep -q "expected" "$work/err3.txt" ||
			fail "tilec tune $bad: status $st"
	done
	;;
dispatch)
	# Two one-configuration records at different shapes, so each choice
	# is known.
	record() {
		local out=$1 shape=$2
		shift 2
		"$tilec" tune samples/gemm_f32.c --shape "$shape" \
			--check-shape M=37,N=50,K=21 "$@" -D STAGES=2 --repeat 1 \
			--warmup 0 --confirm 0 -o "$out" >/dev/null 2>"$work/tune.err" ||
			{ cat "$work/tune.err"; fail "tilec tune $shape"; }
	}
	record "$work/small.json" M=64,N=64,K=64 -D BLOCK_M=64 -D BLOCK_N=64 -D BLOCK_K=16
	record "$work/large.json" M=1000,N=1000,K=300 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32
	# shape WANT_RECORD WANT_BLOCK_M: the large record first on the
	# command line; the buckets decide.
	pick() {
		"$tilec" run samples/gemm_f32.c --config "$work/large.json" \
			--config "$work/small.json" --shape "$1" --json \
			>"$work/run.json" 2>"$work/run.err" ||
			{ cat "$work/run.json" "$work/run.err"; fail "run at $1"; }
		python3 - "$work/run.json" "$work/$2" "$3" <<'PY' || fail "run at $1 took the wrong record"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["ok"] and o["config"] == sys.argv[2], (o.get("config"), sys.argv[2])
assert o["tunables"]["BLOCK_M"] == int(sys.argv[3]), o["tunables"]
PY
	}
	pick M=64,N=64,K=64 small.json 64     # on the small bucket's edge
	pick M=50,N=17,K=33 small.json 64
	pick M=65,N=8,K=8 large.json 128      # past the small bucket in M
	pick M=1000,N=1000,K=300 large.json 128
	pick M=2000,N=8,K=8 large.json 128    # past both: the largest
	"$tilec" run samples/gemm_f32.c --config "$work/large.json" \
		--config "$work/small.json" --shape M=50,N=17,K=33 >"$work/run.txt" \
		2>&1 || { cat "$work/run.txt"; fail "run"; }
	grep -q "^tuning record for this shape: $work/small.json (M <= 64, N <= 64, K <= 64)$" \
		"$work/run.txt" || { cat "$work/run.txt"; fail "the pick is not said"; }
	# One record: no pick, as before.
	"$tilec" run samples/gemm_f32.c --config "$work/large.json" \
		--shape M=50,N=17,K=33 >"$work/run1.txt" 2>&1 && ! grep -q "tuning record for" \
		"$work/run1.txt" || { cat "$work/run1.txt"; fail "one record"; }
	# Two records of one bucket, and a bucket naming a scalar the shape
	# lacks: located errors, nothing run.
	cp "$work/small.json" "$work/small2.json"
	st=0
	"$tilec" run samples/gemm_f32.c --config "$work/small.json" \
		--config "$work/small2.json" --shape M=8,N=8,K=8 2>"$work/err.txt" || st=$?
	[ "$st" -eq 2 ] && grep -q "small2.json:[0-9]*:[0-9]*: error: key \"shape_bucket\": the bucket of .*small.json too" \
		"$work/err.txt" || { cat "$work/err.txt"; fail "two records of one bucket: status $st"; }
	python3 - "$work/small.json" "$work/odd.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["shape_bucket"]["Q"] = 8
json.dump(r, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
	st=0
	"$tilec" run samples/gemm_f32.c --config "$work/odd.json" \
		--config "$work/large.json" --shape M=8,N=8,K=8 2>"$work/err.txt" || st=$?
	[ "$st" -eq 2 ] && grep -q "odd.json:[0-9]*:[0-9]*: error: key \"shape_bucket.Q\": the launch gives no value for Q" \
		"$work/err.txt" || { cat "$work/err.txt"; fail "a bucket naming Q: status $st"; }
	;;
bucket)
	# A float given a whole value (a), a negative integer (off) and an
	# extent of 0 (N): none may make a bucket of its own.
	cat >"$work/axpb.c" <<'EOF'
#include <tilec.h>
TILE_PARAM(BN, 64, 32, 64);
TILE_KERNEL void
axpb(int N, float a, long long off, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, BN));
	tile_fragment f32 x[BN];
	tile_copy(x, &X[b * BN]);
	tile_parallel(i, BN)
		x[i] = x[i] * a + (float)off;
	tile_copy(&Y[b * BN], x);
}
EOF
	for s in small:N=0,a=2,off=-5 large:N=1000,a=2,off=3; do
		"$tilec" tune "$work/axpb.c" --shape "${s#*:}" --choices BN=32,64 \
			--repeat 1 --warmup 0 --confirm 0 -o "$work/${s%%:*}.json" \
			>/dev/null 2>"$work/tune.err" ||
			{ cat "$work/tune.err"; fail "tilec tune ${s#*:}"; }
	done
	python3 - "$work" <<'PY' || fail "shape_bucket"
import json, sys
for name, want in (("small", {"N": 1, "off": 1}),
                   ("large", {"N": 1024, "off": 4})):
    b = json.load(open(f"{sys.argv[1]}/{name}.json"))["shape_bucket"]
    assert b == want, (name, b)
PY
	"$tilec" export "$work/axpb.c" --config "$work/small.json" \
		--config "$work/large.json" -o "$work/out" >/dev/null 2>"$work/err.txt" ||
		{ cat "$work/err.txt"; fail "export of two records"; }
	"$tilec" run "$work/axpb.c" --config "$work/large.json" \
		--config "$work/small.json" --shape N=0,a=1.5,off=-2 \
		>"$work/run.txt" 2>&1 && grep -q "small.json (N <= 1, off <= 1)" \
		"$work/run.txt" || { cat "$work/run.txt"; fail "run of two records"; }
	;;
one-choice)
	"$tilec" tune samples/rmsnorm.c --shape M=3,N=100,eps=1e-6 -D BLOCK_M=1 \
		-D THREADS=128 --choices BLOCK_N=256 --repeat 1 --warmup 0 \
		--confirm 0 -o "$work/r.json" >"$work/out.txt" 2>&1 ||
		{ cat "$work/out.txt"; fail "tilec tune"; }
	! grep -q "no tunables" "$work/out.txt" &&
		grep -q "BLOCK_N=256" "$work/out.txt" &&
		grep -q "BLOCK_N=4096 (default)" "$work/out.txt" ||
		{ cat "$work/out.txt"; fail "the configurations are not named"; }
	python3 - "$work/r.json" <<'PY' || fail "the record's values"
import json, sys
r = json.load(open(sys.argv[1]))
got = sorted(((c["values"], bool(c.get("default"))) for c in r["configs"]), key=str)
assert got == [({"BLOCK_N": 256}, False), ({"BLOCK_N": 4096}, True)], got
PY
	;;
*)
	echo "unknown case $case" >&2
	exit 2
	;;
esac
echo PASS
