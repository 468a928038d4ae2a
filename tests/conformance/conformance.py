#!/usr/bin/python3
"""conformance.py - run the offline HTTP/2 server conformance suite (cases.py) against a server.

Usage: conformance.py --host HOST --port PORT [--tls] [--path /] [--timeout 2] [--json FILE]
                      [--only PREFIX[,PREFIX...]] [--known-failures FILE] [--lenient]
                      [--name LABEL] [--list]

Prints one line per case (section, case id, result, reason), then a per-section summary and
"N passed, N failed". Results: pass, FAIL, skip (the case does not apply: h2spec's skipped),
xfail (failed and listed in the --known-failures file: a server bug already reported), XPASS
(listed but passed: the fix has landed, take it off the list; a failure of the run), xpass (an
entry marked "racy" passed: the bug shows only when the server reads more slowly than it
answers, so a pass proves nothing and is not a failure).

Known-failures file: one case per line, "ID [racy] reason"; '#' starts a comment. --json writes the same as a JSON document
(written whole to a temporary file and renamed, so a reader never sees half of it).

Exit: 0 every case passed, skipped or failed as known; 1 a case failed or a known failure
passed; 2 usage; 3 the server could not be reached at all (the first connection failed).

Run it with /usr/bin/python3: it needs Debian's python3-hyperframe and python3-hpack.
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import h2conf
    from cases import CASES
except ImportError as e:  # the Debian packages are missing
    print("conformance.py: %s (install python3-hyperframe and python3-hpack, and run with "
          "/usr/bin/python3)" % e, file=sys.stderr)
    sys.exit(3)


def run_case(cfg, k):
    start = time.monotonic()
    c = None
    try:
        c = h2conf.Conn(cfg)
        if k.handshake:
            c.handshake()
        ok, reason = k.fn(c)
        result = "pass" if ok else "fail"
    except h2conf.Skip as e:
        result, reason = "skip", str(e)
    except h2conf.Fail as e:
        result, reason = "fail", str(e)
    except Exception as e:  # a crash of the client is a failure of the case, never a pass
        result, reason = "fail", "client error: %r" % e
    finally:
        if c is not None:
            c.close()
    return result, reason, time.monotonic() - start


def section_key(rfc):
    """Sort "RFC 9113 §6.5.2" before "RFC 9113 §6.10" and RFC 9113 before RFC 7541."""
    doc, _, num = rfc.partition(" §")
    return (0 if "9113" in doc else 1, [int(x) for x in num.split(".")])


def write_json(path, doc):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".conformance-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_known(parser, path):
    """{case id: racy?} from a known-failures file; bad lines are usage errors (file:line)."""
    ids = {k.id for k in CASES}
    known = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        parser.error("--known-failures %s: %s" % (path, e))
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] not in ids:
            parser.error("%s:%d:1: expected a case id (see --list), got %r" % (path, n, words[0]))
        if words[0] in known:
            parser.error("%s:%d:1: %s is listed twice" % (path, n, words[0]))
        if len(words) < 2 or (words[1] == "racy" and len(words) < 3):
            parser.error("%s:%d: expected a reason after the case id" % (path, n))
        known[words[0]] = words[1] == "racy"
    return known


def parse_args(argv):
    p = argparse.ArgumentParser(description="Offline HTTP/2 server conformance suite "
                                "(the 147 h2spec server cases)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--tls", action="store_true", help="TLS with ALPN h2 (certificate unchecked)")
    p.add_argument("--path", default="/", help="path of a resource with a body (default /)")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds per read (default 2)")
    p.add_argument("--max-header-len", type=int, default=4000,
                   help="value length of the dummy header fields (h2spec's default 4000)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--only", help="comma-separated case id prefixes (e.g. http2/6.5,hpack/)")
    p.add_argument("--known-failures", metavar="FILE",
                   help="file of case ids that are reported server bugs (ID [racy] reason)")
    p.add_argument("--lenient", action="store_true",
                   help="h2spec's verdicts: a wrong error code passes if the connection closes")
    p.add_argument("--name", default="", help="label of the server in the output")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    a = p.parse_args(argv)
    if not a.list and a.port is None:
        p.error("--port is required")
    if a.port is not None and not 0 < a.port < 65536:
        p.error("--port %d: expected 1-65535" % a.port)
    if a.timeout <= 0 or a.timeout > 60:
        p.error("--timeout %g: expected more than 0 and at most 60 seconds" % a.timeout)
    if not a.path.startswith("/"):
        p.error("--path %r: expected an absolute path starting with /" % a.path)
    a.known = read_known(p, a.known_failures) if a.known_failures else {}
    a.only_list = [x for x in (a.only or "").split(",") if x]
    if a.only is not None and not a.only_list:
        p.error("--only: expected at least one case id prefix")
    return a


def main(argv):
    a = parse_args(argv)
    cases = [k for k in CASES if not a.only_list or any(k.id.startswith(x) for x in a.only_list)]
    if not cases:
        print("conformance.py: --only %s matches no case" % a.only, file=sys.stderr)
        return 2
    if a.list:
        for k in cases:
            print("%-18s %-16s %s%s" % (k.rfc, k.id, k.desc, " (strict)" if k.strict else ""))
        print("%d cases" % len(cases))
        return 0
    cfg = h2conf.Config(a.host, a.port, a.tls, a.path, a.timeout, a.max_header_len, a.lenient)
    try:
        h2conf.Conn(cfg).close()
    except h2conf.Fail as e:
        print("conformance.py: %s" % e, file=sys.stderr)
        return 3

    label = a.name or "%s:%d%s" % (a.host, a.port, " (TLS)" if a.tls else "")
    print("conformance suite against %s: %d cases%s" % (label, len(cases),
                                                        ", lenient" if a.lenient else ""))
    print("%-18s %-16s %-6s %s" % ("section", "case", "result", "reason"))
    rows = []
    for k in cases:
        result, reason, secs = run_case(cfg, k)
        if k.id in a.known and result == "fail":
            result = "xfail"
        elif k.id in a.known and result == "pass":
            result = "xpass" if a.known[k.id] else "XPASS"
            reason += " (listed in %s: remove it)" % a.known_failures
        shown = "FAIL" if result == "fail" else result
        print("%-18s %-16s %-6s %s" % (k.rfc, k.id, shown, reason.replace("\n", " ")),
              flush=True)
        rows.append({"section": k.rfc, "case": k.id, "description": k.desc, "strict": k.strict,
                     "result": result, "reason": reason, "seconds": round(secs, 3)})

    sections = {}
    for r in rows:
        s = sections.setdefault(r["section"], {"total": 0, "passed": 0})
        s["total"] += 1
        s["passed"] += r["result"] == "pass"
    counts = {x: sum(1 for r in rows if r["result"] == x)
              for x in ("pass", "fail", "skip", "xfail", "XPASS", "xpass")}
    print()
    print("%-18s %s" % ("section", "passed/total"))
    for name in sorted(sections, key=section_key):
        s = sections[name]
        mark = "" if s["passed"] == s["total"] else "  <"
        print("%-18s %d/%d%s" % (name, s["passed"], s["total"], mark))
    print("%s: %d of %d cases passed (%d failed, %d skipped, %d known failures, %d known "
          "failures passed)" % (label, counts["pass"], len(rows), counts["fail"], counts["skip"],
                                counts["xfail"], counts["XPASS"] + counts["xpass"]))
    if a.json:
        write_json(a.json, {
            "suite": "h2bench conformance (h2spec 2.6 server cases)",
            "server": label, "host": a.host, "port": a.port, "tls": a.tls, "path": a.path,
            "lenient": a.lenient, "timeout_s": a.timeout, "cases": rows,
            "sections": [dict(section=n, **sections[n]) for n in sorted(sections, key=section_key)],
            "summary": {"total": len(rows), "passed": counts["pass"], "failed": counts["fail"],
                        "skipped": counts["skip"], "known_failures": counts["xfail"],
                        "known_failures_passed": counts["XPASS"] + counts["xpass"]}})
    bad = counts["fail"] + counts["XPASS"]
    print("%d passed, %d failed, %d skipped" % (counts["pass"], bad,
                                               counts["skip"] + counts["xfail"] + counts["xpass"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
