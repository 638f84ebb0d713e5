//! Fuzzing harnesses: one function per target, each taking the fuzzer's bytes and asserting
//! what must hold for any input (a panic is a finding). The fuzz crate in `fuzz/` calls them
//! under libFuzzer, and `tests/it/fuzz_corpus.rs` replays the kept corpus through the same
//! functions on the stable toolchain, so CI checks every kept input without fuzzing.
//!
//! Outside bytes reach ferry from three sides, and every parser on them has a target here:
//! the client (the JSON-RPC envelope and [`mcp::Server::handle`] over HTTP and stdio, the
//! `=?base64?` header form), the operator (the OpenAPI loader, the curation reader, the
//! Arazzo reader) and the
//! upstream (the response shaper, `Link` and `Retry-After`). The request builder is fuzzed
//! with arbitrary arguments against plans compiled from [`DOCUMENT`].

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use base64::Engine as _;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{Map, Value};

use crate::catalog::NextPage;
use crate::catalog::{self, Catalog, Tool};
use crate::curation::{self, Curation};
use crate::mcp::{self, Incoming, Kind, Server, ServerOptions};
use crate::openapi::{self, Document, LoadOptions};
use crate::upstream::{Upstream, request, response};

/// A harness: the fuzzer's bytes in, a panic when an invariant does not hold.
pub type Harness = fn(&[u8]);

/// Every harness, by the name its fuzz target and corpus directory have.
pub const TARGETS: &[(&str, Harness)] = &[
    ("handle", handle),
    ("stdio", stdio),
    ("openapi_load", openapi_load),
    ("curation", curation),
    ("request", request),
    ("response", response),
    ("link", link),
    ("retry_after", retry_after),
    ("header_value", header_value),
    ("arazzo", arazzo),
    ("wire", wire),
];

/// The document the request builder, the dispatcher and the curation reader are fuzzed
/// against: every parameter location and style, and each kind of body.
pub const DOCUMENT: &str = r##"{
  "openapi": "3.1.0",
  "info": {"title": "fuzz", "version": "1"},
  "servers": [{"url": "http://127.0.0.1:9/api/v1"}],
  "paths": {
    "/items/{id}/tail": {
      "get": {
        "operationId": "getItem",
        "parameters": [
          {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "q", "in": "query", "schema": {"type": "string"}},
          {"name": "reserved", "in": "query", "allowReserved": true, "schema": {"type": "string"}},
          {"name": "tags", "in": "query", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "pipes", "in": "query", "style": "pipeDelimited", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "filter", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
          {"name": "cursor", "in": "query", "schema": {"type": "string"}},
          {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
          {"name": "X-List", "in": "header", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "prefs", "in": "cookie", "schema": {"type": "string"}},
          {"name": "crumbs", "in": "cookie", "explode": true, "schema": {"type": "object"}},
          {"name": "json", "in": "query", "content": {"application/json": {"schema": {"type": "object"}}}}
        ],
        "responses": {"200": {"description": "ok"}}
      }
    },
    "/label/{lab}/matrix/{mat}/{obj}": {
      "delete": {
        "operationId": "styledPath",
        "parameters": [
          {"name": "lab", "in": "path", "required": true, "style": "label", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "mat", "in": "path", "required": true, "style": "matrix", "explode": true, "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "obj", "in": "path", "required": true, "explode": true, "schema": {"type": "object"}}
        ],
        "responses": {"204": {"description": "gone"}}
      }
    },
    "/items": {
      "post": {
        "operationId": "createItem",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object",
          "properties": {"name": {"type": "string"}, "count": {"type": "integer"}, "flag": {"type": "boolean"}},
          "required": ["name"]
        }}}},
        "responses": {"201": {"description": "made"}}
      }
    },
    "/forms/{form}": {
      "patch": {
        "operationId": "sendForm",
        "parameters": [{"name": "form", "in": "path", "required": true, "schema": {"type": "integer"}}],
        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
          "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}}
        }}}},
        "responses": {"200": {"description": "ok"}}
      }
    },
    "/upload": {
      "post": {
        "operationId": "upload",
        "requestBody": {"content": {"multipart/form-data": {"schema": {
          "type": "object",
          "properties": {"file": {"type": "string", "format": "binary"}, "note": {"type": "string"}}
        }}}},
        "responses": {"200": {"description": "ok"}}
      }
    },
    "/raw/{name}": {
      "put": {
        "operationId": "putRaw",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
        "responses": {"200": {"description": "ok"}}
      }
    }
  }
}"##;

