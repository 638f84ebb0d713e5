"""Discovery through the official MCP Python SDK (`mcp` 2.3.0), over Streamable HTTP and over
stdio: the tool list is the five discovery tools; a search finds an operation and the tool
that calls it, a description gives its definition, a call through the right calling tool
reaches the fixture upstream (a confirming one once the user accepts), a call through the
wrong one is refused naming the right one, and a Problem Details error comes back as the
operation's own would.

The curation is tests/e2e/fixtures/pets-discovery.ferry.yaml.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult, EmbeddedResource, TextContent

from conftest import FIXTURES, ROOT, ferry_binary, serving
from upstream import Upstream

pytestmark = pytest.mark.anyio

CURATION = FIXTURES / "pets-discovery.ferry.yaml"
DISCOVERY_TOOLS = [
    "call_idempotent_operation",
    "call_operation",
    "call_read_operation",
    "describe_operation",
    "search_operations",
]


@pytest.fixture(scope="module")
def discovery_http(upstream: Upstream) -> Iterator[str]:
    with serving(CURATION, upstream.url) as url:
        yield url


@pytest.fixture(params=["http", "stdio"])
def connect(request, upstream: Upstream) -> Callable[..., Client]:
    if request.param == "http":
        server: str | StdioServerParameters = request.getfixturevalue("discovery_http")
    else:
        server = StdioServerParameters(
            command=str(ferry_binary()),
            args=["serve", "--stdio", "--config", str(CURATION), "--upstream", upstream.url],
            cwd=str(ROOT),
        )

    def make(mode: str = "2026-07-28") -> Client:
        async def elicitation_callback(context, params: ElicitRequestParams) -> ElicitResult:
            return ElicitResult(action="accept", content={"confirm": True})

        return Client(
            server,
            mode=mode,
            cache=None,
            read_timeout_seconds=20,
            elicitation_callback=elicitation_callback,
        )

    return make


def text(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def search(client: Client, query: str) -> list[dict]:
    result = await client.call_tool("search_operations", {"query": query, "limit": 3})
    assert not result.is_error, text(result)
    # What a model reads: the text block, the same JSON as the structured content.
    found = json.loads(result.content[0].text)
    assert found == result.structured_content
    return found["operations"]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_list_is_the_discovery_tools_with_sound_annotations(connect, mode):
    async with connect(mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == DISCOVERY_TOOLS
    assert tools["call_read_operation"].annotations.read_only_hint is True
    idempotent = tools["call_idempotent_operation"].annotations
    assert (idempotent.read_only_hint, idempotent.idempotent_hint) == (False, True)
    assert tools["call_operation"].annotations is None
    assert tools["search_operations"].annotations.read_only_hint is True


async def test_search_describe_and_call_reach_the_upstream(connect, upstream):
    async with connect() as client:
        found = await search(client, "show me the pets")
        assert (found[0]["name"], found[0]["callWith"]) == ("listPets", "call_read_operation")
        described = await client.call_tool("describe_operation", {"operations": ["listPets"]})
        assert not described.is_error, text(described)
        definition = described.structured_content["operations"][0]["tool"]
        assert definition["name"] == "listPets"
        assert "limit" in definition["inputSchema"]["properties"]
        result = await client.call_tool(
            "call_read_operation", {"operation": "listPets", "arguments": {"limit": 2}}
        )
    assert not result.is_error, text(result)
    assert len(json.loads(result.content[0].text)) == 2
    assert ("GET", "/pets?limit=2") in upstream.seen


async def test_a_problem_details_error_is_the_operations_own(connect):
    async with connect() as client:
        result = await client.call_tool(
            "call_read_operation", {"operation": "getPet", "arguments": {"petId": 999}}
        )
    assert result.is_error
    resources = [block for block in result.content if isinstance(block, EmbeddedResource)]
    assert resources and resources[0].resource.mime_type == "application/problem+json"
    assert str(resources[0].resource.uri) == "ferry://tools/getPet/response"


async def test_a_wrong_class_is_refused_and_the_right_one_confirms_first(connect, upstream):
    before = [path for method, path in upstream.seen if method == "DELETE"]
    async with connect() as client:
        found = await search(client, "remove a pet")
        assert (found[0]["name"], found[0]["callWith"], found[0]["confirm"]) == (
            "deletePet",
            "call_idempotent_operation",
            True,
        )
        wrong = await client.call_tool(
            "call_operation", {"operation": "deletePet", "arguments": {"petId": 7}}
        )
        assert wrong.is_error
        assert text(wrong).endswith("call it with call_idempotent_operation")
        right = await client.call_tool(
            "call_idempotent_operation", {"operation": "deletePet", "arguments": {"petId": 7}}
        )
    assert not right.is_error, text(right)
    assert right.structured_content == {"deleted": "/pets/7"}
    after = [path for method, path in upstream.seen if method == "DELETE"]
    assert after[len(before):] == ["/pets/7"]
