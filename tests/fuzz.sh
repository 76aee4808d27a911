#!/usr/bin/env bash
# fuzz.sh - the fuzz targets under libFuzzer, for a bounded time each.
#
# Builds build-fuzz/ with clang (-fsanitize=fuzzer, ASan, UBSan), makes each
# target's seed corpus (tests/fuzz/seed_sql.sh; fuzz_messages_replay
# --seeds), and runs every target for FUZZ_SECONDS (default 120) from its
# corpus in build-fuzz/corpus/<target> (kept between runs on one machine:
# later runs start where earlier ones stopped).  A crash, leak, timeout or
# out-of-memory fails the run and leaves the input in
# build-fuzz/artifacts/; copy it into tests/fuzz/regressions/<target>/ with
# the fix, so ctest replays it from then on.  The figures (executions,
# corpus size, coverage) go to build-fuzz/fuzz-figures.txt and to stdout;
# docs/RELIABILITY.md quotes them.  CI runs this after tests/sanitize.sh.
#
#   tests/fuzz.sh [target...]      targets: sql messages (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD=build-fuzz
SECONDS_EACH=${FUZZ_SECONDS:-120}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(sql messages)

FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"
CC=clang cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DSLUICE_WERROR=OFF \
  -DSLUICE_FUZZ=ON -DCMAKE_C_FLAGS="$FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
build_targets=()
for t in "${TARGETS[@]}"; do build_targets+=(--target "fuzz_$t" --target "fuzz_${t}_replay"); done
cmake --build "$BUILD" -j"$(nproc)" "${build_targets[@]}" >/dev/null

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# libedit keeps two wcsdup'd strings until exit; they are not ours.
export LSAN_OPTIONS="suppressions=$SRC/tests/lsan.supp:print_suppressions=0"
mkdir -p "$BUILD/artifacts"
figures="$BUILD/fuzz-figures.txt"
: >"$figures"
failed=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"
  seeds="$BUILD/seeds/$t"
  rm -rf "$seeds"
  mkdir -p "$corpus" "$seeds"
  case $t in
  sql) tests/fuzz/seed_sql.sh "$seeds" >/dev/null; max_len=4096 ;;
  *) "$BUILD/tests/fuzz/fuzz_${t}_replay" --seeds "$seeds"; max_len=65536 ;;
  esac
  # The regressions first: a fixed crash must not come back.
  "$BUILD/tests/fuzz/fuzz_${t}_replay" "tests/fuzz/regressions/$t" >/dev/null
  log="$BUILD/fuzz-$t.log"
  echo "== fuzz_$t: ${SECONDS_EACH} s"
  rc=0
  "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" \
    -max_len="$max_len" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/$t-" "$corpus" "$seeds" >"$log" 2>&1 ||
    rc=$?
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  files=$(ls "$corpus" | wc -l)
  line="fuzz_$t: $(stat number_of_executed_units) executions in ${SECONDS_EACH} s ($(stat average_exec_per_sec)/s), corpus $files inputs ($(stat new_units_added) new; $(ls "$seeds" | wc -l) seeds), ${cov:-?} edges covered, peak RSS $(stat peak_rss_mb) MB"
  if [ "$rc" -ne 0 ]; then
    line="$line: FAILED (exit $rc)"
    failed=1
    grep -E 'ERROR|SUMMARY|fuzz_(sql|messages):|Test unit written' "$log" | head -20 >&2 || true
  fi
  echo "$line" | tee -a "$figures"
done
exit $failed
