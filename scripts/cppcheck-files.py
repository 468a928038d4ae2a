#!/usr/bin/env python3
"""cppcheck-files.py MACRO[,MACRO...] INCLUDE_DIR... - the tracked .c files whose text, or the text
of a project header they include (transitively, through the including file's directory and the
INCLUDE_DIRs: the -I directories format-check gives cppcheck), names one of the MACROs. format-check's second cppcheck pass (the other side of every build
switch) runs on these only: on any other file both passes preprocess to the same text, so the
second would repeat the first (it took 43 CPU-s on all 205 files, of which 93 name a switch).
System headers do not count: cppcheck does not read them (it knows the standard library from
its own configuration), so a macro they test cannot change what it checks.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    if len(sys.argv) < 3 or not sys.argv[1]:
        sys.stderr.write("usage: cppcheck-files.py MACRO[,MACRO...] INCLUDE_DIR...\n")
        return 2
    include_dirs = sys.argv[2:]
    named = re.compile(r"\b(" + "|".join(map(re.escape, sys.argv[1].split(","))) + r")\b")
    texts = {}

    def text(path):
        if path not in texts:
            with open(path, encoding="utf-8", errors="replace") as f:
                texts[path] = f.read()
        return texts[path]

    def resolve(name, includer):
        for d in [os.path.dirname(includer)] + include_dirs:
            p = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(p):
                return p
        return None

    def names_a_switch(path, seen):
        if path in seen:
            return False
        seen.add(path)
        t = text(path)
        if named.search(t):
            return True
        return any(p and names_a_switch(p, seen) for p in (resolve(n, path) for n in INCLUDE.findall(t)))

    files = subprocess.check_output(["git", "ls-files", "*.c"], text=True).split()
    print(" ".join(f for f in files if names_a_switch(f, set())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
