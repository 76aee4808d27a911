#!/usr/bin/env bash
# run_differential.sh - Sluice against sqlite3, an independent oracle.
#
# Generates a random CSV stream (keys, values with NULLs, event times that
# arrive out of order but within the watermark bound, so no record is late),
# runs windowed queries through Sluice at 1, 2 and 4 workers (late merge)
# and at 2 and 4 workers repartitioning by key, computes the
# same results with sqlite3 (GROUP BY on window bounds computed with integer
# arithmetic, sessions with LAG), and compares the sorted rows.  Then the
# same for NEXMark's windowed queries and for YSB (examples/ysb.sql), with
# the generators' events exported through the CSV sink as the oracle's
# input.
#
#   run_differential.sh SLUICE SOURCE_DIR [ROWS] [SEED]
set -euo pipefail
SLUICE=$1
SRC=$2
ROWS=${3:-200000}
SEED=${4:-42}
command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (apt-get install sqlite3)"; exit 1; }
. "$(dirname "$0")/oracle.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The stream: key k in 0..49, value v in -100..899 (5% NULL), time in ms
# after 2024-01-01 00:00:00, drifting forward with up to 1.5 s of disorder.
awk -v n="$ROWS" -v seed="$SEED" 'BEGIN {
  srand(seed); t = 2000;
  for (i = 0; i < n; i++) {
    t += int(rand() * 20);
    ts = t - int(rand() * 1500);
    k = int(rand() * 50);
    v = (rand() < 0.05) ? "" : int(rand() * 1000) - 100;
    printf "%d,%s,2024-01-01 %02d:%02d:%02d.%03d\n", k, v,
           int(ts / 3600000), int(ts / 60000) % 60, int(ts / 1000) % 60, ts % 1000;
  }
}' > "$tmp/stream.csv"

DDL="CREATE TABLE s (k INT, v INT, ts TIMESTAMP(3),
       WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
     WITH ('connector' = 'filesystem', 'path' = '$tmp/stream.csv', 'format' = 'csv');"

# name|sluice query|sqlite query (over table s with ts_ms)
QUERIES=(
"tumble|SELECT k, window_start, window_end, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v)
  FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY k, window_start, window_end;|SELECT k, fmt(w), fmt(w + 5000), COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v),
  CAST(SUM(v) / COUNT(v) AS INTEGER)
  FROM (SELECT k, v, (ts_ms / 5000) * 5000 AS w FROM s) GROUP BY k, w;"
