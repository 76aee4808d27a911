#!/usr/bin/env bash
# cycles.sh - CPU per record of a query's run, and where it goes.
#
#   bench/cycles.sh SCRIPT.sql RECORDS [GHZ] [SLUICE]   (2.6, build/sluice)
#
# SCRIPT.sql ends in an EXPLAIN ANALYZE (bench/workload_sql.sh's
# sluice_timed).  perf samples the CPU clock every millisecond of CPU time
# (a VM without a cycle counter has it too); the samples in the run's last
# `wall time` seconds (the Sink line: first record to last, after
# pre-generation and compiling), of every thread, are the run's CPU time.
# Prints ns and cycles (at GHZ) per record for the whole run, then per
# function (JIT functions named sl_kernel_N with SLUICE_PERF_MAP=1).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SCRIPT.sql RECORDS [GHZ] [SLUICE]" >&2
  exit 2
fi
sql=$1 records=$2 ghz=${3:-2.6}
SLUICE=$(realpath "${4:-build/sluice}")
command -v perf > /dev/null || { echo "perf is missing (apt-get install linux-perf)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SLUICE_PERF_MAP=1 perf record -q -e cpu-clock -c 1000000 -o "$tmp/perf.data" \
  "$SLUICE" "$sql" > "$tmp/plan" 2>&1
wall=$(grep -m1 '^Sink' "$tmp/plan" | grep -oE 'wall time=[0-9.]+' | cut -d= -f2)
[ -n "$wall" ] || { echo "no Sink line with a wall time:"; cat "$tmp/plan"; exit 1; }
perf script -i "$tmp/perf.data" -F time,ip,sym 2> /dev/null | awk -v w="$wall" -v r="$records" -v g="$ghz" '
  { t = $1; sub(":", "", t); $1 = ""; $2 = ""; s = $0; sub(/^ +/, "", s)
    sub(/_0x[0-9a-f]+$/, "", s); if (s == "") s = "[unknown]"; T[NR] = t; S[NR] = s }
  END {
    last = T[NR]
    for (i = 1; i <= NR; i++) if (T[i] >= last - w) { c[S[i]]++; n++ }
    printf "run %.3f s, CPU %d ms: %.1f ns, %.0f cycles per record at %s GHz\n", w, n, n * 1e6 / r, n * 1e6 / r * g, g
    for (k in c) if (c[k] * 100 >= n) printf "%8.1f %s\n", c[k] * 1e6 / r * g, k
  }' | { read -r head; echo "$head"; sort -rn; }
