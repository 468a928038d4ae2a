#!/usr/bin/env bash
# ab_work.sh - h2bench ab --work with a path that looks like an option (issue 29 item 12): the
# base revision's worktree must land in ./-x/<commit>/src, relative to where ab runs (git runs
# with -C TOP, so the path is made absolute and passed after "--"). The build command fails on
# purpose: only the checkout is under test, nothing is built.
. "$(dirname "$0")/lib.sh"

R=$TMP/repo
mkdir -p "$R" "$TMP/run"
git -C "$R" init -q
printf 'x\n' >"$R/f"
git -C "$R" add f
git -C "$R" -c user.name=t -c user.email=t@t commit -q -m one
C=$(git -C "$R" rev-parse HEAD)
H2BENCH=$(cd "$(dirname "$H2BENCH")" && pwd)/h2bench
(cd "$TMP/run" && "$H2BENCH" ab --repo "$R" --base "$C" --head "$C" --work -x \
    --build 'exit 7' --bench nothing >"$TMP/ab.out" 2>&1)
expect_eq "ab exits 3 (the build fails)" "$?" 3
expect_eq "base worktree in ./-x" "$(git -C "$TMP/run/-x/$C/src" rev-parse HEAD 2>&1)" "$C"
expect_eq "nothing inside the repository" "$(ls -A "$R" | tr '\n' ' ')" ".git f "
git -C "$R" worktree prune
finish
