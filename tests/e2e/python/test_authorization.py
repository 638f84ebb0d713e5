"""ferry behind authentication, through the official MCP Python SDK: a caller presents a
bearer key, sees and calls only the tools its scopes reach, and its key never reaches the
upstream. Without a key the SDK is refused. Both eras, over Streamable HTTP (stdio is a
local channel to which `auth:` does not apply).
"""

from __future__ import annotations

import hashlib
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from conftest import FIXTURES, MODES, serving
from upstream import PETS, Upstream

pytestmark = pytest.mark.anyio

KEY = "ferry-e2e-" + secrets.token_hex(16)


@pytest.fixture(scope="module")
def guarded(upstream: Upstream) -> Iterator[str]:
    """`ferry serve` with an API key that grants `pets:read` only; yields the endpoint URL."""
    curation = f"""
openapi: {FIXTURES / "pets.openapi.yaml"}
server: {{name: pets-guarded}}
auth:
  api_keys:
    - {{subject: e2e, sha256: {hashlib.sha256(KEY.encode()).hexdigest()}, scopes: [pets:read]}}
tools:
  listPets: {{scopes: [pets:read]}}
  getPet: {{scopes: [pets:read]}}
  createPet: {{scopes: [pets:write]}}
"""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ferry.yaml"
        path.write_text(curation)
        with serving(path, upstream.url) as url:
            yield url


def mcp_error(error: BaseException) -> MCPError | None:
    """The SDK's error inside the task groups it raises through."""
    if isinstance(error, MCPError):
        return error
    for inner in getattr(error, "exceptions", ()):
        if found := mcp_error(inner):
            return found
    return None


def client(url: str, mode: str, headers: dict[str, str]) -> Client:
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=20))
    return Client(transport, mode=mode, cache=None, read_timeout_seconds=20)


@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_sees_and_calls_only_what_its_scopes_reach(guarded, mode, upstream):
    before = len(upstream.seen_headers)
    async with client(guarded, mode, {"Authorization": f"Bearer {KEY}", "Cookie": f"session={KEY}"}) as session:
        listed = await session.list_tools()
        assert [tool.name for tool in listed.tools] == ["getPet", "listPets"]
        if mode != "legacy":
            # The list depends on who asks, so no cache may share it.
            assert listed.cache_scope == "private"
        result = await session.call_tool("getPet", {"petId": 1})
        assert result.is_error is False
        assert result.structured_content == PETS[1]
    received = upstream.seen_headers[before:]
    assert received, "the call did not reach the upstream"
    for headers in received:
        for name, value in headers:
            assert KEY not in value, f"the caller's key reached the upstream in {name}"
            assert name.lower() not in ("authorization", "cookie"), f"caller header {name} forwarded"


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_beyond_the_callers_scopes_is_refused(guarded, mode, upstream):
    before = len(upstream.seen)
    async with client(guarded, mode, {"Authorization": f"Bearer {KEY}"}) as session:
        with pytest.raises(MCPError, match="lacks a scope"):
            await session.call_tool("createPet", {"name": "Rex"})
    assert upstream.seen[before:] == []
    # What the SDK saw on the wire: 403 with the step-up challenge.
    answer = httpx2.post(
        guarded,
        headers={"Authorization": f"Bearer {KEY}", "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "createPet", "arguments": {"name": "Rex"}}},
    )
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="pets:write"' in challenge, challenge


@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_without_a_key_is_refused(guarded, mode, upstream):
    before = len(upstream.seen)
    for headers in ({}, {"Authorization": "Bearer not-the-key"}):
        with pytest.raises(BaseException) as refused:
            async with client(guarded, mode, headers) as session:
                await session.list_tools()
        assert mcp_error(refused.value) is not None, refused.value
        # What the SDK saw on the wire: 401 with a bearer challenge (API keys have no
        # protected resource metadata to point at; OAuth mode adds it).
        answer = httpx2.post(
            guarded,
            headers={**headers, "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        )
        assert answer.status_code == 401
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer "), challenge
        if headers:
            assert 'error="invalid_token"' in challenge, challenge
    assert upstream.seen[before:] == []
