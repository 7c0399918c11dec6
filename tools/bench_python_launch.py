#!/usr/bin/env python3
"""bench_python_launch.py - what one call of a tilec kernel costs from
Python, next to the cheapest calls NumPy, torch and Triton make.

usage: tools/bench_python_launch.py [--calls N] [--rounds R] [--cpu-only]
                                   [--breakdown] [--cpu-time]

Run from the source tree after tools/setup.sh (the libraries come from
./build unless TILEC_LIBRARY_DIR says otherwise).  Where TILEC_PRETRANSLATED
names a directory of pre-translated kernels (python/tests/pretranslated.py;
tools/python_gpu_prepare.sh writes one for a GPU machine without libclang),
the kernels are built from it with tilec.load, on libtilec_runtime alone;
the calls timed are the same.  A benchmark, not a
test: it checks each kernel once against NumPy, then times loops of N
back-to-back calls R times and prints the best and median per-call time
of the rounds (the best is the overhead; the median says how noisy the
machine was).  A tilec kernel's calls are timed on both of the package's
paths where the C extension (tilec._fast) is built: through it and
through ctypes alone (as TILEC_PYTHON_CTYPES=1 makes every call), their
rounds alternating in one process so that a loaded machine slows both
alike.  --cpu-time times the calling thread's CPU time instead of the
wall clock (for a shared CPU machine; meaningless for GPU launches,
whose synchronize waits).

CPU: a 64-element f32 add (one block) compiled for openmp, called on
NumPy arrays with every extent inferred, against np.add(x, y, out=z) on
the same arrays: the cheapest useful call into compiled code that NumPy
has (a ufunc with its output given).

CUDA, where torch and a GPU exist: the same kernel compiled for cuda on
torch tensors (the launch goes on torch's current stream), against
torch.add(x, y, out=z) and, where Triton is installed, a Triton kernel
doing the same add.  GPU launches are asynchronous: N calls are issued
and the loop ends with one synchronize, so the figure is the host's cost
per launch as long as the GPU keeps up (each kernel runs for about as
long as a launch takes; the synchronize is inside the timed loop).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("TILEC_LIBRARY_DIR", os.path.join(ROOT, "build"))

import numpy as np  # noqa: E402

import tilec  # noqa: E402

PRETRANSLATED = os.environ.get("TILEC_PRETRANSLATED")

ADD = """#include <tilec.h>