/// The curation [`handle`] and [`stdio`] serve [`DOCUMENT`] with: every tool, one with a
/// scope, one with mirrored headers.
const CURATION: &str = r#"
server: {name: fuzz}
tools:
  getItem:
    mirror_headers: {id: Item-Id, q: Query}
  styledPath: {}
  createItem:
    mirror_headers: {count: Count}
  sendForm: {}
  upload: {}
  putRaw: {}
"#;

/// The configured credential the response shaper must never serve, in any form: it holds
/// characters that JSON may escape (`/`) and that percent-encoding changes (`/`, `+`, `=`).
pub const SECRET: &str = "Sk/9+tok=n";

/// A JSON-RPC message, optionally preceded by HTTP headers (`Name: value` lines, then an
/// empty line); without headers it is served as stdio serves it. Every answer is one
/// well-formed JSON-RPC response, or nothing for a notification.
pub fn handle(data: &[u8]) {
    let (headers, body) = match split_head(data) {
        Some((head, body)) => (Some(header_map(head)), body),
        None => (None, data),
    };
    let incoming = Incoming {
        body,
        headers: headers.as_ref(),
        principal: None,
    };
    let outgoing = block_on(fixed_server().handle(incoming));
    match &outgoing.kind {
        Kind::Accepted { .. } => {
            assert_eq!(outgoing.status, StatusCode::ACCEPTED);
            assert!(outgoing.body.is_empty(), "a notification is not answered");
        }
        Kind::Json | Kind::Refused(_) => check_response(&outgoing.body),
        Kind::Subscription {
            end,
            tools_list_changed,
        } => {
            let first: Value =
                serde_json::from_slice(&outgoing.body).expect("a stream's first message is JSON");
            assert_eq!(first.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(first.get("method").is_some_and(Value::is_string));
            check_response(end);
            if let Some(notification) = tools_list_changed {
                let notification: Value =
                    serde_json::from_slice(notification).expect("a notification is JSON");
                assert!(notification.get("id").is_none(), "a notification has no id");
            }
        }
    }
}

/// Lines as the stdio transport reads them: every line written back is one JSON-RPC
/// response, and nothing else is written.
pub fn stdio(data: &[u8]) {
    let written = Arc::new(Mutex::new(Vec::new()));
    let output = Collect(Arc::clone(&written));
    let server = Arc::clone(fixed_server());
    block_on(crate::transport::stdio::serve(server, data, output, 4096))
        .expect("reading from memory cannot fail");
    let written = written.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(
        written.is_empty() || written.ends_with(b"\n"),
        "every answer ends its line"
    );
    for line in written
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
    {
        check_response(line);
    }
}

/// A tree of files: the root document first, then each further file after a line
/// `#> relative/name.yaml`. They are written to a scratch directory and loaded as
/// `ferry check` loads them; a loaded document is compiled with every operation chosen, and
/// the compiled tools are prepared for serving.
pub fn openapi_load(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut files = text.split("\n#> ");
    let root = files.next().unwrap_or_default();
    let dir = scratch_dir("openapi");
    let root_name = if root.trim_start().starts_with('{') {
        "openapi.json"
    } else {
        "openapi.yaml"
    };
    let mut written = vec![(root_name.to_string(), root.to_string())];
    for file in files {
        let (name, content) = file.split_once('\n').unwrap_or((file, ""));
        if let Some(name) = safe_name(name.trim()) {
            written.push((name, content.to_string()));
        }
    }
    for (name, content) in &written {
        let path = dir.join(name);
        if let Some(parent) = path.parent()
            && std::fs::create_dir_all(parent).is_err()
        {
            continue;
        }
        // A name already taken as a directory, say, is simply not there to load.
        let _ = std::fs::write(&path, content);
    }
    let options = LoadOptions {
        max_file_bytes: 1 << 20,
        max_total_bytes: 4 << 20,
        max_files: 64,
        ..LoadOptions::default()
    };
    let loaded = openapi::load_with(&dir.join(root_name), &options);
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(document) = loaded else {
        return;
    };
    for problem in document.problems() {
        let _ = problem.error.to_string();
    }
    let curation = Curation {
        all: true,
        ..Curation::default()
    };
    compile_both_ways(&document, &curation);
}

/// An Arazzo document (YAML or JSON), read, every workflow chosen and compiled against
/// [`DOCUMENT`], and every expression, payload and condition evaluated against an exchange
/// made of the input: nothing panics, and each expression written back reads as itself.
pub fn arazzo(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = openapi::parse_with(text, "fuzz.arazzo.yaml", &LoadOptions::default()) else {
        return;
    };
    let (document, diagnostics) = crate::arazzo::parse("fuzz.arazzo.yaml", &value);
    for diagnostic in &diagnostics {
        let _ = diagnostic.to_string();
    }
    let exchange = crate::arazzo::Exchange {
        url: "http://127.0.0.1/pets".into(),
        method: "GET".into(),
        request_headers: vec![("x-a".into(), "1".into())],
        query: vec![("q".into(), "2".into())],
        path: vec![("id".into(), "3".into())],
        request_body: Some(value.clone()),
        status: 200,
        response_headers: vec![("etag".into(), "\"e\"".into())],
        response_body: Some(value.clone()),
    };
    let steps = std::collections::HashMap::new();
    let context = crate::arazzo::Context {
        inputs: &value,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    let round_trips = |expression: &crate::arazzo::Expression| {
        let written = expression.to_string();
        assert_eq!(
            crate::arazzo::expression::parse(&written).as_ref(),
            Ok(expression),
            "{written:?} does not read back as itself"
        );
        let _ = crate::arazzo::evaluate::value(expression, &context);
    };
    for workflow in &document.workflows {
        for output in &workflow.outputs {
            round_trips(&output.value);
        }
        for step in &workflow.steps {
            let templates = step.parameters.iter().map(|p| &p.value).chain(&step.body);
            for template in templates {
                template.expressions().into_iter().for_each(round_trips);
                let _ = crate::arazzo::evaluate::fill(template, &context);
            }
            for output in &step.outputs {
                round_trips(&output.value);
            }
            let actions = step.on_success.iter().chain(&step.on_failure);
            let conditions = step
                .success_criteria
                .iter()
                .chain(actions.flat_map(|action| &action.criteria));
            for condition in conditions {
                condition.expressions().into_iter().for_each(round_trips);
                let _ = crate::arazzo::evaluate::holds(condition, &context);
            }
            let _ = crate::arazzo::evaluate::choose(&step.on_failure, &context);
        }
    }
    // Every workflow chosen, against the fixed document.
    let mut curation = Curation {
        openapi: Some("openapi.json".into()),
        ..Curation::default()
    };
    curation.workflows = Some(curation::Workflows {
        document: "fuzz.arazzo.yaml".into(),
        tools: document
            .workflows
            .iter()
            .map(|workflow| curation::WorkflowEntry {
                workflow: workflow.id.clone(),
                ..curation::WorkflowEntry::default()
            })
            .collect(),
    });
    let (mut catalog, _) = catalog::compile_chosen(fixed_document(), &curation);
    let file = openapi::SourceFile {
        name: "fuzz.arazzo.yaml".into(),
        value,
    };
    for diagnostic in catalog::add_workflows(&mut catalog, fixed_document(), &curation, &file) {
        let _ = diagnostic.to_string();
    }
    for workflow in &catalog.workflows {
        assert_eq!(workflow.plans.len(), workflow.workflow.steps.len());
        let _ = workflow.to_json();
    }
    let _ = Server::new(&catalog, None, ServerOptions::default());
}

/// A curation file, read and compiled against [`DOCUMENT`]: `compile` and `compile_chosen`
/// agree on the tools.
pub fn curation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((curation, diagnostics)) = curation::parse(text, "ferry.yaml", PathBuf::from("."))
    else {
        return;
    };
    for diagnostic in &diagnostics {
        let _ = diagnostic.to_string();
    }
    compile_both_ways(fixed_document(), &curation);
}

/// Arguments for one of [`DOCUMENT`]'s tools (the first byte picks it; the rest is JSON: an
/// object is the arguments, any other value is given to every argument). Whatever they are,
/// each path value stays in its own segment, the request stays on the upstream's origin
/// under its base path, and no header carries CR, LF or NUL.
pub fn request(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tools = &fixed_catalog().tools;
    let tool = &tools[usize::from(pick) % tools.len()];
    let Ok(value) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let arguments = match value {
        Value::Object(map) => map,
        other => argument_names(tool)
            .into_iter()
            .map(|name| (name, other.clone()))
            .collect(),
    };
    let plan = &tool.plan;
    let route = request::Route::new(plan);
    let extras = request::Extras {
        page_size: (pick & 0x80 != 0).then_some(("q", 25)),
        link_cursor: (pick & 0x40 != 0).then_some("cursor"),
        query_credential: Some(("api_key", "Sk%2F9")),
    };
    let Ok(prepared) = request::build(plan, &route, &arguments, extras) else {
        return;
    };

    let (path, query) = match prepared.path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (prepared.path_and_query.as_str(), None),
    };
    check_segments(&plan.path, path);
    let query = query.expect("the query credential is always sent");
    assert!(
        query.ends_with("api_key=Sk%2F9"),
        "ferry's query credential is the query's last item: {query:?}"
    );
    assert!(
        !query.contains('#'),
        "a query value moved into the fragment: {query:?}"
    );

    let uri = fixed_upstream()
        .target(&prepared.path_and_query)
        .expect("a built request has a target");
    assert_eq!(uri.scheme_str(), Some("http"));
    assert_eq!(uri.host(), Some("127.0.0.1"), "the origin changed: {uri}");
    assert_eq!(uri.port_u16(), Some(9), "the origin changed: {uri}");
    assert_eq!(
        uri.path(),
        format!("/api/v1{path}"),
        "the path moved on its way into the URL"
    );
    assert_eq!(
        uri.query(),
        Some(query),
        "the query changed on its way into the URL"
    );

    for (name, value) in &prepared.headers {
        for bytes in [name.as_str().as_bytes(), value.as_bytes()] {
            assert!(
                !bytes.iter().any(|byte| matches!(byte, b'\r' | b'\n' | 0)),
                "a header carries CR, LF or NUL: {name}: {value:?}"
            );
        }
        assert!(
            !matches!(
                name.as_str(),
                "host" | "content-length" | "transfer-encoding" | "connection"
            ),
            "an argument set the framing header {name}"
        );
    }
    if let Some(body) = &prepared.body {
        let content_type = body.content_type.as_bytes();
        assert!(
            !content_type
                .iter()
                .any(|byte| matches!(byte, b'\r' | b'\n' | 0))
        );
    }
}

