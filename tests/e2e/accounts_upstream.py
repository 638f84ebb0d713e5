"""The upstream of the Arazzo workflow tests: the accounts API of tests/data/arazzo/run/, a
small HTTP server on loopback that records every request it gets, in order.

Each account (the `{account}` path segment) has its own state, made on its first request,
so a run under a new account name takes the same path whoever the client is:

  GET  /accounts/{a}/balance           200 {amount, currency}; every account starts at 1250
  POST /accounts/{a}/transfers         201 {id, amount, to}, taken from the balance; an
                                       amount above it -> 409 application/problem+json
  POST /accounts/{a}/exports           202 {id, status: running, rows: 0}
  GET  /accounts/{a}/exports/{id}      200, `running` for the first two reads of an export
                                       (rows 1, 2), then `done` with rows 3
  GET  /accounts/{a}/statement         503 application/problem+json for the first two reads
                                       of an account's statement, then 200 with an ETag

`Accounts.requests` is what was received: method, path, query pairs, the headers named in
RECORDED_HEADERS and the JSON body (None when there is none). `reset()` forgets requests
and state. No Retry-After is sent with the 503: an Arazzo `retry` action's `retryAfter`
is then the only delay.

Python's standard library only. Imported by the pytest tests; run as a script
(`python3 accounts_upstream.py [PORT]`), it prints `PORT <n>` on stdout once listening and
serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENING_BALANCE = 1250
# How many reads an export stays running, and a statement unavailable.
EXPORT_RUNNING_READS = 2
STATEMENT_UNAVAILABLE_READS = 2
EXPORT_ROWS = 3

# The request headers a test compares; others (user agent, connection) differ by client.
RECORDED_HEADERS = ("accept", "content-type")


@dataclass
class Account:
    balance: int = OPENING_BALANCE
    transfers: int = 0
    # Export id -> how many times it was read.
    exports: dict[str, int] = field(default_factory=dict)
    statement_reads: int = 0


def problem(status: int, title: str, detail: str) -> dict:
    return {"type": "about:blank", "title": title, "status": status, "detail": detail}


class Handler(BaseHTTPRequestHandler):
    server_version = "ferry-e2e-accounts"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
        pass

    def send_json(self, status: int, value, content_type: str = "application/json", headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, header in (headers or {}).items():
            self.send_header(name, header)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_problem(self, status: int, title: str, detail: str) -> None:
        self.send_json(status, problem(status, title, detail), "application/problem+json")

    def handle_request(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        headers = {name: self.headers[name] for name in RECORDED_HEADERS if name in self.headers}
        upstream: Accounts = self.server.accounts  # type: ignore[attr-defined]
        with upstream.lock:
            upstream.requests.append(
                {
                    "method": method,
                    "path": urllib.parse.unquote(path),
                    "query": urllib.parse.parse_qsl(query, keep_blank_values=True),
                    "headers": headers,
                    "body": body,
                }
            )
            self.route(method, path, body, upstream)

    def route(self, method: str, path: str, body, upstream: Accounts) -> None:
        match = re.fullmatch(r"/accounts/([^/]+)(/.*)", path)
        if not match:
            self.send_problem(404, "No route", f"nothing is at {path}")
            return
        name, rest = urllib.parse.unquote(match.group(1)), match.group(2)
        account = upstream.accounts.setdefault(name, Account())
        if (method, rest) == ("GET", "/balance"):
            self.send_json(200, {"amount": account.balance, "currency": "EUR"})
        elif (method, rest) == ("POST", "/transfers"):
            self.transfer(account, body)
        elif (method, rest) == ("POST", "/exports"):
            if not isinstance(body, dict) or body.get("format") not in ("csv", "json"):
                self.send_problem(400, "Bad export", "an export needs a format: csv or json")
                return
            export_id = f"ex-{len(account.exports) + 1}"
            account.exports[export_id] = 0
            self.send_json(202, {"id": export_id, "status": "running", "rows": 0})
        elif method == "GET" and (found := re.fullmatch(r"/exports/([^/]+)", rest)):
            export_id = urllib.parse.unquote(found.group(1))
            if export_id not in account.exports:
                self.send_problem(404, "No such export", f"account {name} has no export {export_id}")
                return
            account.exports[export_id] += 1
            reads = account.exports[export_id]
            if reads <= EXPORT_RUNNING_READS:
                self.send_json(200, {"id": export_id, "status": "running", "rows": reads})
            else:
                self.send_json(200, {"id": export_id, "status": "done", "rows": EXPORT_ROWS})
        elif (method, rest) == ("GET", "/statement"):
            account.statement_reads += 1
            if account.statement_reads <= STATEMENT_UNAVAILABLE_READS:
                self.send_problem(503, "Statement not ready", "the statement is being prepared")
            else:
                self.send_json(
                    200,
                    {"account": name, "balance": account.balance},
                    headers={"ETag": f'"statement-{account.statement_reads}"'},
                )
        else:
            self.send_problem(404, "No route", f"nothing is at {method} {path}")

    def transfer(self, account: Account, body) -> None:
        amount = body.get("amount") if isinstance(body, dict) else None
        to = body.get("to") if isinstance(body, dict) else None
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1 or not isinstance(to, str):
            self.send_problem(400, "Bad transfer", "a transfer needs an integer amount of at least 1 and a payee `to`")
            return
        if amount > account.balance:
            self.send_problem(409, "Insufficient funds", f"the balance is {account.balance} EUR, less than {amount} EUR")
            return
        account.balance -= amount
        account.transfers += 1
        self.send_json(201, {"id": f"tr-{account.transfers}", "amount": amount, "to": to})

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.handle_request("GET")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.handle_request("POST")

    def do_PUT(self) -> None:  # noqa: N802 - the stdlib's name
        self.handle_request("PUT")

    def do_DELETE(self) -> None:  # noqa: N802 - the stdlib's name
        self.handle_request("DELETE")


class Accounts:
    """The accounts API on 127.0.0.1 (port chosen by the OS), serving on a daemon thread."""

    def __init__(self, port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.accounts = self  # type: ignore[attr-defined]
        # One lock over the log and the state: requests are recorded and answered one at a
        # time, so the order recorded is the order answered.
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.accounts: dict[str, Account] = {}
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="accounts", daemon=True)

    def reset(self) -> None:
        """Forgets every request and every account."""
        with self.lock:
            self.requests.clear()
            self.accounts.clear()

    def __enter__(self) -> Accounts:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    from upstream import serve_until_stopped

    serve_until_stopped(Accounts)


if __name__ == "__main__":
    main()
