#!/usr/bin/env bash
# Load benchmark: `tools/call` of a GET tool through ferry (release build) against a fast local
# upstream (nginx answering from memory), beside the same upstream called directly and through
# nginx as a do-nothing reverse proxy (proxy_pass, keep-alive, one worker), in one run, at
# concurrency 1, 8 and 64, with wrk. Reports requests per second, p50/p99 latency and the CPU
# per call of ferry and of the nginx proxy's worker, and checks the targets:
#   - at concurrency 64, ferry's throughput is at least 0.8 of the nginx proxy's;
#   - at concurrency 64, ferry uses at most 20 µs of CPU per call;
#   - at concurrency 1, ferry's p50 is at most 100 µs above the direct p50.
# Everything listens on 127.0.0.1; each run lasts DURATION seconds (default 10), so the whole
# script takes about three minutes. Not part of CI. Installs wrk and nginx from Debian if
# absent.
#
# Usage: bench/load.sh            (DURATION=5 bench/load.sh for a quicker look)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
duration="${DURATION:-10}"
warmup="${WARMUP:-2}"
export BENCH_DIR="$here"

fail() { printf 'bench: %s\n' "$*" >&2; exit 1; }
case "$duration$warmup" in *[!0-9]*) fail "DURATION and WARMUP are whole seconds" ;; esac
[ "$duration" -ge 1 ] && [ "$duration" -le 60 ] || fail "DURATION must be 1 to 60 seconds"

# shellcheck source=common.sh
source "$here/common.sh"

start_proxy

# One call by hand first: the benchmark only means something if the call succeeds.
python3 - "$ferry_port" "$here/call.lua" <<'EOF' || fail "the benchmarked call does not succeed"
import json, re, sys, urllib.request
port, script = sys.argv[1], open(sys.argv[2]).read()
headers = dict(re.findall(r'wrk\.headers\["([^"]+)"\] = "([^"]+)"', script))
body = "".join(re.findall(r"'([^']*)'", script.split("wrk.body =", 1)[1].split("dofile")[0]))
request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body.encode(), headers, method="POST")
with urllib.request.urlopen(request, timeout=10) as response:
    answer = json.loads(response.read())
result = answer.get("result") or {}
if result.get("isError") or result.get("structuredContent") != {"id": 1, "name": "Rex", "tag": "dog"}:
    sys.exit(f"unexpected answer: {answer}")
EOF

run() { # run NAME CONNECTIONS SECONDS URL SCRIPT -> RESULT line
    local connections="$2" seconds="$3" url="$4" script="$5" threads=1
    [ "$connections" -gt 1 ] && threads=2
    wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 5s -s "$script" "$url" | grep '^RESULT'
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
# A process's CPU time so far (user + system), in clock ticks, from /proc.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# CPU per call in µs, from clock ticks spent and a wrk RESULT line.
per_call() {
    awk -v t="$1" -v hz="$ticks_per_second" -v n="$(field requests "$2")" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }'
}
ticks_per_second="$(getconf CLK_TCK)"

echo "==> warming up (${warmup}s each)" >&2
run ferry 8 "$warmup" "http://127.0.0.1:$ferry_port" "$here/call.lua" >/dev/null
run direct 8 "$warmup" "http://127.0.0.1:$upstream_port/pets/1" "$here/report.lua" >/dev/null
run proxy 8 "$warmup" "http://127.0.0.1:$proxy_port/pets/1" "$here/report.lua" >/dev/null

declare -A results
declare -A cpu
declare -A proxy_cpu
for connections in 1 8 64; do
    echo "==> concurrency $connections: ferry, the upstream directly, the nginx proxy (${duration}s each)" >&2
    before="$(cpu_ticks "$ferry_pid")"
    results[ferry,$connections]="$(run ferry "$connections" "$duration" "http://127.0.0.1:$ferry_port" "$here/call.lua")"
    # ferry's own CPU per call, in µs: what the gateway costs beyond waiting for the upstream.
    cpu[$connections]="$(per_call $(($(cpu_ticks "$ferry_pid") - before)) "${results[ferry,$connections]}")"
    results[direct,$connections]="$(run direct "$connections" "$duration" "http://127.0.0.1:$upstream_port/pets/1" "$here/report.lua")"
    before="$(cpu_ticks "$proxy_worker")"
    results[proxy,$connections]="$(run proxy "$connections" "$duration" "http://127.0.0.1:$proxy_port/pets/1" "$here/report.lua")"
    # What a proxy that only forwards costs per call on this machine, the same way.
    proxy_cpu[$connections]="$(per_call $(($(cpu_ticks "$proxy_worker") - before)) "${results[proxy,$connections]}")"
done

printf '\nferry %s, %s cores, %ss per run; latency in µs\n\n' "$("$FERRY_BIN" --version | cut -d' ' -f2)" "$(nproc)" "$duration"
printf '| concurrency | ferry req/s | ferry p50 | ferry p99 | ferry CPU/call | direct req/s | direct p50 | direct p99 | proxy req/s | proxy p50 | proxy p99 | proxy CPU/call | errors |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
bad=0
for connections in 1 8 64; do
    f="${results[ferry,$connections]}"
    d="${results[direct,$connections]}"
    p="${results[proxy,$connections]}"
    errors=0
    for r in "$f" "$d" "$p"; do errors=$((errors + $(field errors "$r") + $(field non2xx "$r"))); done
    [ "$errors" = 0 ] || bad=1
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$connections" \
        "$(field rps "$f")" "$(field p50_us "$f")" "$(field p99_us "$f")" "${cpu[$connections]}" \
        "$(field rps "$d")" "$(field p50_us "$d")" "$(field p99_us "$d")" \
        "$(field rps "$p")" "$(field p50_us "$p")" "$(field p99_us "$p")" "${proxy_cpu[$connections]}" "$errors"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
direct_ratio="$(ratio "$(field rps "${results[ferry,64]}")" "$(field rps "${results[direct,64]}")")"
proxy_ratio="$(ratio "$(field rps "${results[ferry,64]}")" "$(field rps "${results[proxy,64]}")")"
nginx_ratio="$(ratio "$(field rps "${results[proxy,64]}")" "$(field rps "${results[direct,64]}")")"
added=$(($(field p50_us "${results[ferry,1]}") - $(field p50_us "${results[direct,1]}")))
printf '\nconcurrency 64: ferry/proxy throughput = %s (target >= 0.80); ferry/direct = %s, proxy/direct = %s\n' \
    "$proxy_ratio" "$direct_ratio" "$nginx_ratio"
printf 'concurrency 64: ferry CPU per call = %s µs (target <= 20); the nginx proxy = %s µs\n' "${cpu[64]}" "${proxy_cpu[64]}"
printf 'concurrency 1: ferry p50 - direct p50 = %s µs (target <= 100)\n' "$added"
awk -v r="$proxy_ratio" 'BEGIN { exit !(r >= 0.8) }' || { echo "target missed: throughput against the proxy at concurrency 64"; bad=1; }
[ "${cpu[64]}" -le 20 ] || { echo "target missed: CPU per call at concurrency 64"; bad=1; }
[ "$added" -le 100 ] || { echo "target missed: added p50 latency at concurrency 1"; bad=1; }
[ "$bad" = 0 ] && echo "targets met"
exit "$bad"