/// An upstream answer: a status byte, a flags byte (cut at the cap, projected, paged by
/// `Link` or by a field), then `Name: value` header lines, an empty line and the body. The
/// configured [`SECRET`] never appears in the tool result `mcp` writes of the answer, in any
/// form a client can read it in.
pub fn response(data: &[u8]) {
    const STATUSES: [u16; 14] = [
        200, 201, 202, 204, 206, 301, 302, 400, 401, 403, 404, 429, 500, 503,
    ];
    let [status, flags, rest @ ..] = data else {
        return;
    };
    let status = StatusCode::from_u16(STATUSES[usize::from(*status) % STATUSES.len()])
        .expect("a listed status is valid");
    let (head, body) = split_head(rest).unwrap_or((b"", rest));
    let headers = header_map(head);
    let observed = response::Observed {
        status,
        headers,
        body: body.to_vec(),
        truncated: flags & 1 != 0,
    };
    let report_headers: Vec<HeaderName> = response::REPORTED_HEADERS
        .iter()
        .map(|name| HeaderName::from_static(name))
        .chain([HeaderName::from_static("x-request-id")])
        .collect();
    let fields =
        crate::catalog::call::field_paths(&["id".into(), "/data/name".into(), "token".into()]);
    let next = match flags >> 2 & 3 {
        1 => Some(NextPage::Link {
            cursor_argument: "cursor".into(),
        }),
        2 => Some(NextPage::Field {
            pointer: "/next".into(),
            cursor_argument: "cursor".into(),
        }),
        _ => None,
    };
    // What ferry registers for an API key: the key and its percent-encoded form.
    let secrets =
        crate::upstream::redact::Secrets::new([SECRET.to_string(), "Sk%2F9%2Btok%3Dn".to_string()]);
    let shaping = response::Shaping {
        tool: "getItem",
        limit_bytes: 1 << 20,
        report_headers: &report_headers,
        fields: (flags & 2 != 0).then_some(fields.as_slice()),
        next: next.as_ref(),
        authenticated: true,
        secrets: &secrets,
        query_credential: Some("api_key"),
    };
    let answer = response::shape(observed, &shaping);
    let written = crate::mcp::result::era_free(shaping.tool, Ok(answer));
    let served: Value = serde_json::from_slice(&written).expect("a written result is JSON");
    check_secret_absent(&served, 0);
    let text = String::from_utf8_lossy(&written);
    assert!(
        !text.contains(SECRET),
        "the secret is in the served JSON: {text}"
    );
}

