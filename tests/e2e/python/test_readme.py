"""The README's quick start, run as a person following it would: its own commands and edits,
read out of README.md, against GitHub's document (the copy the tests install from npm) and a
loopback upstream shaped like GitHub's API in place of api.github.com; then the Python SDK
lists the three tools and calls them. Nothing here restates the steps: when the README
changes, this follows it, and when the README stops working, this fails.

What differs from a person's run, and only that: the document is copied from the npm package
instead of downloaded (no network in tests), `upstream:` names the loopback upstream instead of
https://api.github.com, and `ferry serve` listens on a free port (its `--listen`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import Client

from conftest import E2E, ROOT, ferry_binary, free_port, stop, wait_until_listening

pytestmark = pytest.mark.anyio

GITHUB_DOCUMENT = E2E / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
TOKEN = "ghp_readme-quick-start-token-0123456789"


def quick_start() -> str:
    """The README's quick start section, up to the next second-level heading."""
    text = (ROOT / "README.md").read_text()
    start = text.index("## Quick start")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks(section: str, language: str) -> list[str]:
    """The fenced code blocks of `language` in `section`, in order."""
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def commands(section: str) -> list[list[str]]:
    """Every command of the section: each line of its `sh` blocks (comments and exports left
    out), and each `$ ` line of its `text` blocks (a command shown with its output)."""
    found = []
    for block in blocks(section, "sh"):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith(("#", "export ")):
                found.append(shlex.split(line))
    for block in blocks(section, "text"):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append(shlex.split(line[2:].split("|", 1)[0]))
    return found


class GitHub(BaseHTTPRequestHandler):
    """The three operations the quick start serves, as GitHub answers them; every request
    and its Authorization header are recorded."""

    seen: list[tuple[str, str, str | None, bytes]] = []

    def log_message(self, *args) -> None:  # no access log on stderr
        pass

    def answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        GitHub.seen.append(("GET", self.path, self.headers.get("authorization"), b""))
        if self.path == "/repos/octo/hello":
            self.answer(200, {"id": 1, "full_name": "octo/hello", "open_issues_count": 1})
        elif self.path.startswith("/repos/octo/hello/issues"):
            self.answer(200, [{"number": 7, "title": "It breaks", "state": "open"}])
        else:
            self.answer(404, {"message": "Not Found"})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        GitHub.seen.append(("POST", self.path, self.headers.get("authorization"), body))
        self.answer(201, {"number": 8, **json.loads(body)})


@pytest.fixture
def github():
    server = ThreadingHTTPServer(("127.0.0.1", 0), GitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    GitHub.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_the_readme_quick_start_serves_github_to_the_python_sdk(github):
    section = quick_start()
    steps = commands(section)
    ferry = str(ferry_binary())
    folder = Path(tempfile.mkdtemp(prefix="ferry-readme-"))
    env = {**os.environ, "GITHUB_TOKEN": TOKEN}
    try:
        # 1. Get the document (a copy, not a download) and list its operations.
        curl = next(step for step in steps if step[0] == "curl")
        shutil.copy(GITHUB_DOCUMENT, folder / Path(curl[-1]).name)
        init = next(step for step in steps if step[:2] == ["ferry", "init"])
        run = subprocess.run([ferry, *init[1:]], cwd=folder, capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
        written = (folder / "ferry.yaml").read_text()

        # 2. The edits step 2 shows: each tool it switches on, the credential uncommented,
        # and the upstream named (here, the loopback one).
        edits = blocks(section, "yaml")[-1]
        switched = re.findall(r"^\s+([\w/.-]+): \{\}", edits, flags=re.M)
        assert len(switched) == 3, edits
        for key in switched:
            written, count = re.subn(rf"^(\s+){re.escape(key)}: false$", rf"\1{key}: {{}}", written, flags=re.M)
            assert count == 1, f"{key} is not in the file ferry init wrote"
        credential = re.search(r"^upstream_auth: .*$", edits, flags=re.M).group(0)
        written, count = re.subn(rf"^# {re.escape(credential)}.*$", credential, written, flags=re.M)
        assert count == 1, f"ferry init wrote no `# {credential}` to uncomment"
        assert re.search(r"^upstream: https://api\.github\.com$", edits, flags=re.M), edits
        written += f"upstream: {github}\n"
        # The stand-in GitHub answers a few members of each documented answer, not all that
        # GitHub's document promises: its answers are not checked against it.
        written += "output_schema: false\n"
        (folder / "ferry.yaml").write_text(written)

        # 3. Check: no error, three tools.
        check = next(step for step in steps if step[:2] == ["ferry", "check"])
        run = subprocess.run([ferry, *check[1:]], cwd=folder, capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "3 tools" in run.stdout, run.stdout
        # The tools the README shows are the ones ferry names.
        shown = re.findall(r"served \(tools entry\)\s+(\S+)", blocks(section, "text")[0])
        named = re.findall(r"served \(tools entry\)\s+(\S+)", run.stdout)
        assert sorted(shown) == sorted(named) and len(named) == 3, (shown, run.stdout)

        # 4. Serve, and connect a client.
        serve = next(step for step in steps if step[:2] == ["ferry", "serve"])
        port = free_port()
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(
            [ferry, *serve[1:], "--listen", f"127.0.0.1:{port}"],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        try:
            wait_until_listening(process, port, log)
            async with Client(f"http://127.0.0.1:{port}/mcp", cache=None, read_timeout_seconds=20) as client:
                tools = sorted(tool.name for tool in (await client.list_tools()).tools)
                assert tools == ["issues_create", "issues_list_for_repo", "repos_get"]
                repository = await client.call_tool("repos_get", {"owner": "octo", "repo": "hello"})
                assert not repository.is_error, repository
                assert repository.structured_content["full_name"] == "octo/hello"
                issues = await client.call_tool("issues_list_for_repo", {"owner": "octo", "repo": "hello"})
                assert not issues.is_error, issues
                created = await client.call_tool(
                    "issues_create", {"owner": "octo", "repo": "hello", "title": "From the README"}
                )
                assert not created.is_error, created
                assert created.structured_content["number"] == 8
            # The connection command `--client claude-code` printed names this server.
            log.seek(0)
            printed = log.read().decode(errors="replace")
            assert f"claude mcp add --transport http ferry http://127.0.0.1:{port}/mcp" in printed, printed
        finally:
            stop(process)
            log.close()
        # GitHub saw ferry's token, from the environment, on every call, and nothing else.
        assert [(method, path.split("?")[0]) for method, path, _, _ in GitHub.seen] == [
            ("GET", "/repos/octo/hello"),
            ("GET", "/repos/octo/hello/issues"),
            ("POST", "/repos/octo/hello/issues"),
        ]
        assert {authorization for _, _, authorization, _ in GitHub.seen} == {f"Bearer {TOKEN}"}
        assert json.loads(GitHub.seen[-1][3]) == {"title": "From the README"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
