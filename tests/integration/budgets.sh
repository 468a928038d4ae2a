#!/usr/bin/env bash
# budgets.sh - per-request budgets end to end, against a server with known costs
# (budget_server.c) started as command targets:
#  - K=5 allocations of 777 B per request cost exactly 5 allocations and 3,885 bytes more than
#    K=0, and 3 extra writes exactly 3 more writes per request;
#  - a statically linked build gets null allocation and syscall budgets naming the reason;
#  - instructions come from callgrind, two runs within 0.5 %;
#  - gates on the cells: proposed ceilings pass, a K=1 build fails naming cell and metric (exit
#    1), a null budget under a ceiling is invalid (exit 3), a missing cell fails, a malformed
#    cells section is exit 2 at file:line:column;
#  - bad command targets (exits at once, never listens, not executable) fail their cells with
#    the reason, exit 3, the results file validates and the good target is still measured.
. "$(dirname "$0")/lib.sh"
DATA=$SRC/tests/data/budgets
CHECK=$BIN/../tests/results_check
TBIN=$BIN/../tests
for f in kat bad; do
    sed -e "s|{bin}|$TBIN|g" -e "s|{data}|$DATA|g" "$DATA/$f.json" >"$TMP/$f.json"
done
# The runs after the first ask only for counts: no callgrind and no RSS pass (each costs seconds
# per target, and the first run already checks both).
sed -e 's|"instructions": true, "rss_connections": 50|"instructions": false, "rss_connections": 0|' \
    "$TMP/kat.json" >"$TMP/kat-counts.json"

get() { # get FILE TARGET FIELD: the first cell of TARGET, budgets.FIELD (why.FIELD: its reason from the note)
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cell = next(c for c in doc["matrix"] if c["target"] == sys.argv[2])
b = cell.get("budgets") or {}
f = sys.argv[3]
if f.startswith("why."):  # the reason of a null budget, from the "metric: reason; ..." note
    note = b.get("note") or ""
    at = note.find(f[4:] + ": ")
    print(note[at + len(f) - 2:].split("; ")[0] if at >= 0 else "")
elif f in ("status", "reason"):
    print(cell.get(f, ""))
else:
    v = b.get(f)
    print("null" if v is None else (repr(v) if not isinstance(v, float) else "%.6f" % v))
PY
}

"$H2BENCH" run "$TMP/kat.json" --out "$TMP/kat-r.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "kat run exit" "$?" 0
"$CHECK" "$TMP/kat-r.json" >/dev/null
expect_eq "kat results validate" "$?" 0
a0=$(get "$TMP/kat-r.json" k0 allocs_per_request)
a5=$(get "$TMP/kat-r.json" k5w3 allocs_per_request)
b0=$(get "$TMP/kat-r.json" k0 bytes_per_request)
b5=$(get "$TMP/kat-r.json" k5w3 bytes_per_request)
w0=$(get "$TMP/kat-r.json" k0 writes_per_request)
w3=$(get "$TMP/kat-r.json" k5w3 writes_per_request)
expect_eq "K=5 - K=0 allocations" "$(python3 -c "print('%.6f' % ($a5 - $a0))")" "5.000000"
expect_eq "K=5 - K=0 bytes" "$(python3 -c "print('%.6f' % ($b5 - $b0))")" "3885.000000"
expect_eq "W=3 - W=0 writes" "$(python3 -c "print('%.6f' % ($w3 - $w0))")" "3.000000"
expect_eq "k0 counted by the preload" "$(get "$TMP/kat-r.json" k0 alloc_source)" "'preload'"
expect_match "k0 reads counted" "$(get "$TMP/kat-r.json" k0 reads_per_request)" '^0\.[0-9]+$|^[1-9]'
expect_match "k0 instructions measured" "$(get "$TMP/kat-r.json" k0 instructions_per_request)" \
    '^[0-9]+\.[0-9]+$'
