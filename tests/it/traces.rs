//! W3C Trace Context through ferry: a caller's `traceparent` (HTTP header, or
//! `params._meta.traceparent`) is continued, and each upstream attempt carries a child of
//! it, seen by a recording upstream on loopback; the spans reach a collector of our own that
//! decodes them with the official OpenTelemetry definitions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry::catalog::{Catalog, ParameterLocation, ParameterPlan, ParameterStyle, Tool};
use ferry::mcp::{Server, ServerOptions};
use ferry::trace::{Endpoint, ExportOptions, Exporter, Exporting};
use ferry::upstream::Upstream;
use http::Method;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span as ProtoSpan;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as ProtoStatusCode;
use prost::Message;
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
        "required": ["petId"], "additionalProperties": false})
    .into();
    get_pet
        .operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 1;
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
        "additionalProperties": false})
    .into();
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

/// A collector of the project's own on loopback: `POST /v1/traces` decoded with the
/// official OpenTelemetry definitions (`opentelemetry-proto`, prost).
pub struct Collector {
    pub endpoint: String,
    requests: Exports,
}

/// Each request's body as received and as decoded.
type Exports = Arc<Mutex<Vec<(Vec<u8>, ExportTraceServiceRequest)>>>;

impl Collector {
    pub async fn start() -> Collector {
        let requests: Exports = Arc::default();
        let log = requests.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: http::HeaderMap, body: axum::body::Bytes| {
                let log = log.clone();
                async move {
                    assert_eq!(
                        headers.get("content-type").and_then(|v| v.to_str().ok()),
                        Some("application/x-protobuf")
                    );
                    let request = ExportTraceServiceRequest::decode(body.as_ref())
                        .expect("an ExportTraceServiceRequest");
                    log.lock().expect("log").push((body.to_vec(), request));
                    let answer = ExportTraceServiceResponse::default().encode_to_vec();
                    ([("content-type", "application/x-protobuf")], answer)
                }
            }),
        );
        let address = crate::support::serve_app(app).await;
        Collector {
            endpoint: format!("http://{address}/v1/traces"),
            requests,
        }
    }

    /// Every span received, each with its resource's attributes.
    pub fn spans(&self) -> Vec<(Vec<KeyValue>, ProtoSpan)> {
        let requests = self.requests.lock().expect("log");
        let mut spans = Vec::new();
        for (_, request) in requests.iter() {
            for resource_spans in &request.resource_spans {
                let resource = resource_spans
                    .resource
                    .as_ref()
                    .map(|resource| resource.attributes.clone())
                    .unwrap_or_default();
                for scope_spans in &resource_spans.scope_spans {
                    let scope = scope_spans.scope.as_ref().expect("a scope");
                    assert_eq!(scope.name, "ferry");
                    for span in &scope_spans.spans {
                        spans.push((resource.clone(), span.clone()));
                    }
                }
            }
        }
        spans
    }

    /// The request bodies as received.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        let requests = self.requests.lock().expect("log");
        requests.iter().map(|(body, _)| body.clone()).collect()
    }
}

