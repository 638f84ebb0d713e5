//! Paging as an agent does it (issue 22): a scripted loop that sees only what a model sees,
//! each result's `content` text, calls a tool, reads from the text whether there is a next
//! page and with which arguments, and calls again until there is none. Against two real
//! upstreams on loopback: one that pages as GitHub does (a `Link` header naming `next`
//! before `last`, a `page` query parameter the tool also takes), one that names a cursor in
//! its body.

use std::path::PathBuf;

use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use serde_json::{Value, json};

use crate::support::{Running, post_modern, serve_app, start};

const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Issues, version: "1"}
paths:
  /repos/{owner}/{repo}/issues:
    get:
      operationId: issues/list-for-repo
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
        - {name: state, in: query, schema: {type: string, enum: [open, closed, all]}}
        - {name: per_page, in: query, schema: {type: integer}}
        - {name: page, in: query, schema: {type: integer}}
      responses:
        "200": {description: the issues}
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: after, in: query, schema: {type: string}}
        - {name: limit, in: query, schema: {type: integer}}
      responses:
        "200": {description: a page of items}
"#;

const CURATION: &str = r#"
tools:
  issues/list-for-repo:
    name: list_issues
    pagination: {next: link, size_argument: per_page, size: 2}
  listItems:
    pagination: {next: /next, cursor_argument: after, size_argument: limit, size: 2}
"#;

/// Six issues, two a page, with GitHub's `Link` header: `next` first, then `last` (and
/// `prev`, `first` past the first page), every link carrying the query as GitHub writes it.
fn issues_page(base: &str, query: &str) -> axum::response::Response {
    let page: usize = query
        .split('&')
        .find_map(|item| item.strip_prefix("page="))
        .and_then(|page| page.parse().ok())
        .unwrap_or(1);
    let state = query
        .split('&')
        .find_map(|item| item.strip_prefix("state="))
        .unwrap_or("open");
    let issues: Vec<Value> = (1..=2)
        .map(|n| json!({"number": (page - 1) * 2 + n, "state": state}))
        .collect();
    let link = |page: usize, rel: &str| {
        format!("<{base}/repos/o/r/issues?state={state}&per_page=2&page={page}>; rel=\"{rel}\"")
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
    }
    if page < 3 {
        links.push(link(page + 1, "next"));
        links.push(link(3, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
    }
    let mut response = axum::response::IntoResponse::into_response((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        Value::from(issues).to_string(),
    ));
    if !links.is_empty() {
        response.headers_mut().insert(
            axum::http::header::LINK,
            links.join(", ").parse().expect("a header value"),
        );
    }
    response
}

/// Five items, two a page, the next page's cursor in the body's `next`.
fn items_page(query: &str) -> Value {
    let after: usize = query
        .split('&')
        .find_map(|item| item.strip_prefix("after=c"))
        .and_then(|after| after.parse().ok())
        .unwrap_or(0);
    let items: Vec<Value> = (after + 1..=(after + 2).min(5))
        .map(|id| json!({"id": id}))
        .collect();
    let next = (after + 2 < 5).then(|| format!("c{}", after + 2));
    json!({"data": items, "next": next})
}

/// The upstream for both tools, and ferry serving them over HTTP.
async fn served() -> Running {
    let base = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let link_base = std::sync::Arc::clone(&base);
    let app = axum::Router::new()
        .route(
            "/repos/o/r/issues",
            axum::routing::get(move |uri: axum::http::Uri| {
                let base = link_base.get().cloned().unwrap_or_default();
                async move { issues_page(&base, uri.query().unwrap_or("")) }
            }),
        )
        .route(
            "/items",
            axum::routing::get(|uri: axum::http::Uri| async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    items_page(uri.query().unwrap_or("")).to_string(),
                )
            }),
        );
    let address = serve_app(app).await;
    let upstream = format!("http://{address}");
    base.set(upstream.clone()).expect("set once");
    let text = format!("upstream: {upstream}\n{CURATION}");
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", PathBuf::new()).expect("curation parses");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("document is YAML");
    let document = Document::from_value(value).expect("document is OpenAPI");
    let (catalog, diagnostics) = ferry::catalog::compile_chosen(&document, &curation);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let client = Upstream::new(&catalog).expect("upstream client");
    let server = Server::new(&catalog, Some(client), ServerOptions::default());
    start(server, HttpOptions::default()).await
}

/// What the agent reads of a result: its text blocks, nothing of `_meta` or
/// `structuredContent`.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The arguments a text asks the agent to call `tool` again with, as a model would read them:
/// the JSON object after "call <tool> again with these arguments:".
fn asked_again(texts: &[String], tool: &str) -> Option<Value> {
    let said = format!("call {tool} again with these arguments: ");
    texts.iter().find_map(|text| {
        let at = text.find(&said)? + said.len();
        serde_json::Deserializer::from_str(&text[at..])
            .into_iter::<Value>()
            .next()?
            .ok()
    })
}

/// Calls `tool` with `arguments`, then again as each result's text says, until it says no
/// more; the JSON value of each page's first text block.
async fn page_through(running: &Running, tool: &str, arguments: Value) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut arguments = Some(arguments);
    while let Some(asked) = arguments.take() {
        assert!(pages.len() < 10, "the agent never reached the last page");
        let answer = post_modern(
            &running.url,
            "tools/call",
            json!({"name": tool, "arguments": asked}),
        )
        .await;
        let result = &answer.json()["result"];
        assert_ne!(result["isError"], true, "{result}");
        let texts = texts(result);
        pages.push(serde_json::from_str(&texts[0]).expect("the page as JSON text"));
        arguments = asked_again(&texts, tool);
    }
    pages
}

#[tokio::test]
async fn an_agent_reading_only_the_text_pages_through_a_link_api_to_its_last_page() {
    let running = served().await;
    let pages = page_through(
        &running,
        "list_issues",
        json!({"owner": "o", "repo": "r", "state": "closed"}),
    )
    .await;
    let numbers: Vec<u64> = pages
        .iter()
        .flat_map(|page| page.as_array().cloned().unwrap_or_default())
        .map(|issue| {
            assert_eq!(issue["state"], "closed", "the filter holds on every page");
            issue["number"].as_u64().expect("a number")
        })
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
    assert_eq!(pages.len(), 3);
}

#[tokio::test]
async fn an_agent_reading_only_the_text_pages_through_a_body_cursor_to_its_last_page() {
    let running = served().await;
    let pages = page_through(&running, "listItems", json!({})).await;
    let ids: Vec<u64> = pages
        .iter()
        .flat_map(|page| page["data"].as_array().cloned().unwrap_or_default())
        .filter_map(|item| item["id"].as_u64())
        .collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(pages.len(), 3);
}

/// GitHub's `page` argument stays beside `cursor`: given both, and saying otherwise, the call
/// is an argument error naming both; nothing silently wins.
#[tokio::test]
async fn a_cursor_and_a_page_that_disagree_are_an_argument_error_naming_both() {
    let running = served().await;
    let answer = post_modern(
        &running.url,
        "tools/call",
        json!({"name": "list_issues", "arguments": {
            "owner": "o", "repo": "r", "page": 1,
            "cursor": "state=open&per_page=2&page=2",
        }}),
    )
    .await;
    let result = &answer.json()["result"];
    assert_eq!(result["isError"], true, "{result}");
    let text = texts(result).join("\n");
    assert!(
        text.contains("\"page\"") && text.contains("\"cursor\""),
        "{text}"
    );
}
