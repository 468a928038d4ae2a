#!/usr/bin/env bash
# baselines.sh - gates/BASELINES.md is generated from gates/ceilings.json and must be current:
# regenerate it and compare. (Fix: h2bench gate --ceilings gates/ceilings.json
# --baselines-md gates/BASELINES.md, from the source tree.)
. "$(dirname "$0")/lib.sh"
cd "$SRC" || exit 1
"$H2BENCH" gate --ceilings gates/ceilings.json --baselines-md "$TMP/BASELINES.md"
expect_eq "baselines rendered" "$?" 0
if diff -u gates/BASELINES.md "$TMP/BASELINES.md" >"$TMP/diff"; then ok; else
    fail "gates/BASELINES.md is stale; regenerate it: $(cat "$TMP/diff")"
fi
# One row per benchmark of the ceilings file.
rows=$(grep -c '^| `' gates/BASELINES.md)
benches=$("$H2BENCH" gate --ceilings gates/ceilings.json --baselines-md - | grep -c '^| `')
expect_eq "one row per benchmark" "$rows" "$benches"
finish
