#!/usr/bin/env python3
"""device_prepare.py - generated programs, translated, for a machine without tilec.

usage: device_prepare.py TILEC SRCROOT OUTDIR [--seeds A:B|S,S,...] [--kernels N]
                         [--arch sm_90a] [--features F] [--jobs 2]

A GPU machine with cc, nvcc (or NVRTC) and Python but no libclang cannot
run tilec, yet compiling and running is what is slow.  So the
translation happens here and the rest there.  For each seed OUTDIR gets:

    gen_SEED.oracle.c   the generator's serial C oracle
    gen_SEED.omp.c      tilec -t openmp
    gen_SEED.cu         tilec -t cuda --arch ARCH (helpers included, not
                        inlined: OUTDIR/include/tilec/ holds them once)
    gen_SEED.json       each kernel's shape, tensors (dtype, extents, read,
                        written), tolerance and CUDA launch manifest
                        (tilec --emit=launch)

packed with programs/index.json into OUTDIR/programs.tar.xz (device_run.py
unpacks it), beside OUTDIR/device_run.py.  No inputs and no expected
outputs: device_run.py makes the inputs from the seed and runs the
oracle there.  A seed that does not translate for a backend is recorded
in index.json and reported as failed by device_run.py.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools")
sys.path[:0] = [HERE, TOOLS]
import launch_manifest  # noqa: E402
import tilegen  # noqa: E402


def launches(text):
    """The kernels of tilec --emit=launch's document, by name."""
    return launch_manifest.by_name(text)


def tolerance(k):
    return tilegen.tolerance(k)


def fast_paths(ir):
    """Per kernel of an --emit=ir text, which fast path its gemms take:
    'wgmma+tma' (the mbarrier loop's copies by TMA), 'wgmma' or 'mma'."""
    out = {}
    for part in re.split(r"^kernel ", ir, flags=re.M)[1:]:
        name = part.split("(", 1)[0]
        out[name] = ("wgmma" if " by wgmma" in part else "mma") + (
            "+tma" if re.search(r", tma \w+ ", part) else "")
    return out


def prepare(a, feats, seed):
    """Write one seed's files; returns its index entry."""
    ks = tilegen.generate(seed, a.kernels, feats)
    tile, oracle, _ = tilegen.render(seed, ks, feats)
    stem = os.path.join(a.out, "programs", "gen_%d" % seed)
    with open(stem + ".c", "w") as f:
        f.write(tile)
    with open(stem + ".oracle.c", "w") as f:
        f.write(oracle)
    errors = {}
    for backend, cmd in (
            ("openmp", ["-t", "openmp", "-o", stem + ".omp.c"]),
            ("cuda", ["-t", "cuda", "--arch", a.arch, "-o", stem + ".cu"] + a.flag)):
        p = subprocess.run([a.tilec, stem + ".c"] + cmd, capture_output=True,
                           text=True)
        if p.returncode:
            errors[backend] = p.stderr.strip()[-2000:] or "exit %d" % p.returncode
    man = {}
    if "cuda" not in errors:
        p = subprocess.run([a.tilec, stem + ".c", "-t", "cuda", "--arch", a.arch,
                            "--emit=launch"], capture_output=True, text=True)
        if p.returncode:
            errors["cuda"] = "--emit=launch: " + p.stderr.strip()[-2000:]
        else:
            man = launches(p.stdout)
    paths = {}
    if "cuda" not in errors and any(k.fast for k in ks):
        p = subprocess.run([a.tilec, stem + ".c", "-t", "cuda", "--arch", a.arch,
                            "--emit=ir"], capture_output=True, text=True)
        paths = fast_paths(p.stdout) if p.returncode == 0 else {}
    kernels = []
    for k in ks:
        order = list(k.params) + [t.name for t in k.tensors]
        L = man.get(k.name)
        if L is not None and [q["name"] for q in L["params"]] != order:
            errors["cuda"] = "%s: the manifest's parameters are not %s" % (
                k.name, order)
        kernels.append({
            "kernel": k.name,
            "shape": {p: k.P[p] for p in k.params},
            "tensors": [{"name": t.name, "dtype": t.dtype, "dims": list(t.dims),
                         "read": bool(t.const or t.name.startswith("Acc")),
                         "written": not t.const} for t in k.tensors],
            "tol": tolerance(k),
            "path": paths.get(k.name) if k.fast else None,
            "launch": L})
    with open(stem + ".json", "w") as f:
        json.dump({"seed": seed, "features": sorted(feats), "errors": errors,
                   "kernels": kernels}, f, separators=(",", ":"))
    os.remove(stem + ".c")      # tilegen.py SEED --features F writes it again
    return {"seed": seed, "kernels": len(kernels), "errors": sorted(errors)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tilec")
    ap.add_argument("srcroot")
    ap.add_argument("out")
    ap.add_argument("--seeds", default="1:11")
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--flag", action="append", default=[],
                    help="a translator option for the CUDA output (repeatable)")
    ap.add_argument("--features", default="")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    feats = tilegen.feature_set(a.features)
    if ":" in a.seeds:
        lo, hi = map(int, a.seeds.split(":"))
        seeds = list(range(lo, hi))
    else:
        seeds = [int(x) for x in a.seeds.split(",")]
    shutil.rmtree(a.out, ignore_errors=True)
    inc = os.path.join(a.out, "include", "tilec")
    os.makedirs(inc)
    os.makedirs(os.path.join(a.out, "programs"))
    for sub in ("cpu", "cuda", "gpu"):
        shutil.copytree(os.path.join(a.srcroot, "templates", sub),
                        os.path.join(inc, sub))
    shutil.copy(os.path.join(HERE, "device_run.py"), a.out)
    shutil.copy(os.path.join(TOOLS, "launch_manifest.py"), a.out)
    with cf.ProcessPoolExecutor(max(1, min(a.jobs, 2))) as ex:
        index = list(ex.map(prepare, [a] * len(seeds), [feats] * len(seeds),
                            seeds))
    with open(os.path.join(a.out, "programs", "index.json"), "w") as f:
        json.dump({"arch": a.arch, "features": sorted(feats), "files": index},
                  f, indent=0)
    # Text that compresses some 25 times: one archive, unpacked there.
    with tarfile.open(os.path.join(a.out, "programs.tar.xz"), "w:xz") as tar:
        tar.add(os.path.join(a.out, "programs"), "programs")
    shutil.rmtree(os.path.join(a.out, "programs"))
    size = sum(os.path.getsize(os.path.join(d, n))
               for d, _, ns in os.walk(a.out) for n in ns)
    bad = [e["seed"] for e in index if e["errors"]]
    print("%d files, %d kernels, %.1f MiB in %s%s" % (
        len(index), sum(e["kernels"] for e in index), size / 2**20, a.out,
        "; seeds that do not translate: %s" % bad if bad else ""))
    print("on the device: cd %s && python3 device_run.py" %
          os.path.basename(os.path.normpath(a.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
