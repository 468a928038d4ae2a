#!/usr/bin/env python3
"""svg_check.py - checks a flame graph SVG written by h2bench.

usage: svg_check.py FILE.svg SAMPLES [--red SYMBOL]

Parses FILE as XML (xml.etree: a malformed file fails here), reads every frame group
(<g class="f"> with a <title> "NAME [...] (N samples, P%)" and a <rect>), and checks:
the "all" frame holds SAMPLES samples; the frames of the first level above it add up to SAMPLES
in samples and to the width of "all" in pixels (within 0.5 px); no frame is wider than its level's
space. With --red SYMBOL, the frame(s) named SYMBOL must be drawn red (r > g + 60 and r > b + 60).
Prints what it found; exits 0 when every check holds, 1 otherwise.
"""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    args = sys.argv[1:]
    red = None
    if "--red" in args:
        i = args.index("--red")
        red = args[i + 1]
        del args[i:i + 2]
    path, samples = args[0], int(args[1])
    root = ET.parse(path).getroot()
    frames = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        title = g.find(NS + "title").text
        rect = g.find(NS + "rect")
        m = re.search(r"\((\d+) samples, ", title)
        frames.append({"name": g.get("data-name"), "samples": int(m.group(1)),
                       "x": float(rect.get("x")), "y": float(rect.get("y")),
                       "w": float(rect.get("width")), "fill": rect.get("fill")})
    ok = True
    alls = [f for f in frames if f["name"] == "all"]
    if len(alls) != 1 or alls[0]["samples"] != samples:
        print("FAIL: 'all' frame:", alls)
        return 1
    top = alls[0]
    first = [f for f in frames if abs(f["y"] - (top["y"] - 16)) < 0.01]
    s = sum(f["samples"] for f in first)
    w = sum(f["w"] for f in first)
    print(f"{len(frames)} frames; first level {len(first)} frames, {s} samples, {w:.2f} px "
          f"of {top['w']:.2f}")
    if s != samples:
        print(f"FAIL: first-level samples {s} != {samples}")
        ok = False
    if abs(w - top["w"]) > 0.5:
        print(f"FAIL: first-level width {w:.2f} != {top['w']:.2f}")
        ok = False
    for f in frames:
        if f["w"] > top["w"] + 0.01 or abs(f["w"] - top["w"] * f["samples"] / samples) > 0.02:
            print("FAIL: frame width does not match its samples:", f)
            ok = False
            break
    if red is not None:
        hits = [f for f in frames if f["name"] == red]
        if not hits:
            print(f"FAIL: no frame named {red}")
            ok = False
        for f in hits:
            r, g, b = map(int, re.match(r"rgb\((\d+),(\d+),(\d+)\)", f["fill"]).groups())
            print(f"{red}: {f['samples']} samples, fill {f['fill']}")
            if not (r > g + 60 and r > b + 60):
                print(f"FAIL: {red} is not red")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
