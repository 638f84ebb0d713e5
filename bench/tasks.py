#!/usr/bin/env python3
"""Whether tasks cost ferry memory (stdlib only; a release build).

`ferry serve` of the conformance fixture's `slow_compute` (a job API answering 202 and a
status resource, tests/e2e/upstream.py) to a client of the Tasks extension. TASKS calls each
create a task (a job of an hour, so none ends), then each task is looked at once with
`tasks/get`; ferry's resident memory (VmRSS) is read before, every REPORT tasks, and after.
Task ids are sealed, not stored, so nothing should grow with them.

  bench/tasks.py [--tasks N] [--report N] BINARY
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E = os.path.join(ROOT, "tests", "e2e")
CURATION = """openapi: {document}
confirm_key: {{env: FERRY_BENCH_TASK_KEY}}
tools:
  slow_compute:
    long_running:
      status: {{header: Location}}
      state: /status
      working: [running]
      completed: [succeeded]
      result: {{field: /result}}
"""
TASKS = "io.modelcontextprotocol/tasks"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, process, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"exited before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listened on {port}")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def request(connection, method, params):
    params = {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    connection.request("POST", "/mcp", body, headers)
    answer = connection.getresponse()
    message = json.loads(answer.read())
    if "result" not in message:
        sys.exit(f"{method}: {message}")
    return message["result"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--report", type=int, default=2_500)
    args = parser.parse_args()
    python = os.path.join(ROOT, ".venv", "bin", "python")
    with tempfile.TemporaryDirectory() as work:
        upstream = subprocess.Popen(
            [python if os.path.exists(python) else sys.executable, os.path.join(E2E, "upstream.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ferry = None
        try:
            line = upstream.stdout.readline()
            if not line.startswith("PORT "):
                sys.exit("the fixture upstream did not start")
            upstream_port = int(line.split()[1])
            curation = os.path.join(work, "ferry.yaml")
            document = os.path.join(E2E, "fixtures", "conformance.openapi.yaml")
            with open(curation, "w") as f:
                f.write(CURATION.format(document=json.dumps(document)))
            port = free_port()
            env = {**os.environ, "FERRY_BENCH_TASK_KEY": "a-key-for-the-bench-0123456789abcdef"}
            ferry = subprocess.Popen(
                [args.binary, "serve", "--config", curation,
                 "--upstream", f"http://127.0.0.1:{upstream_port}",
                 "--listen", f"127.0.0.1:{port}"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=env,
            )
            wait_port(port, ferry)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.connect()
            # A request's head and body go out in two writes: without this, each waits for
            # the peer's delayed acknowledgement of the first.
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # A first call each way, so that what is made once is made before measuring.
            warm = request(connection, "tools/call",
                           {"name": "slow_compute", "arguments": {"seconds": 3600}})
            request(connection, "tasks/get", {"taskId": warm["taskId"]})
            time.sleep(1.5)
            print(f"before: {rss_mib(ferry.pid):.1f} MiB")
            ids = []
            started = time.monotonic()
            for index in range(1, args.tasks + 1):
                created = request(connection, "tools/call",
                                  {"name": "slow_compute", "arguments": {"seconds": 3600}})
                if created.get("resultType") != "task":
                    sys.exit(f"not a task: {created}")
                ids.append(created["taskId"])
                if index % args.report == 0:
                    print(f"{index} tasks made: {rss_mib(ferry.pid):.1f} MiB "
                          f"({time.monotonic() - started:.1f} s)")
            for task in ids:
                looked = request(connection, "tasks/get", {"taskId": task})
                if looked.get("status") != "working":
                    sys.exit(f"a task ended: {looked}")
            print(f"each looked at once: {rss_mib(ferry.pid):.1f} MiB")
            time.sleep(1.5)
            print(f"a moment later: {rss_mib(ferry.pid):.1f} MiB")
        finally:
            for process in (ferry, upstream):
                if process is not None:
                    process.terminate()
                    process.wait()


if __name__ == "__main__":
    main()
