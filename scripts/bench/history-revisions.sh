#!/usr/bin/env bash
# history-revisions.sh - the project's own per-request budgets across its first-parent history,
# through the history store: each measured revision is checked out in its own git worktree, its
# h2bench built (Release), `h2bench run scenarios/budgets.json --filter h2ref` run with that
# revision's build and scenario, and the results appended to a store. Then this tree's h2bench
# prints the change points of the instructions and allocations per request: they should fall on
# the commits that changed those counts (callgrind and the counting allocator are exact, so
# --min-points 2 is enough).
#
# Every revision of a long history is too many builds, so the script samples every STEP-th
# revision and then bisects: between two neighbouring measured revisions whose instructions per
# request differ by more than 0.3 % in some cell (two runs of one build agree within about
# 0.05 %), it measures the middle revision, and again in each half that still differs, until
# the two sides are adjacent commits. A change of the counts is therefore placed on its commit
# with about log2(STEP) more builds per change. (Changes that cancel out between two samples are
# not seen; STEP 1 measures every revision.) Each run's "created" is set to its commit's time
# before it is stored, so the store (ordered by created) holds the runs in commit order whatever
# order they were measured in.
#
# Expensive: one Release build and one callgrind budgets run per measured revision (2-3 CPU
# minutes each on a 2-core machine). The worktrees, builds and runs are kept under WORK, so a
# second run only measures new revisions; delete WORK and run `git worktree prune` to drop
# them. This tree (build/bin/h2bench) must be built first. A revision that does not build or
# whose run fails is skipped (said on stderr) and bisection goes on around it.
#
# usage: scripts/bench/history-revisions.sh [N] [WORK] [REV] [STEP]
#   N     revisions of first-parent history, default 8 (REV and the N - 1 before it)
#   WORK  default ${XDG_CACHE_HOME:-~/.cache}/h2bench/history-revisions
#   REV   the newest revision, default HEAD
#   STEP  measure every STEP-th revision, then bisect the changes (default 1: every revision)
set -euo pipefail
N=${1:-8}
WORK=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/h2bench/history-revisions}
REV=${3:-HEAD}
STEP=${4:-1}
ROOT=$(git rev-parse --show-toplevel)
BIN=$ROOT/build/bin/h2bench
[ -x "$BIN" ] || { echo "no $BIN: build this tree first" >&2; exit 2; }
case $N$STEP in '' | *[!0-9]*) echo "N and STEP must be numbers" >&2; exit 2 ;; esac
[ "$N" -ge 1 ] && [ "$STEP" -ge 1 ] || { echo "N and STEP must be at least 1" >&2; exit 2; }
mkdir -p "$WORK/runs"
STORE=$WORK/store
rm -rf "$STORE"

