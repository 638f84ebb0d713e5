//! Rate limits end to end: a compiled catalog with limits, served over HTTP (with API keys
//! where subjects matter) in front of a real upstream on loopback that counts every request
//! it is sent. Over a limit the call is a tool result saying when to try again, and the
//! upstream sees nothing more.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferry::auth::Authenticator;
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::support::*;

const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Items, version: "1"}
paths:
  /items:
    get: {operationId: listItems}
    post:
      operationId: createItem
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}}}
  /items/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
    get: {operationId: getItem}
    delete: {operationId: deleteItem}
"#;

const ALICE: &str = "alice-key-0123456789";
const BOB: &str = "bob-key-0123456789";

/// An upstream that answers every request `{"ok":true}` and counts them.
struct Counting {
    address: SocketAddr,
    seen: Arc<AtomicUsize>,
}

impl Counting {
    async fn start() -> Counting {
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&seen);
        let router = axum::Router::new().fallback(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    r#"{"ok":true}"#,
                )
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        tokio::spawn(async move { axum::serve(listener, router).await });
        Counting { address, seen }
    }

    fn seen(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }
}

/// ferry serving [`DOCUMENT`] with `curation` (YAML, without `upstream:`), in front of a
/// counting upstream; with `keys`, alice and bob each have an API key.
async fn limited(curation: &str, keys: bool) -> (Counting, Running) {
    let upstream = Counting::start().await;
    let mut text = format!("upstream: http://{}\n{curation}", upstream.address);
    if keys {
        let sha = |key: &str| format!("{:x}", sha2::Sha256::digest(key.as_bytes()));
        text.push_str(&format!(
            "auth:\n  api_keys:\n    - {{subject: alice, sha256: \"{}\"}}\n    - {{subject: bob, sha256: \"{}\"}}\n",
            sha(ALICE),
            sha(BOB)
        ));
    }
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let client = Upstream::new(&catalog).expect("upstream client");
    let authenticator = match &curation.auth {
        Some(auth) => Authenticator::new(Some(auth), ferry::auth::tool_scopes(&catalog, auth))
            .expect("authenticator"),
        None => Authenticator::none(),
    };
    let options = ServerOptions {
        authenticator,
        ..ServerOptions::default()
    };
    let server = Server::new(&catalog, Some(client), options);
    (upstream, start(server, HttpOptions::default()).await)
}

/// A modern `tools/call`, as the caller holding `key` (none: no `Authorization`).
async fn call(url: &str, key: Option<&str>, tool: &str, arguments: Value) -> Value {
    let (body, headers) = modern("tools/call", json!({"name": tool, "arguments": arguments}));
    let authorization = key.map(|key| format!("Bearer {key}"));
    let mut headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    if let Some(authorization) = &authorization {
        headers.push(("authorization", authorization));
    }
    let answer = post(url, &body, &headers).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let value = answer.json();
    assert_schema(MODERN, "CallToolResultResponse", &value);
    value["result"].clone()
}

/// `(scope, limit, retryAfterSeconds)` of a refusal, or `None` for a call that went through.
fn refusal(result: &Value) -> Option<(String, String, u64)> {
    let limited = result["_meta"].get("dev.ferry/rateLimit")?;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let seconds = limited["retryAfterSeconds"]
        .as_u64()
        .expect("whole seconds");
    assert!(
        text.starts_with("rate limit reached")
            && text.ends_with(&format!("try again in {seconds} seconds")),
        "{text}"
    );
    Some((
        limited["scope"].as_str().expect("scope").to_string(),
        limited["limit"].as_str().expect("limit").to_string(),
        seconds,
    ))
}

fn went_through(result: &Value) {
    assert!(result.get("isError").is_none(), "{result}");
    assert_eq!(result["structuredContent"], json!({"ok": true}), "{result}");
}

#[tokio::test]
async fn over_its_limit_a_call_is_a_tool_result_and_the_upstream_sees_nothing_more() {
    let (upstream, running) = limited("tools:\n  createItem: {rate_limit: 2/min}\n", false).await;
    // Arguments the schema refuses cost nothing: they never get as far as the limit.
    for _ in 0..3 {
        let invalid = call(&running.url, None, "createItem", json!({"name": 7})).await;
        assert_eq!(invalid["isError"], true);
        assert_eq!(refusal(&invalid), None);
    }
    for _ in 0..2 {
        went_through(&call(&running.url, None, "createItem", json!({"name": "a"})).await);
    }
    assert_eq!(upstream.seen(), 2);
    let refused = call(&running.url, None, "createItem", json!({"name": "a"})).await;
    assert_eq!(
        refusal(&refused),
        Some(("tool".to_string(), "2/min".to_string(), 30))
    );
    // A legacy client is told the same, in its era's result.
    let body = legacy(
        "tools/call",
        json!({"name": "createItem", "arguments": {"name": "a"}}),
    );
    let answer = post(&running.url, &body, &[("mcp-protocol-version", LEGACY)]).await;
    let value = answer.json();
    assert_schema(LEGACY, "CallToolResult", &value["result"]);
    assert_eq!(
        refusal(&value["result"]),
        Some(("tool".to_string(), "2/min".to_string(), 30))
    );
    assert_eq!(upstream.seen(), 2, "nothing more reached the upstream");
}

