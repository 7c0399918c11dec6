#!/usr/bin/env python3
"""line_width.py - generated code within 100 columns, on every backend.

usage: line_width.py TILEC SRCROOT

Translates every sample (and flash_attention's causal variant), every
program of tests/kernels/ and one file of the generator's fast_gemm
kernels (tests/gen/tilegen.py, the gen-fast seed) for openmp (avx512,
avx2, generic), cuda (sm_80, sm_90a) and hip (gfx90a), and the
warp-specialized gemm (sm_90a), as `tilec FILE -t T --arch A` prints
it, and fails naming each line longer than 100 columns (a tab counts to
the next multiple of 8), code and comments alike.
"""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                'gen'))
import tilegen  # noqa: E402

WIDTH = 100
TARGETS = [('openmp', 'avx512'), ('openmp', 'avx2'), ('openmp', 'generic'),
           ('cuda', 'sm_80'), ('cuda', 'sm_90a'), ('hip', 'gfx90a')]


def columns(line):
    col = 0
    for c in line:
        col = (col // 8 + 1) * 8 if c == '\t' else col + 1
    return col


def main():
    tilec, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.chdir(root)
    every = [(p, [], TARGETS) for p in sorted(glob.glob('samples/*.c')) +
             sorted(glob.glob('tests/kernels/*.c'))]
    every.append(('samples/flash_attention.c', ['-D', 'CAUSAL=1'], TARGETS))
    every.append(('samples/gemm.c', ['-D', 'STAGES=3', '--warp-specialize'],
                  [('cuda', 'sm_90a')]))
    long_lines, outputs = [], 0
    with tempfile.TemporaryDirectory() as work:
        features = tilegen.feature_set('fast_gemm_all')
        gen = tilegen.write(1, tilegen.generate(1, 8, features), features,
                            work)[0]
        every.append((gen, [], TARGETS))
        for path, extra, targets in every:
            for target, arch in targets:
                cmd = [tilec, path, '-t', target, '--arch', arch] + extra
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    print('line_width: %s failed:\n%s' % (' '.join(cmd[1:]),
                                                          r.stderr))
                    return 1
                outputs += 1
                for n, line in enumerate(r.stdout.split('\n'), 1):
                    if columns(line) <= WIDTH:
                        continue
                    long_lines.append('%s %s %s %s:%d: %d columns: %s' % (
                        path if path != gen else 'fast_gemm ' + gen,
                        target, arch, ' '.join(extra), n, columns(line),
                        line.strip()[:60]))
    for l in long_lines:
        print('line_width: ' + l)
    print('line_width: %d outputs, %d lines over %d columns'
          % (outputs, len(long_lines), WIDTH))
    return 1 if long_lines else 0


if __name__ == '__main__':
    sys.exit(main())
