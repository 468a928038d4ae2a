#!/usr/bin/env bash
# ab_suite.sh - `h2bench ab --suite SCENARIO --bench PATH` on a user's server repository: a
# throwaway git repository holding a small h2c server (a copy of budget_server.c plus a
# work() call per request) built by a plain cc command. The scenario's command target is run
# from the base tree's build and from the head tree's build, interleaved A B B A.
# Revisions: v1 (the base), v2 (one more allocation per request), v3 (four times the work per
# request), v4 (does not build), v5 (the same code as v1).
# Checks: v5 passes (no false alarm), v2 fails on allocs/req (exact), v3 fails on req/s
# (interval wholly below 1 / 1.1) with its p99 row reported, `h2bench compare` on the files ab wrote agrees, bad
# input (no such scenario and a malformed one: exit 2 naming file:line; a base that does not
# build: 3 with the build log), and the user's work tree is left as it was.
#
# Timing verdicts are side by side in one run, with the default 10 % threshold.
. "$(dirname "$0")/lib.sh"

san=$("$H2BENCH" --version | sed -n 's/.*sanitizers \([a-z,;]*\).*/\1/p' | tr ';' ',')
if [ -n "$san" ]; then
    # ab refuses to judge timings measured by a sanitizer build (the client is ours).
    skip "sanitizer build ($san)"
fi

R=$TMP/repo
mkdir -p "$R"
cp "$SRC/tests/integration/budget_server.c" "$R/server.c"
# one work() call per request, in the request handler (before the --allocs knob's loop)
sed -i -e 's/^static int on_frame_recv(/void work(void);\n&/' \
    -e 's/^\(    *\)for (unsigned i = 0; i < knob_allocs; i++) {/\1work();\n&/' "$R/server.c"
expect_eq "work() inserted once" "$(grep -c '^ *work();' "$R/server.c")" 1
# work.c: ROUNDS x 400000 multiply-adds per request (about 0.4 ms per round on this machine,
# so the work, not the loopback round trip, is most of a request); EXTRA adds one allocation
# per request.
# v3 does four times v1's work, not twice: the other vCPU's activity alone (a compile at idle
# priority, as in .ci/run) slows this loop by 37 % on a VM whose vCPUs share cores. Measured at
# 2 rounds against 4: 1,232 req/s quiet and 769 loaded, against 650 and 441. When that load
# comes and goes between forks, twice the work can read as 650 / 769 = 0.85x, inside the
# threshold (a clean-clone CI run saw [0.464, 1.003]). At 4x the ratio is about 0.28.
write_work() {
    cat >"$R/work.c" <<EOF
#include <stdlib.h>
void work(void);
void *volatile work_sink;
void work(void)
{
    volatile unsigned h = 1;
    for (unsigned i = 0; i < $1u * 400000u; i++)
        h = h * 31 + i;
    if ($2) {
        work_sink = malloc(24);
        free(work_sink);
    }
    $3
}
EOF
}
cat >"$R/build.sh" <<'EOF'
#!/bin/sh
# the user's build: one cc command into $H2B_AB_BUILD
exec cc -O2 -o "$H2B_AB_BUILD/srv" server.c work.c $(pkg-config --cflags --libs libnghttp2)
EOF
chmod +x "$R/build.sh"
cat >"$R/bench.json" <<'EOF'
{
  "name": "mysrv-ab",
  "description": "the user's server, one connection, closed loop, with per-request budgets",
  "targets": [
    {"type": "command", "name": "srv", "command": ["./srv", "--port", "{port}"]}
  ],
  "client": {"cpus": "1"},
  "matrix": {"connections": [1], "streams": [1], "requests": 300, "min_requests": 200,
             "repeats": 3},
  "budgets": {"warmup_requests": 100, "requests": 100, "instructions": false,
              "rss_connections": 0}
}
EOF
git -C "$R" init -q
git -C "$R" config user.email t@example.com
git -C "$R" config user.name test
write_work 1 0 ""
git -C "$R" add -A && git -C "$R" commit -qm v1 && git -C "$R" tag v1
write_work 1 1 ""
git -C "$R" commit -qam v2 && git -C "$R" tag v2
write_work 4 0 ""
git -C "$R" commit -qam v3 && git -C "$R" tag v3
write_work 1 0 "this does not compile;"
git -C "$R" commit -qam v4 && git -C "$R" tag v4
write_work 1 0 ""
git -C "$R" commit -qam v5 && git -C "$R" tag v5
before=$(git -C "$R" status --porcelain=v1 --ignored; ls -A "$R")

ab() {
    (cd "$R" && "$H2BENCH" ab --suite bench.json --build ./build.sh --bench srv \
        --work "$TMP/work" --forks 4 "$@")
}

