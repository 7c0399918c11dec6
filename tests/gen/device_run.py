#!/usr/bin/env python3
"""device_run.py - run the programs device_prepare.py translated, without tilec.

usage: python3 device_run.py [--deadline 480] [--jobs N] [--backends
                             oracle,openmp,cuda] [--only SEED,...] [--nvcc]
                             [--compile-only] [--omp-threads 2]

In the directory device_prepare.py wrote (programs.tar.xz is unpacked
into programs/ beside it on the first run).  For each gen_SEED.json, in
parallel over --jobs processes (default: every core): fresh inputs made
from the seed (floats of 8 significant bits, exact in every float type,
with a random sign; integers +-1..7, u8 1..15, bools 0/1), outputs
poisoned (0xff bytes in floats: NaN; 0xab in integers) except
accumulators, which are inputs too; fp8 inputs are values of the type in
the same range, i4 ones +-1..7 packed two a byte (low nibble first); the oracle (cc) gives the expected
outputs; the OpenMP translation (cc -fopenmp) and the CUDA translation
run on the same inputs.  CUDA compiles with NVRTC (found and checked
once at the start; nvcc -cubin where it does not work, or with --nvcc)
and launches through the driver API, both through ctypes: no CuPy
needed.  Integers compare exactly, floats by the largest |got - want|
over the largest |want| within the kernel's tolerance (exact kernels:
equal); a NaN where the oracle has none (a poisoned output left) fails.

Each file's CPU part and GPU part run in their own processes: a crash or
a GPU fault fails that file's remaining kernels, named, and the run goes
on.  Files not started by the deadline (seconds from the start) are left
out, and those running then are stopped and counted as unfinished.
Prints one line per mismatch, one summary line per backend and last
'N passed, N failed'; exit status 1 if anything failed.
"""
import argparse
import concurrent.futures as cf
import ctypes
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

HERE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE_DIR, os.path.join(os.path.dirname(os.path.dirname(
    HERE_DIR)), "tools")]
import launch_manifest  # noqa: E402

CARRY = os.path.dirname(os.path.abspath(__file__))
INC = os.path.join(CARRY, "include")
HERE = os.path.join(CARRY, "programs")     # programs.tar.xz unpacked
NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16,
      "bf16": np.uint16, "i64": np.int64, "i32": np.int32, "i8": np.int8,
      "u8": np.uint8, "bool": np.uint8, "fp8e4m3": np.uint8,
      "fp8e5m2": np.uint8, "i4": np.uint8}
INTS = ("i64", "i32", "i8", "u8", "bool", "i4")


def fp8_table(dt):
    """The value of each of the 256 codes of an fp8 type (OCP E4M3: NaN
    at 0x7f and 0xff, no infinity; E5M2: IEEE-like)."""
    out = np.empty(256)
    for b in range(256):
        if dt == "fp8e4m3":
            e, m = (b >> 3) & 15, b & 7
            v = math.nan if b & 127 == 127 else \
                math.ldexp(m, -9) if e == 0 else math.ldexp(m + 8, e - 10)
        else:
            e, m = (b >> 2) & 31, b & 3
            v = (math.nan if m else math.inf) if e == 31 else \
                math.ldexp(m, -16) if e == 0 else math.ldexp(m + 4, e - 17)
        out[b] = -v if b & 128 else v
    return out


FP8 = {dt: fp8_table(dt) for dt in ("fp8e4m3", "fp8e5m2")}


def i4_unpack(a, n):
    """The first n elements of packed i4 bytes, as ints."""
    b = a.astype(np.int64)
    v = np.empty(2 * len(b), dtype=np.int64)
    v[0::2], v[1::2] = b & 15, b >> 4
    return ((v ^ 8) - 8)[:n]


# --- inputs, the oracle, comparison -----------------------------------------

def count(t, shape):
    n = 1
    for d in t["dims"]:
        n *= shape[d]
    return n


def nbytes(t, shape):
    """The elements of tensor t's array: packed i4 takes half a byte."""
    n = count(t, shape)
    return (n + 1) // 2 if t["dtype"] == "i4" else n


