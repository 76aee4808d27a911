#!/usr/bin/env bash
# interval_join_state.sh - does an interval join of two unbounded streams
# keep flat state?  NEXMark's generator, rate-limited to RATE events per
# second of wall time (and of event time: 'events.rate' and
# 'first-event.rate'), feeds a join of persons with the auctions they
# open within 10 s; the watermark lags 4 s.  Once the first 14 s have
# passed every row that comes is matched by one that goes, so the join's
# state at 60 s should be what it was at 10 s (the target: within 10%).
#
#   bench/interval_join_state.sh [SLUICE] [RATE] [RUNS]
#
# Each run is three statements through the sluice binary, each EXPLAIN
# ANALYZE of the join (its rows go nowhere):
#   - 10 s and 20 s of events: the join's peak state ("peak bytes of leaf
#     rows held", the updating stages' bytes at their largest) over that
#     time.  At 10 s the state still grows: a person is kept until the
#     auctions' watermark passes its time + 10 s, 14 s after it came, so
#     the state is steady from 14 s on (the 20 s point);
#   - 65 s of events: the same over 65 s, and the shell's RSS sampled
#     from /proc at 10 s and at 60 s.
# Reported per query: the medians over RUNS runs.  QUERIES="simple three"
# picks the queries: simple is the two-way join (its condition in ON);
# three joins the bids of each auction within 10 s as well, its
# conditions in WHERE (the persons/auctions bound reaches the lower join).
set -euo pipefail
SLUICE=${1:-build/sluice}
RATE=${2:-20000}
RUNS=${3:-3}
QUERIES=${QUERIES:-simple three}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/nexmark_common.sh"

ddl() { # $1: events
  cat <<SQL
CREATE TABLE nx (event_type INT, person ROW<id BIGINT, dateTime TIMESTAMP(3)>,
  auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller BIGINT>,
  bid ROW<auction BIGINT, dateTime TIMESTAMP(3)>,
  dateTime AS CASE WHEN event_type = 0 THEN person.dateTime
    WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
  WITH ('connector' = 'nexmark', 'first-event.rate' = '$RATE',
        'events.rate' = '$RATE', 'events.num' = '$1');
CREATE VIEW P AS SELECT person.id AS id, dateTime FROM nx WHERE event_type = 0;
CREATE VIEW A AS SELECT auction.id AS id, auction.seller AS seller, dateTime FROM nx WHERE event_type = 1;
CREATE VIEW B AS SELECT bid.auction AS auction, dateTime FROM nx WHERE event_type = 2;
SQL
}

query() {
  case $1 in
    simple) echo "SELECT P.id, A.id FROM P JOIN A ON A.seller = P.id AND A.dateTime BETWEEN P.dateTime AND P.dateTime + INTERVAL '10' SECOND;" ;;
    three) echo "SELECT P.id, A.id, B.dateTime FROM P JOIN A ON A.seller = P.id JOIN B ON B.auction = A.id WHERE A.dateTime BETWEEN P.dateTime AND P.dateTime + INTERVAL '10' SECOND AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '10' SECOND;" ;;
  esac
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
peak() { grep -o 'peak bytes of leaf rows held=[0-9]*' "$1" | head -1 | cut -d= -f2; }

echo "| query | state at 10 s (bytes) | at 20 s | at 65 s | 65 s / 20 s | RSS at 10 s (MiB) | RSS at 60 s (MiB) | RSS 60 s / 10 s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for q in $QUERIES; do
  for f in s10 s20 s65 r10 r60; do : >"$tmp/$f"; done
  for _ in $(seq "$RUNS"); do
    for secs in 10 20 65; do
      { ddl $((RATE * secs)); echo "EXPLAIN ANALYZE $(query "$q")"; } >"$tmp/q$secs.sql"
    done
    for secs in 10 20; do
      "$SLUICE" "$tmp/q$secs.sql" >"$tmp/o$secs" 2>&1
      peak "$tmp/o$secs" >>"$tmp/s$secs"
    done
    "$SLUICE" "$tmp/q65.sql" >"$tmp/o65" 2>&1 &
    pid=$!
    sleep 10; rss_kib $pid >>"$tmp/r10"
    sleep 50; rss_kib $pid >>"$tmp/r60"
    wait $pid
    peak "$tmp/o65" >>"$tmp/s65"
  done
  s10=$(median <"$tmp/s10"); s20=$(median <"$tmp/s20"); s65=$(median <"$tmp/s65")
  r10=$(median <"$tmp/r10"); r60=$(median <"$tmp/r60")
  awk -v q="$q" -v a="$s10" -v m="$s20" -v b="$s65" -v c="$r10" -v d="$r60" 'BEGIN {
    printf "| %s | %d | %d | %d | %.2f | %.1f | %.1f | %.2f |\n", q, a, m, b,
      b / m, c / 1024, d / 1024, d / c }'
done
