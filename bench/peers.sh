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
#   input_mib same median_with_setup rows_to worker_threads
# with engine one of sluice, duckdb, sqlite, rows_to one of discarded,
# csv, worker_threads the threads the engine ran its work on (Sluice: its
# plan's workers summed over the leaves, which a staged plan runs at the
# same time; a peer: threads), and "n/a" where unknown), KEEP=1 (keep the
# temporary directory), PEERS_COLD=1 (Sluice's runs each in a process of its own, see below).
#
# For each workload and worker count W:
#   - Sluice exports the events its generator produces (the same seed and
#     options, W workers' split) to CSV through filesystem sink tables,
#     one per table the query reads (NEXMark: the person, auction and bid
#     views);
#   - Sluice runs the streaming query over the same source, pre-generated
#     into memory before the clock starts ('pregenerate'), RUNS times, as
#     EXPLAIN ANALYZE under /usr/bin/time -v: one after the other in one
#     process, as DuckDB's runs are (PEERS_COLD=1: each in a process of
#     its own, so that every run starts with no memory of its own;
#     the CSV file rows always do).  The query's rows go INSERT
#     INTO a blackhole table (NEXMark's as written): counted and discarded,
#     never turned into text.  From the plan's Sink line: the run's time
#     (wall time, from the first record to the last, as events/s) and its
#     setup (setup=: planning, JIT compiling and starting the workers; the
#     sources' opening, where the input is pre-generated, is not in it, as
#     DuckDB's table load is not in DuckDB's).  Also peak RSS (the largest
#     of the runs) and the input's size (the bytes= of the plan's Source
#     lines, or a staged plan's "leaf input bytes=": the pre-generated
#     events, a copy per leaf; memory beyond the input is peak RSS minus
#     that, shown in parentheses).  A query EXPLAIN ANALYZE cannot run is
#     timed by its plain run's summary instead, its setup unknown (n/a).
#     Then once as a plain SELECT (-m csv) for its rows;
#   - DuckDB (bench/peers: @duckdb/node-api, pinned in package-lock.json,
#     installed here with `npm ci` on first use) loads the CSV into tables
#     (not timed), then RUNS times with W threads prepares the equivalent
#     batch SQL (setup: parsing, binding, optimizing, planning) and runs
#     the prepared statement twice: as a streaming result whose chunks are
#     fetched and discarded (rows counted, none converted to JavaScript, as
#     a blackhole's), and materialized inside DuckDB; the run's time is the
#     faster of the two (fetching chunk by chunk costs a round trip through
#     Node per 2048 rows, which for results of millions of rows is the
#     client's cost, not DuckDB's); the rows are then written once (not
#     timed) for the comparison; peak RSS is the node process's, input its
#     tables' memory (duckdb_memory()) after the load;
#   - q0, q1 and q2, whose results are as large as their input, have a
#     second pair of rows where both engines write the rows to a CSV file
#     in the same temporary directory, deleted before each run (each
#     engine's runs in a process of their own): Sluice the timed SQL above
#     with the blackhole sink table replaced by a 'filesystem' one
#     ('format' = 'csv'; the wall time ends at the last row written, the
#     file's closing and renaming follow), DuckDB COPY (query) TO 'FILE'
#     (FORMAT csv, HEADER false), prepared (setup) then run;
#   - SQLite (sqlite3, one thread, .timer on) loads the same CSV into a
#     database file (timestamps as integer ms, not timed) and runs the
#     batch SQL RUNS times, only at the first worker count of WORKERS
#     (compared with Sluice at that count), its shell writing the rows as
#     CSV to a file (stdout): "CSV file", compared with Sluice's CSV row
#     where there is one (q0, q1, q2), else with the discarded one (the
#     other results are small).  .timer covers preparing the statement too:
#     both of its rates include setup.  Input is the database file's size.
# The batch SQL: tumbling windows by integer arithmetic on the event time
# in ms (t - t % size), hopping windows (q5) by expanding each bid to its
# 5 windows (a join with 5 offsets), sessions (q11) by LAG over time per
# bidder and a running SUM of "gap > 10 s" flags (a RANGE frame, so bids
# at the same ms share a session whatever order the ties come in).
#
# Events/s is the number of generated events (EVENTS, every event type)
# per second of the run alone (setup excluded; SQLite's includes it, see
# above) for every engine; Sluice's own figure counts the events its
# source reads after pushed-down filters (NEXMark: often only the bids),
# so it is scaled by EVENTS / (the events its plain run reports).  "Events/s with setup" is EVENTS / (run + setup)
# per run.  Reported: where the rows went (discarded or a CSV file), the
# median of the runs, their spread, the ratio to Sluice's row of the same
# kind (discarded or CSV file) at that worker count, both without and with
# setup, and whether the rows are Sluice's: the full results, normalized
# (quotes dropped, timestamps to .mmm, trailing zeros of decimals dropped),
# sorted and compared row by row and field by field, numbers with a
# decimal point or exponent with a relative tolerance of 1e-9, everything
# else exactly.  This holds for q0/q1/q2 too, whose results are as large as
# the input (sorting them costs time outside the runs, not in them); a CSV
# row compares the file its last run wrote (Sluice's too, with its plain
# SELECT's rows), and DuckDB's discarded row also the rows it streamed
# with its result's.  The first differing rows go to stderr.
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
# median_na FILE: the median of FILE's numbers, n/a if any is n/a or none.
median_na() { if [ -s "$1" ] && ! grep -q n/a "$1"; then median < "$1"; else echo n/a; fi; }
maxrss_kb() { awk '/Maximum resident set size/ { print $NF }' "$1"; }
mib() { if [ "$1" = n/a ]; then echo n/a; else awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "n/a" && b != "n/a" && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
whole() { if [ "$1" = n/a ]; then echo n/a; else printf '%.0f' "$1"; fi; }
where() { if [ "$1" = csv ]; then echo "CSV file"; else echo discarded; fi; }

# plan_threads PLAN K: the worker threads one of the K plans in PLAN ran
# (its Pipeline lines' "N workers" summed): a staged plan runs each leaf
# on workers of its own at the same time, so at 1 worker q7 runs 2.
plan_threads() {
  grep -E '^ *Pipeline \[' "$1" | grep -oE '[0-9]+ workers?,' | cut -d' ' -f1 |
    awk -v k="$2" '{ s += $1 } END { if (NR && k > 0) printf "%.0f\n", s / k }' || true
}

# row WL ENGINE LABEL THREADS TO RATES SETUP_RATES REF REF_SETUP PEAK_BYTES
#     INPUT_BYTES SAME [RAN]: one line of the table (and of $TSV).  TO is
# where the rows went (discarded, csv); RATES and SETUP_RATES files of the
# runs' events/s without and with setup; REF and REF_SETUP the medians of
# Sluice's row of the same kind, which the ratios are to; RAN the worker
# threads the engine ran (THREADS if not given), shown beside THREADS
# when they differ and the TSV's 13th column.
row() {
  local med lo hi med_s ratio ratio_s peak input beyond="" ran=${13:-$4} shown=$4
  [ "$ran" = "$4" ] || shown="$4 ($ran worker threads)"
  read -r med lo hi <<< "$(stats "$6")"
  med_s=$(median_na "$7")
  ratio=$(ratio "$med" "$8"); ratio_s=$(ratio "$med_s" "$9")
  peak=$(mib "${10}"); input=$(mib "${11}")
  # SQLite's input is a file, not memory: nothing to subtract.
  [ "$input" = n/a ] || [ "$2" = sqlite ] || beyond=" ($(awk -v p="${10}" -v i="${11}" 'BEGIN { printf "%.1f", (p - i) / 1048576 }') beyond input)"
  printf '| %s | %s | %s | %s | %.0f | %.0f..%.0f | %s | %s | %s | %s%s | %s | %s |\n' \
    "$1" "$3" "$(where "$5")" "$shown" "$med" "$lo" "$hi" "$ratio" "$(whole "$med_s")" "$ratio_s" \
    "$peak" "$beyond" "$input" "${12}"
  if [ -n "${TSV:-}" ]; then
    printf '%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$4" "$med" "$lo" "$hi" \
      "$ratio" "$peak" "$input" "${12%% *}" "$(whole "$med_s")" "$5" "$ran" >> "$TSV"
  fi
}
failed() { # WL LABEL THREADS ERRFILE [TO]: a row saying what failed (all n/a in $TSV)
  local engine=${2%% *} to=${5:-discarded}
  echo "| $1 | $2 | $(where "$to") | $3 | failed: $(grep -m1 -iE 'error|fail' "$4" | cut -c1-120 | tr '|' '/') | | | | | | | |"
  if [ -n "${TSV:-}" ]; then
    printf '%s\t%s\t%s\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\t%s\t%s\n' "$1" "${engine,,}" "$3" "$to" "$3" >> "$TSV"
  fi
  { echo "$1, $2, $3, $(where "$to"): failed:"; sed 's/^/    /' "$4" | head -20; } >&2
}

# sluice_runs WL W TO SQL: SQL (EXPLAIN ANALYZE INSERT) timed RUNS times;
# the runs' events/s go to $tmp/sluice.r, with setup to $tmp/sluice.rs;
# sets SR_PEAK (KiB), SR_INPUT (bytes) and SR_THREADS (plan_threads; W
# when the plan does not say).  TO csv: SQL writes
# $tmp/sluice.csv, deleted before each run.  Fails after a failed row.
sluice_runs() {
  local wl=$1 w=$2 to=$3 sql=$4 x setup bytes kb threads
  SR_PEAK=0 SR_INPUT=n/a SR_THREADS=$w
  : > "$tmp/sluice.r"; : > "$tmp/sluice.rs"
  if [ "$to" = discarded ] && [ -z "${PEERS_COLD:-}" ]; then
    sluice_runs_warm "$wl" "$w" "$sql" && return 0
    [ $? = 2 ] || return 1 # 2: no EXPLAIN ANALYZE; each run in a process
  fi
  for _ in $(seq "$RUNS"); do
    rm -f "$tmp/sluice.csv"
    (cd "$SRC" && /usr/bin/time -v -o "$tmp/time" "$SLUICE" "$sql" > "$tmp/plan" 2> "$tmp/err") ||
      { failed "$wl" Sluice "$w" "$tmp/err" "$to"; return 1; }
    x=$(grep -m1 '^Sink' "$tmp/plan" | grep -oE 'events/s=[0-9.]+' | cut -d= -f2 || true)
    setup=$(grep -m1 '^Sink' "$tmp/plan" | grep -oE 'setup=[0-9.]+' | cut -d= -f2 || true)
    if [ -z "$x" ] && [ "$to" = csv ]; then
      { echo "error: no events/s on the plan's Sink line"; cat "$tmp/plan"; } > "$tmp/err"
      failed "$wl" Sluice "$w" "$tmp/err" "$to"; return 1
    elif [ -z "$x" ]; then # no EXPLAIN ANALYZE for this query: the plain run's summary
      (cd "$SRC" && /usr/bin/time -v -o "$tmp/time" "$SLUICE" -m csv "$tmp/plain.sql" > /dev/null 2> "$tmp/err") ||
        { failed "$wl" Sluice "$w" "$tmp/err" "$to"; return 1; }
      x=$(grep -oE '\([0-9.]+ events/s' "$tmp/err" | tail -1 | tr -d '(' | cut -d' ' -f1)
      setup=""
    else
      # The Source lines' bytes=, or a staged plan's "leaf input bytes=".
      bytes=$(grep -E '^ *Source .*bytes=[0-9]+|leaf input bytes=[0-9]+' "$tmp/plan" |
        grep -oE '(^|[ (])bytes=[0-9]+' | cut -d= -f2 | awk '{ s += $1 } END { if (NR) print s }' || true)
      SR_INPUT=${bytes:-n/a}
      threads=$(plan_threads "$tmp/plan" 1)
      SR_THREADS=${threads:-$w}
    fi
    # The run: e / x s (x = its source's e events per second); EVENTS over it.
    awk -v x="$x" -v n="$EVENTS" -v e="$S_EVENTS" -v s="${setup:-n/a}" -v r="$tmp/sluice.r" -v rs="$tmp/sluice.rs" \
      'BEGIN { printf "%.0f\n", x * n / e >> r
               if (s == "n/a") print "n/a" >> rs; else printf "%.0f\n", n / (e / x + s) >> rs }'
    kb=$(maxrss_kb "$tmp/time"); [ "$kb" -le "$SR_PEAK" ] || SR_PEAK=$kb
  done
}

