#!/usr/bin/env bash
# Runs the C CSR floor and engram's workloads harness alternately on one data folder, ROUNDS times,
# so ratios come from the same minutes on this noisy machine. Prints every JSON line, tagged with
# the round. Usage: bench/compare.sh DATA_DIR [ROUNDS]   (data from ../shared/workloads/gen.py)
set -euo pipefail
data=${1:?usage: bench/compare.sh DATA_DIR [ROUNDS]}
rounds=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
floor_src="$here/../shared/workloads/floor/csr_floor.c"
gcc -O2 -march=native -o /tmp/engram-floor "$floor_src" 2>/dev/null
cargo build --release -q -p engram-bench --bin workloads --manifest-path "$here/Cargo.toml"
sleep 5 # let the machine settle after the build
for r in $(seq 1 "$rounds"); do
  /tmp/engram-floor "$data" | sed "s/^/round $r /"
  MIMALLOC_PURGE_DELAY=0 "$here/target/release/workloads" --data "$data" | sed "s/^/round $r /"
done
