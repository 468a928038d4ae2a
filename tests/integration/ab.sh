#!/usr/bin/env bash
# ab.sh - `h2bench ab` on a user's repository: a throwaway git repository holding a small
# library and a benchmark built with find_package(h2bench) against the INSTALLED h2bench.
# Revisions: v1 (the base), v2 (one more allocation per op), v3 (eight times the work), v4
# (does not build). Checks the verdicts and exit codes, that `h2bench compare` on the files ab
# wrote gives the same verdict, the bad-input exits (no such revision: 2; a base that does not
# build: 3 with the build log's path), and that the user's work tree is left as it was. Then
# `gate --calibrate --ab --build --bench` on the same repository (exact rows only), and a
# calibration whose injected trial fails part-way (v6): its partial report, exit 3.
#
# Timing verdicts here are side by side in one run (ab interleaves base and head on one CPU);
# the only timing assertion is "8x the work is slower than 1.5x", with a 50 % threshold.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/install_lib.sh"

san=$(build_sanitizers)
if [ -n "$san" ]; then
    # ab builds Release benchmarks and refuses to judge sanitizer results; the installed
    # sanitizer libraries would also need the consumer to carry the same flags.
    skip "sanitizer build ($san)"
fi

install_h2bench "$TMP/prefix"
expect_eq "cmake --install" "$?" 0

R=$TMP/repo
mkdir -p "$R"
cat >"$R/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(joiner C)
find_package(h2bench REQUIRED)
add_executable(joinbench joinbench.c joiner.c)
target_link_libraries(joinbench PRIVATE h2bench::micro)
EOF
cat >"$R/joinbench.c" <<'EOF'
#include <h2bench/micro.h>
#include <stdlib.h>
char *joiner_join(const char *a, const char *b);
static void bench_join(struct h2b_micro_state *st, uint64_t n)
{
    (void)st;
    for (uint64_t i = 0; i < n; i++) {
        char *s = joiner_join("alpha-beta-gamma", "delta-epsilon");
        H2B_MICRO_KEEP(s);
        free(s);
    }
}
H2B_MICRO_BENCH(join, .name = "joiner/join", .fn = bench_join);
int main(int argc, char **argv) { return h2b_micro_main(argc, argv); }
EOF
# joiner.c: WORK rounds of mixing per call; EXTRA_ALLOC adds one allocation per call.
write_joiner() {
    cat >"$R/joiner.c" <<EOF
#include <stdlib.h>
#include <string.h>
char *joiner_join(const char *a, const char *b);
char *joiner_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    volatile unsigned h = 0;
    for (int r = 0; r < $1 * 200; r++)
        for (size_t i = 0; i < la + lb; i++)
            h = h * 31 + (unsigned char)s[i];
    if ($2) {
        char *extra = malloc(24);
        __asm__ volatile("" : : "g"(extra) : "memory");
        free(extra);
    }
    $3
    return s;
}
EOF
}
git -C "$R" init -q
git -C "$R" config user.email t@example.com
git -C "$R" config user.name test
write_joiner 1 0 ""
git -C "$R" add -A && git -C "$R" commit -qm v1 && git -C "$R" tag v1
write_joiner 1 1 ""
git -C "$R" commit -qam v2 && git -C "$R" tag v2
write_joiner 8 0 ""
git -C "$R" commit -qam v3 && git -C "$R" tag v3
write_joiner 1 0 "this does not compile;"
git -C "$R" commit -qam v4 && git -C "$R" tag v4
write_joiner 1 0 ""
git -C "$R" commit -qam v5 && git -C "$R" tag v5
before=$(git -C "$R" status --porcelain=v1 --ignored; ls -A "$R")
worktrees_before=$(git -C "$R" worktree list | wc -l)

BUILDCMD="cmake -S \"\$H2B_AB_SRC\" -B \"\$H2B_AB_BUILD\" -DCMAKE_BUILD_TYPE=Release \
-DCMAKE_PREFIX_PATH=$TMP/prefix && cmake --build \"\$H2B_AB_BUILD\""
ab() {
    (cd "$R" && "$H2BENCH" ab --build "$BUILDCMD" --bench joinbench --work "$TMP/work" \
        --forks 6 --warmup 1ms --time 20ms --epochs 3 "$@")
}

