#!/usr/bin/env bash
# Load benchmark: `tools/call` of a GET tool through ferry (release build) against a fast local
# upstream (nginx answering from memory), beside the same upstream called directly and through
# nginx as a do-nothing reverse proxy (proxy_pass, keep-alive, one worker), in one run, at
# concurrency 1, 8 and 64, with wrk; on two paths: the plain one (the upstream over HTTP) and
# the TLS one (the same answer from an HTTPS upstream, nginx with a certificate made for the
# run and keep-alive; ferry and the proxy both check it against the run's CA and keep their
# sessions). Reports requests per second, p50/p99 latency and the CPU per call of ferry and
# of the nginx proxy's worker, and checks the targets, stated against the proxy in the same
# run (a shared machine cannot show an absolute CPU figure):
#   - at concurrency 64, on each path, ferry's throughput is at least 0.85 of the proxy's;
#   - at concurrency 64, on each path, ferry's CPU per call is at most 1.3 times the proxy's;
#   - at concurrency 1, on the plain path, ferry's p50 is at most 100 µs above the direct p50.
# Everything listens on 127.0.0.1; each run lasts DURATION seconds (default 10), so the whole
# script takes about six minutes. Not part of CI. Installs wrk and nginx from Debian if
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
make_certificates
start_tls_upstream
start_tls_proxy
# ferry on the TLS path: the platform's trust store is the run's CA (SSL_CERT_FILE).
ferry_tls_port="$(free_port)"
SSL_CERT_FILE="$work/tls/ca.crt" RUST_LOG="${RUST_LOG:-warn}" "$FERRY_BIN" serve \
    --config "$here/ferry.yaml" --upstream "https://127.0.0.1:$tls_upstream_port" \
    --listen "127.0.0.1:$ferry_tls_port" 2>"$work/ferry-tls.log" &
ferry_tls_pid=$!
pids+=("$ferry_tls_pid")
wait_port "$ferry_tls_port" || fail "ferry (TLS path) did not start: $(cat "$work/ferry-tls.log")"

# One call by hand first on each path: the benchmark only means something if the call
# succeeds.
for port in "$ferry_port" "$ferry_tls_port"; do
    python3 - "$port" "$here/call.lua" <<'EOF' || fail "the benchmarked call does not succeed (port $port)"
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
done

run() { # run CONNECTIONS SECONDS URL SCRIPT -> RESULT line
    local connections="$1" seconds="$2" url="$3" script="$4" threads=1
    [ "$connections" -gt 1 ] && threads=2
    wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 5s -s "$script" "$url" | grep '^RESULT'
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
# A process's CPU time so far (user + system), in clock ticks, from /proc.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# CPU per call in µs, from clock ticks spent and a wrk RESULT line.
per_call() {
    awk -v t="$1" -v hz="$ticks_per_second" -v n="$(field requests "$2")" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }'
}
ticks_per_second="$(getconf CLK_TCK)"

# Each path: ferry's port and pid, the upstream's URL, the proxy's port and worker.
paths=(plain tls)
declare -A ferry_at=([plain]="$ferry_port" [tls]="$ferry_tls_port")
declare -A ferry_process=([plain]="$ferry_pid" [tls]="$ferry_tls_pid")
declare -A direct_url=([plain]="http://127.0.0.1:$upstream_port/pets/1" [tls]="https://127.0.0.1:$tls_upstream_port/pets/1")
declare -A proxy_at=([plain]="$proxy_port" [tls]="$tls_proxy_port")
declare -A proxy_process=([plain]="$proxy_worker" [tls]="$tls_proxy_worker")

echo "==> warming up (${warmup}s each)" >&2
for path in "${paths[@]}"; do
    run 8 "$warmup" "http://127.0.0.1:${ferry_at[$path]}" "$here/call.lua" >/dev/null
    run 8 "$warmup" "${direct_url[$path]}" "$here/report.lua" >/dev/null
    run 8 "$warmup" "http://127.0.0.1:${proxy_at[$path]}/pets/1" "$here/report.lua" >/dev/null
done

