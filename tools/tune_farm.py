#!/usr/bin/env python3
"""tune_farm.py - the GPU side of `tilec tune --prepare`: check and time
every prepared configuration of a kernel on one CUDA GPU.

A machine with the translator writes DIR with

    tilec tune FILE -t cuda --arch sm_90a --shape ... --check-shape ... --prepare DIR

(each configuration's standalone source, the cubin compiled there, its
launch manifest, and the reference interpreter's inputs and outputs at
the check shape).  Here, with python3, torch and cupy and nothing of
tilec, for each DIR:

  1. load every configuration: its cubin when the driver takes it, else
     its source through NVRTC (cupy);
  2. check each at the check shape against the reference data: inputs
     from DIR/data, outputs poisoned (NaN, or 0xAB bytes for integers),
     the error relative to the largest reference value within the
     manifest's tolerance, nothing left unwritten;
  3. at the tuning shape, on fresh random inputs, run the default
     configuration once and compare every other with it (the same
     tolerance), then time each with CUDA events: warm-up launches, then
     one event pair per launch, the median, input sets rotated so at
     least 256 MiB is touched between reuses;
  4. time the fastest few and the default again in alternating rounds;
  5. with an anchor (DIR:matmul or DIR:sdpa), time torch's own kernel on
     the same tensors in the same run.

and write timings.json (into DIR, or OUT_DIR/<DIR's name>.timings.json),
rewritten after every configuration so an interrupted run keeps what it
measured.  `tilec tune --finish DIR --timings FILE` turns it into the
tuning record.

  python3 tools/tune_farm.py DIR[:ANCHOR] ... [--out-dir D] [--device N]
                             [--budget SECONDS] [--only ID,...] [--dry-run]

--dry-run needs neither torch nor cupy: it checks DIR (manifest, sources,
data sizes, grid expressions) and writes timings marked "dry_run" with
made-up times, to test the plumbing.  Exit status: 0 when every DIR has
a chosen configuration, 1 otherwise, 2 on bad arguments.
"""
import argparse
import hashlib
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_manifest  # noqa: E402

TIMINGS_FORMAT = "tilec-tune-timings/1"
PREPARED_FORMAT = "tilec-tune-prepared/1"

# Element bytes of each tile dtype in memory (i4 packs two per byte).
BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "fp8e4m3": 1,
         "fp8e5m2": 1, "i64": 8, "i32": 4, "i8": 1, "u8": 1, "i4": 0.5,
         "bool": 1}
FLOATS = ("f64", "f32", "f16", "bf16", "fp8e4m3", "fp8e5m2")


# The device a launch's grid may read (a persistent kernel's: its SM
# count), set once the GPU is open, or by a dry run.
DEVICE = {}


def evaluate(expr, env):
    """A launch-manifest expression tree over env and DEVICE (C integer
    semantics)."""
    return launch_manifest.evaluate(expr, dict(env, **DEVICE))


def nbytes(dtype, count):
    return (count + 1) // 2 if dtype == "i4" else count * int(BYTES[dtype])


def tensor_params(launch):
    return [p for p in launch["params"] if p["kind"] == "tensor"]


def extents(p, env):
    return [evaluate(e, env) for e in p["shape"]]


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def stats(times):
    s = sorted(times)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"median_ms": med, "min_ms": s[0], "mean_ms": sum(s) / n, "runs": n}


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


