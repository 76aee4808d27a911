#!/usr/bin/env bash
# test_cluster.sh - node daemons on this host, joined with --cluster:
# results equal the single-process run; a node killed mid-query is noticed
# by its connection's end (the time is printed, not asserted), with a
# message naming it, and the shell does not hang.
#
#   test_cluster.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
tmp=$(mktemp -d)
# The cluster secret every daemon and shell proves (auth.h).
SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# wait_listening PID LOG ADDRESS: until the daemon says it listens there,
# or is gone (its port was taken); a loaded sanitized build takes a while.
# LOG is the daemon's own: in a log shared with an earlier daemon of the
# same port (killed in a round before), the old line answered at once and
# a shell then found nothing listening.
wait_listening() {
  for _ in $(seq 600); do
    grep -qxF "sluice node listening on $3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  fail "the daemon at $3 did not listen within 60 s: $(cat "$2")"
}

# Two daemons on free ports (retry when a port is taken).
ports=()
for n in 0 1; do
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    "$SLUICE" node --secret-file "$SECRET" --data-dir . --listen "127.0.0.1:$port" 2>"$tmp/node$n.log" &
    pid=$!
    wait_listening "$pid" "$tmp/node$n.log" "127.0.0.1:$port"
    if kill -0 "$pid" 2>/dev/null; then pids+=("$pid"); ports+=("$port"); break; fi
  done
done
[ "${#ports[@]}" = 2 ] || fail "could not start two node daemons"
cluster="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"

DDL="CREATE TABLE clicks (user_name STRING, url STRING, price INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem',
  'path' = 'tests/sql/data/clicks.csv', 'format' = 'csv');
CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'key.range' = '1000', 'events.num' = '400000');"
Q="SELECT user_name, window_start, COUNT(*), MAX(price) FROM TABLE(TUMBLE(TABLE clicks,
  DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY user_name, window_start, window_end;
