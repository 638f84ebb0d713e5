"""Replicas that behave as one: three `ferry serve` processes behind Debian's nginx, sharing one
Debian `redis-server` (`--state`), driven by the official Python SDK. Rate-limit budgets and
spent confirmations hold across the replicas; with Redis killed mid-run (it keeps nothing,
so it comes back empty) the failure rules hold, no call waits past its deadline, and service
recovers; an ACL user and its password are honoured, and a wrong password stops ferry at
start.

Every server here is on 127.0.0.1 and a free port, started and stopped by the test. Where
`redis-server` is not installed the tests fail, unless FERRY_SKIP_REDIS=1 says it could not
be (scripts/test.sh sets it then, says so, and allows these skips alone).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitRequestParams, ElicitResult, InputRequiredResult, TextContent

from conftest import FIXTURES, ferry_binary, free_port, stop, wait_until_listening
from test_replicas import balancer

pytestmark = pytest.mark.anyio

CURATION = FIXTURES / "pets-shared.ferry.yaml"
CONFIRM_KEY = "a shared confirmation key of at least thirty-two bytes"
# getPet's limit in the curation: 100 a minute, so one call's worth every 0.6 s, and a
# burst of 100 (a GCRA's burst is the per-period count).
LIMIT = 100
INTERVAL = 60 / LIMIT
ACCEPT = ElicitResult(action="accept", content={"confirm": True})
# A state is believed sealed after Redis's memory began (which the first replica to start
# marks) only 2 s on, a margin for clocks: confirmations asked sooner are refused. The tests
# that confirm wait this long after start.
SINCE_BEGAN = 3


def redis_binary() -> str | None:
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("FERRY_SKIP_REDIS") == "1":
            pytest.skip("redis-server is not installed (FERRY_SKIP_REDIS=1)")
        pytest.fail("redis-server not found: run scripts/setup-tests.sh, which installs Debian's redis-server")
    return found


class Redis:
    """A `redis-server` of the test's own on 127.0.0.1 and a free port, keeping nothing on
    disk: killed, it comes back empty, as a Redis without persistence does."""

    def __init__(self, folder: Path, extra: tuple[str, ...] = ()) -> None:
        self.binary = redis_binary()
        self.port = free_port()
        self.folder = folder
        self.extra = extra
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.folder),
                *self.extra,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_listening(self.process, self.port, tempfile.TemporaryFile())

    def kill(self) -> None:
        """Ends it at once, as a crash would."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


@contextmanager
def redis(folder: Path, extra: tuple[str, ...] = ()) -> Iterator[Redis]:
    server = Redis(folder, extra)
    try:
        yield server
    finally:
        server.stop()


class Replica:
    """One `ferry serve` of CURATION with `--state`, its audit log and its stderr in `folder`."""

    def __init__(self, folder: Path, upstream_url: str, state: str, extra: tuple[str, ...], env: dict[str, str]):
        self.port = free_port()
        self.audit = folder / "audit.jsonl"
        self.log_path = folder / "ferry.log"
        self.log = self.log_path.open("w+b")
        command = [
            str(ferry_binary()), "serve",
            "--config", str(CURATION),
            "--upstream", upstream_url,
            "--listen", f"127.0.0.1:{self.port}",
            "--audit-log", str(self.audit),
            "--state", state,
            *extra,
        ]
        environment = {**os.environ, "FERRY_TEST_CONFIRM_KEY": CONFIRM_KEY, **env}
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=environment
        )
        wait_until_listening(self.process, self.port, self.log)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def records(self) -> list[dict]:
        text = self.audit.read_text() if self.audit.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def logged(self) -> str:
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        stop(self.process)
        self.log.close()


