#!/usr/bin/env python3
"""reduce.py - shrink a failing generated kernel to a small one.

usage: reduce.py TILEC SRCROOT SEED KERNEL BACKEND [--features F] [--out FILE]

Regenerates kernel KERNEL (k3, ...) of SEED with the same features, checks
that it fails on BACKEND (oracle, openmp, hipemu, cuda-sm_80, cuda-sm_90a,
hip, check), then works over the generator's own statement tree, so every
candidate is still a valid program with a known meaning:

  - a statement is dropped; the buffers it wrote are filled with a
    constant instead (tile_fill), so nothing reads an undefined buffer;
  - a loop, if or sequence is replaced by its body (or its else branch);
  - tensors, buffers and parameters nothing mentions any more are removed.

A candidate is kept when it fails the same way (the same exit status and,
for a mismatch, the same kind of failing output; for an error, the same
first diagnostic).  It repeats until no removal keeps the failure, then
writes the tile program to FILE (default reduced_SEED_KERNEL.c) with its
oracle and the command that shows the failure.
"""
import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tilegen  # noqa: E402
import fuzz  # noqa: E402


def fill_stmt(b):
    v = "1" if tilegen.is_int(b.dtype) else "1.0f"
    return tilegen.simple(["tile_fill(%s, %s);" % (b.name, v)],
                          ["%s" % tilegen.Gen.c_loop(None, b, "%s%%s = %s;" % (
                              b.name, tilegen.cv(b.dtype, "1")))], "fill", [b])


def all_lists(body):
    """Every statement list of the tree (the body, children, else
    branches), for in-place edits."""
    out = [body]
    for st in body:
        if st.kids:
            out += all_lists(st.kids)
        if getattr(st, "kids_else", None):
            out += all_lists(st.kids_else)
    return out


def candidates(k):
    """Edits of kernel k, largest first: (list, index, replacement)."""
    edits = []
    for lst in all_lists(k.body):
        for i, st in enumerate(lst):
            edits.append((lst, i, []))
            repl = [fill_stmt(b) for b in st.defines]
            edits.append((lst, i, repl))
            if st.kids:
                edits.append((lst, i, list(st.kids)))
            if getattr(st, "kids_else", None):
                edits.append((lst, i, list(st.kids_else)))
    return edits


def prune(k):
    """Drop tensors and parameters the body no longer mentions."""
    text = "\n".join(t for _, t in sum((tilegen.stmt_lines(s, "tile", 0)
                                        for s in k.body), []))
    text += "\n".join(k.head)
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    k.tensors = [t for t in k.tensors if t.name in names]
    for t in k.tensors:
        names.update(t.dims)
    k.params = [p for p in k.params if p in names]


