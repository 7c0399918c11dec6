#!/usr/bin/env python3
"""launch_test.py - launch documents and the one evaluator of their sizes.

usage: launch_test.py TILEC SRCROOT CASE

CASE is one of:
  semantics  tools/launch_manifest.py's evaluator against C: random
             expression trees over random values (negative ones too),
             printed with to_c, compiled with cc and run; every value the
             evaluator gives must be C's, and what C leaves undefined
             (division by zero, overflow) must be an error, not a value
  document   `tilec --emit=launch` on a file of two kernels is one JSON
             document with both; every parameter has its C type, every
             scalar the tensor dims it is the extent of; the same for an
             export's K.launch.json; no eval() left in tools/ or tests/
  gpu-tools  tools/gpu/run.py and tools/tune_farm.py as the GPU machine
             imports them (cupy and torch stood in for): every case of
             tools/gpu/cases.py translated as tools/gpu_prepare.sh does,
             its grid and tensor extents evaluated and every scalar given
             a type from the manifest's C type
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import types

TILEC, ROOT, CASE = sys.argv[1:4]
TILEC = os.path.abspath(TILEC)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import launch_manifest as lm  # noqa: E402

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def tilec(*args):
    p = subprocess.run([TILEC] + list(args), capture_output=True, text=True,
                       cwd=ROOT)
    if p.returncode:
        raise SystemExit("tilec %s failed:\n%s" % (" ".join(args), p.stderr))
    return p.stdout


# --- semantics ---------------------------------------------------------------

OPS2 = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&", "|",
        "^", "&&", "||", "ceildiv", "min", "max", "<<", ">>"]


def random_tree(r, depth, names):
    if depth == 0 or r.random() < 0.25:
        if r.random() < 0.1:
            return {"device": "sms"}
        if r.random() < 0.5:
            return {"param": r.choice(names)}
        return {"int": r.choice([0, 1, 2, 3, 7, 32, 128, -1, -5,
                                 r.randint(-1000, 1000)])}
    k = r.random()
    if k < 0.08:
        return {"op": r.choice(["neg", "!", "~"]),
                "args": [random_tree(r, depth - 1, names)]}
    if k < 0.14:
        return {"op": "?:", "args": [random_tree(r, depth - 1, names)
                                     for _ in range(3)]}
    if k < 0.2:
        return {"op": "cast", "dtype": r.choice(["i32", "i8", "u8", "i64"]),
                "args": [random_tree(r, depth - 1, names)]}
    op = r.choice(OPS2)
    rhs = random_tree(r, depth - 1, names)
    if op in ("<<", ">>"):
        rhs = {"int": r.randint(0, 8)}
    return {"op": op, "args": [random_tree(r, depth - 1, names), rhs]}


def semantics():
    # The cases that decide between C and Python: truncation, the sign of
    # %, ceildiv on negatives.
    fixed = [({"op": "/", "args": [{"int": -7}, {"int": 2}]}, -3),
             ({"op": "%", "args": [{"int": -7}, {"int": 2}]}, -1),
             ({"op": "ceildiv", "args": [{"int": -7}, {"int": 2}]}, -3),
             ({"op": "ceildiv", "args": [{"int": 7}, {"int": 2}]}, 4),
             ({"op": "cast", "dtype": "i8", "args": [{"int": 200}]}, -56)]
    for e, want in fixed:
        if lm.evaluate(e, {}) != want:
            fail("%s gave %d, C gives %d" % (json.dumps(e),
                                             lm.evaluate(e, {}), want))
    for e in ({"op": "/", "args": [{"int": 1}, {"int": 0}]},
              {"op": "*", "args": [{"int": 1 << 62}, {"int": 4}]},
              {"op": "<<", "args": [{"int": 1}, {"int": 64}]},
              {"param": "missing"}, {"float": 1.5},
              {"op": "pow", "args": [{"int": 1}, {"int": 2}]},
              {"device": "sms"}, {"device": "clock"}):
        try:
            v = lm.evaluate(e, {})
            fail("%s evaluated to %r; it must be an error" % (json.dumps(e), v))
        except lm.ExprError:
            pass

    r = random.Random(20261201)
    names = ["M", "N", "K"]
    trees, envs = [], []
    while len(trees) < 400:
        e = random_tree(r, 4, names)
        env = {n: r.choice([r.randint(-300, 300), 0, 1, -1, 2 ** 31 - 1])
               for n in names}
        env.update(lm.device_env(r.choice([1, 7, 132, 144])))
        try:
            want = lm.evaluate(e, env)
        except lm.ExprError:
            continue  # undefined in C: nothing to compare
        trees.append((e, env, want))
    lines = ["#include <stdbool.h>", "#include <stdio.h>", "",
             lm.c_helpers("t"), "int", "main(void)", "{"]
    for i, (e, env, _) in enumerate(trees):
        lines.append("\t{")
        for n in names:
            lines.append("\t\tconst long long %s = %dLL;" % (n, env[n]))
        lines.append("\t\tconst int sms = %d;" % env[lm.device_key("sms")])
        lines.append('\t\tprintf("%%lld\\n", (long long)(%s));' % lm.to_c(e, "t"))
        lines.append("\t\t(void)M; (void)N; (void)K; (void)sms;")
        lines.append("\t}")
    lines += ["\treturn 0;", "}"]
    work = tempfile.mkdtemp(prefix="tilec-launch-")
    try:
        src, exe = os.path.join(work, "t.c"), os.path.join(work, "t")
        open(src, "w").write("\n".join(lines) + "\n")
        # -fwrapv: a cast's truncation is defined; the evaluator refused
        # every expression whose arithmetic overflows.
        subprocess.run(["cc", "-std=c11", "-O0", "-fwrapv", "-o", exe, src],
                       check=True)
        got = subprocess.run([exe], capture_output=True, text=True,
                             check=True).stdout.split()
    finally:
        shutil.rmtree(work)
    if len(got) != len(trees):
        fail("the C program printed %d values for %d trees" % (len(got),
                                                               len(trees)))
    for (e, env, want), c in zip(trees, got):
        if int(c) != want:
            fail("%s with %s: evaluator %d, C %s" % (lm.to_c(e, "t"), env,
                                                    want, c))
            break
    print("%d expressions compared with C" % len(trees))


# --- document ----------------------------------------------------------------

CTYPES = {"double", "float", "long long", "int", "int8_t", "uint8_t", "bool"}


def check_kernel(k, target):
    params = {p["name"]: p for p in k["params"]}
    for p in k["params"]:
        if "ctype" not in p:
            fail("%s.%s has no ctype" % (k["kernel"], p["name"]))
            continue
        if p["kind"] == "scalar":
            if p["ctype"] not in CTYPES:
                fail("%s.%s: ctype %r" % (k["kernel"], p["name"], p["ctype"]))
            for x in p["extent_of"]:
                if params[x["tensor"]]["shape"][x["dim"]] != {"param": p["name"]}:
                    fail("%s.%s is not the extent of %s dim %d" % (
                        k["kernel"], p["name"], x["tensor"], x["dim"]))
        else:
            want = ("const " if p["const"] else "")
            if not (p["ctype"].startswith(want) and p["ctype"].endswith(" *")):
                fail("%s.%s: tensor ctype %r" % (k["kernel"], p["name"],
                                                 p["ctype"]))
            if p["rank"] != len(p["shape"]):
                fail("%s.%s: rank %d, %d extents" % (k["kernel"], p["name"],
                                                     p["rank"], len(p["shape"])))
    # Every scalar that is a tensor dim's whole extent says so.
    for p in k["params"]:
        for d, e in enumerate(p.get("shape", [])):
            if "param" in e and {"tensor": p["name"], "dim": d} not in \
                    params[e["param"]]["extent_of"]:
                fail("%s: %s dim %d is %s, which does not list it" % (
                    k["kernel"], p["name"], d, e["param"]))


def document():
    src = "tests/launch/two_kernels.c"
    for target in ("openmp", "cuda", "hip"):
        text = tilec(src, "-t", target, "--verify", "--emit=launch")
        doc = json.loads(text)  # one document, or this raises
        ks = lm.kernels(doc)
        if [k["kernel"] for k in ks] != ["tail", "pack"]:
            fail("%s: kernels %s" % (target, [k["kernel"] for k in ks]))
            continue
        for k in ks:
            check_kernel(k, target)
        tail, pack = ks
        # (10 - 40) / 32 + 2: C truncates -30 / 32 to 0, so 2 blocks
        # (Python's // would give 1).
        if lm.grid(tail, {"N": 10}) != [2, 1, 1]:
            fail("%s: grid of tail at N=10 is %s, C gives [2, 1, 1]" % (
                target, lm.grid(tail, {"N": 10})))
        x = next(p for p in pack["params"] if p["name"] == "X")
        if lm.shape(x, pack, {"M": 5, "N": 7}) != [5, 14]:
            fail("%s: X of pack at M=5, N=7 is %s" % (
                target, lm.shape(x, pack, {"M": 5, "N": 7})))
        shift = next(p for p in pack["params"] if p["name"] == "shift")
        if shift["ctype"] != "float" or shift["extent_of"]:
            fail("%s: pack's shift is %s" % (target, shift))
        want_threads = 1 if target == "openmp" else 64
        if tail["threads"] != want_threads:
            fail("%s: tail has %d threads" % (target, tail["threads"]))
    # A persistent kernel's grid: one wave on the device's SMs (B blocks
    # an SM, the grid on one SM), or the tiles where fewer; without an SM
    # count it is no value.
    k = lm.only(tilec("samples/gemm.c", "-t", "cuda", "--arch", "sm_90a",
                      "--persistent", "-DBLOCK_M=64", "-DBLOCK_N=64",
                      "-DBLOCK_K=32", "-DSTAGES=3", "-DTHREADS=128",
                      "--emit=launch"))
    shapes = {"M": 3000, "N": 2990, "K": 300}  # 47 x 47 tiles
    per_sm = lm.grid(k, shapes, 1)[0]
    if not 1 <= per_sm <= 16:
        fail("persistent grid on 1 SM: %d blocks" % per_sm)
    for sms in (132, 7, 2000):
        want = min(47 * 47, sms * per_sm)
        if lm.grid(k, shapes, sms) != [want, 1, 1]:
            fail("persistent grid on %d SMs: %s, not [%d, 1, 1]" % (
                sms, lm.grid(k, shapes, sms), want))
    if not lm.reads_sms(k["grid"][0]) or lm.reads_sms(k["grid"][1]):
        fail("persistent grid %s" % k["grid"])
    try:
        fail("persistent grid without an SM count: %s" % lm.grid(k, shapes))
    except lm.ExprError:
        pass
    # --kernel keeps one.
    one = lm.only(tilec(src, "--kernel", "pack", "--emit=launch"))
    if one["kernel"] != "pack":
        fail("--kernel pack gave %s" % one["kernel"])
    # An export's manifest: the same document, with its provenance.
    work = tempfile.mkdtemp(prefix="tilec-launch-")
    try:
        tilec("export", "samples/gemm.c", "-t", "cuda", "-o", work)
        doc = json.load(open(os.path.join(work, "gemm.launch.json")))
        for key in ("spdx_license", "tilec_version", "source_sha256"):
            if key not in doc:
                fail("gemm.launch.json lacks %s" % key)
        check_kernel(lm.only(doc), "cuda")
    finally:
        shutil.rmtree(work)
    # No tool evaluates text any more.
    for top in ("tools", "tests"):
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith(".py") and n != "launch_test.py":
                    text = open(os.path.join(d, n)).read()
                    if re.search(r"(?<![\w.])eval\(", text):
                        fail("%s calls eval()" % os.path.join(d, n))


# --- gpu-tools ---------------------------------------------------------------

class Stand(types.ModuleType):
    """A module whose every attribute is a callable that returns its
    arguments tagged with the attribute's name."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: (self.__name__ + "." + name, a)


