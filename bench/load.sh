#!/usr/bin/env bash
# Load benchmark: `tools/call` of a GET tool through ferry (release build) against a fast local
# upstream (nginx answering from memory), and the same upstream called directly, in one run, at
# concurrency 1, 8 and 64, with wrk. Reports requests per second and p50/p99 latency, and checks
# issue 3's targets:
#   - at concurrency 64, ferry's throughput is at least half of the direct upstream's;
#   - at concurrency 1, ferry's p50 is at most 100 µs above the direct p50.
# Everything listens on 127.0.0.1; each run lasts DURATION seconds (default 10), so the whole
# script takes about two minutes. Not part of CI. Installs wrk and nginx from Debian if absent.
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
# ferry's CPU time so far (user + system), in clock ticks, from /proc.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$ferry_pid/stat"; }
ticks_per_second="$(getconf CLK_TCK)"

echo "==> warming up (${warmup}s each)" >&2
run ferry 8 "$warmup" "http://127.0.0.1:$ferry_port" "$here/call.lua" >/dev/null
run direct 8 "$warmup" "http://127.0.0.1:$upstream_port/pets/1" "$here/report.lua" >/dev/null

declare -A results
declare -A cpu
for connections in 1 8 64; do
    echo "==> concurrency $connections: ferry, then the upstream directly (${duration}s each)" >&2
    before="$(cpu_ticks)"
    results[ferry,$connections]="$(run ferry "$connections" "$duration" "http://127.0.0.1:$ferry_port" "$here/call.lua")"
    spent=$(($(cpu_ticks) - before))
    # ferry's own CPU per call, in µs: what the gateway costs beyond waiting for the upstream.
    cpu[$connections]="$(awk -v t="$spent" -v hz="$ticks_per_second" -v n="$(field requests "${results[ferry,$connections]}")" \
        'BEGIN { printf "%.0f", t / hz * 1e6 / n }')"
    results[direct,$connections]="$(run direct "$connections" "$duration" "http://127.0.0.1:$upstream_port/pets/1" "$here/report.lua")"
done

printf '\nferry %s, %s cores, %ss per run; latency in µs\n\n' "$("$FERRY_BIN" --version | cut -d' ' -f2)" "$(nproc)" "$duration"
printf '| concurrency | ferry req/s | ferry p50 | ferry p99 | ferry CPU/call | direct req/s | direct p50 | direct p99 | errors |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
bad=0
for connections in 1 8 64; do
    f="${results[ferry,$connections]}"
    d="${results[direct,$connections]}"
    errors=$(($(field errors "$f") + $(field non2xx "$f") + $(field errors "$d") + $(field non2xx "$d")))
    [ "$errors" = 0 ] || bad=1
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$connections" \
        "$(field rps "$f")" "$(field p50_us "$f")" "$(field p99_us "$f")" "${cpu[$connections]}" \
        "$(field rps "$d")" "$(field p50_us "$d")" "$(field p99_us "$d")" "$errors"
done

ratio="$(awk -v f="$(field rps "${results[ferry,64]}")" -v d="$(field rps "${results[direct,64]}")" 'BEGIN { printf "%.2f", f / d }')"
added=$(($(field p50_us "${results[ferry,1]}") - $(field p50_us "${results[direct,1]}")))
printf '\nconcurrency 64: ferry/direct throughput = %s (target >= 0.50)\n' "$ratio"
printf 'concurrency 1: ferry p50 - direct p50 = %s µs (target <= 100)\n' "$added"
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5) }' || { echo "target missed: throughput at concurrency 64"; bad=1; }
[ "$added" -le 100 ] || { echo "target missed: added p50 latency at concurrency 1"; bad=1; }
[ "$bad" = 0 ] && echo "targets met"
exit "$bad"
