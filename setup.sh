#!/usr/bin/env bash
# setup.sh - the first of the README's two commands.
#
# On a fresh Debian 12 machine: installs the Debian packages Sluice needs,
# configures and builds it in ./build, then runs the main job (the shell on
# examples/quickstart.sql).  Safe to run again: packages already present are
# not reinstalled, and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")"

# Every dependency, by Debian package name (README.md says what each is for).
PACKAGES=(
  build-essential cmake pkg-config   # compiler and build
  lemon                              # SQLite's parser generator (grammar)
  llvm-dev                           # LLVM C API (JIT)
  libibverbs-dev librdmacm-dev       # rdma-core (RDMA transport)
  libedit-dev                        # line editing in the shell
  libsqlite3-dev sqlite3             # SQLite sink; sqlite3 is the test oracle
  libpcre2-dev                       # REGEXP_* functions
  libcmocka-dev                      # C unit tests
  clang libclang-rt-14-dev           # libFuzzer fuzz targets (tests/fuzz.sh)
  valgrind                           # memcheck on a subset (tests/valgrind.sh)
  libsodium-dev                      # the cluster secret's HMAC (node daemons)
  tmux                               # drives the shell in a real terminal (tests)
  gnuplot-nox                        # bench/run's charts (docs/img/*.png)
  time                               # /usr/bin/time -v: peak memory in bench/run
  # The soft-RoCE VM of tests/rdma (vm.sh): RDMA tested on real verbs.
  qemu-system-x86                    # runs the VM (KVM when it works, else TCG)
  busybox-static                     # the VM's /init (replaces busybox)
  cpio kmod xz-utils                 # build its initramfs from Debian's kernel
  rdma-core ibverbs-providers        # RDMA user space; librxe, rxe's verbs provider
  iproute2                           # "rdma link add" creates the rxe device
  ibverbs-utils perftest             # ibv_devices, ib_write_bw (smoke test, baseline)
  bc                                 # the benchmark scripts' arithmetic
  linux-perf                         # bench/cycles.sh: CPU per record, by function
)

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] ||
    missing+=("$p")
done
# The benchmarks' DuckDB peer runs on Node (bench/peers, npm packages
# pinned there): Debian's nodejs and npm, unless a Node is there already.
command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The benchmarks' DuckDB peer, as pinned in bench/peers/package-lock.json
# (npm registry), so that bench/run and its test need no network later.
[ -d bench/peers/node_modules/@duckdb/node-api ] ||
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error)

# Warnings are errors in CI (CI=true); a user's build only warns.
WERROR=OFF
if [ "${CI:-}" = "true" ]; then WERROR=ON; fi
cmake -S . -B build -DSLUICE_WERROR="$WERROR" >/dev/null
cmake --build build -j"$(nproc)"

echo "setup: build done; running the main job: build/sluice examples/quickstart.sql"
./build/sluice examples/quickstart.sql
