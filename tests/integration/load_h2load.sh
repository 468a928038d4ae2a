#!/usr/bin/env bash
# load_h2load.sh - `h2bench load` keeps h2load's meaning (issue 16): warm-up reaches no measured
# figure, -r/--rate-period is a connection ramp, --rps is per client, the text block has h2load's
# line shapes (diffed against the real h2load on the same server, h2c and TLS), --log-file rows
# have h2load's columns, --timing-script-file, -B (also unix:), --connect-to, the TLS options,
# -v and --version; bad input exits 2 naming file:line:column, before any load is sent.
# Needs h2load (nghttp2-client); skipped (77) without it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
command -v h2load >/dev/null || skip "h2load not installed"
start_serve h2c --threads 1 || { finish; exit 1; }
URL=$SERVE_URL
PORT=${URL##*:}

# within A B PCT: |A - B| <= PCT% of B
within() { python3 -c "import sys; a,b,p=map(float,sys.argv[1:]); sys.exit(abs(a-b) > p/100*b)" "$@"; }
# shape: a line with every number replaced by N, so values may differ and layouts may not
# (units too: the same figure may print as 900us in one and 1.2ms in the other)
shape() { sed -E 's/[0-9]+(\.[0-9]+)?(us|ms|s|B|KB|MB|GB)?/N/g; s/ +/ /g'; }
# the figures of "finished in T, R req/s, B/s" and of the "req/s :" row
finished_s() { sed -nE 's/^finished in ([0-9.]+)(ms|s),.*/\1 \2/p' | awk '{print ($2=="ms") ? $1/1000 : $1}'; }
rps_of() { sed -nE 's/^finished in [^,]+, ([0-9.]+) req\/s.*/\1/p'; }
bps_of() { # bytes/s from "traffic: ... (N) total" over the -D seconds given
    sed -nE 's/^traffic: [^(]+\(([0-9]+)\) total.*/\1/p' | awk -v d="$1" '{print $1/d}'; }
client_rps_mean() { sed -nE 's/^req\/s +: +[0-9.]+ +[0-9.]+ +([0-9.]+) .*/\1/p'; }

# 1. Warm-up is excluded: the same --rps run with and without a warm-up gives bytes/s, req/s and
#    per-client req/s within 3 % of each other, and of h2load's within 3 % plus however far
#    h2load's own req/s fell short of the 400 it was asked for (2 clients at 200) in this run: on a
#    busy machine h2load's pacing slips (382 in one CI run), and that is h2load's, not a meaning
#    that differs. A meaning that differs (warm-up counted, --rps per run) is off by 2x.
"$H2BENCH" load --rps 200 -c 2 -D 1 "$URL/hello" >"$TMP/nowarm.out" 2>/dev/null
"$H2BENCH" load --rps 200 -c 2 -D 1 --warm-up-time=1s --json "$TMP/warm.json" "$URL/hello" \
    >"$TMP/warm.out" 2>/dev/null
h2load --rps 200 -c 2 -D 1 "$URL/hello" >"$TMP/h2l-rps.out"
h2l_short=$(rps_of <"$TMP/h2l-rps.out" | awk '{d = (400 - $1) / 400 * 100; print (d < 0 ? -d : d)}')
for what in rps_of "bps_of 1" client_rps_mean; do
    a=$($what <"$TMP/nowarm.out") b=$($what <"$TMP/warm.out") h=$($what <"$TMP/h2l-rps.out")
    tol=$(awk -v s="$h2l_short" 'BEGIN {print 3 + s}')
    echo "warm-up: $what: without $a, with $b, h2load $h (h2load $h2l_short % off its rate: within $tol %)"
    if within "$b" "$a" 3; then ok; else fail "warm-up changes $what: $a without, $b with"; fi
    if within "$b" "$h" "$tol"; then ok; else fail "$what with warm-up $b vs h2load's $h"; fi
done
expect_eq "warm-up: every measured request came after it" "$(jq '.started' "$TMP/warm.json")" \
    "$(jq '.requests + .unfinished' "$TMP/warm.json")"

# 2. -r 2 --rate-period 1s -n 8 -c 4: a connection ramp, h2load's finish time within 10 %.
h2load -r 2 --rate-period 1s -n 8 -c 4 "$URL/hello" >"$TMP/h2l-ramp.out"
"$H2BENCH" load -r 2 --rate-period 1s -n 8 -c 4 "$URL/hello" >"$TMP/ramp.out"
a=$(finished_s <"$TMP/ramp.out") h=$(finished_s <"$TMP/h2l-ramp.out")
echo "ramp: h2bench finished in $a s, h2load in $h s"
if within "$a" "$h" 10; then ok; else fail "-r 2: $a s vs h2load's $h s"; fi

# 3. Line shapes: every line h2load prints appears, in h2load's order and shape, before h2bench's
#    own lines (which follow the req/s row). Count mode, -D with warm-up, -r, and TLS.
compare_shapes() { # NAME ARGS...: runs both, compares the shapes of h2load's lines
    local name=$1
    shift
    h2load "$@" >"$TMP/h2l-$name.out" 2>&1
    "$H2BENCH" load --no-progress "$@" >"$TMP/h2b-$name.out" 2>&1
    shape <"$TMP/h2l-$name.out" >"$TMP/h2l-$name.shape"
    # h2bench's lines after the req/s row are its own
    sed '/^req\/s  /q' "$TMP/h2b-$name.out" | shape >"$TMP/h2b-$name.shape"
    if diff "$TMP/h2l-$name.shape" "$TMP/h2b-$name.shape" >"$TMP/$name.diff"; then ok; else
        fail "$name: line shapes differ from h2load's: $(cat "$TMP/$name.diff")"
    fi
}
compare_shapes count -n 1000 -c 2 -m 4 "$URL/hello"
compare_shapes timed -D 1 --warm-up-time 1 -c 2 "$URL/hello"
compare_shapes ramp -r 2 -n 8 -c 4 "$URL/hello"
start_serve tls --threads 1 --tls || { finish; exit 1; }
compare_shapes tls -n 100 -c 2 "$SERVE_URL/hello"
expect_match "TLS lines" "$(cat "$TMP/h2b-tls.out")" \
    $'TLS Protocol: TLSv1\\.[23]\nCipher: [A-Z0-9_-]+\nServer Temp Key: [A-Za-z0-9 -]+ bits\nApplication protocol: h2'
# the TLS options reach OpenSSL: a TLS 1.3 suite and group the server takes
"$H2BENCH" load -n 10 --tls13-ciphers TLS_AES_128_GCM_SHA256 --groups P-256 --ktls \
    "$SERVE_URL/hello" >"$TMP/tlsopt.out" 2>&1
expect_eq "--tls13-ciphers/--groups/--ktls exit" "$?" 0
expect_match "--tls13-ciphers took effect" "$(cat "$TMP/tlsopt.out")" 'Cipher: TLS_AES_128_GCM_SHA256'
expect_match "--groups took effect" "$(cat "$TMP/tlsopt.out")" 'Server Temp Key: ECDH prime256v1 256 bits'

# 4. --log-file: h2load's columns (start us since the epoch, status, duration us), one row per
#    request, the same count and units as h2load's rows for the same run.
t0_us=$(($(date +%s%N) / 1000))
"$H2BENCH" load -n 100 -c 2 --log-file "$TMP/h2b.log" "$URL/hello" >/dev/null
h2load -n 100 -c 2 --log-file "$TMP/h2l.log" "$URL/hello" >/dev/null
t1_us=$(($(date +%s%N) / 1000))
expect_eq "--log-file rows" "$(wc -l <"$TMP/h2b.log")" "$(wc -l <"$TMP/h2l.log")"
for f in h2b h2l; do
    bad=$(awk -F'\t' -v a="$t0_us" -v b="$t1_us" \
        'NF != 3 || $1 !~ /^[0-9]+$/ || $1 < a || $1 > b || $2 != 200 || $3 !~ /^[0-9]+$/ ||
         $3 > b - a {n++} END {print n+0}' "$TMP/$f.log")
    expect_eq "$f --log-file: rows not 'epoch-us<TAB>200<TAB>us' within the run" "$bad" 0
done

# 5. --timing-script-file: every client replays the lines at their offsets.
printf '0\t%s/hello\n150\t%s/status/204\n300.5\t%s/hello\n' "$URL" "$URL" "$URL" >"$TMP/script"
"$H2BENCH" load -c 2 --timing-script-file "$TMP/script" --json "$TMP/script.json" \
    "http://ignored.invalid/" >"$TMP/script.out"
expect_eq "script: exit" "$?" 0
expect_eq "script: 3 lines x 2 clients, URIs in order" \
    "$(jq -c '[.succeeded, .status_codes["200"], .status_codes["204"]]' "$TMP/script.json")" '[6,4,2]'
if [ "$(jq '.wall_s >= 0.3' "$TMP/script.json")" = true ]; then ok; else
    fail "script: ended before its last offset"; fi
"$H2BENCH" load -c 2 -n 1 --timing-script-file "$TMP/script" --json "$TMP/script1.json" x >/dev/null
expect_eq "script: -n is per client" "$(jq .succeeded "$TMP/script1.json")" 2

# 6. -B and --connect-to: where to connect, not what to ask for.
"$H2BENCH" load -n 4 -B "http://127.0.0.1:$PORT" --json "$TMP/b.json" http://h.invalid/hello >/dev/null
expect_eq "-B: served" "$(jq .succeeded "$TMP/b.json")" 4
"$H2BENCH" load -n 4 --connect-to "127.0.0.1:$PORT" --json "$TMP/ct.json" \
    http://h.invalid:1/hello >/dev/null
expect_eq "--connect-to: served" "$(jq .succeeded "$TMP/ct.json")" 4
python3 "$SRC/tests/integration/fakepeer.py" reset "$TMP/peer.sock" >"$TMP/unix.out" &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/peer.sock" ] && break; sleep 0.05; done
"$H2BENCH" load -n 4 -B "unix:$TMP/peer.sock" --json "$TMP/unix.json" http://h.invalid/ >/dev/null
expect_eq "-B unix: reached HTTP/2 over the socket" "$(jq -c '[.connections_up, .resets]' "$TMP/unix.json")" '[1,4]'

# 7. -v and --version
"$H2BENCH" load -n 2 -v "$URL/hello" >/dev/null 2>"$TMP/v.err"
expect_match "-v: frames" "$(cat "$TMP/v.err")" '\] \[conn 0\] recv HEADERS frame <length=[0-9]+, flags=0x0[45], stream_id=1>'
expect_match "--version" "$("$H2BENCH" load --version)" '^h2bench load [0-9.]+ .*nghttp2/[0-9.]+ OpenSSL'

# 8. Bad input: exit 2, file:line:column and what was expected, before any load.
printf '0\t%s/hello\nten\t%s/x\n' "$URL" "$URL" >"$TMP/bad-offset"
printf '0\t%s/hello\n5 %s/x\n' "$URL" "$URL" >"$TMP/bad-tab"
printf '0\tftp://x/\n' >"$TMP/bad-uri"
printf '%s/hello\nnot a uri\n' "$URL" >"$TMP/bad-i"
check_bad() { # WHAT REGEX ARGS...
    local what=$1 re=$2
    shift 2
    "$H2BENCH" load "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
    expect_eq "$what: exit" "$?" 2
    expect_match "$what: message" "$(head -1 "$TMP/bad.err")" "$re"
    if grep -q 'starting benchmark' "$TMP/bad.out"; then fail "$what: load was started"; else ok; fi
}
check_bad "script offset" "bad-offset:2:1: expected an offset in milliseconds" \
    --timing-script-file "$TMP/bad-offset" x
check_bad "script tab" "bad-tab:2:1: expected 'OFFSET_MS<TAB>URI'" --timing-script-file "$TMP/bad-tab" x
check_bad "script URI" "bad-uri:1:3: bad URI 'ftp://x/'" --timing-script-file "$TMP/bad-uri" x
check_bad "-i line" "bad-i:2:1: bad URI 'not a uri'" -i "$TMP/bad-i"
check_bad "--log-file unwritable" "--log-file $TMP/no/such/dir/log: No such file" \
    --log-file "$TMP/no/such/dir/log" -n 1 "$URL/hello"
check_bad "--ciphers" "--ciphers 'NOPE': OpenSSL accepts none of it" --ciphers NOPE "$URL/hello"
check_bad "--rps with a script" "mutually exclusive" --rps 5 --timing-script-file "$TMP/script" x
finish
