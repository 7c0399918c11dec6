#!/usr/bin/env python3
"""Where NVRTC's time goes for one generated CUDA file.

  tools/nvrtc_phases.py FILE.cu [--arch sm_90a] [--rounds 3] [-- OPTION...]

Compiles FILE.cu (a `tilec -t cuda --standalone` output) with NVRTC, as
tilec's runtime does (-std=c++17 -default-device, the toolkit's include
directory), ROUNDS times in this process, and prints for each round the
wall time of nvrtcCompileProgram and NVRTC's own split of it (--time):
the C++ front end, the NVVM optimizer and PTX translation (ptxas).
OPTIONs after `--` are added to every compile.  Needs libnvrtc (found
as the runtime finds it: $TILEC_NVRTC, $CUDA_HOME, /usr/local/cuda), no
GPU.  docs/perf-gpu.md records what it showed.
"""
import argparse, ctypes, os, sys, tempfile, time


def find_nvrtc():
    env = os.environ.get("TILEC_NVRTC")
    if env:
        return env, os.path.join(os.path.dirname(os.path.dirname(env)), "include")
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "lib64", "libnvrtc.so")):
            return (os.path.join(root, "lib64", "libnvrtc.so"),
                    os.path.join(root, "include"))
    sys.exit("nvrtc_phases.py: no libnvrtc.so (set TILEC_NVRTC or CUDA_HOME)")


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    lib_path, include = find_nvrtc()
    lib = ctypes.CDLL(lib_path)
    src = open(args.file, "rb").read()
    name = os.path.basename(args.file)
    for r in range(args.rounds):
        with tempfile.NamedTemporaryFile(suffix=".csv") as csv:
            opts = ["-std=c++17", "-default-device",
                    "--gpu-architecture=" + args.arch, "-I", include,
                    "--time=" + csv.name] + extra
            prog = ctypes.c_void_p()
            if lib.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(),
                                      0, None, None):
                sys.exit("nvrtc_phases.py: nvrtcCreateProgram failed")
            arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
            t = time.perf_counter()
            rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
            wall = time.perf_counter() - t
            if rc:
                n = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
                log = ctypes.create_string_buffer(n.value)
                lib.nvrtcGetProgramLog(prog, log)
                sys.exit("nvrtc_phases.py: %s does not compile:\n%s" %
                         (args.file, log.value.decode(errors="replace")))
            lib.nvrtcDestroyProgram(ctypes.byref(prog))
            phases = []
            for line in open(csv.name).read().splitlines():
                f = [x.strip() for x in line.split(",")]
                if len(f) >= 4 and f[0] != "File name":
                    phases.append("%s %s %s" % (f[1], f[2], f[3]))
        print("%s %s round %d: %.3f s (%s)" % (name, args.arch, r + 1, wall,
                                               "; ".join(phases)))


if __name__ == "__main__":
    main()
