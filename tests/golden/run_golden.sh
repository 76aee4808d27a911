#!/usr/bin/env bash
# run_golden.sh - golden tests of what `sluice` prints: every CASE.sql in
# this directory is run and its stdout+stderr, followed by a line
# "[exit status N]", must equal CASE.expected byte for byte.
#
#   run_golden.sh path/to/sluice [--update] [CASE ...]
#
# With no CASE, runs them all.  --update rewrites the .expected files from
# the current output: read every changed file (git diff) before committing.
#
# A case is run from this directory as `sluice [ARGS] CASE.sql`, so error
# messages name the file as a user would see it.  Comment lines at the top
# of a case adjust how it runs:
#   -- args: --no-bail -m table    extra command-line arguments
#   -- stdin                       pipe the file into sluice instead
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 path/to/sluice [--update] [CASE ...]" >&2
  exit 2
fi
SLUICE=$(realpath "$1")
shift
UPDATE=0
if [ "${1:-}" = "--update" ]; then
  UPDATE=1
  shift
fi
DIR=$(cd "$(dirname "$0")" && pwd)
cd "$DIR" || exit 2

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for f in *.sql; do
    cases+=("${f%.sql}")
  done
fi

# Run one case; its output (with the exit status) on stdout.
run_case() {
  local name=$1 args="" stdin=0 line
  while IFS= read -r line; do
    case "$line" in
    "-- args:"*) args=${line#-- args:} ;;
    "-- stdin"*) stdin=1 ;;
    --*) ;;
    *) break ;;
    esac
  done <"$name.sql"
  local status
  # Same environment every time: no terminal, no history, C sort order.
  if [ $stdin -eq 1 ]; then
    # shellcheck disable=SC2086
    env LC_ALL=C.UTF-8 SLUICE_HISTORY= "$SLUICE" $args <"$name.sql" 2>&1
    status=$?
  else
    # shellcheck disable=SC2086
    env LC_ALL=C.UTF-8 SLUICE_HISTORY= "$SLUICE" $args "$name.sql" \
      </dev/null 2>&1
    status=$?
  fi
  echo "[exit status $status]"
}

failed=0
for name in "${cases[@]}"; do
  if [ ! -f "$name.sql" ]; then
    echo "no such case: $name.sql" >&2
    failed=1
    continue
  fi
  actual=$(mktemp)
  run_case "$name" >"$actual"
  if [ $UPDATE -eq 1 ]; then
    if ! cmp -s "$actual" "$name.expected"; then
      cp "$actual" "$name.expected"
      echo "updated $name.expected"
    fi
  elif [ ! -f "$name.expected" ]; then
    echo "FAIL $name: no $name.expected (run with --update, then review it)"
    cat "$actual"
    failed=1
  elif ! diff -u --label "$name.expected" --label "actual output" \
    "$name.expected" "$actual"; then
    echo "FAIL $name"
    failed=1
  else
    echo "ok   $name"
  fi
  rm -f "$actual"
done
exit $failed
