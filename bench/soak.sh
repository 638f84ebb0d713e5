#!/usr/bin/env bash
# Soak: one million `tools/call`s (CALLS) through ferry (release build) against nginx answering
# from memory, as bench/load.sh sets it up, in the mix bench/soak.lua describes (answers,
# upstream errors, refused arguments, unknown tools, connections closed and reopened). Every
# SAMPLE seconds (default 10) it prints ferry's resident memory (VmRSS, /proc/PID/status) and
# open file descriptors (/proc/PID/fd), and at the end says whether both stayed flat:
#   - RSS: no sample after warm-up more than RSS_TOLERANCE percent (default 10, at least
#     2 MiB) above the first, nor rising at every sample;
#   - descriptors: idle after the run, and under load, no more than CONNECTIONS (default 8)
#     above idle before it and the first loaded sample: connections being reopened come and
#     go, and the upstream pools keep up to that many idle; a leak of one per call, or per
#     reopened connection, would be thousands.
# It exits 1 when either grew, when the calls did not all get their expected answers, or when
# they did not finish within MAX_SECONDS (default 900). Everything listens on 127.0.0.1 and
# every process it starts is stopped on exit. A benchmark, not a test: CI does not run it.
# Installs wrk and nginx from Debian if absent.
#
# Usage: bench/soak.sh            (CALLS=100000 bench/soak.sh for a quicker look)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
calls="${CALLS:-1000000}"
warmup_calls="${WARMUP_CALLS:-50000}"
connections="${CONNECTIONS:-8}"
threads=2
sample="${SAMPLE:-10}"
max_seconds="${MAX_SECONDS:-900}"
rss_tolerance="${RSS_TOLERANCE:-10}"

fail() { printf 'soak: %s\n' "$*" >&2; exit 1; }
for value in "$calls" "$warmup_calls" "$connections" "$sample" "$max_seconds" "$rss_tolerance"; do
    case "$value" in '' | *[!0-9]*) fail "CALLS, WARMUP_CALLS, CONNECTIONS, SAMPLE, MAX_SECONDS and RSS_TOLERANCE are whole numbers" ;; esac
done
[ "$calls" -ge 1000 ] && [ "$calls" -le 100000000 ] || fail "CALLS must be 1000 to 100000000"
[ "$connections" -ge "$threads" ] && [ "$connections" -le 256 ] || fail "CONNECTIONS must be $threads to 256"
[ "$sample" -ge 1 ] && [ "$sample" -le 600 ] || fail "SAMPLE must be 1 to 600 seconds"
[ "$max_seconds" -ge 10 ] && [ "$max_seconds" -le 86400 ] || fail "MAX_SECONDS must be 10 to 86400"

