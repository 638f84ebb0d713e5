//! stdio: newline-delimited JSON-RPC, nothing else on stdout. The transport is driven
//! in-process over a pipe; the built binary is run where the command line is what is tested
//! (calls through the binary need the upstream client and live in the end-to-end tests).

use std::sync::Arc;

use ferry::transport::stdio;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::*;

async fn exchange(input: &str, max_line: usize) -> Vec<Value> {
    let (mut client, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(stdio::serve(
        Arc::new(server()),
        BufReader::new(server_read),
        server_write,
        max_line,
    ));
    client.write_all(input.as_bytes()).await.expect("write");
    client.shutdown().await.expect("close stdin");
    let mut lines = BufReader::new(client).lines();
    let mut messages = Vec::new();
    while let Some(line) = lines.next_line().await.expect("read") {
        messages.push(
            serde_json::from_str(&line)
                .unwrap_or_else(|error| panic!("stdout line is not JSON ({error}): {line}")),
        );
    }
    serving.await.expect("task").expect("serve");
    messages
}

#[tokio::test]
async fn stdio_answers_each_request_on_its_own_line_and_notifications_not_at_all() {
    let discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta()}});
    let input = format!(
        "{}\n{}\n{}\n\n{}\n",
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        legacy("tools/list", json!({})).replace("\"id\":1", "\"id\":2"),
        discover,
    );
    let mut messages = exchange(&input, 1 << 20).await;
    messages.sort_by_key(|message| message["id"].as_i64());
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_schema(LEGACY, "InitializeResult", &messages[0]["result"]);
    assert_schema(LEGACY, "ListToolsResult", &messages[1]["result"]);
    assert_schema(MODERN, "DiscoverResultResponse", &messages[2]);
}

#[tokio::test]
async fn stdio_skips_lines_over_the_limit_with_an_error() {
    let long = legacy("ping", json!({"padding": "x".repeat(200)}));
    let input = format!("{long}\n{}\n", legacy("ping", json!({})));
    let messages = exchange(&input, 100).await;
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[0]["error"]["code"], -32600);
    assert_eq!(
        messages[1],
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
}

#[tokio::test]
async fn stdio_checks_meta_but_not_headers() {
    let request =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta()}});
    let without_capabilities = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let mut messages = exchange(&format!("{request}\n{without_capabilities}\n"), 1 << 20).await;
    messages.sort_by_key(|message| message["id"].as_i64());
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_schema(MODERN, "ListToolsResultResponse", &messages[0]);
    assert_eq!(messages[1]["error"]["code"], -32602, "{:#}", messages[1]);
    assert!(
        messages[1]["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("clientCapabilities")),
        "{:#}",
        messages[1]
    );
}

#[test]
fn serve_refuses_to_start_while_the_catalog_has_errors_and_prints_them_all() {
    let dir = std::env::temp_dir().join(format!("ferry-serve-refuses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let document = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok"}}}}}});
    std::fs::write(dir.join("openapi.json"), document.to_string()).expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./openapi.json\nupstream: http://127.0.0.1:1\ntools:\n  nope: {}\n  alsoNope: {}\n",
    )
    .expect("write curation");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--stdio", "--config"])
        .arg(dir.join("ferry.yaml"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ferry runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing on stdout");
    assert!(
        stderr.contains("nope") && stderr.contains("alsoNope"),
        "every error is printed: {stderr}"
    );
    assert!(stderr.contains("refusing to serve"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