# sluice_runs_warm WL W SQL: the RUNS timed runs in one process, one
# after the other (the runs of a session; DuckDB's are too, after its
# table load), as sluice_runs; returns 2 if SQL has no EXPLAIN ANALYZE
# whose plans show a Sink line each.
sluice_runs_warm() {
  local wl=$1 w=$2 sql=$3 kb threads
  { cat "$sql"
    for _ in $(seq $((RUNS - 1))); do sed -n '/^EXPLAIN ANALYZE/,$p' "$sql"; done
  } > "$tmp/warm.sql"
  (cd "$SRC" && /usr/bin/time -v -o "$tmp/time" "$SLUICE" "$tmp/warm.sql" > "$tmp/plan" 2> "$tmp/err") ||
    { failed "$wl" Sluice "$w" "$tmp/err" discarded; return 1; }
  [ "$(grep -c '^Sink.*events/s=' "$tmp/plan" || true)" = "$RUNS" ] || return 2
  grep '^Sink' "$tmp/plan" | awk -v n="$EVENTS" -v e="$S_EVENTS" -v r="$tmp/sluice.r" -v rs="$tmp/sluice.rs" '
    { x = $0; sub(/.*events\/s=/, "", x); sub(/[^0-9.].*/, "", x)
      s = "n/a"; if ($0 ~ /setup=/) { s = $0; sub(/.*setup=/, "", s); sub(/[^0-9.].*/, "", s) }
      printf "%.0f\n", x * n / e >> r
      if (s == "n/a") print "n/a" >> rs; else printf "%.0f\n", n / (e / x + s) >> rs }'
  # The Source lines' bytes=, or a staged plan's "leaf input bytes=": one run's.
  SR_INPUT=$(grep -E '^ *Source .*bytes=[0-9]+|leaf input bytes=[0-9]+' "$tmp/plan" |
    grep -oE '(^|[ (])bytes=[0-9]+' | cut -d= -f2 |
    awk -v k="$RUNS" '{ s += $1 } END { if (NR) printf "%.0f\n", s / k; else print "n/a" }' || true)
  kb=$(maxrss_kb "$tmp/time"); SR_PEAK=$kb
  threads=$(plan_threads "$tmp/plan" "$RUNS"); SR_THREADS=${threads:-$w}
}

