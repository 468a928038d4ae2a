#!/usr/bin/env bash
# history-revisions.sh - the project's own per-request budgets across its last N revisions, through
# the history store: each revision (first-parent, oldest first) is checked out in its own git
# worktree, its h2bench built (Release), `h2bench run scenarios/budgets.json --filter h2ref` run
# with that revision's build and scenario, and the results appended to a store. Then this tree's
# h2bench prints the change points of the instructions and allocations per request: they should
# fall on the commits that changed those counts (callgrind and the counting allocator are exact,
# so --min-points 2 is enough).
#
# Expensive: one Release build per revision (minutes each on a 2-core machine). The worktrees and
# their builds are kept under WORK, so a second run only builds new revisions; delete WORK and run
# `git worktree prune` to drop them. This tree (build/bin/h2bench) must be built first. The store
# orders runs by when they were measured: a revision older than the cached ones, measured later
# (a larger N on a second run), would be placed after them, so the runs are measured afresh when
# N grows (delete WORK/runs).
#
# usage: scripts/bench/history-revisions.sh [N] [WORK] [REV]
#   N     revisions, default 8 (REV and the N - 1 before it)
#   WORK  default ${XDG_CACHE_HOME:-~/.cache}/h2bench/history-revisions
#   REV   the newest revision, default HEAD
set -euo pipefail
N=${1:-8}
WORK=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/h2bench/history-revisions}
REV=${3:-HEAD}
ROOT=$(git rev-parse --show-toplevel)
BIN=$ROOT/build/bin/h2bench
[ -x "$BIN" ] || { echo "no $BIN: build this tree first" >&2; exit 2; }
case $N in '' | *[!0-9]*) echo "N must be a number" >&2; exit 2 ;; esac
mkdir -p "$WORK/runs"
STORE=$WORK/store
rm -rf "$STORE"

i=0
for rev in $(git -C "$ROOT" rev-list --first-parent --reverse -n "$N" "$REV"); do
    i=$((i + 1))
    short=${rev:0:12}
    src=$WORK/src-$short
    if [ ! -d "$src" ]; then
        git -C "$ROOT" worktree add --detach "$src" "$rev" >/dev/null 2>&1
    fi
    out=$WORK/runs/$short.json
    if [ ! -f "$out" ]; then
        echo "[$i/$N] $short: building" >&2
        (cd "$src" && cmake --preset release >"$WORK/$short.cmake.log" 2>&1 &&
            nice -n 10 cmake --build --preset release -j2 --target h2bench h2b_budget_preload \
                >"$WORK/$short.build.log" 2>&1) || {
            echo "[$i/$N] $short: does not build (see $WORK/$short.build.log): skipped" >&2
            continue
        }
        echo "[$i/$N] $short: running scenarios/budgets.json" >&2
        (cd "$src" && build/bin/h2bench run scenarios/budgets.json --filter h2ref --no-progress \
            --out "$out.tmp" >"$WORK/$short.run.log" 2>&1) || {
            echo "[$i/$N] $short: the run failed (see $WORK/$short.run.log): skipped" >&2
            rm -f "$out.tmp"
            continue
        }
        mv "$out.tmp" "$out"
    fi
    "$BIN" history --append "$STORE" --branch revisions "$out" >/dev/null
done

for metric in instructions/request allocs/request; do
    echo
    echo "== $metric, $N revisions (oldest first)"
    "$BIN" history "$STORE" --metric "$metric" --min-points 2
done