class Gpu:
    """torch and cupy on one device: tensors, kernels, launches, events."""

    def __init__(self, device):
        import cupy
        import torch
        self.cp, self.torch = cupy, torch
        self.device = device
        torch.cuda.set_device(device)
        cupy.cuda.Device(device).use()
        DEVICE.update(launch_manifest.device_env(
            cupy.cuda.Device(device).attributes["MultiProcessorCount"]))
        self.dt = {"f64": torch.float64, "f32": torch.float32,
                   "f16": torch.float16, "bf16": torch.bfloat16,
                   "i64": torch.int64, "i32": torch.int32, "i8": torch.int8,
                   "u8": torch.uint8, "bool": torch.bool, "i4": torch.uint8,
                   "fp8e4m3": getattr(torch, "float8_e4m3fn", torch.uint8),
                   "fp8e5m2": getattr(torch, "float8_e5m2", torch.uint8)}
        # What a kernel argument is viewed as (cupy lacks some dtypes).
        self.view = {"bf16": torch.int16, "fp8e4m3": torch.uint8,
                     "fp8e5m2": torch.uint8}

    def identity(self):
        cp, torch = self.cp, self.torch
        props = cp.cuda.runtime.getDeviceProperties(self.device)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else name

        def ver(v):
            return f"{v // 1000}.{(v % 1000) // 10}"
        comp = {"cupy": cp.__version__, "torch": torch.__version__,
                "driver": ver(cp.cuda.runtime.driverGetVersion()),
                "cuda_runtime": ver(cp.cuda.runtime.runtimeGetVersion())}
        try:
            major, minor = cp.cuda.nvrtc.getVersion()
            comp["nvrtc"] = f"{major}.{minor}"
        except Exception:
            pass
        return name, comp

    def load(self, d, cfg, march):
        """The kernel: the prepared cubin if it loads, else NVRTC."""
        cp = self.cp
        name = cfg["launch"]["kernel"]
        t0 = time.time()
        why = None
        if cfg.get("cubin"):
            try:
                mod = cp.RawModule(path=os.path.join(d, cfg["cubin"]))
                return mod.get_function(name), "cubin", time.time() - t0, None
            except Exception as e:  # an older driver: compile here
                why = f"{type(e).__name__}: {e}"[:300]
        src = open(os.path.join(d, cfg["source"])).read()
        mod = cp.RawModule(code=src, options=("-std=c++17", f"-arch={march}"))
        return mod.get_function(name), "nvrtc", time.time() - t0, why

    def empty(self, dtype, count):
        n = nbytes(dtype, count)
        if dtype == "i4":
            return self.torch.empty(n, dtype=self.torch.uint8, device="cuda")
        return self.torch.empty(count, dtype=self.dt[dtype], device="cuda")

    def poison(self, t, dtype):
        if dtype in FLOATS and t.dtype not in (self.torch.uint8,):
            t.fill_(float("nan"))
        else:
            t.view(self.torch.uint8).fill_(0xAB)

    def from_file(self, path, dtype, count):
        raw = open(path, "rb").read()
        if len(raw) != nbytes(dtype, count):
            raise ValueError(f"{path}: {len(raw)} bytes, expected "
                             f"{nbytes(dtype, count)}")
        t = self.empty(dtype, count)
        src = self.torch.frombuffer(bytearray(raw), dtype=self.torch.uint8)
        t.view(self.torch.uint8).copy_(src.to("cuda"))
        return t

    def random(self, dtype, count, gen, value_range=None):
        torch = self.torch
        t = self.empty(dtype, count)
        if value_range is not None:
            # --range: uniform in [lo, hi], both included (ids, positions).
            lo, hi = value_range
            if dtype in FLOATS:
                v = torch.rand(count, generator=gen, device="cuda", dtype=torch.float64)
                t.copy_((lo + (hi - lo) * v).to(t.dtype))
            else:
                v = torch.randint(int(lo), int(hi) + 1, (t.numel(),), generator=gen,
                                  device="cuda", dtype=torch.int64)
                t.copy_(v.to(t.dtype))
            return t
        if dtype in FLOATS:
            mag = torch.rand(count, generator=gen, device="cuda") * 0.9375 + 0.0625
            sign = torch.randint(0, 2, (count,), generator=gen, device="cuda") * 2 - 1
            v = (mag * sign).to(torch.float64 if dtype == "f64" else torch.float32)
            if t.dtype == torch.uint8:  # fp8 without torch support: E5M2 1.0
                t.fill_(0x3C)
            else:
                t.copy_(v.to(t.dtype))
        elif dtype == "bool":
            t.copy_(torch.randint(0, 2, (count,), generator=gen, device="cuda").bool())
        elif dtype in ("u8", "i4"):
            t.copy_(torch.randint(1, 16, (t.numel(),), generator=gen, device="cuda").to(t.dtype))
        else:
            v = torch.randint(1, 8, (count,), generator=gen, device="cuda")
            s = torch.randint(0, 2, (count,), generator=gen, device="cuda") * 2 - 1
            t.copy_((v * s).to(t.dtype))
        return t

    def arg(self, p, value):
        """A kernel argument: a tensor as a cupy view, a scalar in the C
        type the manifest says the kernel takes it as."""
        cp = self.cp
        if p["kind"] == "tensor":
            v = self.view.get(p["dtype"])
            return cp.from_dlpack(value.view(v) if v is not None else value)
        return {"double": cp.float64, "float": cp.float32,
                "long long": cp.int64, "int": cp.int32, "bool": cp.bool_,
                "int8_t": cp.int8, "uint8_t": cp.uint8}[p["ctype"]](value)

    def launch(self, kern, grid, block, args, smem, launch=None, env=None):
        """A kernel with tensor maps (TMA; docs/launch.md) takes them
        after its parameters, which CuPy cannot pass: the driver does."""
        if min(grid) <= 0:
            return
        if launch and launch.get("tensor_maps"):
            launch_manifest.cuda_launch(launch, env, kern.kernel.ptr, tuple(grid), block, smem,
                                        self.cp.cuda.get_current_stream().ptr, args)
            return
        kern(tuple(grid), block, tuple(args), shared_mem=smem)

    def sync(self):
        self.torch.cuda.synchronize()

    def time_launches(self, run, sets, warmup, repeat):
        torch = self.torch
        for i in range(warmup):
            run(sets[i % len(sets)])
        self.sync()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        times = []
        for i in range(repeat):
            a = sets[i % len(sets)]
            start.record()
            run(a)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return stats(times)

    def compare(self, got, want, dtype, tol):
        """run.c's measure: max |got - want| over finite pairs over the
        largest finite |want|; a NaN or infinity on one side fails."""
        torch = self.torch
        if dtype not in FLOATS or got.dtype == torch.uint8:
            bad = int((got.view(torch.uint8) != want.view(torch.uint8)).sum().item())
            return {"max_rel_err": 0.0 if bad == 0 else 1.0, "mismatches": bad,
                    "ok": bad == 0}
        g, w = got.double(), want.double()
        fin = torch.isfinite(g) & torch.isfinite(w)
        both_nan = torch.isnan(g) & torch.isnan(w)
        same_inf = (~torch.isfinite(g)) & (g == w)
        nan_mis = int((~fin & ~both_nan & ~same_inf).sum().item())
        zero = torch.zeros((), dtype=torch.float64, device=g.device)
        err = torch.where(fin, (g - w).abs(), zero).max().item() if g.numel() else 0.0
        ref = torch.where(fin, w.abs(), zero).max().item() if w.numel() else 0.0
        rel = err / ref if ref > 0 else err
        return {"max_rel_err": rel, "nan_mismatch": nan_mis,
                "ok": rel <= tol and nan_mis == 0}


