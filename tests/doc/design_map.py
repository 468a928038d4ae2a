#!/usr/bin/env python3
"""design_map.py - docs/DESIGN.md's file map against the tree.

The "## File map" section of docs/DESIGN.md lists every directory under apps/, gates/, harness/,
report/ and servers/ as a line "`DIR/`: what it holds" followed by "- `FILE`: what it holds" lines. This test
fails (exit 1) when a file or directory there is missing from the map, when the map names one
that does not exist, or when an entry has no description; each problem is printed as
docs/DESIGN.md:LINE (or the missing path). Usage: design_map.py SOURCE_DIR
"""
import os
import re
import sys

ROOTS = ("apps", "gates", "harness", "report", "servers")


def tree(src):
    dirs, files = set(), set()
    for root in ROOTS:
        for d, subdirs, names in os.walk(os.path.join(src, root)):
            rel = os.path.relpath(d, src)
            subdirs[:] = [s for s in subdirs if not s.startswith(".")]
            dirs.add(rel)
            for n in names:
                if not n.startswith("."):
                    files.add(os.path.join(rel, n))
    return dirs, files


def parse_map(path):
    """Returns (dirs, files, problems); files maps path -> line number."""
    dirs, files, problems = {}, {}, []
    cur, inside = None, False
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("## "):
                inside = line == "## File map"
                continue
            if not inside:
                continue
            m = re.fullmatch(r"`([^`]+)/`:(.*)", line)
            if m:
                cur = m.group(1)
                if not m.group(2).strip():
                    problems.append(f"{path}:{no}: directory {cur}/ has no description")
                if cur in dirs:
                    problems.append(f"{path}:{no}: directory {cur}/ listed twice")
                dirs[cur] = no
                continue
            m = re.fullmatch(r"- `([^`]+)`:(.*)", line)
            if m:
                if cur is None:
                    problems.append(f"{path}:{no}: file entry before any directory line")
                    continue
                p = cur + "/" + m.group(1)
                if not m.group(2).strip():
                    problems.append(f"{path}:{no}: {p} has no description")
                files[p] = no
    if not dirs:
        problems.append(f"{path}: no '## File map' section with directory lines")
    return dirs, files, problems


def main():
    if len(sys.argv) != 2:
        print("usage: design_map.py SOURCE_DIR", file=sys.stderr)
        return 2
    src = sys.argv[1]
    doc = os.path.join(src, "docs", "DESIGN.md")
    tdirs, tfiles = tree(src)
    mdirs, mfiles, problems = parse_map(doc)
    for d in sorted(tdirs - set(mdirs)):
        problems.append(f"{doc}: directory {d}/ is not in the file map")
    for d in sorted(set(mdirs) - tdirs):
        problems.append(f"{doc}:{mdirs[d]}: directory {d}/ does not exist")
    for p in sorted(tfiles - set(mfiles)):
        problems.append(f"{doc}: {p} is not in the file map")
    for p in sorted(set(mfiles) - tfiles):
        problems.append(f"{doc}:{mfiles[p]}: {p} does not exist")
    for p in problems:
        print(p)
    print(f"design_map: {len(mfiles)} files, {len(mdirs)} directories mapped; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
