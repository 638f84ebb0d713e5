//! Issue 29: output schemas declared as served and checked on every call, through rmcp's
//! client at both revisions, against a real loopback upstream: every `structuredContent`
//! served is validated here against the `outputSchema` rmcp listed, with and without
//! `fields:`; an answer that breaks the document's promise is an `isError` result with the
//! body as text, never `structuredContent`.

use ferry::catalog::Catalog;
use ferry::mcp::{Server, ServerOptions};
use ferry::openapi::Document;
use ferry::transport::http::HttpOptions;
use ferry::upstream::Upstream;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::{serve_app, start};

fn document() -> Value {
    let item = json!({"type": "object", "required": ["id", "name"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}});
    let json_of = |schema: Value| json!({"description": "ok", "content": {"application/json": {"schema": schema}}});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "items", "version": "1"},
        "paths": {
            "/items": {
                "get": {"operationId": "listItems", "responses": {
                    "200": json_of(json!({"type": "array", "items": {"$ref": "#/components/schemas/Item"}}))}},
                "post": {"operationId": "createItem", "responses": {
                    "201": json_of(json!({"$ref": "#/components/schemas/Item"}))}},
            },
            "/broken": {"get": {"operationId": "listBroken", "responses": {
                "200": json_of(json!({"type": "array", "items": {"$ref": "#/components/schemas/Item"}}))}}},
        },
        "components": {"schemas": {"Item": item}},
    })
}

/// The items API: `/items` keeps the document's promise, `/broken` and `POST /items` do not.
async fn upstream() -> String {
    use axum::routing::get;
    fn json(status: u16, body: Value) -> axum::response::Response {
        axum::response::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .expect("a response")
    }
    let router = axum::Router::new()
        .route(
            "/items",
            get(|| async { json(200, json!([{"id": 1, "name": "Rex", "extra": true}])) })
                .post(|| async { json(201, json!({"id": "seven", "name": "Tom"})) }),
        )
        .route(
            "/broken",
            get(|| async { json(200, json!([{"id": 1}, {"id": "two", "name": 3}])) }),
        );
    format!("http://{}", serve_app(router).await)
}

fn catalog(base: &str, fields: bool) -> Catalog {
    let document = Document::from_value(document()).expect("document");
    let projected = if fields { "{fields: [id]}" } else { "{}" };
    let text = format!(
        "upstream: {base}\ntools:\n  listItems: {projected}\n  listBroken: {projected}\n  createItem: {{}}\n"
    );
    let (curation, diagnostics) =
        ferry::curation::parse(&text, "ferry.yaml", std::env::temp_dir()).expect("curation");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let (catalog, diagnostics) = ferry::catalog::compile(&document, &curation);
    assert!(!diagnostics.iter().any(|d| d.is_error()), "{diagnostics:?}");
    catalog
}

async fn client(url: &str, modern: bool) -> RunningService<RoleClient, ()> {
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_string());
    if modern {
        ().serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover")
    } else {
        ().serve(transport).await.expect("initialize")
    }
}

/// `result`'s `structuredContent`, checked against `tool`'s output schema as rmcp listed it.
fn conforming(tool: &Tool, result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    let schema = Value::Object((*tool.output_schema.clone().expect("an output schema")).clone());
    let validator = jsonschema::draft202012::new(&schema).expect("the output schema compiles");
    assert!(
        validator.is_valid(&structured),
        "{structured} against {schema}"
    );
    structured
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .expect("content")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn answers_are_served_as_declared_and_checked_at_both_revisions() {
    let base = upstream().await;
    for fields in [false, true] {
        let catalog = catalog(&base, fields);
        let upstream = Upstream::new(&catalog).expect("upstream client");
        let server = Server::new(&catalog, Some(upstream), ServerOptions::default());
        let running = start(server, HttpOptions::default()).await;
        for modern in [true, false] {
            let client = client(&running.url, modern).await;
            let tools = client.list_all_tools().await.expect("tools/list");
            let find = |name: &str| {
                tools
                    .iter()
                    .find(|tool| tool.name == name)
                    .expect(name)
                    .clone()
            };
            let listed = find("listItems");
            let served = client
                .call_tool(CallToolRequestParams::new("listItems"))
                .await
                .expect("call");
            let structured = conforming(&listed, &served);
            let item = match fields {
                true => json!({"id": 1}),
                false => json!({"id": 1, "name": "Rex", "extra": true}),
            };
            let expected = match modern {
                true => json!([item]),
                false => json!({"result": [item]}),
            };
            assert_eq!(structured, expected, "fields {fields}, modern {modern}");

            let broken = client
                .call_tool(CallToolRequestParams::new("listBroken"))
                .await
                .expect("call");
            assert_eq!(broken.is_error, Some(true));
            assert!(broken.structured_content.is_none(), "{broken:?}");
            let said = text(&broken);
            assert!(
                said.contains("does not match this tool's declared output schema"),
                "{said}"
            );
            assert!(said.contains(r#"/1/id: "two" is not of type"#), "{said}");
            // The body as text: as received, or as `fields:` projected it.
            let body = match fields {
                true => r#"[{"id":1},{"id":"two"}]"#,
                false => r#"[{"id":1},{"id":"two","name":3}]"#,
            };
            assert!(said.contains(body), "the body as text: {said}");
            assert!(!said.contains("carried out"), "{said}");

            let written = client
                .call_tool(CallToolRequestParams::new("createItem"))
                .await
                .expect("call");
            assert_eq!(written.is_error, Some(true));
            assert!(written.structured_content.is_none());
            let said = text(&written);
            assert!(said.contains("answered success (201 Created)"), "{said}");
            assert!(said.contains("do not repeat it"), "{said}");
            client.cancel().await.expect("close");
        }
    }
}

#[test]
fn output_schema_false_declares_and_checks_nothing() {
    let document = Document::from_value(document()).expect("document");
    let text = "upstream: http://127.0.0.1:9\noutput_schema: false\ntools:\n  listItems: {}\n  listBroken: {output_schema: true}\n";
    let (curation, diagnostics) =
        ferry::curation::parse(text, "ferry.yaml", std::env::temp_dir()).expect("curation");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let (catalog, _) = ferry::catalog::compile(&document, &curation);
    let declared: Vec<(&str, bool)> = catalog
        .tools
        .iter()
        .map(|tool| (tool.name.as_str(), tool.output_schema.is_some()))
        .collect();
    assert_eq!(declared, [("listBroken", true), ("listItems", false)]);
    let listed = ferry::catalog::tools_json(&catalog);
    assert!(listed[1].get("outputSchema").is_none(), "{listed}");
}
