#!/usr/bin/env bash
# nexmark_updating.sh - the updating NEXMark queries against sqlite3: GROUP
# BY without a window (q15, q16, q17), regular joins of two and three
# streams (q3, q20, q23), deduplication and Top-N over a stream (q18,
# q19) and over a join with a time-bounded condition (q9), an aggregate
# over an aggregate over such a join (q4), the lookup join of q13 and the
# partitioned file sink of q10, published texts unchanged.
#
# Their results are changelogs (q3 and q20 only insert).  Each query runs
# with tiny mini-batches (every source buffer ends an epoch, so groups are
# updated many times), at 1 and 2 workers, with late merge and
# repartitioning, and on 2 and 3 nodes (n2s: updating stages forced to
# spread over the nodes by key), and is checked two ways against
# the final result
# sqlite3 computes over the same events (exported through the CSV sink):
#   - the shell's 'table' result mode (the shell folds the changelog);
#   - the 'changelog' result mode, folded here by an independent awk fold
#     (+I/+U add a row, -U/-D remove one equal row, which must be there),
#     which must also hold the kinds the case names (-U: updates really
#     happened; only +I for a result that is only inserted).
# One event per second of event time: 100000 events span two days, so
# the per-day groups are more than one.
#
#   [CASES="q9 q4"] nexmark_updating.sh SLUICE SOURCE_DIR [EVENTS]
set -euo pipefail
SLUICE=$1
SRC=$2
EVENTS=${3:-100000}
command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (apt-get install sqlite3)"; exit 1; }
. "$(dirname "$0")/oracle.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DDL=$(sed -e "s/'first-event.rate' = '[0-9]*'/'first-event.rate' = '1'/" \
          -e "s/'next-event.rate' = '[0-9]*'/'next-event.rate' = '1'/" \
          -e "s/'events.num' = '[0-9]*'/'events.num' = '$EVENTS'/" "$SRC/examples/nexmark/ddl.sql")
