//! End to end: real MCP requests through ferry to a real local upstream (the bundled pets API,
//! or a raw socket that shows when ferry lets go of a call), over HTTP and, through the built
//! binary, over stdio.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ferry::catalog::Catalog;
use ferry::curation::Curation;
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::support::*;

async fn demo_server() -> Server {
    let base = ferry::demo::start().await.expect("pets API");
    let (catalog, diagnostics) = ferry::demo::catalog(&base).expect("demo catalog");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    served(&catalog)
}

fn served(catalog: &Catalog) -> Server {
    let upstream = Upstream::new(catalog).expect("upstream client");
    Server::new(catalog, Some(upstream), ServerOptions::default())
}

/// A modern `get_pet` call over HTTP to the demo, answered 200 with a valid result.
async fn demo_get_pet(pet_id: u64) -> Value {
    let running = start(demo_server().await, HttpOptions::default()).await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": pet_id}}),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let value = answer.json();
    assert_schema(MODERN, "CallToolResultResponse", &value);
    value
}

#[tokio::test]
async fn modern_call_returns_the_api_answer_as_a_complete_result() {
    let value = demo_get_pet(1).await;
    let result = &value["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["structuredContent"]["name"], "Tom");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "pets-demo"
    );
    assert!(result.get("isError").is_none_or(|flag| flag == false));
}

#[tokio::test]
async fn legacy_call_gets_an_array_wrapped_as_an_object() {
    let running = start(demo_server().await, HttpOptions::default()).await;
    let body = legacy(
        "tools/call",
        json!({"name": "list_pets", "arguments": {"species": "cat"}}),
    );
    let answer = post(&running.url, &body, &[("mcp-protocol-version", LEGACY)]).await;
    let value = answer.json();
    assert_schema(LEGACY, "JSONRPCResultResponse", &value);
    assert_schema(LEGACY, "CallToolResult", &value["result"]);
    assert_eq!(
        value["result"]["structuredContent"]["result"][0]["name"],
        "Tom"
    );
    assert!(value["result"].get("resultType").is_none());
}

#[tokio::test]
async fn a_missing_pet_is_a_tool_error_that_keeps_the_problem_details() {
    let value = demo_get_pet(99).await;
    assert_eq!(value["result"]["isError"], true);
    assert!(value.to_string().contains("no pet has id 99"), "{value:#}");
}

#[tokio::test]
async fn rmcp_client_calls_a_real_tool_at_both_revisions() {
    let running = start(demo_server().await, HttpOptions::default()).await;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(running.url.clone());
    let modern = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        (),
        transport,
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("discover");
    let arguments = json!({"petId": 2}).as_object().cloned().unwrap_or_default();
    let result = modern
        .call_tool(CallToolRequestParams::new("get_pet").with_arguments(arguments))
        .await
        .expect("call");
    assert_eq!(
        result
            .structured_content
            .as_ref()
            .map(|pet| pet["name"].clone()),
        Some(json!("Rex"))
    );
    modern.cancel().await.expect("close");

    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(running.url.clone());
    let legacy = ().serve(transport).await.expect("initialize");
    let result = legacy
        .call_tool(CallToolRequestParams::new("list_pets"))
        .await
        .expect("call");
    assert_eq!(
        result
            .structured_content
            .as_ref()
            .map(|object| object["result"][2]["name"].clone()),
        Some(json!("Tweety"))
    );
    legacy.cancel().await.expect("close");
}

/// An upstream that reads one request, reports it, never answers (or answers after `delay`),
/// and reports when ferry closes the connection.
async fn slow_upstream(delay: Option<Duration>) -> (String, mpsc::UnboundedReceiver<&'static str>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let (events, received) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let events = events.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let _ = events.send("request");
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                    let body = r#"{"slow":true}"#;
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                }
                loop {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                let _ = events.send("closed");
            });
        }
    });
    (base, received)
}

fn slow_document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "slow", "version": "1"},
        "paths": {"/slow": {"get": {"operationId": "slow", "summary": "Answers slowly",
            "responses": {"200": {"description": "ok"}}}}},
    })
}

