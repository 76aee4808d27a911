#!/usr/bin/env bash
# test_kill_loop.sh - a random node of a multi-node query is killed or hung
# at a random time, many times over; every time:
#   - the query stops with an error that names a node (heartbeats notice a
#     hung node, node.h SL_SILENCE_MS; a closed connection a dead one);
#   - the shell does not hang (a 60 s limit per round, never reached);
#   - the next query in the same shell gives the exact, complete result on
#     the nodes that are left or joined again (.nodes says which);
#   - once the shell has exited, no node process serving it is left.
# Victims: the process a daemon forked for this shell (SIGKILL: a crash;
# SIGSTOP: a hang), the daemon with it (its host is gone: the node is
# dropped and the cluster degraded), or one of the nodes a shell forked
# with --nodes (SIGKILL).  Queries: late merge, repartition, and a join
# whose stages run on the nodes.  Detection times are printed (never
# asserted: timings on a shared machine are noise); docs/RELIABILITY.md
# quotes them.
#
#   test_kill_loop.sh SLUICE SOURCE_DIR [ROUNDS] [SEED]
set -euo pipefail
# Any command failing where none should: say where, never exit silently.
trap '[[ $- == *e* ]] && echo "FAIL (seed ${SEED:-?}, round ${round:-0}): line $LINENO: $BASH_COMMAND failed"' ERR
SLUICE=$1
cd "$2"
ROUNDS=${3:-12}
round=0
SEED=${4:-$(( $(date +%s) % 32768 ))}
RANDOM=$SEED
echo "seed $SEED (test_kill_loop.sh SLUICE SRC $ROUNDS $SEED repeats this run)"
tmp=$(mktemp -d)
SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
declare -a dpid dport
cleanup() {
  for p in "${dpid[@]}"; do
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL (seed $SEED, round $round): $*"; exit 1; }

# count_listening LOG PORT: how many daemons of LOG said they listen on PORT.
count_listening() {
  local n
  n=$(grep -cxF "sluice node listening on 127.0.0.1:$2" "$1" 2>/dev/null)
  echo "${n:-0}"
}

# start_daemon I [PORT]: daemon I on PORT (a free one when not given).
start_daemon() {
  local i=$1 want=${2:-} port
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=${want:-$((20000 + RANDOM % 30000))}
    # A restarted daemon appends to the log of the one killed on its port:
    # only a line more than before says the new one listens.
    local before
    before=$(count_listening "$tmp/daemon$i.log" "$port")
    "$SLUICE" node --secret-file "$SECRET" --listen "127.0.0.1:$port" 2>>"$tmp/daemon$i.log" &
    dpid[$i]=$!
    # listening, or gone (the port was taken); a loaded host takes a while
    for _ in $(seq 300); do
      (($(count_listening "$tmp/daemon$i.log" "$port") > before)) && break
      kill -0 "${dpid[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${dpid[$i]}" 2>/dev/null; then dport[$i]=$port; return 0; fi
  done
  fail "could not start daemon $i"
}
for i in 0 1 2; do start_daemon $i; done
cluster() { echo "127.0.0.1:${dport[0]},127.0.0.1:${dport[1]},127.0.0.1:${dport[2]}"; }

U="CREATE TABLE u (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'events.rate' = '200000');"
V="CREATE TABLE v (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'events.num' = '300000');"
AGG="SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts),
  INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;"
JOIN="SELECT a.key, a.n, b.m FROM
  (SELECT key, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE u,
     DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end) a
  JOIN (SELECT window_start, window_end, MAX(key) AS m FROM TABLE(TUMBLE(TABLE u,
     DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end) b
  ON a.key = b.m AND a.window_start = b.window_start AND a.window_end = b.window_end;"

kills=0 hangs=0 hosts=0 forked=0 max_took=0
for round in $(seq 1 "$ROUNDS"); do
  case $((RANDOM % 3)) in
    0) set="SET 'sluice.strategy' = 'late-merge';"; q=$AGG; qname=late-merge ;;
    1) set="SET 'sluice.strategy' = 'repartition';"; q=$AGG; qname=repartition ;;
    *) set="SET 'sluice.join-strategy' = 'broadcast';"; q=$JOIN; qname=join-broadcast ;;
  esac
  # What is killed: 0-1 a daemon's serving process (KILL), 2 the same
  # (STOP: it hangs), 3 a daemon and its process (the host dies), 4 a
  # node forked by the shell (--nodes 3).
  how=$((RANDOM % 5))
  victim=$((RANDOM % 3))
  delay=$(printf '0.%d' $((3 + RANDOM % 7)))$((RANDOM % 2))
  # The long query is stopped by the kill; .timeout is only the net under
  # it.  The next one counts v: 300000 rows whatever the nodes left.
  printf '%s\n' "$U" "$V" "$set" ".timeout 20000" ".timer on" "$q" ".timer off" ".timeout off" \
    "SELECT COUNT(*) AS n FROM v;" ".nodes" >"$tmp/round.sql"
  if [ "$how" = 4 ]; then
    args=(--nodes 3)
  else
    args=(--secret-file "$SECRET" --cluster "$(cluster)")
  fi
  timeout 60 "$SLUICE" "${args[@]}" --no-bail -m csv "$tmp/round.sql" \
    >"$tmp/out" 2>"$tmp/err" &
  shell=$!
  # The delay counts from when the shell's nodes are there (a loaded
  # machine may take a while to start it): its node processes, or the
  # processes the daemons forked for it.
  sh_pid=""
  for t in $(seq 1 200); do
    sh_pid=$(pgrep -P "$shell" | head -1 || true)
    if [ -n "$sh_pid" ]; then
      if [ "$how" = 4 ]; then
        [ "$(pgrep -P "$sh_pid" | wc -l || true)" -ge 3 ] && break
      else
        [ -n "$(pgrep -P "${dpid[$victim]}" || true)" ] && break
      fi
    fi
    sleep 0.05
  done
  sleep "$delay"
  # The victim: looked for again for a while when it is not there yet (a
  # loaded machine may not have forked it even after the wait above).
  v=""
  for t in $(seq 1 100); do
    case $how in
      0|1|2|3) v=$(pgrep -P "${dpid[$victim]}" | head -1 || true) ;;
      4) v=$(pgrep -P "$sh_pid" | sed -n "$((victim + 1))p" || true) ;;
    esac
    [ -n "$v" ] && break
    kill -0 "$shell" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$v" ] || { cat "$tmp/err"; fail "no node process to kill after ${delay} s"; }
  case $how in
    0|1) what="daemon $victim's process (KILL)"; kill -9 "$v"; kills=$((kills + 1)) ;;
    2) what="daemon $victim's process (STOP)"; kill -STOP "$v"; hangs=$((hangs + 1)) ;;
    3) what="daemon $victim and its process"; kill -9 "$v" "${dpid[$victim]}"; hosts=$((hosts + 1)) ;;
    4) what="forked node $victim (KILL)"; kill -9 "$v"; forked=$((forked + 1)) ;;
  esac
  set +e
  wait "$shell"
  rc=$?
  set -e
  [ "$rc" != 124 ] || { cat "$tmp/err"; fail "$qname, $what: the shell hung"; }
  # The error of the long query names the node.
  err=$(grep -m1 '^Error' "$tmp/err" || true)
  case $err in
    *"node "[0-9]*) ;;
    *) cat "$tmp/err"; fail "$qname, $what: the query's error does not name a node: $err" ;;
  esac
  # How long the query ran after the kill (it started a few ms after the
  # shell): noticed within this, stopped and in step again.
  ran=$(cat "$tmp/out" "$tmp/err" | grep -m1 -o 'Run Time: real [0-9.]*' | awk '{print $4}' || true)
  [ -n "$ran" ] || { cat "$tmp/out" "$tmp/err"; fail "$qname, $what: the long query did not run"; }
  took=$(echo "$ran - $delay" | bc)
  case $took in -*) took=0 ;; esac
  if [ "$(echo "$took > $max_took" | bc)" = 1 ]; then max_took=$took; fi
  # The next query: complete on the nodes left.
  grep -qx 300000 "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "$qname, $what: the next query did not give 300000"; }
  if [ "$how" = 2 ]; then kill -9 "$v" 2>/dev/null || true; fi
  # Nothing left behind: every process serving the shell ends with it.
  for i in 0 1 2; do
    for t in $(seq 1 50); do
      [ -z "$(pgrep -P "${dpid[$i]}" 2>/dev/null || true)" ] && break
      sleep 0.1
    done
    [ -z "$(pgrep -P "${dpid[$i]}" 2>/dev/null || true)" ] || fail "$qname, $what: daemon $i still has a process serving the shell that ended"
  done
  [ -z "$(pgrep -P "$sh_pid" 2>/dev/null || true)" ] || fail "$qname, $what: a forked node outlived its shell"
  notice=$(grep -o 'joined again\|cannot be joined again\|started again' "$tmp/err" | tail -1)
  echo "ok   round $round: $qname, $what at ${delay} s, stopped ${took} s later: '${err##*: line [0-9]: }'; next query complete (${notice:-no notice})"
  if [ "$how" = 3 ]; then start_daemon "$victim" "${dport[$victim]}"; fi
done
echo "kill loop: $ROUNDS rounds (seed $SEED): $kills node processes killed, $hangs hung, $hosts daemons killed with theirs, $forked forked nodes killed; every query stopped naming a node (at most ${max_took} s after the kill), no shell hung, every next query complete, no process left"