#[tokio::test]
async fn each_subject_has_a_budget_of_its_own() {
    let (upstream, running) = limited("tools:\n  getItem: {rate_limit: 1/h}\n", true).await;
    let unauthenticated = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "getItem", "arguments": {"id": 1}}),
    )
    .await;
    assert_eq!(unauthenticated.status, 401, "keys are asked for");
    went_through(&call(&running.url, Some(ALICE), "getItem", json!({"id": 1})).await);
    let refused = call(&running.url, Some(ALICE), "getItem", json!({"id": 2})).await;
    assert_eq!(
        refusal(&refused),
        Some(("tool".to_string(), "1/h".to_string(), 3600))
    );
    went_through(&call(&running.url, Some(BOB), "getItem", json!({"id": 1})).await);
    assert!(refusal(&call(&running.url, Some(BOB), "getItem", json!({"id": 1})).await).is_some());
    assert_eq!(upstream.seen(), 2);
}

#[tokio::test]
async fn a_tools_limit_and_its_class_limit_both_apply() {
    let curation = "rate_limits: {writes: 3/min}\ntools:\n  createItem: {rate_limit: 2/min}\n  deleteItem: {}\n";
    let (upstream, running) = limited(curation, true).await;
    for _ in 0..2 {
        went_through(
            &call(
                &running.url,
                Some(ALICE),
                "createItem",
                json!({"name": "a"}),
            )
            .await,
        );
    }
    let refused = call(
        &running.url,
        Some(ALICE),
        "createItem",
        json!({"name": "a"}),
    )
    .await;
    assert_eq!(
        refusal(&refused),
        Some(("tool".to_string(), "2/min".to_string(), 30))
    );
    // The refusal spent nothing of the writes budget: one write is left, for another tool.
    went_through(&call(&running.url, Some(ALICE), "deleteItem", json!({"id": 1})).await);
    let refused = call(&running.url, Some(ALICE), "deleteItem", json!({"id": 1})).await;
    assert_eq!(
        refusal(&refused),
        Some(("writes".to_string(), "3/min".to_string(), 20))
    );
    // Both are spent now; the wait given is the one that frees last.
    let refused = call(
        &running.url,
        Some(ALICE),
        "createItem",
        json!({"name": "a"}),
    )
    .await;
    // The tool's budget frees a call in 30 s, the writes' in 20 s, less however long the
    // calls above took on a busy machine: the later of the two is told.
    let wait = refusal(&refused).map(|(_, _, seconds)| seconds);
    assert!(matches!(wait, Some(21..=30)), "{wait:?}");
    assert_eq!(upstream.seen(), 3);
    // Bob's budgets are untouched by all of it.
    went_through(&call(&running.url, Some(BOB), "createItem", json!({"name": "b"})).await);
    assert_eq!(upstream.seen(), 4);
}

#[tokio::test]
async fn reads_and_writes_are_counted_apart() {
    let curation = "rate_limits: {reads: 2/min, writes: 1/min}\ntools: {listItems: {}, getItem: {}, createItem: {}, deleteItem: {}}\n";
    let (upstream, running) = limited(curation, false).await;
    went_through(&call(&running.url, None, "listItems", json!({})).await);
    went_through(&call(&running.url, None, "getItem", json!({"id": 1})).await);
    let refused = call(&running.url, None, "listItems", json!({})).await;
    assert_eq!(
        refusal(&refused),
        Some(("reads".to_string(), "2/min".to_string(), 30))
    );
    went_through(&call(&running.url, None, "createItem", json!({"name": "a"})).await);
    let refused = call(&running.url, None, "deleteItem", json!({"id": 1})).await;
    assert_eq!(
        refusal(&refused),
        Some(("writes".to_string(), "1/min".to_string(), 60))
    );
    assert_eq!(upstream.seen(), 3);
}

