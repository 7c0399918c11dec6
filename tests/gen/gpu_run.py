#!/usr/bin/env python3
"""gpu_run.py - run the generated kernels gpu_prepare.py wrote, on a GPU.

usage: python3 gpu_run.py cases.json [--only SEED[:KERNEL],...]

Compiles each .cu once with NVRTC (CuPy), launches each kernel with its
manifest's grid, threads and shared memory on the prepared inputs, with
outputs poisoned (0xab bytes: a NaN in every float type), and compares
with the expected outputs: integers exactly, floats by the largest
|got - want| over the largest |want|, within the case's tolerance; a
poison byte pattern left where a value is expected fails.  Prints one
line per failure and a summary; exit status 1 if anything failed.
"""
import argparse
import json
import os
import sys

import cupy as cp
import numpy as np

NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16,
      "bf16": np.uint16, "i64": np.int64, "i32": np.int32, "i8": np.int8,
      "u8": np.uint8, "bool": np.uint8}


_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_here, os.path.join(os.path.dirname(os.path.dirname(_here)),
                                    "tools")]
import launch_manifest  # noqa: E402


def evaluate(expr, env):
    """A launch-manifest expression tree over env (C integer semantics)."""
    return launch_manifest.evaluate(expr, env)


def as_float(dt, a):
    if dt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(a.cases))
    cases = json.load(open(a.cases))
    only = [x for x in a.only.split(",") if x]
    modules, fails, ran = {}, 0, 0
    for c in cases:
        tag = "%d:%s" % (c["seed"], c["kernel"])
        if only and not any(tag == o or tag.split(":")[0] == o for o in only):
            continue
        ran += 1
        try:
            if c["cu"] not in modules:
                src = open(os.path.join(here, c["cu"])).read()
                # The manifest's arch (sm_90a): CuPy's default is the
                # device's (sm_90), whose code has no wgmma and traps.
                modules[c["cu"]] = cp.RawModule(code=src, options=(
                    "--std=c++17", "-arch=" + c["launch"]["arch"]),
                    name_expressions=None)
            fn = modules[c["cu"]].get_function(c["kernel"])
            L = c["launch"]
            env = dict(c["shape"])
            env.update(L.get("tunables", {}))
            grid = tuple(max(evaluate(g, env), 0) for g in L["grid"])
            args, outs = [], []
            for p in L["params"]:
                if p["kind"] == "scalar":
                    args.append(np.int32(c["shape"][p["name"]]))
                    continue
                t = next(x for x in c["tensors"] if x["name"] == p["name"])
                dt = NP[t["dtype"]]
                if t["input"]:
                    host = np.fromfile(os.path.join(here, t["input"]), dtype=dt)
                else:
                    host = np.frombuffer(b"\xab" * (t["n"] * np.dtype(dt).itemsize),
                                         dtype=dt).copy()
                dev = cp.asarray(host)
                args.append(dev)
                if t["output"]:
                    outs.append((t, dev))
            if L.get("smem_bytes", 0) > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = L["smem_bytes"]
            if all(grid) and L.get("tensor_maps"):
                # Tensor maps (TMA) after the parameters: the driver
                # passes them (CuPy cannot).
                launch_manifest.cuda_launch(L, env, fn.kernel.ptr, grid, (L["threads"], 1, 1),
                                            L.get("smem_bytes", 0), 0, args)
            elif all(grid):
                fn(grid, (L["threads"], 1, 1), tuple(args),
                   shared_mem=L.get("smem_bytes", 0))
            cp.cuda.runtime.deviceSynchronize()
            bad = []
            for t, dev in outs:
                got = cp.asnumpy(dev)
                want = np.fromfile(os.path.join(here, t["output"]),
                                   dtype=NP[t["dtype"]])
                if t["dtype"] in ("i64", "i32", "i8", "u8", "bool") or c["tol"] == 0:
                    if not np.array_equal(got, want):
                        i = int(np.argmax(got != want))
                        bad.append("%s[%d]: got %s, want %s" % (
                            t["name"], i, got[i], want[i]))
                    continue
                g, w = as_float(t["dtype"], got), as_float(t["dtype"], want)
                if np.isnan(g).any() != np.isnan(w).any() or \
                        (np.isnan(g) != np.isnan(w)).any():
                    i = int(np.argmax(np.isnan(g) != np.isnan(w)))
                    bad.append("%s[%d]: got %s, want %s (NaN)" % (
                        t["name"], i, g[i], w[i]))
                    continue
                fin = ~np.isnan(w)
                scale = max(float(np.abs(w[fin]).max()) if fin.any() else 0, 1e-30)
                err = np.abs(g[fin] - w[fin]) / scale
                if err.size and err.max() > c["tol"]:
                    i = int(np.argmax(err))
                    bad.append("%s: rel err %.3g (tol %g), got %s want %s" % (
                        t["name"], err.max(), c["tol"], g[fin][i], w[fin][i]))
            if bad:
                fails += 1
                print("FAIL %s: %s" % (tag, "; ".join(bad)), flush=True)
        except Exception as e:  # a compile error or a fault: report, go on
            fails += 1
            print("FAIL %s: %s" % (tag, str(e).splitlines()[0] if str(e) else
                                   type(e).__name__), flush=True)
            if "illegal" in str(e).lower():
                print("(a fault leaves the context unusable: stopping)")
                break
    print("%d kernels run on the GPU, %d failed" % (ran, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
