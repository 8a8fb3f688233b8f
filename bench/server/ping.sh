#!/usr/bin/env bash
# engram serve against redis-server, same redis-benchmark flags, alternating rounds; prints each
# round's requests per second and the medians. Bench only (needs redis-server and redis-benchmark,
# Debian's redis-server and redis-tools); never part of CI.
#   bench/server/ping.sh [ROUNDS] [EXTRA redis-benchmark FLAGS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"; shift || true
flags=(-t ping -P 16 -c 50 -n 2000000 -q "$@")
engram=target/release/engram
[ -x "$engram" ] || cargo build --release -p engram-cli
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$engram" serve "$work/db" --port 0 > "$work/engram.out" 2> "$work/engram.log" &
for _ in $(seq 100); do grep -q listening "$work/engram.out" && break; sleep 0.1; done
eport="$(sed -n 's/listening on .*:\([0-9]*\)/\1/p' "$work/engram.out")"
. bench/server/redis.sh
start_redis $(( eport + 1 )) --save '' --appendonly no
rps() { timeout "$BENCH_TIMEOUT" redis-benchmark -p "$1" "${flags[@]}" 2>/dev/null | tr '\r' '\n' | awk '/requests per second/ {v=$2} END {print v}'; }
e=(); r=()
for i in $(seq "$rounds"); do
    e+=("$(rps "$eport")"); r+=("$(rps "$rport")")
    echo "round $i: engram ${e[-1]} rps, redis ${r[-1]} rps"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
me="$(median "${e[@]}")"; mr="$(median "${r[@]}")"
echo "median: engram $me rps, redis $mr rps, ratio $(awk -v a="$me" -v b="$mr" 'BEGIN {printf "%.2f", a/b}')"