cat > "$tmp/export.sql" <<SQL
$DDL
CREATE TABLE b_csv (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, dateTime TIMESTAMP(3),
  url STRING, extra STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/bids.csv', 'format' = 'csv');
INSERT INTO b_csv SELECT auction, bidder, price, channel, dateTime, url, extra FROM bid;
CREATE TABLE p_csv (id BIGINT, name STRING, city STRING, state STRING, emailAddress STRING,
  creditCard STRING, extra STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/persons.csv', 'format' = 'csv');
INSERT INTO p_csv SELECT id, name, city, state, emailAddress, creditCard, extra FROM person;
CREATE TABLE a_csv (id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT,
  dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING)
  WITH ('connector' = 'filesystem', 'path' = '$tmp/auctions.csv', 'format' = 'csv');
INSERT INTO a_csv SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra FROM auction;
SQL
"$SLUICE" "$tmp/export.sql" 2>"$tmp/err" >/dev/null || { echo "FAIL export:"; cat "$tmp/err"; exit 1; }
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE braw (auction INTEGER, bidder INTEGER, price INTEGER, channel TEXT, ts TEXT, url TEXT, extra TEXT);
CREATE TABLE persons (id INTEGER, name TEXT, city TEXT, state TEXT, emailAddress TEXT,
  creditCard TEXT, extra TEXT);
CREATE TABLE araw (id INTEGER, itemName TEXT, description TEXT, initialBid INTEGER, reserve INTEGER,
  ts TEXT, expires TEXT, seller INTEGER, category INTEGER, extra TEXT);
.mode csv
.import $tmp/bids.csv braw
.import $tmp/persons.csv persons
.import $tmp/auctions.csv araw
CREATE TABLE bids AS SELECT auction, bidder, price, channel, url, extra, ts,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms,
  substr(ts, 1, 10) AS day, substr(ts, 12, 5) AS minute FROM braw;
CREATE TABLE auctions AS SELECT *,
  CAST(strftime('%s', substr(ts, 1, 19)) AS INTEGER) * 1000 + CAST(substr(ts, 21, 3) AS INTEGER) AS ts_ms,
  CAST(strftime('%s', substr(expires, 1, 19)) AS INTEGER) * 1000 + CAST(substr(expires, 21, 3) AS INTEGER) AS exp_ms
  FROM araw;
SQL
days=$(sqlite3 "$tmp/oracle.db" "SELECT COUNT(DISTINCT day) FROM bids")
[ "$days" -gt 1 ] || { echo "FAIL: the bids span $days day(s), expected more"; exit 1; }

published() { sed -n '/^INSERT INTO/,$p' "$SRC/examples/nexmark/$1.sql" | sed '1s/^INSERT INTO [a-z0-9_]*//'; }

# The FILTER clauses of q15-q17, as the oracle spells them.
R1="price < 10000"
R2="price >= 10000 AND price < 1000000"
R3="price >= 1000000"

# fold FILE: the rows of a changelog (op first) folded into a table,
# sorted; fails on a -U/-D of a row the table does not hold.
fold() {
  awk -F, '
    { op = $1; row = substr($0, length($1) + 2) }
    op == "+I" || op == "+U" { n[row]++; next }
    op == "-U" || op == "-D" {
      if (n[row] < 1) { print "removes a row it does not hold: " $0 > "/dev/stderr"; bad = 1; exit 1 }
      n[row]--; next }
    { print "unknown op: " $0 > "/dev/stderr"; bad = 1; exit 1 }
    END { if (bad) exit 1; for (r in n) for (i = 0; i < n[r]; i++) print r }' "$1" | sort
}

# project "1 3 8": those CSV fields of each row, sorted.
project() { awk -F, -v c="$1" 'BEGIN { n = split(c, f, " ") } { s = $f[1]; for (i = 2; i <= n; i++) s = s "," $f[i]; print s }' | sort; }

fail=0 passed=0
# CASES="q9 q4" runs only those cases (all by default); DIFF_CONFIGS="w2r
# n2s" only those configurations, DIFF_MODES="changelog" only that result
# mode (tests/sanitize.sh sets both).
selected() { [ -z "${CASES:-}" ] || [[ " $CASES " == *" $1 "* ]]; }
# run_case NAME SLUICE_QUERY ORACLE_QUERY [KINDS [COLUMNS]]: KINDS, the
# row kinds the changelog must hold ("-U" by default; "+I!" for a result
# that is only inserted); COLUMNS, the result columns compared (awk field
# numbers, default all): ties in ROW_NUMBER's order make which row gets a
# place arbitrary, but not the ordered values at each place.
run_case() {
  local name=$1 sq=$2 oq=$3 kinds=${4:--U} cols=${5:-}
  selected "$name" || return 0
  if ! oracle_rows "$tmp/oracle.db" "$oq" "$tmp/$name.expected"; then
    echo "FAIL $name: the oracle returned no rows"; fail=$((fail + 1)); return
  fi
  for cfg in ${DIFF_CONFIGS:-w1 w2 w2r n2 n3 n2r n2s}; do
    local workers=1 strategy=late-merge nodes=1 join=auto
    case $cfg in
      w2) workers=2 ;;
      w2r) workers=2 strategy=repartition ;;
      n2) nodes=2 ;;
      n3) nodes=3 ;;
      n2r) nodes=2 strategy=repartition ;;
      n2s) nodes=2 join=repartition ;; # updating stages spread by key
    esac
    for mode in ${DIFF_MODES:-table changelog}; do
      printf "%s\nSET parallelism.default = %s;\nSET 'sluice.nodes' = '%s';\nSET 'sluice.strategy' = '%s';\nSET 'sluice.join-strategy' = '%s';\nSET 'sluice.buffer-size' = '16kb';\nSET 'table.exec.mini-batch.size' = '1';\nSET 'sql-client.execution.result-mode' = '%s';\n%s\n" \
        "$DDL" "$workers" "$nodes" "$strategy" "$join" "$mode" "$sq" > "$tmp/q.sql"
      if ! "$SLUICE" -m csv --no-headers "$tmp/q.sql" 2>"$tmp/err" | tr -d '"' > "$tmp/$name.$cfg.raw"; then
        echo "FAIL $name ($cfg, $mode): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); continue
      fi
      if [ "$mode" = changelog ]; then
        local k missing=
        for k in ${kinds%!}; do grep -q "^$k," "$tmp/$name.$cfg.raw" || missing="$missing $k"; done
        if [ -n "$missing" ]; then
          echo "FAIL $name ($cfg, $mode): no$missing row in the changelog"; fail=$((fail + 1)); continue
        fi
        if [ "$kinds" = "+I!" ] && grep -qv '^+I,' "$tmp/$name.$cfg.raw"; then
          echo "FAIL $name ($cfg, $mode): a result that is only inserted has other kinds"; fail=$((fail + 1)); continue
        fi
        if ! fold "$tmp/$name.$cfg.raw" > "$tmp/$name.$cfg"; then
          echo "FAIL $name ($cfg, $mode): the changelog contradicts itself"; fail=$((fail + 1)); continue
        fi
      else
        sort "$tmp/$name.$cfg.raw" > "$tmp/$name.$cfg"
      fi
      if [ -n "$cols" ]; then
        project "$cols" < "$tmp/$name.$cfg" > "$tmp/$name.$cfg.cut"
        project "$cols" < "$tmp/$name.expected" > "$tmp/$name.expected.cut"
        compare_rows "$name" "$cfg, $strategy, $mode, columns $cols" "$tmp/$name.expected.cut" "$tmp/$name.$cfg.cut"
      else
        compare_rows "$name" "$cfg, $strategy, $mode" "$tmp/$name.expected" "$tmp/$name.$cfg"
      fi
    done
  done
}

