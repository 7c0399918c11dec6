#!/usr/bin/env python3
"""doctest.py - run the commands a Markdown page documents, and check what
they print against what the page shows.

usage: doctest.py TILEC SRCROOT PAGE.md

A code block (fenced, or indented by four spaces) whose lines start with
"$ " is a block of commands.  Every such block carries a marker, an HTML
comment on the line before it (a blank line may come between), so that a
reader of the page's source sees what is checked and what is not:

  <!-- doctest -->            run the commands; each must exit 0
  <!-- doctest: exit N -->    the same, but the last command must exit N
  <!-- doctest: needs T... --> run only where the tools T are on PATH
                              (nvcc, hipcc); without them the block is
                              reported as skipped, naming the tool
  <!-- doctest: setup: CMD --> run CMD first (its output unchecked): what
                              the block needs that the page makes elsewhere
                              (a tuning record that a benchmark would write)
  <!-- doctest: skip REASON --> not run; reported as skipped with REASON
                              (needs a GPU, installs packages, a benchmark)

Options combine with ';' (<!-- doctest: needs nvcc; exit 1 -->), except
skip, whose reason is the rest of the marker.  Two more
markers check blocks that are not commands:

  <!-- doctest: excerpt of FILE -->  the block is an excerpt of FILE (as an
                              earlier block of the page wrote it)
  <!-- doctest: excerpt of: CMD -->  ... an excerpt of what CMD prints
  <!-- example: NAME -->      the block is written to NAME (a source file
                              the commands after it build)

A "$ " line is a command (a line ending in a backslash continues on the
next); the lines after it, up to the next command, are the output it must
print (stdout and stderr together).  A command followed by no lines is
not checked for output.  In the shown output (and in an excerpt):

  - a line "..." stands for any number of lines;
  - "..." inside a line stands for any text;
  - blank lines and trailing spaces do not count; in an excerpt, neither
    does indentation nor the amount of white space.

Before comparing, both sides are normalised, and only like this:

  - times: a number followed by "ms" or "s" becomes "T ms" / "T s";
  - errors that depend on the CPU's vector unit: the number after
    "max rel err" becomes "E";
  - the scratch directory's path becomes ".".

Every block of a page runs in order in one scratch directory holding a
copy of the source tree (samples/, tests/, tools/, ...), with `tilec` and
`build/tilec` the TILEC under test and a private JIT cache, so that
commands can use what earlier commands wrote; each block is one bash
process (a `cd` lasts to the end of its block).  The report lists every
block by line: checked, or skipped and why.  Exit status 0 when every
block that ran passed (a page without commands passes: it has none
unmarked), 1 otherwise (an unmarked block of commands is a failure).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 600  # seconds for one block

MARKER = re.compile(r"^<!--\s*(doctest|example)\b\s*:?\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)\s*$")


class Block:
    """One code block of the page: where it starts, its lines, its marker."""

    def __init__(self, line, lines, marker):
        self.line = line      # 1-based line of its first content line
        self.lines = lines    # its content, indentation of the block removed
        self.marker = marker  # (kind, argument text) or None


def parse_blocks(text):
    """Every code block of the page, with the marker just before it."""
    src = text.split("\n")
    blocks = []
    marker = None
    i = 0
    in_para = False
    while i < len(src):
        line = src[i]
        m = MARKER.match(line.strip())
        if m and not line.startswith("    "):
            marker = (m.group(1), m.group(2))
            i += 1
            in_para = False
            continue
        f = FENCE.match(line.strip()) if not line.startswith("    ") else None
        if f:
            fence = f.group(1)
            indent = len(line) - len(line.lstrip())
            body = []
            j = i + 1
            while j < len(src) and not src[j].strip().startswith(fence):
                body.append(src[j][indent:] if src[j][:indent].strip() == ""
                            else src[j])
                j += 1
            blocks.append(Block(i + 2, body, marker))
            marker = None
            i = j + 1
            in_para = False
            continue
        if line.startswith("    ") and line.strip() and not in_para:
            body = []
            j = i
            while j < len(src) and (src[j].startswith("    ") or
                                    not src[j].strip()):
                body.append(src[j][4:])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            blocks.append(Block(i + 1, body, marker))
            marker = None
            i = j
            in_para = False
            continue
        if line.strip():
            # Text between a marker and its block detaches the marker;
            # an indented line right after text continues the text.
            marker = None
            in_para = not line.lstrip().startswith("#")
        else:
            in_para = False
        i += 1
    return blocks


def commands(lines):
    """The block's commands: [(command text, [shown output lines])]."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd + "\n" + lines[i]
            out.append([cmd, []])
        elif out:
            out[-1][1].append(line)
        i += 1
    return out


