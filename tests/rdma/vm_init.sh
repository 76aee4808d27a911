#!/bin/busybox sh
# shellcheck shell=dash
# vm_init.sh - /init of the soft-RoCE test VM (tests/rdma/vm.sh copies it
# into the initramfs it builds).  Runs as PID 1 under busybox:
#   1. loads the kernel modules listed in /modules.order (virtio, 9p,
#      ib_core ... rdma_rxe), in the dependency order vm.sh computed;
#   2. gives eth0 QEMU's user-network address (no DHCP needed);
#   3. mounts the host's root filesystem read-only (virtio-9p tag
#      "hostroot") on /host, with fresh /proc, /sys, /dev, /tmp inside it,
#      and the writable shares of the project root ("root") and of this
#      run's directory ("run") at the same paths as on the host;
#   4. chroots into /host and runs the run directory's vm_inner.sh with
#      the host's bash (it adds rxe0 and runs the job);
#   5. prints "SLUICE-VM-EXIT <status>" on the console, which vm.sh
#      parses, and powers off.
# Every failure path ends in step 5 too (status 125), so the VM never
# lingers; if even that fails, PID 1 exits, the kernel panics and
# "panic=-1 -no-reboot" makes QEMU quit.

/bin/busybox mkdir -p /bin /dev /proc /sys /host
/bin/busybox --install -s /bin
export PATH=/bin
# The initramfs has no /dev/console node (building it needs no root), so
# the console is opened from devtmpfs.
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
# vm.sh shows the console from this line on.
echo "vm: booted in $(cut -d" " -f1 /proc/uptime) s"

finish() {
  echo "SLUICE-VM-EXIT $1"
  sync
  poweroff -f
  sleep 10
  exit "$1"
}
# On failure the kernel log's tail usually says why (quiet hides it).
die() { echo "vm: $*"; dmesg | tail -25; finish 125; }

# The host passes the paths on the kernel command line (vm.sh refuses
# paths with spaces, so splitting on spaces is safe).
for arg in $(cat /proc/cmdline); do
  case $arg in
    sluice_root=*) ROOT=${arg#sluice_root=} ;;
    sluice_run=*) RUN=${arg#sluice_run=} ;;
    # vm.sh's check that an accelerator really runs a guest this far.
    sluice_probe=1) finish 0 ;;
  esac
done
[ -n "${ROOT:-}" ] && [ -n "${RUN:-}" ] || die "no sluice_root= or sluice_run= on the kernel command line"

while read -r m; do
  insmod "/lib/modules/$m.ko" || die "cannot load module $m"
done </modules.order

ip link set lo up
# virtio-net comes up asynchronously after its module loads.
i=0
while [ ! -e /sys/class/net/eth0 ]; do
  i=$((i + 1)); [ $i -gt 100 ] && die "no eth0 (virtio-net) appeared"
  sleep 0.1
done
ip addr add 10.0.2.15/24 dev eth0 || die "cannot give eth0 an address"
ip link set eth0 up || die "cannot bring eth0 up"

# msize: 9p's default 8 KiB messages make reading libLLVM (~100 MB) slow.
# cache=loose on the read-only root only: nothing on the host changes it
# during a run, and it spares a round trip per stat/read.
opts=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o "$opts,ro,cache=loose" hostroot /host || die "cannot mount the host's root (9p)"
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tmpfs shm /host/dev/shm
for d in /tmp /run /var/tmp; do mount -t tmpfs tmp "/host$d"; done
# Writable shares at their host paths, so every path the job sees is the
# same inside and outside the VM.  (Their directories may lie under a tmpfs
# mounted above, e.g. a cache in /tmp, hence mkdir.)
mkdir -p "/host$ROOT" "/host$RUN" 2>/dev/null
mount -t 9p -o "$opts" root "/host$ROOT" || die "cannot mount the project root $ROOT (9p)"
mount -t 9p -o "$opts" run "/host$RUN" || die "cannot mount the run directory $RUN (9p)"

chroot /host /bin/bash "$RUN/vm_inner.sh" "$RUN"
finish $?
