#!/usr/bin/env bash
# test_confine.sh - a node daemon opens only the files it was given, and
# bounds the connections that have not proved the secret:
#   - with --data-dir DIR, a relative path reads DIR's file; /etc/shadow,
#     a path with '..', a link out of DIR and a file swapped for a link
#     out after it was read once are refused, naming the path and DIR,
#     and nothing of the refused files reaches the shell;
#   - without --data-dir a filesystem table is refused, saying --data-dir;
#   - a daemon running as root warns; --user NAME switches to that user
#     (and an unknown user stops it from starting);
#   - --max-pending N: silent connections beyond N are refused at once and
#     logged with their address; the daemon serves a good shell after;
#   - `sluice node --help` lists the options.
#
#   test_confine.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
tmp=$(mktemp -d)
chmod 755 "$tmp" # --user nobody reads the data directory below
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

SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
DATA=$tmp/data
mkdir "$DATA"
printf 'alpha\nbeta\n' > "$DATA/in.csv"
printf 'SECRET-LINE\n' > "$tmp/secret.csv"
ln -s "$tmp/secret.csv" "$DATA/out_link.csv"
chmod -R a+rX "$DATA"

# start_daemon LOG ARGS...: a daemon on a free port; sets port and pid.
start_daemon() {
  local log=$1
  shift
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    "$SLUICE" node --secret-file "$SECRET" --listen "127.0.0.1:$port" "$@" 2>"$log" &
    pid=$!
    for _ in $(seq 30); do grep -q "listening" "$log" 2>/dev/null && break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null && grep -q "listening" "$log"; then
      pids+=("$pid")
      return 0
    fi
  done
  cat "$log"
  fail "could not start a daemon ($*)"
}

# run NODE SQL: the shell on that daemon; rows in $tmp/out, messages in
# $tmp/err, status in rc.
run() {
  set +e
  timeout 60 "$SLUICE" -m csv --no-headers --secret-file "$SECRET" --cluster "$1" -c "$2" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  set -e
}
table() { # NAME PATH
  echo "CREATE TABLE $1 (line STRING) WITH ('connector' = 'filesystem', 'path' = '$2', 'format' = 'csv');"
}
# refused WHAT PATH WANT: reading PATH is refused, the message names the
# path and WANT, and none of the file's lines came back.
refused() {
  run "$node" "$(table t "$2") SELECT * FROM t;"
  [ "$rc" != 0 ] || { cat "$tmp/out" "$tmp/err"; fail "$1: read, not refused"; }
  grep -q -- "$2" "$tmp/err" && grep -q -- "$3" "$tmp/err" ||
    { cat "$tmp/err"; fail "$1: the message does not name '$2' and '$3'"; }
  ! grep -q "SECRET-LINE\|root:" "$tmp/out" "$tmp/err" || { cat "$tmp/out"; fail "$1: the file's lines came back"; }
  echo "ok   $1: $(grep -m1 -o "'$2'.*" "$tmp/err" | cut -c1-150)"
}

# --help lists the options.
"$SLUICE" node --help > "$tmp/help"
for o in --data-dir --user --max-pending --listen --secret-file; do
  grep -q -- "$o" "$tmp/help" || fail "sluice node --help does not list $o"
done
echo "ok   sluice node --help lists --data-dir, --user, --max-pending"

# ---- --data-dir ----------------------------------------------------------
start_daemon "$tmp/confined.log" --data-dir "$DATA"
node="127.0.0.1:$port"
canon=$(realpath "$DATA")
grep -q "files under $canon" "$tmp/confined.log" || { cat "$tmp/confined.log"; fail "the daemon does not say where its files are"; }
run "$node" "$(table t in.csv) SELECT * FROM t;"
[ "$rc" = 0 ] && [ "$(sort "$tmp/out" | tr '\n' ' ')" = "alpha beta " ] ||
  { cat "$tmp/out" "$tmp/err"; fail "a relative path inside --data-dir was not read from it"; }
