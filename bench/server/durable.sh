#!/usr/bin/env bash
# Durable writes over the wire, 16 clients: `ENGRAM.QUERY dur "CREATE (:W)"` against engram serve
# (fsync before each reply) beside `SET` on redis-server with `appendfsync always`, the same
# redis-benchmark flags, alternating rounds; prints each round and the medians, and engram's
# commits per fsync from INFO. Bench only (Debian's redis-server and redis-tools); never in CI.
# The access history is on (engram's default: a write's record is durable before its reply, carried
# in the same WAL write as the write); AUDIT=off runs engram with it off, like Redis, which keeps none.
#   [AUDIT=off] bench/server/durable.sh [ROUNDS] [REQUESTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"; n="${2:-20000}"
engram=target/release/engram
[ -x "$engram" ] || cargo build --release -p engram-cli
work="$(mktemp -d "${TMPDIR:-$PWD}/durable.XXXXXX")"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$engram" init "$work/db" > /dev/null
"$engram" config "$work/db" audit "${AUDIT:-on}" > /dev/null
"$engram" serve "$work/db" --port 0 > "$work/engram.out" 2> "$work/engram.log" &
for _ in $(seq 100); do grep -q listening "$work/engram.out" && break; sleep 0.1; done
eport="$(sed -n 's/listening on .*:\([0-9]*\)/\1/p' "$work/engram.out")"
. bench/server/redis.sh
mkdir -p "$work/redis"
start_redis $(( eport + 1 )) --dir "$work/redis" --save '' --appendonly yes --appendfsync always
rps() { timeout "$BENCH_TIMEOUT" redis-benchmark -p "$1" -c 16 -n "$n" -q "${@:2}" 2>/dev/null | tr '\r' '\n' | sed -n 's/.* \([0-9.]*\) requests per second.*/\1/p' | tail -1; }
e=(); r=()
for i in $(seq "$rounds"); do
    e+=("$(rps "$eport" ENGRAM.QUERY dur "CREATE (:W)")"); r+=("$(rps "$rport" -t set)")
    echo "round $i: engram ${e[-1]} rps, redis ${r[-1]} rps"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
me="$(median "${e[@]}")"; mr="$(median "${r[@]}")"
echo "median: engram $me rps, redis $mr rps, ratio $(awk -v a="$me" -v b="$mr" 'BEGIN {printf "%.2f", a/b}')"
redis-cli -p "$eport" INFO persistence | tr -d '\r' | grep -E 'wal_' || true
