"""bench.py - tilec's CPU GEMMs against torch in one process (run.sh).

usage: python3 bench.py WORK QUICK [vnni | bind]

WORK holds the compiled kernels (NAME.so, from kernels/NAME.c) and
fill.so.  With `vnni`, only the VNNI int8 kernel is timed, at 16 and 1
threads, against torch._int_mm in a process run.sh starts with
ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI (oneDNN without AMX: the library
figure for CPUs without AMX); one small call is made with oneDNN's
verbose output on, so the log shows the ISA it used.  With `bind`, in a
process run.sh starts without OMP_PROC_BIND and OMP_PLACES, the fp32
kernels with and without strips and the skinny one at 16 threads (the
CPUs there are, if fewer), tilec placing its threads itself, and then
where each OpenMP thread ran (fill.c's thread_cpus).  Every kernel is checked first against a double-precision
reference computed here on ragged shapes, its output poisoned before the
call (integers exactly); a failure stops the run with status 1.  Then
each row times tilec and torch alternately (a warm-up call each, then
REPEATS calls each, medians), at 16, 8, 2 and 1 threads (those the
machine has), and the table comes last.  torch runs fp32 on MKL and bf16
and int8 on oneDNN (torch.mm, F.linear, torch._int_mm); without torch
only tilec is timed.  Rows that would pass the time budget are printed
as skipped.
"""
import ctypes
import os
import statistics
import struct
import sys
import time

WORK = sys.argv[1]
QUICK = len(sys.argv) > 2 and sys.argv[2] == "1"
VNNI_ONLY = len(sys.argv) > 3 and sys.argv[3] == "vnni"
BIND_ONLY = len(sys.argv) > 3 and sys.argv[3] == "bind"
START = time.monotonic()
BUDGET = float(os.environ.get("CPU_BENCH_BUDGET",
                              "50" if VNNI_ONLY or BIND_ONLY else "260"))
REPEATS = 5 if QUICK else 3
PAUSE = 0.02  # between calls: the other side's idle threads go to sleep

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

gomp = ctypes.CDLL("libgomp.so.1")  # the OpenMP runtime the kernels link
fill = ctypes.CDLL(os.path.join(WORK, "fill.so"))
for fn in ("fill_f32", "fill_bf16", "fill_i8"):
    getattr(fill, fn).argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_uint64]
fill.poison.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
fill.check_needs.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
fill.thread_cpus.argtypes = [ctypes.c_char_p, ctypes.c_size_t]

# kernel name -> (.so, entry symbol, operand type, result type)
KERNELS = {
    "gemm_f32": ("gemm_f32", "f32", "f32"),
    "gemm_f32_skinny": ("gemm_f32", "f32", "f32"),
    "gemm_f32_wide": ("gemm_f32", "f32", "f32"),
    "gemm_f32_nostrip": ("gemm_f32", "f32", "f32"),
    "gemm_bf16": ("gemm_bf16", "bf16", "f32"),
    "gemm_bf16_big": ("gemm_bf16", "bf16", "f32"),
    "gemm_i8": ("gemm_i8", "i8", "i32"),
    "gemm_i8_big": ("gemm_i8", "i8", "i32"),
    "gemm_i8_vnni": ("gemm_i8", "i8", "i32"),
}
SIZE = {"f32": 4, "bf16": 2, "i8": 1, "i32": 4}
TORCH = {"f32": "float32", "bf16": "bfloat16", "i8": "int8", "i32": "int32"}


def load(name):
    """The kernel's entry, or (None, why) where this CPU lacks what the
    file's tilec_cpu_needs names, as tilec's runtime checks it (fill.c's
    check_needs, which also asks Linux for the AMX state)."""
    fn, _, _ = KERNELS[name]
    lib = ctypes.CDLL(os.path.join(WORK, name + ".so"))
    try:
        needs = ctypes.c_char_p.in_dll(lib, "tilec_cpu_needs")
        needs = ctypes.string_at(ctypes.addressof(needs)).decode().split()
    except ValueError:
        needs = []
    why = ctypes.create_string_buffer(256)
    rc = fill.check_needs(" ".join(needs).encode(), why, 256)
    if rc == 1:
        return None, "this CPU lacks " + why.value.decode()
    if rc:
        return None, why.value.decode()
    entry = getattr(lib, "tilec_entry_" + fn)
    entry.argtypes = [ctypes.c_void_p]
    entry.restype = None
    return entry, None


