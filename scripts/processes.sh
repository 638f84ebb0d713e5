# Sourced by scripts that start servers of their own (bench/, tests/e2e/conformance/run.sh):
# a scratch folder and a list of the processes started, both cleaned up on exit, and two
# helpers for loopback ports. Defines: work, pids, free_port, wait_port.

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# A free TCP port on 127.0.0.1, chosen by the OS.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for something to listen on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