# v1 against v5 (the same code): no regression; allocation counts equal.
ab --base v1 --head v5 --out "$TMP/same" --threshold 1.0 >"$TMP/same.out" 2>"$TMP/same.err"
rc=$?
expect_eq "same code: exit" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/same.out" "$TMP/same.err" >&2
expect_match "same code: allocs/op row" "$(cat "$TMP/same.out")" "same +joiner/join +allocs/op +1 +1"
expect_eq "same code: base.json forks" "$(jq '.micro[0].forks' "$TMP/same/base.json")" 6
expect_eq "same code: head.json forks" "$(jq '.micro[0].fork_ns_per_op | length' "$TMP/same/head.json")" 6
expect_match "same code: ab.md verdict" "$(head -1 "$TMP/same/ab.md")" "^## h2bench ab: PASS"
"$H2BENCH" compare "$TMP/same/base.json" "$TMP/same/head.json" --threshold 1.0 >"$TMP/c1.out" 2>&1
expect_eq "compare agrees (same code)" "$?" 0
expect_match "base built once, reused" "$(cat "$TMP/work/$(git -C "$R" rev-parse v1)/built")" "cmake"

# v2: one more allocation per call: exit 1, whatever the times do.
ab --base v1 --head v2 --out "$TMP/alloc" --threshold 1.0 >"$TMP/alloc.out" 2>"$TMP/alloc.err"
rc=$?
expect_eq "one more allocation: exit" "$rc" 1
expect_match "one more allocation: row" "$(cat "$TMP/alloc.out")" "MORE +joiner/join +allocs/op +1 +2"
expect_match "one more allocation: B/op row" "$(cat "$TMP/alloc.out")" "MORE +joiner/join +B/op"
"$H2BENCH" compare "$TMP/alloc/base.json" "$TMP/alloc/head.json" --threshold 1.0 >"$TMP/c2.out" 2>&1
expect_eq "compare agrees (allocation)" "$?" 1

# v3: eight times the work: ns/op interval wholly above 1.5.
ab --base v1 --head v3 --out "$TMP/slow" --threshold 0.5 >"$TMP/slow.out" 2>"$TMP/slow.err"
rc=$?
expect_eq "8x work: exit" "$rc" 1
expect_match "8x work: ns/op row" "$(cat "$TMP/slow.out")" "SLOWER +joiner/join +ns/op"
"$H2BENCH" compare "$TMP/slow/base.json" "$TMP/slow/head.json" --threshold 0.5 >"$TMP/c3.out" 2>&1
expect_eq "compare agrees (8x work)" "$?" 1

# Bad input.
ab --base no-such-rev >"$TMP/bad.out" 2>&1
expect_eq "no such revision: exit" "$?" 2
expect_match "no such revision: named" "$(cat "$TMP/bad.out")" "no-such-rev"
ab --base v4 --head v1 >"$TMP/nobuild.out" 2>&1
expect_eq "base that does not build: exit" "$?" 3
log=$(sed -n 's/.*see \([^ ]*build\.log\).*/\1/p' "$TMP/nobuild.out")
expect_match "base that does not build: names the log" "$(cat "$TMP/nobuild.out")" "does not build.*build\.log"
expect_match "the build log holds the compiler error" "$(cat "$log" 2>/dev/null)" "error"
(cd "$TMP" && "$H2BENCH" ab --base HEAD >"$TMP/norepo.out" 2>&1)
expect_eq "not a repository: exit" "$?" 2
"$H2BENCH" ab --base v1 --suite nosuch >/dev/null 2>&1
expect_eq "unknown suite: exit" "$?" 2