runs=$(python3 -c "
import json; d=json.load(open('$TMP/kat-r.json'))
r=[c for c in d['matrix'] if c['target']=='k0'][0]['budgets']['instructions_runs']
print('ok' if abs(r[0]-r[1]) <= 0.005*max(r) else 'apart %s' % r)")
expect_eq "two callgrind runs within 0.5 %" "$runs" ok
expect_match "k0 RSS per connection" "$(get "$TMP/kat-r.json" k0 rss_per_connection_kib)" '^[0-9]'
expect_eq "static: allocations null" "$(get "$TMP/kat-r.json" static allocs_per_request)" null
expect_match "static: the reason" "$(get "$TMP/kat-r.json" static why.allocs_per_request)" \
    'statically linked'
expect_eq "static: writes null" "$(get "$TMP/kat-r.json" static writes_per_request)" null
expect_match "report table" "$(cat "$TMP/out")" 'What a request costs each server'

# The report's table: one column per target, a null with its reason.
"$H2BENCH" report "$TMP/kat-r.json" -o "$TMP/rep" >/dev/null 2>&1
expect_eq "report exit" "$?" 0
rep=$(cat "$TMP/rep/REPORT.md")
expect_match "report: budgets section" "$rep" '## What a request costs each server'
expect_match "report: columns" "$rep" '\| per request \| k0 \| k5w3 \| static \|'
expect_match "report: K=5 allocations" "$rep" '\| allocations \| [0-9.]+ \| [0-9.]+ \| null: [^|]*statically linked'

# The same figures again: allocation and syscall budgets are exact.
grep -q '"instructions": false' "$TMP/kat-counts.json"
expect_eq "counts-only scenario made" "$?" 0
"$H2BENCH" run "$TMP/kat-counts.json" --out "$TMP/kat-r2.json" --no-progress >/dev/null 2>&1
for f in allocs_per_request bytes_per_request reads_per_request writes_per_request; do
    expect_eq "second run, $f" "$(get "$TMP/kat-r2.json" k5w3 $f)" "$(get "$TMP/kat-r.json" k5w3 $f)"
done

# The gate on the budgets: ceilings proposed from this run pass; a K=1 build of the server
# under the same name fails, naming the cell and the metric, exit 1.
python3 - "$TMP/kat-r.json" "$TMP/kat-ceil.json" "$TMP/kat-ceil-counts.json" \
    "$TMP/kat-ceil-ratio.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
b = next(c for c in doc["matrix"] if c["target"] == "k0")["budgets"]
why = "budget_server K=0, integration.budgets"
cell = {k: {"max": b[k], "why": why} for k in
        ("allocs_per_request", "bytes_per_request", "reads_per_request", "writes_per_request",
         "writes_per_read", "rss_per_connection_kib")}
cell["rss_per_connection_kib"]["max"] = b["rss_per_connection_kib"] * 2 + 8
cell["instructions_per_request"] = {"max": b["instructions_per_request"], "tolerance": 0.005,
                                    "why": why}
# The req/s floor against k5w3 is set at 0.9 of the ratio this run measured, so the row checks the
# gate's arithmetic (median req/s of each side from the results) and not the machine: the two
# cells run one after the other, and a busy spell during one of them moved a fixed floor of 0.2
# (k0 / k5w3 was 0.16 in a CI run with the budgets gate's callgrind passes beside the suite).
rps = {c["target"]: c["req_per_s"] for c in doc["matrix"]}
cell["min_ratio"] = {"reference": "k5w3", "min": round(0.9 * rps["k0"] / rps["k5w3"], 6),
                     "why": "0.9 x the ratio this run measured"}
json.dump({"schema": "h2bench.ceilings/1", "cells": {"k0:2x2": cell}}, open(sys.argv[2], "w"),
          indent=1)
# the same without the rows a counts-only run leaves null
for k in ("instructions_per_request", "rss_per_connection_kib"):
    del cell[k]
json.dump({"schema": "h2bench.ceilings/1", "cells": {"k0:2x2": cell}}, open(sys.argv[3], "w"),
          indent=1)
# and the ratio's row alone, its floor at 1.1 x the measured ratio: it must fail
ratio = {"min_ratio": dict(cell["min_ratio"], min=round(1.1 * rps["k0"] / rps["k5w3"], 6))}
json.dump({"schema": "h2bench.ceilings/1", "cells": {"k0:2x2": ratio}},
          open(sys.argv[4], "w"), indent=1)
PY
# In a sanitizer build the results cannot be gated (valgrind cannot run the sanitized targets,
# so instructions are null under a ceiling): the gate must say invalid (3) instead.
san=0
"$H2BENCH" --version | grep -q sanitizers && san=1
"$H2BENCH" gate --ceilings "$TMP/kat-ceil.json" --results "$TMP/kat-r.json" >"$TMP/gate" 2>&1
rc=$?
if [ "$san" = 1 ]; then
    expect_eq "sanitizer build: the budgets gate is invalid" "$rc" 3
else
    expect_eq "gate on the budgets passes" "$rc" 0
    expect_match "gate rows" "$(cat "$TMP/gate")" 'PASS +k0:2x2 allocs_per_request'
    expect_match "gate ratio row" "$(cat "$TMP/gate")" 'PASS +k0:2x2 min_ratio'
    "$H2BENCH" gate --ceilings "$TMP/kat-ceil-ratio.json" --results "$TMP/kat-r.json" >"$TMP/gate" 2>&1
    expect_eq "a req/s floor above the measured ratio fails" "$?" 1
    expect_match "its row" "$(cat "$TMP/gate")" 'FAIL +k0:2x2 min_ratio'
fi
sed -e 's|"--port", "{port}"\]|"--port", "{port}", "--allocs", "1"]|' "$TMP/kat.json" \
    >"$TMP/k1.json"
grep -q -- '"--allocs", "1"' "$TMP/k1.json"
expect_eq "K=1 scenario made" "$?" 0
"$H2BENCH" run "$TMP/k1.json" --out "$TMP/k1-r.json" --no-progress >/dev/null 2>&1
"$H2BENCH" gate --ceilings "$TMP/kat-ceil-counts.json" --results "$TMP/k1-r.json" >"$TMP/gate" 2>&1
rc=$?
if [ "$san" = 1 ]; then
    expect_eq "sanitizer build: the K=1 gate is invalid" "$rc" 3
else
    expect_eq "K=1 build fails the gate" "$rc" 1
    expect_match "K=1: the cell and the metric named" "$(cat "$TMP/gate")" \
        'FAIL +k0:2x2 allocs_per_request .* allocs_per_request [0-9.]+, ceiling'
fi
# A ceiling on a budget that is null (statically linked) is invalid: exit 3, with the reason.
printf '%s' '{"schema": "h2bench.ceilings/1", "cells": {"static:2x2": {"allocs_per_request":
  {"max": 0, "why": "t"}}, "gone:1x1": {"writes_per_request": {"max": 1, "why": "t"}}}}' \
    >"$TMP/null-ceil.json"
