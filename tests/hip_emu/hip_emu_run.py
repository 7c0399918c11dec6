#!/usr/bin/env python3
"""hip_emu_run.py - check tilec's HIP output for one kernel on the host CPU.

usage: hip_emu_run.py TILEC SRCROOT SAMPLE [--arch ARCH] [-D NAME=VALUE]...
                      [--aligned] [tilec run args]

SAMPLE is a file in samples/, or a path from SRCROOT.  Translates it for
hip (ARCH, gfx90a by default; -D and --kernel apply; the emulator's C++
compile then defines __ARCH__, as the device compilers do, and with
--aligned TILEC_ALIGNED=1, the runtime's build for aligned launches, which
the shapes given must make every launch) and wraps the kernel in a
`tilec_entry_<kernel>(void **args)` that launches it over its grid under
hip_emu.hpp (one host thread per GPU thread, waves of 64, the MFMA
instructions computed from their documented lane layout).  Then

    tilec run SAMPLE -t openmp --source WRAPPER --cc EMUCC ...

compiles the wrapper with the host's clang++ and checks it against the
reference interpreter on random inputs, poisoned outputs and the shapes
given, exactly as for the CPU backend.  Exit status: tilec run's (0 pass,
1 mismatch, 2 stopped), or 77 (skipped) without clang++ 15 or later.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# Where C++ on x86 and a GPU disagree about an undefined operation (a float
# out of an integer's range converted to it, a shift past the width), the
# emulator traps instead of quietly giving the x86 answer: the GPU would not.
EMU_TRAPS = ("-fsanitize=float-cast-overflow,shift-exponent"
             " -fsanitize-trap=float-cast-overflow,shift-exponent")

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(_here)),
                                "tools"))
import launch_manifest  # noqa: E402

# The HIP output's element type of a tensor parameter of each dtype.
TENSOR = {"f64": "double", "f32": "float", "f16": "__half",
          "bf16": "tilec::bf16", "i64": "long long", "i32": "int",
          "i8": "signed char", "u8": "unsigned char", "bool": "bool",
          "fp8e4m3": "tilec::fp8e4m3", "fp8e5m2": "tilec::fp8e5m2",
          "i4": "tilec::i4x2"}


def emu_wrapper(emu_hpp, hip_source, hip_launch, host_launch):
    """The lines of a C++ file holding the HIP source and, for each kernel
    of the launch documents, `tilec_entry_K(void **args)` (the CPU's
    entry, args as the openmp ABI passes them: host_launch's C types)
    running it over its grid (hip_launch's) under hip_emu.hpp."""
    host = launch_manifest.by_name(host_launch)
    lines = ['#include "%s"' % emu_hpp, "", hip_source, "",
             launch_manifest.c_helpers("emu")]
    for k in launch_manifest.kernels(hip_launch):
        lines += ['extern "C" void tilec_entry_%s(void **args)' % k["kernel"],
                  "{"]
        if k["tunables"]:
            lines.append("\tenum { %s };" % ", ".join(
                "%s = %d" % kv for kv in k["tunables"].items()))
        names = []
        for n, p in enumerate(host[k["kernel"]]["params"]):
            if p["kind"] == "scalar":
                lines.append("\t%s %s = *(%s *)args[%d];" % (
                    p["ctype"], p["name"], p["ctype"], n))
            else:
                t = ("const " if p["const"] else "") + TENSOR[p["dtype"]]
                lines.append("\t%s *%s = *(%s **)args[%d];" % (
                    t, p["name"], t, n))
            names.append(p["name"])
        lines.append("\tconst long long grid[3] = { %s };" % ", ".join(
            launch_manifest.to_c(g, "emu") for g in k["grid"]))
        lines.append("\tif (grid[0] > 0 && grid[1] > 0 && grid[2] > 0) {")
        lines.append("\t\tconst unsigned dims[3] = { (unsigned)grid[0], "
                     "(unsigned)grid[1], (unsigned)grid[2] };")
        # ::K: a parameter may have the kernel's name (valid C).
        lines.append("\t\thip_emu::launch(dims, %d, [&] { ::%s(%s); });" % (
            k["threads"], k["kernel"], ", ".join(names)))
        lines.append("\t}")
        lines.append("}")
    return lines


def clangxx():
    for name in ("clang++-19", "clang++-17", "clang++-16", "clang++-15"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def emucc_script(cxx, arch, defs=""):
    """The compiler tilec run is given (--cc): its C compile line, as C++
    without OpenMP, for the emulator on ARCH.  Without the loop and SLP
    vectorizers: clang 15 on an x86 without AVX512-FP16 cannot select
    some _Float16 vector operations they form (fminf over 16 halves:
    "Cannot select X86ISD::FMIN v16f16"), and the emulator's threads gain
    nothing from them; they go last, as tilec run's line carries
    -ftree-vectorize."""
    return ('#!/bin/sh\nargs=""\nfor a in "$@"; do\n'
            '\tcase $a in -fopenmp) ;; *) args="$args $a" ;; esac\n'
            'done\nexec %s -std=c++17 -pthread -Wno-unused-parameter'
            ' -D__%s__ %s%s $args -fno-vectorize -fno-slp-vectorize\n'
            % (cxx, arch, EMU_TRAPS, defs))


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    tilec, root, sample = sys.argv[1:4]
    rest = sys.argv[4:]
    cxx = clangxx()
    if not cxx:
        print("skipped: no clang++ 15 or later (its _Float16 on x86)")
        return 77
    # -D and --kernel apply to the translation too; --arch to it alone.
    defines = []
    cxxdefs = ""
    arch = "gfx90a"
    i = 0
    while i < len(rest):
        if rest[i] == "--arch" and i + 1 < len(rest):
            arch = rest[i + 1]
            del rest[i:i + 2]
        elif rest[i] == "--aligned":
            # The build for aligned launches (docs/runtime.md): the
            # shapes given must make every launch aligned.
            cxxdefs = " -DTILEC_ALIGNED=1"
            del rest[i]
        elif rest[i] in ("-D", "--kernel") and i + 1 < len(rest):
            defines += rest[i:i + 2]
            i += 2
        else:
            i += 1
    if not arch.isalnum():
        print("hip_emu_run.py: bad --arch %r" % arch, file=sys.stderr)
        return 2
    tilec = os.path.abspath(tilec)
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(root)
    src = sample if "/" in sample else os.path.join("samples", sample)
    hip = subprocess.run([tilec, src, "-t", "hip", "--arch", arch, "--verify"]
                         + defines, capture_output=True, text=True)
    launch = subprocess.run([tilec, src, "-t", "hip", "--arch", arch,
                             "--emit=launch"] + defines,
                            capture_output=True, text=True)
    host = subprocess.run([tilec, src, "-t", "openmp", "--emit=launch"] +
                          defines, capture_output=True, text=True)
    if hip.returncode or launch.returncode or host.returncode:
        sys.stderr.write(hip.stderr + launch.stderr + host.stderr)
        return 2
    lines = emu_wrapper(os.path.join(here, "hip_emu.hpp"), hip.stdout,
                    launch.stdout, host.stdout)
    work = tempfile.mkdtemp(prefix="tilec-hip-emu-")
    try:
        base = os.path.splitext(os.path.basename(sample))[0]
        wrapper = os.path.join(work, base + ".emu.cpp")
        with open(wrapper, "w") as f:
            f.write("\n".join(lines) + "\n")
        emucc = os.path.join(work, "emucc")
        with open(emucc, "w") as f:
            f.write(emucc_script(cxx, arch, cxxdefs))
        os.chmod(emucc, 0o755)
        return subprocess.run([tilec, "run", src, "-t", "openmp", "--source",
                               wrapper, "--cc", emucc] + rest).returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