/// [`slow_document`] written to a file of the temporary folder named after `test`: its path,
/// and the path as an argument.
fn slow_document_file(test: &str) -> (std::path::PathBuf, String) {
    let path = std::env::temp_dir().join(format!("ferry-{test}-{}.json", std::process::id()));
    std::fs::write(&path, slow_document().to_string()).expect("write document");
    let argument = path.to_string_lossy().into_owned();
    (path, argument)
}

fn slow_catalog(base: &str) -> Catalog {
    let document = Document::from_value(slow_document()).expect("document");
    let curation = Curation {
        all: true,
        upstream: Some(base.to_owned()),
        ..Curation::default()
    };
    let (catalog, diagnostics) = ferry::catalog::compile(&document, &curation);
    assert!(
        !diagnostics.iter().any(|diagnostic| diagnostic.is_error()),
        "{diagnostics:?}"
    );
    catalog
}

async fn next_event(events: &mut mpsc::UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("in time")
        .expect("event")
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_its_upstream_call() {
    let (base, mut events) = slow_upstream(None).await;
    let running = start(served(&slow_catalog(&base)), HttpOptions::default()).await;
    let (body, headers) = modern("tools/call", json!({"name": "slow", "arguments": {}}));
    let mut request = client()
        .post(&running.url)
        .timeout(Duration::from_millis(500))
        .body(body);
    for (name, value) in &headers {
        request = request.header(*name, value);
    }
    let sent = tokio::spawn(request.send());
    assert_eq!(next_event(&mut events).await, "request");
    assert!(sent.await.expect("task").is_err(), "the client gave up");
    assert_eq!(
        next_event(&mut events).await,
        "closed",
        "ferry let go of the upstream call"
    );
}

#[tokio::test]
async fn shutdown_lets_a_call_in_flight_finish() {
    let (base, mut events) = slow_upstream(Some(Duration::from_millis(500))).await;
    let running = start(served(&slow_catalog(&base)), HttpOptions::default()).await;
    let url = running.url.clone();
    let call = tokio::spawn(async move {
        post_modern(&url, "tools/call", json!({"name": "slow", "arguments": {}})).await
    });
    assert_eq!(next_event(&mut events).await, "request");
    running.shutdown().await;
    let answer = call.await.expect("task");
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(
        answer.json()["result"]["structuredContent"],
        json!({"slow": true})
    );
}

#[tokio::test]
async fn request_timeout_ends_a_call_that_takes_too_long() {
    let (base, mut events) = slow_upstream(None).await;
    let options = HttpOptions {
        request_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    };
    let running = start(served(&slow_catalog(&base)), options).await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )
    .await;
    assert_eq!(answer.status_and_code(), "504 -32603", "{}", answer.text);
    assert_modern_error(&answer);
    assert_eq!(next_event(&mut events).await, "request");
    assert_eq!(next_event(&mut events).await, "closed");
}

/// `ferry` with `arguments`, stdin and stdout piped; stderr is captured separately.
fn spawn_ferry(arguments: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(arguments)
        .env("RUST_LOG", "ferry=debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry starts")
}

#[test]
fn demo_over_stdio_answers_each_request_with_one_json_line() {
    let mut child = spawn_ferry(&["demo", "--stdio"]);
    let mut stdin = child.stdin.take().expect("stdin");
    let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta()}});
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "get_pet", "arguments": {"petId": 3}, "_meta": meta()}});
    let lines = [
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        legacy("tools/list", json!({})).replace("\"id\":1", "\"id\":2"),
        discover.to_string(),
        call.to_string(),
    ];
    for line in &lines {
        writeln!(stdin, "{line}").expect("write");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("ferry ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let mut messages: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
        })
        .collect();
    messages.sort_by_key(|message| message["id"].as_i64());
    assert_eq!(messages.len(), 4, "{stdout}");
    assert_schema(LEGACY, "InitializeResult", &messages[0]["result"]);
    assert_schema(LEGACY, "ListToolsResult", &messages[1]["result"]);
    assert_schema(MODERN, "DiscoverResultResponse", &messages[2]);
    assert_schema(MODERN, "CallToolResultResponse", &messages[3]);
    assert_eq!(messages[3]["result"]["structuredContent"]["name"], "Tweety");
    assert!(
        !String::from_utf8_lossy(&output.stderr).is_empty(),
        "logs go to stderr"
    );
}

