#!/usr/bin/env bash
# valgrind.sh - a subset of the tests under valgrind memcheck, in the
# normal build (build/, no sanitizers: valgrind sees the code as it ships).
#
# AddressSanitizer (tests/sanitize.sh) runs the whole suite; valgrind is
# slower (20-50x) and so runs the tests whose code handles input from
# outside: the tokenizer and grammar, the binder, the CSV source, the
# cluster's message decoders and the state wire form, the handshake of
# the cluster secret, aggregates and value text, the sinks, and the
# fuzz targets over their seeds and regressions.  Any invalid read or
# write, use of uninitialised memory, or definite leak fails the run.
#
#   tests/valgrind.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (setup.sh installs it)" >&2; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target test_tokenizer test_grammar \
  test_binder test_csv_source test_node_messages test_state_wire test_sinks \
  test_aggregate test_value_text test_cluster_auth \
  fuzz_sql_replay fuzz_messages_replay >/dev/null
VG=(valgrind --quiet --error-exitcode=99 --leak-check=full
  --errors-for-leak-kinds=definite --show-leak-kinds=definite
  --track-origins=yes --suppressions="$PWD/tests/valgrind.supp")
export SLUICE_SOURCE_DIR=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests/fuzz/seed_sql.sh "$tmp/sql" >/dev/null
mkdir -p "$tmp/messages"
"$BUILD/tests/fuzz/fuzz_messages_replay" --seeds "$tmp/messages"
failed=0
run() {
  local name=$1
  shift
  local start=$SECONDS
  if "${VG[@]}" "$@" >"$tmp/$name.log" 2>&1; then
    echo "ok   $name ($((SECONDS - start)) s)"
  else
    echo "FAIL $name"
    tail -40 "$tmp/$name.log"
    failed=1
  fi
}
for t in test_tokenizer test_grammar test_binder test_csv_source \
  test_node_messages test_state_wire test_sinks test_aggregate \
  test_value_text test_cluster_auth; do
  run "$t" "$BUILD/tests/$t"
done
run fuzz_sql "$BUILD/tests/fuzz/fuzz_sql_replay" "$tmp/sql" tests/fuzz/regressions/sql
run fuzz_messages "$BUILD/tests/fuzz/fuzz_messages_replay" "$tmp/messages" tests/fuzz/regressions/messages
exit $failed