fn ferry_check(curation: &str, format: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!(
        "ferry-it-rate-limits-{format}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("api.yaml"), DOCUMENT).expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        format!("openapi: ./api.yaml\n{curation}"),
    )
    .expect("write curation");
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["check", "--format", format])
        .current_dir(&dir)
        .output()
        .expect("run ferry");
    let _ = std::fs::remove_dir_all(&dir);
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn ferry_check_shows_each_tools_limits_and_refuses_bad_ones() {
    let curation = "rate_limits: {writes: 30/min, reads: 600/min}\ntools:\n  listItems: {}\n  createItem: {rate_limit: 5/min}\n  deleteItem: {}\n";
    let (code, out) = ferry_check(curation, "text");
    assert_eq!(code, 0, "{out}");
    let section = out
        .split_once("rate limits per caller")
        .map(|(_, rest)| rest)
        .expect("a rate limits section");
    assert!(
        section.contains(
            "  createItem (writes): 5/min for this tool, 30/min for all writes together\n"
        ) && section.contains("  deleteItem (writes): 30/min for all writes together\n")
            && section.contains("  listItems (reads): 600/min for all reads together\n"),
        "{out}"
    );
    let (code, out) = ferry_check(curation, "json");
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).expect("JSON");
    let limits: Vec<(String, Value)> = report["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .filter(|operation| operation["status"] == "served")
        .map(|operation| {
            (
                operation["tool"].as_str().unwrap_or_default().to_string(),
                operation["rateLimits"].clone(),
            )
        })
        .collect();
    assert_eq!(
        limits,
        [
            (
                "listItems".to_string(),
                json!({"class": "reads", "tool": null, "classLimit": "600/min"})
            ),
            (
                "createItem".to_string(),
                json!({"class": "writes", "tool": "5/min", "classLimit": "30/min"})
            ),
            (
                "deleteItem".to_string(),
                json!({"class": "writes", "tool": null, "classLimit": "30/min"})
            ),
        ]
    );

    let (code, out) = ferry_check(
        "rate_limits: {writes: 30/minute}\ntools:\n  createItem: {rate_limit: 0/s}\n",
        "text",
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error: `writes` must be a rate such as `30/min`: a whole number from 1 to 1000000, `/`, and `s` (or `sec`), `min` or `h`\n  --> curation:rate_limits.writes")
            && out.contains("error: `rate_limit` must allow at least 1 call per period: 0 would refuse every call\n  --> curation:tools.createItem.rate_limit"),
        "{out}"
    );
}

/// Limits are per process: `ferry serve --workers 2` hands each connection to the next
/// worker, and both spend from one budget.
#[test]
fn every_worker_of_a_process_spends_from_one_budget() {
    use std::io::BufRead as _;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let upstream = runtime.block_on(Counting::start());
    let dir = std::env::temp_dir().join(format!(
        "ferry-it-rate-limits-workers-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("api.yaml"), DOCUMENT).expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        format!(
            "openapi: ./api.yaml\nupstream: http://{}\nrate_limits: {{writes: 3/min}}\ntools: {{createItem: {{}}}}\n",
            upstream.address
        ),
    )
    .expect("write curation");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "2"])
        .current_dir(&dir)
        .env("RUST_LOG", "ferry=debug")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ferry starts");
    let (send, lines) = std::sync::mpsc::channel();
    let stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let reader = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    let mut log = Vec::new();
    let endpoint = loop {
        let line = lines
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("ferry did not listen: {log:?}"));
        let found = line.find("endpoint=").map(|at| {
            line[at + "endpoint=".len()..]
                .split_whitespace()
                .next()
                .expect("url")
                .to_string()
        });
        log.push(line);
        if let Some(endpoint) = found {
            break endpoint;
        }
    };
    let results: Vec<Value> = runtime.block_on(async {
        let mut results = Vec::new();
        // Each call on a connection of its own, so the workers take turns.
        for _ in 0..6 {
            results.push(call(&endpoint, None, "createItem", json!({"name": "a"})).await);
        }
        results
    });
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    assert!(child.wait().expect("ferry ends").success());
    reader.join().expect("log reader");
    log.extend(lines.try_iter());
    let _ = std::fs::remove_dir_all(&dir);

    for worker in ["worker=0 ", "worker=1 "] {
        assert!(
            log.iter().any(|line| line.contains(worker)),
            "{worker}accepted nothing: {log:#?}"
        );
    }
    let refused: Vec<Option<String>> = results
        .iter()
        .map(|result| refusal(result).map(|(scope, _, _)| scope))
        .collect();
    let writes = Some("writes".to_string());
    assert_eq!(
        refused,
        [None, None, None, writes.clone(), writes.clone(), writes]
    );
    assert_eq!(upstream.seen(), 3);
}