def inputs(seed, ki, k):
    """Every tensor's initial contents: random if read, else poison."""
    out = []
    for ti, t in enumerate(k["tensors"]):
        n, dt = nbytes(t, k["shape"]), t["dtype"]
        r = np.random.default_rng([seed, ki, ti])
        if not t["read"]:     # poison: NaN in every float type
            out.append(np.frombuffer((b"\xab" if dt in INTS else b"\xff") *
                                     (n * np.dtype(NP[dt]).itemsize),
                                     dtype=NP[dt]).copy())
        elif dt == "i4":
            v = r.integers(1, 8, 2 * n) * r.choice([-1, 1], 2 * n)
            out.append(((v[0::2] & 15) | (v[1::2] & 15) << 4).astype(np.uint8))
        elif dt in FP8:
            # codes of magnitudes 1/16 .. 1 with a random sign
            mag = np.abs(FP8[dt][:128])
            codes = np.flatnonzero((mag >= 1 / 16) & (mag <= 1))
            out.append((r.choice(codes, n) | r.choice([0, 128], n))
                       .astype(np.uint8))
        elif dt == "bool":
            out.append(r.integers(0, 2, n).astype(np.uint8))
        elif dt == "u8":
            out.append(r.integers(1, 16, n).astype(np.uint8))
        elif dt in INTS:
            v = r.integers(1, 8, n) * r.choice([-1, 1], n)
            out.append(v.astype(NP[dt]))
        else:
            v = (r.integers(16, 257, n) / 256.0 * r.choice([-1, 1], n))
            if dt == "bf16":
                out.append((v.astype(np.float32).view(np.uint32) >> 16)
                           .astype(np.uint16))
            else:
                out.append(v.astype(NP[dt]))
    return out


def call_entry(lib, k, arrays):
    """tilec_entry_KERNEL(void **args) of a shared library on arrays."""
    keep, args = [], []
    for p in k["shape"]:
        v = ctypes.c_int(k["shape"][p])
        keep.append(v)
        args.append(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p))
    for a in arrays:
        ptr = ctypes.c_void_p(a.ctypes.data if a.size else 0)
        keep.append(ptr)
        args.append(ctypes.cast(ctypes.pointer(ptr), ctypes.c_void_p))
    argv = (ctypes.c_void_p * len(args))(*args)
    getattr(lib, "tilec_entry_" + k["kernel"])(argv)


def as_float(dt, a):
    if dt in FP8:
        return FP8[dt][a]
    if dt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def compare(k, got, want, tol=None):
    """'' if every written tensor matches, else what differs; tol in
    place of the kernel's own where given."""
    bad = []
    tol = k["tol"] if tol is None else tol
    for t, g, w in zip(k["tensors"], got, want):
        if not t["written"]:
            continue
        dt = t["dtype"]
        if dt == "i4":
            n = count(t, k["shape"])
            g, w = i4_unpack(g, n), i4_unpack(w, n)
        if dt in INTS:
            if not np.array_equal(g, w):
                i = int(np.argmax(g != w))
                bad.append("%s[%d]: got %s, want %s" % (t["name"], i, g[i], w[i]))
            continue
        gf, wf = as_float(dt, g), as_float(dt, w)
        if tol == 0:              # exact values: equal, NaN where NaN
            if not np.array_equal(gf, wf, equal_nan=True):
                i = int(np.argmax(~((gf == wf) | (np.isnan(gf) & np.isnan(wf)))))
                bad.append("%s[%d]: got %s, want %s" % (t["name"], i, gf[i], wf[i]))
            continue
        if (np.isnan(gf) != np.isnan(wf)).any():
            i = int(np.argmax(np.isnan(gf) != np.isnan(wf)))
            bad.append("%s[%d]: got %s, want %s" % (t["name"], i, gf[i], wf[i]))
            continue
        fin = ~np.isnan(wf)
        if not fin.any():
            continue
        scale = max(float(np.abs(wf[fin]).max()), 1e-30)
        err = np.abs(gf[fin] - wf[fin]) / scale
        if err.max() > tol:
            i = int(np.argmax(err))
            bad.append("%s: rel err %.3g (tol %g), got %s want %s" % (
                t["name"], err.max(), tol, gf[fin][i], wf[fin][i]))
    return "; ".join(bad)


