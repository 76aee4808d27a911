#!/usr/bin/env bash
# bench_run_test.sh SRC BUILD - bench/run --quick into a scratch directory
# holding a BENCHMARKS.md with a stale generated section between history
# sections, then checks:
#   - the stale section is replaced (once), the hand-written parts kept;
#   - every table the page promises is there, every target has a verdict;
#   - every peer (DuckDB, SQLite) returned the same rows as Sluice, for
#     every workload: a peer's "NO" fails the test;
#   - the five charts are PNG files.
set -euo pipefail
SRC=$1
BUILD=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat > "$out/BENCHMARKS.md" <<'MD'
# Sluice benchmarks

Written by hand.

<!-- bench/run: begin -->
STALE NUMBERS
<!-- bench/run: end -->

## History

Kept.
MD
bash "$SRC/bench/run" --quick --build "$BUILD" --out "$out" > "$out/log" 2>&1 ||
  { cat "$out/log"; fail "bench/run --quick failed"; }
page="$out/BENCHMARKS.md"
grep -q "STALE NUMBERS" "$page" && fail "the old generated section was not replaced"
[ "$(grep -c '^<!-- bench/run: begin' "$page")" = 1 ] || fail "not exactly one generated section"
grep -q "^Written by hand." "$page" || fail "the text before the section was lost"
grep -q "^## History" "$page" && grep -q "^Kept." "$page" || fail "the history after the section was lost"
for h in "### Targets" "### Hardware bounds" "### Against DuckDB and SQLite" \
  "### Compiled against interpreted" "### Nodes: late merge" "### Key ranges and skew" \
  "### Channels: local, shm and tcp" "### Latency (YSB)" "### Channel memory per node" "### State per key"; do
  grep -q "^$h" "$page" || fail "no section '$h'"
done
# Targets: seven, each met or missed, none without a number.
targets=$(sed -n '/^### Targets/,/^### Hardware/p' "$page" | grep -cE '\| (met|\*\*missed\*\*) \|$' || true)
[ "$targets" = 7 ] || fail "expected 7 targets with a verdict, found $targets"
grep -qE '\| (x|%| MiB| B) \|' <<<"$(sed -n '/^### Targets/,/^### Hardware/p' "$page")" && fail "a target has no measured value"
# Peers: every workload has a Sluice row, and every peer row says yes.
peers=$(sed -n '/^### Against DuckDB/,/^### Compiled/p' "$page")
for w in ysb cm ro ro_zipf ro_1k_z2 ro_1m ro_64m ro_64m_z1.5 q0 q1 q2 q5 q7 q8 q11; do
  grep -q "^| $w | Sluice |" <<<"$peers" || fail "no Sluice row for $w"
  grep -q "^| $w | DuckDB |" <<<"$peers" || fail "no DuckDB row for $w"
done
bad=$(echo "$peers" | grep -E '^\| [a-z0-9_.]+ \| (DuckDB|SQLite) \|' | grep -v '| yes |$' || true)
[ -z "$bad" ] || fail "a peer's rows differ from Sluice's (or were not compared):
$bad"
for c in peers workers nodes zipf slots; do
  [[ $(head -c 8 "$out/img/$c.png" | od -An -tx1) == *'89 50 4e 47 0d 0a 1a 0a'* ]] || fail "img/$c.png is not a PNG"
done
echo "bench/run --quick: page, $(ls "$out/img" | wc -l) charts, $(echo "$peers" | grep -c '| yes |$') peer results equal to Sluice's"
