//! Streamed answers (issue 28) from a real streaming API on loopback: server-sent events and
//! JSON lines are read item by item; a request with a progress token is answered as an SSE
//! stream of `notifications/progress` and then its result; the items are the result, each
//! checked against the document's `itemSchema`; a stream that stalls past the tool's timeout,
//! one over the size cap and one that breaks off end the call with what came, and say so.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use serde_json::{Value, json};

use crate::support::{Running, assert_schema, meta, post, post_modern, serve_app, start};

const DOCUMENT: &str = r#"
openapi: 3.2.0
info: {title: Streams, version: "1"}
paths:
  /events:
    get:
      operationId: watchEvents
      responses:
        "200":
          description: events
          content:
            text/event-stream:
              itemSchema:
                type: object
                required: [data]
                properties:
                  data: {type: string}
                  event: {type: string}
                  id: {type: string}
                  retry: {type: integer}
  /lines:
    get:
      operationId: listLines
      responses:
        "200":
          description: lines
          content:
            application/jsonl:
              itemSchema:
                type: object
                required: [n]
                properties:
                  n: {type: integer}
                  secret: {type: string}
  /stall:
    get:
      operationId: stallLines
      responses:
        "200":
          description: lines
          content:
            application/x-ndjson: {}
  /flood:
    get:
      operationId: floodLines
      responses:
        "200":
          description: lines
          content:
            application/x-ndjson: {}
  /broken:
    get:
      operationId: breakLines
      responses:
        "200":
          description: lines
          content:
            application/x-ndjson: {}
"#;

const CURATION: &str = r#"
upstream_auth: {api_key: {name: X-Key, env: STREAM_KEY}}
tools:
  watchEvents: {}
  listLines: {}
  stallLines: {timeout_ms: 600}
  floodLines: {max_response_bytes: 2000}
  breakLines: {}
"#;

const KEY: &str = "stream-key-0123456789";

/// A body that sends `chunks` one after the other, `gap` apart, and then `end`s: stays
/// open for good, or fails.
fn paced(chunks: Vec<String>, gap: Duration, end: End) -> Body {
    let stream = futures_util::stream::unfold(
        (chunks.into_iter(), false),
        move |(mut chunks, started)| async move {
            if started {
                tokio::time::sleep(gap).await;
            }
            match chunks.next() {
                Some(chunk) => Some((Ok::<_, std::io::Error>(Bytes::from(chunk)), (chunks, true))),
                None => match end {
                    End::Close => None,
                    End::Hang => {
                        std::future::pending::<()>().await;
                        None
                    }
                    End::Fail => Some((Err(std::io::Error::other("broken")), (chunks, true))),
                },
            }
        },
    );
    Body::from_stream(stream)
}

#[derive(Clone, Copy)]
enum End {
    Close,
    Hang,
    Fail,
}

fn streamed(media_type: &'static str, body: Body) -> Response {
    (StatusCode::OK, [("content-type", media_type)], body).into_response()
}

async fn stream_api(uri: Uri, headers: axum::http::HeaderMap) -> Response {
    if headers.get("x-key").and_then(|value| value.to_str().ok()) != Some(KEY) {
        return (StatusCode::UNAUTHORIZED, "no key").into_response();
    }
    let gap = Duration::from_millis(40);
    match uri.path() {
        "/events" => streamed(
            "text/event-stream",
            paced(
                vec![
                    ": a comment, not an item\n\n".into(),
                    "event: tick\nid: 1\ndata: {\"n\":1}\n\n".into(),
                    "retry: 2000\ndata: two\ndata: lines\n\n".into(),
                    "event: tick\r\nid: 3\r\ndata: {\"n\":3}\r\n\r\n".into(),
                ],
                gap,
                End::Close,
            ),
        ),
        "/lines" => streamed(
            "application/jsonl",
            paced(
                vec![
                    "{\"n\":1}\n".into(),
                    format!("{{\"n\":2,\"secret\":\"{KEY}\"}}\n"),
                    "{\"n\":\"three\"}\nnot json\n".into(),
                ],
                gap,
                End::Close,
            ),
        ),
        "/stall" => streamed(
            "application/x-ndjson",
            paced(
                vec!["{\"n\":1}\n".into(), "{\"n\":2}\n{\"n\":".into()],
                gap,
                End::Hang,
            ),
        ),
        "/flood" => {
            let lines: Vec<String> = (0..400).map(|n| format!("{{\"n\":{n}}}\n")).collect();
            streamed(
                "application/x-ndjson",
                Body::from_stream(futures_util::stream::iter(
                    lines
                        .into_iter()
                        .map(|line| Ok::<_, Infallible>(Bytes::from(line))),
                )),
            )
        }
        "/broken" => streamed(
            "application/x-ndjson",
            paced(
                vec!["{\"n\":1}\n".into(), "{\"n\":2}\n".into()],
                gap,
                End::Fail,
            ),
        ),
        _ => (StatusCode::NOT_FOUND, "no such stream").into_response(),
    }
}

