#!/usr/bin/env python3
"""name-deps.py - which files of a library use which others' names, and whether they circle.

Usage: python3 scripts/name-deps.py OBJECT.o... | LIBRARY.a
       python3 scripts/name-deps.py build/servers/h2ref/libh2b_server.a

A static library stands for the objects it holds now (a build directory may keep the object of
a file that no longer exists beside them; the archive has only the current ones).

Reads each object file's symbol table with nm: the names it defines (functions, data) and the
names it uses without defining. A file uses another when one of its undefined names is defined
there. Prints one line per file, "file -> the files it uses", then either "no circle" or each
circle found, and exits 1 when there is one. Names defined outside the given objects (libc,
libnghttp2, h2bench::core) are not edges. Static inline functions of shared headers define
nothing and are not counted: they are the headers' names, not a file's.
"""
import os
import subprocess
import sys
import tempfile


def symbols(path):
    out = subprocess.run(["nm", "--defined-only", "-g", path], capture_output=True, text=True,
                         check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "-u", path], capture_output=True, text=True, check=True).stdout
    used = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, used


def name_of(path):
    base = os.path.basename(path)
    return base[:-2] if base.endswith(".o") else base


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in argv[1:]:
            if not p.endswith(".a"):
                files[name_of(p)] = symbols(p)
                continue
            members = subprocess.run(["ar", "t", p], capture_output=True, text=True,
                                     check=True).stdout.split()
            subprocess.run(["ar", "x", os.path.abspath(p)], cwd=tmp, check=True)
            for m in members:
                files[name_of(m)] = symbols(os.path.join(tmp, m))
    owner = {}
    for f, (defined, _) in files.items():
        for s in defined:
            owner[s] = f
    edges = {}
    for f, (_, used) in files.items():
        edges[f] = sorted({owner[s] for s in used if s in owner and owner[s] != f})
    for f in sorted(edges):
        print(f"{f} -> {', '.join(edges[f]) if edges[f] else '(none)'}")
    # Depth-first search for back edges: each one closes a circle.
    state, stack, circles = {}, [], []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in edges[f]:
            if state.get(g) == 1:
                circles.append(stack[stack.index(g):] + [g])
            elif g not in state:
                visit(g)
        stack.pop()
        state[f] = 2

    for f in sorted(edges):
        if f not in state:
            visit(f)
    if not circles:
        print("no circle")
        return 0
    for c in circles:
        print("circle: " + " -> ".join(c))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
