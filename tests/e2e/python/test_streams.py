"""Streamed answers through the official MCP Python SDK, over Streamable HTTP and stdio, in
both eras: a tool whose API answers with server-sent events or JSON lines gets the items as
its result, the SDK's progress callback hears `notifications/progress` as they arrive, and a
stream that stalls past the tool's timeout ends the call with what came.

The streaming API is a small loopback server of the standard library, started by this module.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.types import TextContent

from conftest import client_maker, serving

pytestmark = pytest.mark.anyio

DOCUMENT = """
openapi: 3.2.0
info: {title: Streams, version: "1"}
paths:
  /events:
    get:
      operationId: watchEvents
      responses:
        "200":
          description: events
          content:
            text/event-stream:
              itemSchema:
                type: object
                properties:
                  data: {type: string}
                  event: {type: string}
                  id: {type: string}
  /lines:
    get:
      operationId: stallLines
      responses:
        "200":
          description: lines
          content:
            application/x-ndjson:
              itemSchema: {type: object, required: [n], properties: {n: {type: integer}}}
"""

CURATION = """
openapi: streams.openapi.yaml
tools:
  watchEvents: {}
  stallLines: {timeout_ms: 800}
"""


class StreamApi(BaseHTTPRequestHandler):
    """Three events 50 ms apart; two JSON lines and then nothing, the connection held open."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def stream(self, media_type: str, chunks: list[str], hang: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", media_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            data = chunk.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            time.sleep(0.05)
        if hang:
            time.sleep(3)
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path == "/events":
            events = [f"event: tick\nid: {n}\ndata: {json.dumps({'n': n})}\n\n" for n in (1, 2, 3)]
            self.stream("text/event-stream", events, hang=False)
        elif self.path == "/lines":
            self.stream("application/x-ndjson", ['{"n":1}\n', '{"n":2}\n'], hang=True)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


@pytest.fixture(scope="module")
def stream_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StreamApi)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def stream_files() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "streams.openapi.yaml").write_text(DOCUMENT)
        curation = Path(directory) / "ferry.yaml"
        curation.write_text(CURATION)
        yield curation


@pytest.fixture(scope="module")
def ferry_streams(stream_files: Path, stream_api: str) -> Iterator[str]:
    with serving(stream_files, stream_api) as url:
        yield url


@pytest.fixture
def connect(transport, mode, stream_files, stream_api, request):
    stdio = ["--config", str(stream_files), "--upstream", stream_api]
    return client_maker(transport, mode, request, "ferry_streams", stdio)


def texts(result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def items(result) -> list:
    # A 2025-11-25 client needs an object in structuredContent: the array comes wrapped.
    content = result.structured_content
    return content["result"] if isinstance(content, dict) else content


async def test_events_are_the_result_and_their_progress_is_heard(connect):
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))

    async with connect() as client:
        result = await client.call_tool("watchEvents", {}, progress_callback=progress)
    assert result.is_error is False, texts(result)
    assert items(result) == [
        {"event": "tick", "id": str(n), "data": json.dumps({"n": n})} for n in (1, 2, 3)
    ]
    assert heard, "no progress was heard"
    values = [value for value, _, _ in heard]
    assert values == sorted(values) and len(set(values)) == len(values), heard
    assert all(total == 1_048_576 for _, total, _ in heard), heard
    assert heard[-1][2].endswith("items so far") or heard[-1][2] == "1 item so far", heard


async def test_a_stream_that_stalls_ends_the_call_with_what_came(connect):
    async with connect() as client:
        result = await client.call_tool("stallLines", {})
    assert result.is_error is False, texts(result)
    assert items(result) == [{"n": 1}, {"n": 2}]
    said = "\n".join(texts(result))
    assert "still coming when this tool's timeout (800 ms) ran out" in said, said