# v1 against v5 (the same code): no regression.
ab --base v1 --head v5 --out "$TMP/same" >"$TMP/same.out" 2>"$TMP/same.err"
rc=$?
expect_eq "same server: exit" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/same.out" "$TMP/same.err" >&2
expect_match "same server: p99 row" "$(cat "$TMP/same.out")" "same +srv:1x1 +p99 "
expect_match "same server: req/s row" "$(cat "$TMP/same.out")" "same +srv:1x1 +req/s "
expect_match "same server: allocs/req row" "$(cat "$TMP/same.out")" "same +srv:1x1 +allocs/req "
expect_eq "same server: 12 samples per side" "$(jq '[.matrix[] | select(.target == "srv")] | length' "$TMP/same/base.json")" 12
expect_eq "same server: the base's scenario runs the base's build" \
    "$(jq -r '.targets[0].command[0]' "$TMP/same/scenario-base.json")" "$TMP/work/$(git -C "$R" rev-parse v1)/build/srv"
expect_match "same server: interleaved A B B A" "$(ls -rt "$TMP/same/runs" | grep json | head -4 | tr '\n' ' ')" \
    "^base-000.json head-000.json head-001.json base-001.json $"
expect_match "same server: ab.md verdict" "$(head -1 "$TMP/same/ab.md")" "^## h2bench ab: PASS"
"$H2BENCH" compare "$TMP/same/base.json" "$TMP/same/head.json" >"$TMP/c1.out" 2>&1
expect_eq "compare agrees (same server)" "$?" 0

# v2: one more allocation per request: exit 1 on the exact budget.
ab --base v1 --head v2 --out "$TMP/alloc" >"$TMP/alloc.out" 2>"$TMP/alloc.err"
rc=$?
expect_eq "one more allocation: exit" "$rc" 1
expect_match "one more allocation: row" "$(cat "$TMP/alloc.out")" "MORE +srv:1x1 +allocs/req "
"$H2BENCH" compare "$TMP/alloc/base.json" "$TMP/alloc/head.json" >"$TMP/c2.out" 2>&1
expect_eq "compare agrees (allocation)" "$?" 1

# v3: four times the work per request: req/s down well beyond the 10 % threshold.
ab --base v1 --head v3 --out "$TMP/slow" >"$TMP/slow.out" 2>"$TMP/slow.err"
rc=$?
expect_eq "4x work: exit" "$rc" 1
[ "$rc" -eq 1 ] || cat "$TMP/slow.out" "$TMP/slow.err" >&2
expect_match "4x work: req/s row" "$(cat "$TMP/slow.out")" "SLOWER +srv:1x1 +req/s "
# p99 is judged and shown with its interval; on a shared machine a request's tail is mostly
# scheduler preemption (both sides suffer it), so neither its verdict nor even the direction of
# its median is asserted: only that the row is there.
expect_match "4x work: p99 row judged" "$(cat "$TMP/slow.out")" "(SLOWER|same) +srv:1x1 +p99 "
"$H2BENCH" compare "$TMP/slow/base.json" "$TMP/slow/head.json" >"$TMP/c3.out" 2>&1
expect_eq "compare agrees (4x work)" "$?" 1

# Bad input.
ab --base v1 --suite "$TMP/nosuch.json" >"$TMP/bad1.out" 2>&1
expect_eq "no such scenario: exit" "$?" 2
expect_match "no such scenario: named" "$(cat "$TMP/bad1.out")" "nosuch\.json"
printf '{\n  "name": "x",\n  "targets": [\n    {"type": "command", "name": "srv"}\n  ]\n}\n' >"$TMP/bad.json"
ab --base v1 --suite "$TMP/bad.json" >"$TMP/bad2.out" 2>&1
expect_eq "malformed scenario: exit" "$?" 2
expect_match "malformed scenario: file:line" "$(cat "$TMP/bad2.out")" "bad\.json:[0-9]+:[0-9]+: "
printf '{"name": "x", "targets": [{"type": "bundled"}], "matrix": {"connections": [1], "streams": [1]}}\n' >"$TMP/nocmd.json"
ab --base v1 --suite "$TMP/nocmd.json" >"$TMP/bad3.out" 2>&1
expect_eq "--bench without a command target: exit" "$?" 2
expect_match "--bench without a command target: says so" "$(cat "$TMP/bad3.out")" 'no target of type "command"'
ab --base v4 --head v1 >"$TMP/nobuild.out" 2>&1
expect_eq "base that does not build: exit" "$?" 3
log=$(sed -n 's/.*see \([^ ]*build\.log\).*/\1/p' "$TMP/nobuild.out")
expect_match "base that does not build: names the log" "$(cat "$TMP/nobuild.out")" "does not build.*build\.log"
expect_match "the build log holds the compiler error" "$(cat "$log" 2>/dev/null)" "error"

# Nothing in the user's tree changed (status, ignored files, entries).
after=$(git -C "$R" status --porcelain=v1 --ignored; ls -A "$R")
expect_eq "work tree unchanged" "$after" "$before"
finish