mapfile -t REVS < <(git -C "$ROOT" rev-list --first-parent --reverse -n "$N" "$REV")
last=$((${#REVS[@]} - 1))

# measure I: the budgets run of REVS[I] in WORK/runs/SHORT.json; false if it cannot be had
measure() {
    local rev=${REVS[$1]} short src out when
    short=${rev:0:12}
    src=$WORK/src-$short
    out=$WORK/runs/$short.json
    [ -f "$out" ] && return 0
    [ -f "$WORK/runs/$short.skip" ] && return 1
    if [ ! -d "$src" ]; then
        git -C "$ROOT" worktree add --detach "$src" "$rev" >/dev/null 2>&1
    fi
    echo "[$1/$last] $short: building" >&2
    if ! (cd "$src" && cmake --preset release >"$WORK/$short.cmake.log" 2>&1 &&
        nice -n 10 cmake --build --preset release -j2 --target h2bench h2b_budget_preload \
            >"$WORK/$short.build.log" 2>&1); then
        echo "[$1/$last] $short: does not build (see $WORK/$short.build.log): skipped" >&2
        : >"$WORK/runs/$short.skip"
        return 1
    fi
    echo "[$1/$last] $short: running scenarios/budgets.json" >&2
    if ! (cd "$src" && build/bin/h2bench run scenarios/budgets.json --filter h2ref \
        --no-progress --out "$out.tmp" >"$WORK/$short.run.log" 2>&1); then
        echo "[$1/$last] $short: the run failed (see $WORK/$short.run.log): skipped" >&2
        rm -f "$out.tmp"
        : >"$WORK/runs/$short.skip"
        return 1
    fi
    when=$(git -C "$ROOT" show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ "$rev")
    TZ=UTC jq --arg t "$when" '.created = $t' "$out.tmp" >"$out.tmp2"
    rm -f "$out.tmp"
    mv "$out.tmp2" "$out"
}

# the cells' instructions per request of a measured revision, one "cell value" per line
counts() {
    jq -r '.. | objects | select(has("budgets") and has("connections"))
        | "\(.connections)x\(.streams_requested) \(.budgets.instructions_per_request)"' \
        "$WORK/runs/${REVS[$1]:0:12}.json"
}

# differ A B: some cell's instructions per request differ by more than 0.3 % (or a cell is
# missing, or null, on one side only); compares the two revisions' counts lines
differ() {
    awk 'NR == FNR { a[$1] = $2; next }
        { seen[$1] = 1
          if (!($1 in a) || a[$1] == "null" || $2 == "null" || a[$1] + 0 <= 0) {
              if (a[$1] != $2) d = 1
              next
          }
          x = a[$1] + 0
          if (($2 - x) / x > 0.003 || (x - $2) / x > 0.003) d = 1 }
        END { for (k in a) if (!(k in seen)) d = 1
              exit !d }' <(counts "$1") <(counts "$2")
}

# bisect A B: both measured; measures between them until every change is on adjacent revisions
bisect() {
    local a=$1 b=$2
    [ $((b - a)) -le 1 ] && return 0
    differ "$a" "$b" || return 0
    local m=$(((a + b) / 2)) lo hi
    # a revision that cannot be measured: try its neighbours inside (a, b)
    lo=$m
    while [ "$lo" -gt "$a" ] && ! measure "$lo"; do lo=$((lo - 1)); done
    if [ "$lo" -gt "$a" ]; then
        bisect "$a" "$lo"
        bisect "$lo" "$b"
        return 0
    fi
    hi=$((m + 1))
    while [ "$hi" -lt "$b" ] && ! measure "$hi"; do hi=$((hi + 1)); done
    [ "$hi" -lt "$b" ] && bisect "$hi" "$b"
    return 0
}

samples=()
for ((i = 0; i <= last; i += STEP)); do samples+=("$i"); done
[ "${samples[-1]}" -eq "$last" ] || samples+=("$last")
measured=()
for i in "${samples[@]}"; do measure "$i" && measured+=("$i"); done
for ((k = 1; k < ${#measured[@]}; k++)); do bisect "${measured[k - 1]}" "${measured[k]}"; done

stored=0
for ((i = 0; i <= last; i++)); do
    f=$WORK/runs/${REVS[$i]:0:12}.json
    [ -f "$f" ] || continue
    "$BIN" history --append "$STORE" --branch revisions "$f" >/dev/null
    stored=$((stored + 1))
done

echo "== $stored of $N revisions measured (every $STEP-th, then bisected), oldest first:"
for ((i = 0; i <= last; i++)); do
    [ -f "$WORK/runs/${REVS[$i]:0:12}.json" ] || continue
    printf '%s  %s  %s\n' "${REVS[$i]:0:12}" "$(counts "$i" | tr '\n' ' ')" \
        "$(git -C "$ROOT" show -s --format=%s "${REVS[$i]}" | cut -c1-60)"
done
for metric in instructions/request allocs/request; do
    echo
    echo "== $metric"
    "$BIN" history "$STORE" --metric "$metric" --min-points 2
done
