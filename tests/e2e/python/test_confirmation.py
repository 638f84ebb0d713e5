"""Confirmation through the official MCP Python SDK (`mcp` 2.3.0): its `Client` drives the
`input_required` rounds itself through `elicitation_callback`, over Streamable HTTP and over
stdio, and the fixture upstream proves nothing is sent unless the user accepts.

The curation is tests/e2e/fixtures/pets-confirm.ferry.yaml: `deletePet` asks with a message,
`deleteTag` also has the user type the tag back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult, TextContent

from conftest import FIXTURES, ROOT, ferry_binary, serving
from upstream import Upstream

pytestmark = pytest.mark.anyio

CURATION = FIXTURES / "pets-confirm.ferry.yaml"


@pytest.fixture(scope="module")
def confirm_http(upstream: Upstream) -> Iterator[str]:
    with serving(CURATION, upstream.url) as url:
        yield url


@pytest.fixture(params=["http", "stdio"])
def connect(request, upstream: Upstream) -> Callable[..., Client]:
    if request.param == "http":
        server: str | StdioServerParameters = request.getfixturevalue("confirm_http")
    else:
        server = StdioServerParameters(
            command=str(ferry_binary()),
            args=["serve", "--stdio", "--config", str(CURATION), "--upstream", upstream.url],
            cwd=str(ROOT),
        )

    def make(answer, mode: str = "2026-07-28") -> Client:
        asked: list[ElicitRequestParams] = []

        async def elicitation_callback(context, params: ElicitRequestParams) -> ElicitResult:
            asked.append(params)
            return answer(params)

        client = Client(
            server,
            mode=mode,
            cache=None,
            read_timeout_seconds=20,
            elicitation_callback=elicitation_callback,
        )
        client.asked = asked  # type: ignore[attr-defined]
        return client

    return make


def deletes(upstream: Upstream) -> list[str]:
    return [path for method, path in upstream.seen if method == "DELETE"]


def text(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def test_accepting_sends_the_call_once(connect, upstream):
    before = len(deletes(upstream))
    client = connect(lambda params: ElicitResult(action="accept", content={"confirm": True}))
    async with client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert (tools["deletePet"].meta or {}).get("dev.ferry/confirm") is True
        assert "dev.ferry/confirm" not in (tools["getPet"].meta or {})
        result = await client.call_tool("deletePet", {"petId": 3})
    assert not result.is_error, text(result)
    assert result.structured_content == {"deleted": "/pets/3"}
    assert len(client.asked) == 1
    assert client.asked[0].message == "Delete pet 3? This cannot be undone."
    assert client.asked[0].requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert deletes(upstream)[before:] == ["/pets/3"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declining_or_cancelling_sends_nothing(connect, upstream, action):
    before = len(deletes(upstream))
    client = connect(lambda params: ElicitResult(action=action))
    async with client:
        result = await client.call_tool("deletePet", {"petId": 4})
    assert result.is_error
    assert "nothing was sent" in text(result)
    assert len(client.asked) == 1
    assert deletes(upstream)[before:] == []


async def test_the_user_types_the_value_back(connect, upstream):
    before = len(deletes(upstream))
    right = connect(lambda params: ElicitResult(action="accept", content={"confirm": True, "typed": "old"}))
    async with right:
        result = await right.call_tool("deleteTag", {"tag": "old"})
    assert not result.is_error, text(result)
    assert "Type old to confirm." in right.asked[0].message
    assert right.asked[0].requested_schema["required"] == ["confirm", "typed"]
    wrong = connect(lambda params: ElicitResult(action="accept", content={"confirm": True, "typed": "OLD"}))
    async with wrong:
        result = await wrong.call_tool("deleteTag", {"tag": "old"})
    assert result.is_error
    assert "does not match" in text(result)
    assert deletes(upstream)[before:] == ["/tags/old"]


async def test_a_legacy_client_is_told_it_cannot_confirm(connect, upstream):
    before = len(deletes(upstream))
    client = connect(lambda params: ElicitResult(action="accept", content={"confirm": True}), mode="legacy")
    async with client:
        result = await client.call_tool("deletePet", {"petId": 5})
    assert result.is_error
    assert "2026-07-28 confirmation" in text(result)
    assert client.asked == []
    assert deletes(upstream)[before:] == []
