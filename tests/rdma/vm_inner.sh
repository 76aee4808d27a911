#!/usr/bin/env bash
# vm_inner.sh - the job's side of the soft-RoCE VM: vm_init.sh runs it with
# the host's bash, chrooted into the host's (read-only) root filesystem.
# It creates the soft-RoCE device rxe0 on eth0, waits until its port is
# ACTIVE, exports SLUICE_RDMA_DEVICE / SLUICE_RDMA_ADDR (and the variables
# vm.sh put in job.env), changes to the project root and runs the job's
# command.  Its exit status is the job's, or 125 when rxe0 cannot be set up.
#
#   vm_inner.sh RUN_DIR      (RUN_DIR holds job.env, written by vm.sh)
set -u
run=$1
# job.env sets SLUICE_VM_ROOT, the command array SLUICE_VM_CMD and the
# exported variables (values quoted with printf %q by vm.sh).
. "$run/job.env"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
fail() { echo "vm: $*" >&2; exit 125; }

rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
state=/sys/class/infiniband/rxe0/ports/1/state
for _ in $(seq 100); do
  grep -q ACTIVE "$state" 2>/dev/null && break
  sleep 0.1
done
grep -q ACTIVE "$state" 2>/dev/null || fail "rxe0's port is not ACTIVE: $(cat "$state" 2>&1)"

addr=$(ip -4 -o addr show dev eth0 | awk '{ split($4, a, "/"); print a[1]; exit }')
[ -n "$addr" ] || fail "eth0 has no IPv4 address"
export SLUICE_RDMA_DEVICE=rxe0 SLUICE_RDMA_ADDR=$addr
# Registering memory pins it; root may, but say so for jobs that drop
# privileges.
ulimit -l unlimited 2>/dev/null

cd "$SLUICE_VM_ROOT" || fail "cannot cd to $SLUICE_VM_ROOT"
echo "vm: rxe0 up on eth0 ($addr) at $(cut -d" " -f1 /proc/uptime) s; running: ${SLUICE_VM_CMD[*]}"
"${SLUICE_VM_CMD[@]}"