run_case q15 "$(published q15)" \
  "SELECT day, COUNT(*), SUM($R1), SUM($R2), SUM($R3),
          COUNT(DISTINCT bidder), COUNT(DISTINCT CASE WHEN $R1 THEN bidder END),
          COUNT(DISTINCT CASE WHEN $R2 THEN bidder END), COUNT(DISTINCT CASE WHEN $R3 THEN bidder END),
          COUNT(DISTINCT auction), COUNT(DISTINCT CASE WHEN $R1 THEN auction END),
          COUNT(DISTINCT CASE WHEN $R2 THEN auction END), COUNT(DISTINCT CASE WHEN $R3 THEN auction END)
   FROM bids GROUP BY day;"

run_case q16 "$(published q16)" \
  "SELECT channel, day, MAX(minute), COUNT(*), SUM($R1), SUM($R2), SUM($R3),
          COUNT(DISTINCT bidder), COUNT(DISTINCT CASE WHEN $R1 THEN bidder END),
          COUNT(DISTINCT CASE WHEN $R2 THEN bidder END), COUNT(DISTINCT CASE WHEN $R3 THEN bidder END),
          COUNT(DISTINCT auction), COUNT(DISTINCT CASE WHEN $R1 THEN auction END),
          COUNT(DISTINCT CASE WHEN $R2 THEN auction END), COUNT(DISTINCT CASE WHEN $R3 THEN auction END)
   FROM bids GROUP BY channel, day;"

# AVG of a BIGINT is a BIGINT (truncated), as in Flink.
run_case q17 "$(published q17)" \
  "SELECT auction, day, COUNT(*), SUM($R1), SUM($R2), SUM($R3),
          MIN(price), MAX(price), SUM(price) / COUNT(price), SUM(price)
   FROM bids GROUP BY auction, day;"

# HAVING over an updating result: a group that stops passing is deleted
# (-D), one that starts passing is inserted.  Bidders with 2 to 4 bids.
run_case having_window \
  "SELECT bidder, COUNT(*) AS n FROM bid GROUP BY bidder HAVING COUNT(*) BETWEEN 2 AND 4;" \
  "SELECT bidder, COUNT(*) FROM bids GROUP BY bidder HAVING COUNT(*) BETWEEN 2 AND 4;" "-D +I +U"

# q3: a regular join of two streams (auctions and their sellers), only
# inserts.
run_case q3 "$(published q3)" \
  "SELECT P.name, P.city, P.state, A.id FROM auctions A JOIN persons P ON A.seller = P.id
   WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');" "+I!"

