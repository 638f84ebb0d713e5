//! The Tasks extension over long-running operations (issue 28): rmcp's client, declaring
//! the extension over HTTP and over stdio, gets a task for a call the API accepts and
//! follows it with `tasks/get` to the final result; a task made through one replica is
//! finished through another sharing its key, and one made before a reload after it;
//! `tasks/cancel` sends the API's cancel, or says there is none; an id that is tampered
//! with or sealed under another key is refused, and nothing is fetched; a look past the
//! tool's rate limit, or whose budget the replicas' shared state cannot read, asks the API
//! nothing and is recorded.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use ferry::mcp::confirm::ConfirmKey;
use ferry::mcp::limit::Limiter;
use ferry::mcp::{Server, ServerOptions};
use ferry::observe::{Audit, AuditTarget, Metrics, Observer};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, TaskStatus};
use serde_json::{Value, json};

use crate::support::{Running, ServeProcess, post, post_modern, serve_app, start};

const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Jobs, version: "1"}
paths:
  /exports:
    post:
      operationId: startExport
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /imports:
    post:
      operationId: startImport
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
"#;

const CURATION: &str = r#"
upstream_auth: {api_key: {name: X-Key, env: JOBS_KEY}}
tools:
  startExport:
    long_running:
      state: /state
      completed: [done]
      cancelled: [cancelled]
      interval_ms: 10
      cancel: DELETE
  startImport:
    long_running: {interval_ms: 10}
"#;

const API_KEY: &str = "jobs-key-0123456789";
const SEAL_KEY: &[u8] = b"a key of at least thirty-two bytes, shared";

/// The job API: every export is done on its third look, unless it was cancelled first.
#[derive(Default)]
struct Jobs {
    requests: Mutex<Vec<String>>,
    looks: Mutex<u32>,
    cancelled: Mutex<bool>,
}