# run_sluice WL W: the rows and the timed runs, rows discarded; sets
# S_RATE and S_SETUP (medians of events/s without and with setup; S_RATE
# "" if it failed) and S_EVENTS, and leaves $tmp/sluice.rows and
# $tmp/timed.sql.
run_sluice() {
  local wl=$1 w=$2
  S_RATE="" S_SETUP=n/a
  { ddl "$wl" "$w" true; sluice_select "$wl"; } > "$tmp/plain.sql"
  { ddl "$wl" "$w" true; sluice_timed "$wl"; } > "$tmp/timed.sql"
  (cd "$SRC" && "$SLUICE" -m csv --no-headers "$tmp/plain.sql" > "$tmp/sluice.out" 2> "$tmp/err") ||
    { failed "$wl" Sluice "$w" "$tmp/err"; return; }
  S_EVENTS=$(grep -oE '[0-9]+ events in' "$tmp/err" | tail -1 | cut -d' ' -f1 || true)
  if [ -z "$S_EVENTS" ] || [ "$S_EVENTS" = 0 ]; then failed "$wl" Sluice "$w" "$tmp/err"; return; fi
  norm "$tmp/sluice.out" > "$tmp/sluice.rows"
  rm -f "$tmp/sluice.out"
  sluice_runs "$wl" "$w" discarded "$tmp/timed.sql" || return 0
  S_RATE=$(median < "$tmp/sluice.r") S_SETUP=$(median_na "$tmp/sluice.rs")
  row "$wl" sluice Sluice "$w" discarded "$tmp/sluice.r" "$tmp/sluice.rs" "$S_RATE" "$S_SETUP" \
    $((SR_PEAK * 1024)) "$SR_INPUT" "n/a" "$SR_THREADS"
}