"$H2BENCH" gate --ceilings "$TMP/null-ceil.json" --results "$TMP/kat-r.json" >"$TMP/gate" 2>&1
expect_eq "null budget under a ceiling: exit 3" "$?" 3
expect_match "null: the reason" "$(cat "$TMP/gate")" 'INVALID .*static:2x2 .*statically linked'
expect_match "missing cell named" "$(cat "$TMP/gate")" 'MISSING .*gone:1x1 .*no cell gone:1x1'
# Malformed cells section: exit 2, file:line:column.
printf '{"schema": "h2bench.ceilings/1",\n "cells": {"h2ref:1xq": {"allocs_per_request": {"max": 0, "why": "t"}}}}\n' \
    >"$TMP/bad-ceil.json"
"$H2BENCH" gate --ceilings "$TMP/bad-ceil.json" --results "$TMP/kat-r.json" >"$TMP/gate" 2>&1
expect_eq "bad cell key: exit 2" "$?" 2
expect_match "bad cell key: located" "$(cat "$TMP/gate")" 'bad-ceil.json:2:[0-9]+: .*TARGET:CONNECTIONSxSTREAMS'
printf '{"schema": "h2bench.ceilings/1",\n "cells": {"k0:2x2": {"allocs": {"max": 0, "why": "t"}}}}\n' \
    >"$TMP/bad-ceil.json"
"$H2BENCH" gate --ceilings "$TMP/bad-ceil.json" --results "$TMP/kat-r.json" >"$TMP/gate" 2>&1
expect_eq "unknown cell metric: exit 2" "$?" 2
expect_match "unknown cell metric: named" "$(cat "$TMP/gate")" 'unknown ceiling'

# Bad command targets.
"$H2BENCH" run "$TMP/bad.json" --out "$TMP/bad-r.json" --no-progress >"$TMP/out" 2>"$TMP/err"
expect_eq "bad targets exit" "$?" 3
"$CHECK" "$TMP/bad-r.json" >/dev/null
expect_eq "bad targets: results validate" "$?" 0
expect_eq "quits failed" "$(get "$TMP/bad-r.json" quits status)" failed
expect_match "quits: exited, stderr quoted" "$(get "$TMP/bad-r.json" quits reason)" \
    'exited with status 4 .*stderr: budget_server: exiting at once'
expect_match "deaf: never answered" "$(get "$TMP/bad-r.json" deaf reason)" \
    'not answering after ready_timeout_s .*stderr: budget_server: not listening'
expect_match "noexec: not executable" "$(get "$TMP/bad-r.json" noexec reason)" 'not executable'
expect_eq "good still measured" "$(get "$TMP/bad-r.json" good status)" ok
expect_match "good has budgets" "$(get "$TMP/bad-r.json" good allocs_per_request)" '^[0-9]'
expect_match "bad target budgets null with reason" \
    "$(get "$TMP/bad-r.json" quits why.allocs_per_request)" 'did not start'
finish