impl Jobs {
    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

async fn job_api(
    jobs: Arc<Jobs>,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    jobs.requests
        .lock()
        .expect("lock")
        .push(format!("{method} {}", uri.path()));
    if headers.get("x-key").and_then(|v| v.to_str().ok()) != Some(API_KEY) {
        return (StatusCode::UNAUTHORIZED, "no key").into_response();
    }
    let json = |body: Value| {
        (
            StatusCode::OK,
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    match (method.as_str(), uri.path()) {
        ("POST", "/exports") => (
            StatusCode::ACCEPTED,
            [("location", "/jobs/export"), ("retry-after", "0")],
        )
            .into_response(),
        ("POST", "/imports") => {
            (StatusCode::ACCEPTED, [("location", "/jobs/import")]).into_response()
        }
        ("GET", "/jobs/export") => {
            if *jobs.cancelled.lock().expect("lock") {
                return json(json!({"state": "cancelled"}));
            }
            let mut looks = jobs.looks.lock().expect("lock");
            *looks += 1;
            if *looks < 3 {
                json(json!({"state": "running"}))
            } else {
                json(json!({"state": "done", "rows": 3}))
            }
        }
        ("DELETE", "/jobs/export") => {
            *jobs.cancelled.lock().expect("lock") = true;
            StatusCode::NO_CONTENT.into_response()
        }
        ("GET", "/jobs/import") => (StatusCode::ACCEPTED, [("retry-after", "1")]).into_response(),
        _ => (StatusCode::NOT_FOUND, "no such job").into_response(),
    }
}

/// The job API, and two replicas of ferry serving it, sealing task ids with `keys`.
async fn replicas(keys: [&[u8]; 2]) -> (Arc<Jobs>, [Running; 2]) {
    let (jobs, servers) = servers(keys).await;
    let [first, second] = servers;
    (
        jobs,
        [
            start(first, HttpOptions::default()).await,
            start(second, HttpOptions::default()).await,
        ],
    )
}

/// The job API, and two servers of its tools, sealing task ids with `keys`.
async fn servers(keys: [&[u8]; 2]) -> (Arc<Jobs>, [Server; 2]) {
    servers_of(keys, CURATION, |options| options).await
}

/// [`servers`] of the tools `curation` chooses.
async fn servers_of(
    keys: [&[u8]; 2],
    curation: &str,
    options: impl Fn(ServerOptions) -> ServerOptions,
) -> (Arc<Jobs>, [Server; 2]) {
    let jobs = Arc::new(Jobs::default());
    let api = Arc::clone(&jobs);
    let app = axum::Router::new()
        .fallback(move |method, uri, headers| job_api(Arc::clone(&api), method, uri, headers));
    let address = serve_app(app).await;
    let text = format!("upstream: http://{address}\n{curation}");
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let server = |key: &[u8]| {
        let client = Upstream::with_env(&catalog, |name| {
            (name == "JOBS_KEY").then(|| API_KEY.to_string())
        })
        .expect("upstream client");
        let defaults = ServerOptions {
            confirm_key: ConfirmKey::new(key),
            ..ServerOptions::default()
        };
        Server::new(&catalog, Some(client), options(defaults))
    };
    (jobs, [server(keys[0]), server(keys[1])])
}

/// An rmcp client that declares the Tasks extension.
struct Tasking;

impl rmcp::ClientHandler for Tasking {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            serde_json::from_value(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
                .expect("capabilities"),
            rmcp::model::Implementation::new("tasking", "1"),
        )
    }
}

async fn rmcp_client(url: &str) -> rmcp::service::RunningService<rmcp::RoleClient, Tasking> {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_string());
    Tasking
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover")
}

/// A modern request's body and headers, from a client declaring the Tasks extension.
async fn request(url: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28".to_string()),
        ("mcp-method", method.to_string()),
    ];
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("mcp-name", name.to_string()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    post(url, &body, &headers).await.json()
}

#[tokio::test]
async fn rmcp_follows_a_task_to_the_operations_result() {
    let (jobs, [running, _]) = replicas([SEAL_KEY, SEAL_KEY]).await;
    let client = rmcp_client(&running.url).await;
    let response = client
        .call_tool_once(CallToolRequestParams::new("startExport"))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = response else {
        panic!("a task: {response:?}");
    };
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(jobs.requests(), ["POST /exports"], "nothing polled yet");
    let mut looks = 0;
    let result = loop {
        looks += 1;
        assert!(looks < 20, "the task never ended");
        let got = client
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .expect("tasks/get");
        match got.task.payload {
            rmcp::model::TaskPayload::Working => {
                assert_eq!(got.task.task.task_id, created.task.task_id);
            }
            rmcp::model::TaskPayload::Completed { result } => break result,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(
        result.get("structuredContent"),
        Some(&json!({"state": "done", "rows": 3}))
    );
    assert_ne!(result.get("isError"), Some(&json!(true)));
    assert_eq!(looks, 3, "one look per tasks/get");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_task_made_through_one_replica_is_finished_through_the_other() {
    let (jobs, [first, second]) = replicas([SEAL_KEY, SEAL_KEY]).await;
    let created = request(&first.url, "tools/call", json!({"name": "startExport"})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].clone();
    let mut status = Value::Null;
    for _ in 0..5 {
        let got = request(&second.url, "tasks/get", json!({"taskId": task_id})).await;
        status = got["result"]["status"].clone();
        if status == "completed" {
            assert_eq!(got["result"]["result"]["structuredContent"]["rows"], 3);
            break;
        }
    }
    assert_eq!(status, "completed");
    assert_eq!(jobs.requests().len(), 4, "the call and three looks");
}

#[tokio::test]
async fn a_tampered_or_foreign_task_id_is_refused_and_nothing_is_fetched() {
    let (jobs, [first, other_key]) =
        replicas([SEAL_KEY, b"another key of at least thirty-two bytes"]).await;
    let created = request(&first.url, "tools/call", json!({"name": "startExport"})).await;
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_string();
    let mut tampered = task_id.clone().into_bytes();
    tampered[20] = if tampered[20] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ASCII");
    for (url, id) in [
        (&first.url, tampered.as_str()),
        (&other_key.url, task_id.as_str()),
        (&first.url, "not-a-task"),
    ] {
        let refused = request(url, "tasks/get", json!({"taskId": id})).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("unknown task")),
            "{refused}"
        );
    }
    assert_eq!(jobs.requests(), ["POST /exports"], "nothing was fetched");
}

#[tokio::test]
async fn tasks_cancel_sends_the_apis_cancel_and_says_when_there_is_none() {
    let (jobs, [running, _]) = replicas([SEAL_KEY, SEAL_KEY]).await;
    let created = request(&running.url, "tools/call", json!({"name": "startExport"})).await;
    let task_id = created["result"]["taskId"].clone();
    let ack = request(&running.url, "tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let got = request(&running.url, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(jobs.requests().contains(&"DELETE /jobs/export".to_string()));

    let created = request(&running.url, "tools/call", json!({"name": "startImport"})).await;
    let task_id = created["result"]["taskId"].clone();
    let before = jobs.requests().len();
    let refused = request(&running.url, "tasks/cancel", json!({"taskId": task_id})).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("cannot be cancelled")),
        "{refused}"
    );
    assert_eq!(jobs.requests().len(), before, "nothing sent");
    let got = request(&running.url, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(
        got["result"]["pollIntervalMs"], 1000,
        "the API's Retry-After"
    );
}

/// The job API served over HTTP with `startExport` limited to `rate`, and the id of the task
/// a first call of it made.
async fn limited_task(
    rate: &str,
    options: impl Fn(ServerOptions) -> ServerOptions,
) -> (Arc<Jobs>, Running, Value) {
    let curation = CURATION.replace(
        "      cancel: DELETE\n",
        &format!("      cancel: DELETE\n    rate_limit: {rate}\n"),
    );
    assert_ne!(curation, CURATION);
    let (jobs, [server, _]) = servers_of([SEAL_KEY, SEAL_KEY], &curation, options).await;
    let running = start(server, HttpOptions::default()).await;
    let created = request(&running.url, "tools/call", json!({"name": "startExport"})).await;
    let task_id = created["result"]["taskId"].clone();
    assert!(task_id.is_string(), "{created}");
    (jobs, running, task_id)
}

#[tokio::test]
async fn a_look_over_the_tools_rate_limit_asks_the_api_nothing() {
    // The call and one look fit in the budget; the next looks do not.
    let dir = std::env::temp_dir().join(format!(
        "ferry-tasks-limited-{}-{}",
        std::process::id(),
        task_nanos()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let log = dir.join("audit.jsonl");
    let audit = Audit::open(AuditTarget::File(log.clone()), Default::default()).expect("audit");
    let observer = Observer::new(Some(audit), Some(Metrics::new()));
    let (jobs, running, task_id) = limited_task("2/min", |options| ServerOptions {
        observer: Some(observer.clone()),
        ..options
    })
    .await;
    let looked = request(&running.url, "tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(looked["result"]["status"], "working", "{looked}");
    assert_eq!(jobs.requests(), ["POST /exports", "GET /jobs/export"]);

    let limited = request(&running.url, "tasks/get", json!({"taskId": task_id})).await;
    let task = &limited["result"];
    assert_eq!(task["status"], "working", "{limited}");
    assert_eq!(task["taskId"], task_id);
    let told = task["statusMessage"].as_str().expect("a status message");
    assert!(
        told.starts_with("its status was not looked at: rate limit reached")
            && told.contains("2/min"),
        "{told}"
    );
    let wait = task["pollIntervalMs"].as_u64().expect("a poll interval");
    assert!((1_000..=60_000).contains(&wait), "{wait}");

    let refused = request(&running.url, "tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("not asked to cancel")),
        "{refused}"
    );
    assert_eq!(
        jobs.requests(),
        ["POST /exports", "GET /jobs/export"],
        "nothing more reached the API"
    );
    assert_eq!(
        refused["error"]["data"]["dev.ferry/rateLimit"]["limit"], "2/min",
        "{refused}"
    );

    // Each refused look is recorded as a refusal of its method, not as a call of its tool.
    let lines = crate::support::audit_lines(&observer, &log);
    let recorded: Vec<Value> = lines
        .iter()
        .map(|line| {
            json!([
                line["method"],
                line["tool"],
                line["outcome"],
                line["reason"]
            ])
        })
        .collect();
    assert_eq!(
        recorded,
        [
            json!([null, "startExport", "ok", null]),
            json!(["tasks/get", "startExport", "refused", "rate_limit"]),
            json!(["tasks/cancel", "startExport", "refused", "rate_limit"]),
        ],
        "{lines:?}"
    );
    let metrics = observer.metrics().expect("the metrics").render();
    let count = |series: &str| {
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(series))
            .map(str::trim)
            .unwrap_or("none")
            .to_string()
    };
    assert_eq!(
        count("ferry_refused_total{reason=\"rate_limit\"}"),
        "2",
        "{metrics}"
    );
    assert!(
        !metrics.contains("outcome=\"refused\""),
        "a look is no call of its tool: {metrics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// With the budgets replicas share unreadable (Redis gone, `--state-on-failure closed`), a
/// look is not made either: `tasks/get` says why and to ask again in a second,
/// `tasks/cancel` answers the server's error, not the caller's, and each is counted.
#[tokio::test]
async fn a_look_whose_budget_cannot_be_read_asks_the_api_nothing() {
    let Some(mut redis) = crate::state::Redis::start("task-looks", &[]) else {
        return;
    };
    let shared = ferry::state::connect(crate::state::options(&redis.url()))
        .await
        .expect("connects");
    let metrics = Metrics::new();
    let observer = Observer::new(None, Some(metrics.clone()));
    let (jobs, running, task_id) = limited_task("5/min", |options| ServerOptions {
        limiter: Arc::new(Limiter::shared_by(shared.clone())),
        observer: Some(observer.clone()),
        ..options
    })
    .await;

    redis.kill();
    let looked = request(&running.url, "tasks/get", json!({"taskId": task_id})).await;
    let task = &looked["result"];
    assert_eq!(task["status"], "working", "{looked}");
    assert!(
        task["statusMessage"].as_str().is_some_and(
            |told| told.starts_with("its status was not looked at: rate limit not checked")
        ),
        "{looked}"
    );
    assert_eq!(task["pollIntervalMs"], 1000, "{looked}");
    let refused = request(&running.url, "tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert_eq!(
        refused["error"]["data"]["dev.ferry/rateLimit"]["unchecked"], true,
        "{refused}"
    );
    assert_eq!(
        jobs.requests(),
        ["POST /exports"],
        "nothing more reached the API"
    );
    let rendered = metrics.render();
    assert!(
        rendered.lines().any(
            |line| line == "ferry_state_failures_total{check=\"rate_limit\",rule=\"closed\"} 2"
        ),
        "{rendered}"
    );
}

/// `ferry serve` itself, with the key it generated at start-up: a task made before a
/// reload (SIGHUP) is followed to its end after it.
#[tokio::test]
async fn a_task_id_survives_a_reload() {
    let jobs = Arc::new(Jobs::default());
    let api = Arc::clone(&jobs);
    let app = axum::Router::new()
        .fallback(move |method, uri, headers| job_api(Arc::clone(&api), method, uri, headers));
    let address = serve_app(app).await;
    let dir = std::env::temp_dir().join(format!(
        "ferry-tasks-reload-{}-{}",
        std::process::id(),
        task_nanos()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    std::fs::write(dir.join("openapi.yaml"), DOCUMENT).expect("document");
    let curation =
        |curation: &str| format!("openapi: openapi.yaml\nupstream: http://{address}\n{curation}");
    let path = dir.join("ferry.yaml");
    std::fs::write(&path, curation(CURATION)).expect("curation");
    let path_text = path.to_string_lossy().to_string();
    let ferry = ServeProcess::start(
        &["serve", "--listen", "127.0.0.1:0", "--config", &path_text],
        &[("JOBS_KEY", API_KEY)],
    )
    .await
    .expect("ferry serves");
    let created = request(&ferry.url, "tools/call", json!({"name": "startExport"})).await;
    let task_id = created["result"]["taskId"].clone();
    assert!(task_id.is_string(), "{created}");

    // The reload is seen done when the tool it renames is listed.
    let renamed = CURATION.replace("  startImport:\n", "  startImport:\n    name: importJobs\n");
    std::fs::write(&path, curation(&renamed)).expect("curation");
    let hangup = std::process::Command::new("kill")
        .args(["-HUP", &ferry.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(hangup.success());
    let mut reloaded = false;
    for _ in 0..200 {
        let listed = post_modern(&ferry.url, "tools/list", json!({}))
            .await
            .json();
        if listed.to_string().contains("importJobs") {
            reloaded = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(reloaded, "the reload was never served");
    let mut status = Value::Null;
    for _ in 0..5 {
        let got = request(&ferry.url, "tasks/get", json!({"taskId": task_id})).await;
        status = got["result"]["status"].clone();
        if status == "completed" {
            break;
        }
    }
    assert_eq!(status, "completed");
    let _ = std::fs::remove_dir_all(dir);
}

fn task_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
}

/// Over stdio, rmcp's client follows a task as it does over HTTP.
#[tokio::test]
async fn rmcp_follows_a_task_over_stdio() {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let (_jobs, [server, _]) = servers([SEAL_KEY, SEAL_KEY]).await;
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(ferry::transport::stdio::serve(
        Arc::new(server),
        tokio::io::BufReader::new(server_read),
        server_write,
        1 << 20,
    ));
    let client = Tasking
        .serve_with_lifecycle(
            tokio::io::split(client_side),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover over stdio");
    let response = client
        .call_tool_once(CallToolRequestParams::new("startExport"))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = response else {
        panic!("a task: {response:?}");
    };
    let mut ended = None;
    for _ in 0..20 {
        let got = client
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .expect("tasks/get");
        if let rmcp::model::TaskPayload::Completed { result } = got.task.payload {
            ended = Some(result);
            break;
        }
    }
    let result = ended.expect("the task ended");
    assert_eq!(
        result.get("structuredContent"),
        Some(&json!({"state": "done", "rows": 3}))
    );
    client.cancel().await.expect("close");
    let _ = serving.await;
}
