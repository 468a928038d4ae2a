#!/bin/sh
# doctest_bad.sh - the doc runner can fail: a copy of README.md with one shown output line
# changed (curl's "Hello, World!" becomes "Hello, Moon!") must make doctest.py exit 1 naming the
# copy and that line's number.
# Usage: doctest_bad.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
line=$(grep -n '^Hello, World!$' "$src/README.md" | head -n 1 | cut -d: -f1)
[ -n "$line" ] || { echo "FAIL: README.md has no 'Hello, World!' output line to change"; exit 1; }
sed "${line}s/World/Moon/" "$src/README.md" >"$tmp/README.md"
out=$(python3 "$src/tests/doc/doctest.py" "$build" "$src" "$tmp/README.md")
rc=$?
echo "$out"
[ $rc -eq 77 ] && exit 77
fail=0
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; fail=1; }
echo "$out" | grep -q "^$tmp/README.md:$line: shown line not in the output: Hello, Moon!" ||
    { echo "FAIL: the changed line ($line) is not named"; fail=1; }
echo "$out" | grep -q '1 failure(s)' || { echo "FAIL: expected exactly one failure"; fail=1; }
exit $fail
