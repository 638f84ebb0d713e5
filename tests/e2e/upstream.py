"""The fixture upstream API of the end-to-end tests: a small HTTP server on loopback.

It serves what the fixture OpenAPI documents describe (fixtures/pets.openapi.yaml and
fixtures/conformance.openapi.yaml), so the tests exercise ferry's real translation of HTTP
answers into MCP results, not a stub:

  GET  /pets                  JSON array                     -> structuredContent
  GET  /pets/{id}             JSON object; an unknown id     -> application/problem+json 404
  POST /pets                  201 JSON with Location
  GET  /slow                  answers after SLOW_SECONDS      -> ferry's timeout result
  GET  /conformance/...       text/plain, image/png, audio/wav, octet-stream, a 500, an echo

Python's standard library only. Imported by the pytest tests; run as a script
(`python3 upstream.py [PORT]`) by the TypeScript tests and the conformance runner, it prints
`PORT <n>` on stdout once listening and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import base64
import json
import re
import signal
import struct
import sys
import itertools
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How long GET /slow takes. The fixture curation gives that tool a much shorter timeout, so
# ferry gives up first; the bound keeps a stray request from holding a thread for long.
SLOW_SECONDS = 5.0

PETS = {
    1: {"id": 1, "name": "Rex", "tag": "dog"},
    2: {"id": 2, "name": "Tom", "tag": "cat"},
    3: {"id": 3, "name": "Nemo", "tag": "fish"},
}

# The conformance fixture's jobs (POST /conformance/jobs/...), by id: what kind, when
# accepted, how long they take, their label, whether they were cancelled. A job's status is
# worked out from the clock when it is read.
JOBS: dict[str, dict] = {}
JOBS_LOCK = threading.Lock()
JOB_IDS = itertools.count(1)
FAILING_JOB_SECONDS = 1.0

SIMPLE_TEXT = "This is a simple text response for testing."
EMBEDDED_TEXT = "This is an embedded resource content."
ERROR_TEXT = "This tool intentionally returns an error for testing"

# A 1x1 red pixel.
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def wav_silence(samples: int = 8, rate: int = 8000) -> bytes:
    """A valid mono 8-bit PCM WAV file holding `samples` samples of silence."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


WAV = wav_silence()


def problem_no_such_pet(pet_id: int) -> bytes:
    """An RFC 9457 problem with every standard member and an extension member. Written by hand
    (odd spacing, member order) so a test can tell the bytes were kept, not re-serialized."""
    return (
        '{"type": "https://pets.example/problems/no-such-pet",  "title": "No such pet",'
        f' "status": 404, "detail": "there is no pet {pet_id}", "instance": "/pets/{pet_id}",'
        f' "petId": {pet_id}, "known": {{"count": {len(PETS)}}}}}'
    ).encode()