@contextmanager
def replicas(
    folder: Path, count: int, upstream_url: str, state: str, extra: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> Iterator[list[Replica]]:
    started: list[Replica] = []
    try:
        for index in range(count):
            place = folder / f"replica-{index + 1}"
            place.mkdir()
            started.append(Replica(place, upstream_url, state, extra, env or {}))
        yield started
    finally:
        for replica in started:
            replica.close()


def client(url: str, answer: ElicitResult = ACCEPT) -> Client:
    async def elicitation_callback(context, params: ElicitRequestParams) -> ElicitResult:
        return answer

    return Client(url, mode="2026-07-28", cache=None, read_timeout_seconds=20, elicitation_callback=elicitation_callback)


def text(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def rate_limit(result) -> dict | None:
    return (result.meta or {}).get("dev.ferry/rateLimit")


def gets(upstream, before: int) -> int:
    return sum(1 for method, path in upstream.seen[before:] if method == "GET" and path.startswith("/pets/"))


def deletes(upstream, before: int) -> list[str]:
    return [path for method, path in upstream.seen[before:] if method == "DELETE"]


async def test_three_replicas_keep_one_budget(upstream):
    """1,000 calls of a tool limited to 100 a minute, spread by nginx over three replicas:
    100 pass, plus what the budget regains while the run lasts (one call per 0.6 s; a GCRA's
    burst is its count, so a fresh budget lets 100 through at once)."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        shared = stack.enter_context(redis(folder))
        started = stack.enter_context(replicas(folder, 3, upstream.url, shared.url))
        url = stack.enter_context(balancer([replica.port for replica in started], folder / "nginx"))
        before = len(upstream.seen)
        outcomes: list[str] = []

        async def caller(calls: int) -> None:
            async with client(url) as session:
                for _ in range(calls):
                    result = await session.call_tool("getPet", {"petId": 1})
                    if not result.is_error:
                        outcomes.append("passed")
                        continue
                    limited = rate_limit(result)
                    assert limited is not None, text(result)
                    assert limited["limit"] == "100/min" and limited["scope"] == "tool", limited
                    assert "unchecked" not in limited, limited
                    outcomes.append("limited")

        started_at = time.monotonic()
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(caller, 100)
        elapsed = time.monotonic() - started_at
        passed = outcomes.count("passed")
        regained = math.ceil(elapsed / INTERVAL)
        assert len(outcomes) == 1000
        assert LIMIT <= passed <= LIMIT + regained, (
            f"{passed} of 1000 passed in {elapsed:.1f} s: expected {LIMIT} plus at most {regained} regained"
        )
        assert gets(upstream, before) == passed, "the upstream saw exactly the calls that passed"
        per_replica = [
            sum(1 for record in replica.records() if record.get("tool") == "getPet") for replica in started
        ]
    assert all(count > 0 for count in per_replica), per_replica


async def test_a_confirmation_accepted_on_one_replica_is_refused_on_the_others(upstream):
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        shared = stack.enter_context(redis(folder))
        started = stack.enter_context(replicas(folder, 3, upstream.url, shared.url))
        await anyio.sleep(SINCE_BEGAN)
        before = len(upstream.seen)
        sessions = [await stack.enter_async_context(client(replica.url)) for replica in started]
        asked = await sessions[0].session.call_tool("deletePet", {"petId": 7}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult), asked
        answer = {"confirm": ACCEPT}
        accepted = await sessions[1].session.call_tool(
            "deletePet", {"petId": 7}, input_responses=answer, request_state=asked.request_state
        )
        assert not accepted.is_error, text(accepted)
        for session in (sessions[0], sessions[2], sessions[1]):
            replayed = await session.session.call_tool(
                "deletePet", {"petId": 7}, input_responses=answer, request_state=asked.request_state
            )
            assert replayed.is_error
            assert "already answered once" in text(replayed), text(replayed)
        assert deletes(upstream, before) == ["/pets/7"]
        # The SDK's own rounds work through any replica.
        async with client(started[2].url) as again:
            confirmed = await again.call_tool("deletePet", {"petId": 8})
        assert not confirmed.is_error, text(confirmed)
        assert deletes(upstream, before) == ["/pets/7", "/pets/8"]


async def test_redis_killed_mid_run_then_back_empty(upstream):
    """Redis dies mid-run (losing everything) and comes back: limited calls are refused while
    it is gone (`--state-on-failure closed`), confirmations are refused (always), calls that
    need no state go on, no call waits past its deadline, every failure is in the audit log
    and the log, and once Redis is back calls pass again; a confirmation asked before the
    loss stays refused."""
    deadline = 2.0  # far above the 100 ms round-trip deadline; a hang would pass it
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        shared = stack.enter_context(redis(folder))
        started = stack.enter_context(replicas(folder, 3, upstream.url, shared.url))
        url = stack.enter_context(balancer([replica.port for replica in started], folder / "nginx"))
        session = await stack.enter_async_context(client(url))
        await anyio.sleep(SINCE_BEGAN)
        before = len(upstream.seen)

        async def timed(name: str, arguments: dict, **extra):
            begun = time.monotonic()
            if extra:
                result = await session.session.call_tool(name, arguments, **extra)
            else:
                result = await session.call_tool(name, arguments)
            took = time.monotonic() - begun
            assert took < deadline, f"{name} took {took:.2f} s"
            return result

        for _ in range(6):
            assert not (await timed("getPet", {"petId": 1})).is_error
        asked = await session.session.call_tool("deletePet", {"petId": 5}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        answer = {"confirm": ACCEPT}
        assert not (await timed("deletePet", {"petId": 5}, input_responses=answer, request_state=asked.request_state)).is_error

        shared.kill()
        for _ in range(9):
            refused = await timed("getPet", {"petId": 2})
            assert refused.is_error, text(refused)
            assert (rate_limit(refused) or {}).get("unchecked") is True, text(refused)
            assert not (await timed("listPets", {})).is_error
        pending = await session.session.call_tool("deletePet", {"petId": 6}, allow_input_required=True)
        assert isinstance(pending, InputRequiredResult), "asking needs no state"
        for state in (pending.request_state, asked.request_state):
            unconfirmed = await timed("deletePet", {"petId": 6 if state == pending.request_state else 5},
                                      input_responses=answer, request_state=state)
            assert unconfirmed.is_error
            assert "cannot be checked now" in text(unconfirmed), text(unconfirmed)

        shared.start()
        recovered_by = time.monotonic() + 10
        while True:
            result = await timed("getPet", {"petId": 3})
            if not result.is_error:
                break
            assert time.monotonic() < recovered_by, f"no recovery: {text(result)}"
            await anyio.sleep(0.1)
        for _ in range(3):
            assert not (await timed("getPet", {"petId": 3})).is_error
        # Redis came back empty: the confirmation answered before the loss cannot be known
        # spent, so it is refused (on every replica nginx sends it to).
        for _ in range(3):
            replayed = await timed("deletePet", {"petId": 5}, input_responses=answer, request_state=asked.request_state)
            assert replayed.is_error
            assert "lost what it held" in text(replayed) or "already answered once" in text(replayed), text(replayed)
        # A confirmation asked now is accepted once the margin for clocks has passed.
        await anyio.sleep(SINCE_BEGAN)
        async with client(url) as fresh:
            confirmed = await fresh.call_tool("deletePet", {"petId": 9})
        assert not confirmed.is_error, text(confirmed)
        assert deletes(upstream, before) == ["/pets/5", "/pets/9"]

        await anyio.sleep(0.5)
        records = [record for replica in started for record in replica.records()]
        failures = [record["state_failure"] for record in records if "state_failure" in record]
        assert failures.count("rate_limit_closed") >= 9, failures
        assert failures.count("confirmation_closed") == 2, failures
        assert all("state_failure" not in record for record in records if record.get("tool") == "listPets")
        logs = "".join(replica.logged() for replica in started)
        assert "rate limit not checked: the shared state did not answer" in logs
        assert "confirmation refused: the shared state did not answer" in logs


async def test_an_acl_user_and_password_are_honoured(upstream):
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        acl = folder / "users.acl"
        acl.write_text(
            "user default on >admin-password-for-tests ~* &* +@all\n"
            "user ferry on >ferry-password-0123 ~ferry:* resetchannels -@all"
            " +evalsha +script|load +get +set +time\n"
        )
        shared = stack.enter_context(redis(folder, ("--aclfile", str(acl))))
        state = f"redis://ferry@127.0.0.1:{shared.port}"
        started = stack.enter_context(
            replicas(folder, 2, upstream.url, state, env={"FERRY_STATE_PASSWORD": "ferry-password-0123"})
        )
        for replica in started:
            async with client(replica.url) as session:
                result = await session.call_tool("getPet", {"petId": 1})
            assert not result.is_error, text(result)
        wrong = subprocess.run(
            [
                str(ferry_binary()), "serve",
                "--config", str(CURATION),
                "--upstream", upstream.url,
                "--listen", f"127.0.0.1:{free_port()}",
                "--state", state,
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, "FERRY_TEST_CONFIRM_KEY": CONFIRM_KEY, "FERRY_STATE_PASSWORD": "not-the-password"},
        )
    assert wrong.returncode == 2, wrong.stderr
    assert "refused ferry" in wrong.stderr and "FERRY_STATE_PASSWORD" in wrong.stderr, wrong.stderr
    assert "not-the-password" not in wrong.stderr
