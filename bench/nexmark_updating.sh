#!/usr/bin/env bash
# nexmark_updating.sh - NEXMark's updating queries (results that change as
# input arrives): GROUP BY without a window (q15, q16, q17), regular joins
# of two and three streams (q3, q20, q23), a join with a time-bounded
# condition under an aggregate of an aggregate (q4) and under
# deduplication (q9), Top-N and deduplication over a stream (q18, q19),
# the lookup join of q13 and the partitioned file sink of q10 (its files
# under examples/nexmark/output), at 1 and 2 nodes, through the sluice
# binary.
#
#   bench/nexmark_updating.sh [SLUICE] [EVENTS] [RUNS]
#
# Every run is the published query text (examples/nexmark/qN.sql) writing
# to its blackhole table, over EVENTS generated events at 100000 events per
# second of event time, with 2 workers per node and the default
# mini-batch ('table.exec.mini-batch.allow-latency' = 200 ms).  Reported:
# the median events/s of RUNS runs, the spread, the changes the sink got
# (the changelog's rows: an insert-only result's rows), and the peak RSS
# of the shell process.  q15-q17 run with both strategies (late merge:
# each node merges its workers' changes per epoch and the shell merges
# the nodes'; repartition: each node owns its groups).  On 2 nodes a
# join of two streams and the stages above it that its key partitions run
# on the nodes (q3, q9, q20; q4 up to its MAX per auction, its AVG per
# category in the shell), and the counts per bidder over q23's join of
# three streams (bids_per_seller_bidder); the others (q18, q19, q23) in
# the shell's process, their leaves on the nodes.
# JOIN_STRATEGY=repartition forces the stages of one stream (q18, q19) and
# q23's onto the nodes too; JOIN_STRATEGY=single keeps every one here.
# QUERIES="q4 q9" runs only those.
set -euo pipefail
SLUICE=${1:-build/sluice}
EVENTS=${2:-1000000}
RUNS=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$SRC/bench/nexmark_common.sh"
DDL=$(nexmark_ddl "$SRC" "$EVENTS")


echo "| query | nodes | strategy | events/s (median of $RUNS) | spread | changes | peak RSS of the shell (MiB) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
# Operators over updating results, beside the published queries: the
# three auctions with the most bids (a global Top-N over a GROUP BY: the
# counts on the nodes, the Top-N in the shell), and each category's
# largest bid count of an auction (a MAX over counts per auction of a
# join: taking each old count back).
extra_query() {
  case $1 in
    top3_auctions) cat <<'SQL' ;;
CREATE TABLE top3 (auction BIGINT, cnt BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO top3 SELECT * FROM (SELECT auction, cnt, ROW_NUMBER() OVER (ORDER BY cnt DESC, auction) AS rn
  FROM (SELECT auction, COUNT(*) AS cnt FROM bid GROUP BY auction)) WHERE rn <= 3;
SQL
    max_count_per_category) cat <<'SQL' ;;
CREATE TABLE mx (category BIGINT, m BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO mx SELECT category, MAX(cnt) FROM (SELECT A.category, B.auction, COUNT(*) AS cnt
  FROM bid B JOIN auction A ON B.auction = A.id GROUP BY A.category, B.auction) GROUP BY category;
SQL
    bids_per_seller_bidder) cat <<'SQL' ;;
CREATE TABLE pb (bidder BIGINT, n BIGINT, top BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO pb SELECT B.bidder, COUNT(*), MAX(B.price)
  FROM bid B JOIN person P ON P.id = B.bidder JOIN auction A ON A.seller = B.bidder GROUP BY B.bidder;
SQL
    *) cat "$SRC/examples/nexmark/$1.sql" ;;
  esac
}

for q in ${QUERIES:-q15 q16 q17 q3 q20 q23 q4 q9 q18 q19 q13 q10 top3_auctions max_count_per_category}; do
  for nodes in 1 2; do
    strategies=late-merge
    case $q in q15|q16|q17) strategies="late-merge repartition" ;; esac
    for strategy in $strategies; do
      printf "%s\nSET parallelism.default = 2;\nSET 'sluice.nodes' = '%s';\nSET 'sluice.strategy' = '%s';\nSET 'sluice.join-strategy' = '%s';\n%s\n" \
        "$DDL" "$nodes" "$strategy" "${JOIN_STRATEGY:-auto}" "$(extra_query "$q")" > "$tmp/q.sql"
      : > "$tmp/rates"
      : > "$tmp/rss"
      status=ok
      changes=
      for r in $(seq "$RUNS"); do
        if ! (cd "$SRC" && /usr/bin/time -f "%M" -o "$tmp/time" "$SLUICE" "$tmp/q.sql" > /dev/null 2> "$tmp/err"); then
          status=$(grep -o "not supported yet: [^(]*" "$tmp/err" | head -1 || true)
          [ -n "$status" ] || status="failed: $(grep -v '^\[' "$tmp/err" | tail -1)"
          break
        fi
        grep -o "([0-9]* events/s" "$tmp/err" | tail -1 | tr -d '(' | awk '{print $1}' >> "$tmp/rates"
        changes=$(grep -oE "^[0-9]+ (changes?|rows?)" "$tmp/err" | tail -1 | awk '{print $1}')
        tail -1 "$tmp/time" >> "$tmp/rss"
      done
      if [ "$status" != ok ]; then
        echo "| $q | $nodes | $strategy | $status | | | |"
        continue
      fi
      med=$(median < "$tmp/rates")
      lo=$(sort -g "$tmp/rates" | head -1)
      hi=$(sort -g "$tmp/rates" | tail -1)
      rss=$(median < "$tmp/rss")
      printf "| %s | %s | %s | %.0f | %.0f..%.0f | %s | %.0f |\n" "$q" "$nodes" "$strategy" \
        "$med" "$lo" "$hi" "$changes" "$(echo "$rss / 1024" | bc -l)"
    done
  done
done
