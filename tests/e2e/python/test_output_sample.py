"""The generated-body sample of issue 29 through the official MCP Python SDK, which validates
every `structuredContent` against the tool's `outputSchema` (and raises when it does not
conform): over 200 operations drawn with a fixed seed from the corpus (output_sample.py says
how), each answering a body generated from its documented 2xx schema through a loopback
upstream, are served as structured content the SDK accepts, in both revisions, with and
without `fields:`; bodies made not to conform are `isError` results saying what did not match.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent

from conftest import E2E, MODES, serving

sys.path.insert(0, str(E2E))

from output_sample import SampleUpstream, cached, curation_for, project  # noqa: E402 - needs the path above

pytestmark = pytest.mark.anyio

MISMATCH = "does not match this tool's declared output schema"


@pytest.fixture(scope="module")
def sample() -> Path:
    return cached()


@pytest.fixture(scope="module")
def cases(sample: Path) -> list[dict]:
    return json.loads((sample / "sample.json").read_text())


@pytest.fixture(scope="module")
def upstream(sample: Path) -> Iterator[SampleUpstream]:
    with SampleUpstream(sample) as server:
        yield server


@pytest.fixture(scope="module", params=["whole", "fields"])
def served(request, sample: Path, upstream: SampleUpstream) -> Iterator[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as folder:
        curation = curation_for(sample, request.param, upstream.url, Path(folder))
        with serving(curation, None) as url:
            yield url, request.param


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def test_the_sample_is_large_and_varied(sample: Path):
    summary = json.loads((sample / "summary.json").read_text())
    print(json.dumps(summary, indent=2))
    assert summary["sampled"] >= 200, summary
    assert summary["documents"] >= 50, summary
    assert summary["with_fields"] >= 100, summary
    for feature, count in summary["features"].items():
        assert count >= 3, f"the sample holds {count} operations with {feature}: {summary}"


@pytest.mark.parametrize("mode", MODES)
async def test_generated_bodies_are_structured_content_the_sdk_accepts(served, cases, upstream, mode):
    url, variant = served
    upstream.state["mode"] = "conforming"
    async with Client(url, mode=mode, cache=None, read_timeout_seconds=30) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        failures = []
        for case in cases:
            name = case["tool"] if variant == "whole" else case["fields_tool"]
            assert listed[name].output_schema is not None, name
            try:
                # The SDK raises if the structured content does not match the declared schema.
                result = await client.call_tool(name, case["arguments"])
            except RuntimeError as error:
                failures.append(f"{name}: the SDK refused it: {error}")
                continue
            if result.is_error is not False:
                failures.append(f"{name}: " + texts(result)[:700].replace("\n", " | "))
                continue
            body = case["body"] if variant == "whole" else project(case["body"], case["fields"])
            expected = {"result": body} if mode == "legacy" and not isinstance(body, dict) else body
            if json.loads(json.dumps(result.structured_content)) != expected:
                failures.append(f"{name}: served {result.structured_content!r:.300}, sent {expected!r:.300}")
        assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures[:25])


@pytest.mark.parametrize("mode", MODES)
async def test_bodies_made_not_to_conform_take_the_mismatch_path(served, cases, upstream, mode):
    url, variant = served
    upstream.state["mode"] = "broken"
    try:
        async with Client(url, mode=mode, cache=None, read_timeout_seconds=30) as client:
            await client.list_tools()
            checked = 0
            failures = []
            for case in cases:
                if variant == "fields" and not case["broken_in_fields"]:
                    continue
                name = case["tool"] if variant == "whole" else case["fields_tool"]
                result = await client.call_tool(name, case["arguments"])
                said = texts(result)
                # It says where: a JSON pointer into the answer, or the answer itself.
                where = "What does not match:\n- /" in said or "What does not match:\n- (the answer):" in said
                if result.is_error is not True or result.structured_content is not None or MISMATCH not in said or not where:
                    failures.append(f"{name}: {said[:600]}")
                checked += 1
            assert not failures, f"{len(failures)} of {checked}:\n" + "\n".join(failures[:25])
            assert checked >= 200 or variant == "fields", checked
    finally:
        upstream.state["mode"] = "conforming"