def gpu_tools():
    for m in ("cupy", "torch"):
        sys.modules[m] = Stand(m)
    sys.path.insert(0, os.path.join(ROOT, "tools", "gpu"))
    import run  # noqa: E402  tools/gpu/run.py
    import cases  # noqa: E402
    import tune_farm  # noqa: E402
    n = nmaps = 0
    for name, sample, variant, defines, shapes, ref, kind in cases.CASES:
        src, kernel = cases.source(sample)
        tmp = None
        if variant:
            text = open(os.path.join(ROOT, src)).read()
            for a, b in zip(variant[::2], variant[1::2]):
                text = text.replace(a, b)
            tmp = tempfile.NamedTemporaryFile("w", suffix=".c", delete=False)
            tmp.write(text)
            tmp.close()
            src = tmp.name
        args = [src, "-t", "cuda", "--arch", "sm_90a"] + cases.FLAGS.get(name, [])
        if kernel:
            args += ["--kernel", kernel]
        for k, v in defines.items():
            args += ["-D", f"{k}={v}"]
        L = lm.only(tilec(*args, "--emit=launch"))
        if tmp:
            os.unlink(tmp.name)
        env = dict(L["tunables"])
        env.update(lm.device_env(132))
        env.update(shapes)
        grid = [run.evaluate(g, env) for g in L["grid"]]
        sms = env[lm.device_key("sms")]
        if any(g < 0 for g in grid) or grid != lm.grid(L, shapes, sms):
            fail("%s: grid %s" % (name, grid))
        for p in L["params"]:
            if p["kind"] == "scalar":
                tag = run.SCALAR[p["ctype"]](env[p["name"]])
                far = tune_farm.Gpu.arg(types.SimpleNamespace(cp=sys.modules["cupy"]),
                                        p, env[p["name"]])
                if tag != far:
                    fail("%s.%s: run.py passes %s, tune_farm.py %s" % (
                        name, p["name"], tag, far))
            else:
                ext = [run.evaluate(e, env) for e in p["shape"]]
                if any(e < 0 for e in ext):
                    fail("%s.%s: extents %s" % (name, p["name"], ext))
        nmaps += tensor_maps(name, L, env)
        n += 1
    print("%d GPU cases read, %d tensor maps built" % (n, nmaps))
    if not nmaps:
        fail("no case has tensor maps")


