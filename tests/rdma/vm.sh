#!/usr/bin/env bash
# vm.sh - runs a command inside a small QEMU VM that has a soft-RoCE
# (rdma_rxe) device, so the RDMA transport is tested on real verbs without
# an RDMA NIC.  The VM boots Debian 12's kernel (downloaded with apt-get
# download, never installed) from an initramfs holding only busybox, the
# modules and vm_init.sh; the host's root filesystem is shared read-only
# over virtio-9p and the job runs chrooted into it, so every binary and
# library of the host (and of any build directory) is there unchanged.
# The project root and a per-run directory are shared writable, at the
# same paths as on the host.
#
#   vm.sh [OPTIONS] prepare               download the kernel, build the initramfs
#   vm.sh [OPTIONS] run SCRIPT [ARGS...]  run "bash SCRIPT ARGS" in the VM
#   vm.sh [OPTIONS] exec CMD [ARGS...]    run CMD in the VM (e.g. build/tests/test_x)
#
# Options:
#   --root DIR      project root: the job's working directory, shared
#                   writable (default: the checkout holding this script)
#   --cache DIR     kernel, initramfs and run directories (default:
#                   $SLUICE_VM_CACHE, else build/rdma-vm of this checkout)
#   --timeout SECS  hard limit for the whole VM run (default:
#                   $SLUICE_VM_TIMEOUT, else 600)
#   -e NAME=VALUE   export NAME in the VM (repeatable); every SLUICE_*
#                   variable of the caller is exported too
#
# In the VM the job runs as root with cwd = the project root, /tmp,
# /dev/shm, /run fresh tmpfs, and SLUICE_RDMA_DEVICE=rxe0 and
# SLUICE_RDMA_ADDR=<eth0's IPv4 address> exported.  eth0 is QEMU's user
# network with restrict=on: no traffic leaves the VM.
#
# Exit status: the job's; 124 when the timeout hit; 125 when the VM ended
# without reporting a status (boot or setup failure; the console log is
# printed); 77 (skip) when this machine cannot run the VM at all: no QEMU,
# busybox-static, rdma-core tools, or no kernel package to download.  With
# SLUICE_VM_REQUIRE=1 a skip is a failure (exit 1) instead.
# More knobs: SLUICE_VM_ACCEL=kvm|tcg (default: kvm when it works),
# SLUICE_VM_MEM (MiB, 2048), SLUICE_VM_CPUS (2), SLUICE_VM_KERNEL_PKG (the
# linux-image package; default: the newest linux-image-6.1.0-N-amd64),
# SLUICE_VM_KEEP=1 keeps the run directory (console.log, job.env).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${SLUICE_VM_CACHE:-$root/build/rdma-vm}
timeout=${SLUICE_VM_TIMEOUT:-600}
envs=()

# The modules the VM needs; modprobe --show-depends adds what they depend
# on, in load order.  crc32_generic first: rdma_rxe asks the crypto API for
# "crc32" without a module dependency on it and fails without it.
TOP_MODULES="crc32_generic virtio_pci virtio_net 9pnet_virtio 9p
  rdma_rxe ib_uverbs rdma_ucm"

say() { echo "vm: $*" >&2; }
die() { say "$*"; exit 125; }
# CI sets SLUICE_VM_REQUIRE=1 (.ci/run): there a VM that cannot start must
# fail the rdma tests, or CI would be green without one verbs test run.
skip() {
  if [ "${SLUICE_VM_REQUIRE:-}" = 1 ]; then
    say "FAILED: the RDMA VM cannot start: $*."
    say "SLUICE_VM_REQUIRE=1 (set by .ci/run) makes this a failure, not a skip:"
    say "install what is named (./setup.sh installs it all), or outside CI"
    say "unset SLUICE_VM_REQUIRE to let the verbs tests skip."
    exit 1
  fi
  say "skipped: $* (SLUICE_VM_REQUIRE=1 would fail instead)"
  exit 77
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit "$1"; }

while [ $# -gt 0 ]; do
  case $1 in
    --root) root=$(cd "$2" && pwd); shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -e | --env)
      [[ $2 == [A-Za-z_]*=* ]] || { say "-e wants NAME=VALUE, not '$2'"; exit 2; }
      envs+=("$2"); shift 2 ;;
    -h | --help) usage 0 ;;
    --) shift; break ;;
    -*) say "unknown option $1"; usage 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || usage 2
