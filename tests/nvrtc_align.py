#!/usr/bin/env python3
"""nvrtc_align.py - the PTX NVRTC makes of tilec's CUDA output has no
misaligned memory access.

usage: nvrtc_align.py TILEC SRCROOT FILE... [--arch ARCH]... [-D NAME=VALUE]...

Each FILE (from SRCROOT) is translated with `tilec FILE -t cuda --arch ARCH
--standalone` (sm_80 and sm_90a unless --arch is given) and compiled to PTX
by NVRTC with the options the runtime passes (runtime/jit_nvrtc.c:
-std=c++17 -default-device, the toolkit's include directory).  Every load
and store of the PTX, `ld`/`st` to any state space, scalar or vector, must
have a constant offset that is a multiple of its width: the base registers
of tilec's accesses are aligned (the dynamic shared memory is
__align__(128), every buffer at an aligned offset, every index a multiple
of the element), so an `st.shared.u16 [%rd6+129]` is a store NVVM merged
from bytes at an address it is not aligned to, a misaligned-address fault
on the GPU (tests/gen/FINDINGS.md, bug 20).  nvcc of the same toolkit
makes other code (32-bit shared addresses) and does not show it, which is
why this check compiles with NVRTC.  The PTX is enough: ptxas keeps each
access's width and address (STS.U16 at the same offset).

Exits 77 (skipped) where libnvrtc cannot be loaded, 0 when every access
is aligned, 1 otherwise, naming each access.
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


def misaligned(ptx):
    """(line number, line) of each access whose offset its width does not
    divide."""
    bad = []
    for no, line in enumerate(ptx.splitlines(), 1):
        m = ACCESS.match(line)
        if not m:
            continue
        width = int(m.group(4)) // 8 * int(m.group(3) or 1)
        a = ADDRESS.search(m.group(5))
        if a and a.group(2) and int(a.group(2)) % width:
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
