#!/usr/bin/env python3
"""fuzz.py - run generated tile programs on every backend tilec has here.

usage: fuzz.py TILEC SRCROOT [--seeds A:B|S,S,... | --count N | --seconds S]
               [--kernels N] [--backends LIST] [--features +a,-b]
               [--jobs N] [--work DIR] [--log FILE] [--expect-clean]

For each seed, tests/gen/tilegen.py writes one file of N kernels and their
oracle; then, one compile per file and backend:

  oracle   tilec run --source ORACLE.c: the reference interpreter against
           the generator's own serial C model (checks the interpreter)
  openmp   the whole file translated once for openmp (--verify), every
           kernel run with tilec run --source against the reference
  openmp-avx2  the same for --arch avx2 (its 8-lane explicit vectors;
           skipped on a CPU without AVX2 and F16C)
  hipemu   the HIP output under tests/hip_emu/hip_emu.hpp on the CPU,
           checked the same way (skipped without clang++ 15 or later)
  cuda     translated for sm_80 and sm_90a (--standalone) and compiled
           with nvcc -cubin (skipped without nvcc)
  hip      translated for gfx90a and compiled with hipcc (skipped
           without hipcc)
  nvrtc    translated for sm_90a (--standalone) and compiled to PTX by
           NVRTC as the runtime does; no load or store of the PTX may be
           provably misaligned (tests/nvrtc_align.py; skipped without
           libnvrtc)

Outputs are poisoned and compared by tilec run; kernels whose outputs are
all integers compare exactly (--tol 0).  Every failure is written to the
log (one JSON object a line) with the seed, kernel, backend and what
tilec said; the files of a failing seed stay in WORK/seed_N/.  Exit status
1 if anything failed (with --expect-clean: the CI form), else 0.

Reproduce one seed:  tilegen.py SEED --kernels N --out DIR (same
features), then the commands this script prints with -v.
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "hip_emu"),
                os.path.dirname(HERE)]
import hip_emu_run  # noqa: E402
import nvrtc_align  # noqa: E402
import tilegen  # noqa: E402

BACKENDS = ["oracle", "openmp", "openmp-avx2", "hipemu", "cuda", "hip",
            "nvrtc"]


def sh(cmd, timeout=600, cwd=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", "timed out after %ds" % timeout


def clangxx():
    for n in ("clang++-19", "clang++-17", "clang++-16", "clang++-15"):
        if shutil.which(n):
            return shutil.which(n)
    return None


class Fuzz:
    def __init__(self, a):
        self.a = a
        self.tilec = os.path.abspath(a.tilec)
        self.root = os.path.abspath(a.srcroot)
        self.features = tilegen.feature_set(a.features)
        self.backends = a.backends.split(",")
        self.counts = {b: 0 for b in BACKENDS + ["cuda-sm_80", "cuda-sm_90a"]}
        self.fails = []
        self.cxx = clangxx()
        # the avx2 arch's code runs here only on a CPU with AVX2 and F16C
        try:
            flags = open("/proc/cpuinfo").read().split()
        except OSError:
            flags = []
        self.avx2 = "avx2" in flags and "f16c" in flags
        self.nvcc = shutil.which("nvcc")
        self.hipcc = shutil.which("hipcc")
        self.nvrtc = nvrtc_align.load_nvrtc() if "nvrtc" in self.backends else None
        self.log = open(a.log, "a") if a.log else None
        os.makedirs(a.work, exist_ok=True)

    def record(self, seed, kernel, backend, what, detail):
        f = {"seed": seed, "kernel": kernel, "backend": backend, "what": what,
             "features": ",".join(sorted(self.features)),
             "kernels": self.a.kernels, "detail": detail[-3000:]}
        self.fails.append(f)
        if self.log:
            self.log.write(json.dumps(f) + "\n")
            self.log.flush()
        print("FAIL seed %d %s %s: %s" % (seed, kernel or "-", backend, what),
              flush=True)
        if self.a.verbose:
            print(detail[-2000:])

    def run_kernels(self, seed, d, meta, backend, source, extra=(),
                    timeout=300):
        """tilec run each kernel against the reference with --source: the
        first alone (it fills the JIT cache), the rest in parallel."""
        src = os.path.join(d, "gen.c")
        env_cache = os.path.join(self.a.work, "jit-cache")

        def one(m):
            cmd = [self.tilec, "run", src, "--kernel", m["kernel"], "--shape",
                   m["shape"], "--source", source, "--seed", str(seed)]
            if m["exact"]:
                cmd += ["--tol", "0"]
            elif m.get("tol"):
                cmd += ["--tol", "%g" % m["tol"]]
            cmd += list(extra)
            env = dict(os.environ, TILEC_CACHE_DIR=env_cache)
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   timeout=timeout, env=env)
                rc, out = p.returncode, p.stdout + p.stderr
            except subprocess.TimeoutExpired:
                rc, out = "timeout", "timed out"
            return m, rc, out, cmd
        res = [one(meta[0])]
        with cf.ThreadPoolExecutor(self.a.jobs) as ex:
            res += list(ex.map(one, meta[1:]))
        for m, rc, out, cmd in res:
            self.counts[backend] += 1
            if rc != 0:
                what = {1: "mismatch", 2: "stopped"}.get(rc, "status %s" % rc)
                if rc == 2 and "failed" in out and "compil" in out:
                    what = "compile error"
                self.record(seed, m["kernel"], backend, what,
                            " ".join(cmd) + "\n" + out)

    def translate(self, seed, d, meta, target, out, extra=()):
        """The whole file for target, or None (recorded per kernel)."""
        src = os.path.join(d, "gen.c")
        rc, so, se = sh([self.tilec, src, "-t", target, "--verify", "-o", out]
                        + list(extra))
        if rc == 0:
            return out
        # find the kernels that fail
        for m in meta:
            rc2, _, se2 = sh([self.tilec, src, "-t", target, "--verify",
                              "--kernel", m["kernel"], "-o", os.devnull] +
                             list(extra))
            if rc2 != 0:
                what = "translator crash" if not isinstance(rc2, int) or \
                    rc2 < 0 or rc2 > 1 else "rejected"
                self.record(seed, m["kernel"], "%s%s" % (target, "".join(
                    " " + x for x in extra)), what, se2)
        return None

    def seed(self, seed):
        a = self.a
        d = os.path.join(a.work, "seed_%d" % seed)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        ks = tilegen.generate(seed, a.kernels, self.features)
        tile, c, meta = tilegen.render(seed, ks, self.features)
        open(os.path.join(d, "gen.c"), "w").write(tile)
        open(os.path.join(d, "oracle.c"), "w").write(c)
        json.dump({"seed": seed, "features": sorted(self.features),
                   "kernels": meta}, open(os.path.join(d, "gen.json"), "w"),
                  indent=1)
        nfail = len(self.fails)
        self.run_dir(seed, d, meta)
        if len(self.fails) == nfail and not a.keep:
            shutil.rmtree(d, ignore_errors=True)

    def run_dir(self, seed, d, meta):
        """Every backend on the program in d (gen.c, oracle.c)."""
        # the program must be accepted
        rc, _, se = sh([self.tilec, os.path.join(d, "gen.c"), "--emit=ir",
                        "--verify", "-o", os.devnull])
        if rc != 0:
            self.record(seed, None, "check", "rejected" if rc == 1 else
                        "translator crash", se)
            return
        if "oracle" in self.backends:
            self.run_kernels(seed, d, meta, "oracle", os.path.join(d, "oracle.c"))
        if "openmp" in self.backends:
            out = self.translate(seed, d, meta, "openmp",
                                 os.path.join(d, "gen.openmp.c"))
            if out:
                self.run_kernels(seed, d, meta, "openmp", out)
        if "openmp-avx2" in self.backends and self.avx2:
            # the avx2 arch's code (8-lane explicit vectors) on this CPU
            avx2 = ["--arch", "avx2"]
            out = self.translate(seed, d, meta, "openmp",
                                 os.path.join(d, "gen.avx2.c"), avx2)
            if out:
                self.run_kernels(seed, d, meta, "openmp-avx2", out, avx2)
        if "hipemu" in self.backends and self.cxx:
            # (the emulator runs a thread per GPU thread: one kernel at a
            # time per job)
            self.hipemu(seed, d, meta)
        if "cuda" in self.backends and self.nvcc:
            for arch in ("sm_80", "sm_90a"):
                out = self.translate(seed, d, meta, "cuda",
                                     os.path.join(d, "gen.%s.cu" % arch),
                                     ["--arch", arch, "--standalone"])
                if not out:
                    continue
                rc, so, se = sh([self.nvcc, "-std=c++17", "-gencode=arch=compute_%s,code=%s"
                                 % (arch[3:], arch), "-cubin", "-o",
                                 os.path.join(d, "gen.%s.cubin" % arch), out])
                self.counts["cuda-" + arch] += len(meta)
                if rc != 0:
                    self.record(seed, None, "cuda-" + arch, "nvcc error", se + so)
        if "hip" in self.backends and self.hipcc:
            out = self.translate(seed, d, meta, "hip", os.path.join(d, "gen.hip.cpp"),
                                 ["--standalone"])
            if out:
                rc, so, se = sh([self.hipcc, "--offload-arch=gfx90a", "-c",
                                 "-o", os.path.join(d, "gen.hip.o"), out])
                self.counts["hip"] += len(meta)
                if rc != 0:
                    self.record(seed, None, "hip", "hipcc error", se + so)

        if "nvrtc" in self.backends and self.nvrtc:
            out = self.translate(seed, d, meta, "cuda", os.path.join(d, "gen.nvrtc.cu"),
                                 ["--arch", "sm_90a", "--standalone"])
            if out:
                self.counts["nvrtc"] += len(meta)
                try:
                    ptx = nvrtc_align.ptx_of(self.nvrtc, open(out, "rb").read(),
                                             out, "sm_90a")
                except RuntimeError as e:
                    self.record(seed, None, "nvrtc", "NVRTC error", str(e))
                    return
                bad = nvrtc_align.misaligned(ptx)
                if bad:
                    self.record(seed, None, "nvrtc", "misaligned access in the PTX",
                                "\n".join("line %d: %s" % b for b in bad[:20]))

    def hipemu(self, seed, d, meta):
        src = os.path.join(d, "gen.c")
        hip = self.translate(seed, d, meta, "hip", os.path.join(d, "gen.hip.raw"))
        if not hip:
            return
        rc, so, se = sh([self.tilec, src, "-t", "hip", "--emit=launch"])
        hrc, hso, hse = sh([self.tilec, src, "-t", "openmp", "--emit=launch"])
        if rc != 0 or hrc != 0:
            self.record(seed, None, "hipemu", "launch manifest", se + hse)
            return
        lines = hip_emu_run.emu_wrapper(
            os.path.join(self.root, "tests", "hip_emu", "hip_emu.hpp"),
            open(hip).read(), so, hso)
        wrapper = os.path.join(d, "gen.emu.cpp")
        open(wrapper, "w").write("\n".join(lines) + "\n")
        emucc = os.path.join(d, "emucc")
        with open(emucc, "w") as f:
            f.write(hip_emu_run.emucc_script(self.cxx, "gfx90a"))
        os.chmod(emucc, 0o755)
        self.run_kernels(seed, d, meta, "hipemu", wrapper, ["--cc", emucc],
                         timeout=self.a.emu_timeout)

    def summary(self):
        c = self.counts
        parts = ["%s %d" % (b, n) for b, n in c.items() if n]
        return "programs run: %s; failures: %d" % (", ".join(parts),
                                                   len(self.fails))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tilec")
    ap.add_argument("srcroot")
    ap.add_argument("--seeds", default=None,
                    help="A:B, seeds A..B-1; or S,S,..., those seeds")
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--features", default="")
    ap.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    ap.add_argument("--work", default=None)
    ap.add_argument("--log", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--progress", action="store_true",
                    help="print the running counts after every seed")
    ap.add_argument("--emu-timeout", type=int, default=60)
    ap.add_argument("--expect-clean", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    tmp = None
    if not a.work:
        tmp = a.work = tempfile.mkdtemp(prefix="tilec-gen-")
    F = Fuzz(a)
    if a.seeds:
        if ":" in a.seeds:
            lo, hi = map(int, a.seeds.split(":"))
            seeds = iter(range(lo, hi))
        else:
            seeds = iter([int(x) for x in a.seeds.split(",")])
    else:
        import itertools
        seeds = itertools.count(a.first)
    t0 = time.time()
    n = 0
    for s in seeds:
        if a.count is not None and n >= a.count:
            break
        if a.seconds is not None and time.time() - t0 >= a.seconds:
            break
        F.seed(s)
        n += 1
        if a.progress:
            print("seed %d done: %s" % (s, F.summary()), flush=True)
    print("%d seeds of %d kernels in %.0f s: %s" % (n, a.kernels,
                                                   time.time() - t0, F.summary()))
    if tmp and not F.fails:
        shutil.rmtree(tmp, ignore_errors=True)
    elif F.fails:
        print("failing seeds kept in %s" % a.work)
    return 1 if F.fails else 0


if __name__ == "__main__":
    sys.exit(main())