action=$1; shift
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# prepare: the kernel (extracted into $cache/kernel) and the initramfs
# ($cache/initrd.gz).  Both are kept; the initramfs is rebuilt only when
# vm.sh, vm_init.sh or the kernel changed (the stamp file).
# flock: two tests starting at once must not build the cache twice.
prepare() {
  local t
  for t in dpkg-deb depmod modprobe cpio gzip sha256sum flock; do
    command -v "$t" >/dev/null || skip "no $t (install dpkg, kmod, cpio, gzip, util-linux)"
  done
  local busybox
  busybox=$(command -v busybox) || skip "no busybox (install busybox-static)"
  # A dynamically linked busybox would need its libraries in the initramfs.
  # (ldd fails on a static binary: capture its words, not its status.)
  if ! [[ $(LC_ALL=C ldd "$busybox" 2>&1 || true) =~ not\ a\ dynamic|statically\ linked ]]; then
    skip "$busybox is not statically linked (install busybox-static)"
  fi
  exec 9>"$cache/.lock"
  flock 9

  if ! ls "$cache"/kernel/boot/vmlinuz-* >/dev/null 2>&1; then
    command -v apt-get >/dev/null || skip "no apt-get to download a kernel"
    local pkg=${SLUICE_VM_KERNEL_PKG:-}
    if [ -z "$pkg" ]; then
      pkg=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
        grep -E '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | sort -V | tail -1)
      [ -n "$pkg" ] || skip "apt-cache knows no linux-image-6.1.0-*-amd64 (run apt-get update)"
    fi
    say "downloading $pkg"
    rm -rf "$cache/dl" "$cache/kernel.tmp"
    mkdir -p "$cache/dl"
    # The unsigned and the signed package hold the same kernel; try both.
    (cd "$cache/dl" && { apt-get download -q "$pkg" || apt-get download -q "${pkg%-unsigned}"; }) >&2 2>&1 ||
      skip "cannot download $pkg"
    dpkg-deb -x "$cache"/dl/*.deb "$cache/kernel.tmp"
    mv "$cache/kernel.tmp" "$cache/kernel"
    rm -rf "$cache/dl"
  fi
  local vmlinuz kver
  vmlinuz=$(ls "$cache"/kernel/boot/vmlinuz-* | head -1)
  kver=${vmlinuz##*/vmlinuz-}

  local stamp
  stamp=$(cat "$here/vm.sh" "$here/vm_init.sh" <(echo "$kver") "$busybox" | sha256sum | cut -c1-16)
  if [ -f "$cache/initrd.gz" ] && [ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ]; then
    exec 9>&-
    return 0
  fi
  say "building the initramfs (kernel $kver)"
  local kdir=$cache/kernel tmp=$cache/initramfs.tmp
  [ -f "$kdir/lib/modules/$kver/modules.dep" ] || depmod -b "$kdir" "$kver"
  rm -rf "$tmp"
  mkdir -p "$tmp/bin" "$tmp/lib/modules"
  cp "$busybox" "$tmp/bin/busybox"
  cp "$here/vm_init.sh" "$tmp/init"
  chmod 755 "$tmp/init" "$tmp/bin/busybox"
  local path name
  # One module per call: modprobe takes further words as its parameters.
  for name in $TOP_MODULES; do
    modprobe -d "$kdir" -S "$kver" --show-depends "$name" || die "no module $name in $kdir"
  done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$tmp/paths"
  [ -s "$tmp/paths" ] || die "modprobe found none of the modules in $kdir"
  while read -r path; do
    name=${path##*/}; name=${name%%.ko*}
    # busybox insmod loads plain .ko only; Debian compresses them in
    # newer kernels.
    case $path in
      *.ko.xz) xz -dc "$path" ;;
      *.ko.zst) zstd -dcq "$path" ;;
      *.ko.gz) gzip -dc "$path" ;;
      *) cat "$path" ;;
    esac > "$tmp/lib/modules/$name.ko"
    echo "$name" >> "$tmp/modules.order"
  done < "$tmp/paths"
  rm "$tmp/paths"
  (cd "$tmp" && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$cache/initrd.gz.tmp"
  mv "$cache/initrd.gz.tmp" "$cache/initrd.gz"
  cp "$vmlinuz" "$cache/vmlinuz"
  echo "$stamp" > "$cache/stamp"
  rm -rf "$tmp"
  # Unlock: runs need the lock only while the cache is built (QEMU reads
  # the initramfs whole when it starts, so a rebuild cannot upset a run).
  exec 9>&-
}

# kvm when it really boots this VM, else TCG.  A nested VM or a container
# may have a /dev/kvm on which QEMU starts but the guest kernel hangs
# (seen on a Firecracker host), so the check boots the initramfs to its
# first line (init's probe mode).  The answer is kept in the cache, keyed
# by the host kernel and QEMU versions: the check costs up to 30 s.
pick_accel() {
  case ${SLUICE_VM_ACCEL:-auto} in
    kvm | tcg) echo "$SLUICE_VM_ACCEL"; return ;;
  esac
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo tcg; return; }
  local key file=$cache/kvm-check
  key="$(uname -r) $(qemu-system-x86_64 --version | head -1)"
  if [ "$(head -1 "$file" 2>/dev/null)" != "$key" ]; then
    local answer=no out
    out=$(timeout -k 5 30 qemu-system-x86_64 -accel kvm -m 256 -nodefaults -no-user-config \
      -display none -no-reboot -serial stdio -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
      -append "console=ttyS0 panic=-1 quiet sluice_probe=1" </dev/null 2>&1 || true)
    [[ $out == *"SLUICE-VM-EXIT 0"* ]] && answer=yes
    printf '%s\n%s\n' "$key" "$answer" > "$file"
  fi
  if [ "$(sed -n 2p "$file")" = yes ]; then echo kvm; else
    say "KVM does not boot the VM here (see $file); using TCG"
    echo tcg
  fi
}

