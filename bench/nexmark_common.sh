# nexmark_common.sh - what the bench scripts share (sourced by
# bench/nexmark.sh, nexmark_updating.sh, peers.sh, late_records.sh, session_growth.sh).
#
#   nexmark_ddl SRC EVENTS   examples/nexmark/ddl.sql for EVENTS events at
#                            100000 events per second of event time
#   median                   the median of the numbers on stdin
#   disorder_csv N           N rows "k,v,ts" to stdout: 100 keys, rows 1 ms
#                            apart, one in nine up to 3 s early (seed 7)

nexmark_ddl() {
  sed -e "s/'first-event.rate' = '[0-9]*'/'first-event.rate' = '100000'/" \
      -e "s/'next-event.rate' = '[0-9]*'/'next-event.rate' = '100000'/" \
      -e "s/'events.num' = '[0-9]*'/'events.num' = '$2'/" "$1/examples/nexmark/ddl.sql"
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

disorder_csv() {
  awk -v n="$1" 'BEGIN { srand(7); for (i = 0; i < n; i++) {
    ms = 10000 + i; if (int(rand() * 9) == 0) ms -= int(rand() * 3000);
    printf "%d,%d,2024-01-01 %02d:%02d:%02d.%03d\n", int(rand() * 100), int(rand() * 1000),
      int(ms / 3600000), int(ms / 60000) % 60, int(ms / 1000) % 60, ms % 1000 } }'
}
