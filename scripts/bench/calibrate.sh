#!/usr/bin/env bash
# calibrate.sh - the measured false-alarm and detection rates of docs/gates.md ("Calibration"):
# `h2bench gate --calibrate` on the micro suite (gates/ceilings.json), on h2ref's budgets
# scenario (gates/budgets-ceilings.json) and with `h2bench ab` on a subset of the suite, each
# writing its markdown and JSON into OUT, then one summary table per gate kind (summary.md).
#
# usage: scripts/bench/calibrate.sh [OUT] [build/bin]
#   N=10 AA=20      trials per injection (and benchmark or cell) / of unchanged code (A/A)
#   WHAT="micro budgets ab"   which calibrations to run
#   INJECT=...      the injections (default: micro alloc,instr,slow; budgets alloc,instr; ab
#                   slow,slow25). INJECT=aa runs the A/A half alone (the busy rows of the docs)
#   BUSY=1          keep CPU 1 (the client's) busy with a spin loop the whole time
#   PROFILE=ci      the micro profile; quick gives the same allocation and callgrind counts in
#                   a third of the time (the counts do not depend on the profile's forks or
#                   pass lengths) but is not what `make -f Makefile.ci gate` runs
#   AB_FILTER=...   the benchmarks of the ab calibration (default h2/response-encoding/8)
#   AB_BASE=HEAD    ab's base revision; AB_WORK=DIR its --work (default: ab's cache)
#   AB_FORKS=10     forks a side in each ab trial
# Run it from the repository root, with a Release build in build/.
set -euo pipefail
OUT=${1:-calibration}
BIN=${2:-build/bin}
N=${N:-10}
AA=${AA:-20}
WHAT=${WHAT:-micro budgets ab}
PROFILE=${PROFILE:-ci}
AB_FILTER=${AB_FILTER:-^h2/response-encoding/8$}
[ -x "$BIN/h2bench" ] || { echo "no $BIN/h2bench: build first" >&2; exit 2; }
mkdir -p "$OUT"
SPIN=
cleanup() { [ -n "$SPIN" ] && kill "$SPIN" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
if [ "${BUSY:-0}" = 1 ]; then
    taskset -c 1 sh -c 'while :; do :; done' &
    SPIN=$!
fi
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "calibrate.sh: $(date -u +%FT%TZ), $(git rev-parse --short HEAD), BUSY=${BUSY:-0}, load $load" \
    | tee "$OUT/conditions.txt"

# cal NAME INJECT ARGS...: one calibration, AA A/A trials and N per injection
cal() {
    local name=$1 inject=$2
    shift 2
    echo "== $name: gate --calibrate $N --aa-trials $AA --inject $inject $*" | tee -a "$OUT/conditions.txt"
    local t0=$SECONDS
    "$BIN/h2bench" gate --calibrate "$N" --aa-trials "$AA" --inject "$inject" "$@" --md "$OUT/$name.md" \
        --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.log"
    echo "   $((SECONDS - t0)) s" | tee -a "$OUT/conditions.txt"
}

for w in $WHAT; do
    case $w in
    micro)
        set -- --ceilings gates/ceilings.json --profile "$PROFILE" --callgrind --cpu 0
        cal micro "${INJECT:-alloc,instr,slow}" "$@"
        ;;
    budgets)
        set -- --ceilings gates/budgets-ceilings.json --scenario scenarios/budgets.json --filter h2ref
        cal budgets "${INJECT:-alloc,instr}" "$@"
        ;;
    ab)
        set -- --ab --base "${AB_BASE:-HEAD}" --forks "${AB_FORKS:-10}" --filter "$AB_FILTER"
        [ -n "${AB_WORK:-}" ] && set -- "$@" --work "$AB_WORK"
        cal ab "${INJECT:-slow,slow25}" "$@"
        ;;
    esac
done

# One row per gate kind (a metric of a measurement): the worst A/A row and the weakest
# detection over the rows of that kind, each as red/trials.
python3 - "$OUT" $WHAT <<'PY' | tee "$OUT/summary.md"
import json, os, sys
out, what = sys.argv[1], sys.argv[2:]
kinds = ["aa", "alloc", "instr", "slow", "slow25"]
print("| measurement | gate kind | rows | A/A false alarms (worst row) | +1 alloc | +1 % instr | 2x time | +25 % time |")
print("|---|---|---|---|---|---|---|---|")
for w in what:
    files = [f for f in (w + ".json",) if os.path.exists(os.path.join(out, f))]
    groups = {}
    for f in files:
        doc = json.load(open(os.path.join(out, f)))
        for r in doc["rows"]:
            metric = r["gate"].rsplit(" ", 1)[1]
            g = groups.setdefault(metric, {"rows": set(), **{k: [] for k in kinds}})
            g["rows"].add(r["gate"])
            for k in kinds:
                if k in r and "trials" in r[k]:
                    g[k].append((r[k]["red"], r[k]["trials"]))
    for metric, g in groups.items():
        def cell(k, worst):
            v = g[k]
            if not v:
                return "n/a"
            red, n = (max if worst else min)(v, key=lambda t: t[0] / t[1])
            return "%d/%d" % (red, n) + ("" if len(v) == 1 else " (%s of %d rows)" % ("worst" if worst else "least", len(v)))
        print("| %s | %s | %d | %s |" % (w, metric, len(g["rows"]),
              " | ".join(cell(k, k == "aa") for k in kinds)))
PY
