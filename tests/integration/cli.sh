#!/usr/bin/env bash
# cli.sh - the root command: --version, --help, unknown commands and flags.
. "$(dirname "$0")/lib.sh"

out=$("$H2BENCH" --version); rc=$?
expect_eq "--version exit" "$rc" 0
expect_match "--version text" "$out" '^h2bench [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{12}(-dirty)?|unknown'

out=$("$H2BENCH" --help); rc=$?
expect_eq "--help exit" "$rc" 0
expect_match "--help lists commands" "$out" 'commands:'

"$H2BENCH" no-such-command >"$TMP/out" 2>"$TMP/err"; rc=$?
expect_eq "unknown command exit" "$rc" 2
expect_eq "unknown command stdout empty" "$(cat "$TMP/out")" ""
expect_match "unknown command usage on stderr" "$(cat "$TMP/err")" "unknown command 'no-such-command'"
expect_match "usage on stderr" "$(cat "$TMP/err")" 'usage: h2bench'

"$H2BENCH" >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "no command exit" "$rc" 2

"$H2BENCH" --no-such-flag >/dev/null 2>"$TMP/err"; rc=$?
expect_eq "unknown flag exit" "$rc" 2
# -h is --help for every command; help CMD is CMD --help; micro names itself as typed
for cmd in serve run micro load gate compare report; do
    "$H2BENCH" "$cmd" -h >"$TMP/out" 2>"$TMP/err"; rc=$?
    expect_eq "$cmd -h exit" "$rc" 0
    expect_match "$cmd -h usage" "$(cat "$TMP/out")" "usage: h2bench $cmd"
done
expect_match "help load" "$("$H2BENCH" help load)" 'usage: h2bench load'
expect_match "micro --help names h2bench micro" "$("$H2BENCH" micro --help)" '^usage: h2bench micro'
finish
