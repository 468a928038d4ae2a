#!/usr/bin/env python3
"""shape_table.py STAGES NDJSON - every interval of `h2bench load --interval-json` against a
--stages shape (starting at 0 req/s), printed as a table; exit 1 when one is off the shape.

A request counts in the interval it ended in, so the one intended just before a boundary may end
after it: an interval may differ from the shape's integral by 2 % plus what the shape intends
during the slowest request that may cross that interval's end (the max latency of it and of the
next interval, where such a request is recorded; measured in the same run), + 2, never more. The offered requests must be the integral (within 0.01)."""
import json
import sys


def parse(stages):
    segs, t, r = [], 0.0, 0.0
    for part in stages.split(","):
        dur, rate = part.split(":")
        d = float(dur.rstrip("s"))
        segs.append((t, t + d, r, float(rate)))
        t, r = t + d, float(rate)
    return segs


def main():
    segs = parse(sys.argv[1])

    def rate(t):
        for a, b, r0, r1 in segs:
            if a <= t < b:
                return r0 + (r1 - r0) * (t - a) / (b - a)
        return 0

    def integral(a, b, n=20000):
        h = (b - a) / n
        return sum(rate(a + (i + 0.5) * h) for i in range(n)) * h

    print("interval  shape  achieved  offered/s  diff   allowed  p99(ms)")
    bad = 0
    rows = [json.loads(line) for line in open(sys.argv[2])]
    lat_max = [((r["latency_ns"] or {}).get("max", 0)) for r in rows]
    for k, r in enumerate(rows):
        want = integral(r["start_s"], r["end_s"])
        lat = r["latency_ns"] or {}
        # the slowest request that may cross this interval's end: a request intended in it that
        # ends in the next one has its latency recorded there, so both intervals' max count
        slow = max(lat_max[k:k + 2])
        slack = 0.02 * want + max(rate(r["start_s"]), rate(r["end_s"] - 1e-9)) * slow / 1e9 + 2
        diff = r["ended"] - want
        ok = abs(diff) <= slack and abs(r["offered_per_s"] * (r["end_s"] - r["start_s"]) - want) < 0.01
        bad += not ok
        print(f'{r["start_s"]:3.0f}-{r["end_s"]:<3.0f}  {want:6.1f}  {r["ended"]:8d}  '
              f'{r["offered_per_s"]:9.1f}  {diff:+5.0f}  {slack:7.1f}  {lat.get("p99", 0) / 1e6:7.2f}'
              f'{"" if ok else "  <- off the shape"}')
    sys.exit(1 if bad else 0)


main()
