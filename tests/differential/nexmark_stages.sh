#!/usr/bin/env bash
# nexmark_stages.sh - the multi-stage NEXMark queries against sqlite3.
#
# The published texts of examples/nexmark/q5.sql (hot items: an aggregate
# over a windowed aggregate, joined back), q7.sql (highest bid: an interval
# join of the bids with their windowed maximum) and q8.sql (new users: a
# window join of two windowed aggregates) run unchanged as SELECTs over the
# generator, plus window Top-N and window joins in Flink's spellings (over
# aggregates and over window TVF rows).  The
# oracle is sqlite3 over the same events, exported through the CSV sink,
# with windows computed by integer arithmetic.  Each query runs at 1 and 2
# workers, with late merge and repartitioning forced, and on 2 and 3 nodes
# (every leaf on every node; the stages in the shell's process) with late
# merge and on 2 with repartitioning, and on 2 and 3 with the broadcast
# join (the stages on the nodes, where the query is one join of two
# leaves: q7, q8, the window joins; the others run as single), and on 2
# and 3 with the repartitioned join (where one side is a windowed
# aggregate grouped by the join key: q8, the window join of aggregates;
# else both sides routed by the join key: q7, the joins of window rows),
# and on 2 and 3 with the late-merge join (both sides' aggregates split by
# the join key at the same leaders: q8, the window join of aggregates;
# window rows held per window at their senders until the watermark passes
# it: the joins of window rows; the others run as single).
# Window rows of TUMBLE and HOP TVFs (each HOP row in two windows).  The generator's
# events are in time order per worker, so none is late and the oracle uses
# them all (checked: the summary line must say 0 late records).
#
#   nexmark_stages.sh SLUICE SOURCE_DIR [EVENTS]
set -euo pipefail
SLUICE=$1
SRC=$2
EVENTS=${3:-100000}
command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (apt-get install sqlite3)"; exit 1; }
. "$(dirname "$0")/oracle.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1000 events per second of event time: 100 s for 100000 events, so ten
# 10-second windows and fifty hopping ones.
DDL=$(sed -e "s/'first-event.rate' = '[0-9]*'/'first-event.rate' = '1000'/" \
          -e "s/'next-event.rate' = '[0-9]*'/'next-event.rate' = '1000'/" \
          -e "s/'events.num' = '[0-9]*'/'events.num' = '$EVENTS'/" "$SRC/examples/nexmark/ddl.sql")
cat > "$tmp/export.sql" <<SQL
$DDL
CREATE TABLE p_csv (id BIGINT, name STRING, dateTime TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$tmp/persons.csv', 'format' = 'csv');
INSERT INTO p_csv SELECT id, name, dateTime FROM person;
CREATE TABLE a_csv (id BIGINT, seller BIGINT, dateTime TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '$tmp/auctions.csv', 'format' = 'csv');
INSERT INTO a_csv SELECT id, seller, dateTime FROM auction;
CREATE TABLE b_csv (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/bids.csv', 'format' = 'csv');
INSERT INTO b_csv SELECT auction, bidder, price, dateTime, extra FROM bid;
SQL
"$SLUICE" "$tmp/export.sql" 2>"$tmp/err" >/dev/null || { echo "FAIL export:"; cat "$tmp/err"; exit 1; }
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE praw (id INTEGER, name TEXT, ts TEXT);
CREATE TABLE araw (id INTEGER, seller INTEGER, ts TEXT);
CREATE TABLE braw (auction INTEGER, bidder INTEGER, price INTEGER, ts TEXT, extra TEXT);
.mode csv
.import $tmp/persons.csv praw
.import $tmp/auctions.csv araw
.import $tmp/bids.csv braw
CREATE TABLE persons AS SELECT id, name,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms FROM praw;
CREATE TABLE auctions AS SELECT id, seller,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms FROM araw;
CREATE TABLE bids AS SELECT auction, bidder, price, extra,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms FROM braw;
CREATE TABLE offsets (j INTEGER);
INSERT INTO offsets VALUES (0), (1), (2), (3), (4);
SQL
for t in persons auctions bids; do
  n=$(sqlite3 "$tmp/oracle.db" "SELECT COUNT(*) FROM $t")
  [ "$n" -gt 0 ] || { echo "FAIL: no $t exported"; exit 1; }
done

# The SELECT of a published INSERT INTO nexmark_qN ... (the query as is).
published() { sed -n '/^INSERT INTO/,$p' "$SRC/examples/nexmark/$1.sql" | sed '1s/^INSERT INTO [a-z0-9_]*//'; }

fail=0 passed=0
# run_case NAME SLUICE_QUERY ORACLE_QUERY
run_case() {
  local name=$1 sq=$2 oq=$3
  if ! oracle_rows "$tmp/oracle.db" "$oq" "$tmp/$name.expected"; then
    echo "FAIL $name: the oracle returned no rows"; fail=$((fail + 1)); return
  fi
  for cfg in ${DIFF_CONFIGS_STAGES:-w1 w2 w2r n2 n3 n2r n2b n3b n2j n3j n2l n3l}; do
    local workers=1 strategy=late-merge nodes=1 join=auto
    case $cfg in
      w2) workers=2 ;;
      w2r) workers=2 strategy=repartition ;;
      n2) nodes=2 ;;
      n3) nodes=3 ;;
      n2r) nodes=2 strategy=repartition ;;
      n2b) nodes=2 strategy=broadcast ;;
      n3b) nodes=3 strategy=broadcast ;;
      n2j|n3j) nodes=${cfg:1:1} join=repartition ;;
      n2l|n3l) nodes=${cfg:1:1} join=late-merge ;;
    esac
    printf "%s\nSET parallelism.default = %s;\nSET 'sluice.nodes' = '%s';\nSET 'sluice.strategy' = '%s';\nSET 'sluice.join-strategy' = '%s';\n%s\n" \
      "$DDL" "$workers" "$nodes" "$strategy" "$join" "$sq" > "$tmp/q.sql"
    if ! "$SLUICE" -m csv --no-headers "$tmp/q.sql" 2>"$tmp/err" | tr -d '"' | sort > "$tmp/$name.$cfg"; then
      echo "FAIL $name ($cfg): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); continue
    fi
    if ! grep -q " 0 late records dropped" "$tmp/err"; then
      echo "FAIL $name ($cfg): records were late, the oracle assumes none:"; grep "late" "$tmp/err"; fail=$((fail + 1)); continue
    fi
    compare_rows "$name" "$cfg, $strategy, join $join" "$tmp/$name.expected" "$tmp/$name.$cfg"
  done
}