def cc_shared(src, lib, flags):
    p = subprocess.run([os.environ.get("CC", "cc")] + flags +
                       ["-fPIC", "-shared", "-o", lib, src, "-lm"],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("cc: " + (p.stderr.strip().splitlines() or ["?"])[0])
    return ctypes.CDLL(lib)


def report(backend, kernel, ok, detail=""):
    print(json.dumps({"backend": backend, "kernel": kernel, "ok": ok,
                      "detail": detail}), flush=True)


def expected(meta, tmp):
    """Each kernel's inputs and the oracle's outputs."""
    so = os.path.join(tmp, "oracle.so")
    if os.path.exists(so):        # the CPU part compiled it
        lib = ctypes.CDLL(so)
    else:
        lib = cc_shared(os.path.join(HERE, "gen_%d.oracle.c" % meta["seed"]),
                        so, ["-O1"])
    out = []
    for ki, k in enumerate(meta["kernels"]):
        ins = inputs(meta["seed"], ki, k)
        want = [a.copy() for a in ins]
        call_entry(lib, k, want)
        out.append((ins, want))
    return out


# --- the two parts of a file, each in its own process -----------------------

def part_cpu(meta, tmp):
    """The oracle, then the OpenMP output on the same inputs."""
    ref = expected(meta, tmp)
    for k in meta["kernels"]:
        report("oracle", k["kernel"], True)
    if "openmp" in meta["errors"]:
        for k in meta["kernels"]:
            report("openmp", k["kernel"], False, "does not translate: " +
                   meta["errors"]["openmp"].splitlines()[0])
        return
    lib = cc_shared(os.path.join(HERE, "gen_%d.omp.c" % meta["seed"]),
                    os.path.join(tmp, "omp.so"),
                    ["-O2", "-fno-math-errno", "-fopenmp", "-march=native",
                     "-I", INC])
    for k, (ins, want) in zip(meta["kernels"], ref):
        got = [a.copy() for a in ins]
        call_entry(lib, k, got)
        d = compare(k, got, want)
        report("openmp", k["kernel"], not d, d)


_ENCODER = {}    # cuTensorMapEncodeTiled, looked up on the first map


class Cuda:
    """The driver API through ctypes: one context, modules from cubins."""

    def __init__(self):
        self.d = ctypes.CDLL("libcuda.so.1")
        self.check(self.d.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.d.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(self.d.cuCtxCreate_v2(ctypes.byref(self.ctx), 0, dev),
                   "cuCtxCreate")
        self.d.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64),
                                         ctypes.c_size_t]
        self.d.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p,
                                           ctypes.c_size_t]
        self.d.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                           ctypes.c_size_t]
        self.d.cuMemFree_v2.argtypes = [ctypes.c_uint64]

    def check(self, rc, what):
        if rc:
            name = ctypes.c_char_p()
            self.d.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError("%s: %s" % (what, (name.value or b"?").decode()))

    def load(self, cubin):
        mod = ctypes.c_void_p()
        self.check(self.d.cuModuleLoad(ctypes.byref(mod), cubin.encode()),
                   "cuModuleLoad")
        return mod

    def run(self, mod, name, grid, threads, smem, scalars, arrays,
            launch=None, env=None):
        """Launch name with the scalars, then the arrays copied to the
        device and back; a kernel whose launch document has tensor_maps
        gets them after its parameters, built by launch_manifest's rule
        (unbuilt where TMA cannot take the tensor: its fallback runs)."""
        fn = ctypes.c_void_p()
        self.check(self.d.cuModuleGetFunction(ctypes.byref(fn), mod,
                                              name.encode()), "GetFunction")
        if smem > 48 * 1024:     # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check(self.d.cuFuncSetAttribute(fn, 8, smem), "smem")
        ptrs, keep = [], []
        try:
            for a in arrays:
                p = ctypes.c_uint64()
                self.check(self.d.cuMemAlloc_v2(ctypes.byref(p), max(a.nbytes, 1)),
                           "cuMemAlloc")
                ptrs.append(p)
                if a.nbytes:
                    self.check(self.d.cuMemcpyHtoD_v2(p.value, a.ctypes.data,
                                                      a.nbytes), "HtoD")
            vals = [ctypes.c_int(s) for s in scalars] + ptrs
            maps = (launch or {}).get("tensor_maps", [])
            if maps:
                if "encode" not in _ENCODER:
                    _ENCODER["encode"] = launch_manifest.cuda_encoder()
                tensors = [q for q in launch["params"] if q["kind"] == "tensor"]
                at = {q["name"]: (q, p.value) for q, p in zip(tensors, ptrs)}
                for m in maps:
                    q, ptr = at[m["tensor"]]
                    b = launch_manifest.tensor_map(
                        _ENCODER["encode"], m, q, ptr,
                        [evaluate(e, env) for e in q["shape"]])
                    vals.append((ctypes.c_ubyte * len(b)).from_buffer(b))
            keep = (ctypes.c_void_p * len(vals))(*[
                ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
            if all(grid):
                self.check(self.d.cuLaunchKernel(
                    fn, *[ctypes.c_uint(g) for g in grid], ctypes.c_uint(threads),
                    ctypes.c_uint(1), ctypes.c_uint(1), ctypes.c_uint(smem),
                    None, keep, None), "cuLaunchKernel")
            self.check(self.d.cuCtxSynchronize(), "the kernel")
            for p, a in zip(ptrs, arrays):
                if a.nbytes:
                    self.check(self.d.cuMemcpyDtoH_v2(a.ctypes.data, p.value,
                                                      a.nbytes), "DtoH")
        finally:
            for p in ptrs:
                self.d.cuMemFree_v2(p.value)


def cuda_roots():
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
             "/usr/local/cuda"]
    nv = shutil.which("nvcc")
    if nv:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nv))))
    return [r for r in roots if r]


