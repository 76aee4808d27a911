#!/usr/bin/env bash
# peers.sh - Sluice's workloads beside DuckDB and SQLite, on the same
# events and the same cores.
#
#   bench/peers.sh [SLUICE] [EVENTS] [RUNS] [WORKLOAD...]
#                                 (build/sluice 2000000 5, all workloads)
#
# WORKLOADs: ysb (the Yahoo Streaming Benchmark, examples/ysb.sql), cm
# (Cluster Monitoring: AVG(cpu) per job per 2 s window), ro (Read-Only:
# COUNT(*) per key per 1 s window, uniform keys in a range of 1000),
# ro_zipf (the same, zipf keys with exponent 1.5), ro_RANGE[_zZ] (RO over
# RANGE keys, 1k = 1000 and 1m = 2^20 as strategy_sweep's ranges, zipf
# exponent Z or uniform: ro_64m_z1.5), the NEXMark queries q0 q1 q2 q5
# q7 q8 q11 (examples/nexmark, 100000 events/s of event time), and wtop3
# (Flink's window Top-N over NEXMark's bids: the three highest bids of
# each 10 s window).
# Environment: WORKERS (the worker counts, default "2"), PEERS_NO_SQLITE=1
# (skip SQLite), TSV=FILE (append the table's rows to FILE, tab-separated:
#   workload engine threads median min max ratio_to_sluice peak_rss_mib
#   input_mib same
# with engine one of sluice, duckdb, sqlite and "n/a" where unknown),
# KEEP=1 (keep the temporary directory).
#
# For each workload and worker count W:
#   - Sluice exports the events its generator produces (the same seed and
#     options, W workers' split) to CSV through filesystem sink tables,
#     one per table the query reads (NEXMark: the person, auction and bid
#     views);
#   - Sluice runs the streaming query over the same source, pre-generated
#     into memory before the clock starts ('pregenerate'), RUNS times, as
#     EXPLAIN ANALYZE under /usr/bin/time -v: events/s from the plan's Sink
#     line, peak RSS (the largest of the runs), and the input's size (the
#     bytes= of the plan's Source lines, or a staged plan's "leaf input
#     bytes=": the pre-generated events, a copy per leaf; memory beyond
#     the input is peak RSS minus that, shown in parentheses).  The query's rows go INSERT INTO
#     a blackhole table (NEXMark's as written), so turning them into text
#     is not timed (DuckDB's and SQLite's runs do not format rows either;
#     a SELECT to the shell spends ~10 us per row of cm on it).  Then once
#     as a plain SELECT (-m csv) for its rows;
#   - DuckDB (bench/peers: @duckdb/node-api, pinned in package-lock.json,
#     installed here with `npm ci` on first use) loads the CSV into tables
#     (not timed) and runs the equivalent batch SQL with W threads, RUNS
#     times (each run computes the full result into DuckDB's memory);
#     peak RSS is the node process's, input its tables' memory
#     (duckdb_memory()) after the load;
#   - SQLite (sqlite3, one thread, .timer on) loads the same CSV into a
#     database file (timestamps as integer ms, not timed) and runs the
#     batch SQL RUNS times, only at the first worker count of WORKERS
#     (compared with Sluice at that count); input is the file's size.
# The batch SQL: tumbling windows by integer arithmetic on the event time
# in ms (t - t % size), hopping windows (q5) by expanding each bid to its
# 5 windows (a join with 5 offsets), sessions (q11) by LAG over time per
# bidder and a running SUM of "gap > 10 s" flags (a RANGE frame, so bids
# at the same ms share a session whatever order the ties come in).
#
# Events/s is the number of generated events (EVENTS, every event type)
# per second of the query for every engine; Sluice's own figure counts the
# events its source reads after pushed-down filters (NEXMark: often only
# the bids), so it is scaled by EVENTS / (the events its plain run reports).
# Reported: the median of the runs, their spread, the ratio to Sluice at
# that worker count, and whether the peer's rows are Sluice's: the full
# results, normalized (quotes dropped, timestamps to .mmm, trailing zeros of
# decimals dropped), sorted and compared row by row and field by field,
# numbers with a decimal point or exponent with a relative tolerance of
# 1e-9, everything else exactly.  This holds for q0/q1/q2 too, whose results
# are as large as the input (sorting them costs time outside the runs, not
# in them).  The first differing rows go to stderr.
set -euo pipefail
SLUICE=$(realpath "${1:-build/sluice}")
EVENTS=${2:-2000000}
RUNS=${3:-5}
shift $(($# < 3 ? $# : 3))
ALL_WORKLOADS="ysb cm ro ro_zipf q1 q2 q5 q7 q8 q11 q0 wtop3"
read -r -a WORKLOADS <<< "${*:-$ALL_WORKLOADS}"
read -r -a WORKER_COUNTS <<< "${WORKERS:-2}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
PEERS="$SRC/bench/peers"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
# shellcheck source=bench/nexmark_common.sh
. "$SRC/bench/nexmark_common.sh" # nexmark_ddl, median
# shellcheck source=bench/workload_sql.sh
. "$SRC/bench/workload_sql.sh" # ddl, sluice_select, sluice_timed

for wl in "${WORKLOADS[@]}"; do
  [[ $wl =~ ^ro_[0-9]+[km]?(_z[0-9]+(\.[0-9]+)?)?$ ]] && continue
  case " $ALL_WORKLOADS " in *" $wl "*) ;; *) echo "unknown workload '$wl' (one of: $ALL_WORKLOADS, ro_RANGE[_zZ])"; exit 2 ;; esac