class Reducer:
    def __init__(self, a):
        self.a = a
        self.tilec = os.path.abspath(a.tilec)
        self.root = os.path.abspath(a.srcroot)
        self.features = tilegen.feature_set(a.features)
        self.work = tempfile.mkdtemp(prefix="tilec-reduce-")
        self.tests = 0

    def signature(self, k):
        """How kernel k fails on the backend (None: it passes)."""
        self.tests += 1
        d = os.path.join(self.work, "t%d" % self.tests)
        os.makedirs(d)
        tile, c, meta = tilegen.render(self.a.seed, [k], self.features)
        open(os.path.join(d, "gen.c"), "w").write(tile)
        open(os.path.join(d, "oracle.c"), "w").write(c)
        ns = argparse.Namespace(tilec=self.tilec, srcroot=self.root,
                                features=self.a.features, backends=self.backend_set(),
                                kernels=1, log=None, work=d, jobs=1, keep=True, emu_timeout=60,
                                verbose=False)
        F = fuzz.Fuzz(ns)
        F.record = lambda *x: F.fails.append(x)
        F.seed_dir = d
        F.run_dir(self.a.seed, d, meta)
        sig = []
        for seed, kern, backend, what, detail in F.fails:
            if not backend.startswith(self.a.backend):
                continue
            m = re.search(r"error: [^\n]*", detail)
            kinds = sorted(set(re.findall(r"(unwritten|worst|NaN|nan)", detail)))
            sig.append((backend, what, m.group(0)[:80] if m and what != "mismatch"
                        else "", tuple(kinds)))
        shutil.rmtree(d, ignore_errors=True)
        return tuple(sorted(set(sig))) or None

    def backend_set(self):
        b = self.a.backend
        if b.startswith("cuda"):
            return "cuda"
        return b

    def run(self):
        k = tilegen.generate_one(self.a.seed, int(self.a.kernel[1:]),
                                 self.features)
        want = self.signature(k)
        if not want:
            print("reduce: kernel %s of seed %d does not fail on %s" % (
                self.a.kernel, self.a.seed, self.a.backend))
            return 1
        print("failure: %s" % (want,), flush=True)
        changed = True
        start = 0
        while changed:
            changed = False
            edits = candidates(k)
            # after a kept edit, go on from where it was (not from the top:
            # the edits before it failed already)
            order = list(range(start, len(edits))) + list(range(start))
            for n in order:
                lst, i, repl = edits[n]
                trial = copy.deepcopy(k)
                # find the same list in the copy: by path
                path = self.path_of(k.body, lst)
                tl = self.follow(trial.body, path)
                tl[i:i + 1] = [copy.deepcopy(x) for x in repl]
                # deep copies of repl reference buffers of k: rebind by name
                self.rebind(trial)
                prune(trial)
                if not trial.params or not trial.tensors:
                    continue
                text = self.text(trial)
                if not repl and any(re.search(r"\b%s\b" % b.name, text)
                                    for b in lst[i].defines):
                    continue       # it wrote what is still read
                if len(text) >= len(self.text(k)):
                    continue       # no smaller (a fill for a fill)
                if self.signature(trial) == want:
                    k = trial
                    changed = True
                    start = n
                    print("  kept: %d statements" % self.count(k.body), flush=True)
                    break
        out = self.a.out or "reduced_%d_%s.c" % (self.a.seed, self.a.kernel)
        tile, c, meta = tilegen.render(self.a.seed, [k], self.features)
        cmd = "tilec run %s --kernel %s --shape %s%s" % (
            os.path.basename(out), k.name, meta[0]["shape"],
            " --tol 0" if meta[0]["exact"] else
            " --tol %g" % meta[0]["tol"] if meta[0].get("tol") else "")
        with open(out, "w") as f:
            f.write("/* Reduced from seed %d kernel %s (%s fails: %s).\n * %s\n */\n"
                    % (self.a.seed, self.a.kernel, self.a.backend, want, cmd))
            f.write(tile)
        with open(os.path.splitext(out)[0] + ".oracle.c", "w") as f:
            f.write(c)
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump({"seed": self.a.seed, "features": sorted(self.features),
                       "kernels": meta, "backend": self.a.backend}, f, indent=1)
        print("wrote %s (%d tests)" % (out, self.tests))
        shutil.rmtree(self.work, ignore_errors=True)
        return 0

    def text(self, k):
        return tilegen.render(self.a.seed, [k], self.features)[0]

    def count(self, body):
        n = 0
        for st in body:
            n += 1
            if st.kids:
                n += self.count(st.kids)
            if getattr(st, "kids_else", None):
                n += self.count(st.kids_else)
        return n

    def path_of(self, body, target, path=()):
        if body is target:
            return path
        for i, st in enumerate(body):
            if st.kids:
                p = self.path_of(st.kids, target, path + ((i, "k"),))
                if p is not None:
                    return p
            if getattr(st, "kids_else", None):
                p = self.path_of(st.kids_else, target, path + ((i, "e"),))
                if p is not None:
                    return p
        return None

    def follow(self, body, path):
        for i, w in path:
            body = body[i].kids if w == "k" else body[i].kids_else
        return body

    def rebind(self, k):
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tilec")
    ap.add_argument("srcroot")
    ap.add_argument("seed", type=int)
    ap.add_argument("kernel")
    ap.add_argument("backend")
    ap.add_argument("--features", default="")
    ap.add_argument("--out", default=None)
    return Reducer(ap.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
