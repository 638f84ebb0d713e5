#!/usr/bin/env bash
# What shared state costs a call: `tools/call` of getPet (release build) against nginx
# answering from memory, as bench/load.sh calls it, three ways in one run: with no rate limit
# (bench/ferry.yaml), with a limit checked in the process (bench/ferry-limited.yaml: a limit
# that never refuses, so every call is checked and spent), and with the same limit kept in
# Redis (`--state`, Debian's redis-server on loopback, no persistence); each at concurrency 1,
# 8 and 64 with wrk. Reports requests per second, p50/p99 latency, ferry's CPU per call, the
# times per call a thread of ferry's went to sleep waiting (voluntary context switches: a
# round trip that wakes another of ferry's threads, and back, adds two) and, for Redis, its
# own CPU per call and the calls it read per read(2) (from INFO stats: how many round trips a
# connection carries at once, its pipelining).
# Everything listens on 127.0.0.1; each run lasts DURATION seconds (default 10). Not part of
# CI. Installs wrk, nginx and redis-server from Debian if absent.
#
# Usage: bench/state.sh            (DURATION=5 bench/state.sh for a quicker look; FERRY_FLAGS
#                                   adds flags to every ferry, as `--workers 1`)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
duration="${DURATION:-10}"
warmup="${WARMUP:-2}"
export BENCH_DIR="$here"

fail() { printf 'bench: %s\n' "$*" >&2; exit 1; }
case "$duration$warmup" in *[!0-9]*) fail "DURATION and WARMUP are whole seconds" ;; esac
[ "$duration" -ge 1 ] && [ "$duration" -le 60 ] || fail "DURATION must be 1 to 60 seconds"

bench_needs=(wrk nginx redis-server)
# shellcheck source=setup.sh
source "$here/setup.sh"
start_upstream

redis_port="$(free_port)"
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$work" \
    >"$work/redis.log" 2>&1 &
redis_pid=$!
pids+=("$redis_pid")
wait_port "$redis_port" || fail "redis-server did not start: $(cat "$work/redis.log")"
redis_stat() { redis-cli -p "$redis_port" info stats | tr -d '\r' | sed -n "s/^$1://p"; }
# The EVALSHA round trips Redis has answered (one per call).
evalshas() {
    redis-cli -p "$redis_port" info commandstats | tr -d '\r' \
        | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\).*/\1/p' | grep . || echo 0
}

run() { # run CONNECTIONS SECONDS PORT -> RESULT line
    local connections="$1" seconds="$2" port="$3" threads=1
    [ "$connections" -gt 1 ] && threads=2
    wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 5s -s "$here/call.lua" \
        "http://127.0.0.1:$port" | grep '^RESULT'
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Voluntary context switches of every thread of process $1.
sleeps() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'; }
per_call() {
    awk -v t="$1" -v hz="$ticks_per_second" -v n="$(field requests "$2")" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'
}
ticks_per_second="$(getconf CLK_TCK)"

printf '\nferry %s, %s cores, %ss per run, load average %s; latency in µs\n\n' \
    "$("$FERRY_BIN" --version | cut -d' ' -f2)" "$(nproc)" "$duration" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| state | concurrency | req/s | p50 | p99 | ferry CPU/call | ferry sleeps/call | Redis CPU/call | calls per Redis read | errors |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
bad=0
for mode in none local redis; do
    config="$here/ferry-limited.yaml"
    read -r -a flags <<<"${FERRY_FLAGS:-}"
    case "$mode" in
        none) config="$here/ferry.yaml" ;;
        redis) flags+=(--state "redis://127.0.0.1:$redis_port") ;;
    esac
    port="$(free_port)"
    RUST_LOG=warn "$FERRY_BIN" serve --config "$config" --upstream "http://127.0.0.1:$upstream_port" \
        --listen "127.0.0.1:$port" "${flags[@]}" 2>"$work/ferry-$mode.log" &
    pid=$!
    pids+=("$pid")
    wait_port "$port" || fail "ferry did not start: $(cat "$work/ferry-$mode.log")"
    run 8 "$warmup" "$port" >/dev/null
    for connections in 1 8 64; do
        before="$(cpu_ticks "$pid")"
        sleeps_before="$(sleeps "$pid")"
        redis_before="$(cpu_ticks "$redis_pid")"
        calls_before="$(evalshas)"
        reads_before="$(redis_stat total_reads_processed)"
        result="$(run "$connections" "$duration" "$port")"
        ferry_cpu="$(per_call $(($(cpu_ticks "$pid") - before)) "$result")"
        ferry_sleeps="$(awk -v s=$(($(sleeps "$pid") - sleeps_before)) -v n="$(field requests "$result")" \
            'BEGIN { printf "%.2f", s / n }')"
        redis_cpu="-"
        per_read="-"
        if [ "$mode" = redis ]; then
            redis_cpu="$(per_call $(($(cpu_ticks "$redis_pid") - redis_before)) "$result")"
            per_read="$(awk -v c="$(($(evalshas) - calls_before))" \
                -v r="$(($(redis_stat total_reads_processed) - reads_before))" 'BEGIN { printf "%.2f", c / r }')"
        fi
        errors=$(($(field errors "$result") + $(field non2xx "$result")))
        [ "$errors" = 0 ] || bad=1
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$mode" "$connections" \
            "$(field rps "$result")" "$(field p50_us "$result")" "$(field p99_us "$result")" \
            "$ferry_cpu" "$ferry_sleeps" "$redis_cpu" "$per_read" "$errors"
    done
    if grep -q 'rate limit not checked' "$work/ferry-$mode.log"; then
        echo "the shared state failed during the run: $(grep -c 'rate limit not checked' "$work/ferry-$mode.log") calls" >&2
        bad=1
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
done
exit "$bad"
