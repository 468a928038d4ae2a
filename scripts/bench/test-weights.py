#!/usr/bin/env python3
"""test-weights.py RELEASE.txt ASAN.txt > tests/weights.txt - the CTest weights from two runs of
scripts/bench/test-cpu.sh (one on build/, one on build-asan/).

Each line of tests/weights.txt is "NAME SHARE WALL": SHARE is the larger of the test's two CPU
shares (CPU-s per wall second, the servers and peers it starts included), WALL its Release wall
time in seconds. tests/CMakeLists.txt turns SHARE into the slots the test takes (PROCESSORS, four
slots per CPU) and WALL into its COST (CTest starts the costliest first when it has no timings of
its own, as on a fresh clone). A test missing from the file takes a whole CPU's slots.
"""
import sys


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
    print("# tests/weights.txt: NAME SHARE WALL, written by scripts/bench/test-weights.py from")
    print("# scripts/bench/test-cpu.sh on build/ and build-asan/ (JOBS=2, an idle machine).")
    for name in sorted(set(rel) | set(asan)):
        wall = rel.get(name, asan.get(name))[0]
        share = max(rel.get(name, (0, 0))[1], asan.get(name, (0, 0))[1])
        print(f"{name} {share:.2f} {wall:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
