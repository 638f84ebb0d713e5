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
def serving(curation: Path, upstream_url: str, extra: tuple[str, ...] = ()) -> Iterator[str]:
    """`ferry serve` of `curation` (with `extra` flags) on a loopback port; yields the MCP
    endpoint URL."""
    port = free_port()
    log = tempfile.TemporaryFile()
    command = [
        str(ferry_binary()),
        "serve",
        "--config",
        str(curation),
        "--upstream",
        upstream_url,
        "--listen",
        f"127.0.0.1:{port}",
        *extra,
    ]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
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
    if transport == "http":
        server: str | StdioServerParameters = request.getfixturevalue("ferry_http")
    else:
        server = StdioServerParameters(
            command=str(ferry_binary()),
            args=["serve", "--stdio", "--config", str(PETS_CURATION), "--upstream", upstream.url],
            cwd=str(ROOT),
        )

    def make() -> Client:
        # No response cache: every list must reach the server under test.
        return Client(server, mode=mode, cache=None, read_timeout_seconds=20)

    return make
