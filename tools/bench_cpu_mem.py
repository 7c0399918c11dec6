#!/usr/bin/env python3
"""Memory-bound samples on the CPU against a parallel copy of their bytes.

  tools/bench_cpu_mem.py [--threads N] [--repeat R] [--arch A] [--keep DIR] [CASE ...]
  tools/bench_cpu_mem.py --carry DIR [--repeat R] [--arch A] [CASE ...]

For each case (all of CASES by default): checks the sample with `tilec
run` on a small ragged shape (a wrong kernel is not timed), translates it
for the openmp target (`--arch`, native by default) with --standalone,
and writes a C driver from its launch document: tensors of the benchmark
shape filled with random values (integer tensors with the case's index
rule), then the kernel's entry point (docs/runtime.md, "The entry-point
convention") and a parallel copy of the same number of bytes (half read,
half written, as a kernel that reads its inputs once and writes its
outputs once moves them) timed alternately, median of R.  Prints one
line per case: the kernel's GB/s (bytes of every tensor over its time),
the copy's, and their ratio.  Threads: OMP_NUM_THREADS (--threads).
--keep DIR keeps the kernels, drivers and programs there (to profile).
--carry DIR checks and translates here but times nothing: it writes the
kernels, the drivers and DIR/run.sh, which builds them with the host's
cc -march=native and times each at 2, 8 and 16 threads (threads on
cores), for a machine without tilec (the 16-core host through the device
tool: pick --arch for that CPU, e.g. amx).  docs/perf.md records runs.
"""
import argparse, json, math, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (sample, small ragged check shape, benchmark shape, index rules)
# An index rule fills an integer tensor: element i gets (i * 7919) % BOUND,
# BOUND an expression of the shape.
CASES = {
    "softmax": ("samples/softmax.c", "M=37,N=4100", "M=16384,N=4096", {}),
    "rmsnorm": ("samples/rmsnorm.c", "M=37,N=4100,eps=1e-6",
                "M=16384,N=4096,eps=1e-6", {}),
    "add_rmsnorm": ("samples/add_rmsnorm.c", "M=37,N=4100,eps=1e-6",
                    "M=16384,N=4096,eps=1e-6", {}),
    "layernorm": ("samples/layernorm.c", "M=37,N=4100,eps=1e-5",
                  "M=16384,N=4096,eps=1e-5", {}),
    "bias_gelu": ("samples/bias_gelu.c", "M=37,N=4100", "M=16384,N=4096", {}),
    "rope": ("samples/rope.c", "T=37,H=3,MAXPOS=50", "T=16384,H=32,MAXPOS=16384",
             {"P": "MAXPOS"}),
    "transpose": ("samples/transpose.c", "M=130,N=77", "M=8192,N=8192", {}),
    "cross_entropy": ("samples/cross_entropy.c", "M=37,V=1000", "M=4096,V=32000",
                      {"L": "V"}),
}

CTYPE = {"int": "int", "long long": "long long", "float": "float",
         "double": "double", "int8_t": "int8_t", "uint8_t": "uint8_t",
         "bool": "bool"}
ELEM = {"f64": ("double", 8), "f32": ("float", 4), "f16": ("_Float16", 2),
        "bf16": ("uint16_t", 2), "i32": ("int32_t", 4), "i64": ("int64_t", 8),
        "i8": ("int8_t", 1), "u8": ("uint8_t", 1)}


