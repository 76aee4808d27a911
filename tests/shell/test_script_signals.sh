#!/usr/bin/env bash
# test_script_signals.sh - a script's output is never lost:
#   1. SIGTERM during a streaming INSERT into a CSV directory: exit 143, a
#      message on stderr, the rows written so far in a finished part file
#      and no part in progress left behind;
#   2. SIGINT during a SELECT printed to a file: exit 130, a message, the
#      rows printed so far in the file;
#   3. a slow query's rows reach a pipe while it runs (not only when
#      stdio's buffer is full or the query ends);
#   4. kill -9 during a streaming INSERT with small parts: every visible
#      part is whole, a reader reads them all.
# Waits are generous bounds (a working build needs about a second; a
# broken one never gets there).
#
#   test_script_signals.sh SLUICE
set -euo pipefail
set -m # background jobs in their own process group: SIGINT not ignored
SLUICE=$1
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }

SEQ="CREATE TABLE seq (n BIGINT) WITH ('connector' = 'datagen',
       'rows-per-second' = '500', 'fields.n.kind' = 'sequence',
       'fields.n.start' = '1', 'fields.n.end' = '100000000');"

# wait_for SECONDS COMMAND...: until COMMAND succeeds (1 if it never does).
wait_for() {
  local until=$(($(date +%s) + $1))
  shift
  while ! "$@"; do
    [ "$(date +%s)" -lt "$until" ] || return 1
    sleep 0.1
  done
}
visible_parts() { ls "$1" 2>/dev/null | grep -c '^part-' || true; }
hidden_files() { ls -A "$1" 2>/dev/null | grep -c '^\.' || true; }
has_hidden() { [ "$(hidden_files "$1")" -gt 0 ]; }
has_parts() { [ "$(visible_parts "$1")" -ge "$2" ]; }
has_lines() { [ -s "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]; }
# Every visible part ends with a line break and holds only numbers.
parts_whole() {
  local f
  for f in "$1"/part-*; do
    [ -s "$f" ] || return 1
    [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || return 1
    ! grep -qvE '^[0-9]+$' "$f" || return 1
  done
}

# ---- 1. SIGTERM during a streaming INSERT ---------------------------------
out=$tmp/out1
"$SLUICE" -c "$SEQ
  CREATE TABLE sink (n BIGINT) WITH ('connector' = 'filesystem',
    'path' = '$out', 'format' = 'csv');
  INSERT INTO sink SELECT n FROM seq;
  SELECT 'not reached';" > "$tmp/stdout" 2> "$tmp/err" &
pid=$!
wait_for 30 has_hidden "$out" || fail "no part in progress appeared"
sleep 0.5
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=
[ "$rc" = 143 ] || fail "SIGTERM: exit status $rc, not 143"
grep -q "stopped by SIGTERM" "$tmp/err" || fail "SIGTERM: no message"
grep -q "SIGTERM cancelled the statement at line 6" "$tmp/err" ||
  fail "SIGTERM: the message does not name the statement"
! grep -q "not reached" "$tmp/stdout" || fail "SIGTERM: the script went on"
[ "$(hidden_files "$out")" = 0 ] || fail "SIGTERM: a part in progress is left"
has_parts "$out" 1 || fail "SIGTERM: the rows written are not in a part"
parts_whole "$out" || fail "SIGTERM: a part is not whole"
rows=$(cat "$out"/part-* | wc -l)
[ "$rows" -gt 0 ] || fail "SIGTERM: no rows kept"
echo "ok   SIGTERM during a streaming INSERT: exit 143, $rows rows in a finished part"

# ---- 2. SIGINT during a SELECT printed to a file --------------------------
"$SLUICE" -m csv --no-headers -c "$SEQ SELECT n FROM seq;" \
  > "$tmp/rows" 2> "$tmp/err" &
pid=$!
wait_for 30 has_lines "$tmp/rows" 1 || fail "SIGINT: no row printed"
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=
[ "$rc" = 130 ] || fail "SIGINT: exit status $rc, not 130"
grep -q "stopped by SIGINT" "$tmp/err" || fail "SIGINT: no message"
[ "$(tail -c 1 "$tmp/rows" | od -An -c | tr -d ' ')" = '\n' ] ||
  fail "SIGINT: the last row printed is cut"
echo "ok   SIGINT during a SELECT: exit 130, $(wc -l < "$tmp/rows") rows printed"

# ---- 3. a slow query's rows reach a pipe while it runs --------------------
slow="CREATE TABLE slow (n BIGINT) WITH ('connector' = 'datagen',
  'rows-per-second' = '5', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '1000');
SELECT n FROM slow;"
start=$(date +%s)
# head ends after three rows; the query would run for 200 s.
got=$(timeout 60 bash -c '"$1" -m csv --no-headers -c "$2" 2>/dev/null | head -n 3' \
  _ "$SLUICE" "$slow" | tr '\n' ' ' || true)
took=$(($(date +%s) - start))
[[ "$got" =~ ^([0-9]+\ ){3}$ ]] || fail "pipe: got '$got' from a slow query, not three rows"
[ "$took" -le 20 ] || fail "pipe: the first rows took $took s"
echo "ok   a slow query's first rows reached the pipe in $took s"

# ---- 4. kill -9 during a streaming INSERT ---------------------------------
out=$tmp/out4
"$SLUICE" -c "$SEQ
  CREATE TABLE sink (n BIGINT) WITH ('connector' = 'filesystem',
    'path' = '$out', 'format' = 'csv',
    'sink.rolling-policy.file-size' = '2kb');
  INSERT INTO sink SELECT n FROM seq;" > /dev/null 2> "$tmp/err" &
pid=$!
wait_for 30 has_parts "$out" 3 || fail "kill -9: no finished parts appeared"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
parts_whole "$out" || fail "kill -9: a visible part is not whole"
rows=$(cat "$out"/part-* | wc -l)
dups=$(cat "$out"/part-* | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "kill -9: $dups rows twice"
read_back=$("$SLUICE" -m csv --no-headers -c "CREATE TABLE sink (n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$out', 'format' = 'csv');
  SELECT COUNT(*) FROM sink;" 2> "$tmp/err")
[ "$read_back" = "$rows" ] ||
  fail "kill -9: a reader counts $read_back rows, the visible parts hold $rows"
echo "ok   kill -9 during a streaming INSERT: $(visible_parts "$out") whole parts, $rows rows read back, $(hidden_files "$out") hidden file(s) in progress"