SELECT key % 7, COUNT(DISTINCT key), COUNT(*) FROM TABLE(TUMBLE(TABLE ro,
  DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key % 7, window_start, window_end;
SELECT user_name, price FROM clicks WHERE price > 20;
SELECT key, window_start, window_end, COUNT(*), SUM(key) FROM TABLE(SESSION(TABLE ro
  PARTITION BY key, DESCRIPTOR(ts), INTERVAL '3' MILLISECOND))
  GROUP BY key, window_start, window_end;"

"$SLUICE" -m csv -c "$DDL $Q" 2>/dev/null | sort > "$tmp/local"
"$SLUICE" -m csv --secret-file "$SECRET" --cluster "$cluster" -c "$DDL $Q" 2>"$tmp/err" | sort > "$tmp/cluster" ||
  { cat "$tmp/err"; fail "the query failed on the cluster"; }
[ -s "$tmp/local" ] || fail "no rows locally"
cmp -s "$tmp/local" "$tmp/cluster" || { diff "$tmp/local" "$tmp/cluster" | head; fail "cluster rows differ"; }
echo "ok   $(wc -l < "$tmp/local") rows equal on 2 daemons and in one process"

"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$DDL EXPLAIN ANALYZE SELECT key % 7, COUNT(*)
  FROM TABLE(TUMBLE(TABLE ro, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY key % 7, window_start, window_end;" > "$tmp/analyze" 2>&1 ||
  { cat "$tmp/analyze"; fail "EXPLAIN ANALYZE on the cluster"; }
grep -q "Source ro .*(actual: rows=400000, bytes=9600000)" "$tmp/analyze" ||
  { cat "$tmp/analyze"; fail "EXPLAIN ANALYZE does not count every node's rows"; }
echo "ok   EXPLAIN ANALYZE counts the 400000 events read by both nodes"

# Late merge at partition leaders between daemons (TCP channels between the
# nodes), with tiny epochs so open windows' deltas cross mid-window: the
# same rows as one process, and state did move between the nodes.
E="SET 'sluice.epoch-size' = '4kb';"
"$SLUICE" -m csv --secret-file "$SECRET" --cluster "$cluster" -c "$E $DDL $Q" 2>"$tmp/err" | sort > "$tmp/epochs" ||
  { cat "$tmp/err"; fail "the query with tiny epochs failed on the cluster"; }
cmp -s "$tmp/local" "$tmp/epochs" || { diff "$tmp/local" "$tmp/epochs" | head; fail "rows with tiny epochs differ"; }
grep -q "leaders: partition 0 on node 0, partition 1 on node 1" "$tmp/analyze" ||
  { cat "$tmp/analyze"; fail "EXPLAIN ANALYZE does not name the partition leaders"; }
grep -q "channels between nodes: 2 tcp 32 x 64 KiB" "$tmp/analyze" ||
  { cat "$tmp/analyze"; fail "EXPLAIN ANALYZE does not show the TCP channels between nodes"; }
# 2 channels x 32 slots x 64 KiB, a ring at each end: 8 MiB on 2 nodes.
grep -q "channel memory: 8.0 MiB in all, 4.0 MiB per node on average (a ring at each end of every channel)" "$tmp/analyze" ||
  { cat "$tmp/analyze"; fail "EXPLAIN ANALYZE does not say the channels' memory"; }
grep -q "epochs sent=[1-9][0-9]*, state moved between nodes=[1-9]" "$tmp/analyze" ||
  { cat "$tmp/analyze"; fail "no state moved between the leaders"; }
echo "ok   rows equal with tiny epochs at partition leaders over TCP; EXPLAIN ANALYZE (default epochs: one per window end): $(grep -o "epochs sent=[0-9]*" "$tmp/analyze")"

# Forked nodes repartitioning between all their workers (shared-memory
# channels between the nodes): the same rows as one process.
R="CREATE TABLE r (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'key.range' = '50', 'events.num' = '300000');
SET 'sluice.strategy' = 'repartition';
SELECT key, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts),
  INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;"
"$SLUICE" -m csv -c "$R" 2>/dev/null | sort > "$tmp/r_local"
"$SLUICE" -m csv --nodes 2 -c "$R" 2>/dev/null | sort > "$tmp/r_nodes"
[ "$(wc -l < "$tmp/r_local")" -gt 50 ] || fail "no rows for the repartition case"
cmp -s "$tmp/r_local" "$tmp/r_nodes" || { diff "$tmp/r_local" "$tmp/r_nodes" | head; fail "repartitioning nodes differ"; }
echo "ok   $(wc -l < "$tmp/r_local") rows equal with --nodes 2 repartitioning between them (shared memory)"

# Daemons repartitioning between them (TCP channels from every worker to
# every other node's workers): the same rows, and the exchange moved rows.
"$SLUICE" -m csv --secret-file "$SECRET" --cluster "$cluster" -c "$R" 2>"$tmp/err" | sort > "$tmp/r_daemons" ||
  { cat "$tmp/err"; fail "repartitioning between daemons failed"; }
cmp -s "$tmp/r_local" "$tmp/r_daemons" || { diff "$tmp/r_local" "$tmp/r_daemons" | head; fail "repartitioning daemons differ"; }
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "${R%SELECT*} EXPLAIN ANALYZE SELECT${R##*SELECT}" > "$tmp/x" 2>&1
grep -q "rows sent to other workers=[1-9]" "$tmp/x" || { cat "$tmp/x"; fail "no rows crossed the exchange"; }
echo "ok   rows equal with 2 daemons repartitioning between them over TCP"

# Multi-stage queries on the daemons: every leaf runs on both, each on a
# connection (and so a node process) of its own, at once; the shell runs
# the stages.  NEXMark q7 (an interval join of the bids with their windowed
# maximum, leaves under late merge and under repartition) and q8 (a window
# join of two windowed aggregates) give the rows of one process.
NX=$(sed -e "s/'events.num' = '[0-9]*'/'events.num' = '300000'/" examples/nexmark/ddl.sql)
STAGED="$NX
$(sed -n '/^SELECT/,$p' examples/nexmark/q7.sql)
$(sed -n '/^SELECT/,$p' examples/nexmark/q8.sql)"
"$SLUICE" -m csv -c "$STAGED" 2>/dev/null | sort > "$tmp/s_local"
[ "$(wc -l < "$tmp/s_local")" -gt 10 ] || fail "too few rows for the multi-stage case"
for strategy in late-merge repartition broadcast join-repartition join-late-merge; do
  set_strategy="SET 'sluice.strategy' = '$strategy';"
  case $strategy in join-*) set_strategy="SET 'sluice.join-strategy' = '${strategy#join-}';" ;; esac
  "$SLUICE" -m csv --secret-file "$SECRET" --cluster "$cluster" -c "$set_strategy $STAGED" \
    2>"$tmp/err" | sort > "$tmp/s_daemons" || { cat "$tmp/err"; fail "q7/q8 failed on the daemons ($strategy)"; }
  grep -q WARNING "$tmp/err" && { cat "$tmp/err"; fail "q7/q8 did not run on the daemons"; }
  cmp -s "$tmp/s_local" "$tmp/s_daemons" || { diff "$tmp/s_local" "$tmp/s_daemons" | head; fail "q7/q8 rows differ on the daemons ($strategy)"; }
done
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$NX SET 'sluice.join-strategy' = 'single'; EXPLAIN ANALYZE $(sed -n '/^SELECT/,$p' examples/nexmark/q7.sql)" > "$tmp/x" 2>&1
grep -q "^2 nodes (daemons joined with --cluster), each running every leaf" "$tmp/x" || { cat "$tmp/x"; fail "EXPLAIN does not say the leaves run on the daemons"; }
grep -q "^leaf 2: late merge at partition leaders" "$tmp/x" || { cat "$tmp/x"; fail "EXPLAIN does not say how leaf 2 meets across nodes"; }
grep -q "windows evaluated=[1-9]" "$tmp/x" || { cat "$tmp/x"; fail "EXPLAIN ANALYZE: no window evaluated"; }
echo "ok   NEXMark q7 and q8 on 2 daemons (both leaves on both, at once): $(wc -l < "$tmp/s_local") rows equal to one process, leaves under late merge and repartition, and the broadcast, repartitioned and late-merge joins"
# q7 joins every bid with its window's maximum, one row per window: the
# planner broadcasts the maximum to the bids' nodes instead of bringing the
# bids here.
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$NX EXPLAIN $(sed -n '/^SELECT/,$p' examples/nexmark/q7.sql)" > "$tmp/x" 2>&1
grep -q "^join: estimates per 10 s window: leaf 2 1 rows .*: broadcast$" "$tmp/x" || { cat "$tmp/x"; fail "q7: the planner did not choose the broadcast join"; }
grep -q "strategy: broadcast: every row of leaf 2 to each node" "$tmp/x" || { cat "$tmp/x"; fail "q7: EXPLAIN does not show the broadcast join"; }
grep -q "^2 nodes (daemons joined with --cluster), each running leaf 1 on its share" "$tmp/x" || { cat "$tmp/x"; fail "q7: the Nodes block does not say where the stages run"; }
echo "ok   q7: the planner broadcasts leaf 2 (one row per window) to the nodes of leaf 1, and EXPLAIN says so"
# q8 joins two aggregates grouped by the join key: both finish each key's
# partition at the same leader, so nothing moves for the join.
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$NX EXPLAIN $(sed -n '/^SELECT/,$p' examples/nexmark/q8.sql)" > "$tmp/x" 2>&1
grep -q "^join: estimates per 10 s window: .*late merge none .*: late merge$" "$tmp/x" || { cat "$tmp/x"; fail "q8: the planner did not choose the late-merge join"; }
grep -q "strategy: late merge: leaves 1 and 2 both split their groups by the join key" "$tmp/x" || { cat "$tmp/x"; fail "q8: EXPLAIN does not show the late-merge join"; }
grep -q "^leaf 2: late merge at partition leaders, partitioned by the join key; leader p's finished groups go over a link to stage node p" "$tmp/x" || { cat "$tmp/x"; fail "q8: the Nodes block does not say where leaf 2's rows go"; }
echo "ok   q8: the planner joins by late merge (both leaves split by the join key at the same leaders), and EXPLAIN says so"

# q7 with repartition forced: neither side is grouped by the join key, so
# both are routed by it (the bids' nodes send their own rows to each other
# too), and EXPLAIN says so.
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$NX SET 'sluice.join-strategy' = 'repartition'; EXPLAIN $(sed -n '/^SELECT/,$p' examples/nexmark/q7.sql)" > "$tmp/x" 2>&1
grep -q "^join: forced: .*repartition .* (both sides routed by the join key).*: repartition of both sides$" "$tmp/x" || { cat "$tmp/x"; fail "q7: forced repartition did not route both sides"; }
grep -q "strategy: repartition: every row of leaves 1 and 2 goes to the node its join key's hash names" "$tmp/x" || { cat "$tmp/x"; fail "q7: EXPLAIN does not show the repartition of both sides"; }
grep -q "^leaf 1: each node's rows go over the links by their join key" "$tmp/x" || { cat "$tmp/x"; fail "q7: the Nodes block does not say where leaf 1's rows go"; }
echo "ok   q7 with repartition forced: both sides routed by the join key, and EXPLAIN says so"

"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c ".nodes" > "$tmp/nodes"
[ "$(grep -c healthy "$tmp/nodes")" = 2 ] || { cat "$tmp/nodes"; fail ".nodes"; }
echo "ok   .nodes lists both, healthy"

"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c "$DDL EXPLAIN SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE ro,
  DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;" > "$tmp/explain"
grep -q "^2 nodes (daemons joined with --cluster)" "$tmp/explain" || { cat "$tmp/explain"; fail "EXPLAIN has no Nodes block"; }
echo "ok   EXPLAIN says where the plan runs"

# Transport selection: daemons cannot share memory; verbs needs an RDMA
# device on every node (where the nodes have none, the error names one).
"$SLUICE" --secret-file "$SECRET" --cluster "$cluster" -c ".nodes" > "$tmp/nodes"
if "$SLUICE" --secret-file "$SECRET" --cluster "$cluster" --transport shm -c "$DDL $Q" > "$tmp/out" 2>&1; then
  fail "--transport shm ran between daemons"
fi
grep -q "shm transport joins only nodes forked on this host" "$tmp/out" ||
  { cat "$tmp/out"; fail "no clear error for shm between daemons"; }
if grep -q "rdma=none" "$tmp/nodes"; then
  if "$SLUICE" --secret-file "$SECRET" --cluster "$cluster" --transport verbs -c "$DDL $Q" > "$tmp/out" 2>&1; then
    fail "--transport verbs ran without an RDMA device"
  fi
  grep -q "verbs transport needs an active RDMA device on every node, and node 0" "$tmp/out" ||
    { cat "$tmp/out"; fail "no clear error for verbs without a device"; }
  echo "ok   --transport shm / verbs refused with a clear message (no RDMA device here)"
else
  echo "ok   --transport shm refused between daemons (nodes have RDMA: $(grep -m1 -o 'rdma=[^ ]*' "$tmp/nodes"))"
fi
# Forced tcp gives the same rows as auto.
"$SLUICE" -m csv --secret-file "$SECRET" --cluster "$cluster" --transport tcp -c "$DDL $Q" 2>"$tmp/err" | sort > "$tmp/cluster_tcp" ||
  { cat "$tmp/err"; fail "--transport tcp failed"; }
cmp -s "$tmp/local" "$tmp/cluster_tcp" || fail "--transport tcp rows differ"
echo "ok   --transport tcp: rows equal"

# start_daemon: one more daemon on a free port, with a log of its own;
# sets port and pid.
ndaemons=0
start_daemon() {
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    ndaemons=$((ndaemons + 1))
    "$SLUICE" node --secret-file "$SECRET" --data-dir . --listen "127.0.0.1:$port" 2>"$tmp/extra$ndaemons.log" &
    pid=$!
    wait_listening "$pid" "$tmp/extra$ndaemons.log" "127.0.0.1:$port"
    if kill -0 "$pid" 2>/dev/null; then pids+=("$pid"); return 0; fi
  done
  fail "could not start a daemon"
}

# Kill a node in the middle of an unbounded query, with each strategy (late
# merge: the coordinator loses the node; repartition: the other node loses
# its exchange channels too).  Each round kills the second of two fresh
# daemons.
# The multi-stage rounds kill a node in the middle of an unbounded window
# join (every leaf on both nodes), with the stages in the shell (single)
# and on the nodes (broadcast; repartition of both sides, window rows
# joined with a maximum, each routed by the key; late merge, both sides
# at the same leaders).
U="CREATE TABLE u (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
    WITH ('connector' = 'ro', 'events.rate' = '100000');"
for strategy in late-merge repartition single broadcast join-repartition join-late-merge; do
  start_daemon; p0=$port
  start_daemon; p1=$port; victim=$pid
  case $strategy in
    join-late-merge) Q="SET 'sluice.join-strategy' = 'late-merge'; $U
      SELECT a.key, a.n, b.m FROM
        (SELECT key, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE u,
           DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end) a
      JOIN (SELECT key, window_start, window_end, MAX(ts) AS m FROM TABLE(TUMBLE(TABLE u,
           DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end) b
        ON a.key = b.key AND a.window_start = b.window_start AND a.window_end = b.window_end;" ;;
    join-repartition) Q="SET 'sluice.join-strategy' = 'repartition'; $U
      SELECT a.key, b.m FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '1' SECOND)) a
      JOIN (SELECT window_start, window_end, MAX(key) AS m FROM TABLE(TUMBLE(TABLE u,
           DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end) b
        ON a.key = b.m AND a.window_start = b.window_start AND a.window_end = b.window_end;" ;;
    single|broadcast) Q="SET 'sluice.join-strategy' = '$strategy'; $U
      SELECT a.key, a.n, b.m FROM
        (SELECT key, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE u,
           DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end) a
      JOIN (SELECT window_start, window_end, MAX(key) AS m FROM TABLE(TUMBLE(TABLE u,
           DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end) b
        ON a.key = b.m AND a.window_start = b.window_start AND a.window_end = b.window_end;" ;;
    *) Q="SET 'sluice.strategy' = '$strategy'; $U
      SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '1' SECOND))
      GROUP BY key, window_start, window_end;" ;;
  esac
  # The node's host dies (the daemon and the process serving this shell)
  # once the query runs on it: its result has begun (csv prints the
  # column names then; the table mode holds them back to size its
  # columns).  Killed any
  # earlier, the node may be gone before the query is placed, and then
  # the query rightly runs on the node left.
  set +e
  timeout 60 "$SLUICE" -m csv --secret-file "$SECRET" --cluster "127.0.0.1:$p0,127.0.0.1:$p1" -c "$Q" >"$tmp/rows" 2>"$tmp/killed" &
  shell=$!
  for _ in $(seq 590); do
    [ -s "$tmp/rows" ] && break
    kill -0 "$shell" 2>/dev/null || break
    sleep 0.1
  done
  start=$(date +%s)
  kill -9 $(pgrep -P "$victim") "$victim"
  wait "$shell"
  rc=$?
  set -e
  took=$(( $(date +%s) - start ))
  # (the daemons' own logs too: a shell refused by a daemon that had said
  # it listens was seen once under the sanitizers, cause not yet known)
  [ -s "$tmp/rows" ] || { cat "$tmp/killed"; tail -n 5 "$tmp"/extra*.log; fail "$strategy: the query did not start before the node was killed"; }
  [ "$rc" != 124 ] || fail "$strategy: the shell hung after a node was killed"
  [ "$rc" != 0 ] || fail "$strategy: the query succeeded although a node died"
  grep -q "node 1" "$tmp/killed" || { cat "$tmp/killed"; fail "$strategy: the error does not name the node"; }
  # Noticed by the connection's end, not by a node's silence (heartbeats
  # take SL_SILENCE_MS): the time is printed, never asserted.
  if grep -q "not even a heartbeat" "$tmp/killed"; then
    cat "$tmp/killed"; fail "$strategy: the death was noticed only by silence"
  fi
  # The surviving daemon still serves a new shell.
  [[ $("$SLUICE" --secret-file "$SECRET" --cluster "127.0.0.1:$p0" -c ".nodes") == *healthy* ]] ||
    fail "$strategy: the surviving node is not healthy"
  echo "ok   $strategy: a killed node is reported in ${took} s: $(grep -m1 "node 1" "$tmp/killed")"
done
