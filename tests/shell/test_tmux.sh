#!/usr/bin/env bash
# test_tmux.sh - drives the interactive `sluice` in a real terminal (tmux)
# and checks what a user would see on the screen.
#
#   tests/shell/test_tmux.sh path/to/sluice
#
# Covers: banner, multi-line statement with the continuation prompt, SHOW
# TABLES listing a created table, a syntax error with its caret line,
# .mode csv, Tab completion of a table name, Ctrl-C clearing the input,
# Ctrl-C cancelling a query (in one process, and on two node processes,
# whose progress line counts the nodes' events and windows and whose
# table output shows each fired window's rows before Ctrl-C),
# Ctrl-D exiting with status 0, an updating result redrawn in place (and
# its changelog mode), and history persisting (a multi-line statement
# recalled with Up in a second session).
#
# Every step waits for the expected text with a timeout (no fixed sleeps);
# on failure it prints what was expected and the whole screen.  Uses a
# private tmux socket and a temporary HOME/SLUICE_HISTORY; the tmux server
# is always killed at the end.  Exit 77 (ctest: skipped) without tmux.
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/sluice" >&2
  exit 2
fi
SLUICE=$(realpath "$1")
if ! command -v tmux >/dev/null 2>&1; then
  echo "tmux is not installed: skipping (sudo apt-get install tmux)"
  exit 77
fi

TMP=$(mktemp -d)
SOCKET="sluice-test-$$"
HISTFILE_PATH="$TMP/history"
TIMEOUT=${SLUICE_TEST_TIMEOUT:-15}
FAILED=0