/// A `Link` header's value: the `rel="next"` target found is one written between `<` and
/// `>` in it.
pub fn link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(target) = response::next_link(text) {
        assert!(!target.contains('>'), "a target ends at its `>`");
        assert!(
            text.contains(&format!("<{target}>")),
            "the target is written between `<` and `>`"
        );
    }
}

/// A `Retry-After` value: read without a panic, and a wait taken from it only when it ends
/// before the call's deadline.
pub fn retry_after(data: &[u8]) {
    let Ok(value) = HeaderValue::from_bytes(data) else {
        return;
    };
    let mut headers = HeaderMap::new();
    headers.insert(http::header::RETRY_AFTER, value);
    let Some(delay) = crate::upstream::retry_after(&headers) else {
        return;
    };
    // The caller waits only when the wait ends before the call's deadline; a delay too
    // large for the clock must be refused there, never added and panicking.
    let now = tokio::time::Instant::now();
    let deadline = now + std::time::Duration::from_secs(120);
    let backoff = std::time::Duration::from_millis(100);
    if let Some(wait) = crate::upstream::retry_wait(Some(delay), backoff, now, deadline) {
        assert!(
            now.checked_add(wait)
                .is_some_and(|resume| resume < deadline),
            "a Retry-After delay of {delay:?} was waited past the deadline"
        );
    }
}