run_vm() {
  command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (install qemu-system-x86)"
  # The job runs on the host's root filesystem: the tools rxe needs there.
  command -v rdma >/dev/null || skip "no rdma tool (install iproute2)"
  ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 ||
    skip "no rxe verbs provider (install ibverbs-providers)"
  prepare

  mkdir -p "$cache/runs"
  # Run directories of runs that were killed (no EXIT trap) go after a day.
  find "$cache/runs" -mindepth 1 -maxdepth 1 -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
  local run
  run=$(mktemp -d "$cache/runs/run.XXXXXX")
  # The paths travel on the kernel command line, split at spaces.
  case "$root$run" in *[[:space:]]*) say "paths with spaces are not supported: $root, $run"; exit 2 ;; esac
  # shellcheck disable=SC2064 # expand $run now
  [ "${SLUICE_VM_KEEP:-}" = 1 ] || trap "rm -rf '$run'" EXIT
  cp "$here/vm_inner.sh" "$run/"

  # SCRIPT is relative to the project root (the job's cwd) or, failing
  # that, to the caller's cwd.
  if [[ $1 != /* ]] && [ ! -e "$root/$1" ] && [ -e "$1" ]; then
    set -- "$(realpath "$1")" "${@:2}"
  fi
  # A script (or program) in /tmp would be hidden by the VM's own /tmp
  # (unless it is in the shared project root): run a copy.
  local v abs
  if [ -e "$1" ] || [ -e "$root/$1" ]; then
    abs=$(cd "$root" && realpath "$1")
    case $abs in
      "$root"/*) ;;
      /tmp/* | /run/* | /var/tmp/* | /dev/*)
        cp "$abs" "$run/job-script"; set -- "$run/job-script" "${@:2}" ;;
    esac
  fi
  {
    printf 'SLUICE_VM_ROOT=%q\n' "$root"
    # The caller's SLUICE_* variables (ctest sets some), then -e's.
    while IFS= read -r v; do
      case $v in SLUICE_VM_* | SLUICE_RDMA_DEVICE | SLUICE_RDMA_ADDR) continue ;; esac
      printf 'export %s=%q\n' "$v" "${!v}"
    done < <(compgen -e | grep '^SLUICE_' || true)
    for v in "${envs[@]}"; do printf 'export %s=%q\n' "${v%%=*}" "${v#*=}"; done
    printf 'SLUICE_VM_CMD=('
    [ "$action" = run ] && printf 'bash '
    printf '%q ' "$@"
    printf ')\n'
  } > "$run/job.env"

  local accel
  accel=$(pick_accel)
  say "booting ($accel, ${SLUICE_VM_CPUS:-2} CPUs, ${SLUICE_VM_MEM:-2048} MiB, timeout ${timeout} s)"
  local t0=$SECONDS
  # shellcheck disable=SC2054 # commas separate QEMU's sub-options
  local qemu=(qemu-system-x86_64 -accel "$accel"
    -m "${SLUICE_VM_MEM:-2048}" -smp "${SLUICE_VM_CPUS:-2}"
    -nodefaults -no-user-config -display none -no-reboot
    -chardev stdio,id=con,signal=on -serial chardev:con
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz"
    -append "console=ttyS0 panic=-1 quiet sluice_root=$root sluice_run=$run"
    -netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0,romfile=
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
    -virtfs "local,path=$root,mount_tag=root,security_model=none,multidevs=remap"
    -virtfs "local,path=$run,mount_tag=run,security_model=none,multidevs=remap")
  # The console is the job's output: strip the serial line's \r, keep a
  # log, and show it from init's first line to its exit line (not the
# BIOS's noise nor the kernel's power-down message).
  # --foreground: Ctrl-C reaches QEMU, which quits on it (signal=on).
  set +e
  timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 |
    sed -u 's/\r$//' | tee "$run/console.log" |
    awk '/^vm: booted/ { on = 1 } on { print; fflush() } /^SLUICE-VM-EXIT / { on = 0 }'
  local codes=("${PIPESTATUS[@]}")
  set -e
  local status
  status=$(awk '$1 == "SLUICE-VM-EXIT" { s = $2 } END { print s }' "$run/console.log")
  if [ "${codes[0]}" = 124 ] || [ "${codes[0]}" = 137 ]; then
    say "timed out after ${timeout} s"
    exit 124
  fi
  if [ -z "$status" ]; then
    say "the VM stopped without reporting an exit status (qemu status ${codes[0]}); its console:"
    cat "$run/console.log" >&2
    exit 125
  fi
  say "exit status $status after $((SECONDS - t0)) s ($accel)"
  exit "$status"
}

case $action in
  prepare) prepare; say "cache ready: $cache ($(ls "$cache"/kernel/boot/vmlinuz-*))" ;;
  run | exec) [ $# -gt 0 ] || usage 2; run_vm "$@" ;;
  *) say "unknown action $action"; usage 2 ;;
esac
