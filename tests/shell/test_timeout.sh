#!/usr/bin/env bash
# test_timeout.sh - .timeout on a query running on two node processes: the
# statement stops with an error that names the limit, well before the
# test's own deadline, and the next statement runs on the same nodes
# (without the limit: starting the nodes again takes over 500 ms under
# the sanitizer on a slow host).
# (One process: tests/golden/timeout.sql.)
#
#   test_timeout.sh SLUICE
set -euo pipefail
SLUICE=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }

start=$(date +%s)
set +e
timeout 60 "$SLUICE" --nodes 2 --no-bail -m csv --no-headers \
  -c "CREATE TABLE endless (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
        WITH ('connector' = 'ro', 'key.range' = '1000');
      CREATE TABLE bounded (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
        WITH ('connector' = 'ro', 'key.range' = '1000', 'events.num' = '1000');" \
  -c ".timeout 500" \
  -c "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE endless, DESCRIPTOR(ts), INTERVAL '1' SECOND))
        GROUP BY key, window_start, window_end HAVING COUNT(*) < 0;" \
  -c ".timeout off" \
  -c "SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE bounded, DESCRIPTOR(ts), INTERVAL '1' HOUR))
        GROUP BY window_start, window_end;" \
  -c ".nodes" > "$tmp/out" 2> "$tmp/err"
rc=$?
set -e
took=$(( $(date +%s) - start ))
[ "$rc" = 1 ] || fail "exit status $rc, not 1 (124: the shell hung)"
grep -q "the statement ran longer than the .timeout of 500 ms and was stopped" "$tmp/err" ||
  fail "no .timeout error"
[ "$took" -le 20 ] || fail "the timed-out statement took $took s to stop"
[ "$(head -1 "$tmp/out")" = 1000 ] || { cat "$tmp/out"; fail "the next statement did not run on the nodes"; }
[ "$(grep -c 'healthy$' "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "the nodes are not healthy after the timeout"; }
echo "ok   .timeout 500 on 2 nodes: stopped, the next query ran, both nodes healthy ($took s in all)"
