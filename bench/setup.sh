# Sourced by the bench scripts that run ferry against the local upstream, after they define
# `root`, `here` and `fail` (and, optionally, `bench_needs`): installs from Debian each command
# `bench_needs` lists that is absent (from the package of its name), finds nginx, builds ferry
# (unless FERRY_BIN names a binary) and sources scripts/processes.sh. Defines: nginx,
# FERRY_BIN, start_upstream, start_proxy, and what scripts/processes.sh defines (`work`,
# `pids`, `free_port`, `wait_port`, which the two starters use).

missing=()
for command in ${bench_needs[@]+"${bench_needs[@]}"}; do
    command -v "$command" >/dev/null || [ -x "/usr/sbin/$command" ] || missing+=("$command")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing ${missing[*]} from Debian" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 \
        || fail "could not install ${missing[*]}"
fi

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

# Starts nginx as a do-nothing reverse proxy (bench/nginx-proxy.conf, one worker) in front of
# the upstream, under the command given first if any; sets proxy_port and proxy_worker, the
# worker process whose CPU is measured (looked for until the master has forked it).
start_proxy() {
    local master
    proxy_port="$(free_port)"
    mkdir -p "$work/proxy"
    sed -e "s|__PORT__|$proxy_port|" -e "s|__UPSTREAM__|$upstream_port|" -e "s|__DIR__|$work/proxy|g" \
        "$here/nginx-proxy.conf" >"$work/proxy/nginx.conf"
    "$@" "$nginx" -p "$work/proxy" -c "$work/proxy/nginx.conf" -e "$work/proxy/nginx-error.log" &
    master=$!
    pids+=("$master")
    wait_port "$proxy_port" || fail "the nginx proxy did not start: $(cat "$work/proxy/nginx-error.log" 2>/dev/null)"
    proxy_worker=""
    for _ in $(seq 50); do
        proxy_worker="$(pgrep -P "$master" | head -1)" && break
        sleep 0.1
    done
    [ -n "$proxy_worker" ] || fail "the nginx proxy has no worker process"
}