#[test]
fn stdio_cancellation_drops_the_upstream_call_and_answers_nothing_for_it() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (base, mut events) = runtime.block_on(slow_upstream(None));
    let (path, document) = slow_document_file("stdio-cancel");
    let mut child = spawn_ferry(&[
        "serve",
        "--stdio",
        "--openapi",
        &document,
        "--all",
        "--upstream",
        &base,
    ]);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}, "_meta": meta()}});
    writeln!(stdin, "{call}").expect("write");
    assert_eq!(runtime.block_on(next_event(&mut events)), "request");
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    writeln!(stdin, "{cancel}").expect("write");
    assert_eq!(
        runtime.block_on(next_event(&mut events)),
        "closed",
        "the upstream call was dropped"
    );
    writeln!(
        stdin,
        "{}",
        legacy("ping", json!({})).replace("\"id\":1", "\"id\":6")
    )
    .expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read");
    assert_eq!(
        line.trim(),
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#,
        "nothing was answered for id 5"
    );
    drop(stdin);
    assert!(child.wait().expect("ferry ends").success());
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn many_concurrent_calls_share_one_server() {
    let server = Arc::new(demo_server().await);
    let mut calls = Vec::new();
    for id in 0..32 {
        let server = Arc::clone(&server);
        calls.push(tokio::spawn(async move {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "get_pet", "arguments": {"petId": 1 + id % 3}, "_meta": meta()}})
            .to_string();
            server
                .handle(ferry::mcp::Incoming {
                    body: body.as_bytes(),
                    headers: None,
                    principal: None,
                    notify: None,
                })
                .await
        }));
    }
    for call in calls {
        let outgoing = call.await.expect("task");
        assert_eq!(outgoing.status.as_u16(), 200);
    }
}