class Buf:
    """n elements of a type, in a torch tensor where torch is present."""

    def __init__(self, n, ty):
        self.n, self.ty = n, ty
        if torch is not None:
            self.t = torch.empty(n, dtype=getattr(torch, TORCH[ty]))
            self.ptr = self.t.data_ptr()
        else:
            self.t = None
            self.raw = (ctypes.c_uint8 * (n * SIZE[ty]))()
            self.ptr = ctypes.addressof(self.raw)

    def values(self):
        """The elements as Python numbers (small buffers only)."""
        raw = ctypes.string_at(self.ptr, self.n * SIZE[self.ty])
        if self.ty == "f32":
            return struct.unpack("<%df" % self.n, raw)
        if self.ty == "i32":
            return struct.unpack("<%di" % self.n, raw)
        if self.ty == "i8":
            return struct.unpack("<%db" % self.n, raw)
        halves = struct.unpack("<%dH" % self.n, raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in halves]


def operands(name, m, n, k, seed):
    _, ty, rty = KERNELS[name]
    a, b, c = Buf(m * k, ty), Buf(k * n, ty), Buf(m * n, rty)
    f = {"f32": fill.fill_f32, "bf16": fill.fill_bf16, "i8": fill.fill_i8}[ty]
    f(a.ptr, a.n, seed)
    f(b.ptr, b.n, seed + 1)
    return a, b, c


def call(entry, m, n, k, a, b, c):
    ints = [ctypes.c_int(m), ctypes.c_int(n), ctypes.c_int(k)]
    ptrs = [ctypes.c_void_p(a.ptr), ctypes.c_void_p(b.ptr),
            ctypes.c_void_p(c.ptr)]
    args = (ctypes.c_void_p * 6)(*[ctypes.addressof(x) for x in ints + ptrs])
    entry(args)


def check(name, entry, m, n, k):
    """tilec against a double-precision product on one ragged shape."""
    _, ty, rty = KERNELS[name]
    a, b, c = operands(name, m, n, k, 1000 + m + n + k)
    fill.poison(c.ptr, c.n)
    call(entry, m, n, k, a, b, c)
    av, bv, cv = a.values(), b.values(), c.values()
    trans_b = ty != "f32"  # the bf16 and int8 kernels take B as [N][K]
    worst = 0.0
    scale = 0.0
    for i in range(m):
        row = av[i * k:(i + 1) * k]
        for j in range(n):
            if trans_b:
                col = bv[j * k:(j + 1) * k]
            else:
                col = bv[j::n]
            ref = sum(x * y for x, y in zip(row, col))
            got = cv[i * n + j]
            if rty == "i32":
                if got != ref:
                    return "C[%d][%d] = %d, expected %d" % (i, j, got, ref)
                continue
            if got != got:
                return "C[%d][%d] was not written (NaN)" % (i, j)
            worst = max(worst, abs(got - ref))
            scale = max(scale, abs(ref))
    if rty == "f32" and worst > 1e-5 * k * max(scale, 1.0):
        return "max abs error %.3g (scale %.3g)" % (worst, scale)
    return None


def timed(fn):
    t = time.perf_counter()
    fn()
    t = time.perf_counter() - t
    time.sleep(PAUSE)
    return t


def torch_call(name, m, n, k, a, b):
    """torch's version of the row's product, or (None, why)."""
    if torch is None:
        return None, "no torch"
    _, ty, _ = KERNELS[name]
    A = a.t.view(m, k)
    if ty == "f32":
        B = b.t.view(k, n)
        out = torch.empty(m, n, dtype=torch.float32)
        return (lambda: torch.mm(A, B, out=out)), "MKL (torch.mm)"
    if ty == "bf16":
        W = b.t.view(n, k)
        return (lambda: F.linear(A, W)), "oneDNN (F.linear, bf16 out)"
    W = b.t.view(n, k)
    try:
        torch._int_mm(A[:32, :64].contiguous(), W[:32, :64].t())
        return (lambda: torch._int_mm(A, W.t())), "torch._int_mm"
    except Exception:
        pass
    Bkn = W.t().contiguous()
    try:
        torch._int_mm(A[:32, :64].contiguous(), Bkn[:64, :32].contiguous())
        return (lambda: torch._int_mm(A, Bkn)), "torch._int_mm (B [K][N])"
    except Exception as e:
        return None, "torch._int_mm: %s" % str(e).splitlines()[0][:60]