echo "ok   a relative path reads the file in --data-dir"
run "$node" "$(table t "$canon/in.csv") SELECT COUNT(*) FROM t;"
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "an absolute path inside --data-dir was refused"; }
echo "ok   an absolute path inside --data-dir reads"
refused "/etc/shadow" /etc/shadow "outside this node's data directory $canon"
refused "an absolute path next to DIR" "$tmp/secret.csv" "outside this node's data directory $canon"
refused "'..'" ../secret.csv "'..' climbs out"
refused "a link out of DIR" out_link.csv "through a symbolic link"
# Read once, then swapped for a link out: refused at the next read.
printf 'gamma\n' > "$DATA/swap.csv"
chmod a+r "$DATA/swap.csv"
run "$node" "$(table t swap.csv) SELECT * FROM t;"
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = gamma ] || { cat "$tmp/out"; fail "swap.csv was not read"; }
rm "$DATA/swap.csv"
ln -s "$tmp/secret.csv" "$DATA/swap.csv"
refused "a file swapped for a link out" swap.csv "through a symbolic link"

# ---- no --data-dir -------------------------------------------------------
start_daemon "$tmp/bare.log"
node="127.0.0.1:$port"
grep -q "may not read or write files here (start with --data-dir" "$tmp/bare.log" ||
  { cat "$tmp/bare.log"; fail "a daemon without --data-dir does not say so"; }
refused "no --data-dir" in.csv "started without --data-dir (start it with \`sluice node --data-dir DIR"

# ---- root, --user ---------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
  grep -q "WARNING: running as root" "$tmp/bare.log" || { cat "$tmp/bare.log"; fail "a daemon running as root does not warn"; }
  echo "ok   running as root: $(grep -m1 -o 'WARNING: running as root[^;]*' "$tmp/bare.log")"
  start_daemon "$tmp/user.log" --data-dir "$DATA" --user nobody
  uid=$(awk '/^Uid:/ {print $2 "," $3}' "/proc/$pid/status")
  [ "$uid" = "$(id -u nobody),$(id -u nobody)" ] || fail "--user nobody: the daemon runs as uid $uid"
  ! grep -q "WARNING: running as root" "$tmp/user.log" || fail "--user nobody: still warns about root"
  node="127.0.0.1:$port"
  run "$node" "$(table t in.csv) SELECT COUNT(*) FROM t;"
  [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "--user nobody: the query failed"; }
  # the process serving the shell ran as nobody too (it read in.csv)
  echo "ok   --user nobody: the daemon and its queries run as uid $uid"
  set +e
  timeout 10 "$SLUICE" node --secret-file "$SECRET" --listen 127.0.0.1:0 --user no-such-user-here > "$tmp/out" 2>&1
  rc=$?
  set -e
  [ "$rc" = 2 ] && grep -q "no such user" "$tmp/out" || { cat "$tmp/out"; fail "an unknown --user did not stop the daemon (status $rc)"; }
  echo "ok   an unknown --user: $(head -1 "$tmp/out")"
else
  echo "skip root and --user: not running as root"
fi

# ---- --max-pending -------------------------------------------------------
start_daemon "$tmp/cap.log" --data-dir "$DATA" --max-pending 4
node="127.0.0.1:$port"
daemon=$pid
# Ten peers that connect and say nothing (each would wait 10 s for it).
for fd in 10 11 12 13 14 15 16 17 18 19; do
  eval "exec $fd<>/dev/tcp/127.0.0.1/$port"
done
for _ in $(seq 50); do
  [ "$(grep -c 'proving the secret already' "$tmp/cap.log" || true)" -ge 5 ] && break
  sleep 0.1
done
n=$(grep -c "refused 127.0.0.1:[0-9]*: 4 connections are proving the secret already" "$tmp/cap.log" || true)
[ "$n" -ge 5 ] || { cat "$tmp/cap.log"; fail "--max-pending 4: $n of the 6 silent peers over the cap refused and logged"; }
waiting=$(pgrep -P "$daemon" | wc -l)
[ "$waiting" -le 4 ] || fail "--max-pending 4: $waiting processes wait for a proof"
echo "ok   --max-pending 4: $waiting wait, the rest refused: $(grep -m1 'proving the secret already' "$tmp/cap.log")"
for fd in 10 11 12 13 14 15 16 17 18 19; do eval "exec $fd>&-"; done
# The silent peers gone, their places are free again.
sleep 0.5
run "$node" "$(table t in.csv) SELECT COUNT(*) FROM t;"
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = 2 ] || { cat "$tmp/out"; fail "after the silent peers left, a good shell was not served"; }
echo "ok   the daemon serves a good shell once they left"
