#!/usr/bin/env bash
# ab_wall.sh - two Sluice binaries side by side on one EXPLAIN ANALYZE
# script: they alternate (A B A B ...), so a drift of the machine's speed
# hits both, and each one's median of the wall time its plan's Sink line
# reports (pre-generation and compiling not included) is printed, with
# their ratio.
#
#   bench/ab_wall.sh SCRIPT.sql RUNS BINARY_A BINARY_B
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 SCRIPT.sql RUNS BINARY_A BINARY_B" >&2
  exit 2
fi
sql=$1 runs=$2 a=$3 b=$4
wall() {
  "$1" "$sql" 2>&1 | grep -m1 '^Sink' | grep -o 'wall time=[0-9.]*' |
    cut -d= -f2
}
for _ in $(seq "$runs"); do
  echo "A $(wall "$a")"
  echo "B $(wall "$b")"
done | python3 -c '
import statistics, sys
v = {}
for line in sys.stdin:
    k, *x = line.split()
    if not x:
        sys.exit("a run printed no Sink line with a wall time")
    v.setdefault(k, []).append(float(x[0]))
for k in sorted(v):
    print("%s median %.3f s (min %.3f, max %.3f, %d runs)"
          % (k, statistics.median(v[k]), min(v[k]), max(v[k]), len(v[k])))
print("A / B %.3f" % (statistics.median(v["A"]) / statistics.median(v["B"])))'