def row(name, entry, m, n, k, threads):
    a, b, c = operands(name, m, n, k, 7)
    t_fn, base = torch_call(name, m, n, k, a, b)
    tilec_fn = lambda: call(entry, m, n, k, a, b, c)
    warm = timed(tilec_fn)
    if t_fn:
        warm += timed(t_fn)
    reps = REPEATS
    left = BUDGET - (time.monotonic() - START)
    if warm * reps > left:
        reps = max(1, int(left / max(warm, 1e-9)))
    tt, tb = [], []
    for _ in range(reps):
        tt.append(timed(tilec_fn))
        if t_fn:
            tb.append(timed(t_fn))
    flop = 2.0 * m * n * k
    g_t = flop / statistics.median(tt) * 1e-9
    g_b = flop / statistics.median(tb) * 1e-9 if tb else None
    return g_t, g_b, base, reps


def placement():
    """Where the OpenMP threads of a team of the current size run, in a
    line: the caller's thread, and how many of the others are bound to
    one core each (tilec_bind_threads binds them at a kernel's call)."""
    out = ctypes.create_string_buffer(1 << 16)
    fill.thread_cpus(out, len(out))
    masks = out.value.decode().split("|")

    def cpus(m):
        n = 0
        for part in m.split(","):
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
        return n
    every = cpus(masks[0]) if masks and masks[0] else 0
    bound = [m for m in masks[1:] if m and cpus(m) < every]
    return ("%d threads; thread 0 on CPUs %s; %d of the other %d bound, "
            "to %d distinct CPU sets (%s)" % (
                len(masks), masks[0], len(bound), len(masks) - 1,
                len(set(bound)), " ".join(masks[1:9]) +
                (" ..." if len(masks) > 9 else "")))


