#!/usr/bin/env bash
# results_keys.sh - scripts/check-results-keys.py: the source tree spells no results key outside
# harness/core (issue 14), and the check can fail: a planted key literal in a copy of the core
# tables' tree is reported at its file:line:column with exit 1, while comments, plain-word keys,
# allow-listed spellings, tests/ and docs/ are not; no key table is a usage error.
. "$(dirname "$0")/lib.sh"
CHECK=$SRC/scripts/check-results-keys.py

out=$(python3 "$CHECK" "$SRC" 2>&1)
expect_eq "source tree clean" "$?" 0
expect_match "summary" "$out" 'check-results-keys: [0-9]+ keys, [0-9]+ files clean'

T=$TMP/tree
mkdir -p "$T/harness/core" "$T/gates" "$T/tests" "$T/docs" "$T/harness/run"
cp "$SRC"/harness/core/*.c "$T/harness/core/"
cat >"$T/gates/planted.c" <<'C'
/* "p99_ns" in a comment is prose */
// and "allocs_per_request" here too
static const char *a = "name";          /* a plain word: not checked */
static const char *b = "nghttp2";       /* allow-listed: the library's name */
static double f(const json_t *o)
{
    return json_number_value(json_object_get(o, "p99_ns"));
}
static const char *c = "x" "bytes_per_request" "y";
C
printf 'const char *k = "p99_ns";\n' >"$T/tests/t.c"
printf '"p99_ns"\n' >"$T/docs/d.c"
printf 'const char *k = "frame_size";\n' >"$T/harness/run/scenario.c"
out=$(python3 "$CHECK" "$T" 2>&1)
rc=$?
expect_eq "planted key fails" "$rc" 1
expect_match "planted key located" "$out" '^gates/planted\.c:7:49: results key "p99_ns" spelt outside harness/core'
expect_match "adjacent literal located" "$out" 'gates/planted\.c:9:28: results key "bytes_per_request"'
expect_eq "only the two code literals" \
    "$(printf '%s\n' "$out" | grep -c 'spelt outside')" 2

# A key added to a core table is checked at once (the tables are the source of the keys).
printf '#define T struct x\nstatic const struct h2b_model_field x_fields[] = {F(T, brand_new_key, REAL, 0), END};\n' \
    >"$T/harness/core/extra.c"
printf 'const char *k = "brand_new_key";\n' >"$T/gates/new.c"
out=$(python3 "$CHECK" "$T" 2>&1)
expect_match "a new table row is checked" "$out" 'gates/new\.c:1:17: results key "brand_new_key"'

rm -rf "$T/harness/core"
python3 "$CHECK" "$T" >/dev/null 2>&1
expect_eq "no key table: usage" "$?" 2
finish
