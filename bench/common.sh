# Sourced by bench/load.sh and bench/soak.sh, after they define `fail`: installs wrk and
# nginx from Debian when absent, builds ferry (unless FERRY_BIN names a binary), and starts
# nginx (bench/nginx.conf, the upstream) and ferry (bench/ferry.yaml) on loopback ports.
# Defines: nginx, FERRY_BIN, upstream_port, ferry_port, ferry_pid, and what
# scripts/processes.sh defines.

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing ${missing[*]} from Debian" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 \
        || fail "could not install ${missing[*]}"
fi
nginx="$(command -v nginx || echo /usr/sbin/nginx)"

if [ -z "${FERRY_BIN:-}" ]; then
    echo "==> cargo build --release" >&2
    (cd "$root" && cargo build --release --quiet --bin ferry) || fail "release build failed"
    FERRY_BIN="$root/target/release/ferry"
fi

# shellcheck source=../scripts/processes.sh
source "$root/scripts/processes.sh"

upstream_port="$(free_port)"
sed -e "s|__PORT__|$upstream_port|" -e "s|__DIR__|$work|g" "$here/nginx.conf" >"$work/nginx.conf"
"$nginx" -p "$work" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)
wait_port "$upstream_port" || fail "nginx did not start: $(cat "$work/nginx-error.log" 2>/dev/null)"

ferry_port="$(free_port)"
RUST_LOG="${RUST_LOG:-warn}" "$FERRY_BIN" serve --config "$here/ferry.yaml" \
    --upstream "http://127.0.0.1:$upstream_port" --listen "127.0.0.1:$ferry_port" 2>"$work/ferry.log" &
ferry_pid=$!
pids+=("$ferry_pid")
wait_port "$ferry_port" || fail "ferry did not start: $(cat "$work/ferry.log")"