# q5: per HOP window (2 s slide, 10 s size: a bid is in 5 windows) the
# auctions whose bid count reaches the window's maximum.
run_case q5 "$(published q5)" \
  "WITH c AS (SELECT auction, w, COUNT(*) AS num
              FROM (SELECT auction, (ts_ms / 2000) * 2000 - j * 2000 AS w FROM bids, offsets)
              GROUP BY auction, w),
        m AS (SELECT w, MAX(num) AS maxn FROM c GROUP BY w)
   SELECT c.auction, c.num FROM c JOIN m ON c.w = m.w AND c.num >= m.maxn;"

# q7: bids whose price is the maximum of a 10 s window and whose time lies
# in [window time - 10 s, window time], window time = window end - 1 ms
# (so a bid 1 ms before a window starts meets that window too).
run_case q7 "$(published q7)" \
  "WITH m AS (SELECT (ts_ms / 10000) * 10000 + 9999 AS rt, MAX(price) AS maxprice
              FROM bids GROUP BY ts_ms / 10000)
   SELECT B.auction, B.price, B.bidder, fmt(B.ts_ms), B.extra
   FROM bids B JOIN m ON B.price = m.maxprice
   WHERE B.ts_ms BETWEEN m.rt - 10000 AND m.rt;"

# q7 with MIN: the lowest bids of each 10 s window (prices repeat at the
# bottom: several rows per window).  The stream leaf keeps only bids at or
# below their window's lowest so far (planner/stage_extremes.c).
run_case q7_min \
  "SELECT B.auction, B.price, B.bidder, B.dateTime
   FROM bid B JOIN (SELECT MIN(B1.price) AS minprice,
                           TUMBLE_ROWTIME(B1.dateTime, INTERVAL '10' SECOND) AS dateTime
                    FROM bid B1 GROUP BY TUMBLE(B1.dateTime, INTERVAL '10' SECOND)) B1
   ON B.price = B1.minprice
   WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;" \
  "WITH m AS (SELECT (ts_ms / 10000) * 10000 + 9999 AS rt, MIN(price) AS minprice
              FROM bids GROUP BY ts_ms / 10000)
   SELECT B.auction, B.price, B.bidder, fmt(B.ts_ms)
   FROM bids B JOIN m ON B.price = m.minprice
   WHERE B.ts_ms BETWEEN m.rt - 10000 AND m.rt;"