done
command -v node >/dev/null || { echo "node is missing (apt-get install nodejs npm)"; exit 1; }
[ -n "${PEERS_NO_SQLITE:-}" ] || command -v sqlite3 >/dev/null ||
  { echo "sqlite3 is missing (apt-get install sqlite3, or PEERS_NO_SQLITE=1)"; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (apt-get install time)"; exit 1; }
if [ ! -d "$PEERS/node_modules/@duckdb/node-api" ]; then
  (cd "$PEERS" && npm ci --no-audit --no-fund > "$tmp/npm.log" 2>&1) ||
    { cat "$tmp/npm.log"; echo "npm ci in bench/peers failed"; exit 1; }
fi
DUCK_VERSION=$(cd "$PEERS" && node -p "require('./node_modules/@duckdb/node-api/package.json').version")

# ---------------------------------------------------------------- workloads

# tables WL: the tables the query reads, one a line: NAME|SLUICE SELECT|COLUMNS
# (Sluice's types; a TIMESTAMP column is the event time in ms for SQLite).
tables() {
  case $1 in
  ysb) cat <<'EOF' ;;
ysb_events|SELECT * FROM ysb_events|user_id STRING, page_id STRING, ad_id STRING, ad_type STRING, event_type STRING, event_time TIMESTAMP(3), ip_address STRING
campaigns|SELECT * FROM campaigns|ad_id STRING, campaign_id STRING
EOF
  cm) cat <<'EOF' ;;
cm|SELECT * FROM cm|ts TIMESTAMP(3), job_id BIGINT, task_id BIGINT, machine_id BIGINT, event_type INT, user_id BIGINT, category INT, priority INT, cpu DOUBLE, ram DOUBLE, disk DOUBLE, constraints INT
EOF
  ro*) echo "ro|SELECT * FROM ro|key BIGINT, ts TIMESTAMP(3)" ;;
  q8) cat <<'EOF' ;;
person|SELECT * FROM person|id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING
auction|SELECT * FROM auction|id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING
EOF
  q*|wtop3) echo "bid|SELECT * FROM bid|auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING" ;;
  esac
}

# batch WL ENGINE (duck | lite): the batch SQL.  Event times are read as ms
# ($(ms COL)), window bounds computed in ms and printed as timestamps
# ($(ts EXPR)); a timestamp column passed through is $(tcol COL).
batch() {
  local E=$2
  ms() { if [ "$E" = duck ]; then echo "epoch_ms($1)"; else echo "$1"; fi; }
  ts() { if [ "$E" = duck ]; then echo "epoch_ms($1)"; else echo "strftime('%Y-%m-%d %H:%M:%f', ($1) / 1000.0, 'unixepoch')"; fi; }
  tcol() { if [ "$E" = duck ]; then echo "$1"; else ts "$1"; fi; }
  local t
  case $1 in
  ysb) t=$(ms e.event_time); cat <<SQL ;;
