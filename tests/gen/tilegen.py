#!/usr/bin/env python3
"""tilegen.py - random valid tile programs, and an independent C oracle.

In the spirit of Csmith and YARPGen, written for this language: each call
makes one file of tile kernels (docs/language.md) that tilec must accept,
whose meaning is defined for the shapes chosen with it, and whose results
the generator itself knows how to compute.  Beside the tile program it
writes a plain serial C file, `tilec_entry_<kernel>(void **args)` per
kernel, computed from the generator's own model of the semantics
(docs/ir.md), not from tilec's IR: `tilec run FILE --source ORACLE.c`
then checks the reference interpreter against it.

Validity by construction:

- typing: every expression is built with its kind (integer or float) and
  an interval bounding its value for the shapes chosen; integer arithmetic
  never overflows (as Csmith's safe math), no division by zero, shifts only
  of non-negative values by 0..3, float-to-integer conversions only of
  values in range and bit-identical on every backend ("exact" values:
  loads, constants, max/min, negation), functions only inside their domain
  (logf(fabsf(x) + 1), expf of bounded arguments);
- regions: tile copies may hang over any edge (negative or past-the-end
  origins along covered and uncovered dims read zeros); direct tensor
  element accesses are guarded where the index interval leaves the tensor;
- definedness: a buffer is read only after a statement wrote all of it;
- races: blocks write disjoint parts of every output (covered dims by the
  block index times the tile, uncovered dims by grid_z or a serial loop
  over their whole extent); atomics go to their own tensor.

Known bugs of tilec are features that can be turned off (FEATURES), so
that a fixed set of seeds stays green while they are being fixed.

    tilegen.py SEED [--kernels N] [--out DIR] [--features +a,-b]

writes DIR/gen_SEED.c, DIR/gen_SEED.oracle.c and DIR/gen_SEED.json (per
kernel: its name, the --shape values, whether outputs compare exactly).
"""
import argparse
import json
import os
import random
import re

# --- features ----------------------------------------------------------------
# Constructs that known tilec bugs broke; the default set leaves out those
# still open (FINDINGS.md), and takes the fixed ones.
# Each entry: name -> (default on?, what it is).
FEATURES = {
    "neg_origin": (True, "negative tile-copy origins (GPU reads neighbours)"),
    "nested_between": (True, "statements between nested tile_parallel "
                       "levels (GPU thread mapping: shared buffers and "
                       "fragments alike)"),
    "bool_shared": (True, "bool shared buffers (GPU smem size)"),
    "int_fragment": (True, "integer fragment buffers (GPU declares float)"),
    "bool_tensor_copy": (True, "bool tensors in tile copies (GPU crash)"),
    "short_rows": (True, "shared rows under 16 bytes (CUDA copy_g2s)"),
    "mixed_mul": (True, "integer products of operands of opposite sign "
                  "(interpreter)"),
    "local_index": (True, "tensor writes indexed through a local "
                    "(race check)"),
    "int_reduce_float": (True, "integer reduce destination of a float "
                         "source (OpenMP, reference)"),
    "i8_minmax": (True, "integer min/max reduces with an i8 source or "
                  "destination (OpenMP starts from INT_MAX / INT_MIN)"),
    "int_reduce_widen": (True, "integer reduces of i8/u8 sources or into "
                         "another integer type (CUDA: reduce_combine of int "
                         "and int8_t)"),
    "int_atomic_other": (True, "i32 atomics of another integer type "
                         "(HIP: atomic_add(int *, unsigned char) ambiguous)"),
    "small_blocks": (True, "tile_threads(32): less than a HIP wave "
                     "(smem_reduce stepped by THREADS / WARP = 0: a hang)"),
    "dup_copy": (True, "a gemm operand copied in twice in its loop"),
    "local_buffers": (True, "tile_local arrays written by serial code"),
    "select_guard": (True, "guarded tensor loads inside ?: (lazy "
                     "evaluation)"),
    "gemm": (True, "tile_gemm"),
    "dequant_b": (True, "about half of the f16/bf16 gemms into f32 "
                  "compute their B operand (stored N x K, K 32 or 64) by "
                  "an element loop from a tile copied in, as a "
                  "dequantizing gemm does (CUDA computes it inside the "
                  "gemm: fuse_b.c)"),
    "atomics": (True, "tile_atomic_add"),
    "argred": (True, "tile_reduce_argmax, tile_reduce_argmin and "
               "tile_reduce_topk of exact tiles (k up to the whole dim: a "
               "sort)"),
    "runtime_extent": (True, "tile_parallel(i, min(C, e)) over the rows "
                       "of a tile an element loop overwrites, e known at "
                       "run time (the rows left, a parameter, a constant "
                       "past C or below 1)"),
    "transpose": (True, "tile_parallel nests moving a buffer's [i][j] "
                  "to another's [j][i] (the CPU's transpose pass: 8 x 8 "
                  "blocks of 32-bit elements)"),
    "ragged": (True, "ragged copies: tile_bounded, tile_masked and "
               "tile_rows (gathers in, permuting scatters out) around "
               "copy regions"),
    "pipelined": (True, "tile_pipelined loops"),
    "rank3": (True, "rank-3 buffers"),
    "rounding": (True, "roundf, rintf, floorf, ceilf, truncf, fmaf, "
                 "log1pf, expm1f, abs and the saturating casts"),
    "reduce_all": (True, "tile_sum, tile_max, tile_min, tile_absmax into "
                   "block-level scalars"),
    "fast_gemm": (True, "about a quarter of the kernels are gemms shaped "
                  "for the sm_90a fast loop: 64-256 tiles over 128 or 256 "
                  "threads, 3 or 4 stages, f16/bf16/i8 operands copied "
                  "straight from tensors (wgmma, TMA), then an epilogue"),
    "fast_gemm_all": (False, "every kernel a fast_gemm one"),
    "narrow": (True, "about a third of the kernels use i4 and fp8 "
               "(fp8e4m3, fp8e5m2): input and output tensors, tiles, "
               "locals, casts, element-wise loads and stores, reductions "
               "of and into them, fp8 gemm operands into f32 (fast_gemm "
               "ones too)"),
    "narrow_all": (False, "every kernel a narrow one"),
    "i4_reduce": (True, "i4 operands of tile_reduce_* and tile_sum and "
                  "its kin (the GPU backends refused them)"),
    "chain": (True, "a fast_gemm's f32 accumulator masked by tests of its "
              "indices, rounded to f16 or bf16 and multiplied again, as "
              "attention's P V (the GPU reads the rounded tile from the "
              "accumulator's registers)"),
    "vector_rows": (True, "about a fifth of the kernels shaped for the CPU's "
                    "explicit vector loops: f32, f16 and bf16 rows of "
                    "16-64 columns, element-wise code of the operations "
                    "and functions with vector forms, selects, sums"),
}


def feature_set(spec):
    """The default features changed by '+a,-b' (or 'all')."""
    on = {k for k, (d, _) in FEATURES.items() if d}
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        if part == "all":
            on = set(FEATURES)
            continue
        name = part.lstrip("+-")
        if name not in FEATURES:
            raise SystemExit("tilegen: unknown feature %r (have: %s)" %
                             (name, ", ".join(sorted(FEATURES))))
        if part.startswith("-"):
            on.discard(name)
        else:
            on.add(name)
    return on


# --- types ---------------------------------------------------------------------

FLOATS = ["f64", "f32", "f16", "bf16"]
INTS = ["i64", "i32", "i8", "u8"]
# The narrow types of the `narrow` feature: 8-bit floats (OCP E4M3, no
# infinity, NaN from 464 up; E5M2, IEEE-like) and packed 4-bit integers.
FP8 = ["fp8e4m3", "fp8e5m2"]
# Integer ranges each type holds.
INT_RANGE = {"i64": (-2**63, 2**63 - 1), "i32": (-2**31, 2**31 - 1),
             "i8": (-128, 127), "u8": (0, 255), "bool": (0, 1),
             "i4": (-8, 7)}
# Largest magnitude a float type holds (kept well inside).
FLOAT_MAX = {"f64": 1e300, "f32": 1e30, "f16": 60000.0, "bf16": 1e30,
             "fp8e4m3": 400.0, "fp8e5m2": 50000.0}
# The element size in bytes.
SIZE = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
        "i8": 1, "u8": 1, "bool": 1, "fp8e4m3": 1, "fp8e5m2": 1,
        "i4": 0.5}
# The C type a tensor element has in memory (the oracle's view; i4
# tensors are flat bytes of two elements, low nibble first).
CMEM = {"f64": "double", "f32": "float", "f16": "uint16_t",
        "bf16": "uint16_t", "i64": "int64_t", "i32": "int32_t",
        "i8": "int8_t", "u8": "uint8_t", "bool": "uint8_t",
        "fp8e4m3": "uint8_t", "fp8e5m2": "uint8_t", "i4": "uint8_t"}


def is_int(dt):
    return dt in INT_RANGE


def input_range(dt):
    """What tilec run fills inputs with (docs/run.md), 0 included (OOB)."""
    if dt == "bool":
        return (0, 1)
    if dt == "u8":
        return (0, 15)
    if is_int(dt):
        return (-7, 7)
    return (-1.0, 1.0)


# --- expressions -----------------------------------------------------------------

class E:
    """An expression: its text in the tile program and in the oracle, its
    kind ('i' or 'f'), an interval holding its value, and whether its value
    is the same bit for bit on every backend (loads, constants, max/min)."""

    def __init__(self, tile, c, kind, lo, hi, exact=False):
        self.tile, self.c, self.kind = tile, c, kind
        self.lo, self.hi, self.exact = lo, hi, exact


def fconst(v):
    s = repr(float(v))
    if "e" not in s and "." not in s:
        s += ".0"
    t = s + "f"
    if v < 0:
        t, s = "(%s)" % t, "(%s)" % s
    return E(t, s, "f", v, v, True)


def iconst(v):
    t = str(v) if v >= 0 else "(%d)" % v
    return E(t, t if abs(v) < 2**31 else t + "LL", "i", v, v, True)


def mag(e):
    return max(abs(e.lo), abs(e.hi))


# --- the program model -------------------------------------------------------------

class Buf:
    """A buffer declared in the kernel body."""

    def __init__(self, name, scope, dtype, shape):
        self.name, self.scope, self.dtype = name, scope, dtype
        self.shape = tuple(shape)
        self.lo, self.hi = 0, 0      # interval of its contents once defined
        self.exact = True            # contents identical on every backend

    def decl(self):
        return "tile_%s %s %s%s;" % (self.scope, self.dtype, self.name,
                                      "".join("[%d]" % s for s in self.shape))

    def cdecl(self):
        return "double %s%s;" % (self.name,
                                  "".join("[%d]" % s for s in self.shape))

    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


class Tensor:
    def __init__(self, name, dtype, dims, const):
        self.name, self.dtype, self.dims, self.const = name, dtype, dims, const

    def shape(self, P):
        return [P[d] for d in self.dims]


class Stmt:
    """A statement: lines of tile code and of oracle code (each a list of
    (depth, text)), the buffers it defines, and its children (for the
    reducer: a compound statement can be replaced by them)."""

    def __init__(self, tile, c, defines=(), kids=None, what=""):
        self.tile, self.c = tile, c
        self.defines = list(defines)
        self.kids = kids          # list of Stmt, or None
        self.kids_else = []       # an if's else branch
        self.what = what          # a short name of the construct

    def lines(self, which, depth):
        out = []
        for d, t in (self.tile if which == "tile" else self.c):
            if t is None:         # where the children go
                for k in self.kids:
                    out += k.lines(which, depth + d)
            else:
                out.append((depth + d, t))
        return out


def simple(tile, c, what="", defines=()):
    return Stmt([(0, t) for t in tile], [(0, t) for t in c], defines,
                None, what)


def compound(head_t, head_c, kids, tail_t=("}",), tail_c=("}",), what=""):
    """head lines, the children one level deeper, tail lines."""
    t = [(0, h) for h in head_t] + [(1, None)] + [(0, x) for x in tail_t]
    c = [(0, h) for h in head_c] + [(1, None)] + [(0, x) for x in tail_c]
    return Stmt(t, c, [], kids, what)


def cv(dtype, c):
    """Oracle: the value c (double or long long) stored into dtype."""
    return "CV_%s(%s)" % (dtype, c)


def constant_text(t):
    """Whether tile expression text t names nothing but constants."""
    return not re.search(r"[A-Za-z_]", re.sub(
        r"\((i4|i8|u8|i64|i32|int|float|f16|bf16|fp8e4m3|fp8e5m2)\)", "",
        t))


def idx_c(idx):
    return "".join("[%s]" % i for i in idx)


# --- the generator -----------------------------------------------------------------------

class Kernel:
    """One generated kernel: signature, shapes and statements."""

    def __init__(self, name):
        self.name = name
        self.params = []          # scalar names, in order
        self.P = {}               # their values
        self.tensors = []         # Tensor, in parameter order
        self.bufs = []            # every Buf
        self.head = []            # Stmt: launch, block loops are implicit
        self.body = []            # Stmt
        self.threads = 128
        self.grid = []            # (var, extent tile expr, extent C expr)
        self.outer = None         # ("z" | "for", var, param)
        self.exact = False        # outputs compared exactly
        self.tol = None           # a --tol wider than tilec run's default
        self.fast = False         # a fast_gemm kernel (Gen.make_fast)
        self.narrow = False       # takes i4 and fp8 types (feature narrow)
        self.fp8_inexact = False  # rounds a value that is not exact to fp8


