//! Fuzzing harnesses: one function per target, each taking the fuzzer's bytes and asserting
//! what must hold for any input (a panic is a finding). The fuzz crate in `fuzz/` calls them
//! under libFuzzer, and `tests/it/fuzz_corpus.rs` replays the kept corpus through the same
//! functions on the stable toolchain, so CI checks every kept input without fuzzing.
//!
//! Outside bytes reach ferry from three sides, and every parser on them has a target here: the
//! client (`client`: the JSON-RPC envelope and [`Server::handle`] over HTTP and stdio, the
//! `=?base64?` header form; `confirm`: a confirming tool's `requestState` and
//! `inputResponses`; `trace`: the W3C trace context; `audit`: what it writes into the audit
//! log), the operator (`operator`: the OpenAPI loader, the curation reader, the Arazzo reader)
//! and the upstream (`upstream`: the response shaper, the plain-HTTP reader, `Link` and
//! `Retry-After`; `workflow`: a workflow's criteria and outputs over its answers). The request
//! builder is fuzzed with arbitrary arguments against plans compiled from [`DOCUMENT`]. This
//! file holds what they share: the registry of targets, the fixed document, catalog and
//! server, and the checks and readers of bytes more than one harness uses.

mod audit;
mod client;
mod confirm;
mod operator;
mod trace;
mod upstream;
mod workflow;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::catalog::{self, Catalog};
use crate::curation;
use crate::mcp::{Server, ServerOptions};
use crate::openapi::Document;

pub use audit::audit;
pub use client::{handle, header_value, stdio};
pub use confirm::confirm;
pub use operator::{arazzo, curation, openapi_load};
pub use trace::tracecontext;
pub use upstream::{SECRET, link, request, response, retry_after, wire};
pub use workflow::arazzo_runtime;

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
    ("confirm", confirm),
    ("arazzo_runtime", arazzo_runtime),
    ("audit", audit),
    ("tracecontext", tracecontext),
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