def options(arg):
    """A doctest marker's options: {name: value}."""
    opts = {}
    if arg.startswith("skip"):
        # The reason is free text, ';' included.
        return {"skip": arg[len("skip"):].strip()}
    for part in [p.strip() for p in arg.split(";") if p.strip()]:
        if part.startswith("setup:"):
            opts["setup"] = part[len("setup:"):].strip()
        elif part.startswith("excerpt of:"):
            opts["excerpt-cmd"] = part[len("excerpt of:"):].strip()
        elif part.startswith("excerpt of "):
            opts["excerpt-file"] = part[len("excerpt of "):].strip()
        else:
            word, _, rest = part.partition(" ")
            opts[word] = rest.strip()
    return opts


def normalise(text, scratch):
    text = text.replace(scratch + "/", "").replace(scratch, ".")
    text = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)? (ms|s)\b", r"T \3", text)
    text = re.sub(r"(max rel err) [-+0-9.e]+", r"\1 E", text)
    return text


def line_pattern(shown, squash):
    """A regex for one shown line: '...' inside it matches any text."""
    if squash:
        shown = " ".join(shown.split())
    parts = [re.escape(p) for p in shown.split("...")]
    return re.compile("^" + ".*".join(parts) + "$")


def matches(shown, actual, squash):
    """Whether the actual lines are what the shown lines show (see the
    module comment); blank lines count on neither side."""
    def prep(lines):
        out = []
        for line in lines:
            line = line.rstrip()
            if squash:
                line = " ".join(line.split())
            if line:
                out.append(line)
        return out
    shown, actual = prep(shown), prep(actual)
    memo = {}

    def walk(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(shown):
            r = j == len(actual) or squash
        elif shown[i] == "...":
            r = any(walk(i + 1, k) for k in range(j, len(actual) + 1))
        elif j < len(actual) and line_pattern(shown[i], squash).match(
                actual[j]):
            r = walk(i + 1, j + 1)
        else:
            r = False
        memo[key] = r
        return r

    if squash:
        # An excerpt may start anywhere.
        return any(walk(0, j) for j in range(len(actual) + 1))
    return walk(0, 0)


# What of the source tree the scratch copy holds: the tracked top level
# (not build trees, nor what tools leave in the tree, gen-carry/ and the
# like).
TREE = ("LICENSE", "README.md", "meson.build", "meson_options.txt", "cmake",
        "docs", "emitters", "runtime", "samples", "src", "templates",
        "tests", "tools")


def prepare_scratch(tilec, root):
    scratch = tempfile.mkdtemp(prefix="tilec-doctest.")
    for name in TREE:
        if not os.path.exists(os.path.join(root, name)):
            continue
        src = os.path.join(root, name)
        dst = os.path.join(scratch, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    for d in ("build", ".bin"):
        os.mkdir(os.path.join(scratch, d))
        os.symlink(tilec, os.path.join(scratch, d, "tilec"))
    os.mkdir(os.path.join(scratch, ".cache"), 0o700)
    return scratch


def run_script(script, scratch, env):
    try:
        p = subprocess.run(["bash", "-c", script], cwd=scratch, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return 124, out + "\n[timed out after %d s]\n" % TIMEOUT


def run_block(cmds, want_last, scratch, env):
    """Run a block's commands in one bash, each followed by a line with its
    status.  Returns [(status, output)] for the commands that ran, and the
    text of a failure or None."""
    tag = "@@doctest-status-%d@@" % os.getpid()
    script = []
    for n, (cmd, _) in enumerate(cmds):
        want = want_last if n == len(cmds) - 1 else 0
        script.append(cmd)
        script.append('__s=$?; printf "\\n%s %%d\\n" $__s; '
                      '[ $__s -eq %d ] || exit 0' % (tag, want))
    status, out = run_script("\n".join(script) + "\n", scratch, env)
    results = []
    rest = out
    while True:
        m = re.search(r"\n?%s (\d+)\n" % re.escape(tag), rest)
        if not m:
            break
        results.append((int(m.group(1)), rest[:m.start()]))
        rest = rest[m.end():]
    if len(results) < len(cmds) and status != 0:
        results.append((status, rest))
    return results


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tilec = os.path.realpath(sys.argv[1])
    root = os.path.realpath(sys.argv[2])
    page = sys.argv[3]
    text = open(os.path.join(root, page), encoding="utf-8").read()
    blocks = parse_blocks(text)
    scratch = prepare_scratch(tilec, root)
    env = dict(os.environ)
    env["PATH"] = os.path.join(scratch, ".bin") + os.pathsep + env["PATH"]
    env["TILEC_CACHE_DIR"] = os.path.join(scratch, ".cache")
    env.pop("TILEC_CC", None)

    checked, skipped, failed = [], [], []

    def fail(b, why):
        failed.append((b.line, why))
        print("%s:%d: FAIL: %s" % (page, b.line, why))

    try:
        for b in blocks:
            cmds = commands(b.lines)
            if b.marker and b.marker[0] == "example":
                name = b.marker[1]
                path = os.path.join(scratch, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("\n".join(b.lines) + "\n")
                print("%s:%d: wrote %s" % (page, b.line, name))
                continue
            if not b.marker:
                if cmds:
                    fail(b, "a block of commands without a doctest marker "
                         "(<!-- doctest --> or <!-- doctest: skip REASON "
                         "-->): %s" % cmds[0][0].split("\n")[0])
                continue
            opts = options(b.marker[1])
            if "skip" in opts:
                skipped.append((b.line, opts["skip"] or "no reason given"))
                print("%s:%d: skipped: %s" % (page, b.line, opts["skip"]))
                continue
            missing = [t for t in opts.get("needs", "").split()
                       if not shutil.which(t, path=env["PATH"])]
            if missing:
                why = "needs %s, not on PATH" % ", ".join(missing)
                skipped.append((b.line, why))
                print("%s:%d: skipped: %s" % (page, b.line, why))
                continue
            if "setup" in opts:
                status, out = run_script(opts["setup"], scratch, env)
                print("%s:%d: setup: %s (status %d)" % (page, b.line,
                                                        opts["setup"], status))
                if status != 0:
                    fail(b, "setup failed:\n" + out)
                    continue
            if "excerpt-file" in opts or "excerpt-cmd" in opts:
                if "excerpt-file" in opts:
                    what = opts["excerpt-file"]
                    try:
                        with open(os.path.join(scratch, what),
                                  encoding="utf-8") as f:
                            actual = f.read()
                    except OSError as e:
                        fail(b, "excerpt of %s: %s" % (what, e))
                        continue
                else:
                    what = opts["excerpt-cmd"]
                    status, actual = run_script(what, scratch, env)
                    if status != 0:
                        fail(b, "%s: status %d\n%s" % (what, status, actual))
                        continue
                if matches(b.lines, normalise(actual, scratch).split("\n"),
                           True):
                    checked.append(b.line)
                    print("%s:%d: ok: an excerpt of %s" % (page, b.line,
                                                           what))
                else:
                    head = "\n".join(actual.split("\n")[:80])
                    fail(b, "not an excerpt of %s; it begins:\n%s" %
                         (what, head))
                continue
            if not cmds:
                fail(b, "a doctest marker on a block with no '$ ' command")
                continue
            want_last = int(opts.get("exit", "0") or 0)
            results = run_block(cmds, want_last, scratch, env)
            ok = True
            for n, (cmd, shown) in enumerate(cmds):
                want = want_last if n == len(cmds) - 1 else 0
                if n >= len(results):
                    break
                status, out = results[n]
                got = normalise(out, scratch).split("\n")
                if status != want:
                    fail(b, "$ %s\nexited with status %d, not %d; it "
                         "printed:\n%s" % (cmd, status, want, out))
                    ok = False
                    break
                if any(s.strip() for s in shown) and not matches(
                        [normalise(s, scratch) for s in shown], got, False):
                    fail(b, "$ %s\nprinted (normalised):\n%s\nwhere the "
                         "page shows:\n%s" % (cmd, "\n".join(got).strip(),
                                              "\n".join(shown).strip()))
                    ok = False
                    break
            if ok and len(results) < len(cmds):
                fail(b, "the block stopped after %d of %d commands" %
                     (len(results), len(cmds)))
                ok = False
            if ok:
                checked.append(b.line)
                print("%s:%d: ok: %s" % (page, b.line, "; ".join(
                    c.split("\n")[0] for c, _ in cmds)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print("%s: %d blocks checked, %d skipped, %d failed" %
          (page, len(checked), len(skipped), len(failed)))
    for line, why in skipped:
        print("  skipped %s:%d: %s" % (page, line, why))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
