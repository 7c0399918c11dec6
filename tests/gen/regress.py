#!/usr/bin/env python3
"""regress.py - run one reduced generated program (tests/gen/regress/).

usage: regress.py TILEC SRCROOT NAME

NAME.c is the tile program, NAME.oracle.c its oracle and NAME.json its
kernels, shapes and the backend it failed on ("backend"; "backends" to
run more).  Runs fuzz.py's checks for those backends on it: exit 0 when
they pass, 1 when one fails, 77 (skipped) when the backend's compiler is
missing here.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzz  # noqa: E402


def main():
    tilec, root, name = sys.argv[1:4]
    base = os.path.join(HERE, "regress", name)
    meta = json.load(open(base + ".json"))
    backends = meta.get("backends") or [meta["backend"]]
    backends = ["cuda" if b.startswith("cuda") else b for b in backends]
    work = tempfile.mkdtemp(prefix="tilec-regress-")
    try:
        shutil.copy(base + ".c", os.path.join(work, "gen.c"))
        shutil.copy(base + ".oracle.c", os.path.join(work, "oracle.c"))
        ns = argparse.Namespace(
            tilec=tilec, srcroot=root, features=",".join(meta["features"]),
            backends=",".join(backends), kernels=len(meta["kernels"]),
            log=None, work=work, jobs=2, keep=True, verbose=True,
            emu_timeout=120)
        F = fuzz.Fuzz(ns)
        # tilegen's feature names are checked by fuzz; the set is the file's
        need = {"hipemu": F.cxx, "cuda": F.nvcc, "hip": F.hipcc}
        if all(b in need and not need[b] for b in backends):
            print("skipped: no compiler for %s" % ", ".join(backends))
            return 77
        F.run_dir(meta["seed"], work, meta["kernels"])
        print(F.summary())
        return 1 if F.fails else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
