#!/usr/bin/env python3
"""nvrtc_align.py - the PTX NVRTC makes of tilec's CUDA output has no
misaligned memory access.

usage: nvrtc_align.py TILEC SRCROOT FILE... [--arch ARCH]... [-D NAME=VALUE]...

Each FILE (from SRCROOT) is translated with `tilec FILE -t cuda --arch ARCH
--standalone` (sm_80 and sm_90a unless --arch is given) and compiled to PTX
by NVRTC with the options the runtime passes (runtime/jit_nvrtc.c:
-std=c++17 -default-device, the toolkit's include directory).  No load or
store of the PTX may be provably misaligned: its base register known to be
a multiple of the access's width (bytes times vector count) and its
constant offset not.  What a register is known to be a multiple of comes
from the instructions that define it (a flow-insensitive pass over the
PTX: a shared symbol's .align, mov of a constant, add, sub, shl, mul, mad,
and, or, cvt, selp; anything else, a parameter or %tid, is a multiple of
1 only).  So `st.shared.u16 [%rd146+257]` with %rd146 = tilec_smem + 8 * i
fails: bytes NVVM merged into a 16-bit store at an odd address, a
misaligned-address fault on the GPU (tests/gen/FINDINGS.md, bug 20),
while `ld.global.nc.v4.u32 [%rd2+-12]` with a base of unknown alignment
passes (tilec's own vector accesses check their alignment at run time).
nvcc of the same toolkit makes other code (32-bit shared addresses) and
does not show bug 20, which is why this compiles with NVRTC; the PTX is
enough, ptxas keeps each access's width and address.

Exits 77 (skipped) where libnvrtc cannot be loaded, 0 when no access is
misaligned, 1 otherwise, naming each access.
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

# ld/st with optional qualifiers, an optional vector width, a type, and a
# [base+offset] address: `st.volatile.shared.v4.u16 [%rd3+256], {...}`.
ACCESS = re.compile(r"^\s*(?:@!?%\w+\s+)?(ld|st)((?:\.[a-z:]+)*?)"
                    r"(?:\.v(\d))?\.[usbf](8|16|32|64)\s+(.*)$")
ADDRESS = re.compile(r"\[\s*([%\w$.]+)\s*(?:\+\s*(-?\d+))?\s*\]")
# An instruction and its operands: `add.s64 %rd3, %rd8, %rd10;`.
INSN = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)\s+(.*?);")
# A symbol's declaration: `.extern .shared .align 128 .b8 tilec_smem[];`.
SYMBOL = re.compile(r"^\s*(?:\.\w+\s+)*\.align\s+(\d+)\s+\.\w+\s+([\w$]+)")
BIG = 64  # "a multiple of 2^64": a register no definition has lowered yet


def zeros(n):
    """The trailing zero bits of the integer n (BIG for 0)."""
    n = abs(n)
    return BIG if n == 0 else (n & -n).bit_length() - 1


def symbols(ptx):
    """Symbol -> the low zero bits of its address (its .align)."""
    sym = {}
    for line in ptx.splitlines():
        m = SYMBOL.match(line)
        if m:
            sym[m.group(2)] = zeros(int(m.group(1)))
    return sym


def known_zeros(lines, sym):
    """Register -> how many low bits are known to be zero in every value
    any instruction of lines gives it (a lower bound; flow-insensitive)."""
    insns = []
    # The function's registers, `.reg .b64 %rd<30>;`: other %-operands
    # (%tid.x, %nctaid.x, ...) are values of unknown alignment.
    regs = re.compile("^%%(?:%s)\\d+$" % "|".join(
        re.findall(r"^\s*\.reg\s+\.\w+\s+%(\w+?)<\d+>", "\n".join(lines),
                   re.M) or ["(?!)"]))
    unknown = set()
    for line in lines:
        m = INSN.match(line)
        if not m or m.group(2).startswith("["):
            continue  # a store, or no operands: no register written
        ops, depth, cur = [], 0, ""
        for ch in m.group(2):
            depth += ch in "{(" and 1 or ch in "})" and -1 or 0
            if ch == "," and depth == 0:
                ops.append(cur.strip())
                cur = ""
            else:
                cur += ch
        ops.append(cur.strip())
        if re.fullmatch(r"%\w+", ops[0]):
            insns.append((m.group(1), ops[0], ops[1:]))
        else:
            # {%r1, %r2} of a vector load, %r1|%p1 of a shuffle, (%r1)
            # of a call: whatever it is, nothing is known of it.
            unknown.update(re.findall(r"%\w+", ops[0]))
    tz = {r: 0 for r in unknown}

    def of(o):
        if o.startswith("%"):
            return tz.get(o, BIG) if regs.match(o) else 0
        if re.fullmatch(r"-?\d+", o):
            return zeros(int(o))
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", o):
            return zeros(int(o, 16))
        return sym.get(o, 0)

    def value(op, ops):
        base = op.split(".")[0]
        if base in ("mov", "cvt", "cvta", "neg") and len(ops) >= 1:
            return of(ops[0])
        if base in ("add", "sub", "or", "selp") and len(ops) >= 2:
            return min(of(ops[0]), of(ops[1]))
        if base == "and" and len(ops) == 2:
            return max(of(ops[0]), of(ops[1]))
        if base == "shl" and len(ops) == 2 and re.fullmatch(r"\d+", ops[1]):
            return of(ops[0]) + int(ops[1])
        if base == "mul" and len(ops) == 2 and ".hi" not in op:
            return of(ops[0]) + of(ops[1])
        if base == "mad" and len(ops) == 3 and ".hi" not in op:
            return min(of(ops[0]) + of(ops[1]), of(ops[2]))
        return 0

    changed = True
    while changed:
        changed = False
        for op, dst, ops in insns:
            v = min(value(op, ops), BIG)
            if v < tz.get(dst, BIG):
                tz[dst] = v
                changed = True
    return tz


def load_nvrtc():
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
             "/usr/local/cuda"]
    names = [os.environ.get("TILEC_NVRTC")] + [
        os.path.join(d, n) if d else n
        for d in [""] + [os.path.join(r, "lib64") for r in roots if r]
        for n in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12")]
    for name in names:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    return None


def cuda_include():
    for r in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
              "/usr/local/cuda", "/usr"):
        if r and os.path.exists(os.path.join(r, "include", "cuda_fp16.h")):
            return os.path.join(r, "include")
    return None


def ptx_of(nv, source, name, arch):
    prog = ctypes.c_void_p()
    if nv.nvrtcCreateProgram(ctypes.byref(prog), source, name.encode(), 0,
                             None, None):
        raise RuntimeError("nvrtcCreateProgram failed")
    opts = ["--gpu-architecture=" + arch, "-std=c++17", "-default-device"]
    inc = cuda_include()
    if inc:
        opts.append("--include-path=" + inc)
    copts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    try:
        if nv.nvrtcCompileProgram(prog, len(opts), copts):
            n = ctypes.c_size_t()
            nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            nv.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(log.value.decode(errors="replace"))
        n = ctypes.c_size_t()
        nv.nvrtcGetPTXSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        nv.nvrtcGetPTX(prog, buf)
        return buf.value.decode()
    finally:
        nv.nvrtcDestroyProgram(ctypes.byref(prog))


FUNCTION = re.compile(r"^\s*(?:\.\w+\s+)*\.(?:entry|func)\b")


def misaligned(ptx):
    """(line number, line) of each access provably misaligned: its base
    known to be a multiple of its width, its offset not.  Registers are
    per function: each .entry and .func is analysed on its own."""
    lines = ptx.splitlines()
    starts = [i for i, l in enumerate(lines) if FUNCTION.match(l)]
    sym = symbols(ptx)
    bad = []
    for k, first in enumerate(starts):
        body = lines[first:starts[k + 1] if k + 1 < len(starts) else len(lines)]
        tz = known_zeros(body, sym)
        for no, line in enumerate(body, first + 1):
            m = ACCESS.match(line)
            if not m:
                continue
            width = int(m.group(4)) // 8 * int(m.group(3) or 1)
            a = ADDRESS.search(m.group(5))
            if not a or not a.group(2) or int(a.group(2)) % width == 0:
                continue
            base = a.group(1)
            known = tz.get(base, BIG) if base.startswith("%") else sym.get(base, 0)
            if known >= zeros(width):
                bad.append((no, line.strip()))
    return bad


def main(argv):
    if len(argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tilec, root = os.path.abspath(argv[1]), argv[2]
    files, archs, defines = [], [], []
    rest = argv[3:]
    while rest:
        a = rest.pop(0)
        if a in ("--arch", "-D") and rest:
            (archs if a == "--arch" else defines).append(rest.pop(0))
        else:
            files.append(a)
    nv = load_nvrtc()
    if nv is None:
        print("skipped: libnvrtc not found")
        return 77
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            for arch in archs or ["sm_80", "sm_90a"]:
                out = os.path.join(tmp, "k.cu")
                cmd = [tilec, f, "-t", "cuda", "--arch", arch, "--standalone",
                       "-o", out] + [x for d in defines for x in ("-D", d)]
                p = subprocess.run(cmd, cwd=root, capture_output=True,
                                   text=True)
                if p.returncode:
                    print("FAIL: %s: %s" % (" ".join(cmd), p.stderr[-2000:]))
                    status = 1
                    continue
                try:
                    ptx = ptx_of(nv, open(out, "rb").read(), f, arch)
                except RuntimeError as e:
                    print("FAIL: %s for %s: NVRTC: %s" % (f, arch, str(e)[:2000]))
                    status = 1
                    continue
                bad = misaligned(ptx)
                for no, line in bad[:10]:
                    print("FAIL: %s for %s: PTX line %d: %s" % (f, arch, no, line))
                if bad:
                    status = 1
                else:
                    print("ok: %s for %s: every access aligned" % (f, arch))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