def main():
    only = {"gemm_i8_vnni"} if VNNI_ONLY else \
        {"gemm_f32", "gemm_f32_nostrip", "gemm_f32_skinny"} if BIND_ONLY \
        else set(KERNELS)
    names = sorted(n for n in KERNELS
                   if os.path.exists(os.path.join(WORK, n + ".so")) and
                   n in only)
    entries = {}
    for n in names:
        entry, why = load(n)
        if entry:
            entries[n] = entry
        else:
            print("not run: %s: %s" % (n, why))
    gomp.omp_set_num_threads(min(16, os.cpu_count() or 1))
    for n in entries:
        shapes = [(16, 300, 259), (5, 70, 33)] if "skinny" in n else \
            [(37, 45, 70), (64, 64, 64), (1, 17, 300)]
        for m, nn, k in shapes:
            why = check(n, entries[n], m, nn, k)
            if why:
                print("CHECK FAILED: %s M=%d N=%d K=%d: %s" % (n, m, nn, k,
                                                              why))
                sys.exit(1)
        print("check ok: %s on %s" % (n, ", ".join(
            "%dx%dx%d" % s for s in shapes)))
    sys.stdout.flush()
    if VNNI_ONLY and torch is not None:
        # Which ISA oneDNN runs torch._int_mm on under the cap (its
        # verbose lines name it), from one small call.
        a = torch.ones(64, 64, dtype=torch.int8)
        try:
            with torch.backends.mkldnn.verbose(
                    torch.backends.mkldnn.VERBOSE_ON):
                torch._int_mm(a, a)
        except Exception as e:  # an older torch, or no int8 product
            print("oneDNN verbose: %s" % str(e).splitlines()[0][:80])
        sys.stdout.flush()
    if VNNI_ONLY:
        n = 512 if QUICK else 4096
        rows = [("gemm_i8_vnni", n, n, n)]
    elif BIND_ONLY:
        n = 512 if QUICK else 4096
        k = 1024 if QUICK else 8192
        rows = [("gemm_f32", n, n, n), ("gemm_f32_nostrip", n, n, n),
                ("gemm_f32_skinny", 16, k, k)]
    elif QUICK:
        rows = [("gemm_f32", 256, 256, 256), ("gemm_f32", 512, 512, 512),
                ("gemm_f32_wide", 512, 512, 512),
                ("gemm_f32_skinny", 16, 1024, 1024),
                ("gemm_bf16", 512, 512, 512), ("gemm_bf16_big", 512, 512, 512),
                ("gemm_i8", 512, 512, 512), ("gemm_i8_big", 512, 512, 512),
                ("gemm_i8_vnni", 512, 512, 512)]
    else:
        rows = [("gemm_f32", 2048, 2048, 2048), ("gemm_f32", 4096, 4096, 4096),
                ("gemm_f32_wide", 4096, 4096, 4096),
                ("gemm_f32_skinny", 16, 8192, 8192),
                ("gemm_bf16", 4096, 4096, 4096),
                ("gemm_bf16_big", 4096, 4096, 4096),
                ("gemm_i8", 4096, 4096, 4096), ("gemm_i8_big", 4096, 4096, 4096),
                ("gemm_i8_vnni", 4096, 4096, 4096)]
    cores = os.cpu_count() or 1
    counts = [t for t in ((16, 1) if VNNI_ONLY else (16, 8, 2, 1))
              if t <= cores]
    if BIND_ONLY:
        counts = [min(16, cores)]
    table = []
    for t in counts:
        gomp.omp_set_num_threads(t)
        if torch is not None:
            torch.set_num_threads(t)
        for name, m, n, k in rows:
            if name not in entries:
                continue
            shape = "%dx%dx%d" % (m, n, k)
            if time.monotonic() - START > BUDGET:
                table.append((name, shape, t, None, None, "skipped: time"))
                continue
            g_t, g_b, base, reps = row(name, entries[name], m, n, k, t)
            table.append((name, shape, t, g_t, g_b, base +
                          ("" if reps == REPEATS else ", %d reps" % reps)))
            print("%-16s %-16s %2d threads: tilec %8.1f  torch %s" % (
                name, shape, t, g_t, "%8.1f" % g_b if g_b else "n/a"))
            sys.stdout.flush()
    print()
    if torch is not None:
        print("torch %s, MKL %s, oneDNN %s" % (
            torch.__version__, torch.backends.mkl.is_available(),
            torch.backends.mkldnn.is_available()))
    if VNNI_ONLY:
        print("torch under ONEDNN_MAX_CPU_ISA=%s" %
              os.environ.get("ONEDNN_MAX_CPU_ISA", "(unset)"))
    if BIND_ONLY:
        print("OMP_PROC_BIND=%s OMP_PLACES=%s: %s" % (
            os.environ.get("OMP_PROC_BIND", "(unset)"),
            os.environ.get("OMP_PLACES", "(unset)"), placement()))
    print("GFLOP/s (int8: GOP/s), median of %d alternating calls after a "
          "warm-up; ratio = tilec / torch" % REPEATS)
    # One line per kernel and shape: tilec / torch = ratio at each
    # thread count.
    print("%-16s %-16s %s  %s" % ("kernel", "M x N x K", "  ".join(
        "%-20s" % ("%d threads" % t) for t in counts), "baseline"))
    keys, cells, bases = [], {}, {}
    for name, shape, t, g_t, g_b, base in table:
        if (name, shape) not in cells:
            keys.append((name, shape))
            cells[(name, shape)] = {}
        if g_t is None:
            cell = "-"
        elif g_b:
            cell = "%.0f/%.0f=%.2f" % (g_t, g_b, g_t / g_b)
        else:
            cell = "%.0f" % g_t
        cells[(name, shape)][t] = cell
        if g_t is not None:
            bases[(name, shape)] = base
    for key in keys:
        print("%-16s %-16s %s  %s" % (key[0], key[1], "  ".join(
            "%-20s" % cells[key].get(t, "-") for t in counts),
            bases.get(key, "skipped")))
    print("total %.0f s" % (time.monotonic() - START))


main()