# The latest bids of each 3 s window (a TIMESTAMP as the extreme; bids of
# the same millisecond tie), met within the window itself.
run_case latest_bids \
  "SELECT B.auction, B.bidder, B.dateTime
   FROM bid B JOIN (SELECT MAX(B1.dateTime) AS last, window_start, window_end
                    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '3' SECOND)) B1
                    GROUP BY window_start, window_end) L
   ON B.dateTime = L.last
   WHERE B.dateTime >= L.window_start AND B.dateTime < L.window_end;" \
  "WITH m AS (SELECT ts_ms / 3000 AS w, MAX(ts_ms) AS last FROM bids GROUP BY ts_ms / 3000)
   SELECT B.auction, B.bidder, fmt(B.ts_ms) FROM bids B JOIN m ON B.ts_ms = m.last;"

# q7 whose maximum is over other rows than the stream's (even auctions
# only): no bid may be left out for being below it.
run_case q7_other_rows \
  "SELECT B.auction, B.price, B.bidder
   FROM bid B JOIN (SELECT MAX(B1.price) AS maxprice,
                           TUMBLE_ROWTIME(B1.dateTime, INTERVAL '10' SECOND) AS dateTime
                    FROM bid B1 WHERE B1.auction % 2 = 0
                    GROUP BY TUMBLE(B1.dateTime, INTERVAL '10' SECOND)) B1
   ON B.price = B1.maxprice
   WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;" \
  "WITH m AS (SELECT (ts_ms / 10000) * 10000 + 9999 AS rt, MAX(price) AS maxprice
              FROM bids WHERE auction % 2 = 0 GROUP BY ts_ms / 10000)
   SELECT B.auction, B.price, B.bidder
   FROM bids B JOIN m ON B.price = m.maxprice
   WHERE B.ts_ms BETWEEN m.rt - 10000 AND m.rt;"

# q8: persons who registered and opened an auction in the same 10 s window.
run_case q8 "$(published q8)" \
  "WITH p AS (SELECT DISTINCT id, name, (ts_ms / 10000) * 10000 AS w FROM persons),
        a AS (SELECT DISTINCT seller, (ts_ms / 10000) * 10000 AS w FROM auctions)
   SELECT p.id, p.name, fmt(p.w) FROM p JOIN a ON p.id = a.seller AND p.w = a.w;"

# The Flink window-join spelling over window TVFs, with an aggregate on
# each side.
run_case window_join_tvf \
  "SELECT P.id, P.window_start, P.n, A.auctions
   FROM (SELECT id, window_start, window_end, COUNT(*) AS n
         FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
         GROUP BY id, window_start, window_end) P
   JOIN (SELECT seller, window_start, window_end, COUNT(*) AS auctions
         FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
         GROUP BY seller, window_start, window_end) A
   ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;" \
  "WITH p AS (SELECT id, (ts_ms / 10000) * 10000 AS w, COUNT(*) AS n FROM persons GROUP BY id, w),
        a AS (SELECT seller, (ts_ms / 10000) * 10000 AS w, COUNT(*) AS auctions FROM auctions GROUP BY seller, w)
   SELECT p.id, fmt(p.w), p.n, a.auctions FROM p JOIN a ON p.id = a.seller AND p.w = a.w;"

# Window Top-N: the three auctions with the most bids per 10 s window
# (ties broken by auction id, as ROW_NUMBER's ORDER BY says).
run_case window_top3 \
  "SELECT auction, window_start, num, rownum FROM (
     SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                  ORDER BY num DESC, auction) AS rownum
     FROM (SELECT auction, window_start, window_end, COUNT(*) AS num
           FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
           GROUP BY auction, window_start, window_end))
   WHERE rownum <= 3;" \
  "WITH c AS (SELECT auction, (ts_ms / 10000) * 10000 AS w, COUNT(*) AS num FROM bids GROUP BY auction, w),
        r AS (SELECT auction, w, num, ROW_NUMBER() OVER (PARTITION BY w ORDER BY num DESC, auction) AS rn FROM c)
   SELECT auction, fmt(w), num, rn FROM r WHERE rn <= 3;"

# Flink's window Top-N over the window TVF's rows: the three highest bids
# of each 10 s window (ties by auction, then bidder; prices repeat rarely).
run_case window_top3_rows \
  "SELECT auction, bidder, price, window_start, rownum FROM (
     SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                  ORDER BY price DESC, auction, bidder, dateTime) AS rownum
     FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)))
   WHERE rownum <= 3;" \
  "WITH r AS (SELECT auction, bidder, price, (ts_ms / 10000) * 10000 AS w,
                     ROW_NUMBER() OVER (PARTITION BY ts_ms / 10000 ORDER BY price DESC, auction, bidder, ts_ms) AS rn
              FROM bids)
   SELECT auction, bidder, price, fmt(w), rn FROM r WHERE rn <= 3;"

