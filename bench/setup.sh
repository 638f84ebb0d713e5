# Sourced by the bench scripts that run ferry against the local upstream, after they define
# `root`, `here` and `fail`: finds nginx, builds ferry (unless FERRY_BIN names a binary) and
# sources scripts/processes.sh. Defines: nginx, FERRY_BIN, start_upstream, and what
# scripts/processes.sh defines.

nginx="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx" ] || fail "needs nginx (apt-get install nginx)"

if [ -z "${FERRY_BIN:-}" ]; then
    echo "==> cargo build --release" >&2
    (cd "$root" && cargo build --release --quiet --bin ferry) || fail "release build failed"
    FERRY_BIN="$root/target/release/ferry"
fi

# shellcheck source=../scripts/processes.sh
source "$root/scripts/processes.sh"

# Starts the upstream (bench/nginx.conf: one JSON answer from memory) on a free loopback
# port, under the command given first if any (say `taskset -c 1`); sets upstream_port.
start_upstream() {
    upstream_port="$(free_port)"
    sed -e "s|__PORT__|$upstream_port|" -e "s|__DIR__|$work|g" "$here/nginx.conf" >"$work/nginx.conf"
    "$@" "$nginx" -p "$work" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
    pids+=($!)
    wait_port "$upstream_port" || fail "nginx did not start: $(cat "$work/nginx-error.log" 2>/dev/null)"
}