# run_sluice_csv WL W: the timed runs with the rows to a CSV file (the
# blackhole sink table of $tmp/timed.sql made a filesystem one); sets
# S_CSV_RATE ("" if it failed) and S_CSV_SETUP.
run_sluice_csv() {
  local fs="'connector' = 'filesystem', 'path' = '$tmp/sluice.csv', 'format' = 'csv'"
  S_CSV_RATE="" S_CSV_SETUP=n/a
  sed "s|'connector' = 'blackhole'|$fs|" "$tmp/timed.sql" > "$tmp/timed_csv.sql"
  if [ "$(grep -c "'connector' = 'filesystem', 'path' = '$tmp/sluice.csv'" "$tmp/timed_csv.sql")" != 1 ]; then
    echo "error: not one blackhole sink table in the timed SQL" > "$tmp/err"
    failed "$1" Sluice "$2" "$tmp/err" csv; return
  fi
  sluice_runs "$1" "$2" csv "$tmp/timed_csv.sql" || return 0
  S_CSV_RATE=$(median < "$tmp/sluice.r") S_CSV_SETUP=$(median_na "$tmp/sluice.rs")
  norm "$tmp/sluice.csv" > "$tmp/sluice_csv.rows"
  rm -f "$tmp/sluice.csv"
  row "$1" sluice Sluice "$2" csv "$tmp/sluice.r" "$tmp/sluice.rs" "$S_CSV_RATE" "$S_CSV_SETUP" \
    $((SR_PEAK * 1024)) "$SR_INPUT" "$(same "$tmp/sluice.rows" "$tmp/sluice_csv.rows" "$1 Sluice CSV file $2")" \
    "$SR_THREADS"
  rm -f "$tmp/sluice_csv.rows"
}

