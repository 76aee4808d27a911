#!/usr/bin/env bash
# nexmark.sh - NEXMark's windowed queries (q5, q7, q8, q11) and the Slash
# evaluation's NB7 / NB8 / NB11 workloads, at 1, 2 and 4 nodes and with
# each distribution strategy, through the sluice binary.
#
#   bench/nexmark.sh [SLUICE] [EVENTS] [RUNS]
#
# Every run is the published query text (examples/nexmark/qN.sql) writing
# to its blackhole table, over EVENTS generated events at 100000 events per
# second of event time (so windows fire many times), with 2 workers per
# node.  Reported: the median events/s of RUNS runs (the spread as
# min..max), and events/s per core: on this 2-core machine the cores a run
# can use are min(workers x nodes, 2).  Timings come from the shell's
# summary line (first record to last result).  On several nodes a
# multi-stage query (q5, q7, q8, NB8, NB11) runs every leaf on every node (each
# in a node process of its own); the "late-merge" and "repartition" rows
# set the leaves' strategy and leave the join's to the planner (auto);
# "join-single" runs the stages in the shell's process; with
# SET 'sluice.strategy' = 'broadcast' (the "broadcast" rows) a join of two
# leaves runs its stages on the nodes of the larger leaf instead, and with
# SET 'sluice.join-strategy' = 'repartition' ("join-repartition") on the
# nodes of a side grouped by the join key, the other side's rows routed by
# it (or, when no side is, q7 and wjrows, on the larger side's nodes with
# both sides' rows routed by the key), and with 'late-merge'
# ("join-late-merge") both sides grouped by the join key are finished at
# the same partition leaders (q8, NB8; the others cannot and run single).
# The side's rows go over links from its nodes to the stage nodes.  Session
# windows under late merge (q11, NB11's leaves with "late-merge") run in the
# shell's process, marked so.  wjrows
# is a window join of two window TVFs' rows (bids with their auction).
# QUERIES="q8 nb8" runs only those.
set -euo pipefail
SLUICE=${1:-build/sluice}
EVENTS=${2:-2000000}
RUNS=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$SRC/bench/nexmark_common.sh"
DDL=$(nexmark_ddl "$SRC" "$EVENTS")

query_of() {
  case $1 in
    q5|q7|q8|q11) cat "$SRC/examples/nexmark/$1.sql" ;;
    nb7) cat <<'SQL'
-- NB7: a 60 s tumbling window aggregation on bids.
CREATE TABLE nb7 (auction BIGINT, maxprice BIGINT, bids BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO nb7 SELECT auction, MAX(price), COUNT(*)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '60' SECOND))
GROUP BY auction, window_start, window_end;
SQL
    ;;
    nb8) cat <<'SQL'
-- NB8: a 10 s tumbling window join of auctions and persons (seller = id).
CREATE TABLE nb8 (id BIGINT, name VARCHAR, auctions BIGINT, wstart TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO nb8 SELECT P.id, P.name, A.auctions, P.window_start
FROM (SELECT id, name, window_start, window_end
      FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY id, name, window_start, window_end) P
JOIN (SELECT seller, window_start, window_end, COUNT(*) AS auctions
      FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY seller, window_start, window_end) A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;
SQL
    ;;
    wjrows) cat <<'SQL'
-- A Flink window join over the rows of two window TVFs (no aggregate on
-- either side): every bid with the auction it is for, opened in the same
-- 10 s window.  No side is grouped by the join key: repartition routes both.
CREATE TABLE wjrows (auction BIGINT, price BIGINT, seller BIGINT, wstart TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO wjrows SELECT B.auction, B.price, A.seller, B.window_start
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) B
JOIN TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) A
ON B.auction = A.id AND B.window_start = A.window_start AND B.window_end = A.window_end;
SQL
    ;;
    nb11) cat <<'SQL'
-- NB11: a session window join of bids and persons (10 s gap).
CREATE TABLE nb11 (bidder BIGINT, name VARCHAR, bids BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO nb11 SELECT B.bidder, P.name, B.bids
FROM (SELECT bidder, COUNT(*) AS bids, SESSION_START(dateTime, INTERVAL '10' SECOND) AS s,
             SESSION_END(dateTime, INTERVAL '10' SECOND) AS e
      FROM bid GROUP BY bidder, SESSION(dateTime, INTERVAL '10' SECOND)) B
JOIN (SELECT id, name, SESSION_START(dateTime, INTERVAL '10' SECOND) AS s,
             SESSION_END(dateTime, INTERVAL '10' SECOND) AS e
      FROM person GROUP BY id, name, SESSION(dateTime, INTERVAL '10' SECOND)) P
ON B.bidder = P.id AND B.s = P.s AND B.e = P.e;
SQL
    ;;
  esac
}


echo "| query | nodes | strategy | events/s (median of $RUNS) | spread | events/s per core | peak RSS of the shell (MiB) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for q in ${QUERIES:-q5 q7 q8 q11 nb7 nb8 nb11 wjrows}; do
  for nodes in 1 2 4; do
    strategies="late-merge repartition"
    # The broadcast join: the multi-stage queries on several nodes (those
    # whose stages are not one join of two leaves run as single).
    case $q in q5|q7|q8|nb8|nb11|wjrows) [ "$nodes" -gt 1 ] && strategies="$strategies join-single broadcast join-repartition join-late-merge" ;; esac
    for strategy in $strategies; do
      set_strategy="SET 'sluice.strategy' = '$strategy';"
      case $strategy in join-*) set_strategy="SET 'sluice.join-strategy' = '${strategy#join-}';" ;; esac
      printf "%s\nSET parallelism.default = 2;\nSET 'sluice.nodes' = '%s';\n%s\n%s\n" \
        "$DDL" "$nodes" "$set_strategy" "$(query_of $q)" > "$tmp/q.sql"
      : > "$tmp/rates"
      : > "$tmp/rss"
      status=ok
      for r in $(seq "$RUNS"); do
        if ! /usr/bin/time -f "%M" -o "$tmp/time" "$SLUICE" "$tmp/q.sql" > /dev/null 2> "$tmp/err"; then
          status=$(grep -o "not supported yet: [^(]*" "$tmp/err" | head -1 || true)
          [ -n "$status" ] || status="failed: $(tail -1 "$tmp/err")"
          break
        fi
        grep -o "([0-9]* events/s" "$tmp/err" | tail -1 | tr -d '(' | awk '{print $1}' >> "$tmp/rates"
        tail -1 "$tmp/time" >> "$tmp/rss"
      done
      if [ "$status" != ok ]; then
        echo "| $q | $nodes | $strategy | $status | | | |"
        continue
      fi
      med=$(median < "$tmp/rates")
      lo=$(sort -g "$tmp/rates" | head -1)
      hi=$(sort -g "$tmp/rates" | tail -1)
      cores=$((2 * nodes < 2 ? 2 * nodes : 2))
      local_only=""
      if [ "$nodes" -gt 1 ] && grep -q "do not run on several nodes" "$tmp/err"; then
        local_only=" (ran in the shell's process)"
      fi
      rss=$(median < "$tmp/rss")
      printf "| %s | %s | %s | %.0f%s | %.0f..%.0f | %.0f | %.0f |\n" "$q" "$nodes" "$strategy" \
        "$med" "$local_only" "$lo" "$hi" "$(echo "$med / $cores" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
    done
  done
done
