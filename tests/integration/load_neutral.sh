#!/usr/bin/env bash
# load_neutral.sh - `h2bench load` costs the server what h2load costs it.
#  - The wire: a capture peer (fakepeer.py capture) records each request's header block. With
#    h2load's user-agent (-H), both engines' 1st, 2nd and 10th blocks on a connection are h2load's
#    byte for byte; with h2bench's own user-agent the 1st differs (that value is literal there)
#    and the 2nd and 10th are h2load's again (it is indexed from then on).
#  - The server's instructions per request: h2ref (`h2bench serve --threads 1`) under callgrind at
#    -c 10 -m 10, (Ir(-n N2) - Ir(-n N1)) / (N2 - N1), under h2load and under each engine with
#    h2load's user-agent (scripts/bench/server-ir-by-client.sh). The batching is the server's
#    under callgrind (it is far slower than any client): the reads per request must be equal,
#    and the counts within 1 % (measured: equal to the instruction). h2bench's own user-agent,
#    8 bytes shorter, is printed beside them: it costs the server ~50 instructions less.
# Skips (77) without h2load, valgrind or python3, and in a sanitizer build (valgrind cannot run
# an ASan binary).
. "$(dirname "$0")/lib.sh"
command -v h2load >/dev/null || skip "h2load not installed"
command -v valgrind >/dev/null || skip "valgrind not installed"
command -v python3 >/dev/null || skip "python3 not installed"
san=$("$H2BENCH" --version | sed -n 's/.*sanitizers \([a-z,;]*\).*/\1/p')
[ -z "$san" ] || skip "sanitizer build ($san): valgrind cannot run it"
UA="h2load nghttp2/$(h2load --version | sed -n 's/.*nghttp2\/\([0-9.]*\).*/\1/p' | head -1)"

# --- the wire
python3 "$(dirname "$0")/fakepeer.py" capture >"$TMP/cap.out" 2>"$TMP/cap.err" &
PIDS+=($!)
url=
for _ in $(seq 100); do
    url=$(sed -nE 's/^listening on (http:[^ ]*).*/\1/p' "$TMP/cap.out")
    [ -n "$url" ] && break
    sleep 0.05
done
expect_match "capture peer listening" "$url" '^http://127\.0\.0\.1:[0-9]+$'
# One connection each, in this order: connection 1 is h2load's, 2 and 3 the engines with
# h2load's user-agent, 4 and 5 the engines with their own.
h2load -n 10 -c 1 "$url/hello" >"$TMP/h2load.out" 2>&1
expect_match "h2load: 10 requests" "$(cat "$TMP/h2load.out")" ' 10 succeeded'
conn=1
for ua in h2load own; do
    for engine in fast nghttp2; do
        conn=$((conn + 1))
        args=(load --no-progress --engine "$engine" -n 10 -c 1)
        [ "$ua" = h2load ] && args+=(-H "user-agent: $UA")
        "$H2BENCH" "${args[@]}" "$url/hello" >"$TMP/c$conn.out" 2>&1
        expect_match "$engine ($ua user-agent): 10 requests" "$(cat "$TMP/c$conn.out")" ' 10 succeeded'
    done
done
block() { sed -n "s/^block $1 $2 \([0-9a-f]*\)$/\1/p" "$TMP/cap.out"; }
ref1=$(block 1 1) ref2=$(block 1 2) ref10=$(block 1 10)
expect_match "h2load's first block captured" "$ref1" '^[0-9a-f]{20,}$'
expect_match "h2load's tenth block captured" "$ref10" '^[0-9a-f]+$'
echo "h2load: block 1 $ref1, block 10 $ref10"
conn=1
for ua in h2load own; do
    for engine in fast nghttp2; do
        conn=$((conn + 1))
        if [ "$ua" = h2load ]; then
            expect_eq "$engine, h2load's user-agent: block 1 is h2load's" "$(block $conn 1)" "$ref1"
        else
            b1=$(block $conn 1)
            expect_match "$engine, own user-agent: block 1 captured" "$b1" '^[0-9a-f]{20,}$'
            [ "$b1" != "$ref1" ] && ok || fail "$engine, own user-agent: block 1 should carry its own user-agent"
        fi
        expect_eq "$engine, $ua user-agent: block 2 is h2load's" "$(block $conn 2)" "$ref2"
        expect_eq "$engine, $ua user-agent: block 10 is h2load's" "$(block $conn 10)" "$ref10"
    done
done

# --- the server's instructions per request
CELLS=10,10 SERVERS=h2ref bash "$SRC/scripts/bench/server-ir-by-client.sh" "$BIN" 2000 8000 \
    >"$TMP/ir.out" 2>&1
expect_eq "server-ir-by-client.sh exit" "$?" 0
cat "$TMP/ir.out"
col() { # ROW-PATTERN FIELD (counted from the end: 0 ratio, 1 sends, 2 reads, 3 Ir)
    awk -v p="$1" -v f="$2" 'index($0, p) { print $(NF - f); exit }' "$TMP/ir.out"
}
ref_ir=$(col "h2load " 3)
ref_reads=$(col "h2load " 2)
expect_match "h2load row" "$ref_ir" '^[0-9]+$'
for engine in fast nghttp2; do
    ir=$(col "--engine $engine (h2load's UA)" 3)
    expect_match "$engine row" "$ir" '^[0-9]+$'
    expect_eq "$engine: the server's reads per request equal h2load's" \
        "$(col "--engine $engine (h2load's UA)" 2)" "$ref_reads"
    expect_eq "$engine: the server's instructions per request within 1 % of h2load's ($ir vs $ref_ir)" \
        "$(awk -v a="$ir" -v b="$ref_ir" 'BEGIN { d = a / b - 1; print (d <= 0.01 && d >= -0.01) }')" 1
done
finish
