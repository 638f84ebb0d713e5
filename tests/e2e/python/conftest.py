"""Fixtures of the Python SDK end-to-end tests: the fixture upstream, `ferry serve` over
Streamable HTTP, and a factory of real `mcp.Client`s for every transport and protocol era."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

E2E = Path(__file__).resolve().parent.parent
ROOT = E2E.parent.parent
FIXTURES = E2E / "fixtures"
sys.path.insert(0, str(E2E))

from upstream import Upstream  # noqa: E402 - needs the path above

PETS_CURATION = FIXTURES / "pets.ferry.yaml"

# Every combination a real client meets: two transports, two protocol eras.
TRANSPORTS = ["http", "stdio"]
MODES = ["2026-07-28", "legacy"]


def ferry_binary() -> Path:
    """The binary under test: $FERRY_BIN, or the debug build of this checkout."""
    path = Path(os.environ.get("FERRY_BIN", ROOT / "target" / "debug" / "ferry"))
    if not path.is_file():
        pytest.fail(f"ferry binary not found at {path}: run `cargo build` first (or set FERRY_BIN)")
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@contextmanager
def serving(
    curation: Path,
    upstream_url: str | None,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """`ferry serve` of `curation` (with `extra` flags, and `env` added to its environment) on
    a loopback port; yields the MCP endpoint URL. Without `upstream_url` the curation names
    its upstreams itself."""
    port = free_port()
    log = tempfile.TemporaryFile()
    upstream = ["--upstream", upstream_url] if upstream_url is not None else []
    command = [
        str(ferry_binary()),
        "serve",
        "--config",
        str(curation),
        *upstream,
        "--listen",
        f"127.0.0.1:{port}",
        *extra,
    ]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_until_listening(process, port, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)
        log.close()


@pytest.fixture(scope="session")
def ferry_http(upstream: Upstream) -> Iterator[str]:
    """`ferry serve` of the pets fixture for the whole session."""
    with serving(PETS_CURATION, upstream.url) as url:
        yield url


def stop(process: subprocess.Popen) -> None:
    """Ends a process the test started: asked first, killed when it does not end within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_listening(process: subprocess.Popen, port: int, log, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            output = log.read().decode(errors="replace")
            pytest.fail(f"ferry serve exited with {process.returncode} before listening:\n{output}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"ferry serve did not listen on 127.0.0.1:{port} within {timeout}s")


@pytest.fixture(params=TRANSPORTS)
def transport(request) -> str:
    return request.param


@pytest.fixture(params=MODES)
def mode(request) -> str:
    return request.param


@pytest.fixture
def connect(transport: str, mode: str, upstream: Upstream, request) -> Callable[[], Client]:
    """Makes a real client of the SDK for this test's transport and era (not yet entered)."""
    stdio = ["--config", str(PETS_CURATION), "--upstream", upstream.url]
    return client_maker(transport, mode, request, "ferry_http", stdio)


def client_maker(
    transport: str,
    mode: str,
    request,
    http_fixture: str,
    stdio_args: list[str],
    env: dict[str, str] | None = None,
) -> Callable[[], Client]:
    """Makes real clients of the SDK for `transport` and era `mode`: over HTTP to the URL the
    fixture named `http_fixture` yields (started only when asked for), or over stdio to
    `ferry serve --stdio STDIO_ARGS` with `env` added to the SDK's default environment."""
    if transport == "http":
        server: str | StdioServerParameters = request.getfixturevalue(http_fixture)
    else:
        server = StdioServerParameters(
            command=str(ferry_binary()),
            args=["serve", "--stdio", *stdio_args],
            env=env,
            cwd=str(ROOT),
        )

    def make() -> Client:
        # No response cache: every list must reach the server under test.
        return Client(server, mode=mode, cache=None, read_timeout_seconds=20)

    return make
