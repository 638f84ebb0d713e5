"""ferry through the official MCP Python SDK (`mcp` 2.3.0) as a real client: modern
(2026-07-28) and legacy (2025-11-25) mode, over Streamable HTTP and over stdio (the built
binary as a subprocess), against the fixture upstream of tests/e2e/upstream.py.

Every test runs for each transport × era pair (see conftest.py).
"""

from __future__ import annotations

import json
import time

import pytest
from mcp import MCPError
from mcp.types import DiscoverResult, EmbeddedResource, TextContent, TextResourceContents

from upstream import PETS, problem_no_such_pet

pytestmark = pytest.mark.anyio

TOOL_NAMES = ["createPet", "getPet", "listPets", "slowReport"]
INSTRUCTIONS = "A pet is read by its numeric id; list pets to find ids."
HTTP_META = "dev.ferry/http"


def texts(result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def http_facts(result) -> dict:
    meta = result.meta or {}
    assert HTTP_META in meta, f"no {HTTP_META} in result _meta: {meta}"
    return meta[HTTP_META]


async def test_client_discovers_the_server(connect, mode):
    async with connect() as client:
        if mode == "legacy":
            assert client.protocol_version == "2025-11-25"
            assert client.server_capabilities.tools is not None
            assert client.server_info is not None and client.server_info.name == "pets-e2e"
            assert client.instructions == INSTRUCTIONS
        else:
            assert client.protocol_version == "2026-07-28"
            # A pinned client adopts a synthesized discover result without asking: ask the
            # server itself.
            discovered = DiscoverResult.model_validate(await client.session.send_discover("2026-07-28"))
            assert discovered.supported_versions == ["2026-07-28", "2025-11-25"]
            assert discovered.capabilities.tools is not None
            assert discovered.capabilities.resources is None, "ferry serves no resources"
            assert discovered.capabilities.prompts is None, "ferry serves no prompts"
            assert discovered.instructions == INSTRUCTIONS
            server_info = (discovered.meta or {}).get("io.modelcontextprotocol/serverInfo")
            assert server_info is not None and server_info["name"] == "pets-e2e"


async def test_client_lists_the_curated_tools_in_order(connect, mode):
    async with connect() as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == TOOL_NAMES
        tools = {tool.name: tool for tool in listed.tools}

        get_pet = tools["getPet"]
        assert get_pet.description
        assert get_pet.input_schema["required"] == ["petId"]
        assert get_pet.input_schema["additionalProperties"] is False
        assert get_pet.input_schema["properties"]["petId"]["type"] == "integer"
        assert get_pet.annotations is not None and get_pet.annotations.read_only_hint is True
        # The documented answer, an object through its `$ref`: the same in both eras.
        assert get_pet.output_schema["$ref"] == "#/$defs/Pet", get_pet.output_schema

        # POST justifies no annotation at all.
        create_pet = tools["createPet"]
        assert create_pet.annotations is None or create_pet.annotations.read_only_hint is None

        if mode != "legacy":
            assert listed.ttl_ms is not None and listed.ttl_ms >= 0
            assert listed.cache_scope == "public"


async def test_call_returns_the_upstream_object_as_structured_content(connect, upstream):
    async with connect() as client:
        result = await client.call_tool("getPet", {"petId": 1})
        assert result.is_error is False
        assert result.structured_content == PETS[1]
        # The same JSON as text, for models that read only text.
        assert [json.loads(text) for text in texts(result)] == [PETS[1]]
        facts = http_facts(result)
        assert facts["status"] == 200
        assert facts["headers"]["etag"] == '"pet-1"'
        assert ("GET", "/pets/1") in upstream.seen


async def test_call_with_an_array_answer_keeps_it_structured(connect, mode, upstream):
    async with connect() as client:
        result = await client.call_tool("listPets", {"limit": 2})
        assert result.is_error is False
        pets = [PETS[1], PETS[2]]
        if mode == "legacy":
            # 2025-11-25 allows only objects there: arrays are wrapped under one documented key.
            assert result.structured_content == {"result": pets}
        else:
            assert result.structured_content == pets
        assert ("GET", "/pets?limit=2") in upstream.seen


async def test_created_resource_keeps_its_status_and_location(connect):
    async with connect() as client:
        result = await client.call_tool("createPet", {"name": "Bella", "tag": "dog"})
        assert result.is_error is False
        assert result.structured_content == {"id": 100, "name": "Bella", "tag": "dog"}
        facts = http_facts(result)
        assert facts["status"] == 201
        assert facts["headers"]["location"] == "/pets/100"


async def test_invalid_argument_is_an_error_result_that_names_it(connect, upstream):
    async with connect() as client:
        before = len(upstream.seen)
        result = await client.call_tool("getPet", {"petId": "one"})
        assert result.is_error is True
        message = " ".join(texts(result))
        assert "petId" in message, message
        assert HTTP_META not in (result.meta or {}), "nothing was sent, so there are no HTTP facts"
        assert len(upstream.seen) == before, "an invalid call must not reach the upstream"


async def test_missing_required_argument_is_an_error_result(connect, upstream):
    async with connect() as client:
        before = len(upstream.seen)
        result = await client.call_tool("createPet", {"tag": "dog"})
        assert result.is_error is True
        assert "name" in " ".join(texts(result))
        assert len(upstream.seen) == before


async def test_unknown_tool_is_a_protocol_error(connect, upstream):
    async with connect() as client:
        before = len(upstream.seen)
        with pytest.raises(MCPError) as raised:
            await client.call_tool("deletePet", {"petId": 1})
        assert raised.value.code == -32602
        assert len(upstream.seen) == before


async def test_problem_details_arrive_as_an_embedded_resource(connect):
    async with connect() as client:
        result = await client.call_tool("getPet", {"petId": 999})
        assert result.is_error is True
        # A short text block leads, for models.
        assert isinstance(result.content[0], TextContent)
        assert "No such pet" in result.content[0].text
        resources = [block.resource for block in result.content if isinstance(block, EmbeddedResource)]
        assert len(resources) == 1
        problem = resources[0]
        assert isinstance(problem, TextResourceContents)
        assert problem.mime_type == "application/problem+json"
        # The body exactly as the upstream sent it: every member, its bytes unchanged.
        assert problem.text == problem_no_such_pet(999).decode()
        assert str(problem.uri) == "ferry://tools/getPet/response"
        facts = http_facts(result)
        assert facts["status"] == 404
        assert facts["headers"]["content-type"] == "application/problem+json"
        assert facts["headers"]["content-language"] == "en"


async def test_upstream_timeout_is_an_error_result(connect):
    async with connect() as client:
        started = time.monotonic()
        result = await client.call_tool("slowReport", {})
        elapsed = time.monotonic() - started
        assert result.is_error is True
        assert texts(result), "a timeout says so in text"
        assert HTTP_META not in (result.meta or {}), "no HTTP answer, so no HTTP facts"
        assert elapsed < 4, f"the tool's 500 ms timeout should end the call, took {elapsed:.1f}s"
