#!/usr/bin/env bash
# test_auth.sh - a node daemon accepts only peers that prove the cluster
# secret (auth.h), and says whom it refused:
#   - a daemon without --secret-file, or with a file others can read, or
#     too short, or easy to guess ('aaaa...'), does not start, and says
#     how to make a good one;
#   - `sluice node` with no --listen listens on 127.0.0.1:7433 only;
#   - a shell with the right secret runs queries; one without a secret is
#     stopped before it connects; one with a wrong secret is refused (the
#     daemon logs its address), and so is a peer that sends garbage;
#   - the daemon still serves a good shell after all of them.
# (A replayed handshake and oversized frames: tests/unit/test_cluster_auth.c.)
#
#   test_auth.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
WRONG=$tmp/wrong.secret
head -c 32 /dev/urandom | base64 > "$WRONG"
chmod 600 "$WRONG"

# Refused at start, with the way out in the message.
expect_refusal() { # WHAT GREP ARGS...
  local what=$1 want=$2
  shift 2
  set +e
  timeout 10 "$SLUICE" "$@" > "$tmp/out" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$tmp/out"; fail "$what: exit status $rc, not 2"; }
  grep -q -- "$want" "$tmp/out" || { cat "$tmp/out"; fail "$what: no '$want' in the message"; }
  echo "ok   $what: $(head -1 "$tmp/out")"
}
expect_refusal "no --secret-file" "needs --secret-file FILE" node --listen 127.0.0.1:0
cp "$SECRET" "$tmp/open.secret"
chmod 644 "$tmp/open.secret"
expect_refusal "a secret others can read" "chmod 600" node --secret-file "$tmp/open.secret"
printf 'short\n' > "$tmp/short.secret"
chmod 600 "$tmp/short.secret"
expect_refusal "a short secret" "at least 16" node --secret-file "$tmp/short.secret"
printf 'aaaaaaaaaaaaaaaa\n' > "$tmp/guessable.secret"
chmod 600 "$tmp/guessable.secret"
expect_refusal "a 16-byte 'aaaa...' secret" "too easy to guess.*head -c 32 /dev/urandom | base64" \
  node --secret-file "$tmp/guessable.secret" --listen 127.0.0.1:0
expect_refusal "a missing secret file" "cannot open" node --secret-file "$tmp/none"

# No --listen: loopback, the default port (when it is free here).
if ! (exec 3<>/dev/tcp/127.0.0.1/7433) 2>/dev/null; then
  "$SLUICE" node --secret-file "$SECRET" 2> "$tmp/default.log" &
  pids+=($!)
  for _ in $(seq 50); do grep -q "listening" "$tmp/default.log" && break; sleep 0.1; done
  grep -q "sluice node listening on 127.0.0.1:7433" "$tmp/default.log" ||
    { cat "$tmp/default.log"; fail "without --listen the daemon is not on 127.0.0.1:7433"; }
  echo "ok   no --listen: $(head -1 "$tmp/default.log")"
  kill "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null || true
else
  echo "skip the default address: something listens on 127.0.0.1:7433 already"
fi

# A daemon on a free port (a bare port means 127.0.0.1).
for attempt in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 30000))
  "$SLUICE" node --secret-file "$SECRET" --listen "$port" 2> "$tmp/node.log" &
  pid=$!
  # listening, or gone (the port was taken); a loaded host takes a while
  for _ in $(seq 100); do
    grep -q "listening" "$tmp/node.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then pids+=("$pid"); break; fi
done
kill -0 "$pid" 2>/dev/null || fail "could not start a daemon"
grep -q "listening on 127.0.0.1:$port" "$tmp/node.log" || { cat "$tmp/node.log"; fail "--listen PORT is not on 127.0.0.1"; }
node="127.0.0.1:$port"
Q="CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'key.range' = '10', 'events.num' = '1000');
SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE ro, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;"

good() { # the right secret runs a query on the daemon
  "$SLUICE" -m csv --no-headers --secret-file "$SECRET" --cluster "$node" -c "$Q" > "$tmp/good" 2> "$tmp/good.err" ||
    { cat "$tmp/good.err"; fail "$1: the right secret was refused"; }
  [ "$(cat "$tmp/good")" = 1000 ] || { cat "$tmp/good"; fail "$1: wrong rows"; }
}
good "first"
echo "ok   the right secret: the query ran on the daemon"

# No secret: the shell does not even connect.
set +e
"$SLUICE" --cluster "$node" -c "$Q" > "$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "needs the cluster secret" "$tmp/out" || { cat "$tmp/out"; fail "a shell without a secret was not stopped"; }
echo "ok   no secret: $(head -1 "$tmp/out")"

# A wrong secret: refused by the daemon, which logs who it was.
set +e
timeout 20 "$SLUICE" --secret-file "$WRONG" --cluster "$node" -c "$Q" > "$tmp/out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "refused this side's proof" "$tmp/out" || { cat "$tmp/out"; fail "a wrong secret was not refused (status $rc)"; }
for _ in $(seq 50); do grep -q "did not prove" "$tmp/node.log" && break; sleep 0.1; done
grep -q "sluice node: refused 127.0.0.1:[0-9]*: the peer did not prove it knows the cluster secret" "$tmp/node.log" ||
  { cat "$tmp/node.log"; fail "the daemon did not log the refused peer"; }
echo "ok   wrong secret: $(head -1 "$tmp/out")"
echo "     the daemon: $(grep -m1 'did not prove' "$tmp/node.log")"

# Garbage: an HTTP request.  The daemon answers with its challenge only,
# refuses, logs, and closes the connection.
exec 3<>"/dev/tcp/127.0.0.1/$port"
hello=$(timeout 10 head -c 40 <&3 | wc -c)
# (in a subshell: the daemon may close before the last piece is written)
(printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >&3) 2>/dev/null || true
# Then the end of the connection (a reset: the request was not read).
more=$( (timeout 10 cat <&3 2>/dev/null || true) | wc -c)
exec 3<&-
[ "$hello" = 40 ] && [ "$more" = 0 ] ||
  fail "garbage: the daemon sent $hello + $more bytes, not its 40-byte challenge alone"
for _ in $(seq 50); do grep -q "not a Sluice peer" "$tmp/node.log" && break; sleep 0.1; done
grep -q "refused 127.0.0.1:[0-9]*: the peer is not a Sluice peer" "$tmp/node.log" ||
  { cat "$tmp/node.log"; fail "the daemon did not log the garbage"; }
echo "ok   garbage: $(grep -m1 'not a Sluice peer' "$tmp/node.log")"

# A peer that connects and says nothing is dropped after 10 s (not
# waited for here); the daemon serves others meanwhile.
exec 4<>"/dev/tcp/127.0.0.1/$port"
good "after the refusals, with a silent peer connected"
exec 4<&-
echo "ok   the daemon still serves the right secret"
