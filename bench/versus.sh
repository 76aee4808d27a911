#!/usr/bin/env bash
# versus.sh - two builds of Sluice side by side on the same workloads: the
# check that a change which should not change speed (a refactor) did not.
#
#   bench/versus.sh BEFORE_SLUICE AFTER_SLUICE [EVENTS] [RUNS] [WORKLOAD...]
#                         (2000000 events, 5 runs, ysb ro_1m q5 q7 ysb_nodes2)
#
# WORKLOADs are peers.sh's (workload_sql.sh), at 2 workers, plus NAME_nodes2:
# the same on 2 node processes forked on this host.  Each run is an EXPLAIN
# ANALYZE INSERT into a blackhole over events generated into memory before
# the clock starts; events/s is the plan's Sink line (or the run's summary
# where a plan has none).  The two binaries run in turn, A B A B ..., so a
# machine that slows down slows both; the ratio is taken pair by pair and
# its median reported with the medians of each.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/versus.sh BEFORE_SLUICE AFTER_SLUICE [EVENTS] [RUNS] [WORKLOAD...]" >&2; exit 2; }
A=$(realpath "$1") B=$(realpath "$2")
EVENTS=${3:-2000000}
RUNS=${4:-5}
shift $(($# < 4 ? $# : 4))
read -r -a WORKLOADS <<< "${*:-ysb ro_1m q5 q7 ysb_nodes2}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/nexmark_common.sh
. "$SRC/bench/nexmark_common.sh" # nexmark_ddl, median
# shellcheck source=bench/workload_sql.sh
. "$SRC/bench/workload_sql.sh" # ddl, sluice_timed

# rate SLUICE SQL: the events/s of one run, or exit with its error.
rate() {
  (cd "$SRC" && "$1" "$2" > "$tmp/plan" 2> "$tmp/err") ||
    { echo "versus.sh: $1 $2 failed:" >&2; head -20 "$tmp/err" >&2; exit 1; }
  local x
  x=$(grep -m1 '^Sink' "$tmp/plan" | grep -oE 'events/s=[0-9.]+' | cut -d= -f2 || true)
  [ -n "$x" ] || x=$(grep -oE '\([0-9.]+ events/s' "$tmp/err" | tail -1 | tr -d '(' | cut -d' ' -f1)
  [ -n "$x" ] || { echo "versus.sh: no events/s in the output of $1 $2" >&2; exit 1; }
  echo "$x"
}

echo "| workload | before: events/s (median) | after: events/s (median) | after / before (median of pairs, min..max) |"
echo "| --- | ---: | ---: | ---: |"
for wl in "${WORKLOADS[@]}"; do
  base=${wl%_nodes2}
  { ddl "$base" 2 true
    [ "$base" = "$wl" ] || echo "SET 'sluice.nodes' = '2';"
    sluice_timed "$base"; } > "$tmp/$wl.sql"
  : > "$tmp/a" ; : > "$tmp/b"; : > "$tmp/r"
  rate "$A" "$tmp/$wl.sql" > /dev/null # warm-up: page cache, JIT libraries
  for _ in $(seq "$RUNS"); do
    a=$(rate "$A" "$tmp/$wl.sql"); b=$(rate "$B" "$tmp/$wl.sql")
    echo "$a" >> "$tmp/a"; echo "$b" >> "$tmp/b"
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", b / a }' >> "$tmp/r"
  done
  printf '| %s | %.2f M | %.2f M | %.2f (%s..%s) |\n' "$wl" \
    "$(median < "$tmp/a" | awk '{ print $1 / 1e6 }')" "$(median < "$tmp/b" | awk '{ print $1 / 1e6 }')" \
    "$(median < "$tmp/r")" "$(sort -g "$tmp/r" | head -1)" "$(sort -g "$tmp/r" | tail -1)"
done
