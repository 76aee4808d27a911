#!/usr/bin/env bash
# session_growth.sh - SESSION windows as the input grows: events/s of a
# SESSION count and sum per key over a disordered CSV stream at several
# sizes, for 1 and 2 workers under both strategies.  A store whose cost
# per record grows with the sessions a key holds shows up as a rate that
# falls with the size (docs/BENCHMARKS.md: issue 30 wants them within 20%).
#
#   bench/session_growth.sh [SLUICE] [ROWS...]   (build/sluice 100000 400000 1600000; RUNS=3)
#
# The stream is bench/late_records.sh's: 100 keys, rows 1 ms apart, one
# row in nine up to 3 s early, watermark ts - 1 s; gap 20 ms.  With 2
# workers the file is split between two readers, the second far ahead in
# event time, so sessions pile up until the first reader's watermark
# lets them close.  Prints "workers strategy rows median_events_s late".
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100000 400000 1600000)
RUNS=${RUNS:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$SRC/bench/nexmark_common.sh" # median, disorder_csv

rate() { grep -oE "\([0-9]+ events/s" "$1" | tail -1 | tr -d "(" | awk '{print $1}'; }

for n in "${SIZES[@]}"; do
  disorder_csv "$n" > "$tmp/disorder_$n.csv"
done

for w in 1 2; do
  for strategy in late-merge repartition; do
    [ "$w" = 1 ] && [ "$strategy" = repartition ] && continue
    for n in "${SIZES[@]}"; do
      cat > "$tmp/q.sql" <<SQL
SET 'parallelism.default' = '$w';
SET 'sluice.strategy' = '$strategy';
CREATE TABLE events (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/disorder_$n.csv', 'format' = 'csv');
CREATE TABLE out (k INT, ws TIMESTAMP(3), c BIGINT, s INT) WITH ('connector' = 'blackhole');
INSERT INTO out
SELECT k, window_start, COUNT(*), SUM(v)
FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '20' MILLISECOND))
GROUP BY k, window_start, window_end;
SQL
      : > "$tmp/rates"
      for _ in $(seq 1 "$RUNS"); do
        (cd "$SRC" && "$SLUICE" "$tmp/q.sql" 2> "$tmp/err" > /dev/null) ||
          { cat "$tmp/err"; exit 1; }
        rate "$tmp/err" >> "$tmp/rates"
      done
      late=$(grep -oE "[0-9]+ late records dropped" "$tmp/err" | tail -1 | awk '{print $1}')
      echo "$w $strategy $n $(median < "$tmp/rates") ${late:-0}"
    done
  done
done