"hop|SELECT window_start, window_end, COUNT(*), SUM(v), MAX(v)
  FROM TABLE(HOP(TABLE s, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;|SELECT fmt(w), fmt(w + 10000), COUNT(*), SUM(v), MAX(v)
  FROM (SELECT v, (ts_ms / 2000) * 2000 - j * 2000 AS w FROM s, offsets) GROUP BY w;"
"legacy_tumble|SELECT k, TUMBLE_START(ts, INTERVAL '30' SECOND), COUNT(DISTINCT v), COUNT(*) FILTER (WHERE v > 500)
  FROM s GROUP BY k, TUMBLE(ts, INTERVAL '30' SECOND);|SELECT k, fmt(w), COUNT(DISTINCT v), SUM(CASE WHEN v > 500 THEN 1 ELSE 0 END)
  FROM (SELECT k, v, (ts_ms / 30000) * 30000 AS w FROM s) GROUP BY k, w;"
"session|SELECT k, SESSION_START(ts, INTERVAL '1' SECOND), SESSION_END(ts, INTERVAL '1' SECOND), COUNT(*), SUM(v)
  FROM s GROUP BY k, SESSION(ts, INTERVAL '1' SECOND);|WITH o AS (SELECT k, v, ts_ms,
    CASE WHEN ts_ms - LAG(ts_ms) OVER (PARTITION BY k ORDER BY ts_ms) <= 1000 THEN 0 ELSE 1 END AS f FROM s),
  g AS (SELECT k, v, ts_ms, SUM(f) OVER (PARTITION BY k ORDER BY ts_ms ROWS UNBOUNDED PRECEDING) AS sid FROM o)
  SELECT k, fmt(MIN(ts_ms)), fmt(MAX(ts_ms) + 1000), COUNT(*), SUM(v) FROM g GROUP BY k, sid;"
"global|SELECT k, COUNT(*), SUM(v), MIN(v) FROM s WHERE v IS NOT NULL AND v < 700 GROUP BY k;|SELECT k, COUNT(*), SUM(v), MIN(v) FROM s WHERE v IS NOT NULL AND v < 700 GROUP BY k;"
"filter_project|SELECT k * 10 + 1, v - 5 FROM s WHERE k BETWEEN 10 AND 12 AND v > 850;|SELECT k * 10 + 1, v - 5 FROM s WHERE k BETWEEN 10 AND 12 AND v > 850;"
"having_on_keys|SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY k, window_start, window_end HAVING MOD(k, 3) = 1 AND COUNT(*) > 12 AND k < 2 * 20;|SELECT k, fmt(w), COUNT(*), SUM(v)
  FROM (SELECT k, v, (ts_ms / 5000) * 5000 AS w FROM s) GROUP BY k, w HAVING k % 3 = 1 AND COUNT(*) > 12 AND k < 40;"
"top_n|SELECT k, v, ts FROM s WHERE v IS NOT NULL ORDER BY v DESC, k, ts LIMIT 40 OFFSET 5;|SELECT k, v, ts FROM s WHERE v IS NOT NULL ORDER BY v DESC, k, ts LIMIT 40 OFFSET 5;"
"folded_constants|SELECT k + 10 * 100, v * (2 + 3), CHAR_LENGTH(CONCAT(UPPER('abc'), 'de')) FROM s WHERE v > 400 + 4 * 100 AND k = 7;|SELECT k + 1000, v * 5, 5 FROM s WHERE v > 800 AND k = 7;"
)

# The oracle's copy of the stream, with ts in ms and a fmt() for window
# bounds (as a view over printf, since sqlite3 has no user functions here).
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE raw (k INTEGER, v, ts TEXT);
.mode csv
.import $tmp/stream.csv raw
UPDATE raw SET v = NULL WHERE v = '';
CREATE TABLE s AS SELECT k, CAST(v AS INTEGER) AS v, ts,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms
  FROM raw;
CREATE TABLE offsets (j INTEGER);
INSERT INTO offsets VALUES (0), (1), (2), (3), (4);
SQL

fail=0 passed=0
# run_case NAME DDL SLUICE_QUERY ORACLE_QUERY: the oracle's rows against
# Sluice's at 1, 2 and 4 workers.
run_case() {
  local name=$1 ddl=$2 sq=$3 oq=$4
  if ! oracle_rows "$tmp/oracle.db" "$oq" "$tmp/$name.expected"; then
    echo "FAIL $name: the oracle returned no rows"; fail=$((fail + 1)); return
  fi
  for w in 1 2 4 2r 4r n2 n2r; do
    strategy=late-merge nodes=1
    case $w in *r) strategy=repartition; w=${w%r} ;; esac
    case $w in n*) nodes=${w#n}; w=1 ;; esac
    printf "%s\nSET parallelism.default = %s;\nSET 'sluice.nodes' = '%s';\nSET 'sluice.strategy' = '%s';\n%s\n" \
      "$ddl" "$w" "$nodes" "$strategy" "$sq" > "$tmp/q.sql"
    if ! "$SLUICE" -m csv --no-headers "$tmp/q.sql" 2>"$tmp/err" | sort > "$tmp/$name.$w"; then
      echo "FAIL $name ($w workers x $nodes node(s), $strategy): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); continue
    fi
    compare_rows "$name" "$w workers x $nodes node(s), $strategy" "$tmp/$name.expected" "$tmp/$name.$w"
  done
}

