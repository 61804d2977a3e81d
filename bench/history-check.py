#!/usr/bin/python3
"""Checks the benchmark history after the move of issue 41 (docs/benchmarks.md → docs/benchmarks/*.md).

Usage: bench/history-check.py [REV]   (REV: the commit whose docs/benchmarks.md was the whole history; default 15e68fd)

1. Nothing lost: every non-empty line of REV's docs/benchmarks.md is in docs/benchmarks/*.md, as often as it was
   (the sorted multiset of the old file's non-empty lines is contained in the new files').
2. Links: every relative Markdown link in docs/benchmarks.md and docs/benchmarks/*.md, and every one into them from
   README.md and docs/*.md, names a file that exists and, with a #fragment, a heading of that file (GitHub's anchor rules: lower case, punctuation dropped,
   spaces to hyphens, -1, -2 … for repeats).
Prints what is missing or broken and exits 1, or prints a one-line summary and exits 0.
"""
import collections
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REV = sys.argv[1] if len(sys.argv) > 1 else "15e68fd"


def anchors(path):
    seen, out, code = collections.Counter(), set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            code = not code
        m = None if code else re.match(r"(#{1,6}) +(.*?)\s*$", line)
        if m:
            s = re.sub(r"[^\w\- ]", "", m.group(2).lower()).replace(" ", "-")
            out.add(s if seen[s] == 0 else "%s-%d" % (s, seen[s]))
            seen[s] += 1
    return out


def main():
    old = subprocess.run(["git", "-C", ROOT, "show", REV + ":docs/benchmarks.md"], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    new = collections.Counter()
    files = sorted(glob.glob(os.path.join(ROOT, "docs", "benchmarks", "*.md")))
    for f in files:
        new.update(l for l in open(f, encoding="utf-8").read().splitlines() if l.strip())
    want = collections.Counter(l for l in old if l.strip())
    lost = want - new
    bad = []
    others = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for f in [os.path.join(ROOT, "docs", "benchmarks.md")] + files + others:
        text = re.sub(r"```.*?```", "", open(f, encoding="utf-8").read(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or (f in others and "benchmarks" not in target):
                continue
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                bad.append("%s: %s (no such file)" % (os.path.relpath(f, ROOT), target))
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append("%s: %s (no such heading)" % (os.path.relpath(f, ROOT), target))
    for line, n in sorted(lost.items()):
        print("lost (%d×): %s" % (n, line[:160]))
    for b in bad:
        print("broken link: " + b)
    if lost or bad:
        sys.exit(1)
    print("history-check: %d non-empty lines of %s:docs/benchmarks.md all in %d files of docs/benchmarks/ "
          "(%d lines there); links of and into docs/benchmarks.md and docs/benchmarks/ resolve"
          % (sum(want.values()), REV, len(files), sum(new.values())))


if __name__ == "__main__":
    main()