/// What a plain-HTTP upstream sends back, read as the answer to one request: the first byte
/// picks how many bytes each read gets (so heads and chunk lines arrive split anywhere),
/// whether the request was `HEAD` and the size cap; the rest is the upstream's bytes. Any
/// answer read is final, within its cap, and kept for another request only when whole.
pub fn wire(data: &[u8]) {
    use crate::upstream::pool::Outgoing;
    use crate::upstream::wire::Connection;
    let [pick, rest @ ..] = data else {
        return;
    };
    let piece = if pick & 0x20 != 0 {
        4096
    } else {
        usize::from(pick & 0x1f) + 1
    };
    let method = if pick & 0x40 != 0 {
        http::Method::HEAD
    } else {
        http::Method::GET
    };
    let limit = if pick & 0x80 != 0 { 16 } else { 1 << 16 };
    let stream = tokio::io::join(Pieces { data: rest, piece }, tokio::io::sink());
    let mut connection = Connection::over(stream, "upstream.test");
    let request = Outgoing {
        method: method.clone(),
        uri: http::Uri::from_static("http://upstream.test/items"),
        headers: HeaderMap::new(),
        body: None,
    };
    let outcome = block_on(connection.exchange(&request, "upstream.test", limit));
    if let Ok(answer) = outcome {
        assert!(!answer.status.is_informational(), "{answer:?}");
        assert!(answer.body.len() <= limit, "{answer:?}");
        assert!(
            !answer.truncated || answer.body.len() == limit,
            "{answer:?}"
        );
        assert!(!(answer.truncated && answer.reusable), "{answer:?}");
        assert!(
            method != http::Method::HEAD || answer.body.is_empty(),
            "{answer:?}"
        );
    }
}

/// Bytes read at most `piece` at a time, then the end.
struct Pieces<'a> {
    data: &'a [u8],
    piece: usize,
}