class Gen:
    def __init__(self, seed, index, features):
        self.r = random.Random("%d/%d" % (seed, index))
        # the dequant_b gemms' own stream: the other kernels of a seed stay
        # as they were without the feature
        self.side = random.Random("%d/%d/dequant" % (seed, index))
        # and the ragged copies' (ragged_copy), and the arg-reductions'
        self.rag = random.Random("%d/%d/ragged" % (seed, index))
        self.arg = random.Random("%d/%d/argred" % (seed, index))
        self.ext = random.Random("%d/%d/extent" % (seed, index))
        self.tr = random.Random("%d/%d/transpose" % (seed, index))
        self.f = features
        self.k = Kernel("k%d" % index)
        self.nbuf = 0
        self.nloc = 0
        self.scalars = []   # block-level scalars (tile_sum ...), in order
        self.ntensor = 0
        self.fast = False   # a fast_gemm kernel (make_fast)
        self.narrow = False  # i4 and fp8 types may appear (feature narrow)
        self.vec = False    # a vector_rows kernel (float rows, vector ops)
        self.deq = False    # a dequant_b kernel's gemm to come (make)

    # --- helpers ---
    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(list(xs))

    def new_param(self, small=False):
        names = "MNKPQRSTUVW"
        n = names[len(self.k.params)] if len(self.k.params) < len(names) \
            else "D%d" % len(self.k.params)
        choices = [1, 2, 3, 5, 7, 9, 13, 16, 17] if small else \
            [1, 2, 3, 5, 8, 13, 17, 31, 33, 47, 64, 65, 100]
        self.k.params.append(n)
        self.k.P[n] = self.pick(choices)
        return n

    def new_buf(self, scope, dtype, shape, hint="t"):
        name = "%s%d" % (hint, self.nbuf)
        self.nbuf += 1
        b = Buf(name, scope, dtype, shape)
        self.k.bufs.append(b)
        return b

    def new_tensor(self, dtype, dims, const, hint):
        t = Tensor("%s%d" % (hint, self.ntensor), dtype, dims, const)
        self.ntensor += 1
        self.k.tensors.append(t)
        return t

    def scope_for(self, dtype, shape):
        """A scope the features allow for a buffer of dtype and shape."""
        scopes = ["shared", "fragment"]
        if self.fast:
            # the operands' stages fill shared memory: epilogue tiles
            # bigger than 4 KiB live in registers
            n = SIZE[dtype]
            for x in shape:
                n *= x
            if n > 4096:
                if is_int(dtype) and "int_fragment" not in self.f:
                    return None
                return "fragment"
        if is_int(dtype) and "int_fragment" not in self.f:
            scopes = ["shared"]
        if dtype == "bool" and "bool_shared" not in self.f:
            scopes = [s for s in scopes if s != "shared"] or ["fragment"]
            if "int_fragment" not in self.f:
                return None
        if "shared" in scopes and "short_rows" not in self.f and \
                shape[-1] * SIZE[dtype] < 16:
            scopes.remove("shared")
        if not scopes:
            return None
        return self.pick(scopes)

    def buf_dtype(self, want_int=None):
        if self.vec:
            return self.pick(["f32", "f32", "f16", "bf16"])
        if want_int is None:
            want_int = self.chance(0.3)
        if self.fast:
            # no 64-bit tiles of 128 x 256 elements in registers (and no
            # i4 ones: they live in shared memory, beside the stages)
            if not want_int and self.narrow and self.chance(0.3):
                return self.pick(FP8)
            return self.pick(["i32", "i8", "u8"] if want_int else
                             ["f32", "f32", "f16", "bf16"])
        if self.narrow and self.chance(0.3):
            return "i4" if want_int else self.pick(FP8)
        if want_int:
            return self.pick(INTS + ["bool"] if self.chance(0.1) else INTS)
        return self.pick(FLOATS)

    def make_buf(self, shape, want_int=None, hint="t", scope=None):
        for _ in range(20):
            dt = self.buf_dtype(want_int)
            sc = scope or self.scope_for(dt, shape)
            if sc:
                return self.new_buf(sc, dt, shape, hint)
        return self.new_buf("fragment", "f32", shape, hint)

    # --- expressions over a context ---
    # ctx: dict with 'idx' (list of (tile var, extent)) for parallel loops,
    # 'bufs' (defined buffers), 'scalars' (list of E usable here),
    # 'ints' (list of E: loop and block variables).

    def leaf(self, ctx, kind):
        r = self.r
        opts = []
        idx = ctx["idx"]
        names = [v for v, _ in idx]
        for b in ctx["bufs"]:
            if b is ctx.get("own"):
                # the buffer being written: only its own element
                opts.append((b, names[:len(b.shape)]))
                continue
            # a buffer indexed by the loop variables, by matching extents
            if self.fast and getattr(b, "axis", None) is not None:
                # a bias row or a reduce's result: along its own dim
                if b.axis < len(idx) and idx[b.axis][1] == b.shape[0]:
                    opts.append((b, [names[b.axis]]))
                continue
            if self.fast and b.shape == tuple(e for _, e in idx):
                # in order: a fast_gemm tile read across its rows would
                # move every fragment of 64 KiB to shared memory
                opts.append((b, names))
                continue
            if len(b.shape) <= len(idx):
                choose = []
                ok = True
                for s in b.shape:
                    cand = [v for v, e in idx if e == s and v not in choose]
                    if not cand:
                        ok = False
                        break
                    choose.append(r.choice(cand))
                if ok and (is_int(b.dtype) == (kind == "i") or r.random() < 0.3):
                    opts.append((b, choose))
        cands = []
        for b, ix in opts:
            k = "i" if is_int(b.dtype) else "f"
            t = "%s%s" % (b.name, idx_c(ix))
            c = ("((long long)%s)" % t) if k == "i" else t
            cands.append(E(t, c, k, b.lo, b.hi, b.exact))
        for s in ctx["scalars"]:
            cands.append(s)
        for v, e in idx:
            cands.append(E(v, "((long long)%s)" % v, "i", 0, e - 1, True))
        cands += ctx["ints"]
        same = [c for c in cands if c.kind == kind]
        if self.vec and kind == "f":
            # a column index used as a number has no vector form
            if same:
                return r.choice(same)
            return fconst(r.choice([0.5, 1.5, -2.0, 0.25, 3.0, -0.75]))
        if same and r.random() < 0.85:
            return r.choice(same)
        if cands and r.random() < 0.5:
            return self.convert(r.choice(cands), kind)
        if kind == "i":
            return iconst(r.randint(-5, 9))
        return fconst(r.choice([0.5, 1.5, -2.0, 0.25, 3.0, -0.75]))

    def convert(self, e, kind):
        if e.kind == kind:
            return e
        if kind == "f":
            return E("(float)(%s)" % e.tile, "((double)(%s))" % e.c, "f",
                     e.lo, e.hi, e.exact)
        # float to int: only exact values (same on every backend), in range
        if e.exact and mag(e) < 1e6:
            s = self.pick([1, 4, 8])
            return E("(int)(%s * %d.0f)" % (e.tile, s),
                     "((long long)(%s * %d.0))" % (e.c, s), "i",
                     int(e.lo * s) - 1, int(e.hi * s) + 1, True)
        return iconst(self.r.randint(0, 3))

    def expr(self, ctx, kind, depth):
        if depth <= 0 or self.chance(0.25):
            return self.leaf(ctx, kind)
        if kind == "i":
            return self.iexpr(ctx, depth)
        return self.fexpr(ctx, depth)

    def iexpr(self, ctx, depth):
        r = self.r
        a = self.expr(ctx, "i", depth - 1)
        b = self.expr(ctx, "i", depth - 1)
        op = r.choice(["+", "-", "*", "&", "|", "^", "/", "%", "<<", ">>",
                       "min", "max", "cmp", "?:", "~", "neg", "cast"] +
                      (["abs", "sat"] if "rounding" in self.f else []))
        lim = 2**30
        if op == "abs" and mag(a) < lim:
            return E("abs((i32)(%s))" % a.tile, "llabs(%s)" % a.c, "i", 0,
                     mag(a), True)
        if op == "sat":
            f = self.expr(ctx, "f", depth - 1)
            if f.exact:
                t = r.choice(["i8", "u8", "i32"])
                lo, hi = INT_RANGE[t]
                vlo = min(max(lo, int(f.lo) - 1), hi)
                vhi = max(min(hi, int(f.hi) + 1), lo)
                return E("sat_%s(%s)" % (t, f.tile),
                         "SAT(%s, %dLL, %dLL)" % (f.c, lo, hi), "i", vlo, vhi,
                         True)
        if op in "+-":
            lo = a.lo + b.lo if op == "+" else a.lo - b.hi
            hi = a.hi + b.hi if op == "+" else a.hi - b.lo
            if max(abs(lo), abs(hi)) < lim:
                return E("(%s %s %s)" % (a.tile, op, b.tile),
                         "(%s %s %s)" % (a.c, op, b.c), "i", lo, hi, True)
        if op == "*":
            mixed = (a.lo < 0 or b.lo < 0)
            if mixed and "mixed_mul" not in self.f:
                # keep both non-negative: (a & 15) style
                a = E("(%s & 15)" % a.tile, "(%s & 15)" % a.c, "i", 0, 15, True)
                b = E("(%s & 7)" % b.tile, "(%s & 7)" % b.c, "i", 0, 7, True)
            ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
            if max(abs(p) for p in ps) < lim:
                return E("(%s * %s)" % (a.tile, b.tile),
                         "(%s * %s)" % (a.c, b.c), "i", min(ps), max(ps), True)
        if op in "&|^":
            if a.lo >= 0 and b.lo >= 0:
                hi = (1 << max(a.hi, b.hi).bit_length()) - 1
                lo = 0
            else:
                m = max(mag(a), mag(b))
                hi = (1 << m.bit_length()) - 1
                lo = -hi - 1
            if op == "&" and a.lo >= 0:
                hi = a.hi
            return E("(%s %s %s)" % (a.tile, op, b.tile),
                     "(%s %s %s)" % (a.c, op, b.c), "i", lo, hi, True)
        if op in ("/", "%"):
            d = r.randint(1, 7)
            if op == "/":
                return E("(%s / %d)" % (a.tile, d), "(%s / %d)" % (a.c, d),
                         "i", -(mag(a) // d), mag(a) // d, True)
            return E("(%s %% %d)" % (a.tile, d), "(%s %% %d)" % (a.c, d), "i",
                     -(d - 1) if a.lo < 0 else 0, d - 1, True)
        if op in ("<<", ">>") and a.lo >= 0:
            s = r.randint(0, 3)
            if op == "<<" and a.hi << s < lim:
                return E("(%s << %d)" % (a.tile, s), "(%s << %d)" % (a.c, s),
                         "i", a.lo << s, a.hi << s, True)
            if op == ">>":
                return E("(%s >> %d)" % (a.tile, s), "(%s >> %d)" % (a.c, s),
                         "i", a.lo >> s, a.hi >> s, True)
        if op in ("min", "max"):
            f = min if op == "min" else max
            # min and max take i32s (an i64 argument is an error, as
            # for abs); the values are in int's range.
            return E("%s((i32)(%s), (i32)(%s))" % (op, a.tile, b.tile),
                     "%s_ll(%s, %s)" % (op, a.c, b.c), "i",
                     f(a.lo, b.lo), f(a.hi, b.hi), True)
        if op == "cmp":
            return self.cond(ctx, depth - 1)
        if op == "?:":
            c = self.cond(ctx, depth - 1)
            return E("(%s ? %s : %s)" % (c.tile, a.tile, b.tile),
                     "(%s ? %s : %s)" % (c.c, a.c, b.c), "i",
                     min(a.lo, b.lo), max(a.hi, b.hi), True)
        if op == "~":
            return E("(~%s)" % a.tile, "(~%s)" % a.c, "i", -a.hi - 1,
                     -a.lo - 1, True)
        if op == "neg":
            return E("(-%s)" % a.tile, "(-%s)" % a.c, "i", -a.hi, -a.lo, True)
        if op == "cast":
            t = "i4" if self.narrow and self.chance(0.3) else \
                r.choice(["i8", "u8", "i64"])
            lo, hi = INT_RANGE[t]
            if a.lo >= lo and a.hi <= hi:
                lo, hi = a.lo, a.hi
            elif t == "i64":
                lo, hi = a.lo, a.hi
            return E("(%s)(%s)" % (t, a.tile), "CVI_%s(%s)" % (t, a.c), "i",
                     lo, hi, True)
        return a

    def cond(self, ctx, depth):
        """An integer 0/1 condition, the same on every backend."""
        r = self.r
        k = r.choice(["i", "i", "f"])
        if k == "f":
            a, b = self.leaf(ctx, "f"), self.leaf(ctx, "f")
            if not (a.exact and b.exact):
                k = "i"
        if k == "i":
            a, b = self.expr(ctx, "i", depth), self.expr(ctx, "i", depth)
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        if a.tile == b.tile:
            b = iconst(r.randint(0, 3)) if k == "i" else fconst(0.5)
        e = E("(%s %s %s)" % (a.tile, op, b.tile),
              "(%s %s %s)" % (a.c, op, b.c), "i", 0, 1, True)
        if self.chance(0.2):
            o = self.cond(ctx, 0) if depth > 0 else iconst(1)
            lop = r.choice(["&&", "||"])
            if o.tile == "1":
                o = self.cond(ctx, 0)
            e = E("(%s %s %s)" % (e.tile, lop, o.tile),
                  "(%s %s %s)" % (e.c, lop, o.c), "i", 0, 1, True)
        if self.chance(0.1):
            e = E("(!%s)" % e.tile, "(!%s)" % e.c, "i", 0, 1, True)
        return e

    def fexpr(self, ctx, depth):
        r = self.r
        a = self.expr(ctx, "f", depth - 1)
        if self.vec:
            # the operations and functions with vector forms
            op = r.choice(["+", "-", "*", "/", "fmaxf", "fminf", "fabsf",
                           "expf", "exp2f", "sqrtf", "rsqrtf", "tanhf",
                           "neg", "round", "fmaf", "?:"])
        else:
            op = r.choice(["+", "-", "*", "/", "fmaxf", "fminf", "fabsf",
                           "expf", "exp2f", "logf", "log2f", "sqrtf",
                           "rsqrtf", "tanhf", "erff", "sinf", "cosf",
                           "powf", "?:", "neg", "cast", "int"] +
                          (["round", "round", "fmaf", "log1pf", "expm1f"]
                           if "rounding" in self.f else []))
        m = mag(a)
        if op == "round" and a.exact and m < 1e6:
            # Exact in C on the f32 argument: the same everywhere.
            fn = r.choice(["rintf", "floorf", "ceilf", "truncf"] +
                          ([] if self.vec else ["roundf"]))
            cfn = {"roundf": "round", "rintf": "nearbyint"}.get(fn, fn[:-1])
            return E("%s(%s)" % (fn, a.tile),
                     "%s((double)(float)(%s))" % (cfn, a.c), "f",
                     float(int(a.lo) - 1), float(int(a.hi) + 1), True)
        if op == "fmaf":
            b = self.expr(ctx, "f", depth - 1)
            c = self.expr(ctx, "f", depth - 1)
            if m * mag(b) + mag(c) < 1e4:
                ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
                return E("fmaf(%s, %s, %s)" % (a.tile, b.tile, c.tile),
                         "fma(%s, %s, %s)" % (a.c, b.c, c.c), "f",
                         min(ps) + c.lo, max(ps) + c.hi)
        if op == "log1pf":
            return E("log1pf(fabsf(%s))" % a.tile, "log1p(fabs(%s))" % a.c,
                     "f", 0, m + 1)
        if op == "expm1f" and a.hi < 8:
            import math
            return E("expm1f(%s)" % a.tile, "expm1(%s)" % a.c, "f", -1.0,
                     math.exp(a.hi))
        if op in ("+", "-", "*", "/", "fmaxf", "fminf", "?:", "powf"):
            b = self.expr(ctx, "f", depth - 1)
            mb = mag(b)
            if op in "+-" and m + mb < 1e4:
                lo = a.lo + b.lo if op == "+" else a.lo - b.hi
                hi = a.hi + b.hi if op == "+" else a.hi - b.lo
                return E("(%s %s %s)" % (a.tile, op, b.tile),
                         "(%s %s %s)" % (a.c, op, b.c), "f", lo, hi)
            if op == "*" and m * mb < 1e4:
                ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
                return E("(%s * %s)" % (a.tile, b.tile),
                         "(%s * %s)" % (a.c, b.c), "f", min(ps), max(ps))
            if op == "/":
                return E("(%s / (fabsf(%s) + 1.0f))" % (a.tile, b.tile),
                         "(%s / (fabs(%s) + 1.0))" % (a.c, b.c), "f",
                         min(a.lo, 0), max(a.hi, 0))
            if op in ("fmaxf", "fminf"):
                f = max if op == "fmaxf" else min
                return E("%s(%s, %s)" % (op, a.tile, b.tile),
                         "%s(%s, %s)" % (op[:-1], a.c, b.c), "f",
                         f(a.lo, b.lo), f(a.hi, b.hi), a.exact and b.exact)
            if op == "?:":
                c = self.cond(ctx, depth - 1)
                return E("(%s ? %s : %s)" % (c.tile, a.tile, b.tile),
                         "(%s ? %s : %s)" % (c.c, a.c, b.c), "f",
                         min(a.lo, b.lo), max(a.hi, b.hi),
                         a.exact and b.exact)
            if op == "powf" and m < 30:
                p = r.choice(["0.5f", "2.0f", "1.5f"])
                pv = float(p[:-1])
                return E("powf(fabsf(%s) + 1.0f, %s)" % (a.tile, p),
                         "pow(fabs(%s) + 1.0, %s)" % (a.c, p[:-1]), "f", 1.0,
                         (m + 1) ** pv)
        if op == "fabsf":
            return E("fabsf(%s)" % a.tile, "fabs(%s)" % a.c, "f", 0, m,
                     a.exact)
        if op == "neg":
            return E("(-%s)" % a.tile, "(-%s)" % a.c, "f", -a.hi, -a.lo,
                     a.exact)
        if op in ("expf", "exp2f") and a.hi < 8:
            import math
            f = math.exp if op == "expf" else (lambda x: 2.0 ** x)
            return E("%s(%s)" % (op, a.tile), "%s(%s)" % (op[:-1], a.c), "f",
                     0.0, f(a.hi))
        if op in ("logf", "log2f", "sqrtf", "rsqrtf"):
            fn = {"logf": "log", "log2f": "log2", "sqrtf": "sqrt",
                  "rsqrtf": None}[op]
            if op == "sqrtf":
                return E("sqrtf(fabsf(%s))" % a.tile, "sqrt(fabs(%s))" % a.c,
                         "f", 0, m ** 0.5 + 1)
            if op == "rsqrtf":
                return E("rsqrtf(fabsf(%s) + 1.0f)" % a.tile,
                         "(1.0 / sqrt(fabs(%s) + 1.0))" % a.c, "f", 0, 1)
            return E("%s(fabsf(%s) + 1.0f)" % (op, a.tile),
                     "%s(fabs(%s) + 1.0)" % (fn, a.c), "f", 0, m + 1)
        if op in ("tanhf", "erff", "sinf", "cosf"):
            if op in ("sinf", "cosf") and m > 100:
                return a
            return E("%s(%s)" % (op, a.tile), "%s(%s)" % (op[:-1], a.c), "f",
                     -1, 1)
        if op == "cast":
            t = self.pick(FP8) if self.narrow and self.chance(0.3) else \
                r.choice(["f16", "bf16", "f64"])
            if m < min(60000, FLOAT_MAX[t]):
                self.rounds(t, a.exact)
                return E("(%s)(%s)" % (t, a.tile), cv(t, a.c), "f",
                         *self.rounded(t, a.lo, a.hi), a.exact)
        if op == "int":
            i = self.expr(ctx, "i", depth - 1)
            if mag(i) < 1e4:
                return self.convert(i, "f")
        return a

    # --- statements ---

    def runtime_extent(self, C):
        """An extent e for tile_parallel(i, min(C, e)), from the extent
        stream: the rows left in the tile's dim 0 of the grid, a
        parameter, or a constant (0 or less: no rows; past C: all)."""
        x = self.ext
        E0, o = self.E_t[0], self.torg[0]
        opts = [E("%s - (%s)" % (E0, o.tile), "((long long)%s - %s)" % (E0, o.c),
                  "i", -64, 64, True),
                E(E0, "((long long)%s)" % E0, "i", 0, 100, True),
                iconst(x.randint(-1, C + 2))]
        return opts[x.randrange(len(opts))]

    def elementwise(self, dst, ctx_bufs, scalars, ints, rx=None):
        """tile_parallel nest over dst's shape: dst[...] = expr, perhaps with
        a scalar declared between the levels and an if/else.  With rx (an
        overwrite of dst), dim 0 runs min(C, rx) rows at run time and the
        others keep their values."""
        r = self.r
        old = (dst.lo, dst.hi, dst.exact)
        names = ["i", "j", "l"][:len(dst.shape)]
        idx = list(zip(names, dst.shape))
        ctx = {"idx": idx, "bufs": [b for b in ctx_bufs], "scalars":
               list(scalars), "ints": list(ints), "own": dst}
        kind = "i" if is_int(dst.dtype) else "f"
        lhs = "%s%s" % (dst.name, idx_c(names))
        # the innermost body
        between = []       # (tile, c) lines at the outer level
        if len(idx) >= 2 and self.chance(0.4) and "nested_between" in self.f:
            octx = {"idx": idx[:1], "bufs": [b for b in ctx["bufs"]
                                             if b is not dst],
                    "scalars": ctx["scalars"], "ints": ctx["ints"]}
            k = r.choice(["i", "f"])
            e = self.expr(octx, k, 2)
            nm = "s%d" % self.nloc
            self.nloc += 1
            if k == "f":
                dt = r.choice(["float", "f16"])
                if self.narrow and self.chance(0.4):
                    dt = self.pick(FP8)
                if dt != "float" and mag(e) > min(60000, FLOAT_MAX[dt]):
                    dt = "float"
                if dt != "float":
                    self.rounds(dt, e.exact)
                lo, hi = (e.lo, e.hi) if dt == "float" else \
                    self.rounded(dt, e.lo, e.hi)
                between.append(("%s %s = %s;" % (dt, nm, e.tile),
                                "double %s = %s;" % (
                                    nm, e.c if dt == "float" else cv(dt, e.c))))
                ctx["scalars"].append(E(nm, nm, "f", lo, hi, e.exact and dt == "float"))
            elif self.narrow and self.chance(0.4):
                # an i4 local wraps what is stored into it
                lo, hi = (e.lo, e.hi) if -8 <= e.lo and e.hi <= 7 else \
                    INT_RANGE["i4"]
                between.append(("i4 %s = %s;" % (nm, e.tile),
                                "long long %s = CVI_i4(%s);" % (nm, e.c)))
                ctx["scalars"].append(E(nm, nm, "i", lo, hi, True))
            else:
                between.append(("int %s = %s;" % (nm, e.tile),
                                "long long %s = %s;" % (nm, e.c)))
                ctx["scalars"].append(E(nm, nm, "i", e.lo, e.hi, True))
        val = self.expr(ctx, kind, 3)
        val = self.fit(val, dst)
        body_t, body_c = [], []
        if self.chance(0.05 if self.vec else 0.3):
            c = self.cond(ctx, 1)
            v2 = self.fit(self.expr(ctx, kind, 2), dst)
            body_t = ["if %s" % c.tile if c.tile.startswith("(") else
                      "if (%s)" % c.tile,
                      "\t%s = %s;" % (lhs, val.tile), "else",
                      "\t%s = %s;" % (lhs, v2.tile)]
            body_c = ["if %s" % c.c if c.c.startswith("(") else
                      "if (%s)" % c.c,
                      "\t%s = %s;" % (lhs, cv(dst.dtype, val.c)), "else",
                      "\t%s = %s;" % (lhs, cv(dst.dtype, v2.c))]
            lo, hi = min(val.lo, v2.lo), max(val.hi, v2.hi)
            exact = val.exact and v2.exact
        else:
            body_t = ["%s = %s;" % (lhs, val.tile)]
            body_c = ["%s = %s;" % (lhs, cv(dst.dtype, val.c))]
            lo, hi, exact = val.lo, val.hi, val.exact
        st = self.par_nest(idx, between, body_t, body_c, rx)
        if rx is not None:
            lo, hi, exact = min(lo, old[0]), max(hi, old[1]), exact and old[2]
        self.set_range(dst, lo, hi, exact)
        st.defines = [dst]
        st.what = "parallel"
        return st

    def par_nest(self, idx, between, body_t, body_c, rx=None):
        """tile_parallel loops over idx ((var, extent) pairs, outermost
        first), `between` after the first, the body innermost; rx (an E)
        makes the first extent min(extent, rx)."""
        tl, cl = [], []
        d = 0
        for n, (v, e) in enumerate(idx):
            if n == 0 and rx is not None:
                tl.append((d, "tile_parallel(%s, min(%d, %s)) {" % (v, e, rx.tile)))
                cl.append((d, "for (int %s = 0; %s < min_ll(%d, %s); %s++) {" % (
                    v, v, e, rx.c, v)))
            else:
                tl.append((d, "tile_parallel(%s, %d) {" % (v, e)))
                cl.append((d, "for (int %s = 0; %s < %d; %s++) {" % (v, v, e, v)))
            d += 1
            if n == 0:
                for t, c in between:
                    tl.append((d, t))
                    cl.append((d, c))
        for t in body_t:
            tl.append((d, t))
        for c in body_c:
            cl.append((d, c))
        for n in range(len(idx)):
            d -= 1
            tl.append((d, "}"))
            cl.append((d, "}"))
        return Stmt(tl, cl)

    def fit(self, e, dst):
        """e made to fit dst's type: integers within range, floats bounded."""
        if is_int(dst.dtype):
            e = self.convert(e, "i")
            lo, hi = INT_RANGE[dst.dtype]
            if e.lo < lo or e.hi > hi:
                # wrapping conversion is defined (C, and docs/run.md)
                if dst.dtype in ("i4", "i8", "u8", "bool"):
                    # a constant that does not fit is an error (the
                    # compiler's -Wconstant-conversion): say the wrap
                    t = e.tile
                    if dst.dtype != "bool" and constant_text(t):
                        t = "(%s)(%s)" % (dst.dtype, t)
                    return E(t, e.c, "i", lo, hi, True)
                return E("(%s & 1023)" % e.tile, "(%s & 1023)" % e.c, "i",
                         0, 1023, True)
            if dst.dtype == "bool":
                return E(e.tile, e.c, "i", 0, 1, True)
            return e
        if e.kind == "i":
            e = self.convert(e, "f")
        if mag(e) > min(FLOAT_MAX[dst.dtype], 1e4):
            return E("tanhf(%s)" % e.tile, "tanh(%s)" % e.c, "f", -1, 1)
        return e

    def rounds(self, dtype, exact):
        """Note a value converted to dtype: an fp8 rounding of a value
        that is not the same on every backend widens the kernel's
        tolerance to fp8's (tolerance())."""
        if dtype in FP8 and not exact:
            self.k.fp8_inexact = True

    def rounded(self, dtype, lo, hi):
        """An interval holding [lo, hi] rounded to float type dtype."""
        if dtype in FP8:
            w = 1.0 + (1.0 / 8 if dtype == "fp8e4m3" else 1.0 / 4)
            return lo * w if lo < 0 else lo / w, hi * w if hi > 0 else hi / w
        return lo, hi

    def set_range(self, b, lo, hi, exact):
        if not is_int(b.dtype):
            self.rounds(b.dtype, exact)
            lo, hi = self.rounded(b.dtype, lo, hi)
        if is_int(b.dtype):
            tlo, thi = INT_RANGE[b.dtype]
            if lo < tlo or hi > thi:
                lo, hi = tlo, thi
            if b.dtype == "bool":
                lo, hi = 0, 1
            b.lo, b.hi = int(lo), int(hi)
        else:
            b.lo, b.hi = float(lo), float(hi)
        b.exact = exact

    def fill(self, b):
        if is_int(b.dtype):
            v = self.r.randint(*((0, 1) if b.dtype == "bool" else
                                 (0, 9) if b.dtype == "u8" else
                                 (-8, 7) if b.dtype == "i4" else (-9, 9)))
            vt, vc = str(v), str(v)
        else:
            v = self.r.choice([0.0, 1.0, -0.5, 2.0, 0.125])
            vt, vc = repr(v) + "f", repr(v)
        if v == 0 and self.chance(0.5):
            st = simple(["tile_clear(%s);" % b.name],
                        [self.c_loop(b, "%s%%s = 0;" % b.name)], "fill", [b])
        else:
            st = simple(["tile_fill(%s, %s);" % (b.name, vt)],
                        [self.c_loop(b, "%s%%s = %s;" % (
                            b.name, cv(b.dtype, vc)))], "fill", [b])
        self.set_range(b, v, v, True)
        return st

    def c_loop(self, b, body):
        """Oracle: one line looping over b's elements; body has %s for the
        index suffix."""
        names = ["q%d" % n for n in range(len(b.shape))]
        head = " ".join("for (int %s = 0; %s < %d; %s++)" % (q, q, s, q)
                        for q, s in zip(names, b.shape))
        return "%s %s" % (head, body % idx_c(names))

    # --- regions ---

    def origin(self, t, cover, tile_origin, others, extra_ok=True):
        """Origin expressions for tensor t: cover[k] is the tensor dim tile
        dim k covers, tile_origin[k] the E of its start; others gives
        indices for the uncovered dims."""
        P = self.k.P
        org = []
        for d in range(len(t.dims)):
            if d in cover:
                e = tile_origin[cover.index(d)]
            else:
                e = others(d)
            org.append(e)
        return org

    def region_text(self, t, org, cover):
        base = "&%s%s" % (t.name, "".join("[%s]" % e.tile for e in org))
        n = len(cover)
        default = list(range(len(t.dims) - n, len(t.dims)))
        if cover != default or self.chance(0.2):
            return "tile_dims(%s, %s)" % (base, ", ".join(map(str, cover)))
        return base

    def c_element(self, t, org, cover, b, rg):
        """Oracle: the head of a loop over b's elements, the element's
        tensor index e[], and the test that it is inside: the tensor and,
        for a ragged region rg (bounds, mask, rows: see ragged_copy), its
        bounds and mask; tile row q0 stands for the region's row
        rows[q0]."""
        q = ["q%d" % n for n in range(len(b.shape))]
        lines = ["{"]
        for n, e in enumerate(org):
            lines.append("\tlong long o%d = %s;" % (n, e.c))
        lines.append("\t" + " ".join(
            "for (int %s = 0; %s < %d; %s++)" % (x, x, s, x)
            for x, s in zip(q, b.shape)) + " {")
        ix = []
        for d in range(len(t.dims)):
            if d not in cover:
                ix.append("o%d" % d)
            elif rg and rg[2] and cover.index(d) == 0:
                ix.append("o%d + (long long)%s[q0]" % (d, rg[2].name))
            else:
                ix.append("o%d + %s" % (d, q[cover.index(d)]))
        lines.append("\t\tlong long e[%d] = { %s };" % (len(ix), ", ".join(ix)))
        test = ["in_%s(e)" % t.name]
        if rg:
            bounds, mask, rows = rg
            for n, e in enumerate(bounds or []):
                test.append("%s < %s" % (q[n], e.c))
            if mask:
                test.append("%s%s != 0" % (mask.name,
                                           idx_c(q[:len(mask.shape)])))
        return lines, q, "(%s)" % " && ".join(test)

    def c_copy_in(self, t, org, cover, b, rg=None):
        """Oracle lines: b = region of t (out of bounds reads 0)."""
        lines, q, inside = self.c_element(t, org, cover, b, rg)
        lines.append("\t\t%s%s = %s;" % (b.name, idx_c(q), cv(
            b.dtype, "%s ? LD_%s(%s, %s) : 0" % (
                inside, t.dtype, t.name, self.lin(t, "e")))))
        lines.append("\t}")
        lines.append("}")
        return lines

    def c_copy_out(self, t, org, cover, b, atomic=False, rg=None):
        lines, q, inside = self.c_element(t, org, cover, b, rg)
        v = "%s%s" % (b.name, idx_c(q))
        if atomic:
            v = "LD_%s(%s, %s) + %s" % (t.dtype, t.name, self.lin(t, "e"), v)
        lines.append("\t\tif %s" % inside)
        lines.append("\t\t\tST_%s(%s, %s, %s);" % (t.dtype, t.name,
                                                   self.lin(t, "e"), v))
        lines.append("\t}")
        lines.append("}")
        return lines

    def ragged_copy(self, t, org, cover, b, load):
        """A tile_copy between b and a ragged region of t: tile_bounded
        (extents from constants, parameters, and the rows left in the
        tensor), tile_masked (a tile-shaped or row mask an element loop
        computes) and tile_rows (an index an element loop computes: any
        rows, past the tensor's edges too, for a gather; a permutation of
        the tile's own rows for a scatter, so no two blocks and no two
        rows write one element), each at most once, in any order.  The
        mask and index statements come first.  All of it from the ragged
        stream: the rest of the kernel is as without the feature."""
        main, self.r = self.r, self.rag
        try:
            return self.ragged_copy_from(t, org, cover, b, load)
        finally:
            self.r = main

    def ragged_copy_from(self, t, org, cover, b, load):
        r, S = self.r, b.shape
        kinds = [w for w in ("bounded", "masked", "rows") if self.chance(0.45)]
        if not kinds:
            kinds = [self.pick(["bounded", "masked", "rows"])]
        r.shuffle(kinds)
        text = self.region_text(t, org, cover)
        bounds, mask, rows, pre = None, None, None, []
        names = ["i", "j", "l"]
        bvar = self.grid_vars[0] or "0"
        for w in kinds:
            if w == "bounded":
                bounds = []
                for n in range(r.randint(1, len(S))):
                    d = cover[n]
                    opts = [iconst(r.randint(-1, S[n] + 2)),
                            E(t.dims[d], "((long long)%s)" % t.dims[d], "i",
                              self.k.P[t.dims[d]], self.k.P[t.dims[d]], True),
                            E("%s - (%s)" % (t.dims[d], org[d].tile),
                              "((long long)%s - %s)" % (t.dims[d], org[d].c),
                              "i", -64, 64, True)]
                    bounds.append(self.pick(opts))
                text = "tile_bounded(%s, %s)" % (
                    text, ", ".join(e.tile for e in bounds))
            elif w == "masked":
                shape = S if len(S) == 1 or self.chance(0.5) else S[:1]
                dt = self.pick(["bool", "i32", "u8", "i8"])
                sc = self.scope_for(dt, shape)
                if not sc:      # a bool the features keep out of every scope
                    dt, sc = "i32", self.scope_for("i32", shape) or "shared"
                mask = self.new_buf(sc, dt, shape, "m")
                a, c, m = r.randint(1, 5), r.randint(0, 7), r.choice([2, 3, 4])
                iv = names[:len(shape)]
                lin_t = " + ".join(["%s * %d" % (iv[0], a)] +
                                   ["%s * %d" % (v, n + 2)
                                    for n, v in enumerate(iv[1:])] +
                                   ["%s * 3" % bvar, str(c)])
                val_t = "(%s) %% %d" % (lin_t, m)
                if mask.dtype == "bool":
                    val_t = "(%s) != 0" % val_t
                lhs = "%s%s" % (mask.name, idx_c(iv))
                st = self.par_nest(list(zip(iv, shape)), [],
                                   ["%s = %s;" % (lhs, val_t)],
                                   ["%s = (double)(%s);" % (lhs, val_t)])
                st.defines, st.what = [mask], "mask"
                self.set_range(mask, 0, m - 1, True)
                pre.append(st)
                text = "tile_masked(%s, %s)" % (text, mask.name)
            else:
                dt = self.pick(["i32", "i64"])
                sc = self.scope_for(dt, S[:1]) or "shared"
                rows = self.new_buf(sc, dt, S[:1], "r")
                if load:
                    a, c = r.randint(1, 7), r.randint(0, 9)
                    m = r.choice([S[0], S[0] + 3, 2 * S[0] + 1])
                    off = r.choice([0, 0, 1, 2])
                    val_t = "(i * %d + %s * %d + %d) %% %d - %d" % (
                        a, bvar, r.randint(0, 3), c, m, off)
                    lo, hi = -off, m - 1 - off
                else:
                    # odd multipliers permute the 2^n rows of a tile
                    a, c = 2 * r.randint(0, 3) + 1, r.randint(0, 9)
                    val_t = "(i * %d + %s * %d + %d) %% %d" % (
                        a, bvar, r.randint(0, 3), c, S[0])
                    lo, hi = 0, S[0] - 1
                st = self.par_nest([("i", S[0])], [],
                                   ["%s[i] = %s;" % (rows.name, val_t)],
                                   ["%s[i] = (double)(%s);" % (rows.name, val_t)])
                st.defines, st.what = [rows], "index"
                self.set_range(rows, lo, hi, True)
                pre.append(st)
                text = "tile_rows(%s, %s)" % (text, rows.name)
        rg = (bounds, mask, rows)
        if load:
            copy = simple(["tile_copy(%s, %s);" % (b.name, text)],
                          self.c_copy_in(t, org, cover, b, rg), "ragged-in",
                          [b])
        else:
            copy = simple(["tile_copy(%s, %s);" % (text, b.name)],
                          self.c_copy_out(t, org, cover, b, rg=rg),
                          "ragged-out")
        if not pre:
            return copy
        return Stmt([(0, None)], [(0, None)], [], pre + [copy], "seq")

    def lin(self, t, e):
        s = "%s[0]" % e
        for d in range(1, len(t.dims)):
            s = "(%s) * %s + %s[%d]" % (s, t.dims[d], e, d)
        return s

    # --- the kernel ---

    def make(self, nstmts):
        k, r = self.k, self.r
        k.threads = r.choice(([32] if "small_blocks" in self.f else []) +
                             [64, 128, 128, 256])
        rank = r.choice([1, 2, 2, 2] + ([3] if "rank3" in self.f else []))
        sizes = [1, 2, 4, 8, 16, 32, 64]
        if self.vec:
            # rows of whole vectors (16 lanes on AVX-512, 8 on avx2)
            rank = r.choice([1, 2, 2])
        while True:
            S = [r.choice(sizes) for _ in range(rank)]
            if self.vec:
                S[-1] = r.choice([16, 32, 64])
                if rank == 2:
                    S[0] = r.choice([1, 2, 4, 8])
            n = 1
            for s in S:
                n *= s
            if n <= 2048 and (rank < 3 or n <= 512):
                break
        # a dequant_b kernel (its own stream): a gemm first, of a shape
        # mma.sync takes, whose B an element loop computes
        self.deq = "dequant_b" in self.f and "gemm" in self.f and \
            not self.vec and rank == 2 and self.side.random() < 0.15
        if self.deq:
            S = [self.side.choice([16, 32]), self.side.choice([32, 64])]
        self.S = S
        k.exact = self.chance(0.35) and not self.vec and not self.deq
        # grid: one block index per tile dim (x, y), over extents E_t.
        E_t = [self.new_param() for _ in S]
        self.E_t = E_t
        # at most 4 tiles along each dim (the HIP emulator runs a thread
        # per GPU thread): whole tiles, a ragged last one, or a tiny extent
        for t, p in enumerate(E_t):
            q = r.randint(0, 3)
            rem = r.randint(0, S[t] - 1)
            k.P[p] = max(1, q * S[t] + rem) if self.chance(0.8) else \
                r.choice([1, 2, 3])
        grid_vars = []
        for t, s in enumerate(S):
            if t < 2:
                v = "b%d" % t
                fn = "tile_grid_%s" % "xy"[t]
                ext = "ceildiv(%s, %d)" % (E_t[t], s)
                k.head.append("int %s = %s(%s);" % (v, fn, ext))
                k.grid.append((v, ext))
                grid_vars.append(v)
            else:
                grid_vars.append(None)
        # rank 3 tiles: the third dim is walked by a serial loop in chunks
        # of S[2] (an outer loop over the whole body).
        ints = []
        for t, v in enumerate(grid_vars):
            if v:
                nb = -(-k.P[E_t[t]] // S[t])
                ints.append(E(v, "((long long)%s)" % v, "i", 0, nb - 1, True))
        # the uncovered output dim (if any): grid_z or a serial loop
        self.U = None
        outer = []
        if self.chance(0.5):
            U = self.new_param(small=True)
            self.U = U
            if self.chance(0.5):
                k.head.append("int u = tile_grid_z(%s);" % U)
                k.grid.append(("u", U))
            else:
                outer.append(("u", U))
            ints.append(E("u", "((long long)u)", "i", 0, k.P[U] - 1, True))
        if rank == 3:
            outer.append(("c", "ceildiv(%s, %d)" % (E_t[2], S[2])))
            nc = -(-k.P[E_t[2]] // S[2])
            ints.append(E("c", "((long long)c)", "i", 0, nc - 1, True))
            grid_vars[2] = "c"
        self.grid_vars = grid_vars
        self.ints = ints
        self.outer = outer
        # tile origin along each tile dim, for inputs and outputs
        self.torg = []
        for t, s in enumerate(S):
            v = grid_vars[t]
            nb = -(-k.P[E_t[t]] // s)
            self.torg.append(E("%s * %d" % (v, s), "((long long)%s * %d)" % (v, s),
                               "i", 0, (nb - 1) * s, True))
        body = []
        live = []
        # inputs: 1 to 3 tiles read
        for _ in range(r.randint(1, 3)):
            st = self.load_input(live)
            if st:
                body.append(st)
        if not live:
            b = self.make_buf(tuple(S), want_int=k.exact)
            body.append(self.fill(b))
            live.append(b)
        for _ in range(nstmts):
            st = self.compute(live, 2)
            if st:
                body.append(st)
        # outputs
        nout = r.randint(1, 2)
        for _ in range(nout):
            body.append(self.store_output(live))
        if "atomics" in self.f and self.chance(0.25):
            st = self.atomic(live)
            if st:
                body.append(st)
        # wrap the body in the outer serial loops
        for v, ext in reversed(outer):
            cext = ext
            body = [compound(["for (int %s = 0; %s < %s; %s++) {" % (v, v, ext, v)],
                             ["for (int %s = 0; %s < %s; %s++) {" % (v, v, cext, v)],
                             body, what="outer")]
        k.body = body
        return k

    # (BLOCK_M, BLOCK_N, threads) of the fast_gemm kernels: at most 128
    # accumulator elements a thread, whole warpgroups.
    FAST_TILES = [(64, 64, 128), (64, 128, 128), (128, 64, 128),
                  (128, 128, 128), (64, 256, 128), (256, 64, 128),
                  (64, 128, 256), (128, 128, 256), (128, 256, 256),
                  (256, 128, 256)]

    def make_fast(self):
        """A gemm shaped for the sm_90a fast loop (docs/backend-cuda.md,
        "wgmma" and "TMA"): acc[BM][BN] += A * B over a tile_pipelined
        loop of 3 or 4 stages whose copies feed the tile_gemm straight from
        f16, bf16 or i8 tensors, both transposes; then an epilogue (a bias,
        element-wise code over the accumulator, reduces, casts) and the
        stores.  Ragged M, N and K, rows that are 16-byte multiples (the
        TMA loop runs) or not (its cp.async twin does), a batch dim through
        tile_grid_z, a second gemm sharing A (gated units), and now and
        then what takes a kernel off the fast path (a converting copy, an
        i8 operand that is not K-major), so the notes' paths run too."""
        self.fast = self.k.fast = True
        k, r = self.k, self.r
        odt = r.choice(["f16", "bf16", "i8"])
        if self.narrow and self.chance(0.5):
            odt = self.pick(FP8)
        size = SIZE[odt]
        tiles = self.FAST_TILES
        if odt in FP8:
            # HIP (gfx90a) has no fp8 matrix instruction: the gemm runs
            # element by element with its f32 accumulator in LDS, where
            # more than 64 x 128 of it (and a second one) would not fit
            # in 64 KiB beside the operands (a located error)
            tiles = [t for t in tiles if t[0] * t[1] <= 8192]
        BM, BN, k.threads = r.choice(tiles)
        gated = BM * BN // k.threads <= 64 and self.chance(0.2) and \
            odt not in FP8
        if size == 1:
            # wgmma takes 8-bit operands K-major only: mostly those
            ta, tb = self.chance(0.15), self.chance(0.85)
        else:
            ta, tb = self.chance(0.4), self.chance(0.5)
        nb = 2 if gated else 1
        for _ in range(100):
            BK = r.choice([16, 32, 64, 128] if size == 2 else [32, 64, 128])
            stages = r.choice([3, 3, 4])
            per = (BM + nb * BN) * BK * size
            if stages * per <= 128 * 1024 and per <= 32 * 1024:
                break
        k.exact = odt == "i8"
        if odt in FP8:
            # fp8 sums on wgmma, promoted per gemm, are up to 2.5e-4 of
            # the largest |acc| from exact ones (the manifest's
            # promoted_sums); an epilogue's sqrtf or logf magnifies that
            # where |acc| is small (seed 16753 k5 on an H100: acc 1.18
            # of 11.3, off by 1.6e-4 of 11.3, became 2.51e-4 of the
            # largest sqrt)
            k.tol = max(k.tol or 0, 1e-3)
        # (f16 accumulators have no matrix instruction: the ordinary
        # gemms cover them)
        acct = "i32" if odt == "i8" else "f32"
        self.S = S = [BM, BN]
        Mp, Np, Kp = self.new_param(), self.new_param(), self.new_param()
        self.E_t = [Mp, Np]
        al = 16 // size       # elements in 16 bytes
        aligned = self.chance(0.6)
        for _ in range(100):
            def extent(tile, most):
                if self.chance(0.1):
                    return r.choice([1, 2, 3, al + 1])
                return max(1, r.randint(0, most) * tile +
                           r.choice([0, r.randint(1, tile - 1)]))
            M, N = extent(BM, 2), extent(BN, 2)
            K = extent(BK, 4)
            if aligned:
                M, N, K = [-(-v // al) * al for v in (M, N, K)]
            if M * N * K <= 1 << 23:
                break
        k.P[Mp], k.P[Np], k.P[Kp] = M, N, K
        for t, (p, s) in enumerate(zip(self.E_t, S)):
            v = "b%d" % t
            ext = "ceildiv(%s, %d)" % (p, s)
            k.head.append("int %s = %s(%s);" % (v, "tile_grid_" + "xy"[t], ext))
            k.grid.append((v, ext))
        self.grid_vars = ["b0", "b1"]
        self.ints = [E(v, "((long long)%s)" % v, "i", 0,
                       -(-k.P[p] // s) - 1, True)
                     for v, p, s in zip(self.grid_vars, self.E_t, S)]
        self.U = None
        self.outer = []
        if self.chance(0.25):
            self.U = self.new_param(small=True)
            k.P[self.U] = r.choice([1, 2, 3])
            k.head.append("int u = tile_grid_z(%s);" % self.U)
            k.grid.append(("u", self.U))
            self.ints.append(E("u", "((long long)u)", "i", 0,
                               k.P[self.U] - 1, True))
        self.torg = []
        for t, s in enumerate(S):
            nblk = -(-k.P[self.E_t[t]] // s)
            v = self.grid_vars[t]
            self.torg.append(E("%s * %d" % (v, s), "((long long)%s * %d)" %
                               (v, s), "i", 0, (nblk - 1) * s, True))
        body, live = [], []
        C = self.new_buf("fragment", acct, S, "acc")
        body.append(self.fill(C))
        C2 = None
        if gated:
            C2 = self.new_buf("fragment", acct, S, "acc")
            body.append(self.fill(C2))
        # the operands
        tdt = odt if self.chance(0.92) else ("i32" if k.exact else "f32")
        if self.narrow and self.chance(0.15):
            tdt = "i4"      # packed weights converted as copied (W4A16)
        kvar = E("k * %d" % BK, "((long long)k * %d)" % BK, "i", 0, 0, True)

        def shifted(e):
            """Now and then an origin off the block's tile: negative or
            past the end (TMA fills zeros there)."""
            if "neg_origin" not in self.f or not self.chance(0.1):
                return e
            off = r.choice([-3, -8, 5, -(BM // 2)])
            return E("%s - %d" % (e.tile, -off) if off < 0 else
                     "%s + %d" % (e.tile, off), "(%s + %d)" % (e.c, off), "i",
                     e.lo + off, e.hi + off, True)

        def operand(dims2, org2, hint):
            """A tensor with the 2-D operand dims (a batch dim put before
            or between them) and the origin of the block's copy."""
            dims, org, cover = list(dims2), list(org2), [0, 1]
            if self.U and self.chance(0.7):
                pos = r.choice([0, 0, 1])
                dims.insert(pos, self.U)
                org.insert(pos, E("u", "((long long)u)", "i", 0,
                                  k.P[self.U] - 1, True))
                cover = [d for d in range(3) if d != pos]
            return self.new_tensor(tdt, dims, True, hint), org, cover

        ashape = (BK, BM) if ta else (BM, BK)
        bshape = (BN, BK) if tb else (BK, BN)
        A = self.new_buf("shared", odt, ashape, "a")
        TA, ao, ac = operand([Kp, Mp] if ta else [Mp, Kp],
                             [kvar, shifted(self.torg[0])] if ta else
                             [shifted(self.torg[0]), kvar], "A")
        Bs = []
        for _ in range(nb):
            B = self.new_buf("shared", odt, bshape, "b")
            TB, bo, bc = operand([Np, Kp] if tb else [Kp, Np],
                                 [self.torg[1], kvar] if tb else
                                 [kvar, self.torg[1]], "B")
            Bs.append((B, TB, bo, bc))
        copies = [simple(["tile_copy(%s, %s);" % (A.name, self.region_text(
            TA, ao, ac))], self.c_copy_in(TA, ao, ac, A), "copy-in", [A])]
        for B, TB, bo, bc in Bs:
            copies.append(simple(["tile_copy(%s, %s);" % (
                B.name, self.region_text(TB, bo, bc))],
                self.c_copy_in(TB, bo, bc, B), "copy-in", [B]))
        if self.chance(0.3):
            r.shuffle(copies)
        flags = [f for f, on in (("TILE_TRANS_A", ta), ("TILE_TRANS_B", tb))
                 if on]
        ft = (", " + " | ".join(flags)) if flags else ""
        A_idx = "w][i" if ta else "i][w"
        B_idx = "j][w" if tb else "w][j"
        m = 7 if k.exact or tdt == "i4" else 1
        bound = K * m * m + max(abs(C.lo), abs(C.hi))
        gemms = []
        for acc, (B, _, _, _) in zip([C, C2], Bs):
            gemms.append(simple(
                ["tile_gemm(%s, %s, %s%s);" % (acc.name, A.name, B.name, ft)],
                ["for (int i = 0; i < %d; i++) for (int j = 0; j < %d; j++) {"
                 % (BM, BN),
                 "\tdouble a = 0;",
                 "\tfor (int w = 0; w < %d; w++)" % BK,
                 "\t\ta += %s[%s] * %s[%s];" % (A.name, A_idx, B.name, B_idx),
                 "\t%s[i][j] = %s;" % (acc.name, cv(acc.dtype, "%s[i][j] + a"
                                                    % acc.name)),
                 "}"], "gemm", [acc]))
        head_t = "tile_pipelined(k, ceildiv(%s, %d), %d) {" % (Kp, BK, stages)
        head_c = "for (int k = 0; k < ceildiv(%s, %d); k++) {" % (Kp, BK)
        loop = compound([head_t], [head_c], copies + gemms, what="gemm-loop")
        loop.defines = [b for b in (C, C2) if b]
        body.append(loop)
        for acc in (C, C2):
            if acc:
                acc.lo, acc.hi = -bound, bound
                acc.exact = is_int(acct)
                live.append(acc)
        # the epilogue
        for _ in range(r.randint(0, 3)):
            st = self.epilogue(live)
            if st:
                body.append(st)
        for _ in range(r.randint(1, 2)):
            body.append(self.store_output(live))
        if "atomics" in self.f and self.chance(0.1):
            st = self.atomic(live)
            if st:
                body.append(st)
        k.body = body
        return k

    def epilogue(self, live):
        """One statement after a fast_gemm loop: a bias row or column
        copied in and added, element-wise code over the accumulators (in
        place or into a new tile), a reduce, a block-level reduce, a
        cast."""
        r = self.r
        S = tuple(self.S)
        what = r.choice(["bias", "bias", "elementwise", "elementwise",
                         "reduce", "cast"] +
                        (["reduce_all"] if "reduce_all" in self.f else []) +
                        (["chain", "chain"] if "chain" in self.f else []))
        if what == "chain":
            st = self.chain(live)
            if st:
                return st
            what = "cast"
        if what == "bias":
            d = r.choice([1, 1, 0])
            dt = r.choice(["i32", "i8"] if self.k.exact else
                          ["f32", "f16", "bf16"])
            if self.narrow and self.chance(0.4):
                dt = "i4" if self.k.exact else self.pick(FP8)
            t = self.new_tensor(dt, [self.E_t[d]], True, "Bias")
            b = self.new_buf(self.scope_for(dt, (S[d],)) or "shared", dt,
                             (S[d],), "bias")
            b.axis = d
            lo, hi = input_range(dt)
            self.set_range(b, min(lo, 0), max(hi, 0), True)
            org = [self.torg[d]]
            cp = simple(["tile_copy(%s, %s);" % (b.name, self.region_text(
                t, org, [0]))], self.c_copy_in(t, org, [0], b), "copy-in", [b])
            live.append(b)
            acc = r.choice([x for x in live if x.shape == S])
            # acc[i][j] = acc[i][j] + bias[j] (or [i]), then more of the
            # random kind over it
            names = ["i", "j"]
            sc = E("%s[%s]" % (b.name, names[d]), ("((long long)%s[%s])" if
                   is_int(dt) else "%s[%s]") % (b.name, names[d]),
                   "i" if is_int(dt) else "f", b.lo, b.hi, True)
            kind = "i" if is_int(acc.dtype) else "f"
            sc = self.convert(sc, kind)
            own = E("%s[i][j]" % acc.name, ("((long long)%s[i][j])" if
                    kind == "i" else "%s[i][j]") % acc.name, kind, acc.lo,
                    acc.hi, acc.exact)
            val = E("(%s + %s)" % (own.tile, sc.tile),
                    "(%s + %s)" % (own.c, sc.c), kind, own.lo + sc.lo,
                    own.hi + sc.hi, own.exact and sc.exact)
            val = self.fit(val, acc)
            add = self.par_nest(list(zip(names, S)), [],
                                ["%s[i][j] = %s;" % (acc.name, val.tile)],
                                ["%s[i][j] = %s;" % (acc.name,
                                                     cv(acc.dtype, val.c))])
            add.what = "parallel"
            self.set_range(acc, val.lo, val.hi, val.exact)
            return Stmt([(0, None)], [(0, None)], [b, acc], [cp, add], "seq")
        if what == "elementwise":
            # in place: a new tile that no statement joins with the
            # accumulator's rows would keep its own layout, which takes
            # every fragment to shared memory on HIP (new tiles come from
            # casts)
            dst = r.choice([b for b in live if b.shape == S])
            return self.elementwise(dst, live, list(self.scalars),
                                    self.ints)
        if what == "reduce":
            st = self.reduce(r.choice([b for b in live if b.shape == S]),
                             live)
            m = re.match(r"tile_reduce_\w+\((\w+), (\w+), (\d)",
                         st.tile[0][1]) if st else None
            if m:
                for b in live:
                    if b.name == m.group(1) and len(b.shape) == 1:
                        b.axis = 1 - int(m.group(3))
            return st
        if what == "reduce_all":
            return self.reduce_all(r.choice([b for b in live
                                             if b.shape == S]))
        src = r.choice([b for b in live if b.shape == S])
        if self.k.exact:
            dt = r.choice(["i8", "u8", "i32"])
        else:
            dt = r.choice(["f16", "bf16"]) if mag(src) < 60000 else "f32"
            if self.narrow and self.chance(0.4):
                fp8 = self.pick(FP8)
                dt = fp8 if mag(src) < FLOAT_MAX[fp8] else dt
        dst = self.new_buf("fragment", dt, S, "t")
        live.append(dst)
        self.set_range(dst, src.lo, src.hi, src.exact)
        return self.cast(dst, src)

    def chain(self, live):
        """Attention's second gemm after a fast_gemm loop: an f32
        accumulator, masked where its row and column indices (offset by
        the block's tile) fail a test, rounded into an f16 or bf16 tile
        and multiplied by a [BN][BN] tile of a new tensor into a new
        accumulator."""
        k, r = self.k, self.r
        S = tuple(self.S)
        BM, BN = S
        srcs = [b for b in live if b.shape == S and b.dtype == "f32"]
        # (W is BN x BN in shared memory: HIP has 64 KiB for the kernel)
        if k.exact or not srcs or BM * BN // k.threads > 64 or BN > 64:
            return None
        src = r.choice(srcs)
        if mag(src) > 30000:
            return None
        stmts = []
        if self.chance(0.7):
            # keep = col < N && (row - col) OP d, rows and columns of the
            # whole tensor: a ragged edge and a diagonal
            row = "(%s + i)" % self.torg[0].tile, "(%s + i)" % self.torg[0].c
            col = "(%s + j)" % self.torg[1].tile, "(%s + j)" % self.torg[1].c
            n = k.P[self.E_t[1]]
            d = r.choice([0, 0, 1, -1, BN // 2, -BM])
            op = r.choice([">=", ">", "<=", "<"])
            tests_t = ["%s < %s" % (col[0], self.E_t[1])]
            tests_c = ["%s < %d" % (col[1], n)]
            if self.chance(0.7):
                tests_t.append("%s - %s %s %d" % (row[0], col[0], op, d)
                               if d >= 0 else
                               "%s - %s %s (%d)" % (row[0], col[0], op, d))
                tests_c.append("%s - %s %s (%d)" % (row[1], col[1], op, d))
            keep_t, keep_c = " && ".join(tests_t), " && ".join(tests_c)
            body_t = ["bool keep = %s;" % keep_t,
                      "%s[i][j] = keep ? %s[i][j] : 0.0f;" % (src.name, src.name)]
            body_c = ["int keep = %s;" % keep_c,
                      "%s[i][j] = keep ? %s[i][j] : 0.0;" % (src.name, src.name)]
            mask = self.par_nest([("i", BM), ("j", BN)], [], body_t, body_c)
            mask.what = "parallel"
            mask.defines = [src]
            self.set_range(src, min(src.lo, 0), max(src.hi, 0), src.exact)
            stmts.append(mask)
        dt = r.choice(["f16", "bf16"])
        P = self.new_buf("fragment", dt, S, "p")
        self.set_range(P, src.lo, src.hi, src.exact)
        stmts.append(self.cast(P, src))
        tb = self.chance(0.5)
        W = self.new_buf("shared", dt, (BN, BN), "w")
        t = self.new_tensor(dt, [self.E_t[1], self.E_t[1]], True, "W")
        org = [self.torg[1], self.torg[1]]
        cp = simple(["tile_copy(%s, %s);" % (W.name, self.region_text(
            t, org, [0, 1]))], self.c_copy_in(t, org, [0, 1], W), "copy-in", [W])
        # the operand's copy before the mask or between the cast and
        # the gemm
        stmts.insert(0 if self.chance(0.5) else len(stmts), cp)
        lo, hi = input_range(dt)
        self.set_range(W, min(lo, 0), max(hi, 0), True)
        acc = self.new_buf("fragment", "f32", S, "acc")
        stmts.append(self.fill(acc))
        widx = "j][w" if tb else "w][j"
        stmts.append(simple(
            ["tile_gemm(%s, %s, %s%s);" % (acc.name, P.name, W.name,
                                            ", TILE_TRANS_B" if tb else "")],
            ["for (int i = 0; i < %d; i++) for (int j = 0; j < %d; j++) {"
             % (BM, BN),
             "\tdouble a = 0;",
             "\tfor (int w = 0; w < %d; w++)" % BN,
             "\t\ta += %s[i][w] * %s[%s];" % (P.name, W.name, widx),
             "\t%s[i][j] = %s;" % (acc.name, cv("f32", "%s[i][j] + a"
                                                % acc.name)),
             "}"], "gemm", [acc]))
        bound = BN * mag(P) * max(abs(lo), abs(hi)) + max(abs(acc.lo), abs(acc.hi))
        self.set_range(acc, -bound, bound, False)
        live.append(acc)
        return Stmt([(0, None)], [(0, None)], [P, W, acc], stmts, "seq")

    def in_dtype(self):
        if self.vec:
            return self.pick(["f32", "f16", "bf16"])
        if self.narrow and self.chance(0.4):
            return "i4" if self.k.exact or self.chance(0.3) else \
                self.pick(FP8)
        if self.k.exact:
            dts = INTS + (["bool"] if "bool_tensor_copy" in self.f else [])
        else:
            dts = FLOATS + FLOATS + INTS
        return self.pick(dts)

    def load_input(self, live):
        """A copy of a region of a new input tensor into a new tile, or a
        guarded element-wise gather."""
        k, r = self.k, self.r
        S = self.S
        dt = self.in_dtype()
        rank = len(S)
        trank = r.randint(rank, min(4, rank + 2))
        cover = sorted(r.sample(range(trank), rank))
        dims = [None] * trank
        for t, d in enumerate(cover):
            # the tile's own extent, or another (ragged against it)
            dims[d] = self.E_t[t] if self.chance(0.7) else self.pick(
                k.params) if k.params else self.E_t[t]
        for d in range(trank):
            if dims[d] is None:
                if self.U and self.chance(0.5):
                    dims[d] = self.U
                else:
                    dims[d] = self.new_param(small=True)
        t = self.new_tensor(dt, dims, True, "X")
        # origins: the block's tile, shifted
        org_t = []
        for n, d in enumerate(cover):
            base = self.torg[n]
            off = r.choice([0, 0, 0, 0, 1, 3, -1, -3, S[n], k.P[dims[d]],
                            k.P[dims[d]] + 2])
            if off < 0 and "neg_origin" not in self.f:
                off = 0
            if off == 0:
                org_t.append(base)
            else:
                org_t.append(E("%s + %d" % (base.tile, off) if off > 0 else
                               "%s - %d" % (base.tile, -off),
                               "(%s + %d)" % (base.c, off), "i",
                               base.lo + off, base.hi + off, True))

        def other(d):
            ext = k.P[dims[d]]
            opts = [iconst(0), iconst(ext - 1), iconst(ext), iconst(ext + 3)]
            if "neg_origin" in self.f:
                opts.append(iconst(-1))
            for e in self.ints:
                if e.hi < ext or self.chance(0.3):
                    opts.append(e)
            return self.pick(opts)
        org = self.origin(t, cover, org_t, other)
        b = self.make_buf(tuple(S), want_int=is_int(dt) if self.chance(0.8)
                          else None, hint="x")
        if b.dtype == "bool" and "bool_tensor_copy" not in self.f:
            b = self.new_buf(self.scope_for("i32", S) or "shared", "i32", S, "x")
        if b.dtype == "u8" and not is_int(dt):
            # an input of -1.0 truncates to -1, which no u8 holds: the
            # conversion is undefined (a GPU gives 0, x86 255)
            self.k.bufs.remove(b)
            b = self.new_buf(self.scope_for("i8", S) or "shared", "i8", S, "x")
        lo, hi = input_range(dt)
        if is_int(b.dtype) and not is_int(dt):
            lo, hi = -1, 1
        self.set_range(b, min(lo, 0), max(hi, 0), True)
        if is_int(b.dtype) and b.dtype == "u8" and lo < 0:
            self.set_range(b, 0, 255, True)
        if b.dtype == "bool":
            self.set_range(b, 0, 1, True)
        if self.chance(0.05 if self.vec else 0.3):
            st = self.gather(t, org, cover, b)
        elif "ragged" in self.f and \
                self.rag.random() < (0.05 if self.vec else 0.25):
            st = self.ragged_copy(t, org, cover, b, True)
        else:
            st = simple(["tile_copy(%s, %s);" % (b.name,
                                                 self.region_text(t, org, cover))],
                        self.c_copy_in(t, org, cover, b), "copy-in", [b])
        live.append(b)
        return st

    def gather(self, t, org, cover, b):
        """b[i][j] = X[...] element by element, guarded where the index may
        leave the tensor."""
        P = self.k.P
        names = ["i", "j", "l"][:len(b.shape)]
        ix, ixc, guards, guardc = [], [], [], []
        for d in range(len(t.dims)):
            e = org[d]
            if d in cover:
                v = names[cover.index(d)]
                tile = "%s + %s" % (e.tile, v)
                c = "(%s + %s)" % (e.c, v)
                lo, hi = e.lo, e.hi + b.shape[cover.index(d)] - 1
            else:
                tile, c, lo, hi = e.tile, e.c, e.lo, e.hi
            ix.append(tile)
            ixc.append(c)
            ext = P[t.dims[d]]
            if lo < 0:
                guards.append("%s >= 0" % tile)
                guardc.append("%s >= 0" % c)
            if hi >= ext:
                guards.append("%s < %s" % (tile, t.dims[d]))
                guardc.append("%s < %s" % (c, t.dims[d]))
        load = "%s%s" % (t.name, "".join("[%s]" % x for x in ix))
        lin = ixc[0]
        for d in range(1, len(t.dims)):
            lin = "(%s) * %s + %s" % (lin, t.dims[d], ixc[d])
        cload = "LD_%s(%s, %s)" % (t.dtype, t.name, lin)
        if is_int(t.dtype) and t.dtype != "bool" and is_int(b.dtype):
            pass
        conv = ""
        if is_int(b.dtype) and not is_int(t.dtype):
            conv = "(int)"   # C truncation, as the copy's conversion
        lhs = "%s%s" % (b.name, idx_c(names))
        if guards:
            g, gc = " && ".join(guards), " && ".join(guardc)
            if "select_guard" in self.f and self.chance(0.5):
                bt = ["%s = %s ? %s%s : 0;" % (lhs, g, conv, load)]
                bc = ["%s = %s;" % (lhs, cv(b.dtype, "(%s) ? %s : 0" % (gc, cload)))]
            else:
                bt = ["if (%s)" % g, "\t%s = %s%s;" % (lhs, conv, load), "else",
                      "\t%s = 0;" % lhs]
                bc = ["if (%s)" % gc, "\t%s = %s;" % (lhs, cv(b.dtype, cload)),
                      "else", "\t%s = 0;" % lhs]
        else:
            bt = ["%s = %s%s;" % (lhs, conv, load)]
            bc = ["%s = %s;" % (lhs, cv(b.dtype, cload))]
        st = self.par_nest(list(zip(names, b.shape)), [], bt, bc)
        st.defines, st.what = [b], "gather"
        return st

    def compute(self, live, depth):
        r = self.r
        S = tuple(self.S)
        choices = ["elementwise"] * 4 + ["reduce"] * 2 + ["cast", "fill",
                   "if", "loop", "local"]
        if "reduce_all" in self.f and depth == 2:
            choices += ["reduce_all"] * 2
        if len(S) == 2 and "gemm" in self.f:
            choices += ["gemm"] * 2
        if self.vec:
            choices = ["elementwise"] * 6 + ["reduce"] * 2 + ["cast"]
        if "argred" in self.f and not self.vec and \
                self.arg.random() < 0.12:
            main, self.r = self.r, self.arg
            try:
                st = self.argred(live)
            finally:
                self.r = main
            if st:
                return st
        if "transpose" in self.f and len(S) == 2 and \
                self.tr.random() < 0.12:
            main, self.r = self.r, self.tr
            try:
                st = self.transpose(live)
            finally:
                self.r = main
            if st:
                return st
        what = r.choice(choices)
        if depth <= 0 and what in ("if", "loop"):
            what = "elementwise"
        if self.deq:
            what, self.deq = "gemm", "done"
        if what == "reduce_all":
            return self.reduce_all(r.choice(live))
        if what == "elementwise":
            same = [b for b in live if b.shape == S]
            if same and self.chance(0.4):
                dst = r.choice(same)   # overwrite (reads may use its old value)
                rx = None
                if "runtime_extent" in self.f and self.ext.random() < 0.3:
                    rx = self.runtime_extent(dst.shape[0])
                return self.elementwise(dst, live, list(self.scalars),
                                        self.ints, rx)
            dst = self.make_buf(S, want_int=self.k.exact or None)
            st = self.elementwise(dst, live, list(self.scalars), self.ints)
            live.append(dst)
            return st
        if what == "reduce":
            srcs = [b for b in live if len(b.shape) >= 2]
            if not srcs:
                return None
            src = r.choice(srcs)
            return self.reduce(src, live)
        if what == "cast":
            src = r.choice(live)
            if self.narrow and self.k.exact and is_int(src.dtype) and \
                    mag(src) < 400 and self.chance(0.4):
                # an exact kernel's integers through fp8 and back: the
                # rounding of exact values is exact everywhere
                dt = self.pick(FP8)
                dst = self.new_buf(self.scope_for(dt, src.shape) or
                                   "fragment", dt, src.shape, "t")
                live.append(dst)
                self.set_range(dst, src.lo, src.hi, True)
                return self.cast(dst, src)
            dst = self.make_buf(src.shape, want_int=None if not self.k.exact
                                else True)
            if dst.dtype == "i4" and not is_int(src.dtype) and mag(src) >= 8:
                # a float past i4's range has no i4 value (undefined)
                dst.dtype = "i8"
            if is_int(dst.dtype) and not is_int(src.dtype) and not src.exact:
                dst = self.new_buf(self.scope_for("f32", src.shape) or
                                   "fragment", "f32", src.shape, "t")
            if is_int(dst.dtype) and not is_int(src.dtype) and \
                    max(abs(src.lo), abs(src.hi)) > 100:
                dst = self.new_buf(self.scope_for("f32", src.shape) or
                                   "fragment", "f32", src.shape, "t")
            if dst.dtype == "u8" and src.lo < 0 and not is_int(src.dtype):
                dst.dtype = "i32" if dst.scope == "shared" else "f32"
            if not is_int(dst.dtype) and mag(E("", "", "f", src.lo, src.hi)) > FLOAT_MAX[dst.dtype]:
                dst.dtype = "f32"
            live.append(dst)
            self.set_range(dst, src.lo, src.hi, src.exact)
            if is_int(dst.dtype) and not is_int(src.dtype):
                self.set_range(dst, int(src.lo) - 1, int(src.hi) + 1, True)
            return self.cast(dst, src)
        if what == "fill":
            b = self.make_buf(S if self.chance(0.7) else S[:1],
                              want_int=self.k.exact or None)
            live.append(b)
            return self.fill(b)
        if what == "gemm":
            return self.gemm(live)
        if what == "local":
            return self.local(live)
        if what == "if":
            cctx = {"idx": [], "bufs": [], "scalars": [], "ints": self.ints}
            c = self.cond(cctx, 1)
            # both branches define the same new buffer, then maybe more
            b = self.make_buf(S, want_int=self.k.exact or None)
            l1, l2 = list(live), list(live)
            t1 = [self.elementwise(b, l1, [], self.ints)]
            lo1, hi1, ex1 = b.lo, b.hi, b.exact
            t2 = [self.elementwise(b, l2, [], self.ints) if self.chance(0.7)
                  else self.fill(b)]
            self.set_range(b, min(lo1, b.lo), max(hi1, b.hi), ex1 and b.exact)
            live.append(b)
            ct = c.tile if c.tile.startswith("(") else "(%s)" % c.tile
            cc = c.c if c.c.startswith("(") else "(%s)" % c.c
            st = Stmt([], [], [b], t1, "if")
            st.tile = [(0, "if %s {" % ct), (1, None), (0, "} else {"),
                       (1, "ELSE"), (0, "}")]
            st.c = [(0, "if %s {" % cc), (1, None), (0, "} else {"),
                    (1, "ELSE"), (0, "}")]
            st.kids_else = t2
            return st
        if what == "loop":
            return self.loop(live)
        return None

    def transpose(self, live):
        """dst[j][i] = src[i][j] in tile_parallel nests, into a new buffer
        of the block's shape S, through one of S transposed where S is not
        square (a block of two nests).  On the CPU the transpose pass moves
        8 x 8 blocks of 32-bit buffers; other dtypes, extents and backends
        run the element loops."""
        S = tuple(self.S)
        srcs = [b for b in live if tuple(b.shape) == S]
        if not srcs:
            return None
        cur = self.r.choice(srcs)
        R, C = S
        shapes = [(C, R)] if R == C else [(C, R), (R, C)]
        scopes = [self.scope_for(cur.dtype, list(sh)) for sh in shapes]
        if None in scopes:
            return None
        nests = []
        for shape, scope in zip(shapes, scopes):
            dst = self.new_buf(scope, cur.dtype, list(shape), "t")
            st = self.par_nest([("j", shape[0]), ("i", shape[1])], [],
                               ["%s[j][i] = %s[i][j];" % (dst.name, cur.name)],
                               ["%s[j][i] = %s;" % (dst.name, cv(
                                   dst.dtype, "%s[i][j]" % cur.name))])
            st.defines = [dst]
            st.what = "parallel"
            self.set_range(dst, cur.lo, cur.hi, cur.exact)
            nests.append(st)
            cur = dst
        live.append(cur)
        if len(nests) == 1:
            return nests[0]
        out = compound(["{"], ["{"], nests, what="block")
        out.defines = [cur]
        return out

    def reduce_all(self, src):
        """s = tile_sum(src) (or max, min, absmax): a block-level scalar
        the element-wise statements after it may read."""
        r = self.r
        if src.dtype == "i4" and "i4_reduce" not in self.f:
            return None
        op = r.choice(["sum", "max", "min", "absmax"])
        n = src.size()
        fl = not is_int(src.dtype)
        if op == "sum":
            lo, hi = n * min(src.lo, 0), n * max(src.hi, 0)
        elif op == "absmax":
            lo, hi = 0, max(abs(src.lo), abs(src.hi))
        else:
            lo, hi = src.lo, src.hi
        if fl and max(abs(lo), abs(hi)) > 1e4:
            return None
        if not fl and max(abs(lo), abs(hi)) >= 2**30:
            return None
        # The value's type: the element's arithmetic type.
        wide = src.dtype in ("f64", "i64")
        ttype = ("double" if wide else "float") if fl else \
            ("long long" if wide else "int")
        name = "red%d" % len(self.scalars)
        exact = src.exact and (op != "sum" or not fl)
        init = {"sum": "0", "max": "-INFINITY", "min": "INFINITY",
                "absmax": "0"}[op]
        comb = {"sum": "a + v", "max": "fmax(a, v)", "min": "fmin(a, v)",
                "absmax": "fmax(a, fabs(v))"}[op]
        q = ["q%d" % d for d in range(len(src.shape))]
        head = " ".join("for (int %s = 0; %s < %d; %s++)" % (x, x, e, x)
                        for x, e in zip(q, src.shape))
        c = ["%s %s;" % ("double" if fl else "long long", name), "{",
             "\tdouble a = %s;" % init,
             "\t%s" % head, "\t{",
             "\t\tdouble v = %s%s;" % (src.name, idx_c(q)),
             "\t\ta = %s;" % comb, "\t}",
             "\t%s = a;" % name, "}"]
        t = ["%s %s = tile_%s(%s);" % (ttype, name, op, src.name)]
        self.scalars.append(E(name, name if fl else "((long long)%s)" % name,
                              "f" if fl else "i", lo, hi, exact))
        return simple(t, c, "reduce_all")

    def cast(self, dst, src):
        """tile_copy between whole buffers: a cast when the dtypes differ."""
        names = ["q%d" % n for n in range(len(dst.shape))]
        head = " ".join("for (int %s = 0; %s < %d; %s++)" % (q, q, s, q)
                        for q, s in zip(names, dst.shape))
        c = ["%s %s%s = %s;" % (head, dst.name, idx_c(names), cv(
            dst.dtype, src.name + idx_c(names)))]
        return simple(["tile_copy(%s, %s);" % (dst.name, src.name)], c,
                      "cast", [dst])

    def reduce(self, src, live):
        r = self.r
        d = r.randrange(len(src.shape))
        shape = tuple(s for n, s in enumerate(src.shape) if n != d)
        op = r.choice(["sum", "max", "min", "absmax"])
        fl = not is_int(src.dtype)
        cands = [b for b in live if b.shape == shape and
                 is_int(b.dtype) == (not fl or "int_reduce_float" in self.f)
                 and b.dtype != "bool"]
        if fl:
            # each float element converts to the integer dst: in range
            cands = [b for b in cands if not is_int(b.dtype) or
                     INT_RANGE[b.dtype][0] < src.lo and
                     src.hi < INT_RANGE[b.dtype][1]]
        if "i4_reduce" not in self.f:
            if src.dtype == "i4":
                return None
            cands = [b for b in cands if b.dtype != "i4"]
        def i8_minmax(b):
            if is_int(src.dtype) and "int_reduce_widen" not in self.f and \
                    (src.dtype in ("i8", "u8") or src.dtype != b.dtype):
                return True
            return op in ("min", "max") and "i8_minmax" not in self.f and \
                "i8" in (src.dtype, b.dtype)
        cands = [b for b in cands if not i8_minmax(b)]
        acc = bool(cands) and self.chance(0.5)
        if acc:
            dst = r.choice(cands)
        else:
            dst = None
            for _ in range(10):
                dst = self.make_buf(shape, want_int=not fl, hint="r")
                if dst.dtype != "bool" and not i8_minmax(dst) and (
                        dst.dtype != "i4" or "i4_reduce" in self.f):
                    break
                self.k.bufs.remove(dst)
                dst = None
            if dst is None:
                return None
            live.append(dst)
        n = src.shape[d]
        # interval of the result
        slo, shi = src.lo, src.hi
        if op == "sum":
            lo, hi = n * min(slo, 0), n * max(shi, 0)
            if acc:
                lo, hi = lo + dst.lo, hi + dst.hi
        elif op == "absmax":
            lo, hi = 0, max(abs(slo), abs(shi))
            if acc:
                lo, hi = min(lo, dst.lo), max(hi, dst.hi, abs(dst.lo))
        else:
            lo, hi = slo, shi
            if acc:
                lo, hi = min(lo, dst.lo), max(hi, dst.hi)
        if is_int(dst.dtype):
            tlo, thi = INT_RANGE[dst.dtype]
            if lo < tlo or hi > thi:
                # a sum that may wrap: wrapping is defined, but keep it exact
                lo, hi = tlo, thi
        elif max(abs(lo), abs(hi)) > FLOAT_MAX[dst.dtype]:
            if not acc:
                # nothing defines it: not a buffer later code may read
                live.remove(dst)
                self.k.bufs.remove(dst)
            return None
        exact = src.exact and (op != "sum" or is_int(dst.dtype)) and \
            (not acc or dst.exact)
        if op == "sum" and is_int(dst.dtype) and not is_int(src.dtype):
            exact = False
        flag = ", TILE_ACCUMULATE" if acc else ""
        t = ["tile_reduce_%s(%s, %s, %d%s);" % (op, dst.name, src.name, d, flag)]
        # oracle
        q = ["q%d" % n2 for n2 in range(len(shape))]
        full = list(q)
        full.insert(d, "w")
        head = " ".join("for (int %s = 0; %s < %d; %s++)" % (x, x, s, x)
                        for x, s in zip(q, shape))
        init = {"sum": "0", "max": "-INFINITY", "min": "INFINITY",
                "absmax": "0"}[op]
        comb = {"sum": "a + v", "max": "fmax(a, v)", "min": "fmin(a, v)",
                "absmax": "fmax(a, fabs(v))"}[op]
        dref = dst.name + idx_c(q)
        if is_int(dst.dtype):
            # docs/language.md: each element converted to dst's type
            # first, combined in dst's type (a sum, an |x| wrap there).
            init = {"sum": "0", "max": str(INT_RANGE[dst.dtype][0]),
                    "min": str(INT_RANGE[dst.dtype][1]), "absmax": "0"}[op]
            comb = {"sum": cv(dst.dtype, "a + v"), "max": "fmax(a, v)",
                    "min": "fmin(a, v)", "absmax": "fmax(a, v)"}[op]
            conv = cv(dst.dtype, "%s%s" % (src.name, idx_c(full)))
            if op == "absmax":
                conv = cv(dst.dtype, "fabs(%s)" % conv)
            start = dref if acc else init
            if acc and op == "absmax":
                start = cv(dst.dtype, "fabs(%s)" % dref)
        else:
            conv = "%s%s" % (src.name, idx_c(full))
            start = (dref if acc and op != "absmax" else
                     ("fabs(%s)" % dref if acc else init))
        c = ["%s {" % head if head else "{",
             "\tdouble a = %s;" % start,
             "\tfor (int w = 0; w < %d; w++) {" % n,
             "\t\tdouble v = %s;" % conv,
             "\t\ta = %s;" % comb, "\t}",
             "\t%s = %s;" % (dref, cv(dst.dtype, "a")), "}"]
        self.set_range(dst, lo, hi, exact)
        return simple(t, c, "reduce", [dst])

    def argred(self, live):
        """tile_reduce_argmax / argmin (the extreme element and its index
        along a dim) or tile_reduce_topk (the k greatest in order, their
        indices) of a tile whose values are the same on every backend:
        ties, which integers and fills make common, go to the smaller
        index."""
        r = self.r
        srcs = [b for b in live if len(b.shape) >= 2 and b.exact and
                b.dtype not in ("i4", "bool")]
        if not srcs:
            return None
        src = r.choice(srcs)
        d = r.randrange(len(src.shape))
        n = src.shape[d]
        fl = not is_int(src.dtype)
        topk = self.chance(0.5)
        if topk:
            k = r.choice([1, 2, 3, n] if n <= 8 else [1, 2, 3, 4])
            k = min(k, n)
            shape = tuple(k if m == d else x for m, x in enumerate(src.shape))
        else:
            op = r.choice(["argmax", "argmin"])
            shape = tuple(x for m, x in enumerate(src.shape) if m != d)
        dt = (r.choice(["f32", src.dtype]) if fl else
              r.choice(["i32", src.dtype]))
        dst = self.new_buf(self.scope_for(dt, shape) or "shared", dt, shape, "v")
        it = r.choice(["i32", "i64"])
        idx = self.new_buf(self.scope_for(it, shape) or "shared", it, shape, "x")
        self.set_range(dst, src.lo, src.hi, True)
        self.set_range(idx, 0, n - 1, True)
        live += [dst, idx]
        # oracle: each position of the other dims, a scan of w along d
        q = ["q%d" % m for m in range(len(src.shape)) if m != d]
        full = list(q)
        full.insert(d, "w")
        head = " ".join("for (int %s = 0; %s < %d; %s++)" % (x, x, s, x)
                        for x, s in zip(q, [x for m, x in
                                            enumerate(src.shape) if m != d]))
        v = "%s%s" % (src.name, idx_c(full))
        if topk:
            t = ["tile_reduce_topk(%s, %s, %s, %d);" % (dst.name, idx.name,
                                                         src.name, d)]
            out = list(q)
            out.insert(d, "p")
            c = ["%s {" % head if head else "{",
                 "\tint taken[%d] = {0};" % n,
                 "\tfor (int p = 0; p < %d; p++) {" % k,
                 "\t\tint b = -1;",
                 "\t\tfor (int w = 0; w < %d; w++) {" % n,
                 "\t\t\tif (taken[w]) continue;",
                 "\t\t\tdouble x = %s;" % v,
                 "\t\t\tif (b < 0) { b = w; continue; }",
                 "\t\t\tdouble y = %s;" % "%s%s" % (src.name, idx_c(
                     [("b" if z == "w" else z) for z in full])),
                 "\t\t\tif (!isnan(x) && (isnan(y) || x > y)) b = w;",
                 "\t\t}",
                 "\t\ttaken[b] = 1;",
                 "\t\t%s%s = %s;" % (dst.name, idx_c(out), cv(dst.dtype,
                     "%s%s" % (src.name, idx_c([("b" if z == "w" else z)
                                                for z in full])))),
                 "\t\t%s%s = b;" % (idx.name, idx_c(out)),
                 "\t}", "}"]
            return simple(t, c, "topk", [dst, idx])
        t = ["tile_reduce_%s(%s, %s, %s, %d);" % (op, dst.name, idx.name,
                                                   src.name, d)]
        better = ">" if op == "argmax" else "<"
        c = ["%s {" % head if head else "{",
             "\tint b = -1;",
             "\tdouble a = 0;",
             "\tfor (int w = 0; w < %d; w++) {" % n,
             "\t\tdouble x = %s;" % v,
             "\t\tif (!isnan(x) && (b < 0 || isnan(a) || x %s a)) { a = x; b = w; }" % better,
             "\t}",
             "\tif (b < 0) { b = 0; a = NAN; }",
             "\t%s%s = %s;" % (dst.name, idx_c(q), cv(dst.dtype, "a")),
             "\t%s%s = b;" % (idx.name, idx_c(q)), "}"]
        return simple(t, c, "argred", [dst, idx])

    def gemm(self, live):
        """acc[M][N] += A * B over K chunks, in a serial or pipelined loop."""
        k, r = self.k, self.r
        M, N = self.S
        acct = r.choice(["f32", "f32", "f32", "f16", "f64", "i32"])
        if acct == "i32" and "int_fragment" not in self.f:
            acct = "f32"
        forced = self.deq == "done"
        if forced:
            self.deq = False
            acct = "f32"
        if self.k.exact and acct != "i32":
            return None
        opt = {"f32": ["f16", "bf16", "f32"], "f16": ["f16"], "f64": ["f64"],
               "i32": ["i8"]}[acct]
        odt = r.choice(opt)
        if self.narrow and acct == "f32" and self.chance(0.5):
            odt = self.pick(FP8)
        if forced:
            odt = self.side.choice(["f16", "bf16"])
        BK = r.choice([4, 8, 16, 32]) if acct != "f16" else r.choice([4, 8])
        ta, tb = self.chance(0.5), self.chance(0.5)
        if odt in FP8:
            # mostly what the 8-bit matrix instructions take (K a
            # multiple of 32, both operands K-major), not only that
            BK = r.choice([8, 32, 32, 64])
            ta, tb = self.chance(0.2), self.chance(0.8)
        deq = "dequant_b" in self.f and acct == "f32" and \
            odt in ("f16", "bf16") and (forced or self.side.random() < 0.6)
        if deq:
            ta, tb, BK = self.side.random() < 0.2, True, self.side.choice([32, 64])
        Kp = self.new_param()
        ashape = (BK, M) if ta else (M, BK)
        bshape = (N, BK) if tb else (BK, N)
        if "short_rows" not in self.f and (
                ashape[1] * SIZE[odt] < 16 or bshape[1] * SIZE[odt] < 16):
            # gemm operands live in shared memory whatever their scope
            return None
        A = self.new_buf(self.scope_for(odt, ashape) or "fragment", odt, ashape, "a")
        B = self.new_buf(self.scope_for(odt, bshape) or "fragment", odt, bshape, "b")
        if A.scope == "shared" and is_int(odt) is False:
            pass
        # the tensors: A stored M x K (K x M when transposed), B likewise
        tdt = odt if self.chance(0.7) else ("f32" if not is_int(odt) else "i8")
        if self.narrow and self.chance(0.3):
            # packed i4 weights, converted as they are copied (W4A16)
            tdt = "i4"
        ta_dims = [Kp, self.E_t[0]] if ta else [self.E_t[0], Kp]
        tb_dims = [self.E_t[1], Kp] if tb else [Kp, self.E_t[1]]
        TA = self.new_tensor(tdt, ta_dims, True, "A")
        TB = self.new_tensor(tdt, tb_dims, True, "B")
        kk = "k"
        kvar = E(kk, "((long long)%s)" % kk, "i", 0, 0, True)
        korg = E("%s * %d" % (kk, BK), "((long long)%s * %d)" % (kk, BK), "i",
                 0, 0, True)
        ao = [korg, self.torg[0]] if ta else [self.torg[0], korg]
        bo = [self.torg[1], korg] if tb else [korg, self.torg[1]]
        C = None
        cands = [b for b in live if b.shape == (M, N) and b.dtype == acct and
                 b.scope == "fragment"]
        body = []
        if cands and self.chance(0.4):
            C = r.choice(cands)
        else:
            C = self.new_buf("fragment", acct, (M, N), "acc")
            body.append(self.fill(C))
            live.append(C)
        # bound of the result
        kv = k.P[Kp]
        lo0, hi0 = input_range(tdt)
        m = max(abs(lo0), abs(hi0))
        if odt in ("i8",) and not is_int(tdt):
            m = 1
        bound = kv * m * m + max(abs(C.lo), abs(C.hi))
        if bound > {"f16": 2000, "f32": 1e6, "f64": 1e6, "i32": 2**30}[acct]:
            return body[0] if body else None
        if acct == "f16":
            # Where an f16 accumulator rounds is the backend's choice
            # (each product, each chunk, each k16 step): up to K of its
            # roundings (2^-11 relative) differ between two right ones.
            k.tol = max(k.tol or 0, 5e-2)
        if "ragged" in self.f and self.rag.random() < 0.25:
            # A's rows bounded, masked or gathered in the loop (MoE's
            # tokens of one expert, routed rows)
            inner = [self.ragged_copy(TA, ao, [0, 1], A, True)]
        else:
            inner = [
                simple(["tile_copy(%s, %s);" % (A.name, self.region_text(TA, ao, [0, 1]))],
                       self.c_copy_in(TA, ao, [0, 1], A), "copy-in", [A]),
            ]
        if deq:
            # B computed by an element loop from the tile copied in, its
            # values a function of the row too (|B| <= max(|Bq|, 1))
            # i4 weights kept packed, less an integer zero point, times
            # an f16 scale, half the time: CUDA dequantizes them in half
            # pairs (half_pairs.c)
            pairs = tdt == "i4" and self.side.random() < 0.5
            qdt = "i4" if pairs else "i8" if tdt == "i4" else tdt
            Bq = self.new_buf("shared", qdt, bshape, "q")
            inner.append(simple(
                ["tile_copy(%s, %s);" % (Bq.name, self.region_text(TB, bo, [0, 1]))],
                self.c_copy_in(TB, bo, [0, 1], Bq), "copy-in", [Bq]))
            if pairs:
                val = ("((float)%s[i][j] - (float)(i %% 3 - 1)) * 0.5f" % Bq.name,
                       "((double)%s[i][j] - (i %% 3 - 1)) * 0.5" % Bq.name)
            else:
                val = ("(float)%s[i][j] * 0.5f - (float)(i %% 3) * 0.25f" % Bq.name,
                       "(double)%s[i][j] * 0.5 - (i %% 3) * 0.25" % Bq.name)
            st = self.par_nest(
                list(zip(["i", "j"], B.shape)), [],
                ["%s[i][j] = %s;" % (B.name, val[0])],
                ["%s[i][j] = %s;" % (B.name, cv(B.dtype, val[1]))])
            st.what = "parallel"
            inner.append(st)
        else:
            inner.append(simple(
                ["tile_copy(%s, %s);" % (B.name, self.region_text(TB, bo, [0, 1]))],
                self.c_copy_in(TB, bo, [0, 1], B), "copy-in", [B]))
        if "dup_copy" in self.f and self.chance(0.25):
            # the same copy again: each needs its own state (pipelined
            # copies on CUDA, a register buffer's copy-in on OpenMP)
            inner.append(simple(
                ["tile_copy(%s, %s);" % (A.name, self.region_text(TA, ao, [0, 1]))],
                self.c_copy_in(TA, ao, [0, 1], A), "copy-in", [A]))
        if self.chance(0.3) and not is_int(odt):
            # scale the A tile in the loop: a statement between copy and gemm
            names = ["i", "j"]
            st = self.par_nest(list(zip(names, A.shape)), [],
                               ["%s[i][j] = %s[i][j] * 0.5f;" % (A.name, A.name)],
                               ["%s[i][j] = %s;" % (A.name, cv(A.dtype, "%s[i][j] * 0.5" % A.name))])
            st.what = "parallel"
            inner.append(st)
        flags = []
        if ta:
            flags.append("TILE_TRANS_A")
        if tb:
            flags.append("TILE_TRANS_B")
        ft = (", " + " | ".join(flags)) if flags else ""
        A_idx = "w][i" if ta else "i][w"
        B_idx = "j][w" if tb else "w][j"
        inner.append(simple(
            ["tile_gemm(%s, %s, %s%s);" % (C.name, A.name, B.name, ft)],
            ["for (int i = 0; i < %d; i++) for (int j = 0; j < %d; j++) {" % (M, N),
             "\tdouble a = 0;",
             "\tfor (int w = 0; w < %d; w++)" % BK,
             "\t\ta += %s[%s] * %s[%s];" % (A.name, A_idx, B.name, B_idx),
             "\t%s[i][j] = %s;" % (C.name, cv(C.dtype, "%s[i][j] + a" % C.name)),
             "}"], "gemm", [C]))
        nk = "ceildiv(%s, %d)" % (Kp, BK)
        kind = r.choice(["for", "pipelined"] if "pipelined" in self.f else ["for"])
        if kind == "pipelined":
            stg = r.choice([1, 2, 3])
            head_t = "tile_pipelined(%s, %s, %d) {" % (kk, nk, stg)
        else:
            head_t = "for (int %s = 0; %s < %s; %s++) {" % (kk, kk, nk, kk)
        head_c = "for (int %s = 0; %s < %s; %s++) {" % (kk, kk, nk, kk)
        loop = compound([head_t], [head_c], inner, what="gemm-loop")
        loop.defines = [C, A, B]
        body.append(loop)
        C.lo, C.hi = -bound, bound
        C.exact = is_int(acct)
        # A and B hold the last step's inputs (zeros past the edges):
        # later reads must not take them for zeros (a shift of a
        # negative value is undefined, seed 8046).
        for X in (A, B):
            lo, hi = lo0, hi0
            if is_int(X.dtype) and not is_int(tdt):
                lo, hi = -1, 1
            self.set_range(X, min(lo, 0), max(hi, 0), True)
        live += [A, B]
        if len(body) == 1:
            return body[0]
        blk = Stmt([(0, None)], [(0, None)], [C, A, B], body, "seq")
        return blk

    def local(self, live):
        """A tile_local array written by serial code at block level, read
        by element-wise code afterwards."""
        if "local_buffers" not in self.f:
            return None
        r = self.r
        n = r.choice([2, 4])
        dt = r.choice(["f32", "i32"] if not self.k.exact else ["i32"])
        if self.narrow and self.chance(0.4):
            dt = "i4" if is_int(dt) else self.pick(FP8)
        b = self.new_buf("local", dt, (n,), "loc")
        ctx = {"idx": [], "bufs": [], "scalars": [], "ints": list(self.ints) +
               [E("t", "((long long)t)", "i", 0, n - 1, True)]}
        e = self.fit(self.expr(ctx, "i" if is_int(dt) else "f", 2), b)
        st = simple(["for (int t = 0; t < %d; t++)" % n,
                     "\t%s[t] = %s;" % (b.name, e.tile)],
                    ["for (int t = 0; t < %d; t++)" % n,
                     "\t%s[t] = %s;" % (b.name, cv(dt, e.c))], "local", [b])
        self.set_range(b, e.lo, e.hi, e.exact)
        # the reader: an element-wise statement that sees loc[i % n]
        S = tuple(self.S)
        dst = self.make_buf(S, want_int=self.k.exact or None)
        kind = "i" if is_int(dt) else "f"
        sc = E("%s[i %% %d]" % (b.name, n), ("((long long)%s[i %% %d])" if
               kind == "i" else "%s[i %% %d]") % (b.name, n), kind, b.lo,
               b.hi, b.exact)
        st2 = self.elementwise(dst, live, [sc], self.ints)
        live.append(dst)
        return Stmt([(0, None)], [(0, None)], [b, dst], [st, st2], "seq")

    def loop(self, live):
        """A serial loop that accumulates into a buffer defined before it."""
        r = self.r
        S = tuple(self.S)
        accs = [b for b in live if b.shape == S and not (
            is_int(b.dtype) and b.dtype in ("bool",))]
        if not accs:
            return None
        acc = r.choice(accs)
        n = r.choice([1, 2, 3])
        v = "it%d" % self.nloc
        self.nloc += 1
        saved = self.ints
        self.ints = self.ints + [E(v, "((long long)%s)" % v, "i", 0, n - 1, True)]
        inner = []
        inner_live = list(live)
        if self.chance(0.6):
            st = self.load_input(inner_live)
            if st:
                inner.append(st)
        # the accumulation: acc = acc OP (something)
        ctx_bufs = inner_live
        kind = "i" if is_int(acc.dtype) else "f"
        names = ["i", "j", "l"][:len(S)]
        ctx = {"idx": list(zip(names, S)), "bufs": ctx_bufs, "scalars": [],
               "ints": self.ints, "own": acc}
        e = self.expr(ctx, kind, 2)
        lhs = "%s%s" % (acc.name, idx_c(names))
        if kind == "f":
            e = self.fit(e, acc)
            if mag(e) > 100:
                e = E("tanhf(%s)" % e.tile, "tanh(%s)" % e.c, "f", -1, 1)
            lo = acc.lo + n * min(e.lo, 0)
            hi = acc.hi + n * max(e.hi, 0)
            if max(abs(lo), abs(hi)) > min(FLOAT_MAX[acc.dtype], 1e4):
                self.ints = saved
                return None
            body_t = ["%s += %s;" % (lhs, e.tile)]
            body_c = ["%s = %s;" % (lhs, cv(acc.dtype, "%s + %s" % (lhs, e.c)))]
            exact = False
        else:
            e = self.convert(e, "i")
            e = E("(%s & 7)" % e.tile, "(%s & 7)" % e.c, "i", 0, 7, True)
            lo, hi = acc.lo, acc.hi + 7 * n
            if hi > INT_RANGE[acc.dtype][1]:
                body_t = ["%s ^= %s;" % (lhs, e.tile)]
                body_c = ["%s = %s;" % (lhs, cv(acc.dtype, "(long long)%s ^ %s" % (lhs, e.c)))]
                lo, hi = (min(acc.lo, 0) - 8, acc.hi + 8) if acc.lo < 0 else (0, max(acc.hi, 7) * 2 + 1)
                lo, hi = max(lo, INT_RANGE[acc.dtype][0]), min(hi, INT_RANGE[acc.dtype][1])
            else:
                body_t = ["%s += %s;" % (lhs, e.tile)]
                body_c = ["%s = %s;" % (lhs, cv(acc.dtype, "%s + %s" % (lhs, e.c)))]
            exact = acc.exact
        st = self.par_nest(list(zip(names, S)), [], body_t, body_c)
        st.what = "parallel"
        inner.append(st)
        self.ints = saved
        head = "for (int %s = 0; %s < %d; %s++) {" % (v, v, n, v)
        ht = head
        if "pipelined" in self.f and self.chance(0.3):
            ht = "tile_pipelined(%s, %d, %d) {" % (v, n, r.choice([2, 3]))
        out = compound([ht], [head], inner, what="loop")
        out.defines = [acc]
        self.set_range(acc, lo, hi, exact)
        return out

    def store_output(self, live):
        """Write a tile of shape S to a new output tensor: tile_copy or
        guarded element-wise stores."""
        k, r = self.k, self.r
        S = tuple(self.S)
        srcs = [b for b in live if b.shape == S]
        if k.exact:
            srcs = [b for b in srcs if is_int(b.dtype) or b.exact]
        if not srcs:
            b = self.make_buf(S, want_int=k.exact or None)
            self.fill(b)
            live.append(b)
            srcs = [b]
            pre = [self.fill(b)]
        else:
            pre = []
        src = r.choice(srcs)
        if k.exact:
            dt = r.choice(INTS)
            if self.narrow and self.chance(0.3):
                dt = "i4"
            if not is_int(src.dtype):
                dt = "i32"
        else:
            dt = r.choice(["f32", "f16", "bf16"] if self.vec else FLOATS)
            if self.narrow and self.chance(0.35):
                dt = self.pick(FP8)
        if not is_int(dt) and max(abs(src.lo), abs(src.hi)) > FLOAT_MAX[dt]:
            dt = "f32"
        if not is_int(dt):
            self.rounds(dt, src.exact or is_int(src.dtype) and
                        mag(src) < 2**24)
        rank = len(S)
        orank = rank + (1 if self.U else 0)
        if orank < 4 and self.chance(0.3) and not self.vec:
            orank += 1       # a dim of extent 1, index 0
        cover = sorted(r.sample(range(orank), rank))
        dims = [None] * orank
        extra = None
        for t, d in enumerate(cover):
            dims[d] = self.E_t[t]
        for d in range(orank):
            if dims[d] is None:
                if self.U and self.U not in dims:
                    dims[d] = self.U
                else:
                    dims[d] = self.new_param(small=True)
                    k.P[dims[d]] = 1
                    extra = d
        t = self.new_tensor(dt, dims, False, "Y")

        def other(d):
            if dims[d] == self.U:
                return E("u", "((long long)u)", "i", 0, k.P[self.U] - 1, True)
            return iconst(0)
        org = self.origin(t, cover, self.torg, other)
        use_scatter = self.chance(0.05 if self.vec else 0.3)
        out = list(pre)
        if use_scatter:
            out.append(self.scatter(t, org, cover, src))
        elif "ragged" in self.f and \
                self.rag.random() < (0.05 if self.vec else 0.25):
            out.append(self.ragged_copy(t, org, cover, src, False))
        else:
            out.append(simple(["tile_copy(%s, %s);" % (self.region_text(t, org, cover),
                                                       src.name)],
                              self.c_copy_out(t, org, cover, src), "copy-out"))
        if self.chance(0.15):
            # a copy entirely past the end: writes nothing
            d = self.pick(cover)
            org2 = list(org)
            org2[d] = E("%s" % dims[d], "((long long)%s)" % dims[d], "i",
                        k.P[dims[d]], k.P[dims[d]], True)
            out.append(simple(["tile_copy(%s, %s);" % (
                self.region_text(t, org2, cover), src.name)],
                self.c_copy_out(t, org2, cover, src), "copy-out"))
        if len(out) == 1:
            return out[0]
        return Stmt([(0, None)], [(0, None)], [], out, "seq")

    def scatter(self, t, org, cover, b):
        P = self.k.P
        names = ["i", "j", "l"][:len(b.shape)]
        ix, ixc, guards, guardc = [], [], [], []
        for d in range(len(t.dims)):
            e = org[d]
            if d in cover:
                v = names[cover.index(d)]
                tile, c = "%s + %s" % (e.tile, v), "(%s + %s)" % (e.c, v)
                hi = e.hi + b.shape[cover.index(d)] - 1
                if hi >= P[t.dims[d]]:
                    guards.append("%s < %s" % (tile, t.dims[d]))
                    guardc.append("%s < %s" % (c, t.dims[d]))
            else:
                tile, c = e.tile, e.c
            ix.append(tile)
            ixc.append(c)
        lin = ixc[0]
        for d in range(1, len(t.dims)):
            lin = "(%s) * %s + %s" % (lin, t.dims[d], ixc[d])
        lhs = "%s%s" % (t.name, "".join("[%s]" % x for x in ix))
        src = "%s%s" % (b.name, idx_c(names))
        conv = "(int)" if is_int(t.dtype) and not is_int(b.dtype) else ""
        if guards:
            bt = ["if (%s)" % " && ".join(guards), "\t%s = %s%s;" % (lhs, conv, src)]
            bc = ["if (%s)" % " && ".join(guardc), "\tST_%s(%s, %s, %s);" % (
                t.dtype, t.name, lin, src)]
        else:
            bt = ["%s = %s%s;" % (lhs, conv, src)]
            bc = ["ST_%s(%s, %s, %s);" % (t.dtype, t.name, lin, src)]
        st = self.par_nest(list(zip(names, b.shape)), [], bt, bc)
        st.what = "scatter"
        return st

    def extent_value(self, ext):
        """The value of a grid or loop extent: P or ceildiv(P, s)."""
        P = self.k.P
        if ext in P:
            return P[ext]
        p, s = ext[len("ceildiv("):-1].split(", ")
        return -(-P[p] // int(s))

    def atomic(self, live):
        k, r = self.k, self.r
        S = tuple(self.S)
        srcs = [b for b in live if b.shape == S and (not k.exact or
                                                     is_int(b.dtype))]
        if not srcs:
            return None
        src = r.choice(srcs)
        dt = "i32" if k.exact else r.choice(["f32", "f32", "f64", "f16", "bf16"])
        if is_int(src.dtype) and not k.exact and dt != "f32":
            dt = "f32"
        if dt == "i32" and not is_int(src.dtype):
            return None
        if dt == "i32" and src.dtype != "i32" and \
                "int_atomic_other" not in self.f:
            return None
        m = max(abs(src.lo), abs(src.hi))
        if dt == "f16" and m > 100:
            return None
        # f16 and bf16 sums round at every add: few adds, or the order of
        # the blocks shows beyond the tolerance
        adds = 1
        for v, ext in k.grid:
            adds *= self.extent_value(ext)
        for v, ext in self.outer:
            adds *= self.extent_value(ext)
        if dt in ("f16", "bf16") and adds > 4:
            dt = "f32"
        if dt == "bf16" and adds > 1:
            # Two orders of up to four adds, each rounding its running sum
            # to bf16 (2^-9 relative), differ by up to 8 such roundings of
            # the largest partial sum: 1.6 %, more where the sum cancels
            # (seed 16521 k5 on an H100: -9.375 against the oracle's -9.5)
            k.tol = max(k.tol or 0, 3e-2)
        # every block adds into one region of a tile-sized tensor
        dims = [self.new_param(small=True) for _ in S]
        t = self.new_tensor(dt, dims, False, "Acc")
        org = [iconst(r.choice([0, 0, 1])) for _ in S]
        return simple(["tile_atomic_add(%s, %s);" % (
            self.region_text(t, org, list(range(len(S)))), src.name)],
            self.c_copy_out(t, org, list(range(len(S))), src, atomic=True),
            "atomic")


# --- printing ---------------------------------------------------------------------

def indent(lines, base=1):
    out = []
    for d, t in lines:
        out.append("\t" * (base + d) + t)
    return out


def stmt_lines(st, which, depth):
    out = []
    for d, t in (st.tile if which == "tile" else st.c):
        if t is None:
            for kid in st.kids:
                out += stmt_lines(kid, which, depth + d)
        elif t == "ELSE":
            for kid in st.kids_else:
                out += stmt_lines(kid, which, depth + d)
        else:
            out.append((depth + d, t))
    return out


def used_bufs(k, text):
    import re
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return [b for b in k.bufs if b.name in names]


def kernel_tile(k):
    sig = ["int %s" % p for p in k.params]
    for t in k.tensors:
        sig.append("%s%s %s%s" % ("const " if t.const else "", t.dtype, t.name,
                                  "".join("[%s]" % d for d in t.dims)))
    body = []
    for st in k.body:
        body += stmt_lines(st, "tile", 0)
    text = "\n".join(indent(body))
    bufs = used_bufs(k, text)
    out = ["TILE_KERNEL void", "%s(%s)" % (k.name, ", ".join(sig)), "{",
           "\ttile_threads(%d);" % k.threads]
    out += ["\t" + h for h in k.head]
    if bufs:
        out.append("")
        out += ["\t" + b.decl() for b in bufs]
    out.append("")
    out.append(text)
    out.append("}")
    return "\n".join(out)


def kernel_c(k):
    lines = ["void", "tilec_entry_%s(void **args)" % k.name, "{"]
    n = 0
    for p in k.params:
        lines.append("\tint %s = *(int *)args[%d];" % (p, n))
        n += 1
    for t in k.tensors:
        ct = CMEM[t.dtype]
        lines.append("\t%s%s *%s = *(%s%s **)args[%d];" % (
            "const " if t.const else "", ct, t.name, "const " if t.const else "",
            ct, n))
        n += 1
    for p in k.params:
        lines.append("\t(void)%s;" % p)
    # bounds predicates per tensor
    for t in k.tensors:
        conds = " && ".join("e[%d] >= 0 && e[%d] < %s" % (d, d, dim)
                            for d, dim in enumerate(t.dims))
        lines.append("#define in_%s(e) (%s)" % (t.name, conds))
    grid = {v: ext for v, ext in k.grid}
    gv = [(v, ext) for v, ext in k.grid]
    d = 1
    for v, ext in gv:
        lines.append("\t" * d + "for (int %s = 0; %s < %s; %s++) {" % (v, v, ext, v))
        d += 1
    body = []
    for st in k.body:
        body += stmt_lines(st, "c", 0)
    text = "\n".join(indent(body, d))
    bufs = used_bufs(k, text)
    for b in bufs:
        lines.append("\t" * d + b.cdecl())
    lines.append(text)
    for _ in gv:
        d -= 1
        lines.append("\t" * d + "}")
    for t in k.tensors:
        lines.append("#undef in_%s" % t.name)
    lines.append("}")
    return "\n".join(lines)


ORACLE_PRELUDE = r"""/* The generator's own model of the kernels' meaning (docs/ir.md),
 * serial, in double; tilec run --source checks the reference against it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long long min_ll(long long a, long long b) { return a < b ? a : b; }
static long long max_ll(long long a, long long b) { return a > b ? a : b; }
static long long ceildiv(long long a, long long b) { return (a + b - 1) / b; }
/* sat_i8 and its kin: the f32 value rounded to nearest even, clamped;
 * NaN gives 0. */
static long long SAT(double x, long long lo, long long hi)
{
	double r = nearbyint((double)(float)x);
	return x != x ? 0 : r <= (double)lo ? lo : r >= (double)hi ? hi : (long long)r;
}

/* Round v to the nearest value with `bits` significant bits, ties to
 * even; exponents below emin are subnormal (fixed spacing 2^(emin-bits)). */
static double round_bits(double v, int bits, int emin)
{
	if (v == 0 || !isfinite(v))
		return v;
	int e;
	frexp(v, &e);
	if (e < emin)
		e = emin;
	double s = ldexp(1.0, bits - e);
	return nearbyint(v * s) / s;
}
static double CV_f64(double v) { return v; }
/* f32 buffers and locals keep double precision (docs/run.md). */
static double CV_f32(double v) { return v; }
/* Past the largest finite value (after rounding), infinity. */
static double CV_f16(double v) { v = round_bits(v, 11, -13); return fabs(v) > 65504 ? copysign(INFINITY, v) : v; }
static double CV_bf16(double v) { v = round_bits(v, 8, -125); return fabs(v) > 0x1.fep127 ? copysign(INFINITY, v) : v; }
static double CV_i64(double v) { return (double)(int64_t)trunc(v); }
static double CV_i32(double v) { return (double)(int32_t)(uint32_t)(uint64_t)(int64_t)trunc(v); }
static double CV_i8(double v) { return (double)(int8_t)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_u8(double v) { return (double)(uint8_t)(uint64_t)(int64_t)trunc(v); }
static double CV_bool(double v) { return v != 0; }
static long long CVI_i64(long long v) { return v; }
static long long CVI_i8(long long v) { return (int8_t)(uint8_t)(uint64_t)v; }
static long long CVI_u8(long long v) { return (uint8_t)(uint64_t)v; }
/* i4: the low 4 bits, sign-extended (as the other integers wrap). */
static long long CVI_i4(long long v) { return (long long)((v & 15) ^ 8) - 8; }
static double CV_i4(double v) { return (double)CVI_i4((long long)(uint64_t)(int64_t)trunc(v)); }
/* OCP E4M3: 3 fraction bits, the least normal 2^-6, 448 the greatest
 * finite value; no infinity: from 464 up (where rounding would pass 448)
 * NaN.  E5M2: 2 fraction bits, the least normal 2^-14, 57344 the
 * greatest; past it infinity (IEEE). */
static double CV_fp8e4m3(double v) { return fabs(v) >= 464 || v != v ? NAN : round_bits(v, 4, -5); }
static double CV_fp8e5m2(double v) { v = round_bits(v, 3, -13); return fabs(v) > 57344 ? copysign(INFINITY, v) : v; }

static double f16_to_double(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY)
				       : ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}
static uint16_t double_to_f16(double v)
{
	uint16_t s = signbit(v) ? 0x8000 : 0;
	v = fabs(CV_f16(v));
	if (isnan(v)) return 0x7e00;
	if (v >= 65520.0) return s | 0x7c00;
	if (v < ldexp(1, -14)) return s | (uint16_t)(v * ldexp(1, 24));
	int e;
	double f = frexp(v, &e);            /* v = f * 2^e, f in [0.5, 1) */
	return s | (uint16_t)((e + 14) << 10) | ((uint16_t)(f * 2048) & 1023);
}
static double bf16_to_double(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint16_t double_to_bf16(double v)
{
	float f = (float)CV_bf16(v);
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)(u >> 16);
}
/* i4 tensors: element i in byte i / 2, the even one in the low nibble. */
static int i4_get(const uint8_t *p, long long i)
{
	int b = p[i >> 1];
	return (int)CVI_i4(i & 1 ? b >> 4 : b);
}
static void i4_set(uint8_t *p, long long i, long long v)
{
	int s = (int)(i & 1) * 4;
	p[i >> 1] = (uint8_t)((p[i >> 1] & ~(15 << s)) | (int)(v & 15) << s);
}
/* fp8 bytes: sign, exponent, fraction (bias 7 for E4M3, 15 for E5M2). */
static double fp8e4m3_to_double(uint8_t b)
{
	int e = (b >> 3) & 15, m = b & 7;
	double v = (b & 127) == 127 ? NAN : e == 0 ? ldexp(m, -9)
						  : ldexp(m + 8, e - 10);
	return b & 128 ? -v : v;
}
static double fp8e5m2_to_double(uint8_t b)
{
	int e = (b >> 2) & 31, m = b & 3;
	double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -16)
							 : ldexp(m + 4, e - 17);
	return b & 128 ? -v : v;
}
/* The byte of an already rounded value (by search: the codes are few). */
static uint8_t double_to_fp8(double v, double (*dec)(uint8_t), uint8_t nan)
{
	if (v != v)
		return nan;
	for (int b = 0; b < 256; b++)
		if (dec((uint8_t)b) == v && (v != 0 || !signbit(v) == !(b & 128)))
			return (uint8_t)b;
	return nan;
}
#define LD_f64(p, i) ((double)(p)[i])
#define LD_f32(p, i) ((double)(p)[i])
#define LD_f16(p, i) f16_to_double((p)[i])
#define LD_bf16(p, i) bf16_to_double((p)[i])
#define LD_i64(p, i) ((double)(p)[i])
#define LD_i32(p, i) ((double)(p)[i])
#define LD_i8(p, i) ((double)(p)[i])
#define LD_u8(p, i) ((double)(p)[i])
#define LD_bool(p, i) ((double)((p)[i] != 0))
#define LD_i4(p, i) ((double)i4_get((p), (i)))
#define LD_fp8e4m3(p, i) fp8e4m3_to_double((p)[i])
#define LD_fp8e5m2(p, i) fp8e5m2_to_double((p)[i])
#define ST_f64(p, i, v) ((p)[i] = (v))
#define ST_f32(p, i, v) ((p)[i] = (float)(v))
#define ST_f16(p, i, v) ((p)[i] = double_to_f16(v))
#define ST_bf16(p, i, v) ((p)[i] = double_to_bf16(v))
#define ST_i64(p, i, v) ((p)[i] = (int64_t)CV_i64(v))
#define ST_i32(p, i, v) ((p)[i] = (int32_t)CV_i32(v))
#define ST_i8(p, i, v) ((p)[i] = (int8_t)CV_i8(v))
#define ST_u8(p, i, v) ((p)[i] = (uint8_t)CV_u8(v))
#define ST_bool(p, i, v) ((p)[i] = (v) != 0)
#define ST_i4(p, i, v) i4_set((p), (i), CVI_i4((long long)CV_i64(v)))
#define ST_fp8e4m3(p, i, v) ((p)[i] = double_to_fp8(CV_fp8e4m3(v), fp8e4m3_to_double, 0x7f))
#define ST_fp8e5m2(p, i, v) ((p)[i] = double_to_fp8(CV_fp8e5m2(v), fp8e5m2_to_double, 0x7e))
"""


# The share of kernels that are fast_gemm ones (their own stream decides,
# so the other kernels of a seed stay as they were without the feature).
FAST_SHARE = 0.25
# The share of kernels that take i4 and fp8 types (feature narrow), decided
# the same way.
NARROW_SHARE = 0.35
# The share of the other kernels shaped for the CPU's vector loops
# (feature vector_rows).
VEC_SHARE = 0.3


def generate_one(seed, index, features):
    """Kernel `index` of seed's file (each kernel has its own stream)."""
    g = Gen(seed, index, features)
    g.narrow = g.k.narrow = "narrow_all" in features or \
        "narrow" in features and random.Random(
            "%d/%d/narrow" % (seed, index)).random() < NARROW_SHARE
    if "fast_gemm_all" in features or "fast_gemm" in features and \
            random.Random("%d/%d/fast" % (seed, index)).random() < FAST_SHARE:
        return g.make_fast()
    if "vector_rows" in features and not g.narrow and random.Random(
            "%d/%d/vec" % (seed, index)).random() < VEC_SHARE:
        g.vec = True
    return g.make(g.r.randint(2, 7))


def tolerance(k):
    """The relative tolerance of kernel k's float outputs, as
    device_run.py compares them: 0 for exact kernels; f16 and bf16's
    1e-2, f32's 1e-5, or a wider k.tol (f16 accumulators).  fp8 values
    that are the same on every backend (loads, exact values rounded) keep
    those; a kernel that rounds other values to fp8 has fp8's (tilec run's
    tolerance table, src/ir/tolerance.c: E4M3 0.125, E5M2 0.25): one such
    rounding may land a unit of the last place apart from the reference,
    which is 1/16 to 1/8 of the value (1/8 to 1/4 for E5M2)."""
    if k.exact:
        return 0
    text = kernel_tile(k)
    t = max(k.tol or 0, 1e-2 if ("f16" in text or "bf16" in text) else 1e-5)
    if k.fp8_inexact:
        t = max(t, 0.25 if "fp8e5m2" in text else 0.125)
    return t


def run_tol(k):
    """--tol for tilec run, or None for its own (the narrowest float type's
    among the kernel's tensors and buffers, which for fp8 is fp8's): the
    tolerance above where that would be wider."""
    if k.exact:
        return k.tol
    text = kernel_tile(k)
    if k.narrow and "fp8" in text:
        return tolerance(k)
    if not re.search(r"\b(f32|f16|bf16|fp8e4m3|fp8e5m2)\b", text):
        # Only f64 tensors and buffers, whose own tolerance tilec run would
        # take (1e-10); but the arithmetic is float's (literals, (float)
        # casts, logf ...), which the reference rounds to f32 and the
        # oracle keeps in double (seed 9392 k0: logf(2.5) into an f64
        # buffer, 3e-8 apart).
        return max(k.tol or 0, 1e-5)
    return k.tol


def generate(seed, nkernels, features):
    """The kernels of one file: a list of Kernel."""
    return [generate_one(seed, i, features) for i in range(nkernels)]


def render(seed, kernels, features):
    head = ["/* Generated by tests/gen/tilegen.py %d (features: %s).  A random" % (
        seed, ",".join(sorted(features))),
        " * tile program: valid by construction, checked against the reference",
        " * and the oracle beside it (gen_%d.oracle.c). */" % seed,
        "#include <tilec.h>", ""]
    tile = "\n".join(head) + "\n\n".join(kernel_tile(k) for k in kernels) + "\n"
    c = ORACLE_PRELUDE + "\n" + "\n\n".join(kernel_c(k) for k in kernels) + "\n"
    meta = [{"kernel": k.name, "shape": ",".join("%s=%d" % (p, k.P[p]) for p in k.params),
             "exact": k.exact, "tol": run_tol(k)} for k in kernels]
    return tile, c, meta


def write(seed, kernels, features, out, stem=None):
    stem = stem or "gen_%d" % seed
    tile, c, meta = render(seed, kernels, features)
    paths = [os.path.join(out, stem + x) for x in (".c", ".oracle.c", ".json")]
    with open(paths[0], "w") as f:
        f.write(tile)
    with open(paths[1], "w") as f:
        f.write(c)
    with open(paths[2], "w") as f:
        json.dump({"seed": seed, "features": sorted(features), "kernels": meta}, f,
                  indent=1)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seed", type=int)
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--out", default=".")
    ap.add_argument("--features", default="")
    a = ap.parse_args()
    f = feature_set(a.features)
    ks = generate(a.seed, a.kernels, f)
    for p in write(a.seed, ks, f, a.out):
        print(p)


if __name__ == "__main__":
    main()
