#!/usr/bin/env bash
# late_records.sh - what SET 'sluice.late-records' = 'side-output' costs,
# measured side by side with 'drop' in one run (alternating, median of
# RUNS runs each).
#
#   bench/late_records.sh [SLUICE] [WORKERS]        (build/sluice 2; RUNS=5)
#
# 1. ysb: examples/ysb.sql's query over 10 M generated events in event-time
#    order: no record is late, so this is the price of deciding lateness
#    before the pipeline (the watermark and event time of every row,
#    evaluated once more by the interpreter) and of reading every column.
# 2. disorder: a TUMBLE count per key over a 2 M-row CSV file in which one
#    row in nine comes from up to 3 s earlier (watermark ts - 1 s): about
#    11% of the rows are late, and side-output writes each of them whole
#    to a CSV file.
#
# Prints "case mode median_events_s" lines, then "case ratio R" (side-output
# events/s over drop's) and the late records counted.
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
WORKERS=${2:-2}
RUNS=${RUNS:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$SRC/bench/nexmark_common.sh" # median, disorder_csv

# rate FILE: the events/s of the last summary line in FILE
rate() { grep -oE "\([0-9]+ events/s" "$1" | tail -1 | tr -d "(" | awk '{print $1}'; }

ysb_sql() { # MODE
  cat <<SQL
SET 'parallelism.default' = '$WORKERS';
CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time)
  WITH ('connector' = 'ysb', 'events.num' = '10000000', 'seed' = '7', 'pregenerate' = 'true');
CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns');
CREATE TABLE late_ysb (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/late_ysb.csv', 'format' = 'csv');
SET 'sluice.late-records' = '$1';
SET 'sluice.late-records.table' = 'late_ysb';
SQL
  sed -n '/^SELECT/,$p' "$SRC/examples/ysb.sql"
}

# The disordered stream: k, v, ts; one row in nine up to 3 s early.
disorder_csv 2000000 > "$tmp/disorder.csv"

disorder_sql() { # MODE
  cat <<SQL
SET 'parallelism.default' = '$WORKERS';
CREATE TABLE events (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/disorder.csv', 'format' = 'csv');
CREATE TABLE late_events (k INT, v INT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$tmp/late_events.csv', 'format' = 'csv');
SET 'sluice.late-records' = '$1';
SET 'sluice.late-records.table' = 'late_events';
SELECT k, window_start, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY k, window_start, window_end;
SQL
}

for c in ysb disorder; do
  : > "$tmp/$c.drop"
  : > "$tmp/$c.side-output"
  for r in $(seq 1 "$RUNS"); do
    for mode in drop side-output; do
      "${c}_sql" "$mode" > "$tmp/q.sql"
      (cd "$SRC" && "$SLUICE" -m csv "$tmp/q.sql" 2> "$tmp/err" > /dev/null) ||
        { cat "$tmp/err"; exit 1; }
      rate "$tmp/err" >> "$tmp/$c.$mode"
      grep -oE "[0-9]+ late records (dropped|written)" "$tmp/err" | tail -1 > "$tmp/$c.$mode.late"
    done
  done
  d=$(median < "$tmp/$c.drop")
  s=$(median < "$tmp/$c.side-output")
  echo "$c drop $d"
  echo "$c side-output $s"
  echo "$c ratio $(awk -v s="$s" -v d="$d" 'BEGIN { printf "%.3f", s / d }')"
  echo "$c late: $(cat "$tmp/$c.drop.late"); $(cat "$tmp/$c.side-output.late")"
done