#[test]
fn serve_spreads_connections_over_its_workers_and_finishes_calls_on_sigterm() {
    const CALLS: usize = 6;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (base, mut events) = runtime.block_on(slow_upstream(Some(Duration::from_millis(300))));
    let (path, document) = slow_document_file("workers");
    let mut child = spawn_ferry(&[
        "serve",
        "--openapi",
        &document,
        "--all",
        "--upstream",
        &base,
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "3",
    ]);
    let (endpoint, log) = Log::read(&mut child);
    let answers = runtime.block_on(async {
        // Each call on a connection of its own.
        let calls: Vec<_> = (0..CALLS)
            .map(|_| {
                let url = endpoint.clone();
                tokio::spawn(async move {
                    post_modern(&url, "tools/call", json!({"name": "slow", "arguments": {}})).await
                })
            })
            .collect();
        for _ in 0..CALLS {
            assert_eq!(next_event(&mut events).await, "request");
        }
        // Every call is at the upstream: stopping now must let each one finish.
        let stopped = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(stopped.success());
        let mut answers = Vec::new();
        for call in calls {
            answers.push(call.await.expect("task"));
        }
        answers
    });
    for answer in &answers {
        assert_eq!(answer.status, 200, "{}", answer.text);
        assert_eq!(
            answer.json()["result"]["structuredContent"],
            json!({"slow": true})
        );
    }
    assert!(child.wait().expect("ferry ends").success());
    log.assert_each_worker_accepted(3);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn serve_over_tls_hands_connections_to_every_worker() {
    const TLS: &str = "tests/data/tls";
    let mut child = spawn_ferry(&[
        "demo",
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "2",
        "--tls-cert",
        &format!("{TLS}/localhost.crt"),
        "--tls-key",
        &format!("{TLS}/localhost.key"),
    ]);
    let (endpoint, log) = Log::read(&mut child);
    // The certificate names localhost.
    let endpoint = endpoint.replace("127.0.0.1", "localhost");
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let ca = std::fs::read(format!("{TLS}/ca.crt")).expect("test CA");
    let ca = reqwest::Certificate::from_pem(&ca).expect("CA parses");
    let (body, headers) = modern(
        "tools/call",
        json!({"name": "get_pet", "arguments": {"petId": 1}}),
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for _ in 0..4 {
        // A client of its own, so a connection of its own.
        let client = reqwest::Client::builder()
            .no_proxy()
            .tls_certs_only([ca.clone()])
            .build()
            .expect("client");
        let mut request = client
            .post(&endpoint)
            .header("content-type", "application/json")
            .body(body.clone());
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        let answer: Value = runtime.block_on(async {
            let response = request.send().await.expect("https call");
            assert_eq!(response.status(), 200);
            response.json().await.expect("JSON")
        });
        assert_eq!(answer["result"]["structuredContent"]["name"], "Tom");
    }
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    assert!(child.wait().expect("ferry ends").success());
    log.assert_each_worker_accepted(2);
}

/// An HTTPS upstream's certificate is checked against the platform's trust store, which
/// `SSL_CERT_FILE` replaces: the test CA's certificate is trusted through it, and the same
/// server is refused when the store holds only its own certificate, no CA.
#[test]
fn an_https_upstream_is_checked_against_the_platform_trust_store() {
    const TLS: &str = "tests/data/tls";
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let port = runtime.block_on(async {
        let config = ferry::transport::tls::server_config(
            std::path::Path::new(&format!("{TLS}/localhost.crt")),
            std::path::Path::new(&format!("{TLS}/localhost.key")),
        )
        .expect("test certificate");
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = tcp.local_addr().expect("address").port();
        let listener = ferry::transport::tls::TlsListener::new(tcp, config).expect("listener");
        let router = axum::Router::new().route(
            "/slow",
            axum::routing::get(|| async {
                ([("content-type", "application/json")], r#"{"slow":true}"#)
            }),
        );
        tokio::spawn(async move { axum::serve(listener, router).await });
        port
    });
    let (path, document) = slow_document_file("https-upstream");
    let base = format!("https://localhost:{port}");
    for (store, expected) in [
        ("ca.crt", r#"{"slow":true}"#),
        ("localhost.crt", "could not connect to the upstream"),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--stdio", "--openapi", &document, "--all"])
            .args(["--upstream", &base])
            .env("SSL_CERT_FILE", format!("{TLS}/{store}"))
            .env_remove("SSL_CERT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ferry starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}, "_meta": meta()}});
        writeln!(stdin, "{call}").expect("write");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(text, expected, "trusting {store}: {answer}");
        drop(stdin);
        assert!(child.wait().expect("ferry ends").success());
    }
    let _ = std::fs::remove_file(&path);
}

/// The log of a `ferry` started by [`spawn_ferry`], read on a thread of its own so ferry never
/// writes into a full pipe.
struct Log {
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    reader: std::thread::JoinHandle<()>,
}

impl Log {
    /// Starts reading `child`'s stderr; returns the endpoint ferry announces once it listens.
    fn read(child: &mut std::process::Child) -> (String, Log) {
        let (send, lines) = std::sync::mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let reader = std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let mut seen = Vec::new();
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("ferry did not listen: {seen:?}"));
            if let Some(at) = line.find("endpoint=") {
                let rest = &line[at + "endpoint=".len()..];
                let endpoint = rest.split_whitespace().next().expect("url").to_string();
                seen.push(line);
                return (
                    endpoint,
                    Log {
                        lines,
                        seen,
                        reader,
                    },
                );
            }
            seen.push(line);
        }
    }

    /// Once ferry has ended: each of `workers` workers logged a connection it accepted.
    fn assert_each_worker_accepted(self, workers: usize) {
        self.reader.join().expect("log reader");
        let log: Vec<String> = self.seen.into_iter().chain(self.lines.try_iter()).collect();
        for worker in 0..workers {
            let accepted = format!("worker={worker} ");
            assert!(
                log.iter()
                    .any(|line| line.contains("connection accepted") && line.contains(&accepted)),
                "worker {worker} accepted no connection: {log:#?}"
            );
        }
    }
}
