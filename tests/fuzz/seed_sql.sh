#!/usr/bin/env bash
# seed_sql.sh OUT_DIR - the SQL fuzz target's starting corpus, from the SQL
# the tests and examples already hold: per tests/sql/<area>/*.test file,
# one input per query or statement, preceded by that file's CREATE and SET
# statements (so that it binds); every example and golden script whole.
set -euo pipefail
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
for f in tests/sql/*/*.test; do
  base=$(basename "$(dirname "$f")")-$(basename "$f" .test)
  awk -v out="$out" -v base="$base" '
    function flush() {
      if (sql == "") return
      if (toupper(sql) ~ /^[ \t\n]*(CREATE|SET|DROP)/) ddl = ddl sql ";\n"
      n++
      file = sprintf("%s/%s-%03d.sql", out, base, n)
      printf "%s%s;\n", ddl, sql > file
      close(file)
      sql = ""
    }
    /^(statement|query)/ { flush(); insql = 1; next }
    /^----/ || /^$/ { flush(); insql = 0; next }
    insql { sql = sql (sql == "" ? "" : "\n") $0 }
    END { flush() }
  ' "$f"
done
for f in examples/*.sql examples/nexmark/*.sql tests/golden/*.sql; do
  [ -f "$f" ] && cp "$f" "$out/$(echo "$f" | tr / _)"
done
echo "seed_sql: $(ls "$out" | wc -l) inputs in $out"
