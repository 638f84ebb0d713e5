#!/usr/bin/env bash
# Where a call's CPU goes, apart from the load around it: ferry (one worker) and then the
# nginx proxy of bench/load.sh, each alone on CPU 0, with the upstream nginx and wrk on CPU 1,
# at concurrency 64 for DURATION seconds (default 5) each. Reports requests per second and the
# user and system CPU per call of each, from /proc, and ferry's involuntary context switches
# and minor page faults per call. Needs two cores and taskset; everything listens on
# 127.0.0.1. Not part of CI.
#
# Usage: bench/pinned.sh    (FERRY_BIN=path/to/ferry to measure a given binary)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
duration="${DURATION:-5}"
export BENCH_DIR="$here"
fail() { printf 'bench: %s\n' "$*" >&2; exit 1; }
case "$duration" in *[!0-9]* | "") fail "DURATION is whole seconds" ;; esac
[ "$(nproc)" -ge 2 ] || fail "needs two cores"
command -v taskset >/dev/null || fail "needs taskset (util-linux)"
command -v wrk >/dev/null || fail "needs wrk (apt-get install wrk)"
# shellcheck source=setup.sh
source "$here/setup.sh"
start_upstream taskset -c 1

# user ticks, system ticks, minor faults, involuntary switches (all threads) of process $1.
usage() {
    local switches=0 task
    for task in /proc/"$1"/task/*; do
        switches=$((switches + $(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$task/status")))
    done
    awk -v switches="$switches" '{ print $14, $15, $10, switches }' "/proc/$1/stat"
}

# measure NAME PID URL SCRIPT: a warm-up, then one measured run; prints one line.
measure() {
    local name="$1" pid="$2" url="$3" script="$4" before after result
    taskset -c 1 wrk -t1 -c64 -d2s -s "$script" "$url" >/dev/null
    before="$(usage "$pid")"
    result="$(taskset -c 1 wrk -t1 -c64 -d"${duration}s" --timeout 5s -s "$script" "$url" | grep '^RESULT')"
    after="$(usage "$pid")"
    awk -v name="$name" -v hz="$(getconf CLK_TCK)" -v before="$before" -v after="$after" \
        -v result="$result" 'BEGIN {
        split(before, b, " "); split(after, a, " ")
        match(result, /requests=[0-9]+/); n = substr(result, RSTART + 9, RLENGTH - 9)
        match(result, /rps=[0-9]+/); rps = substr(result, RSTART + 4, RLENGTH - 4)
        printf "%s: %d req/s, CPU per call %.1f µs (user %.1f, system %.1f), involuntary switches %.3f and minor faults %.3f per call\n",
            name, rps, (a[1] + a[2] - b[1] - b[2]) / hz * 1e6 / n, (a[1] - b[1]) / hz * 1e6 / n,
            (a[2] - b[2]) / hz * 1e6 / n, (a[4] - b[4]) / n, (a[3] - b[3]) / n
    }'
}

ferry_port="$(free_port)"
RUST_LOG=warn taskset -c 0 "$FERRY_BIN" serve --config "$here/ferry.yaml" --workers 1 \
    --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$ferry_port" 2>"$work/ferry.log" &
ferry_pid=$!
pids+=("$ferry_pid")
wait_port "$ferry_port" || fail "ferry did not start: $(cat "$work/ferry.log")"
measure ferry "$ferry_pid" "http://127.0.0.1:$ferry_port" "$here/call.lua"
kill "$ferry_pid"

start_proxy taskset -c 0
measure "nginx proxy (its worker)" "$proxy_worker" "http://127.0.0.1:$proxy_port/pets/1" "$here/report.lua"