/// ferry serving the streaming API's tools over HTTP, and what compiling them said.
async fn served() -> (Running, Vec<ferry::diagnostic::Diagnostic>) {
    served_with(HttpOptions::default()).await
}

/// [`served`] with `options`.
async fn served_with(options: HttpOptions) -> (Running, Vec<ferry::diagnostic::Diagnostic>) {
    let app = axum::Router::new().fallback(stream_api);
    let address = serve_app(app).await;
    let text = format!("upstream: http://{address}\n{CURATION}");
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    let client = Upstream::with_env(&catalog, |name| {
        (name == "STREAM_KEY").then(|| KEY.to_string())
    })
    .expect("upstream client");
    let server = Server::new(&catalog, Some(client), ServerOptions::default());
    (start(server, options).await, diagnostics)
}

/// A modern `tools/call` of `tool` asking for progress, as a client that takes SSE answers.
async fn call_with_progress(running: &Running, tool: &str, token: Value) -> crate::support::Answer {
    let mut request_meta = meta();
    request_meta["progressToken"] = token;
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": request_meta},
    })
    .to_string();
    post(
        &running.url,
        &body,
        &[
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", ferry::mcp::MODERN_VERSION),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ],
    )
    .await
}

/// The JSON-RPC messages of an SSE answer, in order.
fn messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .collect();
            (!data.is_empty())
                .then(|| serde_json::from_str(&data.join("\n")).expect("data is JSON"))
        })
        .collect()
}

async fn call(running: &Running, tool: &str) -> Value {
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
    .await;
    answer.json()["result"].clone()
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn events_are_items_and_a_progress_token_gets_them_told_as_they_come() {
    let (running, diagnostics) = served().await;
    // A 2xx stream's item schema is checked, so nothing warns it is not; no output schema.
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code != Some("item-schema-not-validated")),
        "{diagnostics:?}"
    );
    let answer = call_with_progress(&running, "watchEvents", json!("watch-1")).await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.headers["content-type"], "text/event-stream",
        "{}",
        answer.text
    );
    let messages = messages(&answer.text);
    let (result, notes) = messages.split_last().expect("a final message");
    assert!(!notes.is_empty(), "{}", answer.text);
    let mut last = 0;
    for note in notes {
        assert_schema("2026-07-28", "ProgressNotification", note);
        assert_eq!(note["params"]["progressToken"], "watch-1");
        let progress = note["params"]["progress"].as_u64().expect("progress");
        assert!(progress > last, "progress must grow: {notes:?}");
        last = progress;
        assert_eq!(note["params"]["total"], 1_048_576);
    }
    assert_eq!(result["id"], 7);
    assert_schema("2026-07-28", "CallToolResult", &result["result"]);
    let result = &result["result"];
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"],
        json!([
            {"event": "tick", "id": "1", "data": "{\"n\":1}"},
            {"retry": 2000, "data": "two\nlines"},
            {"event": "tick", "id": "3", "data": "{\"n\":3}"},
        ])
    );
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["stream"],
        json!({"items": 3})
    );
    running.shutdown().await;
}

#[tokio::test]
async fn without_a_progress_token_the_same_items_come_as_one_json_answer() {
    let (running, _) = served().await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "watchEvents", "arguments": {}}),
    )
    .await;
    assert!(
        answer.headers["content-type"]
            .to_str()
            .expect("text")
            .starts_with("application/json"),
        "{answer:?}"
    );
    assert_eq!(answer.json()["result"]["structuredContent"][2]["id"], "3");
    running.shutdown().await;
}

