#!/usr/bin/env python3
"""tune_ray.py - run the work units of a prepared search as Ray tasks
(docs/tuning.md, "Work units"), the second engine beside Slurm's array
jobs: the same DIR that `tilec tune --prepare` wrote for `sbatch
DIR/tune.sbatch`, the same unit command, the same merge.

    python3 tools/tune_ray.py DIR [--address ADDR] [--units LIST]
                              [--retries N] [--gpus-per-unit G]
                              [--cpus-per-unit C] [--finish RECORD]
                              [--farm] [--dry-run]

One task per unit (`tilec tune --unit DIR --index N`, with the tilec
that prepared DIR, or $TILEC), asking Ray for `num_gpus` G (default 1
for a GPU target, 0 on the CPU) and `num_cpus` C (default 1); Ray
gives each GPU task its own CUDA_VISIBLE_DEVICES.  A unit whose process
fails or is killed, or whose worker or node dies (preemption), is run
again by Ray up to --retries times (default 2); units are idempotent,
so a rerun finishes what was missing and a unit that finished says so
and does nothing.  Each task appends to DIR/logs/INDEX.log, as Slurm's
do.  --finish RECORD merges at the end (`tilec tune --finish DIR -o
RECORD`), from whatever finished; without it the command is printed.

--address: a running cluster (`auto`, or HOST:PORT of `ray start
--head`); without it a local cluster is started for this run and
stopped at its end (--num-cpus, --num-gpus size it; by default Ray's
own count of the machine's).  --units: "3", "0-5,9" (what --finish
prints to resume), default every unit.  --farm runs each unit with
tools/tune_farm.py --unit (python3, torch and cupy; no tilec) for GPU
machines without the translator.  --dry-run runs no unit: each task
reports where Ray placed it and which GPUs it got, to check a cluster's
resources (eight units at once on an eight-GPU node) before a search.

Exit status: 0 every unit has its result (and the merge, if asked,
wrote a record); 1 some unit failed after its retries (the merge still
runs, and says what to rerun); 2 bad arguments, or no Ray.
"""
import argparse
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREPARED_FORMAT = "tilec-tune-prepared/1"


def unit_list(spec, n):
    """ "0-5,9" or "all" -> sorted indices in 0 .. n-1."""
    if spec in (None, "all"):
        return list(range(n))
    out = set()
    for part in spec.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise SystemExit(f"--units {spec}: expected N, N-M, lists of them, or all")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo or hi >= n:
            raise SystemExit(f"--units {spec}: units are 0 .. {n - 1}")
        out.update(range(lo, hi + 1))
    return sorted(out)


def prepared_tilec(d):
    """The tilec DIR/tune.sbatch runs (the one that prepared DIR)."""
    try:
        text = open(os.path.join(d, "tune.sbatch")).read()
    except OSError:
        return None
    m = re.search(r'exec "\$\{TILEC:-([^}"]+)\}" tune --unit', text)
    return m.group(1) if m else None