for entry in "${QUERIES[@]}"; do
  name=${entry%%|*}; rest=${entry#*|}
  run_case "$name" "$DDL" "${rest%%|*}" "${rest#*|}"
done

# Lookup joins (the stream joined with a bounded table, probed per record;
# compiled into the pipeline's one loop when the JIT is on): a stream with
# a string key (short inline names, long ones, 5% NULL) against a table
# with duplicate keys (several matches per record), NULL keys and a column
# the post-join filter compares with the stream's.
awk -v n="$((ROWS / 4))" -v seed="$SEED" 'BEGIN {
  srand(seed + 1); t = 2000;
  for (i = 0; i < n; i++) {
    t += int(rand() * 40);
    ts = t - int(rand() * 1500);
    k = int(rand() * 30);
    name = (rand() < 0.05) ? "" : (k % 2 ? sprintf("a-long-name-for-key-%d", k) : sprintf("n%d", k));
    printf "%s,%d,%d,2024-01-01 %02d:%02d:%02d.%03d\n", name, k, int(rand() * 100),
           int(ts / 3600000), int(ts / 60000) % 60, int(ts / 1000) % 60, ts % 1000;
  }
}' > "$tmp/jstream.csv"
awk 'BEGIN {
  for (k = 0; k < 30; k += 1) {
    if (k % 5 == 4) continue;                      # keys no record finds
    name = k % 2 ? sprintf("a-long-name-for-key-%d", k) : sprintf("n%d", k);
    for (d = 0; d <= k % 3; d++)                   # 1..3 rows per key
      printf "%s,%d,g%d,%d\n", name, k, (k + d) % 4, (k * 7 + d * 13) % 100;
  }
  printf ",7,gnull,50\n";                         # NULL keys match nothing
  printf "n8,,gnull,50\n";
}' > "$tmp/jtable.csv"
JOIN_DDL="CREATE TABLE js (name STRING, k INT, v INT, ts TIMESTAMP(3),
       WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
     WITH ('connector' = 'filesystem', 'path' = '$tmp/jstream.csv', 'format' = 'csv');
CREATE TABLE jt (name STRING, k INT, grp STRING, w INT)
     WITH ('connector' = 'filesystem', 'path' = '$tmp/jtable.csv', 'format' = 'csv');"
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE jsraw (name TEXT, k INTEGER, v INTEGER, ts TEXT);
CREATE TABLE jtraw (name TEXT, k, grp TEXT, w INTEGER);
.mode csv
.import $tmp/jstream.csv jsraw
.import $tmp/jtable.csv jtraw
CREATE TABLE js AS SELECT NULLIF(name, '') AS name, k, v,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms
  FROM jsraw;
CREATE TABLE jt AS SELECT NULLIF(name, '') AS name, CAST(NULLIF(k, '') AS INTEGER) AS k, grp, w FROM jtraw;
SQL
run_case join_string_key "$JOIN_DDL" \
  "SELECT t.grp, window_start, COUNT(*), SUM(s.v + t.w) FROM TABLE(TUMBLE(TABLE js, DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS s JOIN jt AS t ON s.name = t.name WHERE s.v > t.w GROUP BY t.grp, window_start, window_end;" \
  "SELECT t.grp, fmt(w5), COUNT(*), SUM(s.v + t.w) FROM (SELECT name, v, (ts_ms / 5000) * 5000 AS w5 FROM js) s JOIN jt t ON s.name = t.name WHERE s.v > t.w GROUP BY t.grp, w5;"
run_case join_two_keys "$JOIN_DDL" \
  "SELECT t.name, window_start, COUNT(*), MAX(s.v), MIN(t.w) FROM TABLE(HOP(TABLE js, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) AS s JOIN jt AS t ON s.k = t.k AND s.name = t.name WHERE s.v < 90 GROUP BY t.name, window_start, window_end;" \
  "SELECT t.name, fmt(wh), COUNT(*), MAX(s.v), MIN(t.w) FROM (SELECT name, k, v, (ts_ms / 2000) * 2000 - j * 2000 AS wh FROM js, offsets) s JOIN jt t ON s.k = t.k AND s.name = t.name WHERE s.v < 90 GROUP BY t.name, wh;"
run_case join_expression_key "$JOIN_DDL" \
  "SELECT t.grp, window_start, COUNT(*), SUM(t.w) FROM TABLE(TUMBLE(TABLE js, DESCRIPTOR(ts), INTERVAL '10' SECOND)) AS s JOIN jt AS t ON MOD(s.v, 30) = t.k GROUP BY t.grp, window_start, window_end;" \
  "SELECT t.grp, fmt(w10), COUNT(*), SUM(t.w) FROM (SELECT v, (ts_ms / 10000) * 10000 AS w10 FROM js) s JOIN jt t ON s.v % 30 = t.k GROUP BY t.grp, w10;"

# NEXMark: the generator's bids, exported through the CSV sink, are the
# oracle's input; Sluice computes the windowed queries from the generator
# itself (through the datagen table, its computed dateTime and the bid view).
NEXMARK_DDL=$(sed -e "s/'first-event.rate' = '[0-9]*'/'first-event.rate' = '10000'/" \
                  -e "s/'next-event.rate' = '[0-9]*'/'next-event.rate' = '10000'/" \
                  -e "s/'events.num' = '[0-9]*'/'events.num' = '$ROWS'/" "$SRC/examples/nexmark/ddl.sql")