SELECT campaign_id, $(ts w), $(ts "w + 10000"), n
FROM (SELECT c.campaign_id, $t - $t % 10000 AS w, COUNT(*) AS n
      FROM ysb_events e JOIN campaigns c ON e.ad_id = c.ad_id
      WHERE e.event_type = 'view'
      GROUP BY 1, 2)
SQL
  cm) t=$(ms ts); cat <<SQL ;;
SELECT job_id, $(ts w), $(ts "w + 2000"), a
FROM (SELECT job_id, $t - $t % 2000 AS w, AVG(cpu) AS a FROM cm GROUP BY 1, 2)
SQL
  ro*) t=$(ms ts); cat <<SQL ;;
SELECT key, $(ts w), $(ts "w + 1000"), n
FROM (SELECT key, $t - $t % 1000 AS w, COUNT(*) AS n FROM ro GROUP BY 1, 2)
SQL
  q0) echo "SELECT auction, bidder, price, $(tcol dateTime), extra FROM bid" ;;
  q1) echo "SELECT auction, bidder, 0.908 * price, $(tcol dateTime), extra FROM bid" ;;
  q2) echo "SELECT auction, price FROM bid WHERE auction % 123 = 0" ;;
  q5) t=$(ms dateTime); cat <<SQL ;;
WITH hb AS (SELECT auction, $t - $t % 2000 - 2000 * k.i AS ws
            FROM bid, (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2
                       UNION ALL SELECT 3 UNION ALL SELECT 4) AS k),
     ab AS (SELECT auction, ws, COUNT(*) AS num FROM hb GROUP BY auction, ws),
     mb AS (SELECT ws, MAX(num) AS maxn FROM ab GROUP BY ws)
SELECT ab.auction, ab.num FROM ab JOIN mb ON ab.ws = mb.ws AND ab.num >= mb.maxn
SQL
  q7) t=$(ms dateTime); cat <<SQL ;;
WITH m AS (SELECT MAX(price) AS maxprice, $t - $t % 10000 + 9999 AS rt FROM bid GROUP BY 2)
SELECT b.auction, b.price, b.bidder, $(tcol b.dateTime), b.extra
FROM bid b JOIN m ON b.price = m.maxprice
WHERE $(ms b.dateTime) BETWEEN m.rt - 10000 AND m.rt
SQL
  q8) t=$(ms dateTime); cat <<SQL ;;
WITH p AS (SELECT id, name, $t - $t % 10000 AS w FROM person GROUP BY 1, 2, 3),
     a AS (SELECT seller, $t - $t % 10000 AS w FROM auction GROUP BY 1, 2)
SELECT p.id, p.name, $(ts p.w) FROM p JOIN a ON p.id = a.seller AND p.w = a.w
SQL
  wtop3) t=$(ms dateTime); cat <<SQL ;;
WITH r AS (SELECT auction, bidder, price, $t - $t % 10000 AS w,
                  ROW_NUMBER() OVER (PARTITION BY $t - $t % 10000
                                     ORDER BY price DESC, auction, bidder, $t) AS rn
           FROM bid)
SELECT auction, bidder, price, $(ts w), rn FROM r WHERE rn <= 3
SQL
  q11) cat <<SQL ;;
WITH b AS (SELECT bidder, $(ms dateTime) AS t FROM bid),
     f AS (SELECT bidder, t, CASE WHEN t - LAG(t) OVER (PARTITION BY bidder ORDER BY t) <= 10000
                                  THEN 0 ELSE 1 END AS new FROM b),
     s AS (SELECT bidder, t, SUM(new) OVER (PARTITION BY bidder ORDER BY t) AS sid FROM f)
SELECT bidder, COUNT(*), $(ts "MIN(t)"), $(ts "MAX(t) + 10000") FROM s GROUP BY bidder, sid
SQL
  esac
}

# --------------------------------------------------------------- the peers

# export_sql WL W DIR: Sluice SQL writing WL's tables to DIR/NAME.csv.
export_sql() {
  ddl "$1" "$2" false
  tables "$1" | while IFS='|' read -r name select cols; do
    echo "CREATE TABLE ${name}_csv ($cols) WITH ('connector' = 'filesystem', 'path' = '$3/$name.csv', 'format' = 'csv');"
    echo "INSERT INTO ${name}_csv $select;"
  done
}