class Handler(BaseHTTPRequestHandler):
    server_version = "ferry-e2e-upstream"
    protocol_version = "HTTP/1.1"
    # An answer's head and body go out in two writes: without this, the body waits for the
    # client's delayed acknowledgement of the head, about 40 ms a call on a kept connection.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
        # Quiet: stdout is the port handshake and the test output; errors still reach stderr.
        pass

    def send(self, status: int, content_type: str | None, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, value, headers: dict[str, str] | None = None) -> None:
        self.send(status, "application/json", json.dumps(value).encode(), headers)

    def record(self, method: str) -> None:
        self.server.seen.append((method, self.path))  # type: ignore[attr-defined]
        self.server.seen_headers.append(list(self.headers.items()))  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.record("GET")
        path, _, query = self.path.partition("?")
        if path == "/pets":
            limit = None
            for item in query.split("&"):
                name, _, value = item.partition("=")
                if name == "limit" and value.isdigit():
                    limit = int(value)
            pets = list(PETS.values())
            self.send_json(200, pets[:limit] if limit is not None else pets)
        elif match := re.fullmatch(r"/pets/(-?\d+)", path):
            pet_id = int(match.group(1))
            if pet_id in PETS:
                self.send_json(200, PETS[pet_id], {"ETag": f'"pet-{pet_id}"'})
            else:
                self.send(404, "application/problem+json", problem_no_such_pet(pet_id), {"Content-Language": "en"})
        elif path == "/slow":
            # Wait in small steps so a shutdown of the fixture is not held up for long.
            stop = self.server.stopping  # type: ignore[attr-defined]
            stop.wait(SLOW_SECONDS)
            self.send_json(200, {"slow": True})
        elif path == "/conformance/simple-text":
            self.send(200, "text/plain; charset=utf-8", SIMPLE_TEXT.encode())
        elif path == "/conformance/image":
            self.send(200, "image/png", PNG_1X1)
        elif path == "/conformance/audio":
            self.send(200, "audio/wav", WAV)
        elif path == "/conformance/embedded-resource":
            self.send(200, "application/octet-stream", EMBEDDED_TEXT.encode())
        elif path == "/conformance/error":
            self.send(500, "text/plain; charset=utf-8", ERROR_TEXT.encode())
        elif path.startswith("/conformance/confirmed/"):
            # The confirming fixture tools: reached only once the user confirmed.
            self.send(200, "text/plain; charset=utf-8", b"confirmed: state-ok")
        elif path == "/conformance/region":
            region = urllib.parse.parse_qs(query).get("region", [""])[0]
            self.send(200, "text/plain; charset=utf-8", f"region: {region}".encode())
        elif path == "/conformance/greet":
            name = urllib.parse.parse_qs(query).get("name", [""])[0]
            self.send(200, "text/plain; charset=utf-8", f"Hello, {name}!".encode())
        elif match := re.fullmatch(r"/conformance/jobs/([0-9a-f]+)", path):
            self.job_status(match.group(1))
        else:
            self.send_json(404, {"error": "no route", "path": path})

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.record("POST")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.partition("?")[0]
        if path == "/pets":
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                self.send_json(400, {"error": "a pet needs a name"})
                return
            pet = {"id": 100, "name": body["name"], **({"tag": body["tag"]} if "tag" in body else {})}
            self.send_json(201, pet, {"Location": "/pets/100"})
        elif path == "/conformance/json-schema":
            self.send_json(200, {"received": json.loads(raw or b"null")})
        elif path == "/conformance/jobs/compute":
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("seconds"), int):
                self.send_json(400, {"error": "a computation needs whole seconds"})
                return
            label = body.get("label", "")
            if body["seconds"] <= 0:
                self.send_json(200, {"label": label, "value": 42})
                return
            self.accept_job("compute", float(body["seconds"]), label)
        elif path == "/conformance/jobs/fail":
            self.accept_job("fail", FAILING_JOB_SECONDS, "")
        elif path == "/conformance/jobs/broken":
            self.accept_job("broken", 0.0, "")
        else:
            self.send_json(404, {"error": "no route", "path": path})


    def accept_job(self, kind: str, seconds: float, label: str) -> None:
        with JOBS_LOCK:
            job_id = f"{next(JOB_IDS):08x}"
            JOBS[job_id] = {
                "kind": kind,
                "accepted": time.monotonic(),
                "seconds": seconds,
                "label": label,
                "cancelled": False,
            }
        self.send_json(202, {"status": "running"}, {"Location": f"/conformance/jobs/{job_id}"})

    def job_status(self, job_id: str) -> None:
        with JOBS_LOCK:
            job = dict(JOBS[job_id]) if job_id in JOBS else None
        if job is None:
            self.send_json(404, {"error": "no such job", "id": job_id})
            return
        done = time.monotonic() - job["accepted"] >= job["seconds"]
        if job["kind"] == "broken":
            self.send(500, "text/plain; charset=utf-8", b"the job's status cannot be read")
        elif job["cancelled"]:
            self.send_json(200, {"status": "cancelled"})
        elif not done:
            self.send_json(200, {"status": "running"})
        elif job["kind"] == "fail":
            self.send_json(200, {"status": "failed", "error": "the job failed, as this job always does"})
        else:
            self.send_json(200, {"status": "succeeded", "result": {"label": job["label"], "value": 42}})

    def do_DELETE(self) -> None:  # noqa: N802 - the stdlib's name
        self.record("DELETE")
        path = self.path.partition("?")[0]
        if re.fullmatch(r"/pets/-?\d+", path) or re.fullmatch(r"/tags/[^/]+", path):
            self.send_json(200, {"deleted": urllib.parse.unquote(path)})
        elif match := re.fullmatch(r"/conformance/jobs/([0-9a-f]+)", path):
            with JOBS_LOCK:
                job = JOBS.get(match.group(1))
                if job is not None:
                    job["cancelled"] = True
            if job is None:
                self.send_json(404, {"error": "no such job"})
            else:
                self.send_json(202, {"status": "cancelled"})
        else:
            self.send_json(404, {"error": "no route", "path": path})


class Upstream:
    """The fixture server on 127.0.0.1 (port chosen by the OS), serving on a daemon thread."""

    def __init__(self, port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.stopping = threading.Event()  # type: ignore[attr-defined]
        # Every request received, as (method, path with query), for tests that prove a call
        # did or did not reach the upstream.
        self.httpd.seen = []  # type: ignore[attr-defined]
        self.seen: list[tuple[str, str]] = self.httpd.seen  # type: ignore[attr-defined]
        # The headers of every request received, in the same order, for tests that prove a
        # caller's credential never reaches the upstream.
        self.httpd.seen_headers = []  # type: ignore[attr-defined]
        self.seen_headers: list[list[tuple[str, str]]] = self.httpd.seen_headers  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="upstream", daemon=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.stopping.set()  # type: ignore[attr-defined]
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_until_stopped(make) -> None:
    """Serves `make(port)` (a context manager with a `port`) on the port the command line
    names (0: any), says `PORT <n>` on stdout once listening, and stops on SIGTERM or
    SIGINT."""
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with make(port) as upstream:
        print(f"PORT {upstream.port}", flush=True)
        while not stop.wait(0.5):
            pass


def main() -> None:
    serve_until_stopped(Upstream)


if __name__ == "__main__":
    main()
