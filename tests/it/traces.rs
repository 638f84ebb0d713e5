//! W3C Trace Context through ferry: a caller's `traceparent` (HTTP header, or
//! `params._meta.traceparent`) is continued, and each upstream attempt carries a child of
//! it, seen by a recording upstream on loopback.

use std::sync::Arc;

use ferry::catalog::{Catalog, ParameterLocation, ParameterPlan, ParameterStyle, Tool};
use ferry::mcp::{Server, ServerOptions};
use ferry::upstream::Upstream;
use http::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{self, Running};
use crate::upstream::{Received, Reply, TestUpstream, catalog, respond, tool};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
const TRACESTATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";

fn traceparent(flags: &str) -> String {
    format!("00-{TRACE_ID}-{PARENT_ID}-{flags}")
}

/// `getPet`: GET /pets/{petId}, retried once after a 503; `traced` also has header
/// parameters named like the trace headers, which arguments may set.
fn tools() -> Vec<Tool> {
    let mut get_pet = tool(
        "getPet",
        Method::GET,
        "/pets/{petId}",
        vec![ParameterPlan::new(
            "petId",
            ParameterLocation::Path,
            ParameterStyle::Simple,
            false,
        )],
    );
    get_pet.input_schema = json!({"type": "object", "properties": {"petId": {"type": "integer"}},
        "required": ["petId"], "additionalProperties": false});
    get_pet.call.retries = 1;
    let mut traced = tool(
        "traced",
        Method::GET,
        "/traced",
        ["traceparent", "tracestate"]
            .into_iter()
            .map(|name| {
                ParameterPlan::new(
                    name,
                    ParameterLocation::Header,
                    ParameterStyle::Simple,
                    false,
                )
            })
            .collect(),
    );
    traced.input_schema = json!({"type": "object", "properties": {
        "traceparent": {"type": "string"}, "tracestate": {"type": "string"}},
        "additionalProperties": false});
    vec![get_pet, traced]
}

/// The first request to `/pets/...` is a 503, every other request a 200.
async fn upstream() -> TestUpstream {
    TestUpstream::start(|received: &Received, count| {
        if received.uri.starts_with("/pets/") && count == 0 {
            Reply::Now(respond(503, &[], "busy"))
        } else {
            Reply::Now(respond(200, &[("content-type", "application/json")], "{}"))
        }
    })
    .await
}

fn server(catalog: &Catalog, options: ServerOptions) -> Server {
    let client = Upstream::new(catalog).expect("client");
    Server::new(catalog, Some(client), options)
}

async fn serve(upstream: &TestUpstream) -> Running {
    let catalog = catalog(&upstream.base, &tools());
    support::start(
        server(&catalog, ServerOptions::default()),
        Default::default(),
    )
    .await
}

async fn call(running: &Running, name: &str, arguments: Value, headers: &[(&str, &str)]) -> Value {
    call_with_meta(running, name, arguments, json!({}), headers).await
}

async fn call_with_meta(
    running: &Running,
    name: &str,
    arguments: Value,
    meta: Value,
    extra: &[(&str, &str)],
) -> Value {
    let (body, headers) =
        support::modern("tools/call", json!({"name": name, "arguments": arguments}));
    let mut body: Value = serde_json::from_str(&body).expect("json");
    if let Value::Object(meta) = meta {
        body["params"]["_meta"]
            .as_object_mut()
            .expect("meta")
            .extend(meta);
    }
    let mut headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    headers.extend_from_slice(extra);
    let answer = support::post(&running.url, &body.to_string(), &headers).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.json()
}

/// A `traceparent` split into trace id, parent id and flags, checked to be well formed.
fn parts(value: &str) -> (String, String, String) {
    let pieces: Vec<&str> = value.split('-').collect();
    assert_eq!(pieces.len(), 4, "{value}");
    assert_eq!(pieces[0], "00", "{value}");
    assert!(
        pieces[1].len() == 32 && pieces[2].len() == 16 && pieces[3].len() == 2,
        "{value}"
    );
    assert!(
        value
            .bytes()
            .all(|byte| byte == b'-' || byte.is_ascii_digit() || byte.is_ascii_lowercase()),
        "{value}"
    );
    (
        pieces[1].to_owned(),
        pieces[2].to_owned(),
        pieces[3].to_owned(),
    )
}

fn upstream_traceparents(upstream: &TestUpstream) -> Vec<(String, String, String)> {
    upstream
        .requests()
        .iter()
        .map(|received| parts(received.header("traceparent").expect("traceparent sent")))
        .collect()
}

#[tokio::test]
async fn an_incoming_traceparent_is_continued_with_a_span_per_upstream_attempt() {
    let upstream = upstream().await;
    let running = serve(&upstream).await;
    let answer = call(
        &running,
        "getPet",
        json!({"petId": 7}),
        &[
            ("traceparent", &traceparent("01")),
            ("tracestate", TRACESTATE),
        ],
    )
    .await;
    assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    let sent = upstream_traceparents(&upstream);
    assert_eq!(sent.len(), 2, "a 503 and its retry: {sent:?}");
    for (trace_id, parent_id, flags) in &sent {
        assert_eq!(trace_id, TRACE_ID);
        assert_ne!(
            parent_id, PARENT_ID,
            "the attempt's own span, not the caller's"
        );
        assert_eq!(flags, "01");
    }
    assert_ne!(sent[0].1, sent[1].1, "each attempt has a span of its own");
    for received in upstream.requests() {
        assert_eq!(received.header("tracestate"), Some(TRACESTATE));
    }
}