# q20: bids joined with their auction's row, only inserts.
run_case q20 "$(published q20)" \
  "SELECT B.auction, B.bidder, B.price, B.channel, B.url, B.ts, B.extra,
          A.itemName, A.description, A.initialBid, A.reserve, A.ts, A.expires, A.seller, A.category, A.extra
   FROM bids B JOIN auctions A ON B.auction = A.id WHERE A.category = 10;" "+I!"

# q18: the last bid of each bidder on each auction (deduplication); the
# compared columns are the same for bids that tie on time.
run_case q18 "$(published q18)" \
  "WITH r AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY ts_ms DESC) AS rn FROM bids)
   SELECT auction, bidder, price, channel, url, ts, extra FROM r WHERE rn <= 1;" "-U +U +I" "1 2 6"

# q19: the ten highest bids of each auction, with their place.
run_case q19 "$(published q19)" \
  "WITH r AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids)
   SELECT auction, bidder, price, channel, url, ts, extra, rn FROM r WHERE rn <= 10;" "-U +U +I" "1 3 8"

# q13: each bid with the side input's value for its auction (a lookup join
# FOR SYSTEM_TIME AS OF a CSV table), only inserts.
sqlite3 "$tmp/oracle.db" <<SQL
CREATE TABLE side (key INTEGER, value TEXT);
.mode csv
.import $SRC/examples/nexmark/side_input.csv side
SQL
side_input=$(sed -n '/^CREATE TABLE side_input/,/^);/p' "$SRC/examples/nexmark/q13.sql" |
  sed "s|'examples/nexmark/side_input.csv'|'$SRC/examples/nexmark/side_input.csv'|")
run_case q13 "$side_input
$(published q13)" \
  "SELECT B.auction, B.bidder, B.price, B.ts, S.value FROM bids B JOIN side S ON B.auction % 10000 = S.key;" "+I!"

# q23: a join of three streams: every bid by a person who also sells, with
# the person and each of her auctions; only inserts.
run_case q23 "$(published q23)" \
  "SELECT B.bidder, B.price, B.channel, B.url, B.extra,
          P.id, P.name, P.emailAddress, P.creditCard, P.city, P.state, P.extra,
          A.itemName, A.description, A.initialBid, A.reserve, A.ts, A.expires, A.seller, A.category, A.extra
   FROM bids B JOIN persons P ON P.id = B.bidder JOIN auctions A ON A.seller = B.bidder;" "+I!"

# Over q23's join of three streams on one key: per bidder (every stage
# partitioned by the key: spread whole over the nodes) and a histogram of
# those counts (the per-bidder stage on the nodes, the histogram here over
# its changes).
Q23_JOIN="bid B JOIN person P ON P.id = B.bidder JOIN auction A ON A.seller = B.bidder"
O23_JOIN="bids B JOIN persons P ON P.id = B.bidder JOIN auctions A ON A.seller = B.bidder"
run_case three_way_per_bidder \
  "SELECT B.bidder, COUNT(*) AS n, MAX(B.price) AS top, COUNT(DISTINCT A.category) AS cats
   FROM $Q23_JOIN GROUP BY B.bidder;" \
  "SELECT B.bidder, COUNT(*), MAX(B.price), COUNT(DISTINCT A.category) FROM $O23_JOIN GROUP BY B.bidder;" \
  "-U +U +I"
run_case three_way_histogram \
  "SELECT n, COUNT(*) AS bidders FROM (SELECT B.bidder, COUNT(*) AS n FROM $Q23_JOIN GROUP BY B.bidder)
   GROUP BY n;" \
  "SELECT n, COUNT(*) FROM (SELECT B.bidder, COUNT(*) AS n FROM $O23_JOIN GROUP BY B.bidder) GROUP BY n;" \
  "-U +U +I -D"
