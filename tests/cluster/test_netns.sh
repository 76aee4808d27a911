#!/usr/bin/env bash
# test_netns.sh - Sluice across "hosts": two node daemons, each in a network
# namespace of its own with its own address, and the shell in a third,
# joined by veth pairs on a bridge (test traffic never leaves them).  The
# cluster's results must equal one process's, with late merge and with
# repartitioning between the daemons over TCP.
#
# Needs root and iproute2 (ip netns); skipped (exit 77) otherwise.
#
#   test_netns.sh SLUICE SOURCE_DIR
set -euo pipefail
SLUICE=$1
cd "$2"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "skipped: needs root and ip (iproute2)"; exit 77
fi
tag=s$$
br=${tag}br
net=10.$((200 + $$ % 50)).$(( $$ % 250 ))
tmp=$(mktemp -d)
# The cluster secret every daemon and shell proves (auth.h).
SECRET=$tmp/cluster.secret
head -c 32 /dev/urandom | base64 > "$SECRET"
chmod 600 "$SECRET"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for n in a b c; do ip netns del "${tag}$n" 2>/dev/null || true; done
  ip link del "$br" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

ip netns add "${tag}a" 2>/dev/null || { echo "skipped: cannot create network namespaces"; exit 77; }
ip netns add "${tag}b"
ip netns add "${tag}c"
ip link add "$br" type bridge || { echo "skipped: no bridge support"; exit 77; }
ip link set "$br" up
i=1
for n in a b c; do
  ip link add "${tag}h$n" type veth peer name "${tag}n$n"
  ip link set "${tag}h$n" master "$br" up
  ip link set "${tag}n$n" netns "${tag}$n"
  ip -n "${tag}$n" addr add "$net.$i/24" dev "${tag}n$n"
  ip -n "${tag}$n" link set "${tag}n$n" up
  ip -n "${tag}$n" link set lo up
  i=$((i + 1))
done
A=$net.1 B=$net.2

ip netns exec "${tag}a" "$SLUICE" node --secret-file "$SECRET" --listen "$A:7070" 2>"$tmp/a.log" & pids+=($!)
ip netns exec "${tag}b" "$SLUICE" node --secret-file "$SECRET" --listen "$B:7070" 2>"$tmp/b.log" & pids+=($!)
sleep 0.5
for addr in "$A" "$B"; do
  ip netns exec "${tag}c" timeout 5 bash -c "exec 3<>/dev/tcp/$addr/7070" 2>/dev/null ||
    fail "the shell's namespace cannot reach the daemon at $addr:7070"
done

Q="CREATE TABLE r (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'ro', 'key.range' = '500', 'events.num' = '300000');
SELECT key, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts),
  INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end;"
"$SLUICE" -m csv -c "$Q" 2>/dev/null | sort > "$tmp/local"
[ "$(wc -l < "$tmp/local")" -gt 100 ] || fail "no rows locally"
for strategy in late-merge repartition; do
  ip netns exec "${tag}c" "$SLUICE" -m csv --secret-file "$SECRET" --cluster "$A:7070,$B:7070" \
    -c "SET 'sluice.strategy' = '$strategy'; $Q" 2>"$tmp/err" | sort > "$tmp/$strategy" ||
    { cat "$tmp/err"; fail "$strategy across namespaces failed"; }
  cmp -s "$tmp/local" "$tmp/$strategy" || { diff "$tmp/local" "$tmp/$strategy" | head; fail "$strategy rows differ"; }
  echo "ok   $strategy: $(wc -l < "$tmp/local") rows equal, shell in one namespace, daemons at $A and $B"
done
