#!/usr/bin/env python3
"""pretranslated.py - the kernels python/tests and
tools/bench_python_launch.py build, translated ahead of time, for a
machine where the translator (libtilec, which links libclang) cannot
load: there they are built with tilec.load from the sources and launch
documents written here, and every test makes the same calls and the same
assertions as with tilec.compile.

usage: pretranslated.py OUTDIR [--cuda-arch sm_90a] [--cpu-arch avx2]

writes, for each entry of KERNELS, the standalone source
(tilec.translate(..., standalone=True)) and its launch document
(emit="launch") into OUTDIR, and OUTDIR/index.json saying which is
which.  An entry is found again by the SHA-256 of its tile program (so a
program changed since is not found: a stale directory fails loudly),
its target, the kernel asked for and the tunables bound.  The OpenMP
translations are made for --cpu-arch (default avx2, which every x86-64
server of the last decade has; the host compiles them with
-march=native), the CUDA ones for --cuda-arch.

Used by the tests as `build(program, target, kernel)` (test_tilec.py),
by the bench through `load`, and by tools/python_gpu_prepare.sh.
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TILEC_SOURCE_ROOT") or os.path.join(HERE, "..", "..")

# (tile program relative to the source root, target, kernel, tunables):
# every build the tests make, in test_tilec.py's order.  The program's
# name alone (kernel None) is a build of every kernel it has.
KERNELS = [
    ("samples/gemm_f32.c", "openmp", None, None),
    ("tests/launch/two_kernels.c", "openmp", "pack", None),
    ("tests/launch/two_kernels.c", "openmp", None, None),
    ("samples/rmsnorm.c", "openmp", None, None),
    ("samples/softmax.c", "cuda", None, None),
]
# Every source the entries need, for copying a runnable tree.
PROGRAMS = sorted({k[0] for k in KERNELS})


def bench_add():
    """The tile program tools/bench_python_launch.py times: its ADD,
    read from the script without running it."""
    import ast
    path = os.path.join(ROOT, "tools", "bench_python_launch.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "ADD"
                for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError("%s has no ADD" % path)


def _program_bytes(program):
    """A tile program's bytes: a file (relative to ROOT, or as given) or
    its text."""
    if "\n" not in program:
        path = program if os.path.isabs(program) or os.path.exists(
            program) else os.path.join(ROOT, program)
        with open(path, "rb") as f:
            return f.read()
    return program.encode()


def key(program, target, kernel=None, defines=None):
    return {"program_sha256": hashlib.sha256(
                _program_bytes(program)).hexdigest(),
            "target": target, "kernel": kernel,
            "defines": dict(sorted((defines or {}).items()))}


def prepare(outdir, cuda_arch="sm_90a", cpu_arch="avx2"):
    import tilec
    os.makedirs(outdir, exist_ok=True)
    entries = list(KERNELS)
    add = bench_add()
    entries += [(add, "openmp", None, None), (add, "cuda", None, None)]
    index = []
    for i, (program, target, kernel, defines) in enumerate(entries):
        text = program if "\n" in program else None
        where = program if text else os.path.join(ROOT, program)
        arch = cuda_arch if target == "cuda" else cpu_arch
        common = dict(target=target, arch=arch, defines=defines,
                      kernel=kernel)
        source = tilec.translate(text or where, standalone=True, **common)
        launch = tilec.translate(text or where, emit="launch", **common)
        stem = "%02d-%s" % (i, "bench_add" if text else
                            os.path.splitext(os.path.basename(program))[0])
        ext = {"openmp": ".c", "cuda": ".cu", "hip": ".hip"}[target]
        for name, data in ((stem + ext, source),
                           (stem + ".launch.json", launch)):
            with open(os.path.join(outdir, name), "w") as f:
                f.write(data)
        e = key(program, target, kernel, defines)
        e.update(program=("tools/bench_python_launch.py ADD" if text
                          else program), arch=arch, source=stem + ext,
                 launch=stem + ".launch.json")
        index.append(e)
    with open(os.path.join(outdir, "index.json"), "w") as f:
        json.dump({"kernels": index}, f, indent=1)
    return index


def files(directory, program, target="openmp", kernel=None, defines=None):
    """(source, launch document): the paths of the entry prepared for
    this build; LookupError when there is none (the program changed
    since, or the entry is missing from KERNELS)."""
    want = key(program, target, kernel, defines)
    with open(os.path.join(directory, "index.json")) as f:
        index = json.load(f)["kernels"]
    for e in index:
        if all(e[k] == v for k, v in want.items()):
            return (os.path.join(directory, e["source"]),
                    os.path.join(directory, e["launch"]))
    raise LookupError("%s for %s%s is not among the pre-translated kernels "
                      "in %s (python/tests/pretranslated.py lists them; run "
                      "tools/python_gpu_prepare.sh again)" % (
                          program if "\n" not in program else "a program",
                          target, " (kernel %s)" % kernel if kernel else "",
                          directory))


def load(directory, program, target="openmp", kernel=None, defines=None,
         device=0):
    """tilec.load of the entry prepared for this build (files)."""
    import tilec
    source, launch = files(directory, program, target, kernel, defines)
    return tilec.load(source, launch, target=target, kernel=kernel,
                      device=device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--cuda-arch", default="sm_90a")
    ap.add_argument("--cpu-arch", default="avx2")
    o = ap.parse_args()
    index = prepare(o.outdir, o.cuda_arch, o.cpu_arch)
    print("%d kernels translated into %s" % (len(index), o.outdir))


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "python"))
    main()