# ... and on 2 nodes 'auto' spreads the per-bidder stage, routing every
# stream by its column holding the key, but keeps q23 (whose wide joined
# rows all go to the shell) single unless 'repartition' is forced; EXPLAIN
# says so.
if selected q23; then
  printf "%s\nSET 'sluice.nodes' = '2';\nEXPLAIN %s\nEXPLAIN SELECT n, COUNT(*) FROM (SELECT B.bidder, COUNT(*) AS n FROM %s GROUP BY B.bidder) GROUP BY n;\nSET 'sluice.join-strategy' = 'repartition';\nEXPLAIN %s\n" \
    "$DDL" "$(published q23 | sed '1s/^\s*//')" "$Q23_JOIN" "$(published q23 | sed '1s/^\s*//')" > "$tmp/x.sql"
  if "$SLUICE" "$tmp/x.sql" > "$tmp/x" 2>&1 &&
    grep -q "^join: updating stages over a join of more than two streams whose joined rows all come here run in this process" "$tmp/x" &&
    grep -q "^join: updating stages over joins of streams that one key joins, .*: repartition of every stream, each node running the stages up to the highest that key partitions" "$tmp/x" &&
    grep -q "^join: forced: updating stages over joins of streams that one key joins, .*: repartition of every stream, each node running the stages over the keys" "$tmp/x" &&
    grep -q "leaves 2 and 3 each run on node processes of their own" "$tmp/x"; then
    echo "ok   q23: on 2 nodes every stream is routed by the join key where 'auto' or 'repartition' spreads, and EXPLAIN says so"; passed=$((passed + 1))
  else
    cat "$tmp/x"; echo "FAIL q23: EXPLAIN on 2 nodes does not show the streams routed by the join key"; fail=$((fail + 1))
  fi
fi

# q9: each auction's winning bid among those made while it was open (a
# join with a time-bounded condition, then deduplication).
run_case q9 "$(published q9)" \
  "WITH r AS (SELECT A.id, A.itemName, A.description, A.initialBid, A.reserve, A.ts AS ats, A.expires,
                     A.seller, A.category, A.extra AS aextra, B.auction, B.bidder, B.price, B.ts AS bts,
                     B.extra AS bextra,
                     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.ts_ms ASC) AS rn
              FROM auctions A JOIN bids B ON A.id = B.auction AND B.ts_ms BETWEEN A.ts_ms AND A.exp_ms)
   SELECT id, itemName, description, initialBid, reserve, ats, expires, seller, category, aextra,
          auction, bidder, price, bts, bextra FROM r WHERE rn <= 1;" "-U +U +I" "1 13 14"

# q4: the average winning price per category: an aggregate (AVG) over the
# updating result of another (MAX per auction) over a join with a
# time-bounded condition; the AVG takes each auction's old maximum back.
run_case q4 "$(published q4)" \
  "WITH q AS (SELECT MAX(B.price) AS final, A.category FROM auctions A JOIN bids B
              ON A.id = B.auction AND B.ts_ms BETWEEN A.ts_ms AND A.exp_ms GROUP BY A.id, A.category)
   SELECT category, SUM(final) / COUNT(final) FROM q GROUP BY category;" "-U +U +I"

# Operators over an updating result take its rows back.  A Top-N over a
# GROUP BY keeps every row of a partition: a group whose count grows
# leaves its place (-U, or -D when the partition shrinks) and enters
# another.  Globally (the three auctions with the most bids) and per
# category (each category's two busiest sellers).
run_case topn_over_agg \
  "SELECT * FROM (SELECT auction, cnt, ROW_NUMBER() OVER (ORDER BY cnt DESC, auction) AS rn
   FROM (SELECT auction, COUNT(*) AS cnt FROM bid GROUP BY auction)) WHERE rn <= 3;" \
  "WITH c AS (SELECT auction, COUNT(*) AS cnt FROM bids GROUP BY auction),
        r AS (SELECT auction, cnt, ROW_NUMBER() OVER (ORDER BY cnt DESC, auction) AS rn FROM c)
   SELECT * FROM r WHERE rn <= 3;" "-U +U +I"
