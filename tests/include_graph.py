#!/usr/bin/env python3
"""include_graph.py - the translator's include graph, checked.

usage: include_graph.py SRCROOT

Reads every `#include "..."` of src/, emitters/ and runtime/ (resolved as
the build resolves them: next to the file, then src/, emitters/, runtime/
and src/include/; generated headers such as tilec_version.h are not in
the tree and are left out) and fails, naming the files, when

  - the graph between files has a cycle (a header that reaches itself
    through others);
  - a file of emitters/ includes a header of src/passes/ (the passes'
    declarations are apart so that no printer reaches them), or calls a
    pass function: one a header of src/passes/ declares, or any function
    a file of src/passes/ defines for other files (`static` ones are its
    own), wherever it is declared.

Exit status 0 when all holds, 1 otherwise.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DECL = re.compile(r'^[A-Za-z_][\w \*]*?\b(tc_\w+)\s*\(', re.M)
DIRS = ('src', 'emitters', 'runtime')
SEARCH = ('src', 'emitters', 'runtime', 'src/include')


def strip_comments(text):
    return re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                  text, flags=re.S)


def main():
    root = sys.argv[1]
    files = []
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(dirpath, n),
                                                 root))
    files.sort()
    graph = {}
    for f in files:
        with open(os.path.join(root, f), encoding='utf-8') as fp:
            text = strip_comments(fp.read())
        edges = []
        for name in INCLUDE.findall(text):
            for base in [os.path.dirname(f)] + list(SEARCH):
                cand = os.path.normpath(os.path.join(base, name))
                if os.path.isfile(os.path.join(root, cand)):
                    edges.append(cand)
                    break
        graph[f] = edges
    problems = []

    # Cycles: a depth-first search that meets a file on its own path.
    state = {}
    path = []

    def visit(f):
        state[f] = 1
        path.append(f)
        for g in graph.get(f, []):
            if state.get(g) == 1:
                cycle = path[path.index(g):] + [g]
                problems.append('an include cycle: ' + ' -> '.join(cycle))
            elif g not in state:
                visit(g)
        path.pop()
        state[f] = 2

    for f in files:
        if f not in state:
            visit(f)

    # Emitters and the passes' headers.
    pass_headers = [f for f in files
                    if f.startswith('src/passes/') and f.endswith('.h')]
    pass_funcs = set()
    for h in pass_headers:
        with open(os.path.join(root, h), encoding='utf-8') as fp:
            pass_funcs.update(DECL.findall(strip_comments(fp.read())))
    for f in files:
        if not (f.startswith('src/passes/') and f.endswith('.c')):
            continue
        with open(os.path.join(root, f), encoding='utf-8') as fp:
            lines = strip_comments(fp.read()).split('\n')
        for i, line in enumerate(lines):
            m = re.match(r'(tc_\w+)\(', line)
            if m and i > 0 and not lines[i - 1].startswith('static'):
                pass_funcs.add(m.group(1))
    for f in files:
        if not f.startswith('emitters/'):
            continue
        for g in graph[f]:
            if g in pass_headers:
                problems.append('%s includes %s, a pass header' % (f, g))
        with open(os.path.join(root, f), encoding='utf-8') as fp:
            text = strip_comments(fp.read())
        for fn in sorted(pass_funcs):
            if re.search(r'\b%s\s*\(' % fn, text):
                problems.append('%s calls %s, a pass function' % (f, fn))

    for p in problems:
        print('include_graph: ' + p)
    nedges = sum(len(e) for e in graph.values())
    print('include_graph: %d files, %d includes, %d pass functions; %s'
          % (len(files), nedges, len(pass_funcs),
             'ok' if not problems else '%d problems' % len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
