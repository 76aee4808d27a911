#!/usr/bin/env bash
# verbs_transports.sh - run INSIDE the soft-RoCE VM (tests/rdma/vm.sh): the
# channel test-suite (build/tests/test_channel_transports) and the verbs
# transport's own cases (build/tests/test_channel_verbs) with verbs
# REQUIRED (SLUICE_REQUIRE_VERBS=1: a missing RDMA device fails the
# verbs tests instead of skipping them), RUNS times (default 3), since a
# test that passes only sometimes is a bug.  Ends with "N passed, N failed"
# (runs) and exits non-zero if any run failed.
#
#   tests/rdma/verbs_transports.sh [build dir]     (RUNS=5 ... to repeat more)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${SLUICE_BUILD_DIR:-$root/build}}
bins=("$build/tests/test_channel_transports" "$build/tests/test_channel_verbs")
runs=${RUNS:-${SLUICE_VERBS_RUNS:-3}}
for bin in "${bins[@]}"; do
  if [ ! -x "$bin" ]; then
    echo "verbs_transports: $bin not found (build first)" >&2
    exit 2
  fi
done
# The suite's verbs ends listen on the probed device's address (or
# SLUICE_RDMA_ADDR); show what the VM has, for the log.
command -v rdma >/dev/null && rdma link show
export SLUICE_REQUIRE_VERBS=1
failed=0
for i in $(seq 1 "$runs"); do
  echo "== verbs_transports: run $i of $runs"
  ok=1
  for bin in "${bins[@]}"; do
    "$bin" || ok=0
  done
  if [ "$ok" -eq 0 ]; then
    failed=$((failed + 1))
    echo "== verbs_transports: run $i FAILED"
  fi
done
echo "verbs_transports: $((runs - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