def scalar_env(manifest_shape):
    return dict(manifest_shape)


def make_args(gpu, launch, env, roles, source):
    """Tensors for one launch: source(name, dtype, count, role) gives
    each; returns (tensors by name, args in signature order)."""
    tensors, args = {}, []
    for p in launch["params"]:
        if p["kind"] == "scalar":
            args.append(gpu.arg(p, env[p["name"]]))
            continue
        count = 1
        for e in extents(p, env):
            count *= e
        t = source(p["name"], p["dtype"], count, roles.get(p["name"], "out"))
        tensors[p["name"]] = t
        args.append(gpu.arg(p, t))
    return tensors, args


class Farm:
    """One prepared DIR on the GPU."""

    def __init__(self, gpu, d, anchor, out_path, deadline, only, dry):
        self.gpu, self.dir, self.anchor = gpu, d, anchor
        self.out_path, self.deadline, self.only, self.dry = out_path, deadline, only, dry
        mpath = os.path.join(d, "manifest.json")
        raw = open(mpath, "rb").read()
        self.m = json.loads(raw)
        if self.m.get("format") != PREPARED_FORMAT:
            raise SystemExit(f"{mpath}: not a prepared tuning directory "
                             f"(format {self.m.get('format')!r})")
        self.timings = {"format": TIMINGS_FORMAT,
                        "manifest_sha256": hashlib.sha256(raw).hexdigest(),
                        "kernel": self.m["kernel"], "configs": {},
                        "measure": dict(self.m["measure"])}
        self.results = self.timings["configs"]

    def save(self):
        self.timings["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_json(self.out_path, self.timings)

    def log(self, msg):
        print(f"[{self.m['kernel']}] {msg}", flush=True)

    def configs(self):
        cs = self.m["configs"]
        if self.only:
            cs = [c for c in cs if c["id"] in self.only or c.get("default")]
        # The default first: the comparison needs it even if time runs out.
        return sorted(cs, key=lambda c: (not c.get("default"), c["id"]))

    def run(self):
        m = self.m
        if self.dry:
            return self.dry_run()
        gpu = self.gpu
        name, comp = gpu.identity()
        self.timings.update({"device": name, "compilers": comp})
        self.log(f"{len(m['configs'])} configurations on {name}; "
                 f"tuning shape {m['shape']}, check shape {m['check_shape']}")
        tol = m["tol"]
        roles = m["roles"]
        kern = {}
        # 1 and 2: load and check each at the check shape.
        for c in self.configs():
            r = self.results.setdefault(c["id"], {})
            if time.time() > self.deadline:
                r.update(status="failed", reason="not run: the time budget ran out")
                continue
            try:
                k, how, secs, why = gpu.load(self.dir, c, m["march"])
                r.update(loaded=how, load_s=round(secs, 3))
                if why:
                    r["cubin_error"] = why
            except Exception as e:
                r.update(status="compile_error", reason="the kernel did not load or compile",
                         log=f"{type(e).__name__}: {e}"[:4000])
                self.log(f"{c['id']} {c['values']}: COMPILE ERROR {str(e)[:200]}")
                continue
            try:
                res = self.check(c, k, tol, roles)
            except Exception as e:
                res = {"ok": False, "error": f"{type(e).__name__}: {e}"[:400]}
            r["max_rel_err"] = res.get("max_rel_err", -1)
            if res["ok"]:
                kern[c["id"]] = k
                r["status"] = "pending"
            else:
                r.update(status="wrong" if "error" not in res else "failed",
                         reason=res.get("error") or f"check at {m['check_shape']}: {res['why']}")
                self.log(f"{c['id']} {c['values']}: WRONG, dropped: {r['reason']}")
        self.save()
        ok = [c for c in self.configs() if c["id"] in kern]
        self.log(f"{len(ok)} of {len(self.configs())} correct at the check shape")
        if not ok:
            return False
        # 3: the tuning shape.
        env = dict(m["shape"])
        gen = self.gpu.torch.Generator(device="cuda")
        gen.manual_seed(int(m.get("seed", 1)))
        launch0 = ok[0]["launch"]
        env0 = dict(launch0["tunables"], **env)
        sizes0 = {p["name"]: extents(p, env0) for p in tensor_params(launch0)}
        set_bytes = sum(nbytes(p["dtype"], math.prod(sizes0[p["name"]]))
                        for p in tensor_params(launch0))
        free, _ = gpu.cp.cuda.runtime.memGetInfo()
        nsets = min(16, m["measure"].get("rotate_bytes", 256 << 20) // max(set_bytes, 1) + 1,
                    max(1, int(free * 0.6) // max(set_bytes, 1) - 2))
        nsets = max(1, nsets)
        self.timings["measure"]["input_sets"] = nsets
        self.log(f"{nsets} input sets of {set_bytes / 2**20:.0f} MiB")
        sets = []
        for _ in range(nsets):
            def src(n, dt, count, role, g=gen):
                t = (gpu.random(dt, count, g, m.get("value_ranges", {}).get(n))
                     if role != "out" else gpu.empty(dt, count))
                if role == "out":
                    gpu.poison(t, dt)
                return t
            sets.append(make_args(gpu, launch0, env0, roles, src)[0])
        pristine = {n: t.clone() for n, t in sets[0].items() if roles.get(n) == "inout"}
        baseline = None
        timed = []
        for c in ok:
            r = self.results[c["id"]]
            if time.time() > self.deadline:
                r.update(status="failed", reason="not timed: the time budget ran out")
                continue
            try:
                L = c["launch"]
                grid = [evaluate(g, dict(L["tunables"], **env)) for g in L["grid"]]
                block = (L["threads"], 1, 1)
                smem = L["smem_bytes"]
                k = kern[c["id"]]
                if smem > 48 * 1024:
                    k.max_dynamic_shared_size_bytes = smem
                envc = dict(L["tunables"], **env)
                if any(extents(p, envc) != sizes0[p["name"]] for p in tensor_params(L)):
                    raise ValueError("its tensor shapes differ from the baseline's "
                                     "(a tunable in a tensor extent): not timed here")
                argsets = []
                for s in sets:
                    _, a = make_args(gpu, L, envc, roles, lambda n, dt, count, role, s=s: s[n])
                    argsets.append(a)
                # Correct at this shape too: the same as the baseline.
                t0 = sets[0]
                for n, t in t0.items():
                    if roles.get(n) == "out":
                        gpu.poison(t, next(p["dtype"] for p in tensor_params(L) if p["name"] == n))
                    elif n in pristine:
                        t.copy_(pristine[n])
                gpu.launch(k, grid, block, argsets[0], smem, L, envc)
                gpu.sync()
                outs = {n: t.clone() for n, t in t0.items() if roles.get(n) in ("out", "inout")}
                if baseline is None:
                    baseline = (c["id"], outs)
                    self.timings["baseline"] = c["id"]
                else:
                    for n, t in outs.items():
                        dt = next(p["dtype"] for p in tensor_params(L) if p["name"] == n)
                        cmp = gpu.compare(t, baseline[1][n], dt, tol)
                        if not cmp["ok"]:
                            raise AssertionError(
                                f"{n} differs from {baseline[0]} at the tuning shape: "
                                f"rel err {cmp['max_rel_err']:.3g}, "
                                f"{cmp.get('nan_mismatch', cmp.get('mismatches', 0))} NaN/bad")
                del outs
                res = gpu.time_launches(lambda a: gpu.launch(k, grid, block, a, smem, L, envc),
                                        argsets, m["measure"]["warmup"], m["measure"]["repeat"])
                r.update(status="ok", timings_ms=[res["median_ms"]], input_sets=nsets, **res)
                self.flops_note(r, res["median_ms"])
                timed.append(c)
                c["_run"] = (k, grid, block, argsets, smem, L, envc)
                self.log(f"{c['id']} {c['values']}{' (default)' if c.get('default') else ''}: "
                         f"{res['median_ms']:.4f} ms{self.rate(r)}")
            except AssertionError as e:
                r.update(status="wrong", reason=str(e))
                self.log(f"{c['id']} {c['values']}: WRONG, dropped: {e}")
            except Exception as e:
                r.update(status="failed", reason=f"{type(e).__name__}: {e}"[:400])
                self.log(f"{c['id']} {c['values']}: FAILED: {r['reason']}")
            self.save()
        for r in self.results.values():
            if r.get("status") == "pending":
                r.update(status="failed", reason="checked but not timed")
        if not timed:
            self.save()
            return False
        # 4: the finalists again, alternating.
        timed.sort(key=lambda c: self.results[c["id"]]["median_ms"])
        fin = timed[:3]
        fin += [c for c in timed if c.get("default") and c not in fin]
        rounds = m["measure"].get("confirm_rounds", 2)
        for rnd in range(rounds if len(fin) > 1 else 0):
            if time.time() > self.deadline:
                break
            for j in range(len(fin)):
                c = fin[(j + rnd) % len(fin)]
                k, grid, block, argsets, smem, L, envc = c["_run"]
                res = gpu.time_launches(lambda a: gpu.launch(k, grid, block, a, smem, L, envc),
                                        argsets, m["measure"]["warmup"], m["measure"]["repeat"])
                self.results[c["id"]]["timings_ms"].append(res["median_ms"])
        for c in fin:
            r = self.results[c["id"]]
            r["final_ms"] = median(r["timings_ms"])
            r["finalist"] = True
        best = min(fin, key=lambda c: self.results[c["id"]]["final_ms"])
        self.timings["chosen"] = best["id"]
        for c in fin:
            self.log(f"  {c['id']} {c['values']}: {self.results[c['id']]['final_ms']:.4f} ms over "
                     f"{len(self.results[c['id']]['timings_ms'])} timings"
                     f"{' (default)' if c.get('default') else ''}{' CHOSEN' if c is best else ''}")
        # 5: the anchor on the same tensors.
        if self.anchor:
            try:
                self.timings["anchor"] = self.time_anchor(sets, env)
                a = self.timings["anchor"]
                self.log(f"anchor {a['name']}: {a['median_ms']:.4f} ms"
                         f"{' %.1f TFLOP/s' % a['tflops'] if 'tflops' in a else ''}")
            except Exception as e:
                self.timings["anchor"] = {"name": self.anchor,
                                          "error": f"{type(e).__name__}: {e}"[:400]}
                self.log(f"anchor failed: {e}")
        for c in self.m["configs"]:
            c.pop("_run", None)
        self.save()
        return True

    def check(self, c, k, tol, roles):
        """Step 2: one launch at the check shape against the reference."""
        gpu, m = self.gpu, self.m
        chk = c["check"]
        L = c["launch"]
        env = dict(L["tunables"], **chk["shape"])

        def src(n, dt, count, role):
            if n in chk["inputs"]:
                return gpu.from_file(os.path.join(self.dir, chk["inputs"][n]), dt, count)
            t = gpu.empty(dt, count)
            gpu.poison(t, dt)
            return t
        tensors, args = make_args(gpu, L, env, roles, src)
        smem = L["smem_bytes"]
        if smem > 48 * 1024:
            k.max_dynamic_shared_size_bytes = smem
        grid = [evaluate(g, env) for g in L["grid"]]
        gpu.launch(k, grid, (L["threads"], 1, 1), args, smem, L, env)
        gpu.sync()
        worst = {"ok": True, "max_rel_err": 0.0, "why": ""}
        for n, f in chk["expected"].items():
            p = next(p for p in tensor_params(L) if p["name"] == n)
            want = gpu.from_file(os.path.join(self.dir, f), p["dtype"], tensors[n].numel()
                                 if p["dtype"] != "i4" else math.prod(extents(p, env)))
            res = gpu.compare(tensors[n], want, p["dtype"], tol)
            worst["max_rel_err"] = max(worst["max_rel_err"], res["max_rel_err"])
            if not res["ok"]:
                worst["ok"] = False
                worst["why"] += (f"{n}: max rel err {res['max_rel_err']:.3g} (tol {tol}), "
                                 f"{res.get('nan_mismatch', res.get('mismatches', 0))} NaN/bad; ")
        return worst

    def flops(self):
        env = dict(self.m["default"], **self.m["shape"])
        if self.anchor == "matmul":
            return 2.0 * env["M"] * env["N"] * env["K"]
        if self.anchor == "sdpa":
            f = 4.0 * env["B"] * env["H"] * env["S"] ** 2 * env["HEAD_DIM"]
            return f / 2 if env.get("CAUSAL") else f
        return None

    def flops_note(self, r, ms):
        f = self.flops()
        if f:
            r["tflops"] = round(f / ms / 1e9, 2)

    def rate(self, r):
        return f", {r['tflops']} TFLOP/s" if "tflops" in r else ""

    def time_anchor(self, sets, env):
        gpu, torch = self.gpu, self.gpu.torch
        m = self.m
        meas = m["measure"]
        if self.anchor == "matmul":
            ops = []
            for s in sets:
                a = s["A"].view(env["M"], env["K"])
                b = s["B"].view(env["K"], env["N"])
                ops.append((a, b, torch.empty(env["M"], env["N"], dtype=a.dtype, device="cuda")))
            res = gpu.time_launches(lambda o: torch.matmul(o[0], o[1], out=o[2]), ops,
                                    meas["warmup"], meas["repeat"])
            name = "torch.matmul (cuBLAS)"
        elif self.anchor == "sdpa":
            causal = bool(dict(m["default"]).get("CAUSAL", 0))
            B, S, H = env["B"], env["S"], env["H"]
            D = m["default"]["HEAD_DIM"]
            ops = []
            for s in sets:
                q, k, v = (s[n].view(B, S, H, D).transpose(1, 2).contiguous() for n in "QKV")
                ops.append((q, k, v))
            f = torch.nn.functional.scaled_dot_product_attention
            res = gpu.time_launches(lambda o: f(o[0], o[1], o[2], is_causal=causal), ops,
                                    meas["warmup"], meas["repeat"])
            name = "torch SDPA (its default backend)" + (", causal" if causal else "")
        else:
            raise ValueError(f"unknown anchor {self.anchor!r} (matmul or sdpa)")
        out = {"name": name, **res}
        fl = self.flops()
        if fl:
            out["tflops"] = round(fl / res["median_ms"] / 1e9, 2)
        return out

    def dry_run(self):
        """Everything but the GPU: the files, sizes and grids."""
        m = self.m
        self.timings.update({"device": "dry run", "compilers": {}, "dry_run": True})
        # No GPU: a persistent kernel's grid as on an H100 SXM or H200.
        DEVICE.update(launch_manifest.device_env(132))
        roles = m["roles"]
        for i, c in enumerate(self.configs()):
            r = self.results.setdefault(c["id"], {})
            assert os.path.exists(os.path.join(self.dir, c["source"])), c["source"]
            L = c["launch"]
            for shape in (c["check"]["shape"], m["shape"]):
                env = dict(L["tunables"], **shape)
                grid = [evaluate(g, env) for g in L["grid"]]
                assert all(g >= 0 for g in grid), grid
            env = dict(L["tunables"], **c["check"]["shape"])
            for p in tensor_params(L):
                count = math.prod(extents(p, env))
                for kind in ("inputs", "expected"):
                    f = c["check"][kind].get(p["name"])
                    if f:
                        size = os.path.getsize(os.path.join(self.dir, f))
                        assert size == nbytes(p["dtype"], count), (f, size)
                assert p["name"] in roles, p["name"]
            ms = 1.0 + (int(hashlib.sha256(c["id"].encode()).hexdigest(), 16) % 1000) / 1000
            r.update(status="ok", timings_ms=[ms, ms], median_ms=ms, min_ms=ms, mean_ms=ms,
                     runs=1, input_sets=1, max_rel_err=0.0, final_ms=ms, finalist=True)
        best = min(self.results, key=lambda i: self.results[i]["final_ms"])
        self.timings["chosen"] = best
        self.save()
        self.log(f"dry run: {len(self.results)} configurations look complete")
        return True


# --- Work units (tilec tune --unit's protocol, for GPU machines without tilec) ---

UNIT_RESULT_FORMAT = "tilec-tune-unit-result/1"
NOISE_RATIO = 1.5
MAX_TIMES = 16


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def where():
    """Where a unit runs, as tilec tune --unit says it."""
    import socket
    o = {"host": socket.gethostname(), "pid": os.getpid(),
         "slurm": {k: os.environ[k] for k in ("SLURM_ARRAY_JOB_ID",
                                              "SLURM_ARRAY_TASK_ID",
                                              "SLURM_JOB_ID")
                   if k in os.environ}}
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        o["visible_devices"] = vis
    return o


def result_sound(path, sha, unit):
    """A unit's result that the merge takes (what tune_unit.c checks)."""
    try:
        r = json.load(open(path))
        ok = (r["format"] == UNIT_RESULT_FORMAT and r["manifest_sha256"] == sha
              and r["unit"] == unit["id"] and isinstance(r["device"], str)
              and isinstance(r["compilers"], dict)
              and sorted(r["configs"]) == sorted(unit["configs"]))
        for c in r["configs"].values() if ok else ():
            if c["status"] == "ok":
                t = c["timings_ms"]
                ok = ok and 1 <= len(t) <= MAX_TIMES and all(
                    isinstance(x, (int, float)) and x > 0 for x in t)
            else:
                ok = ok and isinstance(c.get("reason"), str)
        return ok
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def timing_lock(d, device):
    """The lock a unit holds while it times on its GPU (tilec tune's
    timing_lock: one per host and visible GPU), so units sharing a GPU
    time one at a time; released when the file closes."""
    import fcntl
    import socket
    vis = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    name = re.sub(r"[^-.0-9A-Za-z]", "_", f".timing-{socket.gethostname()}-gpu{vis}-{device}")
    f = open(os.path.join(d, "results", name + ".lock"), "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


class UnitWorker:
    """Runs configurations of one unit on the GPU, one JSON line each."""

    def __init__(self, d, device, dry):
        self.dir, self.device, self.dry = d, device, dry
        self.m = json.load(open(os.path.join(d, "manifest.json")))
        self.gpu = None if dry else Gpu(device)
        self.sets = {}

    def emit(self, o):
        sys.stdout.write(json.dumps(o) + "\n")
        sys.stdout.flush()

    def run(self, ids):
        name, comp = ("dry run", {}) if self.dry else self.gpu.identity()
        self.emit({"device": name, "compilers": comp})
        cfgs = {c["id"]: c for c in self.m["configs"]}
        faults = dict(f.split(":", 1) for f in
                      os.environ.get("TILEC_TUNE_TEST_FAULT", "").split(",") if ":" in f)
        for cid in ids:
            self.emit({"start": cid})
            # The tests' faults, as tilec tune --unit takes them.
            if faults.get(cid) == "crash":
                import signal
                os.kill(os.getpid(), signal.SIGSEGV)
            while faults.get(cid) == "hang":
                time.sleep(1000)
            try:
                r = self.made_up(cfgs[cid]) if self.dry else self.one(cfgs[cid])
            except Exception as e:
                r = {"status": "failed", "reason": f"{type(e).__name__}: {e}"[:400]}
                self.emit({"id": cid, "result": r})
                # A fault may leave the CUDA context unusable: the unit
                # goes on with the rest in a fresh worker.
                os._exit(3)
            self.emit({"id": cid, "result": r})

    def input_sets(self, L, env):
        """Random input sets at the tuning shape, rotated (as the search
        here): kept per tensor sizes."""
        gpu, m = self.gpu, self.m
        sizes = tuple((p["name"], tuple(extents(p, env))) for p in tensor_params(L))
        if sizes in self.sets:
            return self.sets[sizes]
        self.sets.clear()  # one shape at a time on the device
        set_bytes = sum(nbytes(p["dtype"], math.prod(extents(p, env)))
                        for p in tensor_params(L))
        free, _ = gpu.cp.cuda.runtime.memGetInfo()
        nsets = min(16, m["measure"].get("rotate_bytes", 256 << 20) // max(set_bytes, 1) + 1,
                    max(1, int(free * 0.5) // max(set_bytes, 1) - 2))
        nsets = max(1, nsets)
        gen = gpu.torch.Generator(device="cuda")
        gen.manual_seed(int(m.get("seed", 1)))
        roles = m["roles"]
        sets = []
        for _ in range(nsets):
            def src(n, dt, count, role, g=gen):
                t = (gpu.random(dt, count, g, m.get("value_ranges", {}).get(n))
                     if role != "out" else gpu.empty(dt, count))
                if role == "out":
                    gpu.poison(t, dt)
                return t
            sets.append(make_args(gpu, L, env, roles, src)[0])
        self.sets[sizes] = (sets, set_bytes)
        return sets, set_bytes

    def made_up(self, c):
        """--dry-run: the configuration's files checked, its times made
        up (the plumbing, tested without a GPU)."""
        assert os.path.exists(os.path.join(self.dir, c["source"])), c["source"]
        for kind in ("inputs", "expected"):
            for f in c["check"][kind].values():
                assert os.path.exists(os.path.join(self.dir, f)), f
        ms = 1.0 + (int(hashlib.sha256(c["id"].encode()).hexdigest(), 16) % 1000) / 1000
        n = 1 + int(self.m["measure"].get("confirm_rounds", 2))
        return {"status": "ok", "max_rel_err": 0.0, "timings_ms": [ms] * n,
                "median_ms": ms, "min_ms": ms, "mean_ms": ms, "runs": 1,
                "input_sets": 1, "noisy_timings": 0, "gbps": 0.0, "gflops": 0.0,
                "timing_s": 0.0, "dry_run": True}

    def one(self, c):
        """Check at the check shape against the unit's reference data,
        then 1 + confirm_rounds timings at the tuning shape."""
        gpu, m = self.gpu, self.m
        try:
            k, _, _, _ = gpu.load(self.dir, c, m["march"])
        except Exception as e:
            return {"status": "compile_error", "reason": "the kernel did not load or compile",
                    "log": f"{type(e).__name__}: {e}"[:4000]}
        L = c["launch"]
        env = dict(L["tunables"], **m["shape"])
        grid = [evaluate(g, env) for g in L["grid"]]
        block = (L["threads"], 1, 1)
        smem = L["smem_bytes"]
        meas = m["measure"]
        rounds = min(MAX_TIMES, 1 + int(meas.get("confirm_rounds", 2)))
        # The GPU from the check on: loading overlaps other units' work,
        # checks and timings do not.
        with timing_lock(self.dir, self.device):
            res = Farm.check(self, c, k, m["tol"], m["roles"])
            if not res["ok"]:
                return {"status": "wrong", "max_rel_err": res["max_rel_err"],
                        "reason": f"check at {c['check']['shape']}: {res['why']}".strip()}
            t0 = time.time()
            sets, set_bytes = self.input_sets(L, env)
            argsets = [make_args(gpu, L, env, m["roles"],
                                 lambda n, dt, count, role, s=s: s[n])[1] for s in sets]
            timings = []
            for _ in range(rounds):
                timings.append(gpu.time_launches(
                    lambda a: gpu.launch(k, grid, block, a, smem, L, env), argsets,
                    meas["warmup"], meas["repeat"]))
            gpu.sync()
            timing_s = time.time() - t0
        first = timings[0]
        return {"status": "ok", "max_rel_err": res["max_rel_err"],
                "timings_ms": [t["median_ms"] for t in timings],
                "median_ms": first["median_ms"], "min_ms": first["min_ms"],
                "mean_ms": first["mean_ms"], "runs": first["runs"],
                "input_sets": len(sets),
                "noisy_timings": sum(t["median_ms"] > NOISE_RATIO * t["min_ms"]
                                     for t in timings),
                "gbps": set_bytes / (first["median_ms"] * 1e-3) / 1e9,
                "gflops": 0.0, "timing_s": timing_s}


def unit_index_list(spec, n):
    if spec == "all":
        return list(range(n))
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or int(m.group(2) or m.group(1)) >= n or \
                int(m.group(2) or m.group(1)) < int(m.group(1)):
            raise SystemExit(f"--index {spec}: expected N, N-M, lists of them, "
                             f"or all (units 0 .. {n - 1})")
        out += range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1)
    return sorted(set(out))


def run_unit(d, m, sha, i, a):
    """One unit, as tilec tune --unit runs it: idempotent, each
    configuration under the manifest's timeout, its result written
    whole."""
    import select
    import subprocess
    unit = m["units"][i]
    uid = unit["id"]
    result = os.path.join(d, unit["result"])
    marker = os.path.join(d, "results", uid + ".started")
    if os.path.exists(result):
        if result_sound(result, sha, unit):
            print(f"tune_farm: unit {uid} is done already ({result})", flush=True)
            return 0
        print(f"tune_farm: unit {uid}: the result there is not usable; running "
              f"the unit again", flush=True)
    os.makedirs(os.path.join(d, "results"), exist_ok=True)
    started = time.time()
    write_json(marker, dict(unit=uid, started=now_iso(), **where()))
    timeout = float(m["unit"]["config_timeout_s"])
    todo = list(unit["configs"])
    configs, device, comp = {}, None, {}
    print(f"tune_farm: unit {uid} ({i + 1} of {len(m['units'])}): {len(todo)} "
          f"configurations, {timeout:g} s each at most", flush=True)
    while todo:
        # A worker for what is left; one that dies or hangs costs only
        # the configuration it was on.
        w = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--unit-worker", d,
                              "--only", ",".join(todo), "--device", str(a.device)]
                             + (["--dry-run"] if a.dry_run else []),
                             stdout=subprocess.PIPE, bufsize=0)
        fd = w.stdout.fileno()
        current, deadline, buf, why = None, time.time() + timeout + 120, b"", None
        progressed = False
        while why is None:
            # The next line, read unbuffered so select sees what is left.
            while b"\n" not in buf and why is None:
                left = deadline - time.time()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    w.kill()
                    why = (f"timed out after {timeout:g} s (the unit's timeout per "
                           f"configuration); killed")
                    break
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    w.wait()
                    rc = w.returncode
                    why = (f"crashed: signal {-rc}" if rc < 0 else
                           f"its process exited with status {rc} without a result")
                buf += chunk
            if why is not None:
                break
            line, buf = buf.split(b"\n", 1)
            o = json.loads(line)
            if "device" in o:
                device, comp = o["device"], o["compilers"]
            elif "start" in o:
                current, deadline = o["start"], time.time() + timeout
                progressed = True
            elif "id" in o:
                configs[o["id"]] = o["result"]
                todo.remove(o["id"])
                r = o["result"]
                print(f"[{len(configs)}/{len(unit['configs'])}] {o['id']}: {r['status']}"
                      + (f", {r['median_ms']:.4g} ms" if r["status"] == "ok"
                         else f": {r.get('reason', '')[:200]}"), flush=True)
                current = None
        w.wait()
        w.stdout.close()
        # A worker that stopped before starting any configuration (it
        # could not start at all) costs the next one, so the unit ends.
        if current is None and not progressed and todo:
            current = todo[0]
        if current is not None:
            configs[current] = {"status": "failed", "reason": why}
            todo.remove(current)
            print(f"[{len(configs)}/{len(unit['configs'])}] {current}: failed: {why}",
                  flush=True)
    finished = time.time()
    doc = {"format": UNIT_RESULT_FORMAT, "manifest_sha256": sha, "unit": uid,
           "device": device or "unknown", "compilers": comp, "timer": "device events",
           "finished": now_iso(), "tilec_version": "tune_farm.py",
           "started_unix_ms": int(started * 1e3), "finished_unix_ms": int(finished * 1e3),
           "elapsed_s": finished - started,
           "timing_s": sum(c.get("timing_s", 0) for c in configs.values()),
           "configs": configs, **where()}
    write_json(result, doc)
    print(f"tune_farm: unit {uid}: {result}", flush=True)
    return 0


def unit_main(a):
    """--unit DIR: one unit (--index N, or the scheduler's), or several
    (--index LIST|all) --jobs at a time, each in a process of its own."""
    import subprocess
    d = os.path.abspath(a.unit)
    raw = open(os.path.join(d, "manifest.json"), "rb").read()
    m = json.loads(raw)
    if m.get("format") != PREPARED_FORMAT or not m.get("units"):
        raise SystemExit(f"{d}: no work units (prepare with tilec tune --prepare)")
    sha = hashlib.sha256(raw).hexdigest()
    spec = (a.index or os.environ.get("SLURM_ARRAY_TASK_ID")
            or os.environ.get("JOB_COMPLETION_INDEX"))
    if spec is None:
        raise SystemExit("--unit: which unit? give --index N, a list, or all")
    want = unit_index_list(spec, len(m["units"]))
    if len(want) == 1:
        return run_unit(d, m, sha, want[0], a)
    t0 = time.time()
    print(f"tune_farm: {len(want)} units of {d}, {a.jobs} at a time", flush=True)
    running, status = [], 0
    for i in want + [None]:
        while running and (len(running) >= a.jobs or i is None):
            running[0].wait()
            status |= running.pop(0).returncode != 0
        if i is not None:
            running.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--unit", d,
                 "--index", str(i), "--device", str(a.device)]
                + (["--dry-run"] if a.dry_run else [])))
    print(f"tune_farm: {len(want)} units in {time.time() - t0:.1f} s", flush=True)
    return 1 if status else 0