fn attribute<'s>(attributes: &'s [KeyValue], key: &str) -> Option<&'s any_value::Value> {
    attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(|attribute| attribute.value.as_ref())
        .and_then(|value| value.value.as_ref())
}

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    match attribute(attributes, key) {
        Some(any_value::Value::StringValue(text)) => Some(text.clone()),
        Some(other) => panic!("{key} is not a string: {other:?}"),
        None => None,
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attribute(attributes, key) {
        Some(any_value::Value::IntValue(number)) => Some(*number),
        Some(other) => panic!("{key} is not an integer: {other:?}"),
        None => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn is_error(span: &ProtoSpan) -> bool {
    span.status
        .as_ref()
        .is_some_and(|status| status.code == ProtoStatusCode::Error as i32)
}

/// ferry serving `tools()` and exporting to `endpoint` with `options`.
async fn serve_traced(
    upstream: &TestUpstream,
    endpoint: &str,
    options: ExportOptions,
) -> (Running, Exporter, Exporting) {
    let (exporter, exporting) =
        ferry::trace::export::start(Endpoint::parse(endpoint).expect("endpoint"), options)
            .expect("exporter");
    let catalog = catalog(&upstream.base, &tools());
    let client = Upstream::new(&catalog)
        .expect("client")
        .with_traces(Some(exporter.clone()));
    let options = ServerOptions {
        traces: Some(exporter.clone()),
        ..ServerOptions::default()
    };
    let running = support::start(
        Server::new(&catalog, Some(client), options),
        Default::default(),
    )
    .await;
    (running, exporter, exporting)
}

fn quick() -> ExportOptions {
    ExportOptions {
        interval: Duration::from_millis(50),
        ..ExportOptions::default()
    }
}

const FLUSH: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_collector_gets_a_server_span_per_request_and_a_client_span_per_attempt() {
    let upstream = upstream().await;
    let collector = Collector::start().await;
    let (running, exporter, exporting) =
        serve_traced(&upstream, &collector.endpoint, quick()).await;
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
    let unknown = support::post_modern(&running.url, "tools/call", json!({"name": "nope"})).await;
    assert_eq!(unknown.json()["error"]["code"], -32602);
    exporting.shutdown(FLUSH).await;
    assert_eq!(exporter.dropped(), 0);

    let spans = collector.spans();
    for (resource, _) in &spans {
        assert_eq!(text(resource, "service.name").as_deref(), Some("ferry"));
        assert_eq!(
            text(resource, "service.version").as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
    }
    let spans: Vec<ProtoSpan> = spans.into_iter().map(|(_, span)| span).collect();
    let servers: Vec<&ProtoSpan> = spans
        .iter()
        .filter(|span| span.kind == SpanKind::Server as i32)
        .collect();
    let clients: Vec<&ProtoSpan> = spans
        .iter()
        .filter(|span| span.kind == SpanKind::Client as i32)
        .collect();
    assert_eq!(servers.len(), 2, "one per request: {spans:#?}");
    assert_eq!(
        clients.len(),
        2,
        "one per attempt, the 503 and its retry: {spans:#?}"
    );

    let server = servers
        .iter()
        .find(|span| span.name == "tools/call getPet")
        .expect("the call's span");
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    assert_eq!(server.trace_state, TRACESTATE);
    assert!(
        server.start_time_unix_nano > 0 && server.start_time_unix_nano <= server.end_time_unix_nano
    );
    assert_eq!(server.flags & 0x3ff, 0x301, "sampled, with a remote parent");
    let attributes = &server.attributes;
    assert_eq!(
        text(attributes, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        text(attributes, "gen_ai.tool.name").as_deref(),
        Some("getPet")
    );
    assert_eq!(
        text(attributes, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(text(attributes, "jsonrpc.request.id").as_deref(), Some("1"));
    assert_eq!(
        text(attributes, "network.transport").as_deref(),
        Some("tcp")
    );
    assert_eq!(text(attributes, "error.type"), None);
    assert!(!is_error(server));

    let refused = servers
        .iter()
        .find(|span| span.name == "tools/call")
        .expect("the unknown tool's span, named by the method alone");
    assert_eq!(text(&refused.attributes, "gen_ai.tool.name"), None);
    assert_eq!(
        text(&refused.attributes, "error.type").as_deref(),
        Some("-32602")
    );
    assert!(is_error(refused));
    assert_eq!(
        refused.parent_span_id,
        Vec::<u8>::new(),
        "a trace of its own"
    );

    let sent: Vec<(String, String, String)> = upstream_traceparents(&upstream);
    assert_eq!(sent.len(), 2);
    for (index, client) in clients.iter().enumerate() {
        assert_eq!(client.name, "GET /pets/{petId}");
        assert_eq!(hex(&client.trace_id), TRACE_ID);
        assert_eq!(
            client.parent_span_id, server.span_id,
            "under the request's span"
        );
        assert_eq!(client.trace_state, TRACESTATE);
        let attributes = &client.attributes;
        assert_eq!(
            text(attributes, "http.request.method").as_deref(),
            Some("GET")
        );
        assert_eq!(
            text(attributes, "url.template").as_deref(),
            Some("/pets/{petId}")
        );
        assert_eq!(
            text(attributes, "server.address").as_deref(),
            Some("127.0.0.1")
        );
        assert!(int(attributes, "server.port").is_some());
        // The upstream saw this attempt's span as its parent.
        assert_eq!(
            (sent[index].0.as_str(), sent[index].1.as_str()),
            (TRACE_ID, hex(&client.span_id).as_str())
        );
    }
    let (first, second) = (clients[0], clients[1]);
    assert_eq!(
        int(&first.attributes, "http.response.status_code"),
        Some(503)
    );
    assert_eq!(
        text(&first.attributes, "error.type").as_deref(),
        Some("503")
    );
    assert!(is_error(first));
    assert_eq!(int(&first.attributes, "http.request.resend_count"), None);
    assert_eq!(
        int(&second.attributes, "http.response.status_code"),
        Some(200)
    );
    assert_eq!(
        int(&second.attributes, "http.request.resend_count"),
        Some(1)
    );
    assert_eq!(text(&second.attributes, "error.type"), None);
    assert!(!is_error(second));
    assert_ne!(first.span_id, second.span_id);

    // Never the filled path, nor an argument's value.
    for body in collector.bodies() {
        assert!(
            !body.windows(7).any(|window| window == b"/pets/7"),
            "the filled path was exported"
        );
    }
}

#[tokio::test]
async fn a_request_without_or_with_a_malformed_traceparent_exports_a_new_trace() {
    let upstream = upstream().await;
    let collector = Collector::start().await;
    let (running, _, exporting) = serve_traced(&upstream, &collector.endpoint, quick()).await;
    call(&running, "traced", json!({}), &[]).await;
    call(
        &running,
        "traced",
        json!({}),
        &[("traceparent", &format!("00-{TRACE_ID}-{PARENT_ID}-0x"))],
    )
    .await;
    exporting.shutdown(FLUSH).await;
    let spans: Vec<ProtoSpan> = collector
        .spans()
        .into_iter()
        .map(|(_, span)| span)
        .collect();
    let sent = upstream_traceparents(&upstream);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    assert_eq!(sent.len(), 2);
    for (trace_id, parent_id, _) in &sent {
        assert_ne!(trace_id, TRACE_ID);
        let server = spans
            .iter()
            .find(|span| span.kind == SpanKind::Server as i32 && hex(&span.trace_id) == *trace_id)
            .expect("the request's span, in the trace the upstream saw");
        assert!(server.parent_span_id.is_empty(), "a root span");
        assert_eq!(server.flags & 0x3ff, 0x101, "sampled, no remote parent");
        let client = spans
            .iter()
            .find(|span| hex(&span.span_id) == *parent_id)
            .expect("the attempt's span");
        assert_eq!(client.parent_span_id, server.span_id);
    }
}

#[tokio::test]
async fn an_unsampled_request_exports_no_span() {
    let upstream = upstream().await;
    let collector = Collector::start().await;
    let (running, exporter, exporting) =
        serve_traced(&upstream, &collector.endpoint, quick()).await;
    call(
        &running,
        "traced",
        json!({}),
        &[("traceparent", &traceparent("00"))],
    )
    .await;
    call(&running, "traced", json!({}), &[]).await;
    exporting.shutdown(FLUSH).await;
    assert_eq!(upstream.requests().len(), 2);
    assert_eq!(
        collector.spans().len(),
        2,
        "only the sampled request's two spans"
    );
    assert_eq!(exporter.exported(), 2);
}

#[tokio::test]
async fn calls_succeed_while_the_collector_is_down_and_the_lost_spans_are_counted() {
    let upstream = upstream().await;
    // A port nothing listens on: bound, then released.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}/v1/traces", closed.local_addr().expect("address"));
    drop(closed);
    let (running, exporter, exporting) = serve_traced(&upstream, &endpoint, quick()).await;
    for _ in 0..3 {
        let answer = call(&running, "traced", json!({}), &[]).await;
        assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    }
    exporting.shutdown(FLUSH).await;
    assert_eq!(upstream.requests().len(), 3);
    assert_eq!(exporter.exported(), 0);
    assert_eq!(exporter.dropped(), 6, "two spans a call, none delivered");
}

#[tokio::test]
async fn a_full_queue_drops_spans_without_holding_calls_up() {
    let upstream = upstream().await;
    let collector = Collector::start().await;
    // One span fits; nothing is sent until shutdown.
    let options = ExportOptions {
        queue: 1,
        interval: Duration::from_secs(3600),
        ..ExportOptions::default()
    };
    let (running, exporter, exporting) =
        serve_traced(&upstream, &collector.endpoint, options).await;
    for _ in 0..3 {
        let answer = call(&running, "traced", json!({}), &[]).await;
        assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    }
    assert_eq!(exporter.dropped(), 5, "six spans, one queued");
    exporting.shutdown(FLUSH).await;
    assert_eq!(collector.spans().len(), 1, "shutdown sends what was queued");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_exports_spans_in_the_trace_meta_names_and_flushes_on_exit() {
    let upstream = upstream().await;
    let collector = Collector::start().await;
    let dir = std::env::temp_dir().join(format!("ferry-traces-stdio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let document = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/pets/{petId}": {"get": {"operationId": "getPet",
            "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "ok"}}}}}});
    std::fs::write(dir.join("openapi.json"), document.to_string()).expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        format!(
            "openapi: ./openapi.json\nupstream: {}\ntools:\n  getPet: {{retry_backoff_ms: 1}}\n",
            upstream.base
        ),
    )
    .expect("write curation");
    let request = json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call", "params": {
    "name": "getPet", "arguments": {"petId": 7},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": support::MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": traceparent("01"),
    }}});
    // Run apart from this test's runtime, which serves the upstream and the collector.
    let config = dir.join("ferry.yaml");
    let endpoint = collector.endpoint.clone();
    let output = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--stdio", "--otlp-endpoint", &endpoint, "--config"])
            .arg(config)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ferry runs");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .expect("write");
        drop(stdin);
        child.wait_with_output().expect("ferry ends")
    })
    .await
    .expect("task");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("one answer");
    assert_ne!(answer["result"]["isError"], true, "{answer:#}");
    let _ = std::fs::remove_dir_all(&dir);

    let spans: Vec<ProtoSpan> = collector
        .spans()
        .into_iter()
        .map(|(_, span)| span)
        .collect();
    let server = spans
        .iter()
        .find(|span| span.kind == SpanKind::Server as i32)
        .unwrap_or_else(|| panic!("a server span: {spans:#?}\n{stderr}"));
    assert_eq!(server.name, "tools/call getPet");
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    assert_eq!(
        text(&server.attributes, "network.transport").as_deref(),
        Some("pipe")
    );
    assert_eq!(
        text(&server.attributes, "jsonrpc.request.id").as_deref(),
        Some("call-1")
    );
    let clients: Vec<&ProtoSpan> = spans
        .iter()
        .filter(|span| span.kind == SpanKind::Client as i32)
        .collect();
    // The curation's default retries: a 503, then the answer.
    assert_eq!(clients.len(), upstream.requests().len());
    let sent = upstream_traceparents(&upstream);
    for (client, (trace_id, parent_id, _)) in clients.iter().zip(&sent) {
        assert_eq!(client.parent_span_id, server.span_id);
        assert_eq!(*trace_id, TRACE_ID);
        assert_eq!(*parent_id, hex(&client.span_id));
    }
}