# coltype ENGINE TYPE: a Sluice column type in DuckDB or SQLite.
coltype() {
  case $1:$2 in
  duck:STRING) echo VARCHAR ;; duck:TIMESTAMP*) echo TIMESTAMP ;; duck:INT) echo INTEGER ;;
  duck:*) echo "$2" ;;
  lite:STRING) echo TEXT ;; lite:DOUBLE) echo REAL ;; lite:*) echo INTEGER ;;
  esac
}
duck_load() { # WL DIR
  tables "$1" | while IFS='|' read -r name _ cols; do
    local spec=""
    while read -r c t; do spec+="${spec:+, }'$c': '$(coltype duck "$t")'"; done <<< "${cols//, /$'\n'}"
    echo "CREATE TABLE $name AS SELECT * FROM read_csv('$2/$name.csv', header = false, delim = ',',
  quote = '\"', escape = '\"', columns = {$spec});"
  done
}
lite_load() { # WL DIR
  tables "$1" | while IFS='|' read -r name _ cols; do
    local spec="" c t
    while read -r c t; do spec+="${spec:+, }$c $(coltype lite "$t")"; done <<< "${cols//, /$'\n'}"
    echo "CREATE TABLE $name ($spec);"
    echo ".import --csv $2/$name.csv $name"
    while read -r c t; do
      case $t in TIMESTAMP*) echo "UPDATE $name SET $c = unixepoch($c) * 1000 + CAST(substr($c, 21, 3) AS INTEGER);" ;; esac
    done <<< "${cols//, /$'\n'}"
  done
}