def run_one(a, spec, deadline, only):
    """One DIR in this process; True when it has a chosen configuration."""
    d, _, anchor = spec.partition(":")
    d = d.rstrip("/")
    name = os.path.basename(os.path.abspath(d))
    out = (os.path.join(a.out_dir, f"{name}.timings.json") if a.out_dir
           else os.path.join(d, "timings.json"))
    gpu = None if a.dry_run else Gpu(a.device)
    try:
        farm = Farm(gpu, d, anchor or None, out, deadline, only, a.dry_run)
        ok = farm.run()
        farm.save()
    except SystemExit:
        raise
    except Exception as e:
        print(f"[{d}] stopped: {type(e).__name__}: {e}", flush=True)
        ok = False
    print(f"[{d}] timings: {out}", flush=True)
    return bool(ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", help="DIR[:ANCHOR], ANCHOR matmul or sdpa")
    ap.add_argument("--unit", metavar="DIR",
                    help="run work units of DIR (tilec tune --unit's protocol)")
    ap.add_argument("--index", help="with --unit: N, N-M, lists of them, or all")
    ap.add_argument("--jobs", type=int, default=4,
                    help="with --unit and several: units at once (default 4)")
    ap.add_argument("--unit-worker", help=argparse.SUPPRESS)
    ap.add_argument("--out-dir", help="write NAME.timings.json here, not DIR/timings.json")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--budget", type=float, default=480,
                    help="seconds for all DIRs together (default 480)")
    ap.add_argument("--only", help="configuration ids to run (and the default)")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.unit_worker:
        UnitWorker(os.path.abspath(a.unit_worker), a.device, a.dry_run).run(
            a.only.split(","))
        return
    if a.unit:
        sys.exit(unit_main(a))
    if not a.dirs:
        ap.error("give DIR[:ANCHOR] ..., or --unit DIR")
    start = time.time()
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    if a.deadline or len(a.dirs) == 1:
        good = 0
        for n, spec in enumerate(a.dirs):
            # Each DIR gets an equal share of what is left.
            left = a.budget - (time.time() - start)
            deadline = a.deadline or time.time() + left / (len(a.dirs) - n)
            good += run_one(a, spec, deadline, only)
        sys.exit(0 if good == len(a.dirs) else 1)
    # Several DIRs: each in its own process, so a kernel that faults (and
    # leaves its CUDA context unusable) costs only its own DIR.
    import subprocess
    good = 0
    for n, spec in enumerate(a.dirs):
        left = a.budget - (time.time() - start)
        share = left / (len(a.dirs) - n)
        args = [sys.executable, os.path.abspath(__file__), spec,
                "--device", str(a.device), "--budget", str(share),
                "--deadline", str(time.time() + share)]
        if a.out_dir:
            args += ["--out-dir", a.out_dir]
        if a.only:
            args += ["--only", a.only]
        if a.dry_run:
            args.append("--dry-run")
        try:
            # The deadline stops new work; the margin lets the last
            # timing and the anchor finish.
            good += subprocess.run(args, timeout=share + 120).returncode == 0
        except subprocess.TimeoutExpired:
            print(f"[{spec}] killed after {share + 120:.0f} s", flush=True)
    sys.exit(0 if good == len(a.dirs) else 1)


if __name__ == "__main__":
    main()