def cuda_include():
    """The toolkit's include directory (cuda_fp16.h), for NVRTC."""
    for r in cuda_roots():
        if os.path.exists(os.path.join(r, "include", "cuda_fp16.h")):
            return os.path.join(r, "include")
    return None


def load_nvrtc():
    dirs = [""] + [os.path.join(r, "lib64") for r in cuda_roots()]
    for d in dirs:
        for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
            try:
                return ctypes.CDLL(os.path.join(d, name) if d else name)
            except OSError:
                pass
    return None


def nvrtc_works(arch):
    """Whether NVRTC compiles a file that includes the fp16 header."""
    tmp = tempfile.mkdtemp(prefix="devrun_")
    try:
        cu = os.path.join(tmp, "probe.cu")
        with open(cu, "w") as f:
            f.write('#include <cuda_fp16.h>\nextern "C" __global__ void '
                    'probe(__half *p) { p[0] = __float2half(1.0f); }\n')
        compile_cuda(cu, arch, os.path.join(tmp, "probe.cubin"))
        return ""
    except RuntimeError as e:
        return str(e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compile_cuda(cu, arch, out):
    """cu to a cubin for arch: NVRTC, else (or with --nvcc) nvcc."""
    nv = None if os.environ.get("DEVICE_RUN_NVCC") else load_nvrtc()
    if nv is None:
        if not shutil.which("nvcc"):
            raise RuntimeError("neither libnvrtc nor nvcc found")
        p = subprocess.run(["nvcc", "-cubin", "-std=c++17", "-arch=" + arch,
                            "-I", INC, "-o", out, cu], capture_output=True,
                           text=True)
        if p.returncode:
            raise RuntimeError("nvcc: " + " / ".join(
                l for l in p.stderr.splitlines() if "error" in l)[:500])
        return out
    prog = ctypes.c_void_p()
    src = open(cu, "rb").read()
    if nv.nvrtcCreateProgram(ctypes.byref(prog), src, cu.encode(), 0, None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = ["--gpu-architecture=" + arch, "-std=c++17", "-default-device",
            "--include-path=" + INC]
    inc = cuda_include()
    if inc:
        opts.append("--include-path=" + inc)
    copts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = nv.nvrtcCompileProgram(prog, len(opts), copts)
    if rc:
        n = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        nv.nvrtcGetProgramLog(prog, log)
        raise RuntimeError("nvrtc: " + " / ".join(
            l for l in log.value.decode(errors="replace").splitlines()
            if "error" in l)[:500])
    n = ctypes.c_size_t()
    nv.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    nv.nvrtcGetCUBIN(prog, buf)
    with open(out, "wb") as f:
        f.write(buf.raw)
    return out


def evaluate(expr, env):
    """A launch-manifest expression tree over env (C integer semantics,
    launch_manifest.py, copied here by device_prepare.py)."""
    return launch_manifest.evaluate(expr, env)


def part_gpu(meta, tmp, arch, compile_only):
    """The CUDA output on the oracle's inputs, every kernel launched."""
    if "cuda" in meta["errors"]:
        for k in meta["kernels"]:
            report("cuda", k["kernel"], False, "does not translate: " +
                   meta["errors"]["cuda"].splitlines()[0])
        return
    cubin = compile_cuda(os.path.join(HERE, "gen_%d.cu" % meta["seed"]), arch,
                         os.path.join(tmp, "gen.cubin"))
    if compile_only:
        for k in meta["kernels"]:
            report("cuda", k["kernel"], True, "compiled only")
        return
    ref = expected(meta, tmp)
    gpu = Cuda()
    mod = gpu.load(cubin)
    for k, (ins, want) in zip(meta["kernels"], ref):
        L = k["launch"]
        env = dict(k["shape"])
        env.update(L.get("tunables", {}))
        grid = [max(evaluate(g, env), 0) for g in L["grid"]]
        got = [a.copy() for a in ins]
        try:
            gpu.run(mod, k["kernel"], grid, L["threads"], L.get("smem_bytes", 0),
                    [k["shape"][p] for p in k["shape"]], got, L, env)
        except RuntimeError as e:     # a fault: the context is lost
            report("cuda", k["kernel"], False, str(e))
            raise
        # fp8 gemms summed on wgmma, promoted per gemm: the manifest says
        # how far they may be from exact sums (docs/launch.md).
        promoted = L.get("tolerance", {}).get("promoted_sums", 0)
        d = compare(k, got, want, max(k["tol"], promoted))
        report("cuda", k["kernel"], not d, d)


def child(path, part, tmp, arch, compile_only):
    meta = json.load(open(path))
    if part == "cpu":
        part_cpu(meta, tmp)
    else:
        part_gpu(meta, tmp, arch, compile_only)


# --- the driver --------------------------------------------------------------

def run_part(path, part, tmp, a, until):
    """Run one part of one file in a process; its reports, and why it
    stopped early ('' if it did not)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path,
           "--part", part, "--tmp", tmp, "--arch", a.arch] + (
               ["--compile-only"] if a.compile_only else [])
    env = dict(os.environ, OMP_NUM_THREADS=str(a.omp_threads))
    left = until - time.time()
    if left <= 0:
        return [], "deadline"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=min(left, a.file_timeout))
        out, err = p.stdout, p.stderr
        why = "" if p.returncode == 0 else "signal %d" % -p.returncode \
            if p.returncode < 0 else "exit %d" % p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = ""
        why = "deadline" if time.time() >= until - 1 else "hung (%ds)" % a.file_timeout
    reps = []
    for line in out.splitlines():
        try:
            reps.append(json.loads(line))
        except ValueError:
            pass
    if why and why != "deadline":
        last = [l for l in err.strip().splitlines() if l.strip()]
        why += ": " + (last[-1] if last else "no message")
    return reps, why


def run_file(path, a, until):
    meta = json.load(open(path))
    names = [k["kernel"] for k in meta["kernels"]]
    parts = []
    if "openmp" in a.backends or "oracle" in a.backends:
        parts.append(("cpu", ["oracle", "openmp"]))
    if "cuda" in a.backends:
        parts.append(("gpu", ["cuda"]))
    results = []      # (backend, kernel, ok, detail); ok None: not finished
    tmp = tempfile.mkdtemp(prefix="devrun_")
    try:
        for part, backends in parts:
            results += run_one_part(path, part, backends, names, tmp, a, until)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return meta["seed"], results


def run_one_part(path, part, backends, names, tmp, a, until):
    """One part's results; the kernels it did not report fail (or are
    unfinished, at the deadline) with the reason it stopped."""
    reps, why = run_part(path, part, tmp, a, until)
    results, seen = [], set()
    for r in reps:
        seen.add((r["backend"], r["kernel"]))
        results.append((r["backend"], r["kernel"], r["ok"], r["detail"]))
    for b in backends:
        for n in names:
            if (b, n) not in seen:
                results.append((b, n, None if why == "deadline" else False,
                                "%s part stopped: %s" % (part, why or "?")))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deadline", type=float, default=480)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--backends", default="oracle,openmp,cuda")
    ap.add_argument("--only", default="", help="seeds, comma-separated")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--omp-threads", type=int, default=2)
    ap.add_argument("--file-timeout", type=float, default=180)
    ap.add_argument("--compile-only", action="store_true",
                    help="CUDA: compile, do not launch (no GPU)")
    ap.add_argument("--nvcc", action="store_true",
                    help="CUDA: compile with nvcc even where NVRTC is")
    ap.add_argument("--child")
    ap.add_argument("--part")
    ap.add_argument("--tmp")
    a = ap.parse_args()
    if not a.child and not os.path.exists(os.path.join(HERE, "index.json")):
        with tarfile.open(os.path.join(CARRY, "programs.tar.xz")) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(CARRY, filter="data")
            else:
                tar.extractall(CARRY)
    index = json.load(open(os.path.join(HERE, "index.json")))
    a.arch = a.arch or index["arch"]
    if a.child:
        child(a.child, a.part, a.tmp, a.arch, a.compile_only)
        return 0
    start = time.time()
    until = start + a.deadline
    a.backends = [b for b in a.backends.split(",") if b]
    if "cuda" in a.backends and not a.compile_only:
        try:
            ctypes.CDLL("libcuda.so.1")
        except OSError:
            print("cuda: no libcuda.so.1 (no GPU driver): left out")
            a.backends.remove("cuda")
    if a.nvcc:
        os.environ["DEVICE_RUN_NVCC"] = "1"
    if "cuda" in a.backends:
        why = "--nvcc" if a.nvcc else nvrtc_works(a.arch)
        if not why:
            print("cuda: compiling with NVRTC (libnvrtc)")
        elif shutil.which("nvcc"):
            os.environ["DEVICE_RUN_NVCC"] = "1"
            print("cuda: compiling with nvcc -cubin (NVRTC: %s)" % why)
        else:
            print("cuda: no working NVRTC (%s) and no nvcc: every file fails"
                  % why)
    only = {int(s) for s in a.only.split(",") if s}
    files = sorted(glob.glob(os.path.join(HERE, "gen_*.json")),
                   key=lambda p: int(os.path.basename(p)[4:-5]))
    files = [p for p in files if not only or
             int(os.path.basename(p)[4:-5]) in only]
    tally = {b: [0, 0, 0] for b in a.backends}   # passed, failed, unfinished
    # the fast_gemm kernels on the GPU, by the path device_prepare.py
    # recorded (wgmma+tma, wgmma, mma): passed, failed, unfinished
    paths = {}
    for p in files:
        for k in json.load(open(p))["kernels"]:
            if k.get("path"):
                paths[(int(os.path.basename(p)[4:-5]), k["kernel"])] = k["path"]
    by_path = {}
    started = 0
    with cf.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        futs = [ex.submit(run_file, p, a, until) for p in files]
        for f in cf.as_completed(futs):
            seed, results = f.result()
            started += any(ok is not None for _, _, ok, _ in results)
            for b, n, ok, detail in results:
                if b not in tally:
                    continue
                tally[b][0 if ok else 1 if ok is False else 2] += 1
                if b == "cuda" and (seed, n) in paths:
                    by_path.setdefault(paths[(seed, n)], [0, 0, 0])[
                        0 if ok else 1 if ok is False else 2] += 1
                if ok is False:
                    print("MISMATCH %s seed %d kernel %s: %s" % (
                        b, seed, n, detail), flush=True)
    for b in a.backends:
        p, f, u = tally[b]
        print("%s: %d programs, %d mismatches%s" % (
            b + (" (compiled only)" if b == "cuda" and a.compile_only else ""),
            p + f, f, ", %d not finished by the deadline" % u if u else ""))
    for path in sorted(by_path):
        p, f, u = by_path[path]
        print("  of them fast_gemm kernels on %s: %d, %d mismatches%s" % (
            path, p + f, f, ", %d not finished" % u if u else ""))
    passed = sum(t[0] for t in tally.values())
    failed = sum(t[1] for t in tally.values())
    print("%d of %d files in %.0f s (features: %s)" % (
        started, len(files), time.time() - start, ",".join(index["features"])))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
