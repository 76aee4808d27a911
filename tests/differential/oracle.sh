# oracle.sh - what the differential scripts share (sourced, not run): the
# oracle's expected rows from sqlite3 and the comparison with Sluice's.
# The caller keeps the counters `passed` and `fail`.

# oracle_rows DB QUERY OUT: sqlite3's rows of QUERY, sorted, into OUT;
# fmt(x) in QUERY turns a time in ms since the epoch into
# 'yyyy-MM-dd HH:mm:ss.SSS' as Sluice prints it.  (sqlite3 quotes values
# with spaces; Sluice does not need to: rows are compared without quotes,
# and no value here contains one.)  Fails when the oracle has no rows.
oracle_rows() {
  local q
  q=$(printf '%s' "$2" | sed -E "s/fmt\(([^()]*(\([^()]*\))?[^()]*)\)/(strftime('%Y-%m-%d %H:%M:%S', (\1) \/ 1000, 'unixepoch') || printf('.%03d', (\1) % 1000))/g")
  sqlite3 -csv "$1" "$q" | tr -d '"' | sort > "$3"
  [ -s "$3" ]
}

# compare_rows NAME WHAT EXPECTED GOT: count and report one comparison.
compare_rows() {
  if cmp -s "$3" "$4"; then
    passed=$((passed + 1))
    echo "ok   $1 ($2): $(wc -l < "$3") rows equal"
  else
    fail=$((fail + 1))
    echo "FAIL $1 ($2): results differ (< sqlite3, > sluice):"
    diff "$3" "$4" | head -10 || true
  fi
}
