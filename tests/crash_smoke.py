#!/usr/bin/env python3
"""crash_smoke.py - tilec must never crash, whatever it is fed.

usage: crash_smoke.py TILEC SRCROOT [--seed N] [--runs-per-sample N]

Feeds tilec truncated prefixes of every sample, samples with random bytes
changed, and files of random bytes and random C tokens, alternating
--emit=ir and source output; then the same of the IR texts of
tests/golden/ and tests/ir/ as `tilec --from-ir`, alternating the openmp
passes and source and the cuda sm_90a ones.  Passes when every run exits with status 0 or
1: no signal, no usage error, no hang.  The inputs are reproducible from
the seed (TILEC_SMOKE_SEED overrides the default); failing inputs are kept
under crash-smoke-failures/ in the working directory, with the command
that failed.  Exit status: 0 pass, 1 fail.
"""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile

TOKENS = [
    'tile_copy', 'tile_gemm', 'tile_parallel', 'tile_pipelined', 'tile_fill',
    'tile_reduce_sum', 'tile_dims', 'tile_grid_x', 'tile_threads',
    'tile_shared', 'tile_fragment', 'tile_local', 'TILE_KERNEL', 'TILE_PARAM',
    'f16', 'f32', 'int', 'float', 'const', 'for', 'if', 'else', 'return',
    '(', ')', '[', ']', '{', '}', ';', ',', '&', '*', '+', '-', '/', '%',
    '=', '==', '<', '?', ':', '!', '0', '1', '128', '-1', '1e30', '0.5f',
    'x', 'A', 'M', 'i', 'INFINITY', '#include <tilec.h>\n', '\n', '\t',
    '"', "'", '/*', '*/', '//', '#define', '\\',
]


def mutants(rng, text, n):
    """n copies of text with 1-4 bytes replaced, inserted or deleted."""
    out = []
    for _ in range(n):
        b = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            if not b:
                break
            pos = rng.randrange(len(b))
            op = rng.random()
            byte = rng.choice([rng.randrange(256), ord(rng.choice('(){}[];,&*0123456789=-+<>!?:"\'\\/#\n'))])
            if op < 0.6:
                b[pos] = byte
            elif op < 0.8:
                b.insert(pos, byte)
            else:
                del b[pos]
        out.append(bytes(b))
    return out


def prefixes(text, n):
    """n prefixes of text at evenly spaced lengths (0 included)."""
    lengths = sorted({len(text) * i // n for i in range(n)})
    return [text[:k] for k in lengths]


def random_files(rng, n):
    out = []
    for i in range(n):
        if i % 2:
            out.append(bytes(rng.randrange(256)
                             for _ in range(rng.randint(0, 2000))))
        else:
            words = [rng.choice(TOKENS) for _ in range(rng.randint(1, 300))]
            out.append(('#include <tilec.h>\n' + ' '.join(words)).encode())
    return out


FROM_IR = {
    'from-ir-openmp': ['-t', 'openmp', '--arch', 'avx512',
                       '--passes=frame,cpu_gemm,prefetch,bounds,fuse,edge'],
    'from-ir-cuda': ['-t', 'cuda', '--arch', 'sm_90a',
                     '--passes=barrier,expand_pipeline,bounds'],
}


def run_one(tilec, workdir, idx, data, mode):
    ext = '.ir' if mode in FROM_IR else '.c'
    path = os.path.join(workdir, 'input%04d%s' % (idx, ext))
    with open(path, 'wb') as f:
        f.write(data)
    if mode in FROM_IR:
        cmd = [tilec, '--from-ir', path, '--verify'] + FROM_IR[mode]
    else:
        cmd = [tilec, path] + (['--emit=ir'] if mode == 'ir' else []) + \
            ['--verify']
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=30)
        status = p.returncode
        err = p.stderr.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        status, err = 'timeout', ''
    return idx, data, cmd, status, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('tilec')
    ap.add_argument('srcroot')
    ap.add_argument('--seed', type=int,
                    default=int(os.environ.get('TILEC_SMOKE_SEED', '20261129')))
    ap.add_argument('--runs-per-sample', type=int, default=32)
    args = ap.parse_args()
    tilec = os.path.abspath(args.tilec)
    rng = random.Random(args.seed)

    inputs = []
    sample_dir = os.path.join(args.srcroot, 'samples')
    for name in sorted(os.listdir(sample_dir)):
        if not name.endswith('.c'):
            continue
        with open(os.path.join(sample_dir, name), 'rb') as f:
            text = f.read()
        half = args.runs_per_sample // 2
        inputs += [(name + ' prefix', d) for d in prefixes(text, half)]
        inputs += [(name + ' mutant', d) for d in mutants(rng, text, half)]
    inputs += [('random', d) for d in random_files(rng, args.runs_per_sample)]
    modes = ['ir' if i % 2 else 'source' for i in range(len(inputs))]
    for sub in ('tests/golden', 'tests/ir'):
        d = os.path.join(args.srcroot, sub)
        for name in sorted(os.listdir(d)):
            if not name.endswith('.ir'):
                continue
            with open(os.path.join(d, name), 'rb') as f:
                text = f.read()
            half = args.runs_per_sample // 4
            more = [(name + ' prefix', x) for x in prefixes(text, half)]
            more += [(name + ' mutant', x) for x in mutants(rng, text, half)]
            inputs += more
            modes += ['from-ir-cuda' if i % 2 else 'from-ir-openmp'
                      for i in range(len(more))]

    failures = []
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        jobs = [ex.submit(run_one, tilec, workdir, i, data, modes[i])
                for i, (_, data) in enumerate(inputs)]
        for job in jobs:
            idx, data, cmd, status, err = job.result()
            if status not in (0, 1):
                failures.append((idx, data, cmd, status, err))

    print('crash smoke: %d runs, seed %d, %d failures' %
          (len(inputs), args.seed, len(failures)))
    if not failures:
        return 0
    keep = os.path.abspath('crash-smoke-failures')
    os.makedirs(keep, exist_ok=True)
    for idx, data, cmd, status, err in failures:
        given = cmd[2] if '--from-ir' in cmd else cmd[1]
        path = os.path.join(keep, os.path.basename(given))
        with open(path, 'wb') as f:
            f.write(data)
        why = ('signal %d' % -status if isinstance(status, int) and status < 0
               else 'status %s' % status)
        print('FAIL (%s, %s): tilec %s' % (
            why, inputs[idx][0],
            ' '.join(path if c == given else c for c in cmd[1:])))
        for line in err.splitlines()[-5:]:
            print('    ' + line)
    return 1


if __name__ == '__main__':
    sys.exit(main())