# shellcheck source=common.sh
source "$here/common.sh"
trap 'exit 130' INT TERM

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$ferry_pid/status"; }
fds() { find "/proc/$ferry_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# wrk until each thread has its share of CALLS answers (or the deadline), its output in OUT.
# Run in the background only: it becomes wrk (under timeout), so its pid is the one to stop.
soak() { # soak CALLS OUT &
    export SOAK_CALLS_PER_THREAD=$((($1 + threads - 1) / threads)) SOAK_DONE_FILE="$2.done"
    : >"$SOAK_DONE_FILE"
    exec timeout --kill-after=5 "$((max_seconds + 10))" \
        wrk -t"$threads" -c"$connections" -d"${max_seconds}s" --timeout 5s -s "$here/soak.lua" \
        "http://127.0.0.1:$ferry_port" >"$2" 2>&1
}
# Whether wrk (pid $1, output in $2) is still running; once all its threads are done, it is
# asked to stop and print its results (SIGINT, forwarded by timeout).
running() { # running PID OUT
    kill -0 "$1" 2>/dev/null || return 1
    if [ -f "$2.done" ] && [ "$(wc -l <"$2.done")" -ge "$threads" ]; then
        kill -INT "$1" 2>/dev/null || true
    fi
    return 0
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
# Waits until ferry has let go of the connections wrk closed, or 5 s.
settle() {
    local last now
    last="$(fds)"
    for _ in $(seq 1 10); do
        sleep 0.5
        now="$(fds)"
        [ "$now" = "$last" ] && break
        last="$now"
    done
}

echo "==> warming up: $warmup_calls calls" >&2
soak "$warmup_calls" "$work/warm" &
warm_pid=$!
pids+=("$warm_pid")
while running "$warm_pid" "$work/warm"; do sleep 0.1; done
wait "$warm_pid" || true
warm="$(grep '^RESULT' "$work/warm" || true)"
[ -n "$warm" ] && [ "$(field ok "$warm")" -gt 0 ] || fail "the warm-up calls did not succeed: $warm $(tail -5 "$work/ferry.log")"
settle
idle_before_fds="$(fds)"
idle_before_rss="$(rss_kib)"

echo "==> $calls calls over $connections connections, a sample every ${sample}s" >&2
printf '\n| seconds | RSS MiB | open fds |\n|---:|---:|---:|\n'
printf '| idle | %s | %s |\n' "$(mib "$idle_before_rss")" "$idle_before_fds"
soak "$calls" "$work/run" &
wrk_pid=$!
pids+=("$wrk_pid")
started="$(date +%s)"
samples_rss=()
samples_fds=()
next=$((started + sample))
while running "$wrk_pid" "$work/run"; do
    sleep 0.2
    [ "$(date +%s)" -ge "$next" ] || continue
    next=$((next + sample))
    kill -0 "$ferry_pid" 2>/dev/null || fail "ferry exited during the run: $(tail -5 "$work/ferry.log")"
    samples_rss+=("$(rss_kib)")
    samples_fds+=("$(fds)")
    printf '| %s | %s | %s |\n' "$(($(date +%s) - started))" "$(mib "${samples_rss[-1]}")" "${samples_fds[-1]}"
done
wait "$wrk_pid" || true
elapsed=$(($(date +%s) - started))
result="$(grep '^RESULT' "$work/run" || true)"
kill -0 "$ferry_pid" 2>/dev/null || fail "ferry exited during the run: $(tail -5 "$work/ferry.log")"
settle
idle_after_fds="$(fds)"
idle_after_rss="$(rss_kib)"
printf '| idle, after %s s | %s | %s |\n\n' "$elapsed" "$(mib "$idle_after_rss")" "$idle_after_fds"

bad=0
[ -n "$result" ] || fail "wrk reported nothing: $(tail -5 "$work/run")"
echo "$result"
done_calls="$(field calls "$result")"
# Seven in ten read a pet; the missing pet and the wrong argument are isError results; the
# unknown tool is a JSON-RPC error (see soak.lua).
expected() { awk -v n="$done_calls" -v share="$1" 'BEGIN { printf "%d", n * share }'; }
near() { awk -v got="$1" -v want="$2" 'BEGIN { d = got - want; if (d < 0) d = -d; exit !(d <= 100) }'; }
[ "$done_calls" -ge "$calls" ] || { echo "not flat: only $done_calls of $calls calls within ${max_seconds}s"; bad=1; }
[ "$(field socket_errors "$result")" = 0 ] || { echo "socket errors during the run"; bad=1; }
near "$(field ok "$result")" "$(expected 0.7)" &&
    near "$(field tool_errors "$result")" "$(expected 0.2)" &&
    near "$(field rpc_errors "$result")" "$(expected 0.1)" ||
    { echo "the answers are not the expected mix (7 ok, 2 tool errors, 1 JSON-RPC error in 10)"; bad=1; }

if [ "${#samples_rss[@]}" -lt 2 ]; then
    echo "too few samples to judge: make CALLS larger or SAMPLE smaller"
    exit 1
fi
first_rss="${samples_rss[0]}"
allowed_kib="$(awk -v f="$first_rss" -v p="$rss_tolerance" 'BEGIN { a = f * p / 100; if (a < 2048) a = 2048; printf "%d", a }')"
max_rss="$first_rss"
rising=1
for index in "${!samples_rss[@]}"; do
    value="${samples_rss[$index]}"
    [ "$value" -gt "$max_rss" ] && max_rss="$value"
    [ "$index" -gt 0 ] && [ "$value" -le "${samples_rss[$((index - 1))]}" ] && rising=0
done
[ "$idle_after_rss" -gt "$max_rss" ] && max_rss="$idle_after_rss"
first_fds="${samples_fds[0]}"
max_fds="$first_fds"
for value in "${samples_fds[@]}"; do [ "$value" -gt "$max_fds" ] && max_fds="$value"; done

printf 'RSS: first sample %s MiB, highest %s MiB, last %s MiB, idle after %s MiB (allowed: +%s MiB)\n' \
    "$(mib "$first_rss")" "$(mib "$max_rss")" "$(mib "${samples_rss[-1]}")" "$(mib "$idle_after_rss")" "$(mib "$allowed_kib")"
printf 'fds: idle %s before, %s after; under load %s to %s (allowed: +%s each)\n' \
    "$idle_before_fds" "$idle_after_fds" "$first_fds" "$max_fds" "$connections"
if [ "$max_rss" -gt $((first_rss + allowed_kib)) ]; then
    echo "not flat: RSS grew"; bad=1
elif [ "$rising" = 1 ] && [ "${#samples_rss[@]}" -ge 4 ]; then
    echo "not flat: RSS rose at every sample"; bad=1
fi
if [ "$idle_after_fds" -gt $((idle_before_fds + connections)) ] || [ "$max_fds" -gt $((first_fds + connections)) ]; then
    echo "not flat: open file descriptors grew"; bad=1
fi
[ "$bad" = 0 ] && echo "flat: RSS and open file descriptors"
exit "$bad"