impl tokio::io::AsyncRead for Pieces<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.piece.min(self.data.len()).min(buf.remaining());
        let (now, later) = self.data.split_at(size);
        buf.put_slice(now);
        self.data = later;
        Poll::Ready(Ok(()))
    }
}

/// A mirrored header's value (`Mcp-Name`, `Mcp-Param-*`): plain text comes back unchanged,
/// the `=?base64?…?=` form decodes to text that encodes back to it, and comparing either
/// with a body's value never panics.
pub fn header_value(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let encoded = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="));
    match (mcp::headers::decode_value(text), encoded) {
        (Ok(decoded), None) => assert_eq!(decoded, text, "a plain value is read as written"),
        (Ok(decoded), Some(encoded)) => {
            let again = base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes());
            assert_eq!(
                again.trim_end_matches('='),
                encoded.trim_end_matches('='),
                "a decoded value encodes back to what was sent"
            );
        }
        (Err(_), None) => panic!("a plain value is never refused"),
        (Err(_), Some(_)) => {}
    }
    if let Ok(decoded) = mcp::headers::decode_value(text) {
        for body in [
            Value::from(decoded.clone()),
            Value::from(42),
            Value::from(-0.5),
            Value::Bool(true),
        ] {
            let _ = mcp::headers::agrees(&decoded, &body);
        }
    }
    if let Ok(value) = HeaderValue::from_str(text) {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", value);
        let _ = mcp::headers::decoded(&headers, mcp::headers::MCP_NAME);
    }
}

/// The response `body` is one JSON-RPC 2.0 response: a result or an error with a code.
fn check_response(body: &[u8]) {
    let value: Value = serde_json::from_slice(body)
        .unwrap_or_else(|error| panic!("an answer is not JSON ({error}): {body:?}"));
    let object = value.as_object().expect("an answer is a JSON object");
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            let code = error.get("code").and_then(Value::as_i64);
            assert!(code.is_some(), "an error has an integer code: {value}");
            assert!(error.get("message").is_some_and(Value::is_string));
        }
        _ => panic!("an answer has exactly one of result and error: {value}"),
    }
}

/// Each `{name}` of `template` (a segment of its own in every template of [`DOCUMENT`]) was
/// expanded into exactly one segment that no URL parser reads as a dot-segment, and the
/// literal segments are unchanged.
fn check_segments(template: &str, path: &str) {
    let expected: Vec<&str> = template.split('/').collect();
    let built: Vec<&str> = path.split('/').collect();
    assert_eq!(
        expected.len(),
        built.len(),
        "a path value left its segment: {path:?} for {template:?}"
    );
    for (expected, built) in expected.iter().zip(&built) {
        if expected.starts_with('{') {
            let dots = built.to_ascii_lowercase().replace("%2e", ".");
            assert!(
                !built.is_empty() && dots != "." && dots != "..",
                "a path value is a dot-segment or empty: {path:?}"
            );
            assert!(
                !built.contains(['?', '#', '\\']),
                "a path value carries a delimiter: {path:?}"
            );
        } else {
            assert_eq!(expected, built, "a literal segment changed: {path:?}");
        }
    }
}

/// Every string in `value` (keys too), and what decoding it gives (JSON text, base64
/// blobs, percent-encoding), is free of [`SECRET`].
fn check_secret_absent(value: &Value, depth: usize) {
    match value {
        Value::String(text) => check_text_secret_absent(text, depth),
        Value::Array(items) => items
            .iter()
            .for_each(|item| check_secret_absent(item, depth)),
        Value::Object(map) => {
            for (key, item) in map {
                check_text_secret_absent(key, depth);
                if matches!(key.as_str(), "blob" | "data")
                    && let Some(encoded) = item.as_str()
                    && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded)
                {
                    check_text_secret_absent(&String::from_utf8_lossy(&bytes), depth);
                }
                check_secret_absent(item, depth);
            }
        }
        _ => {}
    }
}