run_duckdb() { # WL W DIR [csv]: the rows discarded, or (csv) to a CSV file
  local to=${4:-discarded} out="$tmp/duck.out" ref=$S_RATE ref_s=$S_SETUP label got n s
  [ "$to" = discarded ] || { out="$tmp/duck.csv" ref=$S_CSV_RATE ref_s=$S_CSV_SETUP; }
  label="DuckDB $DUCK_VERSION"
  duck_load "$1" "$3" > "$tmp/load.sql"
  batch "$1" duck > "$tmp/duck.sql"
  rm -f "$out"
  # shellcheck disable=SC2086 # ${4:+csv}: the mode, or no argument
  /usr/bin/time -v -o "$tmp/time" node "$PEERS/duckdb_query.mjs" "$2" "$RUNS" "$out" \
    "$tmp/load.sql" "$tmp/duck.sql" ${4:+csv} > "$tmp/duck.log" 2> "$tmp/err" ||
    { failed "$1" "$label" "$2" "$tmp/err" "$to"; return; }
  awk -v n="$EVENTS" '$1 == "run_s" { printf "%.0f\n", n / $2 }' "$tmp/duck.log" > "$tmp/duck.r"
  awk -v n="$EVENTS" '$1 == "setup_s" { s = $2 } $1 == "run_s" { printf "%.0f\n", n / ($2 + s) }' \
    "$tmp/duck.log" > "$tmp/duck.rs"
  norm "$out" > "$tmp/duck.rows"
  rm -f "$out"
  s=$(same "$tmp/sluice.rows" "$tmp/duck.rows" "$1 DuckDB $2 $(where "$to")")
  # The rows its timed runs streamed (or COPY wrote) are the rows compared.
  got=$(awk '$1 == "rows" { print $2 }' "$tmp/duck.log") n=$(wc -l < "$tmp/duck.rows")
  if [ "$got" != "$n" ]; then
    s="NO (${got:-no} rows in the timed run, $n compared)"
    echo "$1 DuckDB $2 $(where "$to"): the timed run had ${got:-no} rows, the result compared $n" >&2
  fi
  row "$1" duckdb "$label" "$2" "$to" "$tmp/duck.r" "$tmp/duck.rs" "$ref" "$ref_s" \
    $(($(maxrss_kb "$tmp/time") * 1024)) "$(awk '$1 == "input_bytes" { print $2 }' "$tmp/duck.log")" "$s"
  rm -f "$tmp/duck.rows"
}

