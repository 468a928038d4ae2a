#!/usr/bin/env bash
# run_protocols.sh - scenarios/protocols.json and protocols-bulk.json, reduced to tiny counts, run
# for real: every expected cell (target x protocol x TLS) is in the results once with its protocol
# and tls fields, the cells a target cannot serve are "skipped" with a reason (nghttpd's h1, the
# peers' h3) and shown so on the console, TLS cells carry the negotiated version, cipher and TLS
# records per response (at least 64 for a 1 MiB body), and no cell failed.
. "$(dirname "$0")/lib.sh"
for p in nginx h2o nghttpd; do
    command -v $p >/dev/null || { fail "$p not installed (make -f Makefile.ci deps)"; finish; exit; }
done
jq '.matrix |= (del(.duration_s, .warmup_s) | .connections = [2] | .streams = [4]
                | .requests = 200 | .min_requests = 100)' \
    "$SRC/scenarios/protocols.json" >"$TMP/protocols.json"
"$H2BENCH" run "$TMP/protocols.json" --out "$TMP/small.json" >"$TMP/small.out" 2>"$TMP/small.err"
expect_eq "small: exit" "$?" 0
expect_match "small: 0 failed" "$(cat "$TMP/small.out")" '\(20 cells, 0 failed'
expect_match "small: skip shown" "$(cat "$TMP/small.out")" 'nghttpd +h1 .*SKIPPED: peer nghttpd does not serve h1'
"$BIN/../tests/results_check" "$TMP/small.json" >/dev/null 2>&1
expect_eq "small: results file valid" "$?" 0
cells=$(jq -r '.matrix[] | [.target, .protocol, (.tls|tostring), .status] | join(" ")' "$TMP/small.json" | sort)
want=""
for t in h2ref nginx h2o nghttpd; do
    for pt in "h1 false" "h1 true" "h2 false" "h2 true" "h3 true"; do
        set -- $pt
        st=ok
        [ "$t" = nghttpd ] && [ "$1" = h1 ] && st=skipped
        [ "$t" != h2ref ] && [ "$1" = h3 ] && st=skipped
        want+="$t $1 $2 $st"$'\n'
    done
done
expect_eq "small: every expected cell once, with protocol, tls and status" "$cells" "$(printf '%s' "$want" | sort)"
expect_eq "small: skipped cells say why" \
    "$(jq '[.matrix[] | select(.status == "skipped") | select((.reason // "") == "")] | length' "$TMP/small.json")" 0
expect_eq "small: skipped cells have no measurement" \
    "$(jq '[.matrix[] | select(.status == "skipped") | select(.req_per_s != null)] | length' "$TMP/small.json")" 0
expect_eq "small: h1/h2 TLS cells have version, cipher, records per response" \
    "$(jq '[.matrix[] | select(.tls and .status == "ok" and .protocol != "h3")
            | select((.tls_version | startswith("TLSv1")) and (.tls_cipher | length > 0)
                     and .tls_records_per_response >= 0.1)] | length' "$TMP/small.json")" 7
expect_eq "small: cleartext cells have no TLS fields" \
    "$(jq '[.matrix[] | select(.tls == false) | select(has("tls_version") or has("tls_records_per_response"))] | length' "$TMP/small.json")" 0
expect_match "small: the h3 cell says why it has no records" \
    "$(jq -r '.matrix[] | select(.protocol == "h3" and .status == "ok") | .note' "$TMP/small.json")" 'QUIC carries TLS'
expect_eq "small: h1 cells ran one stream per connection" \
    "$(jq '[.matrix[] | select(.protocol == "h1") | .streams_effective] | unique' -c "$TMP/small.json")" "[1]"

jq '.matrix |= (del(.duration_s, .warmup_s) | .path = "/bytes/1048576" | .requests = 20
                | .min_requests = 10)' \
    "$SRC/scenarios/protocols-bulk.json" >"$TMP/bulk.json"
"$H2BENCH" run "$TMP/bulk.json" --out "$TMP/bulk-r.json" >"$TMP/bulk.out" 2>"$TMP/bulk.err"
expect_eq "bulk: exit" "$?" 0
expect_match "bulk: Gbit/s table" "$(cat "$TMP/bulk.out")" 'Gbit/s \(response bytes x 8\)'
expect_eq "bulk: cells (h1 and h2 over TLS, nghttpd's h1 skipped)" \
    "$(jq -r '.matrix[] | [.target, .protocol, (.tls|tostring), .status] | join(" ")' "$TMP/bulk-r.json" | sort | tr '\n' ,)" \
    "h2o h1 true ok,h2o h2 true ok,h2ref h1 true ok,h2ref h2 true ok,nghttpd h1 true skipped,nghttpd h2 true ok,nginx h1 true ok,nginx h2 true ok,"
expect_eq "bulk: TLS 1.3, >= 64 records per 1 MiB response" \
    "$(jq '[.matrix[] | select(.status == "ok") | select(.tls_version == "TLSv1.3" and .tls_records_per_response >= 64)] | length' "$TMP/bulk-r.json")" 7
finish
