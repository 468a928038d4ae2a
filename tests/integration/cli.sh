#!/usr/bin/env bash
# cli.sh - the root command: --version, --help, unknown commands and flags; the error a bad flag
# gets in every command (h2load's shape: one line, "Did you mean", where the options are), help
# for a command that does not exist, missing input files, a refused connection's errno.
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
# A bad flag: its line, a suggestion when one is near, a pointer to --help; never the usage.
for cmd in load micro serve run compare report gate export merge flame ab; do
    "$H2BENCH" $cmd --bogus-flag >"$TMP/out" 2>"$TMP/err"
    expect_eq "$cmd --bogus-flag exit" "$?" 2
    expect_eq "$cmd --bogus-flag: error and pointer only" "$(cat "$TMP/err")" \
        "$(printf "h2bench %s: unknown option '--bogus-flag'\nRun 'h2bench %s --help' for the options." "$cmd" "$cmd")"
done
bad_flag() { # CMD WORD SUGGESTION ARGS...
    local cmd=$1 word=$2 near=$3
    shift 3
    "$H2BENCH" "$cmd" "$word" "$@" >/dev/null 2>"$TMP/err"
    expect_eq "$cmd $word exit" "$?" 2
    expect_match "$cmd $word suggests --$near" "$(cat "$TMP/err")" "Did you mean --$near\?|did you mean --$near\?"
    expect_eq "$cmd $word: at most 3 lines" "$(($(wc -l <"$TMP/err") <= 3))" 1
}
bad_flag load --jsn json x.json http://127.0.0.1:1/
bad_flag load --clinets clients 1 http://127.0.0.1:1/
bad_flag micro --fitler filter x
bad_flag compare --tresholds threshold 0.1 a b
bad_flag export --fromat format bmf x
bad_flag serve --prot port 0
"$H2BENCH" compare --md >/dev/null 2>"$TMP/err"
expect_eq "a flag missing its value" "$(head -n 1 "$TMP/err")" "h2bench compare: option '--md' needs a value"

"$H2BENCH" help nosuch >"$TMP/out" 2>"$TMP/err"
expect_eq "help nosuch exit" "$?" 2
expect_match "help nosuch message" "$(cat "$TMP/err")" "^h2bench help: no command 'nosuch'"

# A missing input file is a usage error (2) in every command.
"$H2BENCH" flame "$TMP/nosuch.folded" -o "$TMP/f.svg" >/dev/null 2>"$TMP/err"
expect_eq "flame: missing profile exit" "$?" 2
expect_match "flame: missing profile message" "$(cat "$TMP/err")" "nosuch\.folded: cannot open: No such file or directory"
"$H2BENCH" serve --tls --cert "$TMP/nosuch.pem" --key "$TMP/nosuch.key" --port 0 >/dev/null 2>"$TMP/err"
expect_eq "serve: missing --cert exit" "$?" 2
expect_match "serve: missing --cert message" "$(cat "$TMP/err")" "^h2bench serve: --cert .*nosuch\.pem: No such file or directory$"
"$H2BENCH" compare "$TMP/nosuch.json" "$TMP/nosuch.json" >/dev/null 2>"$TMP/err"
expect_eq "compare: missing file exit" "$?" 2

# A refused connection says why (the errno text), as h2load does. Port: one just freed.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$H2BENCH" load -n 1 "http://127.0.0.1:$port/" >/dev/null 2>"$TMP/err"
expect_eq "refused: exit" "$?" 3
expect_match "refused: errno text" "$(cat "$TMP/err")" "no connection to 127\.0\.0\.1:$port could be made: Connection refused"
finish
