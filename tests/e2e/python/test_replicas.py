"""Many replicas: ferry keeps no state between requests, so copies can run behind any load
balancer. Two `ferry serve` processes behind Debian's nginx (round robin, on loopback), the
official Python SDK calling through it in both eras, and each copy's audit log showing calls.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from mcp import Client

from conftest import MODES, PETS_CURATION, free_port, serving, stop, wait_until_listening

pytestmark = pytest.mark.anyio

CALLS = 6


def nginx_binary() -> str:
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail("nginx not found: run scripts/setup-tests.sh, which installs Debian's nginx")


@contextmanager
def replica(upstream_url: str, audit_log: Path) -> Iterator[int]:
    """One `ferry serve` of the pets fixture writing its audit log; yields its port."""
    with serving(PETS_CURATION, upstream_url, ("--audit-log", str(audit_log))) as url:
        yield int(url.rsplit(":", 1)[1].split("/", 1)[0])


@contextmanager
def balancer(ports: list[int], folder: Path) -> Iterator[str]:
    """nginx proxying round robin to `ports`, keeping the client's Host (ferry checks it);
    yields the MCP endpoint URL."""
    port = free_port()
    servers = "\n".join(f"        server 127.0.0.1:{backend};" for backend in ports)
    (folder / "logs").mkdir(parents=True)
    config = folder / "nginx.conf"
    config.write_text(
        f"""
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    upstream ferries {{
{servers}
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://ferries;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
        }}
    }}
}}
"""
    )
    process = subprocess.Popen(
        [nginx_binary(), "-p", str(folder), "-c", str(config), "-e", str(folder / "error.log")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_listening(process, port, tempfile.TemporaryFile())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def audited_calls(path: Path, deadline: float) -> list[dict]:
    """The `tools/call` events of an audit log. A record is written off the call's path, so
    the log is read until it holds as many lines as it will, or the deadline passes."""
    events: list[dict] = []
    while True:
        text = path.read_text() if path.exists() else ""
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
        if time.monotonic() > deadline or len(events) >= CALLS // 2:
            return events
        time.sleep(0.05)


@pytest.mark.parametrize("mode", MODES)
async def test_two_replicas_behind_a_load_balancer_serve_every_call(upstream, mode):
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        logs = [folder / "audit-1.jsonl", folder / "audit-2.jsonl"]
        ports = [stack.enter_context(replica(upstream.url, log)) for log in logs]
        url = stack.enter_context(balancer(ports, folder / "nginx"))
        async with Client(url, mode=mode, cache=None, read_timeout_seconds=20) as client:
            listed = await client.list_tools()
            assert "getPet" in [tool.name for tool in listed.tools]
            for _ in range(CALLS):
                result = await client.call_tool("getPet", {"petId": 1})
                assert not result.is_error, result
                assert result.structured_content == {"id": 1, "name": "Rex", "tag": "dog"}
        deadline = time.monotonic() + 10
        per_replica = [audited_calls(log, deadline) for log in logs]
    # Round robin: each copy answered some of the calls, and together every one.
    for index, events in enumerate(per_replica):
        calls = [event for event in events if event.get("tool") == "getPet"]
        assert calls, f"replica {index + 1} logged no call: {events}"
        assert all(event["outcome"] == "ok" for event in calls), calls
    total = sum(
        1 for events in per_replica for event in events if event.get("tool") == "getPet"
    )
    assert total == CALLS, per_replica


# A long-running operation of the conformance fixture API (a job that takes `seconds`),
# served to clients of the Tasks extension; both replicas seal task ids with one key.
TASKS_CURATION = """
openapi: {document}
confirm_key: {{env: FERRY_TEST_TASK_KEY}}
tools:
  slow_compute:
    long_running:
      status: {{header: Location}}
      state: /status
      working: [running]
      completed: [succeeded]
      failed: [failed]
      cancelled: [cancelled]
      result: {{field: /result}}
      interval_ms: 50
"""
TASKS = "io.modelcontextprotocol/tasks"


def modern(url: str, method: str, params: dict) -> dict:
    """One request of a 2026-07-28 client that declares the Tasks extension; its JSON answer."""
    params = {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "replicas", "version": "1"},
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
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=20) as answer:
        assert answer.status == 200
        message = json.loads(answer.read())
    assert "result" in message, message
    return message["result"]


async def test_a_task_made_through_one_replica_is_finished_through_either(upstream):
    document = Path(__file__).resolve().parents[1] / "fixtures" / "conformance.openapi.yaml"
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        curation = folder / "ferry.yaml"
        curation.write_text(TASKS_CURATION.format(document=json.dumps(str(document))))
        key = {"FERRY_TEST_TASK_KEY": "a-key-both-replicas-share-0123456789abcdef"}
        urls = [
            stack.enter_context(serving(curation, upstream.url, env=key)) for _ in range(2)
        ]
        ports = [int(url.rsplit(":", 1)[1].split("/", 1)[0]) for url in urls]
        balanced = stack.enter_context(balancer(ports, folder / "nginx"))
        created = modern(
            urls[0],
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 1, "label": "replicas"}},
        )
        assert created["resultType"] == "task", created
        assert created["status"] == "working", created
        task = created["taskId"]
        # The other replica knows the task it did not make: nothing is stored, the id is
        # sealed under the key both share.
        seen = modern(urls[1], "tasks/get", {"taskId": task})
        assert seen["taskId"] == task and seen["status"] in ("working", "completed"), seen
        # Through the balancer, each look goes to one replica then the other, to the end.
        deadline = time.monotonic() + 15
        looks = []
        while time.monotonic() < deadline:
            looked = modern(balanced, "tasks/get", {"taskId": task})
            looks.append(looked["status"])
            if looked["status"] != "working":
                break
            time.sleep(looked.get("pollIntervalMs", 100) / 1000)
        assert looks[-1] == "completed", looks
        result = looked["result"]
        assert not result.get("isError"), result
        assert result["structuredContent"] == {"label": "replicas", "value": 42}, result
        # Both replicas answer for it once it is done, and give the same result.
        for url in urls:
            done = modern(url, "tasks/get", {"taskId": task})
            assert done["status"] == "completed", done
            assert done["result"]["structuredContent"] == result["structuredContent"], done
