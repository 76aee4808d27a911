#!/usr/bin/env bash
# peers_ysb.sh - the Yahoo Streaming Benchmark in Sluice beside DuckDB and
# SQLite, on the same events and the same cores.
#
#   bench/peers_ysb.sh [SLUICE] [EVENTS] [RUNS]     (build/sluice 2000000 5)
#
# For 1 and 2 workers: Sluice exports the events its ysb source generates
# (seed 7, the worker count's split) and the campaigns table to CSV; then
#   - Sluice runs examples/ysb.sql's query over the same source
#     pre-generated into memory before the clock starts ('pregenerate'),
#     RUNS times (its own events/s);
#   - DuckDB (bench/peers: @duckdb/node-api, pinned in package-lock.json,
#     installed here with `npm ci` on first use) loads the CSV into tables
#     (not timed) and runs the same count per campaign per 10 s window as
#     batch SQL (the window from integer division of the timestamp), with
#     its thread count set to the worker count, RUNS times;
#   - SQLite (sqlite3, one thread) does the same at 1 worker, for scale.
# Each peer's rows must equal Sluice's (the same work), or the row says
# so.  Reported: the median events/s of the runs, their spread, and the
# ratio to Sluice at that worker count.
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
EVENTS=${2:-2000000}
RUNS=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PEERS="$SRC/bench/peers"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$SRC/bench/nexmark_common.sh" # median

command -v node >/dev/null || { echo "node is missing (apt-get install nodejs npm)"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (apt-get install sqlite3)"; exit 1; }
if [ ! -d "$PEERS/node_modules/@duckdb/node-api" ]; then
  (cd "$PEERS" && npm ci --no-audit --no-fund > "$tmp/npm.log" 2>&1) ||
    { cat "$tmp/npm.log"; echo "npm ci in bench/peers failed"; exit 1; }
fi

ddl() { # workers pregenerate
  cat <<SQL
SET parallelism.default = $1;
CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'ysb', 'events.num' = '$EVENTS', 'seed' = '7', 'pregenerate' = '$2');
CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns');
SQL
}

# The batch form of the YSB query, for DuckDB and SQLite: the window from
# integer division of the event time (ms since the epoch), grouped as an
# integer and only then formatted as Sluice prints a window's bounds.
DUCK_QUERY="SELECT campaign_id, strftime(epoch_ms(w * 10000), '%Y-%m-%d %H:%M:%S.000'),
  strftime(epoch_ms(w * 10000 + 10000), '%Y-%m-%d %H:%M:%S.000'), n
FROM (SELECT c.campaign_id, epoch_ms(e.event_time) // 10000 AS w, COUNT(*) AS n
      FROM ysb_events e JOIN campaigns c ON e.ad_id = c.ad_id
      WHERE e.event_type = 'view'
      GROUP BY 1, 2)"
LITE_QUERY="SELECT campaign_id, strftime('%Y-%m-%d %H:%M:%S.000', w * 10, 'unixepoch'),
  strftime('%Y-%m-%d %H:%M:%S.000', w * 10 + 10, 'unixepoch'), n
FROM (SELECT c.campaign_id, CAST(strftime('%s', e.event_time) AS INTEGER) / 10 AS w, COUNT(*) AS n
      FROM ysb_events e JOIN campaigns c ON e.ad_id = c.ad_id
      WHERE e.event_type = 'view'
      GROUP BY 1, 2);"

# rate FILE: events/s of each run's seconds in FILE -> "median lo..hi"
rates() {
  awk -v n="$EVENTS" '$1 > 0 { printf "%.0f\n", n / $1 }' "$1" > "$tmp/r"
  printf "%.0f %.0f..%.0f" "$(median < "$tmp/r")" "$(sort -g "$tmp/r" | head -1)" "$(sort -g "$tmp/r" | tail -1)"
}
same() { # expected got -> "yes" or "NO (a b rows)"
  if cmp -s "$1" "$2"; then echo "yes ($(wc -l < "$1") rows)"; else echo "NO ($(wc -l < "$1") vs $(wc -l < "$2") rows)"; fi
}