#[tokio::test]
async fn json_lines_are_checked_against_the_item_schema_and_redacted() {
    let (running, _) = served().await;
    let result = call(&running, "listLines").await;
    assert_ne!(result["isError"], true, "{result}");
    let items = &result["structuredContent"];
    assert_eq!(items[0], json!({"n": 1}));
    // ferry's own key, echoed by the API, never reaches a result.
    assert!(!result.to_string().contains(KEY), "{result}");
    assert_eq!(items[2], json!({"n": "three"}));
    assert_eq!(items[3], json!("not json"));
    let said = texts(&result).join("\n");
    assert!(
        said.contains("item 3 (counting from 0) is not JSON"),
        "{said}"
    );
    assert!(
        said.contains("item 2 does not match the item schema the API documents"),
        "{said}"
    );
    assert!(said.contains("item 3 does not match"), "{said}");
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["stream"],
        json!({"items": 4, "notJson": [3], "mismatched": [2, 3]})
    );
    running.shutdown().await;
}

/// A stream that falls silent leaves the progress answer silent too, once its last count
/// is told: keep-alive comments keep a proxy between ferry and the client from closing it,
/// until the answer ends it.
#[tokio::test]
async fn a_silent_stream_keeps_its_progress_answer_alive_until_it_ends() {
    let (running, _) = served_with(HttpOptions {
        keep_alive: Duration::from_millis(50),
        ..HttpOptions::default()
    })
    .await;
    let answer = call_with_progress(&running, "stallLines", json!(1)).await;
    assert_eq!(
        answer.headers["content-type"], "text/event-stream",
        "{}",
        answer.text
    );
    let Some((told, _)) = answer.text.split_once(": keep-alive\n\n") else {
        panic!("no keep-alive comment: {}", answer.text);
    };
    assert!(told.contains("notifications/progress"), "{}", answer.text);
    let messages = messages(&answer.text);
    // The second item came too soon after the first to be told then; it is told once its
    // time comes, while the stream is silent, not only with the answer.
    let (answer_message, notes) = messages.split_last().expect("the answer");
    assert_eq!(
        notes.last().expect("a notification")["params"]["message"],
        "2 items so far",
        "{}",
        answer.text
    );
    let result = &answer_message["result"];
    assert_eq!(
        result["structuredContent"],
        json!([{"n": 1}, {"n": 2}]),
        "{}",
        answer.text
    );
    running.shutdown().await;
}

#[tokio::test]
async fn a_stream_that_stalls_ends_the_call_with_what_came_and_says_so() {
    let (running, _) = served().await;
    let result = call(&running, "stallLines").await;
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"], json!([{"n": 1}, {"n": 2}]));
    let said = texts(&result).join("\n");
    assert!(
        said.contains("still coming when this tool's timeout (600 ms) ran out"),
        "{said}"
    );
    assert!(
        said.contains("stopped inside an item: its 5 bytes are left out"),
        "{said}"
    );
    assert_eq!(
        result["_meta"]["dev.ferry/result"]["stream"],
        json!({"items": 2, "stopped": "stalled", "partialBytes": 5})
    );
    running.shutdown().await;
}

#[tokio::test]
async fn a_stream_over_the_size_cap_is_cut_and_one_that_breaks_off_keeps_what_came() {
    let (running, _) = served().await;
    let result = call(&running, "floodLines").await;
    assert_ne!(result["isError"], true, "{result}");
    let items = result["structuredContent"].as_array().expect("items");
    assert!(!items.is_empty() && items.len() < 400, "{}", items.len());
    for (n, item) in items.iter().enumerate() {
        assert_eq!(item, &json!({"n": n}));
    }
    let said = texts(&result).join("\n");
    assert!(said.contains("the stream was cut at 2000 bytes"), "{said}");
    assert_eq!(result["_meta"]["dev.ferry/result"]["truncated"], true);

    let result = call(&running, "breakLines").await;
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"], json!([{"n": 1}, {"n": 2}]));
    let said = texts(&result).join("\n");
    assert!(
        said.contains("the connection failed in the middle of the stream"),
        "{said}"
    );
    running.shutdown().await;
}
