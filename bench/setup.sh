# Sourced by the bench scripts that run ferry against the local upstream, after they define
# `root`, `here` and `fail` (and, optionally, `bench_needs`): installs from Debian each command
# `bench_needs` lists that is absent (from the package of its name), finds nginx, builds ferry
# (unless FERRY_BIN names a binary) and sources scripts/processes.sh. Defines: nginx,
# FERRY_BIN, start_upstream, start_proxy, make_certificates, start_tls_upstream,
# start_tls_proxy, and what scripts/processes.sh defines (`work`, `pids`, `free_port`,
# `wait_port`, which the starters use).

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

# run_nginx CONFIG UPSTREAM_PORT [COMMAND...]: nginx by bench/CONFIG on a free loopback port,
# in a folder of its own, under COMMAND if any (say `taskset -c 1`), its placeholders filled
# (__PORT__, __UPSTREAM__, __DIR__, and __TLS__ for make_certificates's folder); sets
# started_port and started_master.
run_nginx() {
    local config="$1" upstream="$2" dir
    shift 2
    started_port="$(free_port)"
    dir="$work/${config%.conf}"
    mkdir -p "$dir"
    sed -e "s|__PORT__|$started_port|" -e "s|__UPSTREAM__|$upstream|" -e "s|__DIR__|$dir|g" \
        -e "s|__TLS__|$work/tls|g" "$here/$config" >"$dir/nginx.conf"
    "$@" "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
    started_master=$!
    pids+=("$started_master")
    wait_port "$started_port" || fail "nginx ($config) did not start: $(cat "$dir/nginx-error.log" 2>/dev/null)"
}

# The worker process of the nginx master $1, looked for until the master has forked it.
nginx_worker() {
    local worker=""
    for _ in $(seq 50); do
        worker="$(pgrep -P "$1" | head -1)" && break
        sleep 0.1
    done
    [ -n "$worker" ] || fail "nginx has no worker process"
    echo "$worker"
}

# Starts the upstream (bench/nginx.conf: one JSON answer from memory) on a free loopback
# port, under the command given first if any (say `taskset -c 1`); sets upstream_port.
start_upstream() {
    run_nginx nginx.conf "" "$@"
    upstream_port="$started_port"
}

# Starts nginx as a do-nothing reverse proxy (bench/nginx-proxy.conf, one worker) in front of
# the upstream, under the command given first if any; sets proxy_port and proxy_worker, the
# worker process whose CPU is measured.
start_proxy() {
    run_nginx nginx-proxy.conf "$upstream_port" "$@"
    proxy_port="$started_port"
    proxy_worker="$(nginx_worker "$started_master")"
}

# Makes a CA and a certificate it signs for localhost and 127.0.0.1 (P-256, valid two days)
# in $work/tls: ca.crt, localhost.crt, localhost.key. Made at each run, never kept.
make_certificates() {
    local dir="$work/tls"
    command -v openssl >/dev/null || fail "needs openssl (apt-get install openssl)"
    mkdir -p "$dir"
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=ferry bench CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
            -keyout "$dir/localhost.key" -out "$dir/localhost.csr"
        printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
            "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$dir/leaf.ext"
        openssl x509 -req -days 2 -in "$dir/localhost.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
            -CAcreateserial -extfile "$dir/leaf.ext" -out "$dir/localhost.crt"
    } >"$dir/openssl.log" 2>&1 || fail "could not make the certificates: $(cat "$dir/openssl.log")"
}

# Starts the HTTPS upstream (bench/nginx-tls.conf: the same answer over TLS, keep-alive), with
# make_certificates's certificate, under the command given first if any; sets
# tls_upstream_port.
start_tls_upstream() {
    run_nginx nginx-tls.conf "" "$@"
    tls_upstream_port="$started_port"
}

# Starts nginx as a do-nothing reverse proxy to the HTTPS upstream (bench/nginx-proxy-tls.conf:
# keep-alive, the certificate checked against make_certificates's CA, sessions reused), under
# the command given first if any; sets tls_proxy_port and tls_proxy_worker.
start_tls_proxy() {
    run_nginx nginx-proxy-tls.conf "$tls_upstream_port" "$@"
    tls_proxy_port="$started_port"
    tls_proxy_worker="$(nginx_worker "$started_master")"
}
