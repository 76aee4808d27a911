#!/usr/bin/env bash
# verbs_bench.sh - run INSIDE the soft-RoCE VM (tests/rdma/vm.sh): the verbs
# channel against ib_write_bw (perftest) at the same message size in the
# same VM.  ib_write_bw: server and client on the device's address, RC
# WRITEs of SIZE bytes (default 65536); the channel: `channel_throughput
# --verbs-one SIZE`, one channel of SIZE-byte slots moving untouched
# payloads.  Both in perftest's MB/s (2^20 bytes per second); RUNS (default
# 5) runs each, interleaved, medians compared.  The target: the channel at
# >= 80% of ib_write_bw.
#
#   tests/rdma/verbs_bench.sh [build dir]   (env: SIZE, RUNS, MIB, ITERS,
#                                            CREDITS, DEV, SLUICE_RDMA_ADDR)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${SLUICE_BUILD_DIR:-$root/build}}
size=${SIZE:-65536}
runs=${RUNS:-5}
mib=${MIB:-256}                            # per channel run
iters=${ITERS:-$((mib * 1048576 / size))}  # the same bytes for ib_write_bw
credits=${CREDITS:-0}                      # 0 = the transport's default
dev=${DEV:-$(rdma link show | awk '/state ACTIVE/ {split($2, a, "/"); print a[1]; exit}')}
netdev=$(rdma link show "$dev/1" | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
addr=${SLUICE_RDMA_ADDR:-$(ip -4 -o addr show dev "$netdev" | awk '{split($4, a, "/"); print a[1]; exit}')}
addr=${addr%%:*}
export SLUICE_RDMA_ADDR=$addr
command -v ib_write_bw >/dev/null || { echo "verbs_bench: ib_write_bw (perftest) missing" >&2; exit 2; }
echo "verbs_bench: $dev ($netdev, $addr), $size B, $runs runs, $iters x $size B per ib_write_bw run, $mib MiB per channel run"

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

ibw=() ch=()
for i in $(seq 1 "$runs"); do
  port=$((18515 + i))
  ib_write_bw -d "$dev" -s "$size" -n "$iters" -F -p "$port" >"${TMPDIR:-/tmp}/ibw_srv.$$" 2>&1 &
  srv=$!
  sleep 1
  out=$(ib_write_bw -d "$dev" -s "$size" -n "$iters" -F -p "$port" "$addr" 2>&1)
  wait "$srv" || true
  bw=$(echo "$out" | awk -v s="$size" '$1 == s && NF >= 5 {print $4}' | tail -1)
  [ -n "$bw" ] || { echo "$out"; cat "${TMPDIR:-/tmp}/ibw_srv.$$"; echo "verbs_bench: ib_write_bw failed" >&2; exit 1; }
  ibw+=("$bw")
  c=$("$build/bench/channel_throughput" --verbs-one "$size" "$mib" "$credits" 1 |
      sed -n "s/^verbs $size B: \([0-9.]*\) MB.*/\1/p")
  [ -n "$c" ] || { echo "verbs_bench: channel_throughput --verbs-one failed" >&2; exit 1; }
  ch+=("$c")
  echo "run $i: ib_write_bw $bw MB/s, verbs channel $c MB/s"
done
rm -f "${TMPDIR:-/tmp}/ibw_srv.$$"
ib=$(printf '%s\n' "${ibw[@]}" | median)
vc=$(printf '%s\n' "${ch[@]}" | median)
echo "ib_write_bw $size B: $ib MB/s (median of $runs)"
echo "verbs channel $size B: $vc MB/s (median of $runs)"
awk -v a="$vc" -v b="$ib" 'BEGIN {printf "ratio: %.1f%% of ib_write_bw (target >= 80%%)\n", 100 * a / b}'