TILE_KERNEL void
add(int N, const f32 X[N], const f32 Y[N], f32 Z[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment f32 x[64];
	tile_fragment f32 y[64];
	tile_copy(x, &X[b * 64]);
	tile_copy(y, &Y[b * 64]);
	tile_parallel(i, 64)
		x[i] = x[i] + y[i];
	tile_copy(&Z[b * 64], x);
}
"""
N = 64


def build(target):
    """The add kernel: tilec.compile's, or tilec.load's of the
    pre-translated directory."""
    if PRETRANSLATED:
        sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
        import pretranslated
        return pretranslated.load(PRETRANSLATED, ADD, target)
    return tilec.compile(ADD, target=target)


clock = time.perf_counter


def per_call(fn, calls, rounds, sync=None):
    """(best, median) seconds per call over `rounds` loops of `calls`."""
    return alternating([(None, fn)], calls, rounds, sync)[0]


def alternating(ways, calls, rounds, sync=None):
    """[(best, median)] seconds per call of each (prepare, fn) in `ways`,
    their rounds taken in turn: prepare() (when not None) sets up before
    each of fn's rounds."""
    times = [[] for _ in ways]
    for prepare, fn in ways:
        if prepare:
            prepare()
        for _ in range(max(calls // 10, 10)):
            fn()
    if sync:
        sync()
    for _ in range(rounds):
        for (prepare, fn), got in zip(ways, times):
            if prepare:
                prepare()
            t0 = clock()
            for _ in range(calls):
                fn()
            if sync:
                sync()
            got.append((clock() - t0) / calls)
    return [(min(t), statistics.median(t)) for t in times]


def both_paths(label, k, fn, calls, rounds, sync=None):
    """Report fn (a call of kernel k) through the C extension and through
    ctypes alone, alternating; ctypes alone where the extension is not
    in use."""
    fast = k._fast
    if fast is None:
        report(label + " [ctypes]", per_call(fn, calls, rounds, sync))
        return

    def on():
        k._fast = fast

    def off():
        k._fast = None
    try:
        ext, ct = alternating([(on, fn), (off, fn)], calls, rounds, sync)
    finally:
        k._fast = fast
    report(label + " [extension]", ext)
    report(label + " [ctypes]", ct)


def report(label, best_median):
    best, median = best_median
    print("%-56s %8.2f us %8.2f us" % (label, best * 1e6, median * 1e6))


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, Python %s, NumPy %s, load %s" % (
        cpu, os.cpu_count() or 0, platform.python_version(), np.__version__,
        " ".join("%.2f" % x for x in os.getloadavg()))


def cpu(calls, rounds, breakdown):
    k = build("openmp")
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, N).astype(np.float32)
    y = rng.uniform(-1, 1, N).astype(np.float32)
    z = np.full(N, np.nan, np.float32)
    k(x, y, z)
    if not np.array_equal(z, x + y):
        sys.exit("bench_python_launch: the openmp add computed a wrong sum")
    both_paths("tilec openmp add(x, y, z), N inferred", k,
               lambda: k(x, y, z), calls, rounds)
    both_paths("tilec openmp add(N, x, y, z)", k,
               lambda: k(N, x, y, z), calls, rounds)
    report("np.add(x, y, out=z)", per_call(
        lambda: np.add(x, y, out=z), calls, rounds))
    if breakdown:
        parts(k, x, y, z, calls, rounds, None)


def cuda(calls, rounds, breakdown):
    try:
        import torch
    except ImportError:
        print("cuda: skipped (torch is not installed)")
        return
    if not torch.cuda.is_available():
        print("cuda: skipped (torch sees no CUDA device)")
        return
    print("gpu: %s, torch %s" % (torch.cuda.get_device_name(),
                                 torch.__version__))
    k = build("cuda")
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    z = torch.full_like(x, float("nan"))
    k(x, y, z)
    torch.cuda.synchronize()
    if not torch.equal(z, x + y):
        sys.exit("bench_python_launch: the cuda add computed a wrong sum")
    sync = torch.cuda.synchronize
    both_paths("tilec cuda add(x, y, z), N inferred", k,
               lambda: k(x, y, z), calls, rounds, sync)
    report("torch.add(x, y, out=z)", per_call(
        lambda: torch.add(x, y, out=z), calls, rounds, sync))
    if breakdown:
        parts(k, x, y, z, calls, rounds, sync)
    try:
        import triton
        import triton.language as tl
    except ImportError:
        print("triton: skipped (not installed)")
        return

    @triton.jit
    def add_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(Z + i, tl.load(X + i, mask=m) + tl.load(Y + i, mask=m),
                 mask=m)

    z.fill_(float("nan"))
    add_kernel[(1,)](x, y, z, N, BLOCK=64)
    torch.cuda.synchronize()
    if not torch.equal(z, x + y):
        sys.exit("bench_python_launch: the triton add computed a wrong sum")
    report("triton add_kernel[(1,)](x, y, z, N)", per_call(
        lambda: add_kernel[(1,)](x, y, z, N, BLOCK=64), calls, rounds, sync))


def parts(k, x, y, z, calls, rounds, sync):
    """Where one call's time goes (the kernel k on x, y, z: torch tensors
    on a GPU, or NumPy arrays on the CPU): the torch attributes read per
    tensor, the three tensors described into the call's tilec_arg array
    by the ctypes path's Python (what Kernel.__call__ does before the
    launch), torch's current stream, a ctypes call that does nothing,
    the launch alone (tilec_launch_checked on arguments described once:
    the runtime's checks, the grid, the backend's launch), and the C
    extension's launch(args, kwargs) called directly (describing and
    launching, without Kernel.__call__'s frame)."""
    from tilec import _arrays, _lib
    gpu = k._gpu
    print("parts of a %s call:" % k.target)
    if gpu:
        for what, fn in (("x.dtype", lambda: x.dtype),
                         ("x.get_device()", lambda: x.get_device()),
                         ("x.is_cuda", lambda: x.is_cuda),
                         ("x.data_ptr()", lambda: x.data_ptr()),
                         ("x.numel()", lambda: x.numel()),
                         ("x.shape", lambda: x.shape),
                         ("x.is_contiguous()", lambda: x.is_contiguous())):
            report("  " + what, per_call(fn, calls, rounds))
    at, slots = k._scratch(3)
    kinds = _arrays.KINDS
    for v in (x, y, z):
        _arrays.describer(v, None)  # the type's describer in KINDS

    def describe():
        for slot, value in zip(slots, (x, y, z)):
            kinds[type(value)](slot, 0, value, [], [])
    report("  describe x, y, z (Python, the ctypes path)",
           per_call(describe, calls, rounds))
    if gpu:
        report("  torch's current stream", per_call(
            lambda: _arrays.stream_of(0), calls, rounds))
    rt = _lib.runtime()
    report("  a ctypes call that does nothing", per_call(
        lambda: rt.tilec_launch_problem(k._kp), calls, rounds))
    describe()
    stream = _arrays.stream_of(0) if gpu else None
    launch, kaddr = _lib.launch_checked, k._kaddr
    report("  tilec_launch_checked alone (by ctypes)", per_call(
        lambda: launch(kaddr, at, 3, stream), calls, rounds, sync))
    if k._fast is not None:
        fast, args, kw = k._fast, (x, y, z), {}
        report("  the extension's launch(args, kwargs) alone", per_call(
            lambda: fast(args, kw), calls, rounds, sync))
    if sync:
        sync()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpu-only", action="store_true")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time the parts of a call")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the thread's CPU time, not the wall clock")
    o = ap.parse_args()
    if o.cpu_time:
        global clock
        clock = time.thread_time
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                              "HEAD"], capture_output=True, text=True,
                             check=False).stdout.strip()
    except OSError:
        rev = ""
    if not rev and os.path.exists(os.path.join(ROOT, "REVISION")):
        with open(os.path.join(ROOT, "REVISION")) as f:  # a prepared copy
            rev = f.read().strip()
    print("date: %s UTC, tilec %s (%s), kernels by %s" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()), tilec.__version__,
        rev or "?", "tilec.load of %s" % PRETRANSLATED if PRETRANSLATED
        else "tilec.compile"))
    print("machine: %s" % machine())
    print("%d calls a round, %d rounds" % (o.calls, o.rounds))
    print("%-56s %11s %11s" % ("per call", "best", "median"))
    print("call path: %s%s" % (tilec.call_path, "" if tilec.call_path ==
                                "extension" else " (the C extension is not "
                                "built, or TILEC_PYTHON_CTYPES is set)"))
    cpu(o.calls, o.rounds, o.breakdown)
    if not o.cpu_only:
        cuda(o.calls, o.rounds, o.breakdown)


if __name__ == "__main__":
    main()