def evaluate(e, env):
    if "int" in e:
        return e["int"]
    if "param" in e:
        return env[e["param"]]
    if "tunable" in e:
        return env[e["tunable"]]
    a = [evaluate(x, env) for x in e["args"]]
    op = e["op"]
    if op == "ceildiv":
        return -(-a[0] // a[1])
    return {"*": lambda: a[0] * a[1], "+": lambda: a[0] + a[1],
            "-": lambda: a[0] - a[1], "/": lambda: a[0] // a[1],
            "min": lambda: min(a), "max": lambda: max(a)}[op]()


def driver(k, env, rules, repeat):
    """C source timing entry tilec_entry_K against a parallel copy."""
    name = k["kernel"]
    lines = ["#include <math.h>", "#include <omp.h>", "#include <stdbool.h>",
             "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
             "#include <string.h>", "",
             "void tilec_entry_%s(void **args);" % name, "",
             "static int cmp(const void *a, const void *b)",
             "{ double x = *(const double *)a, y = *(const double *)b; "
             "return (x > y) - (x < y); }", "",
             "int main(void)", "{",
             "\tsize_t bytes = 0;",
             "\tvoid *args[%d];" % (len(k["params"]) + 1)]
    for i, p in enumerate(k["params"]):
        v = "p%d" % i
        if p["kind"] == "scalar":
            lines.append("\tstatic %s %s = %s;" % (CTYPE[p["ctype"]], v,
                                                  repr(env[p["name"]])))
            lines.append("\targs[%d] = &%s;" % (i, v))
            continue
        ctype, size = ELEM[p["dtype"]]
        n = math.prod(evaluate(e, env) for e in p["shape"])
        lines += ["\tstatic %s *%s;" % (ctype, v),
                  "\t%s = aligned_alloc(64, (%dull * %d + 63) / 64 * 64);" % (v, n, size),
                  "\tbytes += %dull * %d;" % (n, size),
                  "\t#pragma omp parallel for schedule(static)",
                  "\tfor (long long i = 0; i < %dll; i++)" % n]
        if p["name"] in rules:
            lines.append("\t\t%s[i] = (%s)((i * 7919) %% %d);" % (
                v, ctype, evaluate({"param": rules[p["name"]]}, env)))
        elif p["dtype"] in ("f16", "f32", "f64"):
            lines.append("\t\t%s[i] = (%s)(((i * 2654435761u) %% 2001) / 1000.0 - 1.0);" % (v, ctype))
        else:
            lines.append("\t\t%s[i] = (%s)(i * 2654435761u);" % (v, ctype))
        lines.append("\targs[%d] = &%s;" % (i, v))
    lines += [
        "\targs[%d] = NULL;" % len(k["params"]),
        "\tsize_t half = bytes / 2 / 64 * 64;",
        "\tunsigned char *src = aligned_alloc(64, half), *dst = aligned_alloc(64, half);",
        "\tmemset(src, 1, half);",
        "\tmemset(dst, 2, half);",
        "\tdouble tk[%d], tc[%d];" % (repeat, repeat),
        "\tfor (int r = -2; r < %d; r++) {" % repeat,
        "\t\tdouble t0 = omp_get_wtime();",
        "\t\ttilec_entry_%s(args);" % name,
        "\t\tdouble t1 = omp_get_wtime();",
        "\t\t#pragma omp parallel",
        "\t\t{",
        "\t\t\tint t = omp_get_thread_num(), n = omp_get_num_threads();",
        "\t\t\tsize_t lo = half / 64 * t / n * 64, hi = half / 64 * (t + 1) / n * 64;",
        "\t\t\tmemcpy(dst + lo, src + lo, hi - lo);",
        "\t\t}",
        "\t\tdouble t2 = omp_get_wtime();",
        "\t\tif (r >= 0) { tk[r] = t1 - t0; tc[r] = t2 - t1; }",
        "\t}",
        "\tqsort(tk, %d, sizeof *tk, cmp);" % repeat,
        "\tqsort(tc, %d, sizeof *tc, cmp);" % repeat,
        "\tdouble k = tk[%d], c = tc[%d];" % (repeat // 2, repeat // 2),
        "\tprintf(\"%.3f %.3f %zu\\n\", k * 1e3, c * 1e3, bytes);",
        "\treturn dst[half / 2] == 3;",
        "}"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--arch", default="native")
    ap.add_argument("--keep", metavar="DIR",
                    help="build in DIR and keep the kernels and drivers (to profile)")
    ap.add_argument("--carry", metavar="DIR",
                    help="write the kernels, drivers and run.sh to DIR; time nothing")
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")))
    a = ap.parse_args()
    if a.threads:
        os.environ["OMP_NUM_THREADS"] = str(a.threads)
    tilec = os.path.join(a.build, "tilec")
    names = a.cases or list(CASES)
    for n in names:
        if n not in CASES:
            sys.exit("bench_cpu_mem.py: no case %r (cases: %s)" % (n, ", ".join(CASES)))
    cc = os.environ.get("CC", "cc")
    if not a.carry:
        print("tilec CPU memory-bound samples, threads %s, arch %s" %
              (os.environ.get("OMP_NUM_THREADS", "(OpenMP default)"), a.arch))
        print("%-14s %-28s %9s %9s %9s %9s %6s" % ("case", "shape", "ms", "GB/s",
                                                "copy ms", "copy GB/s", "ratio"))
    os.chdir(ROOT)
    if a.carry:
        a.keep = a.carry
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or tmp
        os.makedirs(work, exist_ok=True)
        for n in names:
            src, small, shape, rules = CASES[n]
            chk = subprocess.run([tilec, "run", src, "--shape", small],
                                 capture_output=True, text=True)
            if chk.returncode:
                sys.exit("bench_cpu_mem.py: %s fails its check; not timing:\n%s%s" %
                         (src, chk.stdout, chk.stderr))
            k_c = os.path.join(work, n + ".c")
            subprocess.run([tilec, src, "--arch", a.arch, "--standalone", "-o", k_c],
                           check=True)
            doc = json.loads(subprocess.run([tilec, src, "--arch", a.arch, "--emit=launch"],
                                            check=True, capture_output=True,
                                            text=True).stdout)
            k = doc["kernels"][0]
            env = dict(k["tunables"])
            for kv in shape.split(","):
                key, v = kv.split("=")
                env[key] = float(v) if "." in v or "e" in v else int(v)
            d_c = os.path.join(work, n + "_main.c")
            with open(d_c, "w") as f:
                f.write(driver(k, env, rules, a.repeat))
            if a.carry:
                continue
            exe = os.path.join(work, n)
            subprocess.run([cc, "-O3", "-march=native", "-fopenmp", "-fno-math-errno",
                            "-o", exe, k_c, d_c, "-lm"], check=True)
            out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
            ms, copy_ms, nbytes = float(out[0]), float(out[1]), int(out[2])
            print("%-14s %-28s %9.3f %9.1f %9.3f %9.1f %6.2f" % (
                n, shape, ms, nbytes / ms / 1e6, copy_ms, nbytes / copy_ms / 1e6,
                copy_ms / ms), flush=True)
    if a.carry:
        with open(os.path.join(a.carry, "run.sh"), "w") as f:
            f.write(RUN_SH % " ".join(names))
        print("wrote %s: run `bash %s/run.sh` on the host" % (a.carry, a.carry))


# The timing half of a --carry directory, for a host without tilec.
RUN_SH = """#!/bin/bash
# Written by tools/bench_cpu_mem.py --carry: each case's kernel and
# driver built with this host's cc and timed at 2, 8 and 16 threads
# (threads on cores), the kernel and a parallel copy of its bytes
# alternately; ratio = copy time / kernel time.
cd "$(dirname "$0")" || exit 2
lscpu | grep -E "Model name|^CPU\\(s\\)|Thread|Socket" | tr -s " "
printf "%%-14s %%3s %%9s %%9s %%6s\\n" case threads ms copy_ms ratio
for c in %s; do
	${CC:-cc} -O3 -march=native -fopenmp -fno-math-errno -o "/tmp/bench_$c" \\
		"$c.c" "${c}_main.c" -lm || continue
	for t in 2 8 16; do
		set -- $(OMP_NUM_THREADS=$t OMP_PROC_BIND=close OMP_PLACES=cores \\
			"/tmp/bench_$c")
		awk -v c="$c" -v t="$t" -v k="$1" -v p="$2" -v b="$3" 'BEGIN {
			printf "%%-14s %%3d %%9.3f %%9.3f %%6.2f  %%.1f GB/s, copy %%.1f\\n",
			       c, t, k, p, p / k, b / k / 1e6, b / p / 1e6 }'
	done
done
"""


if __name__ == "__main__":
    main()
