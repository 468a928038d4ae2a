#!/usr/bin/env python3
"""check-results-keys.py - fails when C code outside harness/core spells a results key.

Usage: check-results-keys.py [ROOT]   (ROOT: the source tree, default this script's parent's
parent; Makefile.ci format-check and the ctest integration.results_keys run it)

The results schema lives in the key tables of harness/core (results.c, and any other core .c
file written the same way): a row F(T, member, ...), SUB(T, member, ...), ALIAS(T, member, ...,
"legacy"), BM(member, ...) or {"key", H2B_MODEL_...}. Every key those rows name is collected;
then every quoted string literal in the *.c and *.h files of the tree outside harness/core/,
tests/ and docs/ (and build directories) is compared with them, comments skipped. A literal
that equals a key is a reader or writer spelling the schema itself instead of going through the
model: the check prints file:line:column and fails (exit 1). Code that needs a key by name
takes it from the model (h2b_budget_metrics, H2B_MODEL_KEY(model, type, member), the model's
tables), so a renamed field is one table line and a compile error everywhere else.

Two exemptions, both deliberate and listed here:
  - keys that are plain words (letters only: "name", "path", "max", "micro", "tls", ...) are
    not checked: every other format h2bench reads or writes (scenarios, peers, ceilings, CLI
    options, text headers) uses the same words for its own fields, so a literal "name" says
    nothing about results. Keys with an underscore or a digit are the schema's own words.
  - ALLOW below: a key (and where it may appear) with the reason it is not a results key there.

Exit status: 0 clean, 1 a key was spelt outside the core, 2 usage (no key table found).
"""
import os
import re
import sys

# (key, path regex or None for anywhere, reason). Keep this short: every entry is a place where
# the same spelling means something that is not a results field.
ALLOW = [
    ("nghttp2", None, "the library's name: an engine (--engine nghttp2), a DSO class name and "
     "the env field env.c writes (its readers take the key from h2b_results_env_model)"),
    ("p50", None, "a percentile label in text tables and A/B rows (latency_ns.p50 is the key)"),
    ("p90", None, "a percentile label in text tables (latency_ns.p90 is the key)"),
    ("p99", None, "a percentile label in text tables and A/B rows (latency_ns.p99 is the key)"),
    ("tls_handshake", r"^harness/load/hdrlog\.c$", "the HdrHistogram log's tag for that histogram "
     "(a foreign format's name; docs/load.md)"),
    (None, r"^harness/run/scenario\.c$", "the scenario format's own keys (docs/scenarios.md): "
     "matrix.frame_size, client.timeout_s, budgets.warmup_requests, ... name the inputs that the "
     "results fields of the same name record"),
]

ROW = re.compile(r"\b(?:F|SUB|ALIAS)\(\s*T\s*,\s*(\w+)|\bBM\(\s*(\w+)\s*,")
ALIAS_KEY = re.compile(r"\bALIAS\(\s*T\s*,\s*\w+\s*,\s*\w+\s*,[^,]*,\s*\"(\w+)\"")
LITERAL_ROW = re.compile(r"\{\s*\"(\w+)\"\s*,\s*H2B_MODEL_")
TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
SKIP_DIRS = {".git", "tests", "docs"}


def core_keys(root):
    core = os.path.join(root, "harness", "core")
    keys = set()
    for name in sorted(os.listdir(core)) if os.path.isdir(core) else []:
        if not name.endswith(".c"):
            continue
        with open(os.path.join(core, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in ROW.finditer(text):
            keys.add(m.group(1) or m.group(2))
        keys.update(ALIAS_KEY.findall(text))
        keys.update(LITERAL_ROW.findall(text))
    return keys


def sources(root):
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        dirs[:] = sorted(
            d for d in dirs
            if d not in SKIP_DIRS and not d.startswith("build") and
            os.path.normpath(os.path.join(rel_top, d)) != os.path.join("harness", "core"))
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.normpath(os.path.join(rel_top, name))


def allowed(key, path):
    for k, where, _ in ALLOW:
        if (k is None or k == key) and (where is None or re.search(where, path)):
            return True
    return False


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(argv[0])))
    keys = {k for k in core_keys(root) if re.search(r"[_0-9]", k)}
    if not keys:
        print(f"check-results-keys: no key table found under {root}/harness/core", file=sys.stderr)
        return 2
    bad = 0
    nfiles = 0
    for path in sources(root):
        nfiles += 1
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in TOKEN.finditer(text):
            lit = m.group(0)
            if lit[0] != '"' or lit[1:-1] not in keys or allowed(lit[1:-1], path):
                continue
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            print(f"{path}:{line}:{col}: results key {lit} spelt outside harness/core "
                  "(take it from the core model)")
            bad += 1
    if bad:
        print(f"check-results-keys: {bad} results key(s) outside harness/core", file=sys.stderr)
        return 1
    print(f"check-results-keys: {len(keys)} keys, {nfiles} files clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