#[tokio::test]
async fn an_unsampled_trace_stays_unsampled_upstream() {
    let upstream = upstream().await;
    let running = serve(&upstream).await;
    call(
        &running,
        "traced",
        json!({}),
        &[("traceparent", &traceparent("00"))],
    )
    .await;
    let sent = upstream_traceparents(&upstream);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, TRACE_ID);
    assert_eq!(sent[0].2, "00");
}

#[tokio::test]
async fn without_a_traceparent_or_with_a_malformed_one_a_new_sampled_trace_starts() {
    let upstream = upstream().await;
    let running = serve(&upstream).await;
    let malformed = [
        format!("00-{}-{PARENT_ID}-01", TRACE_ID.to_uppercase()),
        format!("01-{TRACE_ID}-{PARENT_ID}-01"),
        format!("00-{}-{PARENT_ID}-01", "0".repeat(32)),
        format!("00-{TRACE_ID}-{PARENT_ID}-01-extra"),
    ];
    call(&running, "traced", json!({}), &[]).await;
    for value in &malformed {
        call(
            &running,
            "traced",
            json!({}),
            &[("traceparent", value), ("tracestate", TRACESTATE)],
        )
        .await;
    }
    let sent = upstream_traceparents(&upstream);
    assert_eq!(sent.len(), 1 + malformed.len());
    for (trace_id, _, flags) in &sent {
        assert_ne!(trace_id, TRACE_ID);
        assert_ne!(trace_id, &"0".repeat(32));
        assert_eq!(flags, "01", "ferry's own traces are sampled");
    }
    let mut trace_ids: Vec<&String> = sent.iter().map(|(trace_id, _, _)| trace_id).collect();
    trace_ids.sort();
    trace_ids.dedup();
    assert_eq!(
        trace_ids.len(),
        sent.len(),
        "each request a trace of its own"
    );
    for received in upstream.requests() {
        assert_eq!(
            received.header("tracestate"),
            None,
            "a tracestate without a valid traceparent is not passed on"
        );
    }
}

#[tokio::test]
async fn arguments_cannot_set_the_trace_headers_upstream() {
    let upstream = upstream().await;
    let running = serve(&upstream).await;
    let forged = format!("00-{}-{}-01", "a".repeat(32), "b".repeat(16));
    call(
        &running,
        "traced",
        json!({"traceparent": forged, "tracestate": "forged=1"}),
        &[("traceparent", &traceparent("01"))],
    )
    .await;
    call(
        &running,
        "traced",
        json!({"traceparent": forged, "tracestate": "forged=1"}),
        &[],
    )
    .await;
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2);
    for received in &requests {
        assert_eq!(received.headers.get_all("traceparent").iter().count(), 1);
        assert_ne!(received.header("traceparent"), Some(forged.as_str()));
        assert_eq!(received.header("tracestate"), None);
    }
    assert_eq!(
        parts(requests[0].header("traceparent").expect("sent")).0,
        TRACE_ID
    );
}

#[tokio::test]
async fn meta_traceparent_is_read_over_http_only_without_the_header() {
    let upstream = upstream().await;
    let running = serve(&upstream).await;
    let other = format!("00-{}-{PARENT_ID}-01", "c".repeat(32));
    let meta = json!({"traceparent": traceparent("01"), "tracestate": TRACESTATE});
    call_with_meta(&running, "traced", json!({}), meta.clone(), &[]).await;
    call_with_meta(
        &running,
        "traced",
        json!({}),
        meta,
        &[("traceparent", &other)],
    )
    .await;
    let requests = upstream.requests();
    assert_eq!(
        parts(requests[0].header("traceparent").expect("sent")).0,
        TRACE_ID
    );
    assert_eq!(requests[0].header("tracestate"), Some(TRACESTATE));
    assert_eq!(
        parts(requests[1].header("traceparent").expect("sent")).0,
        "c".repeat(32),
        "the header wins over _meta"
    );
    assert_eq!(requests[1].header("tracestate"), None);
}

#[tokio::test]
async fn stdio_continues_meta_traceparent() {
    let upstream = upstream().await;
    let catalog = catalog(&upstream.base, &tools());
    let server = Arc::new(server(&catalog, ServerOptions::default()));
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "traced", "arguments": {},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": support::MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": traceparent("01"),
        "tracestate": TRACESTATE,
    }}});
    let answer = stdio_exchange(server, &request).await;
    assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    let requests = upstream.requests();
    assert_eq!(requests.len(), 1);
    let (trace_id, parent_id, flags) = parts(requests[0].header("traceparent").expect("sent"));
    assert_eq!((trace_id.as_str(), flags.as_str()), (TRACE_ID, "01"));
    assert_ne!(parent_id, PARENT_ID);
    assert_eq!(requests[0].header("tracestate"), Some(TRACESTATE));
}

/// Sends one message to the stdio transport and reads its one answer.
pub async fn stdio_exchange(server: Arc<Server>, request: &Value) -> Value {
    let (mut client, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(ferry::transport::stdio::serve(
        server,
        BufReader::new(server_read),
        server_write,
        1 << 20,
    ));
    client
        .write_all(format!("{request}\n").as_bytes())
        .await
        .expect("write");
    client.shutdown().await.expect("close stdin");
    let mut lines = BufReader::new(client).lines();
    let line = lines.next_line().await.expect("read").expect("an answer");
    serving.await.expect("task").expect("serve");
    serde_json::from_str(&line).expect("json")
}