cat > "$tmp/export.sql" <<SQL
$NEXMARK_DDL
CREATE TABLE bids_csv (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$tmp/bids.csv', 'format' = 'csv');
INSERT INTO bids_csv SELECT auction, bidder, price, dateTime FROM bid;
SQL
"$SLUICE" "$tmp/export.sql" 2>"$tmp/err" >/dev/null || { echo "FAIL nexmark export:"; cat "$tmp/err"; exit 1; }
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE braw (auction INTEGER, bidder INTEGER, price INTEGER, ts TEXT);
.mode csv
.import $tmp/bids.csv braw
CREATE TABLE bids AS SELECT auction, bidder, price,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms
  FROM braw;
SQL
run_case nexmark_q7_window "$NEXMARK_DDL" \
  "SELECT window_start, window_end, MAX(price), COUNT(*) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;" \
  "SELECT fmt(w), fmt(w + 10000), MAX(price), COUNT(*) FROM (SELECT price, (ts_ms / 10000) * 10000 AS w FROM bids) GROUP BY w;"
run_case nexmark_q5_counts "$NEXMARK_DDL" \
  "SELECT auction, window_start, window_end, COUNT(*) FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end;" \
  "SELECT auction, fmt(w), fmt(w + 10000), COUNT(*) FROM (SELECT auction, (ts_ms / 2000) * 2000 - j * 2000 AS w FROM bids, offsets) GROUP BY auction, w;"
run_case nexmark_q11_sessions "$NEXMARK_DDL" \
  "SELECT B.bidder, count(*), SESSION_START(B.dateTime, INTERVAL '10' SECOND), SESSION_END(B.dateTime, INTERVAL '10' SECOND) FROM bid B GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND);" \
  "WITH o AS (SELECT bidder, ts_ms, CASE WHEN ts_ms - LAG(ts_ms) OVER (PARTITION BY bidder ORDER BY ts_ms) <= 10000 THEN 0 ELSE 1 END AS f FROM bids), g AS (SELECT bidder, ts_ms, SUM(f) OVER (PARTITION BY bidder ORDER BY ts_ms ROWS UNBOUNDED PRECEDING) AS sid FROM o) SELECT bidder, COUNT(*), fmt(MIN(ts_ms)), fmt(MAX(ts_ms) + 10000) FROM g GROUP BY bidder, sid;"
# YSB: the query of examples/ysb.sql, against sqlite3 over the generator's
# events and campaigns exported through the CSV sink.
YSB_DDL="CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING,
  ad_type STRING, event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'ysb', 'events.num' = '$ROWS', 'events.per-second' = '10000',
        'seed' = '$SEED');
CREATE TABLE campaigns (ad_id STRING, campaign_id STRING)
  WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns');"
cat > "$tmp/ysb_export.sql" <<SQL
$YSB_DDL
CREATE TABLE ev_csv (ad_id STRING, event_type STRING, event_time TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$tmp/ysb_events.csv', 'format' = 'csv');
INSERT INTO ev_csv SELECT ad_id, event_type, event_time FROM ysb_events;
CREATE TABLE camp_csv (ad_id STRING, campaign_id STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/campaigns.csv', 'format' = 'csv');
INSERT INTO camp_csv SELECT ad_id, campaign_id FROM campaigns;
SQL
"$SLUICE" "$tmp/ysb_export.sql" 2>"$tmp/err" >/dev/null || { echo "FAIL ysb export:"; cat "$tmp/err"; exit 1; }
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE yraw (ad_id TEXT, event_type TEXT, ts TEXT);
CREATE TABLE camp (ad_id TEXT, campaign_id TEXT);
.mode csv
.import $tmp/ysb_events.csv yraw
.import $tmp/campaigns.csv camp
CREATE TABLE ysb AS SELECT ad_id, event_type,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms
  FROM yraw;
SQL
YSB_QUERY=$(sed -n '/^SELECT/,$p' "$SRC/examples/ysb.sql")
run_case ysb "$YSB_DDL" "$YSB_QUERY" \
  "SELECT c.campaign_id, fmt(w), fmt(w + 10000), COUNT(*) FROM (SELECT ad_id, (ts_ms / 10000) * 10000 AS w FROM ysb WHERE event_type = 'view') e JOIN camp c ON e.ad_id = c.ad_id GROUP BY c.campaign_id, w;"

echo "differential: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
