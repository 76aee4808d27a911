# nexmark_common.sh - what the NEXMark bench scripts share (sourced by
# bench/nexmark.sh and bench/nexmark_updating.sh).
#
#   nexmark_ddl SRC EVENTS   examples/nexmark/ddl.sql for EVENTS events at
#                            100000 events per second of event time
#   median                   the median of the numbers on stdin

nexmark_ddl() {
  sed -e "s/'first-event.rate' = '[0-9]*'/'first-event.rate' = '100000'/" \
      -e "s/'next-event.rate' = '[0-9]*'/'next-event.rate' = '100000'/" \
      -e "s/'events.num' = '[0-9]*'/'events.num' = '$2'/" "$1/examples/nexmark/ddl.sql"
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
