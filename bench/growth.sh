#!/usr/bin/env bash
# growth.sh - throughput as the input grows: events/s of YSB and of RO
# over 1000 keys (COUNT per key per 1 s window) at several input sizes,
# and of SESSION windows over the disordered stream (session_growth.sh),
# with a chart of both.  A rate that falls with the size is state or
# memory that does not stay bounded (issue 30 wants YSB and RO within 15%
# from 5 M to 80 M events, sessions within 20% from 100 K to 1.6 M rows).
#
#   bench/growth.sh [SLUICE] [OUT.png]     (build/sluice, no chart)
#
# Environment: SIZES (events, default "5000000 20000000 80000000"),
# SESSION_SIZES (rows, default "100000 400000 1600000"), WORKERS (default
# "1 2"), RUNS (default 3), TSV=FILE (append the rows to FILE), FROM=FILE
# (measure nothing: chart the rows of an earlier run's TSV).
# YSB and RO run pre-generated (the input is made before the clock starts)
# as EXPLAIN ANALYZE into a blackhole, and events/s is the plan's Sink line
# (first record to last); sessions read a CSV file and take the shell's
# summary.  Prints "workload workers strategy size median_events_s", the
# strategy the planner chose (auto) for YSB and RO.
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
CHART=${2:-}
read -r -a SIZE_LIST <<< "${SIZES:-5000000 20000000 80000000}"
read -r -a SESSION_LIST <<< "${SESSION_SIZES:-100000 400000 1600000}"
read -r -a WORKER_LIST <<< "${WORKERS:-1 2}"
RUNS=${RUNS:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
# shellcheck source=bench/nexmark_common.sh
. "$SRC/bench/nexmark_common.sh" # median, disorder_csv
# shellcheck source=bench/workload_sql.sh
. "$SRC/bench/workload_sql.sh" # ddl, sluice_timed

out() {
  echo "$*"
  [ -z "${TSV:-}" ] || echo "$*" | tr ' ' '\t' >> "$TSV"
  echo "$*" >> "$tmp/all"
}

if [ -n "${FROM:-}" ]; then
  tr '\t' ' ' < "$FROM" > "$tmp/all"
  SIZE_LIST=() SESSION_LIST=() WORKER_LIST=()
else
  : > "$tmp/all"
fi
for wl in ysb ro_1k; do
  for w in "${WORKER_LIST[@]}"; do
    for n in "${SIZE_LIST[@]}"; do
      { EVENTS=$n ddl "$wl" "$w" true; sluice_timed "$wl"; } > "$tmp/q.sql"
      : > "$tmp/rates"
      for _ in $(seq "$RUNS"); do
        (cd "$SRC" && "$SLUICE" "$tmp/q.sql" > "$tmp/plan" 2> "$tmp/err") ||
          { cat "$tmp/err"; exit 1; }
        grep -m1 '^Sink' "$tmp/plan" | grep -oE 'events/s=[0-9]+' | cut -d= -f2 >> "$tmp/rates"
      done
      strategy=$(grep -oE 'strategy: [a-z-]+' "$tmp/plan" | head -1 | cut -d' ' -f2)
      out "$wl $w ${strategy:-single} $n $(median < "$tmp/rates")"
    done
  done
done
[ ${#SESSION_LIST[@]} -eq 0 ] ||
  RUNS=$RUNS bash "$SRC/bench/session_growth.sh" "$SLUICE" "${SESSION_LIST[@]}" |
  while read -r w strategy n rate _; do out "session $w $strategy $n $rate"; done

[ -n "$CHART" ] || exit 0
command -v gnuplot > /dev/null || { echo "gnuplot is missing (apt-get install gnuplot)"; exit 1; }
# One series per workload, workers and strategy: events/s relative to the
# smallest size, so flat is 1.0 whatever the absolute rate.
awk '{ k = $1 " " $2 "w " $3; if (!(k in base)) { base[k] = $5; order[++n] = k }
       f = "'"$tmp"'/s" n ".dat"; file[k] = f
       print $4, $5 / base[k], $5 >> file[k] }
     END { for (i = 1; i <= n; i++) print order[i] > "'"$tmp"'/series" }' "$tmp/all"
plots="" i=0
while read -r name; do
  i=$((i + 1))
  plots+="${plots:+, }'$tmp/s$i.dat' using 1:2 with linespoints title '$name'"
done < "$tmp/series"
gnuplot <<GP
set terminal pngcairo size 800,480 font 'sans,10' noenhanced
set output '$CHART'
set title 'Events/s against input size, relative to the smallest (flat = 1.0)'
set grid ytics
set key outside right
set logscale x
set xlabel 'input (events or rows)'
set ylabel 'events/s / events/s at the smallest size'
set yrange [0:1.5]
plot $plots, 0.85 with lines dashtype 2 lc rgb 'gray' title '-15% (YSB, RO target)', \
     0.80 with lines dashtype 3 lc rgb 'gray' title '-20% (sessions target)'
GP
echo "chart: $CHART"
