"""Long-running operations through the official MCP Python SDK, which has no Tasks
extension: over Streamable HTTP, in both eras, a call of a tool whose API answers
`202 Accepted` gets the operation's final result (ferry polled it), and a job that never
ends is an error result saying it is still running and where its status is.

The job API is a small loopback server of the standard library, started by this module.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent

from conftest import serving

pytestmark = pytest.mark.anyio

DOCUMENT = """
openapi: 3.1.0
info: {title: Jobs, version: "1"}
paths:
  /exports:
    post:
      operationId: startExport
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /forever:
    post:
      operationId: startForever
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
"""

CURATION = """
openapi: jobs.openapi.yaml
tools:
  startExport:
    long_running:
      state: /state
      completed: [done]
      failed: [error]
      interval_ms: 20
  startForever:
    timeout_ms: 500
    long_running: {interval_ms: 50}
"""


class JobApi(BaseHTTPRequestHandler):
    """An export that runs for two polls, then is done with its rows; a job that never ends."""

    polls = 0
    seen: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def answer(self, status: int, headers: dict[str, str], body: dict | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        JobApi.seen.append(f"POST {self.path}")
        location = {"/exports": "/jobs/export", "/forever": "/jobs/forever"}.get(self.path)
        if location is None:
            self.answer(404, {})
        else:
            self.answer(202, {"Location": location, "Retry-After": "0"})

    def do_GET(self) -> None:
        JobApi.seen.append(f"GET {self.path}")
        if self.path == "/jobs/export":
            JobApi.polls += 1
            if JobApi.polls < 3:
                self.answer(200, {}, {"state": "running"})
            else:
                self.answer(200, {}, {"state": "done", "rows": 42})
        elif self.path == "/jobs/forever":
            self.answer(202, {"Retry-After": "0"})
        else:
            self.answer(404, {})


@pytest.fixture(scope="module")
def job_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), JobApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def ferry_jobs(job_api: str) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "jobs.openapi.yaml").write_text(DOCUMENT)
        curation = Path(directory) / "ferry.yaml"
        curation.write_text(CURATION)
        with serving(curation, job_api) as url:
            yield url


def texts(result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_call_gets_the_result_of_the_operation_its_202_started(ferry_jobs, mode):
    JobApi.polls = 0
    async with Client(ferry_jobs, mode=mode, cache=None, read_timeout_seconds=20) as client:
        result = await client.call_tool("startExport", {})
    assert result.is_error is False, texts(result)
    assert result.structured_content == {"state": "done", "rows": 42}
    operation = (result.meta or {})["dev.ferry/result"]["operation"]
    assert operation == {"status": "/jobs/export", "state": "completed"}
    assert JobApi.seen.count("GET /jobs/export") >= 3


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_job_that_never_ends_is_still_running_and_says_where(ferry_jobs, mode):
    async with Client(ferry_jobs, mode=mode, cache=None, read_timeout_seconds=20) as client:
        result = await client.call_tool("startForever", {})
    assert result.is_error is True
    text = "\n".join(texts(result))
    assert "still running" in text
    assert "/jobs/forever" in text
    assert "failed" not in text
