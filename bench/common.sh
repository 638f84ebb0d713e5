# Sourced by bench/load.sh and bench/soak.sh, after they define `fail`: installs wrk and
# nginx from Debian when absent (bench/setup.sh), builds ferry (unless FERRY_BIN names a binary), and starts
# nginx (bench/nginx.conf, the upstream) and ferry (bench/ferry.yaml) on loopback ports.
# Defines: upstream_port, ferry_port, ferry_pid, and what bench/setup.sh defines.

bench_needs=(wrk nginx)
# shellcheck source=setup.sh
source "$here/setup.sh"
start_upstream

ferry_port="$(free_port)"
RUST_LOG="${RUST_LOG:-warn}" "$FERRY_BIN" serve --config "$here/ferry.yaml" \
    --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$ferry_port" 2>"$work/ferry.log" &
ferry_pid=$!
pids+=("$ferry_pid")
wait_port "$ferry_port" || fail "ferry did not start: $(cat "$work/ferry.log")"
