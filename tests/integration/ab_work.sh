#!/usr/bin/env bash
# ab_work.sh - where `h2bench ab` checks a revision out, and what it leaves in the user's
# repository. --work with a path that looks like an option (issue 29 item 12): the base
# revision's checkout must land in ./-x/<commit>/src, relative to where ab runs (the path is
# made absolute and passed after "--"). The checkout is a clone of its own: after ab, failed
# or killed (SIGTERM during the build), `git worktree list` is the repository alone and nothing
# is left inside it; a worktree an older ab registered at <work>/<commit>/src is unregistered
# and replaced. The build commands fail or sleep on purpose: only the checkout is under test.
. "$(dirname "$0")/lib.sh"

R=$TMP/repo
mkdir -p "$R" "$TMP/run"
git -C "$R" init -q
printf 'x\n' >"$R/f"
git -C "$R" add f
git -C "$R" -c user.name=t -c user.email=t@t commit -q -m one
C=$(git -C "$R" rev-parse HEAD)
H2BENCH=$(cd "$(dirname "$H2BENCH")" && pwd)/h2bench
worktrees() { git -C "$R" worktree list | wc -l; }
expect_eq "one worktree before" "$(worktrees)" 1
(cd "$TMP/run" && "$H2BENCH" ab --repo "$R" --base "$C" --head "$C" --work -x \
    --build 'exit 7' --bench nothing >"$TMP/ab.out" 2>&1)
expect_eq "ab exits 3 (the build fails)" "$?" 3
expect_eq "base checkout in ./-x" "$(git -C "$TMP/run/-x/$C/src" rev-parse HEAD 2>&1)" "$C"
expect_eq "the checkout holds the revision" "$(cat "$TMP/run/-x/$C/src/f")" x
expect_eq "nothing inside the repository" "$(ls -A "$R" | tr '\n' ' ')" ".git f "
expect_eq "no worktree registered after a failed ab" "$(worktrees)" 1
expect_eq "no .git/worktrees" "$(ls -A "$R/.git/worktrees" 2>/dev/null | wc -l)" 0
expect_eq "no partial checkout left" "$(ls -d "$TMP/run/-x/$C/src.partial" 2>/dev/null | wc -l)" 0

# SIGTERM while the base builds: still nothing registered, no partial checkout.
printf 'y\n' >"$R/f"
git -C "$R" -c user.name=t -c user.email=t@t commit -q -am two
C2=$(git -C "$R" rev-parse HEAD)
"$H2BENCH" ab --repo "$R" --base "$C2" --head "$C2" --work "$TMP/w2" --build 'sleep 60' \
    --bench nothing >"$TMP/ab2.out" 2>&1 &
ab=$!
PIDS+=("$ab")
for _ in $(seq 200); do
    [ -d "$TMP/w2/$C2/src" ] && [ -s "$TMP/w2/$C2/build.log" -o -d "$TMP/w2/$C2/build" ] && break
    sleep 0.05
done
kill -TERM "$ab"
wait "$ab"
expect_eq "SIGTERM: ab ended by the signal" "$?" 143
expect_eq "SIGTERM: checkout complete" "$(cat "$TMP/w2/$C2/src/f" 2>&1)" y
expect_eq "SIGTERM: no worktree registered" "$(worktrees)" 1
expect_eq "SIGTERM: no partial checkout left" "$(ls -d "$TMP/w2/$C2/src.partial" 2>/dev/null | wc -l)" 0

# A checkout an older ab made with `git worktree add`: unregistered, replaced by a clone.
git -C "$R" worktree add -q --detach "$TMP/w3/$C/src" "$C"
expect_eq "old-style worktree registered" "$(worktrees)" 2
"$H2BENCH" ab --repo "$R" --base "$C" --head "$C" --work "$TMP/w3" --build 'exit 7' \
    --bench nothing >"$TMP/ab3.out" 2>&1
expect_eq "old-style: ab exits 3 (the build fails)" "$?" 3
expect_eq "old-style: unregistered" "$(worktrees)" 1
expect_eq "old-style: src is a clone now" "$(test -d "$TMP/w3/$C/src/.git" && echo dir)" dir
expect_eq "old-style: the revision" "$(git -C "$TMP/w3/$C/src" rev-parse HEAD 2>&1)" "$C"
finish
