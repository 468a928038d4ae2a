#!/usr/bin/env bash
# tls_bulk.sh - the TLS bulk path of h2bench serve and h2bench load: the server gathers its
# TLS records and sends many in one system call (its write BIO), the client reads ahead many
# records per read; both counted with strace against the TLS records the client received, on
# one connection of 1 MiB GETs. Then slow readers (curl --limit-rate) over h2 and over HTTP/1.1
# with Connection: close, so the server's socket fills while records wait in its BIO: every
# byte must arrive, in order, before the close.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
command -v strace >/dev/null || skip "strace is not installed"

N=40
calls() { # strace -c summary, syscall names (regex): the calls they made
    awk -v re="^($2)\$" '$NF ~ re && $4 ~ /^[0-9]+$/ { s += $4 } END { print s + 0 }' "$1"
}

# The server under strace: its sends of every kind, from start to exit. start_serve runs it
# through a wrapper that execs strace (as lib.sh's --io wrapper does), so the ready line, the
# --io checks of H2B_TEST_IO and the server's stderr are start_serve's. LeakSanitizer cannot run
# under ptrace: the two straced processes go without it (the slow-reader server below has it).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
printf '#!/bin/sh\nexec strace -f -qq -c -e trace=write,writev,sendto,sendmsg -o "%s" "%s" "$@"\n' \
    "$TMP/srv.strace" "$H2BENCH" >"$TMP/straced"
chmod +x "$TMP/straced"
H2BENCH=$TMP/straced start_serve straced --tls --threads 1 || { finish; exit; }
STRACE_PID=$SERVE_PID
URL=$SERVE_URL
SRV=$(pgrep -P "$STRACE_PID" | head -1)

strace -f -qq -c -e trace=read,recvfrom,recvmsg -o "$TMP/cli.strace" \
    "$H2BENCH" load -c 1 -m 1 -n "$N" --json "$TMP/l.json" "$URL/bytes/1048576" >"$TMP/l.out" 2>&1
expect_eq "load: every response" "$(jq -r '"\(.succeeded) \(.traffic.data)"' "$TMP/l.json")" "$N $((N * 1048576))"
RECORDS=$(jq -r '.tls_records_per_response * '"$N"' | floor' "$TMP/l.json")
expect_match "records: at least 64 per MiB" "$RECORDS" '^[0-9]+$'
[ "$RECORDS" -ge $((N * 64)) ] && ok || fail "records: $RECORDS for $N MiB"

kill -TERM "$SRV"
wait "$STRACE_PID"
expect_eq "server exit under strace" "$?" 0
SENDS=$(calls "$TMP/srv.strace" 'write|writev|sendto|sendmsg')
READS=$(calls "$TMP/cli.strace" 'read|recvfrom|recvmsg')
echo "server: $SENDS sends; client: $READS reads; $RECORDS TLS records of application data"
# One system call per record (or more) is what OpenSSL's socket BIO makes; the write BIO sends up
# to 256 KiB (16 records) at once, and the read-ahead takes up to 128 KiB (8 records) per read.
# The socket filling up splits some of them: a quarter and a half of the records leave room.
[ "$SENDS" -gt 0 ] && [ $((SENDS * 4)) -le "$RECORDS" ] && ok ||
    fail "server: $SENDS sends for $RECORDS records, more than one per 4 records"
[ "$READS" -gt 0 ] && [ $((READS * 2)) -le "$RECORDS" ] && ok ||
    fail "client: $READS reads for $RECORDS records, more than one per 2 records"

# Slow readers: the server's socket fills while records wait in its write BIO.
ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}
ASAN_OPTIONS=${ASAN_OPTIONS%:}
start_serve slow --tls --threads 1 || { finish; exit; }
PID=$SERVE_PID
SURL=$SERVE_URL
python3 -c 'import sys; sys.stdout.buffer.write(bytes(i % 256 for i in range(4000000)))' >"$TMP/want"
curl -sSk --max-time 30 --http2 --limit-rate 2M -o "$TMP/h2.bin" "$SURL/bytes/4000000"
expect_eq "h2, slow reader: every byte in order" "$(cmp -s "$TMP/want" "$TMP/h2.bin" && echo same)" same
# Eight at once, each closing after its response. The close waits until the last records left
# the BIO; this does not force that case (records still in the BIO at the end of a response need
# the socket to fill within its last flush, which these sizes reach only now and then): it
# checks that slow readers get every byte before the close.
CURLS=()
for k in 0 1 2 3 4 5 6 7; do
    size=$((2000000 + k * 97531))
    curl -sSk --max-time 30 --http1.1 -H 'Connection: close' --limit-rate 3M -o "$TMP/h1.$k.bin" \
        -w '%{http_version} %{http_code}' "$SURL/bytes/$size" >"$TMP/h1.$k.code" &
    CURLS+=($!)
done
for p in "${CURLS[@]}"; do wait "$p"; done
bad=
for k in 0 1 2 3 4 5 6 7; do
    size=$((2000000 + k * 97531))
    [ "$(cat "$TMP/h1.$k.code")" = "1.1 200" ] && cmp -s -n "$size" "$TMP/want" "$TMP/h1.$k.bin" &&
        [ "$(stat -c %s "$TMP/h1.$k.bin")" = "$size" ] || bad="$bad $k"
done
expect_eq "h1 with Connection: close, 8 slow readers: every byte before the close" "${bad:-none}" none
stop_serve "$PID"
expect_eq "server exit" "$?" 0
finish
