#!/bin/sh
# design_map_bad.sh - the map test can fail: a copy of the tree's docs/DESIGN.md with one entry
# dropped and one invented must make design_map.py exit 1 naming both.
# Usage: design_map_bad.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for d in apps gates harness report servers; do ln -s "$src/$d" "$tmp/$d"; done
mkdir "$tmp/docs"
# Drop apps/cmd_gate.c's line, add a file that is not there.
sed -e '/^- `cmd_gate.c`:/d' -e 's/^- `cmd_ab.c`:\(.*\)/- `cmd_ab.c`:\1\n- `cmd_nothing.c`: invented/' \
    "$src/docs/DESIGN.md" >"$tmp/docs/DESIGN.md"
out=$(python3 "$src/tests/doc/design_map.py" "$tmp")
rc=$?
echo "$out"
fail=0
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; fail=1; }
echo "$out" | grep -q 'apps/cmd_gate.c is not in the file map' || { echo "FAIL: missing file not named"; fail=1; }
echo "$out" | grep -Eq 'DESIGN.md:[0-9]+: apps/cmd_nothing.c does not exist' || { echo "FAIL: invented file not named with its line"; fail=1; }
exit $fail