run_case topn_per_partition_over_agg \
  "SELECT * FROM (SELECT category, seller, cnt,
     ROW_NUMBER() OVER (PARTITION BY category ORDER BY cnt DESC, seller) AS rn
   FROM (SELECT category, seller, COUNT(*) AS cnt FROM auction GROUP BY category, seller)) WHERE rn <= 2;" \
  "WITH c AS (SELECT category, seller, COUNT(*) AS cnt FROM auctions GROUP BY category, seller),
        r AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY cnt DESC, seller) AS rn FROM c)
   SELECT * FROM r WHERE rn <= 2;" "-U +U +I"

# MIN, MAX and DISTINCT over an updating result: every value with its
# count per group, so the maximum taken back gives way to the next.
run_case minmax_distinct_over_agg \
  "SELECT category, MAX(cnt), MIN(cnt), COUNT(DISTINCT cnt), SUM(DISTINCT cnt), COUNT(*)
   FROM (SELECT category, seller, COUNT(*) AS cnt FROM auction GROUP BY category, seller) GROUP BY category;" \
  "WITH c AS (SELECT category, seller, COUNT(*) AS cnt FROM auctions GROUP BY category, seller)
   SELECT category, MAX(cnt), MIN(cnt), COUNT(DISTINCT cnt), SUM(DISTINCT cnt), COUNT(*) FROM c GROUP BY category;" \
  "-U +U +I"

# A regular join over an updating result (each person with the count of
# her auctions, once she has three): a group's old row takes back what it
# joined (-D), its new one joins anew (+I).  The two streams are two
# leaves whose rows come in any order between them: when the persons come
# after the counts, nothing is taken back, so -D is not required (a -D
# missing where it was due leaves a stale row, which the comparison sees).
run_case join_over_agg \
  "SELECT P.id, P.name, C.cnt FROM person P
   JOIN (SELECT seller, COUNT(*) AS cnt FROM auction GROUP BY seller HAVING COUNT(*) >= 3) C ON P.id = C.seller;" \
  "SELECT P.id, P.name, COUNT(*) FROM persons P JOIN auctions A ON P.id = A.seller
   GROUP BY P.id, P.name HAVING COUNT(*) >= 3;" "+I"