# run_sqlite WL W DIR: its rows written as CSV by the shell (a file); the
# ratios are to Sluice's CSV row if there is one, else its discarded row.
run_sqlite() {
  local kb peak=0 label ref=$S_RATE ref_s=$S_SETUP
  label="SQLite $(sqlite3 --version | cut -d' ' -f1)"
  [ -z "$S_CSV_RATE" ] || { ref=$S_CSV_RATE ref_s=$S_CSV_SETUP; }
  rm -f "$tmp/lite.db"
  lite_load "$1" "$3" | sqlite3 "$tmp/lite.db" 2> "$tmp/err" || { failed "$1" "$label" 1 "$tmp/err" csv; return; }
  : > "$tmp/lite.r"
  for _ in $(seq "$RUNS"); do
    printf '.mode csv\n.timer on\n%s;\n' "$(batch "$1" lite)" |
      /usr/bin/time -v -o "$tmp/time" sqlite3 "$tmp/lite.db" > "$tmp/lite.out" 2> "$tmp/err" ||
      { failed "$1" "$label" 1 "$tmp/err" csv; return; }
    grep -o "^Run Time: real [0-9.]*" "$tmp/lite.out" | awk -v n="$EVENTS" '{ printf "%.0f\n", n / $4 }' >> "$tmp/lite.r"
    kb=$(maxrss_kb "$tmp/time"); [ "$kb" -le "$peak" ] || peak=$kb
  done
  grep -v "^Run Time" "$tmp/lite.out" > "$tmp/lite.csv"
  norm "$tmp/lite.csv" > "$tmp/lite.rows"
  rm -f "$tmp/lite.out" "$tmp/lite.csv"
  # .timer includes preparing: the same rates with setup.
  row "$1" sqlite "$label" 1 csv "$tmp/lite.r" "$tmp/lite.r" "$ref" "$ref_s" $((peak * 1024)) \
    "$(stat -c %s "$tmp/lite.db")" "$(same "$tmp/sluice.rows" "$tmp/lite.rows" "$1 SQLite")"
  rm -f "$tmp/lite.rows"
}

# ---------------------------------------------------------------- the runs

echo "Sluice vs DuckDB and SQLite: $EVENTS events per workload, median of $RUNS runs, workers: ${WORKER_COUNTS[*]}"
echo "(events/s: of the run alone; with setup: over run + setup, i.e. planning, compiling and starting; rows: discarded, or written to a CSV file)"
echo
echo "| workload | engine | rows | workers / threads | events/s (median) | spread (min..max) | x Sluice | events/s with setup (median) | x Sluice with setup | peak RSS MiB | input MiB | same rows as Sluice |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for wl in "${WORKLOADS[@]}"; do
  for w in "${WORKER_COUNTS[@]}"; do
    dir="$tmp/$wl.$w"
    mkdir -p "$dir"
    export_sql "$wl" "$w" "$dir" > "$dir/export.sql"
    (cd "$SRC" && "$SLUICE" "$dir/export.sql" > /dev/null 2> "$tmp/err") ||
      { failed "$wl" "Sluice (export)" "$w" "$tmp/err"; continue; }
    S_CSV_RATE="" S_CSV_SETUP=n/a
    run_sluice "$wl" "$w"
    [ -n "$S_RATE" ] || continue
    run_duckdb "$wl" "$w" "$dir"
    case $wl in
      q0|q1|q2) # results as large as the input: also both to a CSV file
        run_sluice_csv "$wl" "$w"
        run_duckdb "$wl" "$w" "$dir" csv ;;
    esac
    if [ -z "${PEERS_NO_SQLITE:-}" ] && [ "$w" = "${WORKER_COUNTS[0]}" ]; then
      run_sqlite "$wl" "$w" "$dir"
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
  done
done