# Flink's window join over two window TVFs' rows: every auction opened by a
# person in the window she registered in.
run_case window_join_rows \
  "SELECT P.id, A.id, P.window_start
   FROM (SELECT * FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) P
   JOIN (SELECT * FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) A
   ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;" \
  "SELECT p.id, a.id, fmt((p.ts_ms / 10000) * 10000) FROM persons p JOIN auctions a
   ON p.id = a.seller AND p.ts_ms / 10000 = a.ts_ms / 10000;"

# The same join over HOP rows (10 s windows every 5 s: each event is in
# two), the TVFs read directly in the join: no side is an aggregate, so a
# forced repartition routes both sides by the join key.
run_case window_join_hop_rows \
  "SELECT P.id, A.id, P.window_start
   FROM TABLE(HOP(TABLE person, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) P
   JOIN TABLE(HOP(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) A
   ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;" \
  "WITH p AS (SELECT id, (ts_ms / 5000) * 5000 - j * 5000 AS w FROM persons, offsets WHERE j < 2),
        a AS (SELECT id, seller, (ts_ms / 5000) * 5000 - j * 5000 AS w FROM auctions, offsets WHERE j < 2)
   SELECT p.id, a.id, fmt(p.w) FROM p JOIN a ON p.id = a.seller AND p.w = a.w;"

# Window Top-N over HOP rows: the three highest bids of each window.
run_case window_top3_hop_rows \
  "SELECT auction, bidder, price, window_start, rownum FROM (
     SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                  ORDER BY price DESC, auction, bidder, dateTime) AS rownum
     FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)))
   WHERE rownum <= 3;" \
  "WITH b AS (SELECT auction, bidder, price, ts_ms, (ts_ms / 5000) * 5000 - j * 5000 AS w FROM bids, offsets WHERE j < 2),
        r AS (SELECT auction, bidder, price, w,
                     ROW_NUMBER() OVER (PARTITION BY w ORDER BY price DESC, auction, bidder, ts_ms) AS rn
              FROM b)
   SELECT auction, bidder, price, fmt(w), rn FROM r WHERE rn <= 3;"

# NB11's shape: a join of two session-window aggregates on the key and both
# session bounds (each side's sessions computed on its own, as Flink's
# SQL does): each bidder's sessions of all bids against those of her bids
# over 1000, which share both bounds only when the first and the last bid
# of a session are both over 1000.  The oracle finds sessions with LAG: a
# bid more than 10 s after the bidder's previous one starts a new one
# (sessions that touch merge, as in Flink).
run_case session_join \
  "SELECT B.bidder, B.s, B.e, B.n, H.n
   FROM (SELECT bidder, COUNT(*) AS n, SESSION_START(dateTime, INTERVAL '10' SECOND) AS s,
                SESSION_END(dateTime, INTERVAL '10' SECOND) AS e
         FROM bid GROUP BY bidder, SESSION(dateTime, INTERVAL '10' SECOND)) B
   JOIN (SELECT bidder, COUNT(*) AS n, SESSION_START(dateTime, INTERVAL '10' SECOND) AS s,
                SESSION_END(dateTime, INTERVAL '10' SECOND) AS e
         FROM bid WHERE price > 1000 GROUP BY bidder, SESSION(dateTime, INTERVAL '10' SECOND)) H
   ON B.bidder = H.bidder AND B.s = H.s AND B.e = H.e;" \
  "WITH ball AS (SELECT bidder, ts_ms,
                     CASE WHEN ts_ms - LAG(ts_ms) OVER (PARTITION BY bidder ORDER BY ts_ms) <= 10000 THEN 0 ELSE 1 END AS nw
              FROM bids),
        hall AS (SELECT bidder, ts_ms,
                     CASE WHEN ts_ms - LAG(ts_ms) OVER (PARTITION BY bidder ORDER BY ts_ms) <= 10000 THEN 0 ELSE 1 END AS nw
              FROM bids WHERE price > 1000),
        bs AS (SELECT bidder, ts_ms, SUM(nw) OVER (PARTITION BY bidder ORDER BY ts_ms) AS sid FROM ball),
        hs AS (SELECT bidder, ts_ms, SUM(nw) OVER (PARTITION BY bidder ORDER BY ts_ms) AS sid FROM hall),
        bsess AS (SELECT bidder, MIN(ts_ms) AS s, MAX(ts_ms) + 10000 AS e, COUNT(*) AS n FROM bs GROUP BY bidder, sid),
        hsess AS (SELECT bidder, MIN(ts_ms) AS s, MAX(ts_ms) + 10000 AS e, COUNT(*) AS n FROM hs GROUP BY bidder, sid)
   SELECT B.bidder, fmt(B.s), fmt(B.e), B.n, H.n FROM bsess B JOIN hsess H ON B.bidder = H.bidder AND B.s = H.s AND B.e = H.e;"

echo "nexmark stages: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
