#!/usr/bin/env python3
"""test-weights.py RELEASE.txt ASAN.txt > tests/weights.txt - the CTest weights from two runs of
scripts/bench/test-cpu.sh (one on build/, one on build-asan/).

Each line of tests/weights.txt is "NAME SLOTS COST SHARE". SHARE is the larger of the test's two
CPU shares (CPU-s per wall second, the servers and peers it starts included); SLOTS is the CTest
slots it takes, four per CPU: ceil(4 x SHARE), 1 to 8; COST is its Release wall time in seconds
(CTest starts the costliest first when it has no timings of its own, as on a fresh clone).
tests/CMakeLists.txt sets SLOTS as the test's PROCESSORS and COST as its COST; SHARE is there for
the reader. A test missing from the file takes a whole CPU's 4 slots.
"""
import math
import sys

SLOTS_PER_CPU = 4
MAX_SLOTS = 8


def read(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5 or line.startswith("total:"):
                continue
            out[parts[0]] = (float(parts[1]), float(parts[3]))
    return out


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: test-weights.py RELEASE.txt ASAN.txt\n")
        return 2
    rel, asan = read(sys.argv[1]), read(sys.argv[2])
    if not rel:
        sys.stderr.write(f"test-weights.py: {sys.argv[1]}: no test lines\n")
        return 2
    print("# tests/weights.txt: NAME SLOTS COST SHARE, written by scripts/bench/test-weights.py from")
    print("# scripts/bench/test-cpu.sh on build/ and build-asan/ (JOBS=2, an idle machine).")
    for name in sorted(set(rel) | set(asan)):
        wall = rel.get(name, asan.get(name))[0]
        share = max(rel.get(name, (0, 0))[1], asan.get(name, (0, 0))[1])
        slots = min(MAX_SLOTS, max(1, math.ceil(round(share * SLOTS_PER_CPU, 6))))
        print(f"{name} {slots} {wall:.1f} {share:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
