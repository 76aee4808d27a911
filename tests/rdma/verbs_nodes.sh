#!/usr/bin/env bash
# verbs_nodes.sh - run INSIDE the soft-RoCE VM (tests/rdma/vm.sh): queries
# on 2 and 3 node daemons and on 2 forked nodes whose channels are verbs
# (RC queue pairs over rxe0), checked row for row against the same queries
# in one process; EXPLAIN must name the transport and the device.
#
#   verbs_nodes.sh [SLUICE]   (default: $SLUICE_BUILD_DIR/sluice or build/sluice;
#                              env SLUICE_RDMA_ADDR: the VM's address on rxe0)
set -euo pipefail
SLUICE=${1:-${SLUICE:-${SLUICE_BUILD_DIR:-build}/sluice}}
ADDR=${SLUICE_RDMA_ADDR:?SLUICE_RDMA_ADDR is not set: run me through tests/rdma/vm.sh}
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

# Three daemons on the rxe netdev's address.
ports=()
for n in 0 1 2; do
  port=$((7101 + n))
  "$SLUICE" node --secret-file "$SECRET" --listen "$ADDR:$port" 2>"$tmp/node$n.log" &
  pids+=($!)
  ports+=("$port")
done
sleep 1
for n in 0 1 2; do
  kill -0 "${pids[$n]}" 2>/dev/null || { cat "$tmp/node$n.log"; fail "daemon $n did not start"; }
done

DDL="CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'key.range' = '5000', 'events.num' = '300000', 'seed' = '7');
CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'ysb', 'events.num' = '200000', 'events.per-second' = '20000', 'seed' = '1');"
Q="SELECT key % 97, window_start, COUNT(*), SUM(key), MAX(key) FROM TABLE(TUMBLE(TABLE ro,
  DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key % 97, window_start, window_end;
SELECT ad_type, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ysb_events,
  DESCRIPTOR(event_time), INTERVAL '2' SECOND)) WHERE event_type = 'view'
  GROUP BY ad_type, window_start, window_end;"
RQ="SELECT key, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ro,
  DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;"

"$SLUICE" -m csv -c "$DDL $Q $RQ" 2>"$tmp/err" | sort > "$tmp/local" ||
  { cat "$tmp/err"; fail "the single-process run failed"; }
[ "$(wc -l < "$tmp/local")" -gt 1000 ] || fail "too few rows in the single-process run"

run() { # name, sluice options... : the same queries, rows compared
  local name=$1
  shift
  "$SLUICE" -m csv "$@" -c "$DDL $Q SET 'sluice.strategy' = 'repartition'; $RQ" \
    2>"$tmp/err" | sort > "$tmp/$name" || { cat "$tmp/err"; fail "$name: the query failed"; }
  cmp -s "$tmp/local" "$tmp/$name" ||
    { diff "$tmp/local" "$tmp/$name" | head; fail "$name: rows differ from one process"; }
  echo "ok   $name: $(wc -l < "$tmp/local") rows equal to one process"
}
c2="$ADDR:${ports[0]},$ADDR:${ports[1]}"
c3="$ADDR:${ports[0]},$ADDR:${ports[1]},$ADDR:${ports[2]}"

"$SLUICE" --secret-file "$SECRET" --cluster "$c3" -c ".nodes" | tee "$tmp/nodes"
[ "$(grep -c 'rdma=rxe0' "$tmp/nodes")" = 3 ] || fail ".nodes does not show rxe0 on every node"
grep -q "channels between nodes: verbs rxe0 (sluice.transport = auto)" "$tmp/nodes" ||
  fail "auto does not pick verbs between daemons that all have RDMA"

for spec in "2:$c2" "3:$c3"; do
  n=${spec%%:*}
  list=${spec#*:}
  "$SLUICE" --secret-file "$SECRET" --cluster "$list" -c "$DDL SET 'sluice.strategy' = 'late-merge';
    EXPLAIN $RQ SET 'sluice.strategy' = 'repartition';
    EXPLAIN ANALYZE $RQ" > "$tmp/explain" 2>&1 || { cat "$tmp/explain"; fail "EXPLAIN on $n daemons"; }
  grep -q "channels between nodes: $((n * (n - 1))) verbs rxe0 RC WRITE" "$tmp/explain" ||
    { cat "$tmp/explain"; fail "EXPLAIN does not show the leaders' verbs channels on $n daemons"; }
  grep -q "channels between nodes: [0-9]* verbs rxe0 RC WRITE .*every worker" "$tmp/explain" ||
    { cat "$tmp/explain"; fail "EXPLAIN does not show the exchange's verbs channels on $n daemons"; }
  run "daemons_$n" --secret-file "$SECRET" --cluster "$list"
  run "daemons_${n}_forced" --secret-file "$SECRET" --cluster "$list" --transport verbs
done
run "daemons_2_tcp" --secret-file "$SECRET" --cluster "$c2" --transport tcp
run "forked_2_verbs" --nodes 2 --transport verbs
"$SLUICE" --nodes 2 --transport verbs -c "$DDL EXPLAIN $RQ" > "$tmp/explain" 2>&1
grep -q "channels between nodes: 2 verbs rxe0 RC WRITE 8 x 64 KiB" "$tmp/explain" ||
  { cat "$tmp/explain"; fail "EXPLAIN on forked nodes does not name verbs rxe0"; }
# 2 channels x 8 slots x 64 KiB, a registered ring at each end: 2 MiB.
grep -q "channel memory: 2.0 MiB in all, 1.0 MiB per node on average (a ring at each end of every channel, registered with the RDMA device: pinned)" "$tmp/explain" ||
  { cat "$tmp/explain"; fail "EXPLAIN on forked nodes does not say the registered channel memory"; }
echo "ok   EXPLAIN: $(grep -m1 'channels between nodes' "$tmp/explain")"