echo "YSB over $EVENTS events (seed 7), median of $RUNS runs, events/s"
echo
echo "| engine | workers / threads | events/s (median) | spread | x Sluice | same rows as Sluice |"
echo "| --- | --- | --- | --- | --- | --- |"
for w in 1 2; do
  # The events, exported as this worker count generates them.
  { ddl "$w" false
    cat <<SQL
CREATE TABLE ev_csv (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING, event_type STRING,
  event_time TIMESTAMP(3), ip_address STRING) WITH ('connector' = 'filesystem', 'path' = '$tmp/events.csv', 'format' = 'csv');
CREATE TABLE camp_csv (ad_id STRING, campaign_id STRING) WITH ('connector' = 'filesystem', 'path' = '$tmp/campaigns.csv', 'format' = 'csv');
INSERT INTO ev_csv SELECT * FROM ysb_events;
INSERT INTO camp_csv SELECT * FROM campaigns;
SQL
  } > "$tmp/export.sql"
  rm -rf "$tmp/events.csv" "$tmp/campaigns.csv"
  (cd "$SRC" && "$SLUICE" "$tmp/export.sql" > /dev/null 2> "$tmp/err") || { cat "$tmp/err"; exit 1; }

  # Sluice.
  { ddl "$w" true; sed -n '/^SELECT/,$p' "$SRC/examples/ysb.sql"; } > "$tmp/ysb.sql"
  : > "$tmp/sluice.s"
  for r in $(seq "$RUNS"); do
    (cd "$SRC" && "$SLUICE" -m csv --no-headers "$tmp/ysb.sql" 2> "$tmp/err" | tr -d '"' | sort > "$tmp/sluice.csv") ||
      { cat "$tmp/err"; exit 1; }
    grep -oE "\([0-9]+ events/s" "$tmp/err" | tail -1 | tr -d "(" | awk -v n="$EVENTS" '{ print n / $1 }' >> "$tmp/sluice.s"
  done
  read -r s_med s_spread <<< "$(rates "$tmp/sluice.s")"
  echo "| Sluice (compiled) | $w | $s_med | $s_spread | 1.00 | |"

  # DuckDB, as many threads as Sluice's workers.
  cat > "$tmp/load.sql" <<SQL
CREATE TABLE ysb_events AS SELECT * FROM read_csv('$tmp/events.csv', header = false, columns = {
  'user_id': 'VARCHAR', 'page_id': 'VARCHAR', 'ad_id': 'VARCHAR', 'ad_type': 'VARCHAR',
  'event_type': 'VARCHAR', 'event_time': 'TIMESTAMP', 'ip_address': 'VARCHAR'});
CREATE TABLE campaigns AS SELECT * FROM read_csv('$tmp/campaigns.csv', header = false,
  columns = {'ad_id': 'VARCHAR', 'campaign_id': 'VARCHAR'});
SQL
  echo "$DUCK_QUERY" > "$tmp/duck.sql"
  node "$PEERS/duckdb_query.mjs" "$w" "$RUNS" "$tmp/duck.out" "$tmp/load.sql" "$tmp/duck.sql" > "$tmp/duck.log"
  awk '$1 == "run_s" { print $2 }' "$tmp/duck.log" > "$tmp/duck.s"
  sort "$tmp/duck.out" > "$tmp/duck.csv"
  read -r d_med d_spread <<< "$(rates "$tmp/duck.s")"
  printf "| DuckDB %s | %s | %s | %s | %.2f | %s |\n" "$(cd "$PEERS" && node -p "require('./node_modules/@duckdb/node-api/package.json').version")" \
    "$w" "$d_med" "$d_spread" "$(echo "$d_med / $s_med" | bc -l)" "$(same "$tmp/sluice.csv" "$tmp/duck.csv")"

  # SQLite, one thread: once, beside the 1-worker runs.
  if [ "$w" = 1 ]; then
    rm -f "$tmp/lite.db"
    sqlite3 "$tmp/lite.db" <<SQL
CREATE TABLE ysb_events (user_id TEXT, page_id TEXT, ad_id TEXT, ad_type TEXT, event_type TEXT, event_time TEXT, ip_address TEXT);
CREATE TABLE campaigns (ad_id TEXT, campaign_id TEXT);
.import --csv $tmp/events.csv ysb_events
.import --csv $tmp/campaigns.csv campaigns
SQL
    : > "$tmp/lite.s"
    for r in $(seq "$RUNS"); do
      printf ".mode csv\n.timer on\n%s\n" "$LITE_QUERY" | sqlite3 "$tmp/lite.db" > "$tmp/lite.out"
      grep -o "^Run Time: real [0-9.]*" "$tmp/lite.out" | awk '{print $4}' >> "$tmp/lite.s"
    done
    grep -v "^Run Time" "$tmp/lite.out" | tr -d '"\r' | sort > "$tmp/lite.csv"
    read -r l_med l_spread <<< "$(rates "$tmp/lite.s")"
    printf "| SQLite %s | 1 | %s | %s | %.2f | %s |\n" "$(sqlite3 --version | cut -d' ' -f1)" \
      "$l_med" "$l_spread" "$(echo "$l_med / $s_med" | bc -l)" "$(same "$tmp/sluice.csv" "$tmp/lite.csv")"
  fi
done