declare -A results
declare -A cpu
declare -A proxy_cpu
for connections in 1 8 64; do
    for path in "${paths[@]}"; do
        echo "==> concurrency $connections, $path path: ferry, the upstream directly, the nginx proxy (${duration}s each)" >&2
        before="$(cpu_ticks "${ferry_process[$path]}")"
        results[ferry,$path,$connections]="$(run "$connections" "$duration" "http://127.0.0.1:${ferry_at[$path]}" "$here/call.lua")"
        # ferry's own CPU per call, in µs: what the gateway costs beyond waiting for the upstream.
        cpu[$path,$connections]="$(per_call $(($(cpu_ticks "${ferry_process[$path]}") - before)) "${results[ferry,$path,$connections]}")"
        results[direct,$path,$connections]="$(run "$connections" "$duration" "${direct_url[$path]}" "$here/report.lua")"
        before="$(cpu_ticks "${proxy_process[$path]}")"
        results[proxy,$path,$connections]="$(run "$connections" "$duration" "http://127.0.0.1:${proxy_at[$path]}/pets/1" "$here/report.lua")"
        # What a proxy that only forwards costs per call on this machine, the same way.
        proxy_cpu[$path,$connections]="$(per_call $(($(cpu_ticks "${proxy_process[$path]}") - before)) "${results[proxy,$path,$connections]}")"
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
bad=0
printf '\nferry %s, %s cores, %ss per run; latency in µs, CPU per call in µs\n' "$("$FERRY_BIN" --version | cut -d' ' -f2)" "$(nproc)" "$duration"
for path in "${paths[@]}"; do
    printf '\n%s path\n\n' "$path"
    printf '| concurrency | ferry req/s | ferry p50 | ferry p99 | ferry CPU/call | direct req/s | direct p50 | direct p99 | proxy req/s | proxy p50 | proxy p99 | proxy CPU/call | errors |\n'
    printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
    for connections in 1 8 64; do
        f="${results[ferry,$path,$connections]}"
        d="${results[direct,$path,$connections]}"
        p="${results[proxy,$path,$connections]}"
        errors=0
        for r in "$f" "$d" "$p"; do errors=$((errors + $(field errors "$r") + $(field non2xx "$r"))); done
        [ "$errors" = 0 ] || bad=1
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$connections" \
            "$(field rps "$f")" "$(field p50_us "$f")" "$(field p99_us "$f")" "${cpu[$path,$connections]}" \
            "$(field rps "$d")" "$(field p50_us "$d")" "$(field p99_us "$d")" \
            "$(field rps "$p")" "$(field p50_us "$p")" "$(field p99_us "$p")" "${proxy_cpu[$path,$connections]}" "$errors"
    done
done
echo
for path in "${paths[@]}"; do
    throughput="$(ratio "$(field rps "${results[ferry,$path,64]}")" "$(field rps "${results[proxy,$path,64]}")")"
    cpu_ratio="$(ratio "${cpu[$path,64]}" "${proxy_cpu[$path,64]}")"
    printf '%s path, concurrency 64: ferry/proxy throughput = %s (target >= 0.85), CPU per call = %s of the proxy'"'"'s (target <= 1.30); ferry/direct throughput = %s\n' \
        "$path" "$throughput" "$cpu_ratio" \
        "$(ratio "$(field rps "${results[ferry,$path,64]}")" "$(field rps "${results[direct,$path,64]}")")"
    awk -v r="$throughput" 'BEGIN { exit !(r >= 0.85) }' || { echo "target missed: throughput against the proxy at concurrency 64, $path path"; bad=1; }
    awk -v r="$cpu_ratio" 'BEGIN { exit !(r <= 1.3) }' || { echo "target missed: CPU per call against the proxy at concurrency 64, $path path"; bad=1; }
done
added=$(($(field p50_us "${results[ferry,plain,1]}") - $(field p50_us "${results[direct,plain,1]}")))
printf 'plain path, concurrency 1: ferry p50 - direct p50 = %s µs (target <= 100)\n' "$added"
[ "$added" -le 100 ] || { echo "target missed: added p50 latency at concurrency 1"; bad=1; }
[ "$bad" = 0 ] && echo "targets met"
exit "$bad"