# gate --calibrate --ab on the user's repository (--build, --bench): the work tree (v5, the same
# code as v1) against v1. Only exact counts are asserted: A/A raises no false alarm on the
# allocation rows and +1 allocation per op is caught in every trial; instructions are n/a
# without --callgrind. (Timing rows are tallied, never asserted: their rates are what
# calibration measures.)
calib() {
    (cd "$R" && "$H2BENCH" gate --calibrate 2 --ab --build "$BUILDCMD" --bench joinbench \
        --work "$TMP/work" --forks 4 "$@")
}
row() { # row FILE GATE KIND FIELD
    jq -r --arg g "$2" --arg k "$3" --arg f "$4" \
        '.rows[] | select(.gate == $g) | .[$k][$f] // "-"' "$1"
}
calib --base v1 --inject alloc --json "$TMP/cal.json" --md "$TMP/cal.md" \
    >"$TMP/cal.out" 2>"$TMP/cal.err"
rc=$?
expect_eq "calibrate --ab: exit" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/cal.out" "$TMP/cal.err" >&2
expect_eq "calibrate --ab: measurement" "$(jq -r .measurement "$TMP/cal.json")" ab
expect_match "calibrate --ab: the command names the bench" "$(jq -r .command "$TMP/cal.json")" \
    "--bench joinbench"
expect_eq "calibrate --ab: A/A trials" "$(row "$TMP/cal.json" "joiner/join allocs/op" aa trials)" 2
expect_eq "calibrate --ab: A/A false alarms" "$(row "$TMP/cal.json" "joiner/join allocs/op" aa red)" 0
expect_eq "calibrate --ab: +1 alloc detected" "$(row "$TMP/cal.json" "joiner/join allocs/op" alloc red)" 2
expect_eq "calibrate --ab: ns/op tallied" "$(row "$TMP/cal.json" "joiner/join ns/op" aa trials)" 2
expect_eq "calibrate --ab: complete" "$(jq -r '.stopped // "complete"' "$TMP/cal.json")" complete
expect_match "calibrate --ab: markdown row" "$(cat "$TMP/cal.md")" \
    '^\| `joiner/join allocs/op` \| 0/2 0% \[0\.0, 65\.8\] \| 2/2 100% \[34\.2, 100\.0\] \|'
(cd "$TMP" && "$H2BENCH" gate --calibrate 2 --bench x >/dev/null 2>"$TMP/calbad.err")
expect_eq "calibrate: --bench without --ab exit" "$?" 2

# A trial that fails part-way: v6's benchmark refuses to run with H2B_INJECT_SLOW set, so the
# A/A trials run and the first injected one fails. The tallies so far are still printed and
# written (marked incomplete), and the exit is 3.
sed -i 's/^int main(int argc, char \*\*argv) { return h2b_micro_main(argc, argv); }$/int main(int argc, char **argv) { return getenv("H2B_INJECT_SLOW") ? 1 : h2b_micro_main(argc, argv); }/' \
    "$R/joinbench.c"
expect_eq "v6: main refuses the injection" "$(grep -c 'getenv("H2B_INJECT_SLOW")' "$R/joinbench.c")" 1
git -C "$R" commit -qam v6 && git -C "$R" tag v6
calib --base v6 --inject slow --json "$TMP/part.json" --md "$TMP/part.md" \
    >"$TMP/part.out" 2>"$TMP/part.err"
expect_eq "failed trial: exit" "$?" 3
expect_match "failed trial: says which" "$(cat "$TMP/part.err")" "failed|fail"
expect_match "failed trial: the table is printed, incomplete" "$(cat "$TMP/part.out")" "^INCOMPLETE: "
expect_eq "failed trial: A/A tallied" "$(row "$TMP/part.json" "joiner/join allocs/op" aa trials)" 2
expect_match "failed trial: json says why it stopped" "$(jq -r .stopped "$TMP/part.json")" "."
expect_match "failed trial: markdown says incomplete" "$(cat "$TMP/part.md")" "^\*\*Incomplete:\*\*"
git -C "$R" reset -q --hard v5

# Nothing in the user's tree changed (status, ignored files, entries).
after=$(git -C "$R" status --porcelain=v1 --ignored; ls -A "$R")
expect_eq "work tree unchanged" "$after" "$before"
# ab checks revisions out in clones of their own: no worktree registered in the repository
expect_eq "no worktree registered" "$(git -C "$R" worktree list | wc -l)" "$worktrees_before"
expect_eq "no .git/worktrees" "$(ls -A "$R/.git/worktrees" 2>/dev/null | wc -l)" 0
finish
