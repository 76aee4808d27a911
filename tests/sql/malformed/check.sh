#!/bin/sh
# check.sh - the sqllogictest runner refuses records that cannot fail.
#
# Each .test file here is malformed in one way; slt_runner must exit 1 (not
# crash, not pass) and name the file and line of the record with the reason.
#
#   check.sh SLT_RUNNER DIR
runner=$1
dir=$2
fail=0
expect() { # file, line, message
  out=$("$runner" "$dir/$1" 2>&1)
  rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "FAIL $1: exit status $rc, expected 1"; echo "$out"; fail=1
  elif ! printf '%s\n' "$out" | grep -qF "$1:$2: $3"; then
    echo "FAIL $1: no '$1:$2: $3' in:"; echo "$out"; fail=1
  else
    echo "ok   $1"
  fi
}
expect no_expected_block.test 3 "query without expected results"
expect empty_expected_block.test 3 "query without expected results"
expect error_without_message.test 2 "'statement error' without the expected message"
expect no_records.test 2 "the file has no records"
exit $fail