def tensor_maps(name, L, env):
    """Each tensor map of a case as run.py builds it, through a stand-in
    for cuTensorMapEncodeTiled that records what it is given: dims
    innermost first, byte strides of the outer dims, the box reversed,
    the swizzle's code; flagged built only then, and unbuilt for a base
    that is not 16-byte aligned."""
    import ctypes
    params = {p["name"]: p for p in L["params"]}
    for m in L.get("tensor_maps", []):
        p = params[m["tensor"]]
        ext = [max(lm.evaluate(e, env), 1) for e in p["shape"]]
        e = lm._ELEM_BYTES[p["dtype"]]
        ext[-1] = (ext[-1] * e + 15) // 16 * 16 // e  # rows of whole 16 bytes
        seen = {}

        def encode(desc, dt, rank, base, dims, strides, box, es, il, sw, l2, oob):
            seen.update(dt=dt, rank=rank, dims=list(dims[:rank]),
                        strides=list(strides[:rank - 1]), box=list(box[:rank]), sw=sw)
            ctypes.memset(desc, 7, 128)
            return 0
        b = lm.tensor_map(encode, m, p, 0x10000, ext)
        want_strides, st = [], e
        for x in reversed(ext[1:]):
            st *= x
            want_strides.append(st)
        if (seen.get("dims") != ext[::-1] or seen["strides"] != want_strides or
                seen["box"] != m["box"][::-1] or seen["sw"] != {32: 1, 64: 2, 128: 3}[m["swizzle"]] or
                seen["dt"] != {1: 0, 2: 1, 4: 2, 8: 4}[e] or b[:128] != bytes([7]) * 128 or
                b[128:132] != b"\x01\0\0\0" or len(b) != lm.TMAP_BYTES):
            fail("%s: tensor map %s built as %s" % (name, m["name"], seen))
        if lm.tensor_map(encode, m, p, 0x10008, ext)[128:132] != bytes(4):
            fail("%s: tensor map %s built for a misaligned base" % (name, m["name"]))
    return len(L.get("tensor_maps", []))


{"semantics": semantics, "document": document, "gpu-tools": gpu_tools}[CASE]()
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("ok")
