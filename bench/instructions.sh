#!/usr/bin/env bash
# Instructions per call: ferry (release build, one worker) runs under callgrind while one
# keep-alive client sends FEW and then MANY `tools/call`s of bench/call.lua's request (nginx
# answering from memory, as in bench/load.sh); the difference of the two runs' totals, divided
# by MANY - FEW, is what one more call costs in ferry's process, every thread counted (the
# audit writer's included). Deterministic, unlike CPU time on a shared machine, so two builds
# or two sets of flags can be compared call for call. Not part of CI; needs valgrind.
#
# Usage: bench/instructions.sh [FERRY FLAGS...]
#   bench/instructions.sh                                  # nothing recorded
#   bench/instructions.sh --audit-log /tmp/a.log --metrics-listen 127.0.0.1:0
# FEW (default 200) and MANY (default 1200) set the counts; FERRY_BIN a binary to measure;
# CONFIG another curation than bench/ferry.yaml (bench/ferry-limited.yaml: a rate limit on
# every call, which `--state redis://127.0.0.1:PORT` keeps in a Redis started beforehand);
# KEEP a folder to copy the two callgrind files into (for callgrind_annotate). Start-up
# varies by a few million instructions between runs (the metrics clock calibrates itself
# against time), so compare with MANY in the thousands.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
few="${FEW:-200}"
many="${MANY:-1200}"
fail() { printf 'bench: %s\n' "$*" >&2; exit 1; }
command -v valgrind >/dev/null || fail "needs valgrind (apt-get install valgrind)"
# shellcheck source=setup.sh
source "$here/setup.sh"
start_upstream

# One run: ferry under callgrind, CALLS calls, then SIGTERM; prints the total instructions.
measure() {
    local calls="$1" port out pid
    shift
    port="$(free_port)"
    out="$work/callgrind.$calls"
    RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$FERRY_BIN" serve --config "${CONFIG:-$here/ferry.yaml}" --workers 1 \
        --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$port" "$@" \
        2>"$work/ferry.$calls.log" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    python3 - "$port" "$here/call.lua" "$calls" <<'EOF' || fail "the calls did not succeed"
import http.client, re, sys
port, script, calls = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
headers = dict(re.findall(r'wrk\.headers\["([^"]+)"\] = "([^"]+)"', script))
body = "".join(re.findall(r"'([^']*)'", script.split("wrk.body =", 1)[1].split("dofile")[0]))
connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
for _ in range(calls):
    connection.request("POST", "/mcp", body.encode(), headers)
    answer = connection.getresponse().read()
    if b'"isError":true' in answer or b'"result"' not in answer:
        sys.exit(f"unexpected answer: {answer[:200]!r}")
EOF
    kill -TERM "$pid"
    wait "$pid" || true
    sed -n 's/^summary: //p; s/^totals: //p' "$out" | head -1
}

if [ -n "${KEEP:-}" ]; then
    trap 'cp "$work"/callgrind.* "$KEEP"/ 2>/dev/null; cleanup' EXIT
fi
low="$(measure "$few" "$@")"
high="$(measure "$many" "$@")"
echo "instructions: $few calls $low, $many calls $high"
echo "per call: $(( (high - low) / (many - few) ))"
