# Sourced by bench/load.sh and bench/soak.sh, after they define `fail`: installs wrk and
# nginx from Debian when absent, builds ferry (unless FERRY_BIN names a binary), and starts
# nginx (bench/nginx.conf, the upstream) and ferry (bench/ferry.yaml) on loopback ports.
# Defines: upstream_port, ferry_port, ferry_pid, and what bench/setup.sh defines.

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing ${missing[*]} from Debian" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 \
        || fail "could not install ${missing[*]}"
fi

# shellcheck source=setup.sh
source "$here/setup.sh"
start_upstream

ferry_port="$(free_port)"
RUST_LOG="${RUST_LOG:-warn}" "$FERRY_BIN" serve --config "$here/ferry.yaml" \
    --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$ferry_port" 2>"$work/ferry.log" &
ferry_pid=$!
pids+=("$ferry_pid")
wait_port "$ferry_port" || fail "ferry did not start: $(cat "$work/ferry.log")"
