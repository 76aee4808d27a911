#!/usr/bin/env bash
# vm_required.sh - CI cannot be green without the verbs tests: where the
# VM cannot start, tests/rdma/vm.sh skips (77) by default but fails (1,
# saying why and how to fix) under SLUICE_VM_REQUIRE=1, and .ci/run sets
# that for every test it runs.  "Cannot start" is made here by a PATH that
# holds no qemu-system-x86_64; no VM boots.
#
#   vm_required.sh SOURCE_DIR
set -uo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# What vm.sh runs before it looks for QEMU; QEMU itself is left out.
for t in dirname mkdir; do ln -s "$(command -v "$t")" "$tmp/bin/$t"; done
vm() { env -u SLUICE_VM_REQUIRE PATH="$tmp/bin" "$@" "$(command -v bash)" \
  "$src/tests/rdma/vm.sh" --cache "$tmp/cache" run tests/rdma/smoke.sh 2>&1; }
fail=0

out=$(vm); rc=$?
if [ "$rc" -eq 77 ]; then echo "ok   without SLUICE_VM_REQUIRE: skipped (77)"
else echo "FAIL without SLUICE_VM_REQUIRE: exit $rc, expected 77:"; echo "$out"; fail=1; fi

out=$(vm SLUICE_VM_REQUIRE=1); rc=$?
if [ "$rc" -eq 1 ] && grep -q "no qemu-system-x86_64" <<<"$out" &&
   grep -q "SLUICE_VM_REQUIRE=1 (set by .ci/run) makes this a failure" <<<"$out"; then
  echo "ok   with SLUICE_VM_REQUIRE=1: failed (1), saying why and how to fix"
else echo "FAIL with SLUICE_VM_REQUIRE=1: exit $rc, expected 1 and the reason:"; echo "$out"; fail=1; fi

# .ci/run exports it before it runs any test.
if awk '/^export SLUICE_VM_REQUIRE=1$/ { req = NR } /^(bash -c|tests\/)/ && !first { first = NR }
        END { exit !(req && req < first) }' "$src/.ci/run"; then
  echo "ok   .ci/run exports SLUICE_VM_REQUIRE=1 before its tests"
else echo "FAIL .ci/run does not export SLUICE_VM_REQUIRE=1 before it runs the tests"; fail=1; fi
exit $fail
