# workload_sql.sh - Sluice's SQL for the benchmark workloads (sourced by
# peers.sh and versus.sh): the source tables, the plain SELECT and the
# timed EXPLAIN ANALYZE INSERT into a blackhole.  Needs SRC (the checkout)
# and EVENTS set, and nexmark_common.sh sourced first.

# ro_keys WL: "key-range zipf-z" of an RO workload (z 0: uniform keys).
ro_keys() {
  case $1 in
  ro) echo "1000 0" ;;
  ro_zipf) echo "1000 1.5" ;;
  *) local k=${1#ro_} z=0
     [[ $k == *_z* ]] && { z=${k#*_z}; k=${k%%_z*}; }
     k=${k/k/000}; k=${k/m/ * 1048576}
     echo "$((k)) $z" ;;
  esac
}

# ddl WL W PREGENERATE: Sluice's source tables (and views) for WL at W workers.
ddl() {
  echo "SET parallelism.default = $2;"
  case $1 in
  ysb) cat <<SQL ;;
CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id STRING, ad_type STRING,
  event_type STRING, event_time TIMESTAMP(3), ip_address STRING,
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'ysb', 'events.num' = '$EVENTS', 'seed' = '7', 'pregenerate' = '$3');
CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns');
SQL
  cm) cat <<SQL ;;
CREATE TABLE cm (\`timestamp\` TIMESTAMP(3), job_id BIGINT, task_id BIGINT, machine_id BIGINT,
  event_type INT, user_id BIGINT, category INT, priority INT, cpu DOUBLE, ram DOUBLE, disk DOUBLE,
  constraints INT, WATERMARK FOR \`timestamp\` AS \`timestamp\` - INTERVAL '1' SECOND)
  WITH ('connector' = 'cm', 'events.num' = '$EVENTS', 'seed' = '7', 'pregenerate' = '$3');
SQL
  ro*)
    local range z keys="'key.distribution' = 'uniform'"
    read -r range z <<< "$(ro_keys "$1")"
    [ "$z" = 0 ] || keys="'key.distribution' = 'zipf', 'zipf.z' = '$z'"
    cat <<SQL ;;
CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'ro', 'key.range' = '$range', $keys, 'events.num' = '$EVENTS',
        'events.per-second' = '1000000', 'seed' = '3', 'pregenerate' = '$3');
SQL
  q*|wtop3) nexmark_ddl "$SRC" "$EVENTS" | sed "s/'connector' = 'nexmark',/& 'pregenerate' = '$3',/" ;;
  esac
}

# Sluice's streaming query: the plain SELECT (its rows are the result), and
# what the timed runs execute.
nexmark_file() { echo "$SRC/examples/nexmark/$1.sql"; }
sluice_select() {
  case $1 in
  ysb) sed -n '/^SELECT/,$p' "$SRC/examples/ysb.sql" ;;
  cm) echo "SELECT job_id, window_start, window_end, AVG(cpu) FROM TABLE(TUMBLE(TABLE cm,
  DESCRIPTOR(\`timestamp\`), INTERVAL '2' SECOND)) GROUP BY job_id, window_start, window_end;" ;;
  ro*) echo "SELECT key, window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE ro,
  DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;" ;;
  wtop3) echo "SELECT auction, bidder, price, window_start, rownum FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                               ORDER BY price DESC, auction, bidder, dateTime) AS rownum
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)))
WHERE rownum <= 3;" ;;
  q*) sed -n '/^INSERT/,$p' "$(nexmark_file "$1")" | sed 1d ;; # the INSERT's query
  esac
}
sluice_timed() {
  local cols
  case $1 in
  q*) sed -n '/^CREATE TABLE/,/^);/p' "$(nexmark_file "$1")"
      echo "EXPLAIN ANALYZE"; sed -n '/^INSERT/,$p' "$(nexmark_file "$1")"
      return ;;
  ysb) cols="campaign_id STRING, ws TIMESTAMP(3), we TIMESTAMP(3), views BIGINT" ;;
  cm) cols="job_id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), cpu DOUBLE" ;;
  ro*) cols="key BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT" ;;
  wtop3) cols="auction BIGINT, bidder BIGINT, price BIGINT, ws TIMESTAMP(3), rownum BIGINT" ;;
  esac
  echo "CREATE TABLE result_sink ($cols) WITH ('connector' = 'blackhole');"
  echo "EXPLAIN ANALYZE INSERT INTO result_sink"; sluice_select "$1"
}

