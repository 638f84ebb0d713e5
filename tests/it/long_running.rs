//! Long-running operations (issue 28) against a real job API on loopback: a call that gets
//! `202 Accepted` polls the status location with the API's own credential, honouring
//! `Retry-After`, until the operation ends, and answers its final result; a failure is an
//! error result holding the API's words; a job that never ends is said to be still running,
//! never to have failed; a status location on another origin is never fetched.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use serde_json::{Value, json};

use crate::support::{Running, post_modern, serve_app, start};

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
  /failing:
    post:
      operationId: startFailing
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /forever:
    post:
      operationId: startForever
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /away:
    post:
      operationId: startAway
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /later:
    post:
      operationId: startLater
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
  /builds:
    post:
      operationId: startBuild
      parameters:
        - {name: outcome, in: query, schema: {type: string}}
      responses:
        "202": {description: accepted}
"#;

const CURATION: &str = r#"
upstream_auth: {api_key: {name: X-Key, env: JOBS_KEY}}
tools:
  startExport: {long_running: {interval_ms: 10}}
  startFailing: {}
  startForever: {timeout_ms: 400}
  startAway: {}
  startLater: {long_running: true}
  startBuild:
    # The 202's body is projected away: its status link is read from the body as sent.
    fields: [artifact]
    long_running:
      status: {body: /links/status}
      state: /state
      working: [queued, running]
      completed: [done]
      failed: [error]
      cancelled: [cancelled]
      result: {body: /links/result}
      interval_ms: 10
"#;

const KEY: &str = "jobs-key-0123456789";

/// What the job API saw: every request, as `METHOD path`, and the polls of each job.
#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<String>>,
    polls: AtomicUsize,
}

/// The job API: every request needs ferry's key; each job's status is polled a few times
/// before it ends as its kind says.
async fn job_api(
    seen: Arc<Seen>,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path().to_string();
    seen.requests
        .lock()
        .expect("lock")
        .push(format!("{method} {path}"));
    if headers.get("x-key").and_then(|v| v.to_str().ok()) != Some(KEY) {
        return (StatusCode::UNAUTHORIZED, "no key").into_response();
    }
    let json = |status: StatusCode, body: Value| {
        (
            status,
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    let accepted = |location: &str| {
        (
            StatusCode::ACCEPTED,
            [("location", location), ("retry-after", "0")],
        )
            .into_response()
    };
    match (method.as_str(), path.as_str()) {
        ("POST", "/exports") => accepted("/jobs/export"),
        ("POST", "/failing") => accepted("/jobs/failing"),
        ("POST", "/forever") => accepted("/jobs/forever"),
        ("POST", "/away") => accepted("http://localhost:9/jobs/away"),
        ("POST", "/later") => (
            StatusCode::ACCEPTED,
            [("location", "/jobs/later"), ("retry-after", "3600")],
        )
            .into_response(),
        ("POST", "/builds") => {
            let outcome = uri
                .query()
                .unwrap_or("outcome=done")
                .replace("outcome=", "");
            json(
                StatusCode::ACCEPTED,
                json!({"links": {"status": format!("/builds/{outcome}")}}),
            )
        }
        ("GET", "/jobs/export") => {
            if seen.polls.fetch_add(1, Ordering::SeqCst) < 2 {
                (StatusCode::ACCEPTED, [("retry-after", "0")]).into_response()
            } else {
                (StatusCode::SEE_OTHER, [("location", "/results/export")]).into_response()
            }
        }
        ("GET", "/results/export") => {
            json(StatusCode::OK, json!({"rows": 3, "file": "export.csv"}))
        }
        ("GET", "/jobs/failing") => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [("content-type", "application/problem+json")],
            r#"{"type":"https://jobs.example/disk-full","title":"The disk is full","status":500}"#,
        )
            .into_response(),
        ("GET", "/jobs/forever") => (StatusCode::ACCEPTED, [("retry-after", "0")]).into_response(),
        ("GET", "/builds/done") | ("GET", "/builds/error") => {
            let ended = path.trim_start_matches("/builds/");
            let state = if seen.polls.fetch_add(1, Ordering::SeqCst) < 1 {
                "running"
            } else {
                ended
            };
            json(
                StatusCode::OK,
                json!({
                    "state": state,
                    "links": {"result": "/builds/output"},
                    "error": {"title": "the tests did not pass", "detail": "3 of 40 failed"},
                }),
            )
        }
        ("GET", "/builds/output") => json(StatusCode::OK, json!({"artifact": "app.tar"})),
        _ => (StatusCode::NOT_FOUND, "no such job").into_response(),
    }
}

/// ferry serving the job API's tools over HTTP, and what the API saw.
async fn served() -> (Running, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let api_seen = Arc::clone(&seen);
    let app = axum::Router::new()
        .fallback(move |method, uri, headers| job_api(Arc::clone(&api_seen), method, uri, headers));
    let address = serve_app(app).await;
    let text = format!("upstream: http://{address}\n{CURATION}");
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    let inferred: Vec<String> = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Some("long-running-inferred"))
        .flat_map(|diagnostic| diagnostic.operations.clone())
        .collect();
    assert_eq!(
        inferred,
        ["POST /failing", "POST /forever", "POST /away"],
        "{diagnostics:?}"
    );
    let client = Upstream::with_env(&catalog, |name| {
        (name == "JOBS_KEY").then(|| KEY.to_string())
    })
    .expect("upstream client");
    let server = Server::new(&catalog, Some(client), ServerOptions::default());
    (start(server, HttpOptions::default()).await, seen)
}