tm() { tmux -L "$SOCKET" "$@"; }
# shellcheck disable=SC2317 # (called by the trap)
cleanup() {
  tm kill-server >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/home"

# Start sluice in a fresh 120x40 session named $1.  The wrapper keeps the
# pane alive after sluice exits and shows its exit status.
start() {
  MARK=1
  tm kill-session -t "$1" >/dev/null 2>&1
  tm new-session -d -s "$1" -x 120 -y 40 \
    "env HOME='$TMP/home' SLUICE_HISTORY='$HISTFILE_PATH' '$SLUICE';
     echo \"[sluice exited with status \$?]\"; sleep 600"
}

# The whole pane (scrollback included) without the blank lines below the
# cursor.
screen() {
  tm capture-pane -p -S - -t "$1" |
    awk '{ line[NR] = $0 }
         END { n = NR; while (n > 0 && line[n] ~ /^ *$/) n--
               for (i = 1; i <= n; i++) print line[i] }'
}

# mark SESSION: checks after this look only at what appears from the
# current line (the prompt about to be typed on) onwards, so output of
# earlier steps can never satisfy them.
MARK=1
mark() { MARK=$(screen "$1" | wc -l); [ "$MARK" -ge 1 ] || MARK=1; }
since_mark() { screen "$1" | tail -n +"$MARK"; }

fail() {
  echo "FAIL: $2"
  echo "---- screen of session $1 (from line $MARK) ----"
  since_mark "$1"
  echo "------------------------------"
  FAILED=1
}

# wait_for SESSION EXTENDED-REGEX DESCRIPTION: poll until a line after the
# mark matches, or fail after $TIMEOUT seconds.
wait_for() {
  local deadline=$((SECONDS + TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    if since_mark "$1" | grep -Eq -- "$2"; then
      return 0
    fi
    sleep 0.1
  done
  fail "$1" "expected $3 (a line matching /$2/)"
  return 1
}

# wait_prompt SESSION PROMPT-REGEX: a new prompt (after the marked line) is
# the last line (capture-pane drops trailing blanks, so the regex has none).
wait_prompt() {
  local deadline=$((SECONDS + TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    local out
    out=$(since_mark "$1")
    if [ "$(printf '%s\n' "$out" | wc -l)" -ge 2 ] &&
      printf '%s\n' "$out" | tail -n 1 | grep -Eq -- "^$2\$"; then
      return 0
    fi
    sleep 0.1
  done
  fail "$1" "expected a new prompt '$2' on the last line"
  return 1
}

# tmux reads an argument ending in ';' as a command separator: escape it.
keys() { # SESSION TEXT: type TEXT literally
  local text="$2"
  if [[ $text == *';' ]]; then
    text="${text%;}\\;"
  fi
  tm send-keys -t "$1" -l "$text"
}

type_line() { # SESSION TEXT: mark, type TEXT and press Enter
  mark "$1"
  keys "$1" "$2"
  tm send-keys -t "$1" Enter
}

# ---- Session 1 ----
S=one
start $S
wait_for $S 'Enter "\.help" for usage hints' "the welcome banner"
wait_for $S '^sluice>$' "the prompt"

# A statement over two lines: the continuation prompt, then it runs.
type_line $S "CREATE TABLE clickstream (a INT)"
wait_prompt $S '   \.\.\.>'
type_line $S "WITH ('connector'='datagen');"
wait_prompt $S 'sluice>'

type_line $S "SHOW TABLES;"
wait_for $S '^\| clickstream +\|$' "SHOW TABLES to list clickstream in a table"
wait_prompt $S 'sluice>'

# A syntax error points at the spot with carets; the shell carries on.
type_line $S "CREATE TABEL oops (a INT);"
wait_for $S '^Error: line 1, column [0-9]+: ' "an error message with a position"
wait_for $S '^  CREATE TABEL oops \(a INT\);$' "the offending line echoed"
wait_for $S '^ +\^+$' "a caret line under the error"
wait_prompt $S 'sluice>'

# .mode csv changes the output.
type_line $S ".mode csv"
wait_prompt $S 'sluice>'
type_line $S "SHOW TABLES;"
wait_for $S '^table name$' "the csv header of SHOW TABLES"
wait_for $S '^clickstream$' "the csv row of SHOW TABLES"
wait_prompt $S 'sluice>'

# Tab completes a table name after DESCRIBE.
mark $S
keys $S "DESCRIBE click"
tm send-keys -t $S Tab
wait_for $S '^sluice> DESCRIBE clickstream$' "Tab to complete 'click' to 'clickstream'"
keys $S ";"
tm send-keys -t $S Enter
wait_prompt $S 'sluice>'

# Ctrl-C discards a half-typed statement: the next one runs on its own.
type_line $S "SHOW"
wait_prompt $S '   \.\.\.>'
mark $S
tm send-keys -t $S C-c
wait_prompt $S 'sluice>'
type_line $S ".mode table"
wait_prompt $S 'sluice>'
type_line $S "SHOW TABLES;"
wait_for $S '^\| clickstream +\|$' "SHOW TABLES to run after Ctrl-C"
wait_prompt $S 'sluice>'
if since_mark $S | grep -q '^Error'; then
  fail $S "no error: Ctrl-C should have discarded the 'SHOW' typed before"
fi

# A running query over an unbounded stream shows a progress line on the
# terminal, and Ctrl-C cancels it: an error, then the prompt again, and the
# shell goes on.
type_line $S "CREATE TABLE endless (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'ro', 'key.range' = '1000');"
wait_prompt $S 'sluice>'
type_line $S "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE endless, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end HAVING COUNT(*) < 0;"
wait_for $S 'events in [0-9.]+ s \([0-9]+ events/s\), watermark 2015-' "a progress line while the query runs"
tm send-keys -t $S C-c
wait_for $S '^Error: query cancelled' "Ctrl-C to cancel the running query"
wait_prompt $S 'sluice>'
type_line $S "SHOW TABLES;"
wait_for $S '^\| endless +\|$' "the shell to go on after a cancelled query"
wait_prompt $S 'sluice>'

# The same on two node processes: Ctrl-C cancels the query on every node
# (CANCEL, then the SYNC round trip), and both nodes are healthy after.
type_line $S "SET 'sluice.nodes' = '2';"
wait_prompt $S 'sluice>'
mark $S
type_line $S "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE endless, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end HAVING COUNT(*) < 0;"
# (The nodes' events and windows: it said 0 of each before issue 27.)
wait_for $S '^[1-9][0-9]* events in [0-9.]+ s \([0-9]+ events/s\), watermark 2015-[^,]*, [1-9][0-9]* windows fired' "a progress line with the nodes' events and windows while the query runs on two nodes"
tm send-keys -t $S C-c
wait_for $S '^Error: query cancelled' "Ctrl-C to cancel the query on two nodes"
wait_prompt $S 'sluice>'
# Table mode on two nodes prints each fired window's rows as they come, as
# on one process (it showed none until Ctrl-C before issue 27).
mark $S
type_line $S "SELECT key, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE endless, DESCRIPTOR(ts), INTERVAL '1' SECOND)) WHERE key = 7 GROUP BY key, window_start, window_end;"
wait_for $S '^\| +7 \| +[0-9]+ \|$' "a fired window's row on two nodes before Ctrl-C"
tm send-keys -t $S C-c
wait_for $S '^Error: query cancelled' "Ctrl-C to cancel the windowed query on two nodes"
wait_prompt $S 'sluice>'
mark $S
type_line $S ".nodes"
wait_for $S '^channels between nodes' "the .nodes listing"
wait_prompt $S 'sluice>'
# (Lines wrap at the pane's 120 columns: count the health words.)
healthy=$(since_mark $S | grep -c ' healthy$')
[ "$healthy" -eq 2 ] || fail $S "both nodes healthy after Ctrl-C, not $healthy"
type_line $S "SET 'sluice.nodes' = '1';"
wait_prompt $S 'sluice>'

# An updating result (GROUP BY without a window) in the default 'table'
# result mode: one table, redrawn in place as the counts change (never a
# second copy below it); Ctrl-C leaves the last state on the screen.
type_line $S "SELECT key % 3 AS b, COUNT(*) AS n FROM endless GROUP BY key % 3;"
wait_for $S '^\| +b +\| +n +\|$' "the updating result as a table"
wait_for $S '^\| +0 +\| +[0-9]+ +\|$' "the row of group 0"
first=$(since_mark $S | grep -E '^\| +0 +\| +[0-9]+ +\|$' | tail -n 1)
deadline=$((SECONDS + TIMEOUT))
while [ $SECONDS -lt $deadline ] &&
  [ "$(since_mark $S | grep -E '^\| +0 +\| +[0-9]+ +\|$' | tail -n 1)" = "$first" ]; do
  sleep 0.1
done
if [ "$(since_mark $S | grep -E '^\| +0 +\| +[0-9]+ +\|$' | tail -n 1)" = "$first" ]; then
  fail $S "the table to be redrawn with a new count for group 0"
fi
headers=$(since_mark $S | grep -cE '^\| +b +\| +n +\|$')
[ "$headers" -eq 1 ] || fail $S "one table redrawn in place, not $headers"
tm send-keys -t $S C-c
wait_for $S '^Error: query cancelled' "Ctrl-C to cancel the updating query"
wait_prompt $S 'sluice>'
headers=$(since_mark $S | grep -cE '^\| +b +\| +n +\|$')
[ "$headers" -eq 1 ] || fail $S "the last state shown once after Ctrl-C, not $headers tables"

# The 'changelog' result mode shows each change with its kind.
type_line $S "SET 'sql-client.execution.result-mode' = 'changelog';"
wait_prompt $S 'sluice>'
type_line $S "SELECT key % 3 AS b, COUNT(*) AS n FROM endless GROUP BY key % 3;"
wait_for $S '^\| +op +\| +b +\| +n +\|$' "the op column of the changelog"
wait_for $S '^\| +-U +\| +[0-2] +\| +[0-9]+ +\|$' "a -U row"
tm send-keys -t $S C-c
wait_for $S '^Error: query cancelled' "Ctrl-C to cancel the changelog query"
wait_prompt $S 'sluice>'
type_line $S "RESET 'sql-client.execution.result-mode';"
wait_prompt $S 'sluice>'

# A multi-line statement, to be recalled from history in session 2.
type_line $S "SHOW"
wait_prompt $S '   \.\.\.>'
keys $S "TABLES;"
tm send-keys -t $S Enter
wait_prompt $S 'sluice>'

# Ctrl-D exits cleanly.
mark $S
tm send-keys -t $S C-d
wait_for $S '^\[sluice exited with status 0\]$' "Ctrl-D to exit with status 0"

# ---- Session 2: history ----
if [ ! -s "$HISTFILE_PATH" ]; then
  echo "FAIL: no history file written at SLUICE_HISTORY"
  FAILED=1
fi
S=two
start $S
wait_for $S '^sluice>$' "the prompt"
mark $S
tm send-keys -t $S Up
wait_for $S '^sluice> SHOW$' "Up to recall the first line of the last statement"
wait_for $S '^TABLES;$' "Up to recall the second line of the last statement"
tm send-keys -t $S Enter
wait_for $S '^\| *table name *\|$' "the recalled statement to run"
wait_prompt $S 'sluice>'
mark $S
tm send-keys -t $S C-d
wait_for $S '^\[sluice exited with status 0\]$' "Ctrl-D to exit with status 0"

if [ $FAILED -ne 0 ]; then
  echo "test_tmux: FAILED"
  exit 1
fi
echo "test_tmux: all checks passed"
exit 0
