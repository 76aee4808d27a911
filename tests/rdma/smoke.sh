#!/usr/bin/env bash
# smoke.sh - does the soft-RoCE VM give real, working verbs?  Run inside the
# VM by vm.sh (ctest: rdma.vm_smoke).  Checks that ibv_devices lists the
# device, that its port is PORT_ACTIVE, and that perftest's ib_write_bw
# moves 64 KiB RDMA writes between two processes on the VM's address; prints
# the bandwidth as "ib_write_bw 65536 B: <MB/s> MB/s", the baseline the
# verbs channel's benchmark compares itself with.
#
#   vm.sh run tests/rdma/smoke.sh      (needs SLUICE_RDMA_DEVICE/ADDR)
set -euo pipefail
dev=${SLUICE_RDMA_DEVICE:?run me through tests/rdma/vm.sh}
addr=${SLUICE_RDMA_ADDR:?run me through tests/rdma/vm.sh}
size=65536
tmp=$(mktemp -d)
fail() { echo "FAIL: $*"; exit 1; }

ibv_devices | tee "$tmp/devices"
grep -qw "$dev" "$tmp/devices" || fail "ibv_devices does not list $dev"
ibv_devinfo -d "$dev" | tee "$tmp/devinfo"
grep -q 'state:.*PORT_ACTIVE' "$tmp/devinfo" || fail "$dev's port is not PORT_ACTIVE"

# -D 2: two seconds of writes; -F: the VM's CPU frequency is unknown to
# perftest, which would otherwise refuse to report.
bw=(ib_write_bw -d "$dev" -s "$size" -D 2 -F)
timeout 120 "${bw[@]}" >"$tmp/server" 2>&1 &
server=$!
# The client fails at once while the server is not listening yet: retry.
ok=0
for _ in $(seq 40); do
  if timeout 120 "${bw[@]}" "$addr" >"$tmp/client" 2>&1; then ok=1; break; fi
  grep -q 'Couldn.t connect\|Unable to open' "$tmp/client" || break
  sleep 0.25
done
cat "$tmp/client"
[ $ok = 1 ] || { echo "--- server:"; cat "$tmp/server"; fail "ib_write_bw's client failed"; }
wait "$server" || { cat "$tmp/server"; fail "ib_write_bw's server failed"; }

# The result line: " 65536  <iterations>  <peak MB/s>  <average MB/s>  <Mpps>".
# What is checked is that writes completed (iterations > 0).  The MB/s is
# perftest's, from the CPU's cycle counter; under TCG emulation that clock
# can fail its own calibration ("Correlation coefficient r^2 < 0.9") and
# report 0.00, so then the figure is the iterations' bytes over the 2 s.
line=$(awk -v s="$size" '$1 == s && NF >= 5' "$tmp/client" | tail -1)
[ -n "$line" ] || fail "no bandwidth line in ib_write_bw's output"
iters=$(echo "$line" | awk '{ print $2 }')
mbs=$(echo "$line" | awk '{ print $4 }')
awk -v i="$iters" 'BEGIN { exit !(i > 0) }' || fail "ib_write_bw completed no write ($line)"
if ! awk -v m="$mbs" 'BEGIN { exit !(m > 0) }'; then
  mbs=$(awk -v i="$iters" -v s="$size" 'BEGIN { printf "%.2f", i * s / 2 / 1048576 }')
  echo "(perftest's clock reported 0 MB/s: $iters writes of $size B in 2 s)"
fi
echo "ib_write_bw $size B: $mbs MB/s"
rm -rf "$tmp"
