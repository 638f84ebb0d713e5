"""Output schemas (issue 29) through the official MCP Python SDK, which validates every
`structuredContent` against the tool's `outputSchema`: a tool declares its documented 2xx
answer as ferry serves it (projected by `fields:`, wrapped under `result` for a 2025-11-25
client where the root is not an object), a conforming answer is accepted by the SDK in both
eras, with and without `fields:`, and a non-conforming one is never served as
`structuredContent`: it is an `isError` result with the body as text, saying what did not
match and, for a write, that the operation was carried out. Problem Details answers stay
`isError` results as before. The upstream is a loopback server started here.
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

from conftest import MODES, serving

pytestmark = pytest.mark.anyio

ITEM = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "name"],
}

DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Items", "version": "1"},
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [{"name": "broken", "in": "query", "schema": {"type": "boolean"}}],
                "responses": {
                    "200": {
                        "description": "the items",
                        "content": {
                            "application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}}
                        },
                    }
                },
            },
            "post": {
                "operationId": "createItem",
                "parameters": [{"name": "name", "in": "query", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}},
                    }
                },
            },
        },
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {
                        "description": "one item",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}},
                    },
                    "404": {"description": "no such item", "content": {"application/problem+json": {"schema": {"type": "object"}}}},
                },
            }
        },
    },
    "components": {"schemas": {"Item": ITEM}},
}

ITEMS = [{"id": 1, "name": "Rex", "tags": ["dog"]}, {"id": 2, "name": "Tom", "tags": []}]
# Not what the document promises: `id` is a string, `name` is missing.
BROKEN_ITEMS = [{"id": "one"}, {"id": 2, "name": "Tom"}]
PROBLEM = {"type": "about:blank", "title": "No such item", "status": 404}


class ItemsApi:
    """The items API on 127.0.0.1: conforming answers, and broken ones when asked
    (`?broken=true`, or a created item named `broken`)."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
                pass

            def reply(self, status: int, value, content_type: str = "application/json") -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path.startswith("/items?") and "broken=true" in self.path:
                    self.reply(200, BROKEN_ITEMS)
                elif self.path.startswith("/items"):
                    rest = self.path.split("?")[0].removeprefix("/items").strip("/")
                    if not rest:
                        self.reply(200, ITEMS)
                    elif rest == "1":
                        self.reply(200, ITEMS[0])
                    else:
                        self.reply(404, PROBLEM, "application/problem+json")
                else:
                    self.reply(404, PROBLEM, "application/problem+json")

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                name = self.path.partition("name=")[2]
                if name == "broken":
                    self.reply(201, {"id": "not a number", "name": "broken"})
                else:
                    self.reply(201, {"id": 3, "name": name})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> ItemsApi:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_) -> None:
        self.server.shutdown()
        self.server.server_close()


def curation(folder: Path, api: str, fields: bool) -> Path:
    (folder / "items.openapi.json").write_text(json.dumps(DOCUMENT))
    projected = "{fields: [id]}" if fields else "{}"
    text = (
        f"openapi: items.openapi.json\nupstream: {api}\n"
        f"tools:\n  listItems: {projected}\n  getItem: {projected}\n  createItem: {{}}\n"
    )
    path = folder / f"ferry-{'fields' if fields else 'whole'}.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def items_api() -> Iterator[ItemsApi]:
    with ItemsApi() as api:
        yield api


@pytest.fixture(scope="module", params=[False, True], ids=["whole", "fields"])
def served(request, items_api: ItemsApi) -> Iterator[tuple[str, bool]]:
    with tempfile.TemporaryDirectory() as folder:
        with serving(curation(Path(folder), items_api.url, request.param), None) as url:
            yield url, request.param


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def project(items: list[dict], fields: bool) -> list[dict]:
    return [{"id": item["id"]} for item in items] if fields else items


@pytest.mark.parametrize("mode", MODES)
async def test_each_tool_declares_its_answer_as_served(served, mode):
    url, fields = served
    async with Client(url, mode=mode, cache=None, read_timeout_seconds=20) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    listed = tools["listItems"].output_schema
    item = listed["properties"]["result"]["items"] if mode == "legacy" else listed["items"]
    if mode == "legacy":
        # 2025-11-25 wants an object at the root: the array is declared as served, wrapped.
        assert listed["type"] == "object" and listed["required"] == ["result"]
    else:
        assert listed["type"] == "array"
    if fields:
        assert item == {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    else:
        assert item == {"$ref": "#/$defs/Item"} and listed["$defs"]["Item"] == ITEM
    # An object root (here through its `$ref`) is given as it is in both eras.
    one = tools["getItem"].output_schema
    if fields:
        assert one == {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    else:
        assert one["$ref"] == "#/$defs/Item" and set(one["$defs"]) == {"Item"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_conforming_answer_is_structured_content_the_sdk_accepts(served, mode):
    url, fields = served
    async with Client(url, mode=mode, cache=None, read_timeout_seconds=20) as client:
        await client.list_tools()
        # The SDK raises if structuredContent does not match the declared schema.
        listed = await client.call_tool("listItems", {})
        assert listed.is_error is False, texts(listed)
        expected = project(ITEMS, fields)
        assert listed.structured_content == ({"result": expected} if mode == "legacy" else expected)
        one = await client.call_tool("getItem", {"id": 1})
        assert one.is_error is False, texts(one)
        assert one.structured_content == project([ITEMS[0]], fields)[0]
        created = await client.call_tool("createItem", {"name": "Kit"})
        assert created.is_error is False, texts(created)
        assert created.structured_content == {"id": 3, "name": "Kit"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_non_conforming_answer_is_an_error_with_the_body_as_text(served, mode):
    url, fields = served
    async with Client(url, mode=mode, cache=None, read_timeout_seconds=20) as client:
        await client.list_tools()
        result = await client.call_tool("listItems", {"broken": True})
        assert result.is_error is True
        assert result.structured_content is None
        said = texts(result)
        assert "does not match this tool's declared output schema" in said, said
        assert "/0/id" in said, said
        assert "carried out" not in said, "a read is safe to repeat"
        # The body as text: as received, or as `fields:` projected it.
        if fields:
            assert json.dumps([{"id": "one"}, {"id": 2}], separators=(",", ":")) in said, said
        else:
            assert json.dumps(BROKEN_ITEMS) in said, said
        written = await client.call_tool("createItem", {"name": "broken"})
        assert written.is_error is True and written.structured_content is None
        said = texts(written)
        assert "/id" in said and "the operation was carried out; do not repeat it" in said, said
        assert result.meta["dev.ferry/http"]["status"] == 200


@pytest.mark.parametrize("mode", MODES)
async def test_problem_details_stay_error_results(served, mode):
    url, _ = served
    async with Client(url, mode=mode, cache=None, read_timeout_seconds=20) as client:
        await client.list_tools()
        result = await client.call_tool("getItem", {"id": 9})
        assert result.is_error is True
        assert "does not match" not in texts(result)
        assert "No such item" in texts(result)
