#!/usr/bin/env python3
"""gpu_prepare.py - generated programs for a GPU machine without tilec.

usage: gpu_prepare.py TILEC SRCROOT OUTDIR [--seeds A:B] [--kernels N]
                      [--arch sm_90a] [--features F]

The GPU machine has no libclang, so everything that needs the translator
happens here.  For each seed: the tile program (tilegen.py), its CUDA
translation for ARCH with --standalone (one file for all its kernels),
each kernel's launch manifest, random inputs (as tilec run makes them:
floats of magnitude 1/16..1 with a random sign, integers +-1..7, u8
1..15, bools 0/1; tensors both read and written start random too), and
the expected outputs, computed here by the generator's oracle (checked
against tilec's reference interpreter by fuzz.py's oracle backend) from
outputs poisoned as gpu_run.py poisons them, so an element no store
writes (a masked, bounded or scattered one) is expected to keep it.
OUTDIR gets cases.json, the .cu files, data/*.bin and gpu_run.py; on the
GPU machine:

    python3 gpu_run.py cases.json        (NVRTC and the driver via CuPy)

compiles every file, launches every kernel on poisoned outputs and
compares: integers exactly, floats within the tolerance of the kernel's
narrowest float type.
"""
import argparse
import ctypes
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools")
sys.path[:0] = [HERE, TOOLS]
import launch_manifest  # noqa: E402
import tilegen  # noqa: E402

FMT = {"f64": "d", "f32": "f", "i64": "q", "i32": "i", "i8": "b", "u8": "B",
       "bool": "B", "f16": "H", "bf16": "H"}


def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def bf16_bits(v):
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    return u >> 16          # inputs are exact in bf16 (below)


def random_value(r, dt):
    if dt == "bool":
        return r.randint(0, 1)
    if dt == "u8":
        return r.randint(1, 15)
    if tilegen.is_int(dt):
        return r.choice([-1, 1]) * r.randint(1, 7)
    # a value exact in every float type: 8 significant bits
    m = r.randint(16, 256) / 256.0
    v = r.choice([-1, 1]) * m
    if dt == "f16":
        return f16_bits(v)
    if dt == "bf16":
        return bf16_bits(v)
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tilec")
    ap.add_argument("srcroot")
    ap.add_argument("out")
    ap.add_argument("--seeds", default="1:21")
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--features", default="")
    ap.add_argument("--max-bytes", type=int, default=1 << 20,
                    help="leave out kernels whose tensors hold more")
    a = ap.parse_args()
    feats = tilegen.feature_set(a.features)
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(os.path.join(a.out, "data"))
    shutil.copy(os.path.join(HERE, "gpu_run.py"), a.out)
    shutil.copy(os.path.join(TOOLS, "launch_manifest.py"), a.out)
    cases, skipped = [], 0
    lo, hi = map(int, a.seeds.split(":"))
    for seed in range(lo, hi):
        ks = tilegen.generate(seed, a.kernels, feats)
        tile, oracle, meta = tilegen.render(seed, ks, feats)
        src = os.path.join(a.out, "gen_%d.c" % seed)
        open(src, "w").write(tile)
        cu = os.path.join(a.out, "gen_%d.cu" % seed)
        p = subprocess.run([a.tilec, src, "-t", "cuda", "--arch", a.arch,
                            "--standalone", "-o", cu], capture_output=True,
                           text=True)
        if p.returncode:
            print("seed %d: does not translate for cuda:\n%s" % (seed, p.stderr))
            continue
        man = subprocess.run([a.tilec, src, "-t", "cuda", "--arch", a.arch,
                              "--emit=launch"], capture_output=True, text=True,
                             check=True).stdout
        launches = launch_manifest.by_name(man)
        # the oracle as a shared library, called through ctypes
        osrc = os.path.join(a.out, "gen_%d.oracle.c" % seed)
        open(osrc, "w").write(oracle)
        lib = os.path.join(a.out, "gen_%d.oracle.so" % seed)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, osrc, "-lm"],
                       check=True)
        so = ctypes.CDLL(os.path.abspath(lib))
        for k, m in zip(ks, meta):
            size = sum(tilegen.SIZE[t.dtype] * math.prod(
                k.P[d] for d in t.dims) for t in k.tensors)
            if size > a.max_bytes:
                skipped += 1
                continue
            r = random.Random("%d/%s/inputs" % (seed, k.name))
            args, keep, tensors = [], [], []
            for pname in k.params:
                v = ctypes.c_int(k.P[pname])
                keep.append(v)
                args.append(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p))
            for t in k.tensors:
                n = 1
                for d in t.dims:
                    n *= k.P[d]
                written = not t.const
                reads = t.const or t.name.startswith("Acc")
                if reads:
                    vals = [random_value(r, t.dtype) for _ in range(n)]
                    data = struct.pack("<%d%s" % (n, FMT[t.dtype]), *vals)
                else:
                    # gpu_run.py's poison: an element a masked, bounded
                    # or scattered store leaves is expected to stay it
                    data = b"\xab" * (n * struct.calcsize("<" + FMT[t.dtype]))
                buf = ctypes.create_string_buffer(data, max(len(data), 1))
                ptr = ctypes.c_void_p(ctypes.addressof(buf))
                keep += [buf, ptr]
                args.append(ctypes.cast(ctypes.pointer(ptr), ctypes.c_void_p))
                base = "data/%d_%s_%s" % (seed, k.name, t.name)
                if reads:
                    open(os.path.join(a.out, base + ".in"), "wb").write(data)
                tensors.append({"name": t.name, "dtype": t.dtype, "n": n,
                                "input": base + ".in" if reads else None,
                                "output": base + ".out" if written else None,
                                "buf": buf, "bytes": len(data)})
            argv = (ctypes.c_void_p * len(args))(*args)
            getattr(so, "tilec_entry_" + k.name)(argv)
            for t in tensors:
                if t["output"]:
                    open(os.path.join(a.out, t["output"]), "wb").write(
                        t["buf"].raw[:t["bytes"]])
                del t["buf"], t["bytes"]
            text = tilegen.kernel_tile(k)
            tol = 0 if k.exact else max(k.tol or 0, 1e-2 if (
                "f16" in text or "bf16" in text) else 1e-5)
            cases.append({"seed": seed, "kernel": k.name, "cu": os.path.basename(cu),
                          "shape": {p: k.P[p] for p in k.params},
                          "launch": launches[k.name], "tensors": tensors,
                          "tol": tol})
        os.remove(lib)
    json.dump(cases, open(os.path.join(a.out, "cases.json"), "w"), indent=1)
    print("%d kernels (%d left out, over --max-bytes) in %s; on the GPU machine: cd %s && python3 gpu_run.py "
          "cases.json" % (len(cases), skipped, a.out, os.path.basename(a.out)))


if __name__ == "__main__":
    main()