fn check_text_secret_absent(text: &str, depth: usize) {
    let escaped = SECRET.replace('/', "\\/");
    assert!(!text.contains(SECRET), "the secret is served: {text:?}");
    assert!(
        !text.contains(&escaped),
        "the secret is served JSON-escaped: {text:?}"
    );
    let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
    assert!(
        !decoded.contains(SECRET),
        "the secret is served percent-encoded: {text:?}"
    );
    // A value percent-encoded twice (`%252F`) is read back by a client that decodes twice.
    let twice = percent_encoding::percent_decode_str(&decoded).decode_utf8_lossy();
    assert!(
        !twice.contains(SECRET),
        "the secret is served percent-encoded twice: {text:?}"
    );
    // A text block holding the body as received is JSON a client parses; so is a
    // resource's text. Bounded: a string inside a string inside a string is enough.
    if depth < 3
        && text.trim_start().starts_with(['{', '[', '"'])
        && let Ok(inner) = serde_json::from_str::<Value>(text)
    {
        check_secret_absent(&inner, depth + 1);
    }
}

/// Compiles `document` with `curation` both ways ferry does, checks they agree, and
/// prepares the result for serving as `ferry serve` would.
fn compile_both_ways(document: &Document, curation: &Curation) {
    let (all, _) = catalog::compile(document, curation);
    let (chosen, _) = catalog::compile_chosen(document, curation);
    assert_eq!(
        catalog::tools_json(&all),
        catalog::tools_json(&chosen),
        "compile and compile_chosen disagree on the tools"
    );
    let _ = Server::new(&chosen, None, ServerOptions::default());
}

fn fixed_document() -> &'static Document {
    static DOCUMENT_VALUE: OnceLock<Document> = OnceLock::new();
    DOCUMENT_VALUE.get_or_init(|| {
        let value = serde_json::from_str(DOCUMENT).expect("the fuzzing document is JSON");
        Document::from_value(value).expect("the fuzzing document is OpenAPI")
    })
}

fn fixed_catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let (curation, _) = curation::parse(CURATION, "ferry.yaml", PathBuf::from("."))
            .expect("the fuzzing curation is YAML");
        let (catalog, diagnostics) = catalog::compile_chosen(fixed_document(), &curation);
        assert_eq!(
            catalog.tools.len(),
            6,
            "every tool compiles: {diagnostics:?}"
        );
        catalog
    })
}

fn fixed_server() -> &'static Arc<Server> {
    static SERVER: OnceLock<Arc<Server>> = OnceLock::new();
    SERVER.get_or_init(|| Arc::new(Server::new(fixed_catalog(), None, ServerOptions::default())))
}

fn fixed_upstream() -> &'static Upstream {
    static UPSTREAM: OnceLock<Upstream> = OnceLock::new();
    UPSTREAM.get_or_init(|| {
        Upstream::with_env(fixed_catalog(), |_| None).expect("the fuzzing upstream is valid")
    })
}

fn argument_names(tool: &Tool) -> Vec<String> {
    tool.input_schema
        .to_value()
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::keys)
        .cloned()
        .collect()
}

/// Runs `future` to completion on this thread's runtime.
fn block_on<F: Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime can be built");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}

/// The text before and after the first empty line (`\n\n` or `\r\n\r\n`).
fn split_head(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = memchr::memmem::find(data, b"\n\n").map(|at| (at, 2));
    let at = at.or_else(|| memchr::memmem::find(data, b"\r\n\r\n").map(|at| (at, 4)))?;
    Some((&data[..at.0], &data[at.0 + at.1..]))
}

/// `Name: value` lines; a line that is not a valid header is left out, as hyper would
/// refuse it before ferry sees it.
fn header_map(head: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in head.split(|byte| *byte == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|byte| *byte == b':') else {
            continue;
        };
        let value = line[colon + 1..].trim_ascii();
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(line[..colon].trim_ascii()),
            HeaderValue::from_bytes(value),
        ) {
            headers.append(name, value);
        }
    }
    headers
}

/// A relative file name made of plain parts, or `None`.
fn safe_name(name: &str) -> Option<String> {
    let plain = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"._-".contains(&byte))
    };
    let parts: Vec<&str> = name.split('/').collect();
    (parts.len() <= 4 && parts.iter().all(|part| plain(part))).then(|| name.to_string())
}

/// An empty directory of this process's and thread's own under the system's temporary
/// directory.
fn scratch_dir(purpose: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ferry-fuzz-{purpose}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    dir
}

/// Where the stdio transport's output goes: into memory.
struct Collect(Arc<Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for Collect {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut written = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        written.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
