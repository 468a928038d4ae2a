#!/usr/bin/env bash
# fake_runner.sh - stands in for `h2bench` when the gate re-runs benchmarks, so the confirmation
# logic is tested on fixtures. Invocation k (1-based) copies the k-th file of FAKE_RUNNER_OUTPUTS
# (space-separated) to the --json path; every argument list is appended to FAKE_RUNNER_LOG.
# FAKE_RUNNER_EXIT makes it fail instead.
set -u
log=${FAKE_RUNNER_LOG:?}
echo "$*" >>"$log"
[ -n "${FAKE_RUNNER_EXIT:-}" ] && exit "$FAKE_RUNNER_EXIT"
json=
while [ $# -gt 0 ]; do
    [ "$1" = --json ] && json=$2
    shift
done
n=$(wc -l <"$log")
read -r -a outs <<<"${FAKE_RUNNER_OUTPUTS:?}"
cp "${outs[$((n - 1))]}" "$json"
