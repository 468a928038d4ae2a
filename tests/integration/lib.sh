# lib.sh - shared helpers for integration scripts: assertions that count, and cleanup of the
# processes a script started. Source it; call `finish` last.
set -u
BIN=${1:?bin dir}
SRC=${2:?source dir}
H2BENCH=$BIN/h2bench
PASSED=0
FAILED=0
PIDS=()
TMP=$(mktemp -d)

cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*" >&2; }

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { if [ "$2" = "$3" ]; then ok; else fail "$1: got '$2', expected '$3'"; fi; }
# expect_match WHAT TEXT REGEX
expect_match() { if printf '%s' "$2" | grep -Eq -- "$3"; then ok; else fail "$1: '$3' not in: $2"; fi; }

# finish: the closing line; a script that made no check fails (it tested nothing).
finish() {
    if [ "$PASSED" -eq 0 ] && [ "$FAILED" -eq 0 ]; then
        fail "no check was made"
    fi
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

# skip REASON: this build or machine cannot run the script; CTest reports it skipped (exit 77,
# SKIP_RETURN_CODE), never passed.
skip() {
    echo "skipped: $*"
    exit 77
}
