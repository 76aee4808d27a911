#!/usr/bin/env bash
# llvm_versions.sh - build Sluice against every other LLVM installed here
# and run its JIT tests there.
#
# The README's build uses Debian's default llvm-dev (LLVM 14).  The JIT
# must also work with newer LLVMs (15 and 16 are Debian 12 packages:
# apt-get install llvm-15-dev llvm-16-dev); this script finds each
# /usr/bin/llvm-config-NN other than the default one, configures
# build-llvmNN/ with it (warnings are errors), builds, and runs the tests
# whose names match the pattern (default: everything).  A version that
# is not installed is skipped and said so; any failure fails the script.
#
#   tests/llvm_versions.sh [ctest -R pattern]
set -euo pipefail
cd "$(dirname "$0")/.."
PATTERN=${1:-.}
default=$(llvm-config --version 2>/dev/null | cut -d. -f1 || true)
found=0
for cfg in /usr/bin/llvm-config-[0-9]*; do
  [ -x "$cfg" ] || continue
  v=${cfg##*-}
  if [ "$v" = "$default" ]; then
    continue
  fi
  found=1
  echo "== LLVM $v ($cfg)"
  cmake -S . -B "build-llvm$v" -DLLVM_CONFIG="$cfg" -DSLUICE_WERROR=ON >/dev/null
  cmake --build "build-llvm$v" -j"$(nproc)" >/dev/null
  ctest --test-dir "build-llvm$v" --output-on-failure -j2 -R "$PATTERN"
done
if [ "$found" = 0 ]; then
  echo "llvm_versions.sh: no LLVM other than the default ($default) is installed;"
  echo "  apt-get install llvm-15-dev llvm-16-dev to test those"
fi