def run_unit(d, index, argv, env, timeout, dry):
    """The body of one Ray task (runs on a worker).  dry: (barrier
    directory, how many): no unit run; the task marks its start there
    and waits (a minute at most) until that many have started, so a
    cluster that cannot run them at once shows as a barrier not met."""
    import ray
    gpus = [str(g) for g in ray.get_gpu_ids()]
    host = socket.gethostname()
    start = time.time()
    if dry:
        where, want = dry
        open(os.path.join(where, str(index)), "w").close()
        met = False
        for _ in range(600):
            if len(os.listdir(where)) >= want:
                met = True
                break
            time.sleep(0.1)
        return {"unit": index, "host": host, "gpus": gpus, "start": start,
                "end": time.time(), "pid": os.getpid(), "met": met}
    full = dict(os.environ)
    full.update(env)
    if gpus:
        full["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    with open(os.path.join(d, "logs", f"{index}.log"), "a") as log:
        log.write(f"--- ray task: unit {index} on {host}, GPUs "
                  f"{','.join(gpus) or 'none'}, at "
                  f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
        log.flush()
        try:
            p = subprocess.run(argv, stdout=log, stderr=log, env=full,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"unit {index}: no result after {timeout:.0f} s; killed")
    if p.returncode != 0:
        how = (f"killed by signal {-p.returncode}" if p.returncode < 0
               else f"exit status {p.returncode}")
        raise RuntimeError(f"unit {index}: {how} (DIR/logs/{index}.log)")
    return {"unit": index, "host": host, "gpus": gpus, "start": start,
            "end": time.time(), "pid": os.getpid()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="a directory tilec tune --prepare wrote")
    ap.add_argument("--address", help="a running Ray cluster (auto, HOST:PORT)")
    ap.add_argument("--units", help="which units: N, N-M, lists of them, all")
    ap.add_argument("--retries", type=int, default=2,
                    help="reruns of a failed or killed unit (default 2)")
    ap.add_argument("--gpus-per-unit", type=float,
                    help="num_gpus of each task (default 1 for GPU targets)")
    ap.add_argument("--cpus-per-unit", type=float, default=1,
                    help="num_cpus of each task (default 1)")
    ap.add_argument("--num-cpus", type=int, help="a local cluster's CPUs")
    ap.add_argument("--num-gpus", type=int, help="a local cluster's GPUs")
    ap.add_argument("--tilec", help="the tilec to run (default $TILEC, or "
                    "the one that prepared DIR)")
    ap.add_argument("--farm", action="store_true",
                    help="run units with tools/tune_farm.py --unit (no tilec)")
    ap.add_argument("--finish", metavar="RECORD",
                    help="merge with tilec tune --finish DIR -o RECORD")
    ap.add_argument("--dry-run", action="store_true",
                    help="run no unit: show where Ray places each")
    a = ap.parse_args()
    if a.retries < 0:
        raise SystemExit("--retries: a count >= 0")
    d = os.path.abspath(a.dir)
    try:
        m = json.load(open(os.path.join(d, "manifest.json")))
    except (OSError, ValueError) as e:
        print(f"tune_ray: {d}/manifest.json: {e}", file=sys.stderr)
        sys.exit(2)
    if m.get("format") != PREPARED_FORMAT or not m.get("units"):
        print(f"tune_ray: {d} holds no work units (prepare it with "
              f"tilec tune --prepare)", file=sys.stderr)
        sys.exit(2)
    units = m["units"]
    want = unit_list(a.units, len(units))
    gpu_target = m.get("target") != "openmp"
    gpus = a.gpus_per_unit if a.gpus_per_unit is not None else (1 if gpu_target else 0)
    spec = m.get("unit", {})
    # A unit's limit, as the Slurm script's --time: every configuration's
    # timeout, and a minute to start and write the result.
    timeout = spec.get("configs_per_unit", 1) * spec.get("config_timeout_s", 600) + 60
    tilec = a.tilec or os.environ.get("TILEC") or prepared_tilec(d)
    if a.farm:
        base = [sys.executable, os.path.join(HERE, "tune_farm.py"), "--unit", d, "--index"]
    elif tilec:
        base = [tilec, "tune", "--unit", d, "--index"]
    else:
        print("tune_ray: which tilec? give --tilec or $TILEC", file=sys.stderr)
        sys.exit(2)
    # What the units read from the environment goes with each task, to
    # whichever node runs it.
    env = {k: v for k, v in os.environ.items()
           if k.startswith("TILEC_") and k != "TILEC"}
    if not gpu_target:
        env.setdefault("OMP_NUM_THREADS", str(max(1, int(a.cpus_per_unit))))
    try:
        import ray
    except ImportError:
        print("tune_ray: no Ray here (pip install ray)", file=sys.stderr)
        sys.exit(2)
    init = {"address": a.address, "include_dashboard": False,
            "log_to_driver": False}
    if not a.address:
        init.update(num_cpus=a.num_cpus, num_gpus=a.num_gpus,
                    object_store_memory=80 << 20)
    ray.init(**init)
    status = 0
    try:
        res = ray.cluster_resources()
        print(f"tune_ray: {len(want)} of {len(units)} units of {d} as Ray tasks "
              f"(num_gpus={gpus:g}, num_cpus={a.cpus_per_unit:g}, retries {a.retries}); "
              f"cluster: {res.get('CPU', 0):g} CPUs, {res.get('GPU', 0):g} GPUs, "
              f"{len(ray.nodes())} node(s)", flush=True)
        task = ray.remote(run_unit).options(
            num_gpus=gpus, num_cpus=a.cpus_per_unit, max_retries=a.retries,
            retry_exceptions=True)
        t0 = time.time()
        dry = None
        if a.dry_run:
            # As many at once as the cluster's resources allow.
            fit = (res.get("GPU", 0) / gpus if gpus else
                   res.get("CPU", 0) / max(a.cpus_per_unit, 1e-9))
            dry = (os.path.join(d, "logs", f"dry-run-{os.getpid()}"),
                   max(1, min(len(want), int(fit + 1e-9))))
            os.makedirs(dry[0])
        refs = {task.remote(d, i, base + [str(i)], env, timeout, dry): i
                for i in want}
        pending, failed, placed = list(refs), [], []
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            i = refs[done[0]]
            try:
                r = ray.get(done[0])
                placed.append(r)
                print(f"tune_ray: unit {units[i]['id']} ({i}) "
                      f"{'placed' if a.dry_run else 'done'} on {r['host']}, "
                      f"GPUs {','.join(r['gpus']) or 'none'}, "
                      f"{r['end'] - r['start']:.1f} s", flush=True)
            except Exception as e:  # the last attempt's error
                msg = str(e).strip().splitlines()
                why = next((x for x in reversed(msg) if "unit" in x), msg[-1] if msg else "?")
                failed.append(i)
                print(f"tune_ray: unit {units[i]['id']} ({i}) FAILED after "
                      f"{a.retries + 1} attempts: {why.strip()}", flush=True)
        wall = time.time() - t0
        if a.dry_run and placed:
            import shutil
            shutil.rmtree(dry[0], ignore_errors=True)
            ids = sorted({g for r in placed for g in r["gpus"]},
                         key=lambda g: int(g) if g.isdigit() else 0)
            met = all(r["met"] for r in placed)
            print(f"tune_ray: dry run: {len(placed)} units placed; {dry[1]} at once "
                  f"{'as the resources allow' if met else 'NOT reached'}; GPUs used: "
                  f"{','.join(ids) or 'none'}", flush=True)
            status = 0 if met else 1
        print(f"tune_ray: {len(want) - len(failed)} of {len(want)} units "
              f"{'placed' if a.dry_run else 'finished'} in {wall:.1f} s", flush=True)
        if failed:
            status = 1
            runs = ",".join(str(i) for i in failed)
            print(f"tune_ray: to rerun them: python3 {sys.argv[0]} {shlex.quote(a.dir)} "
                  f"--units {runs}", flush=True)
    finally:
        ray.shutdown()
    if a.dry_run:
        return status
    if a.finish:
        cmd = [tilec or "tilec", "tune", "--finish", d, "-o", a.finish]
        st = subprocess.run(cmd).returncode
        return st if st else status
    print(f"tune_ray: merge with: {tilec or 'tilec'} tune --finish {shlex.quote(a.dir)} "
          f"-o RECORD", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