async fn call(running: &Running, tool: &str, arguments: Value) -> Value {
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    answer.json()["result"].clone()
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_202_is_polled_with_the_apis_key_to_a_redirect_and_the_result_fetched() {
    let (running, seen) = served().await;
    let result = call(&running, "startExport", json!({})).await;
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({"rows": 3, "file": "export.csv"})
    );
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["operation"],
        json!({"status": "/jobs/export", "state": "completed"})
    );
    let requests = seen.requests.lock().expect("lock").clone();
    assert_eq!(
        requests,
        [
            "POST /exports",
            "GET /jobs/export",
            "GET /jobs/export",
            "GET /jobs/export",
            "GET /results/export"
        ],
        "every poll carried the key (a poll without it is refused and would not end)"
    );
}

#[tokio::test]
async fn a_failed_operation_is_an_error_result_with_its_problem_details() {
    let (running, _) = served().await;
    let result = call(&running, "startFailing", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    let texts = texts(&result);
    assert!(
        texts[0].starts_with("the operation failed, as its status at /jobs/failing says"),
        "{texts:?}"
    );
    let resource = result["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|block| block["type"] == "resource"))
        .expect("the problem as a resource");
    assert_eq!(resource["resource"]["mimeType"], "application/problem+json");
    let problem: Value =
        serde_json::from_str(resource["resource"]["text"].as_str().unwrap_or_default())
            .expect("the problem as sent");
    assert_eq!(problem["title"], "The disk is full");
    assert_eq!(result["_meta"]["dev.ferry/http"]["status"], 500);
}

#[tokio::test]
async fn a_status_body_says_how_a_build_goes_and_where_its_result_is() {
    let (running, seen) = served().await;
    let result = call(&running, "startBuild", json!({"outcome": "done"})).await;
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"], json!({"artifact": "app.tar"}));
    assert_eq!(seen.polls.load(Ordering::SeqCst), 2, "running, then done");

    let (running, _) = served().await;
    let result = call(&running, "startBuild", json!({"outcome": "error"})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        texts(&result)[0].starts_with("the operation failed"),
        "{result}"
    );
    assert_eq!(
        result["structuredContent"]["error"]["detail"], "3 of 40 failed",
        "the API's words stay data"
    );
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["operation"]["state"],
        "failed"
    );
}

#[tokio::test]
async fn a_job_that_never_ends_is_said_to_be_still_running_past_the_timeout() {
    let (running, seen) = served().await;
    let result = call(&running, "startForever", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = texts(&result).join("\n");
    assert!(
        text.contains("accepted the operation and it is still running"),
        "{text}"
    );
    assert!(text.contains("400 ms"), "{text}");
    assert!(text.contains("/jobs/forever"), "{text}");
    assert!(
        text.contains("Calling this tool again starts another operation"),
        "{text}"
    );
    assert!(
        !text.contains("failed"),
        "an accepted operation never failed: {text}"
    );
    let polls = seen
        .requests
        .lock()
        .expect("lock")
        .iter()
        .filter(|request| *request == "GET /jobs/forever")
        .count();
    assert!(polls >= 1, "it was polled");
}

#[tokio::test]
async fn a_status_location_on_another_origin_is_never_fetched() {
    let (running, seen) = served().await;
    let result = call(&running, "startAway", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = texts(&result).join("\n");
    assert!(text.contains("http://localhost:9/jobs/away"), "{text}");
    assert!(text.contains("another origin"), "{text}");
    assert_eq!(
        seen.requests.lock().expect("lock").clone(),
        ["POST /away"],
        "nothing but the call itself reached the API"
    );
}

#[tokio::test]
async fn a_retry_after_past_the_timeout_is_not_waited_for() {
    let (running, seen) = served().await;
    let result = call(&running, "startLater", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = texts(&result).join("\n");
    assert!(text.contains("still running"), "{text}");
    assert!(text.contains("/jobs/later"), "{text}");
    assert_eq!(
        seen.requests.lock().expect("lock").clone(),
        ["POST /later"],
        "an hour's wait ends past the 30 s timeout: not begun, nothing polled"
    );
}
