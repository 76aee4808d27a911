#!/usr/bin/env bash
# test_rejoin.sh - one running shell outlives its nodes:
#   - a daemon restarted on its port while the shell is idle is joined
#     again (a new connection, the secret proved again) at the next
#     statement, which says so and gives the complete result;
#   - a daemon that is down is named in a warning and the query runs on
#     the nodes left; once it is back on its port, the next statement
#     joins it again and says so (.nodes lists it healthy);
#   - a node the shell forked (--nodes 2) that is killed by a signal is
#     named with its pid and the signal.
#
#   test_rejoin.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
tmp=$(mktemp -d)
pids=()
cleanup() {
  exec 3>&- 2>/dev/null || true
  for p in "${pids[@]}"; do
    pkill -9 -P "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null | tail -20; exit 1; }

SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"

# start_daemon I [PORT]: daemon I (on PORT, else a free one); sets
# dport[I] and dpid[I].
declare -a dpid dport
start_daemon() {
  local i=$1 want=${2:-} port
  for attempt in 1 2 3 4 5 6 7 8; do
    port=${want:-$((20000 + RANDOM % 30000))}
    "$SLUICE" node --secret-file "$SECRET" --listen "127.0.0.1:$port" 2>> "$tmp/daemon$i.log" &
    dpid[$i]=$!
    for _ in $(seq 100); do
      [ "$(grep -c "listening on 127.0.0.1:$port" "$tmp/daemon$i.log" || true)" -ge "${3:-1}" ] && break
      kill -0 "${dpid[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${dpid[$i]}" 2>/dev/null; then
      pids+=("${dpid[$i]}")
      dport[$i]=$port
      return 0
    fi
    [ -z "$want" ] || sleep 0.5 # its old self may hold the port a moment
  done
  fail "could not start daemon $i"
}
stop_daemon() { # I: the daemon and the processes serving shells, gone
  local serving
  serving=$(pgrep -P "${dpid[$1]}" || true)
  kill -9 "${dpid[$1]}" $serving 2>/dev/null || true
  wait "${dpid[$1]}" 2>/dev/null || true
  # (a killed process's connections close as it exits, a moment later)
  for p in $serving; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  done
}

# The shell reads statements from a pipe, one at a time: say SQL, then
# wait until its output has COUNT lines matching PATTERN.
say() { printf '%s\n' "$1" >&3; }
wait_for() { # PATTERN COUNT WHAT
  for _ in $(seq 300); do
    [ "$(grep -c -- "$1" "$tmp/out" || true)" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "$3: no '$1' (x$2) in the shell's output"
}

start_daemon 0
start_daemon 1
mkfifo "$tmp/in"
"$SLUICE" -m csv --no-headers --no-bail --secret-file "$SECRET" \
  --cluster "127.0.0.1:${dport[0]},127.0.0.1:${dport[1]}" < "$tmp/in" > "$tmp/out" 2>&1 &
pids+=($!)
exec 3> "$tmp/in"
say "CREATE TABLE v (key BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'ro', 'events.num' = '1000');"
say "SELECT COUNT(*) FROM v;"
wait_for '^1000$' 1 "the first query"

# Restarted while the shell is idle.
stop_daemon 1
start_daemon 1 "${dport[1]}" 2
say "SELECT COUNT(*) FROM v;"
wait_for '^1000$' 2 "after daemon 1 restarted"
grep -q "\[INFO\] node 1 (127.0.0.1:${dport[1]}) was lost .*joined again" "$tmp/out" ||
  fail "the restarted daemon's rejoining was not said"
! grep -q "^Error" "$tmp/out" || fail "a statement failed around the restart"
echo "ok   restarted daemon joined again: $(grep -m1 'was lost' "$tmp/out")"

# Down: named, and the query runs on the node left.
stop_daemon 1
say "SELECT COUNT(*) FROM v;"
wait_for '^1000$' 3 "with daemon 1 down"
grep -q "\[WARNING\] node 1 (127.0.0.1:${dport[1]}) broke and cannot be joined again (cannot connect to the node at 127.0.0.1:${dport[1]}" "$tmp/out" ||
  fail "the daemon that is down was not named"
echo "ok   daemon down: $(grep -m1 -o '\[WARNING\] node 1 ([^)]*) broke and cannot be joined again' "$tmp/out")"

# Back on its port: joined at the next statement.
start_daemon 1 "${dport[1]}" 3
say "SELECT COUNT(*) FROM v;"
wait_for '^1000$' 4 "after daemon 1 came back"
grep -q "\[INFO\] the node daemon at 127.0.0.1:${dport[1]} answers again: joined again; queries run on 2 nodes" "$tmp/out" ||
  fail "the daemon back on its port was not joined again"
say ".nodes"
wait_for "127.0.0.1:${dport[1]} .*healthy" 1 ".nodes after it came back"
echo "ok   back on its port: $(grep -m1 -o '\[INFO\] the node daemon at [^:]*:[0-9]* answers again' "$tmp/out")"
exec 3>&-

# A forked node killed by a signal.
printf 'CREATE TABLE u (key BIGINT, ts TIMESTAMP(3)) WITH (%s);\n.timeout 30000\nSELECT COUNT(*) FROM u;\n' \
  "'connector' = 'ro', 'events.rate' = '1000'" > "$tmp/forked.sql"
"$SLUICE" -m csv --no-bail --nodes 2 "$tmp/forked.sql" > "$tmp/out" 2>&1 &
shell=$!
pids+=("$shell")
victim=""
for _ in $(seq 100); do
  victim=$(pgrep -P "$shell" | sed -n 2p || true)
  [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || fail "no forked node to kill"
sleep 1
kill -9 "$victim"
wait "$shell" || true
grep -q "sluice: node 1 (pid $victim) was killed by signal 9 (Killed)" "$tmp/out" ||
  fail "the forked node's death by SIGKILL was not said"
echo "ok   forked node killed: $(grep -m1 'was killed by signal' "$tmp/out")"