# q10: every bid into a partitioned CSV sink, PARTITIONED BY (dt, hm) with
# Flink's commit and rolling options; the events span 28 hours, so the
# partitions are many: each must hold exactly the bids of its minute, end
# committed (_SUCCESS), with no file left in progress.
q10_check() {
  local nodes=$1 out="$tmp/q10.$1"
  selected q10 || return 0
  sed -e "s|'examples/nexmark/output/q10'|'$out'|" "$SRC/examples/nexmark/q10.sql" > "$tmp/q10.sql"
  printf "%s\nSET 'sluice.nodes' = '%s';\n" "$DDL" "$nodes" > "$tmp/q10ddl.sql"
  if ! "$SLUICE" "$tmp/q10ddl.sql" "$tmp/q10.sql" > /dev/null 2> "$tmp/err"; then
    echo "FAIL q10 (n$nodes): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); return
  fi
  local bad=0 dirs=0 d
  for d in "$out"/dt=*/hm=*; do
    dirs=$((dirs + 1))
    local day=${d#*dt=} min=${d##*hm=}
    day=${day%%/*}
    min=${min/\%3A/:}
    [ -e "$d/_SUCCESS" ] || { echo "FAIL q10 (n$nodes): $d has no _SUCCESS"; bad=1; }
    if cat "$d"/part-*.csv | awk -F, -v p="$day $min" 'substr($4, 1, 16) != p { exit 1 }'; then :; else
      echo "FAIL q10 (n$nodes): a row in $d is not of its minute"; bad=1
    fi
  done
  if [[ -n $(find "$out" -name '*.inprogress') ]]; then
    echo "FAIL q10 (n$nodes): files left in progress"; bad=1
  fi
  cat "$out"/dt=*/hm=*/part-*.csv | tr -d '"' | awk -F, '{ print $1 "," $2 "," $3 "," $4 }' | sort > "$tmp/q10.got"
  oracle_rows "$tmp/oracle.db" "SELECT auction, bidder, price, ts FROM bids;" "$tmp/q10.expected"
  if [ "$bad" -eq 0 ]; then
    compare_rows q10 "n$nodes, $dirs partitions" "$tmp/q10.expected" "$tmp/q10.got"
  else
    fail=$((fail + 1))
  fi
}
q10_check 1
q10_check 2

# The SQLite sink with a primary key keeps its table equal to the current
# result: here a HAVING over an aggregate of a join (updating stages),
# whose groups stop passing as their counts grow: the filter turns such an
# update into -D, which deletes the row (the sink skips -U, as an upsert
# needs only +U).  At 1 node and with the stages spread over 2.
sqlite_sink_check() {
  local nodes=$1 join=$2 db="$tmp/pk.$1.$2.db"
  selected sqlite_sink || return 0
  printf "%s\nSET 'sluice.nodes' = '%s';\nSET 'sluice.join-strategy' = '%s';\nSET 'table.exec.mini-batch.size' = '1';\n" \
    "$DDL" "$nodes" "$join" > "$tmp/pk.sql"
  cat >> "$tmp/pk.sql" <<SQL
CREATE TABLE sellers (seller BIGINT, n BIGINT, PRIMARY KEY (seller) NOT ENFORCED)
  WITH ('connector' = 'sqlite', 'path' = '$db', 'table-name' = 'sellers');
INSERT INTO sellers SELECT A.seller, COUNT(*) FROM auction A JOIN person P ON A.seller = P.id
  GROUP BY A.seller HAVING COUNT(*) < 3;
SQL
  if ! "$SLUICE" "$tmp/pk.sql" > /dev/null 2> "$tmp/err"; then
    echo "FAIL sqlite_sink (n$nodes, $join): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); return
  fi
  sqlite3 -csv "$db" "SELECT seller, n FROM sellers" | sort > "$tmp/pk.got"
  oracle_rows "$tmp/oracle.db" "SELECT A.seller, COUNT(*) FROM auctions A JOIN persons P ON A.seller = P.id
    GROUP BY A.seller HAVING COUNT(*) < 3;" "$tmp/pk.expected"
  compare_rows sqlite_sink "n$nodes, $join" "$tmp/pk.expected" "$tmp/pk.got"
}
sqlite_sink_check 1 auto
sqlite_sink_check 2 repartition

# State TTL (processing time): the sources paced at 3000 events per second
# of wall clock (one second), a join of auctions with their sellers keeps
# every person without a TTL; with 'table.exec.state.ttl' = '5 ms' a
# person is gone from the join's state before most of her auctions come
# (they arrive in later buffers, 50 ms apart), so fewer rows join, and
# never more.  (Timing can only change how many fewer.)
ttl_check() {
  selected ttl || return 0
  local ddl n_all n_ttl
  ddl=$(printf "%s\n" "$DDL" | sed "s/'events.num' = '[0-9]*'/'events.num' = '3000', 'events.rate' = '3000'/")
  for ttl in none 5ms; do
    { printf "%s\n" "$ddl"
      [ "$ttl" = none ] || echo "SET 'table.exec.state.ttl' = '5 ms';"
      echo "SELECT A.id, P.id FROM auction A JOIN person P ON A.seller = P.id;"; } > "$tmp/ttl.sql"
    if ! "$SLUICE" -m csv --no-headers "$tmp/ttl.sql" > "$tmp/ttl.$ttl" 2> "$tmp/err"; then
      echo "FAIL ttl ($ttl): sluice failed:"; cat "$tmp/err"; fail=$((fail + 1)); return
    fi
  done
  n_all=$(wc -l < "$tmp/ttl.none"); n_ttl=$(wc -l < "$tmp/ttl.5ms")
  if [ "$n_all" -gt 0 ] && [ "$n_ttl" -lt "$n_all" ]; then
    echo "ok   ttl: a 5 ms state TTL joined $n_ttl of the $n_all rows the join holds without one"; passed=$((passed + 1))
  else
    echo "FAIL ttl: $n_ttl rows joined with a 5 ms state TTL, $n_all without one"; fail=$((fail + 1))
  fi
}
ttl_check

echo "nexmark updating: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
