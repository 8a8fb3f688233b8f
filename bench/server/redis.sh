# Sourced by the server benchmarks: starts the redis-server they compare against.
#   start_redis FIRST_PORT [redis-server flags...]   (sets `rport`; logs to "$work/redis.log")
# Tries ports from FIRST_PORT up and takes the first on which this redis-server itself comes up
# (its log says it is ready and it answers PING): a port taken by another process would otherwise
# leave redis-benchmark retrying its connection for ever.
start_redis() {
    local first="$1"; shift
    for rport in $(seq "$first" $(( first + 20 ))); do
        redis-server --port "$rport" --daemonize no "$@" > "$work/redis.log" 2>&1 &
        local pid=$!
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            if grep -q 'Ready to accept connections' "$work/redis.log" && redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG; then
                return 0
            fi
            sleep 0.1
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    echo "could not start redis-server on ports $first..$(( first + 20 )); see $work/redis.log" >&2
    exit 1
}

# Each benchmark run is bounded: a server that stops answering fails the script instead of
# hanging it.
BENCH_TIMEOUT="${BENCH_TIMEOUT:-300}"
