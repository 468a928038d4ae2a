#!/usr/bin/python3
"""table.py - one markdown table from several conformance.py --json results.

Usage: table.py RESULTS.json...   (e.g. build/conformance/*.json)

Prints, per server, the cases passed of the total, then the sections where the servers differ
(passed/total per server), then each case that did not pass with its reason. Known failures
(xfail) count as not passed here: the table says where each server stands, not the gate's verdict.
Exit 2 if a file is missing or is not a conformance.py result (file: what was expected).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(path, str(e))
    if not isinstance(d, dict) or not isinstance(d.get("cases"), list) or "server" not in d:
        raise BadInput(path, "expected a conformance.py --json result (server, cases)")
    for i, c in enumerate(d["cases"]):
        if not isinstance(c, dict) or not all(k in c for k in ("section", "case", "result")):
            raise BadInput(path, "cases[%d]: expected section, case and result" % i)
    return d


class BadInput(Exception):
    def __init__(self, path, why):
        super().__init__("%s: %s" % (path, why))


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        docs = [load(p) for p in paths]
    except BadInput as e:
        print("table.py: %s" % e, file=sys.stderr)
        return 2
    from conformance import section_key

    print("| server | cases passed | of | failed | skipped |")
    print("|---|---:|---:|---:|---:|")
    for d in docs:
        rs = [c["result"] for c in d["cases"]]
        passed = sum(r in ("pass", "XPASS", "xpass") for r in rs)
        print("| %s | %d | %d | %d | %d |" % (cell(d["server"]), passed, len(rs),
                                               sum(r in ("fail", "xfail") for r in rs),
                                               rs.count("skip")))
    per = []
    sections = set()
    for d in docs:
        s = {}
        for c in d["cases"]:
            t = s.setdefault(c["section"], [0, 0])
            t[1] += 1
            t[0] += c["result"] in ("pass", "XPASS", "xpass")
        per.append(s)
        sections |= set(s)
    differ = [x for x in sorted(sections, key=section_key)
              if len({tuple(s.get(x, (0, 0))) for s in per}) > 1
              or any(s.get(x, (0, 0))[0] != s.get(x, (0, 0))[1] for s in per)]
    if differ:
        print()
        print("| section | " + " | ".join(cell(d["server"]) for d in docs) + " |")
        print("|---|" + "---:|" * len(docs))
        for x in differ:
            print("| %s | %s |" % (x, " | ".join("%d/%d" % tuple(s.get(x, (0, 0))) for s in per)))
    print()
    print("| server | case | section | result | reason |")
    print("|---|---|---|---|---|")
    for d in docs:
        for c in d["cases"]:
            if c["result"] not in ("pass", "XPASS", "xpass"):
                print("| %s | %s | %s | %s | %s |" % (cell(d["server"]), cell(c["case"]),
                                                      cell(c["section"]), cell(c["result"]),
                                                      cell(c.get("reason", ""))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