# norm FILE: a result's rows in one form (see the header), sorted.
norm() {
  tr -d '"\r' < "$1" | awk -F, -v OFS=, '{
    for (i = 1; i <= NF; i++) {
      f = $i
      if (f ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9]/) {
        sub(/T/, " ", f)
        if (length(f) == 19) f = f "."
        f = substr(f "000", 1, 23)
      } else if (f ~ /^-?[0-9]+\.[0-9]+$/) {
        sub(/0+$/, "", f); sub(/\.$/, "", f)
      }
      $i = f
    }
    print }' | LC_ALL=C sort
}
# same EXPECTED GOT LABEL: "yes (N rows)" or "NO (...)", both normalized.
same() {
  local a b
  a=$(wc -l < "$1"); b=$(wc -l < "$2")
  if [ "$a" != "$b" ]; then
    echo "NO ($a vs $b rows)"
    { echo "$3: $a rows in Sluice's result vs $b; first differences (< Sluice, > peer):"
      diff "$1" "$2" | grep '^[<>]' | head -6; } >&2
    return
  fi
  local bad
  bad=$(paste -d '|' "$1" "$2" | awk -F'|' '
    function num(x) { return x ~ /^-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
    function close_enough(x, y,   d, m) {
      if (x == y) return 1
      if (!num(x) || !num(y) || (x !~ /[.eE]/ && y !~ /[.eE]/)) return 0
      d = x - y; if (d < 0) d = -d
      m = (x < 0 ? -x : x); if ((y < 0 ? -y : y) > m) m = (y < 0 ? -y : y)
      return d <= 1e-9 * m
    }
    { na = split($1, a, ","); nb = split($2, b, ",")
      ok = na == nb
      for (i = 1; ok && i <= na; i++) ok = close_enough(a[i], b[i])
      if (!ok && ++n <= 3) print "< " $1 "\n> " $2 }
    END { if (n) print n " rows differ" }')
  if [ -z "$bad" ]; then echo "yes ($a rows)"
  else
    echo "NO ($(echo "$bad" | tail -1), of $a)"
    printf '%s: rows differ from Sluice (< Sluice, > peer):\n%s\n' "$3" "$bad" >&2
  fi
}

# stats FILE: "median min max" of the numbers in FILE.
stats() { echo "$(median < "$1") $(sort -g "$1" | head -1) $(sort -g "$1" | tail -1)"; }
maxrss_kb() { awk '/Maximum resident set size/ { print $NF }' "$1"; }
mib() { if [ "$1" = n/a ]; then echo n/a; else awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; fi; }

# row WL ENGINE LABEL THREADS RATES SLUICE_MEDIAN PEAK_BYTES INPUT_BYTES SAME:
# one line of the table (and of $TSV).
row() {
  local med lo hi ratio peak input beyond=""
  read -r med lo hi <<< "$(stats "$5")"
  ratio=$(awk -v a="$med" -v b="$6" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
  peak=$(mib "$7"); input=$(mib "$8")
  # SQLite's input is a file, not memory: nothing to subtract.
  [ "$input" = n/a ] || [ "$2" = sqlite ] || beyond=" ($(awk -v p="$7" -v i="$8" 'BEGIN { printf "%.1f", (p - i) / 1048576 }') beyond input)"
  printf '| %s | %s | %s | %.0f | %.0f..%.0f | %s | %s%s | %s | %s |\n' \
    "$1" "$3" "$4" "$med" "$lo" "$hi" "$ratio" "$peak" "$beyond" "$input" "$9"
  if [ -n "${TSV:-}" ]; then
    printf '%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\n' "$1" "$2" "$4" "$med" "$lo" "$hi" \
      "$ratio" "$peak" "$input" "${9%% *}" >> "$TSV"
  fi
}
failed() { # WL LABEL THREADS ERRFILE: a row saying what failed (all n/a in $TSV)
  local engine=${2%% *}
  echo "| $1 | $2 | $3 | failed: $(grep -m1 -iE 'error|fail' "$4" | cut -c1-120 | tr '|' '/') | | | | | |"
  if [ -n "${TSV:-}" ]; then
    printf '%s\t%s\t%s\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\n' "$1" "${engine,,}" "$3" >> "$TSV"
  fi
  { echo "$1, $2, $3: failed:"; sed 's/^/    /' "$4" | head -20; } >&2
}

# run_sluice WL W: the timed runs and the rows; sets S_RATE (median
# events/s, "" if it failed) and leaves $tmp/sluice.rows.
run_sluice() {
  local wl=$1 w=$2 events x bytes peak=0 kb input=n/a
  S_RATE=""
  { ddl "$wl" "$w" true; sluice_select "$wl"; } > "$tmp/plain.sql"
  { ddl "$wl" "$w" true; sluice_timed "$wl"; } > "$tmp/timed.sql"
  (cd "$SRC" && "$SLUICE" -m csv --no-headers "$tmp/plain.sql" > "$tmp/sluice.out" 2> "$tmp/err") ||
    { failed "$wl" Sluice "$w" "$tmp/err"; return; }
  events=$(grep -oE '[0-9]+ events in' "$tmp/err" | tail -1 | cut -d' ' -f1 || true)
  if [ -z "$events" ] || [ "$events" = 0 ]; then failed "$wl" Sluice "$w" "$tmp/err"; return; fi
  norm "$tmp/sluice.out" > "$tmp/sluice.rows"
  : > "$tmp/sluice.r"
  for _ in $(seq "$RUNS"); do
    (cd "$SRC" && /usr/bin/time -v -o "$tmp/time" "$SLUICE" "$tmp/timed.sql" > "$tmp/plan" 2> "$tmp/err") ||
      { failed "$wl" Sluice "$w" "$tmp/err"; return; }
    x=$(grep -m1 '^Sink' "$tmp/plan" | grep -oE 'events/s=[0-9.]+' | cut -d= -f2 || true)
    if [ -z "$x" ]; then # no EXPLAIN ANALYZE for this query: the plain run's summary
      (cd "$SRC" && /usr/bin/time -v -o "$tmp/time" "$SLUICE" -m csv "$tmp/plain.sql" > /dev/null 2> "$tmp/err") ||
        { failed "$wl" Sluice "$w" "$tmp/err"; return; }
      x=$(grep -oE '\([0-9.]+ events/s' "$tmp/err" | tail -1 | tr -d '(' | cut -d' ' -f1)
    else
      # The Source lines' bytes=, or a staged plan's "leaf input bytes=".
      bytes=$(grep -E '^ *Source .*bytes=[0-9]+|leaf input bytes=[0-9]+' "$tmp/plan" |
        grep -oE '(^|[ (])bytes=[0-9]+' | cut -d= -f2 | awk '{ s += $1 } END { if (NR) print s }' || true)
      input=${bytes:-n/a}
    fi
    awk -v x="$x" -v n="$EVENTS" -v e="$events" 'BEGIN { printf "%.0f\n", x * n / e }' >> "$tmp/sluice.r"
    kb=$(maxrss_kb "$tmp/time"); [ "$kb" -le "$peak" ] || peak=$kb
  done
  S_RATE=$(median < "$tmp/sluice.r")
  row "$wl" sluice Sluice "$w" "$tmp/sluice.r" "$S_RATE" $((peak * 1024)) "$input" "n/a"
}

run_duckdb() { # WL W DIR
  duck_load "$1" "$3" > "$tmp/load.sql"
  batch "$1" duck > "$tmp/duck.sql"
  rm -f "$tmp/duck.out"
  /usr/bin/time -v -o "$tmp/time" node "$PEERS/duckdb_query.mjs" "$2" "$RUNS" "$tmp/duck.out" \
    "$tmp/load.sql" "$tmp/duck.sql" > "$tmp/duck.log" 2> "$tmp/err" ||
    { failed "$1" "DuckDB $DUCK_VERSION" "$2" "$tmp/err"; return; }
  awk -v n="$EVENTS" '$1 == "run_s" { printf "%.0f\n", n / $2 }' "$tmp/duck.log" > "$tmp/duck.r"
  norm "$tmp/duck.out" > "$tmp/duck.rows"
  row "$1" duckdb "DuckDB $DUCK_VERSION" "$2" "$tmp/duck.r" "$S_RATE" $(($(maxrss_kb "$tmp/time") * 1024)) \
    "$(awk '$1 == "input_bytes" { print $2 }' "$tmp/duck.log")" "$(same "$tmp/sluice.rows" "$tmp/duck.rows" "$1 DuckDB $2")"
}

run_sqlite() { # WL W DIR
  local kb peak=0
  rm -f "$tmp/lite.db"
  lite_load "$1" "$3" | sqlite3 "$tmp/lite.db" 2> "$tmp/err" || { failed "$1" "SQLite" 1 "$tmp/err"; return; }
  : > "$tmp/lite.r"
  for _ in $(seq "$RUNS"); do
    printf '.mode csv\n.timer on\n%s;\n' "$(batch "$1" lite)" |
      /usr/bin/time -v -o "$tmp/time" sqlite3 "$tmp/lite.db" > "$tmp/lite.out" 2> "$tmp/err" ||
      { failed "$1" SQLite 1 "$tmp/err"; return; }
    grep -o "^Run Time: real [0-9.]*" "$tmp/lite.out" | awk -v n="$EVENTS" '{ printf "%.0f\n", n / $4 }' >> "$tmp/lite.r"
    kb=$(maxrss_kb "$tmp/time"); [ "$kb" -le "$peak" ] || peak=$kb
  done
  grep -v "^Run Time" "$tmp/lite.out" > "$tmp/lite.csv"
  norm "$tmp/lite.csv" > "$tmp/lite.rows"
  row "$1" sqlite "SQLite $(sqlite3 --version | cut -d' ' -f1)" 1 "$tmp/lite.r" "$S_RATE" $((peak * 1024)) \
    "$(stat -c %s "$tmp/lite.db")" "$(same "$tmp/sluice.rows" "$tmp/lite.rows" "$1 SQLite")"
}

# ---------------------------------------------------------------- the runs

echo "Sluice vs DuckDB and SQLite: $EVENTS events per workload, median of $RUNS runs, workers: ${WORKER_COUNTS[*]}"
echo
echo "| workload | engine | workers / threads | events/s (median) | spread (min..max) | x Sluice | peak RSS MiB | input MiB | same rows as Sluice |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for wl in "${WORKLOADS[@]}"; do
  for w in "${WORKER_COUNTS[@]}"; do
    dir="$tmp/$wl.$w"
    mkdir -p "$dir"
    export_sql "$wl" "$w" "$dir" > "$dir/export.sql"
    (cd "$SRC" && "$SLUICE" "$dir/export.sql" > /dev/null 2> "$tmp/err") ||
      { failed "$wl" "Sluice (export)" "$w" "$tmp/err"; continue; }
    run_sluice "$wl" "$w"
    [ -n "$S_RATE" ] || continue
    run_duckdb "$wl" "$w" "$dir"
    if [ -z "${PEERS_NO_SQLITE:-}" ] && [ "$w" = "${WORKER_COUNTS[0]}" ]; then
      run_sqlite "$wl" "$w" "$dir"
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
  done
done
