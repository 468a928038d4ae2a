#!/usr/bin/env bash
# outputs.sh - output and input files that are not regular files (issue 13 defect 4): a device
# or a FIFO given as an output is written in place, never replaced by a regular file; "-" is
# stdout; a FIFO given as input does not hang; two `h2bench run` with one --out cannot both
# write it (the second is refused while the first holds the lock); an output path that cannot be
# written is a usage error before any work is done (issue 30 item 5).
. "$(dirname "$0")/lib.sh"
D=$SRC/tests/data/gate
A=$D/compare-a.json
B=$D/compare-a.json # a self-compare exits 0

# A character device (our own copy of /dev/null when we may mknod; else /dev/null itself, which
# an unprivileged run could never have replaced anyway).
dev=$TMP/null
mknod "$dev" c 1 3 2>/dev/null || dev=/dev/null
"$H2BENCH" compare "$A" "$B" --md "$dev" >/dev/null 2>"$TMP/err"
expect_eq "--md DEVICE exit" "$?" 0
expect_eq "--md DEVICE still a character device" "$(test -c "$dev" && echo chr)" chr
expect_eq "--md DEVICE no temporary left" "$(ls -A "$(dirname "$dev")" | grep -c '^\.null\.tmp')" 0

# A FIFO with a reader: the reader gets the markdown, the FIFO stays a FIFO.
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/from-fifo" &
PIDS+=($!)
timeout 20 "$H2BENCH" compare "$A" "$B" --md "$TMP/fifo" >/dev/null 2>"$TMP/err"
expect_eq "--md FIFO exit" "$?" 0
wait "${PIDS[-1]}"
expect_match "--md FIFO content" "$(head -1 "$TMP/from-fifo")" '^## h2bench compare'
expect_eq "--md FIFO still a FIFO" "$(test -p "$TMP/fifo" && echo fifo)" fifo

# A FIFO as input, nobody writing: an input error at once, not a hang in open().
mkfifo "$TMP/in-fifo"
timeout 20 "$H2BENCH" compare "$TMP/in-fifo" "$B" >/dev/null 2>"$TMP/err"
expect_eq "FIFO input: input error, no hang" "$?" 2
timeout 20 "$H2BENCH" run "$TMP/in-fifo" --dry-run >/dev/null 2>"$TMP/err"
expect_eq "FIFO scenario: input error, no hang" "$?" 2

# Two runs, one --out: while one holds the results file's lock the other is refused (exit 3)
# and the file is left alone.
out=$TMP/res/one.json
mkdir -p "$TMP/res"
echo previous >"$out"
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "w")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[1] + ".held", "w").close()
time.sleep(30)' "$out.lock" &
HOLD=$!
PIDS+=($HOLD)
for _ in $(seq 50); do [ -e "$out.lock.held" ] && break; sleep 0.1; done
timeout 60 "$H2BENCH" run "$SRC/tests/data/run/micro-only.json" --out "$out" >/dev/null \
    2>"$TMP/err"
expect_eq "run with a locked --out: exit" "$?" 3
expect_match "run with a locked --out: message" "$(cat "$TMP/err")" \
    "one\.json: another h2bench is writing this file"
expect_eq "run with a locked --out: file untouched" "$(cat "$out")" previous
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null

# Output paths are checked before the work: a file in a directory that does not exist, or under
# a regular file, exits 2 at once naming the directory, and nothing is run or written.
miss=$TMP/missing
: >"$TMP/plain"
R=$SRC/tests/data/report
check_out() { # WHAT EXPECTED-DIR CMD...
    local what=$1 dir=$2
    shift 2
    timeout 60 "$H2BENCH" "$@" >"$TMP/out" 2>"$TMP/err"
    expect_eq "$what: exit" "$?" 2
    expect_match "$what: names the directory" "$(head -n 1 "$TMP/err")" \
        "^h2bench [a-z]+: [-a-z]+ .*: (directory $dir does not exist|$dir is not a directory)\$"
    expect_eq "$what: nothing on stdout" "$(head -c 200 "$TMP/out")" ""
}
# load: exits before connecting (port 1 refuses: without the check, a runtime error)
check_out "load --json" "$miss" load -n 10 --json "$miss/x.json" http://127.0.0.1:1/
check_out "load --interval-json" "$miss" load -n 10 --interval-json "$miss/i.ndjson" \
    http://127.0.0.1:1/
check_out "load --hdr-log" "$miss" load -n 10 --hdr-log "$miss/h.hlog" http://127.0.0.1:1/
check_out "micro --json" "$miss" micro --filter 'hpack' --json "$miss/m.json"
check_out "compare --md" "$miss" compare "$A" "$B" --md "$miss/c.md"
check_out "export --out" "$miss" export --format bmf "$A" --out "$miss/e.json"
check_out "merge --json" "$miss" merge --json "$miss/m.json" "$A"
check_out "gate --md" "$miss" gate --ceilings "$SRC/gates/ceilings.json" "$A" --md "$miss/g.md"
check_out "gate --junit" "$TMP/plain" gate --ceilings "$SRC/gates/ceilings.json" "$A" \
    --junit "$TMP/plain/g.xml"
check_out "flame --out" "$miss" flame "$SRC/tests/data/prof/simple.folded" -o "$miss/f.svg"
check_out "ab --md" "$miss" ab --base HEAD --md "$miss/ab.md"
# outputs whose directories are created: refused when a part of the path is a regular file
check_out "report -o" "$TMP/plain" report "$R/head.json" -o "$TMP/plain/r"
check_out "run --out" "$TMP/plain" run "$SRC/tests/data/run/micro-only.json" \
    --out "$TMP/plain/x/r.json"
check_out "ab --out" "$TMP/plain" ab --base HEAD --out "$TMP/plain/o"
expect_eq "nothing was created" "$(ls -A "$TMP" | grep -c missing)" 0
# what is created still is: report -o makes its directory and parents
"$H2BENCH" report "$R/head.json" -o "$TMP/new/r" >/dev/null 2>"$TMP/err"
expect_eq "report -o into new directories" "$?" 0
finish
