#!/usr/bin/env bash
# The access history's cost: W1 over RESP from 50 connections against two servers on copies of one
# database, one with `audit on` (the default) and one with `audit off`, in alternating rounds; prints
# each round's throughput and the median ratio on / off. Bench only, never part of CI.
#   bench/server/audit.sh DB_DIR DATA_DIR [ROUNDS]
# DB_DIR: a database holding the workload's data in `default` (`engram import DB --entities
# DATA/entities.csv --claims DATA/claims.csv`); DATA_DIR: the folder `gen.py` wrote (queries.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
db="$1"; data="$2"; rounds="${3:-5}"
engram=target/release/engram; wire=target/release/wire
[ -x "$engram" ] && [ -x "$wire" ] || cargo build --release -p engram-cli -p engram-bench
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cp -r "$db" "$work/on"; cp -r "$db" "$work/off"
rm -rf "$work/on/audit" "$work/off/audit"
"$engram" config "$work/on" audit on > /dev/null
[ -n "${AUDIT_FLUSH_MS:-}" ] && "$engram" config "$work/on" audit_flush_ms "$AUDIT_FLUSH_MS" > /dev/null
"$engram" config "$work/off" audit off > /dev/null
start() {
    "$engram" serve "$work/$1" --port 0 > "$work/$1.out" 2> "$work/$1.log" &
    for _ in $(seq 600); do grep -q listening "$work/$1.out" && break; sleep 0.1; done
    sed -n 's/listening on \(.*\)/\1/p' "$work/$1.out"
}
on="$(start on)"; off="$(start off)"
rps() { "$wire" --addr "$1" --data "$data" --connections 50 --requests 20000 --only W1_one_hop | sed -n 's/.*"throughput_rps":\([0-9.]*\).*/\1/p'; }
a=(); b=()
for i in $(seq "$rounds"); do
    a+=("$(rps "$on")"); b+=("$(rps "$off")")
    echo "round $i: audit on ${a[-1]} rps, audit off ${b[-1]} rps"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ma="$(median "${a[@]}")"; mb="$(median "${b[@]}")"
echo "median: on $ma rps, off $mb rps, on/off $(awk -v x="$ma" -v y="$mb" 'BEGIN {printf "%.3f", x/y}')"
echo "records: $("$engram" audit "$work/on" | wc -l) with audit on, $("$engram" audit "$work/off" | wc -l) with it off"
