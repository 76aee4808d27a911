#!/usr/bin/env bash
# test_slow_reader.sh - the shell piped into a reader that takes a line per
# 5 milliseconds: an unbounded query's memory stays bounded (backpressure from
# the pipe to the sources), in csv mode and in table mode (which prints its
# rows in groups), on one process and on two node processes.  Each run
# stops itself with .timeout after 4 s; the peak RSS of the shell and of
# its nodes is sampled meanwhile.  Before backpressure the shell grew by
# hundreds of MB a second; held back it stays near its start-up size.
# The shell must end soon after its .timeout: rows still to be printed go
# out for 200 ms at most (a table's group of 4096 rows took 20 s here).
#
#   test_slow_reader.sh SLUICE
set -euo pipefail
SLUICE=$1
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }
BOUND_MB=200

rss_mb() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0; }

# run NAME ARGS...: sluice ARGS into a slow reader; prints the peak RSS (MB)
# of the shell and of its node processes.
run() {
  local name=$1
  shift
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo"
  # (a sleep per line in python, not bash: a forked `sleep` per line is
  # ten times slower on a loaded machine, and draining the pipe after the
  # shell stopped would take minutes)
  python3 -c 'import sys, time
for _ in sys.stdin:
    time.sleep(0.005)' < "$tmp/fifo" &
  local reader=$!
  "$SLUICE" "$@" -c "CREATE TABLE t (n BIGINT, ts TIMESTAMP(3))
                       WITH ('connector' = 'datagen');" \
    -c ".timeout 4000" -c "SELECT n, ts FROM t;" > "$tmp/fifo" 2> "$tmp/err" &
  pid=$!
  local started=$SECONDS
  local peak=0 nodes_peak=0
  while kill -0 "$pid" 2>/dev/null; do
    local r
    r=$(rss_mb "$pid")
    [ "$r" -gt "$peak" ] && peak=$r
    for c in $(pgrep -P "$pid" || true); do
      r=$(rss_mb "$c")
      [ "$r" -gt "$nodes_peak" ] && nodes_peak=$r
    done
    sleep 0.1
  done
  wait "$pid" || true
  local took=$((SECONDS - started))
  pid=
  wait "$reader" || true
  grep -q "ran longer than the .timeout of 4000 ms" "$tmp/err" ||
    fail "$name: the query did not run until its .timeout"
  [ "$took" -le 10 ] || fail "$name: the shell ran $took s after a .timeout of 4 s"
  echo "$name: shell peak $peak MB, node peak $nodes_peak MB, ended after $took s"
  [ "$peak" -lt "$BOUND_MB" ] || fail "$name: the shell reached $peak MB"
  [ "$nodes_peak" -lt "$BOUND_MB" ] || fail "$name: a node reached $nodes_peak MB"
}

run "csv, one process" -m csv
run "table, one process" -m table
run "csv, 2 nodes" --nodes 2 -m csv
echo "ok   a slow reader holds the query back: memory stays under $BOUND_MB MB"
