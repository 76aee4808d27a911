#!/usr/bin/env bash
# test_idle_load.sh - idle means idle, heartbeats are honest:
#   - a rate-limited source sleeps between its rows: datagen at 10 rows/s
#     in one process, and ro at 100 events/s on 2 forked nodes, use under
#     5% of a core per process (CPU time from /proc, once started);
#   - a stream join on 2 daemons runs its whole 60 s under a load of 10
#     busy processes on this host, with the shell paused three times for 3 s
#     meanwhile (as a coordinator starved of CPU, or busy, is), and stops
#     only at its .timeout: no node is blamed for "sending nothing" while
#     the shell was not listening (node.h, the silence rule).
# The CPU shares are printed; docs/RELIABILITY.md quotes them.
#
#   test_idle_load.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
HZ=$(getconf CLK_TCK)

# ticks PID: CPU ticks (user + system) of PID and its children.
ticks() {
  local t=0 p v
  for p in "$1" $(pgrep -P "$1" || true); do
    v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
    t=$((t + v))
  done
  echo "$t"
}

# idle WHAT PROCESSES SQL [ARGS...]: once the query has started (its CPU
# settles, or 5 s), its processes' CPU share over 3 s is below 5% each.
idle() {
  local what=$1 nproc=$2 sql=$3
  shift 3
  "$SLUICE" -m csv "$@" -c ".timeout 20000
$sql" > /dev/null 2> "$tmp/idle.err" &
  local sh=$!
  pids+=("$sh")
  local last=-100 now
  sleep 1
  for _ in $(seq 8); do
    sleep 0.5
    now=$(ticks "$sh")
    [ $((now - last)) -le 1 ] && break
    last=$now
  done
  local a b s e
  a=$(ticks "$sh")
  s=$(date +%s.%N)
  sleep 3
  b=$(ticks "$sh")
  e=$(date +%s.%N)
  local n
  n=$(($( (pgrep -P "$sh" || true) | wc -l) + 1))
  kill "$sh" 2>/dev/null || true
  wait "$sh" 2>/dev/null || true
  [ "$n" = "$nproc" ] || { cat "$tmp/idle.err"; fail "$what: $n processes, not $nproc"; }
  local share
  share=$(echo "100 * ($b - $a) / $HZ / ($e - $s) / $n" | bc -l)
  local said
  said=$(printf '%.2f%% of a core per process (%d ticks in %.1f s, %d processes)' \
    "$share" $((b - a)) "$(echo "$e - $s" | bc -l)" "$n")
  [ "$(echo "$share < 5" | bc -l)" = 1 ] || fail "$what: $said, not under 5%"
  echo "ok   $what: $said"
}
idle "datagen at 10 rows/s" 1 \
  "CREATE TABLE g (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
SELECT n FROM g;"
idle "ro at 100 events/s on 2 nodes" 3 \
  "CREATE TABLE u (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'events.rate' = '100');
SELECT key FROM u;" --nodes 2

# ---- a 2-daemon join at load 10 ------------------------------------------
SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
ports=()
for n in 0 1; do
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    "$SLUICE" node --secret-file "$SECRET" --listen "127.0.0.1:$port" 2> "$tmp/node$n.log" &
    pid=$!
    for _ in $(seq 100); do
      grep -q "listening" "$tmp/node$n.log" 2>/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then pids+=("$pid"); ports+=("$port"); break; fi
  done
done
[ "${#ports[@]}" = 2 ] || fail "could not start two node daemons"
for _ in $(seq 10); do
  (while :; do :; done) &
  pids+=($!)
done
cat > "$tmp/join.sql" <<'SQL'
CREATE TABLE u (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'events.rate' = '100', 'key.range' = '50');
CREATE TABLE w (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'events.rate' = '100', 'key.range' = '50');
.timeout 60000
SELECT a.key, a.ts, b.ts FROM u a JOIN w b
  ON a.key = b.key AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts;
SQL
start=$(date +%s.%N)
"$SLUICE" -m csv --secret-file "$SECRET" --cluster "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" \
  "$tmp/join.sql" > "$tmp/join.out" 2> "$tmp/join.err" &
shell=$!
pids+=("$shell")
for pause in 15 30 45; do
  sleep $((pause - $(date +%s) + ${start%.*})) 2>/dev/null || true
  kill -STOP "$shell" 2>/dev/null || true
  sleep 3
  kill -CONT "$shell" 2>/dev/null || true
done
set +e
wait "$shell"
rc=$?
while kill -0 "$shell" 2>/dev/null; do # (a wait that saw it stopped)
  wait "$shell"
  rc=$?
done
set -e
took=$(echo "$(date +%s.%N) - $start" | bc -l)
err=$(grep -m1 'Error' "$tmp/join.err" || true)
case $err in
  *"ran longer than the .timeout of 60000 ms"*) ;;
  *) tail -5 "$tmp/join.err"; tail -3 "$tmp/node0.log" "$tmp/node1.log"
     fail "the join at load 10 stopped after $took s (status $rc): $err" ;;
esac
[ "$rc" = 1 ] || fail "the join's shell exited with $rc"
printf 'ok   a 2-daemon join at load 10, the shell paused 3 times for 3 s: ran its 60 s (%.0f s in all), %d rows, stopped by its .timeout alone\n' \
  "$took" "$(wc -l < "$tmp/join.out")"
