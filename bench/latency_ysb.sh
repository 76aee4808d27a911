#!/usr/bin/env bash
# latency_ysb.sh - YSB's window latency at 50% and 90% of the highest rate
# Sluice sustains, with a source paced against the wall clock.
#
#   bench/latency_ysb.sh [SLUICE] [WORKERS] [SECONDS]   (build/sluice 2 5)
#
# 1. The highest rate: YSB (examples/ysb.sql's query) over 10 M events
#    generated while the query runs, unpaced; median of 5 runs.  Pacing
#    cannot use pre-generated input, so this is the rate with the
#    generator's work included.
# 2. For 50% and 90% of it: the same query over a source paced at that
#    rate ('events.rate'), for SECONDS of wall clock.  Event time runs at a
#    hundredth of the rate ('events.per-second'), so a 10 s window holds a
#    tenth of a second of events and about 10 windows fire per second.
#
# What is measured, per result row: the delay from the moment the
# watermark passed its window's end to the moment the row was made for
# the sink.  The watermark has no delay bound here (`WATERMARK FOR
# event_time AS event_time`), so it passes a window's end when the last of
# the workers processes its last row of that window: the largest
# MAX(PROCTIME()) of the window's rows over all its result rows.  The row's
# own time is CURRENT_TIMESTAMP in the projection over the fired window,
# evaluated just before the row goes to the shell's sink.  Both are
# TIMESTAMP(3): the delays are whole milliseconds.  The last window fires
# at the end of input, not on the watermark, and is left out.
#
# Prints "fraction rate_events_s windows p50_ms p99_ms max_ms" lines (the
# first line "max_rate R").
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
WORKERS=${2:-2}
SECONDS_PER_RUN=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$SRC/bench/nexmark_common.sh" # median

# query EVENTS RATE EVENT_RATE: the YSB statements, paced when RATE > 0
query() {
  cat <<SQL
SET parallelism.default = $WORKERS;
CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time)
  WITH ('connector' = 'ysb', 'events.num' = '$1', 'seed' = '7', 'events.rate' = '$2',
        'events.per-second' = '$3');
CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns');
SQL
}

: > "$tmp/max"
for r in 1 2 3 4 5; do
  { query 10000000 0 1000000; sed -n '/^SELECT/,$p' "$SRC/examples/ysb.sql"; } > "$tmp/max.sql"
  (cd "$SRC" && "$SLUICE" -m csv "$tmp/max.sql" 2> "$tmp/err" > /dev/null) || { cat "$tmp/err"; exit 1; }
  grep -oE "\([0-9]+ events/s" "$tmp/err" | tail -1 | tr -d "(" | awk '{print $1}' >> "$tmp/max"
done
max=$(median < "$tmp/max")
echo "max_rate $max"

for frac in 0.5 0.9; do
  rate=$(awk -v m="$max" -v f="$frac" 'BEGIN { printf "%.0f", m * f }')
  events=$(awk -v r="$rate" -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.0f", r * s }')
  erate=$(awk -v r="$rate" 'BEGIN { printf "%.0f", (r / 100 < 1 ? 1 : r / 100) }')
  { query "$events" "$rate" "$erate"
    cat <<SQL
SELECT c.campaign_id, window_end, COUNT(*) AS views, MAX(PROCTIME()) AS last_row, CURRENT_TIMESTAMP AS made
FROM TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), INTERVAL '10' SECOND)) AS e
JOIN campaigns AS c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window_start, window_end;
SQL
  } > "$tmp/lat.sql"
  (cd "$SRC" && "$SLUICE" -m csv --no-headers "$tmp/lat.sql" 2> "$tmp/err" > "$tmp/rows.csv") ||
    { cat "$tmp/err"; exit 1; }
  # Milliseconds of the day of 'YYYY-MM-DD HH:MM:SS.mmm' (a run never
  # spans more than a day; a delay across midnight is mended below).
  tr -d '"' < "$tmp/rows.csv" | awk -F, '
    function ms(t) { return ((substr(t, 12, 2) * 60 + substr(t, 15, 2)) * 60 + substr(t, 18, 2)) * 1000 + substr(t, 21, 3) }
    { w[NR] = $2; made[NR] = ms($5); l = ms($4); if (!($2 in ref) || l > ref[$2]) ref[$2] = l
      if ($2 > last) last = $2 }
    END { for (i = 1; i <= NR; i++) if (w[i] != last) { d = made[i] - ref[w[i]]; if (d < -43200000) d += 86400000; print d } }' |
    sort -g > "$tmp/delays"
  n=$(wc -l < "$tmp/delays")
  windows=$(tr -d '"' < "$tmp/rows.csv" | cut -d, -f2 | sort -u | wc -l)
  if [ "$n" -eq 0 ]; then
    echo "$frac $rate 0 n/a n/a n/a"
    continue
  fi
  p() { awk -v q="$1" -v n="$n" 'NR == (int(q * n) < 1 ? 1 : int(q * n)) { print; exit }' "$tmp/delays"; }
  echo "$frac $rate $((windows - 1)) $(p 0.5) $(p 0.99) $(tail -1 "$tmp/delays")"
done
