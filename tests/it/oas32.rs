//! OpenAPI 3.2 (issue 22): the project's 3.2 document (`tests/data/openapi-3.2/`) held to the
//! official schema, what `ferry check --format json` says of each construct it uses, and its
//! QUERY, `additionalOperations` and `querystring` tools called against a loopback upstream.

use std::path::{Path, PathBuf};

use expect_test::expect;
use ferry::catalog::{self, Tool};
use ferry::curation::Curation;
use ferry::openapi;
use serde_json::{Value, json};

use crate::upstream::{TestUpstream, call, json_reply};

fn document_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openapi-3.2")
}

/// The official schema of OpenAPI 3.2 documents (`tests/data/oas-schema/`), compiled as
/// JSON Schema 2020-12, as its `$schema` says.
pub fn oas_32_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/oas-schema/schema-3.2-2025-11-23.json");
    let text = std::fs::read_to_string(&path).expect("the OpenAPI 3.2 schema is kept");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    assert_eq!(
        schema["$id"],
        "https://spec.openapis.org/oas/3.2/schema/2025-11-23"
    );
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// Every error `validator` finds in `value`, one a line: where, then what.
fn invalid(validator: &jsonschema::Validator, value: &Value) -> String {
    validator
        .iter_errors(value)
        .map(|error| format!("{}: {error}\n", error.instance_path()))
        .collect()
}

#[test]
fn every_32_test_document_is_valid_against_the_official_schema() {
    let validator = oas_32_validator();
    let mut files = Vec::new();
    let mut folders = vec![document_dir()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read document");
        let value = openapi::parse(&text, &path.display().to_string()).expect("YAML");
        assert_eq!(invalid(&validator, &value), "", "{}", path.display());
    }
    // The schema refuses what 3.2 forbids and ferry explains: a fixed method among
    // `additionalOperations`, a key that is no method, a `querystring` beside a `query`.
    let forbidden = json!({
        "openapi": "3.2.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {
            "additionalOperations": {"POST": {}, "NOT A TOKEN": {}},
            "get": {"parameters": [
                {"name": "q", "in": "query", "schema": {}},
                {"name": "all", "in": "querystring", "content": {"application/x-www-form-urlencoded": {}}}
            ]}
        }}
    });
    expect![[r#"
        /paths/~1x/additionalOperations: {"enum":["GET","PUT","POST","DELETE","OPTIONS","HEAD","PATCH","TRACE","QUERY"]} is not allowed for "POST"
        /paths/~1x/additionalOperations: "NOT A TOKEN" does not match "^[a-zA-Z0-9!#$%&'*+.^_`|~-]+$"
        /paths/~1x/get/parameters: {"allOf":[{"contains":{"type":"object","properties":{"in":{"const":"query"}},"required":["in"]}},{"contains":{"type":"object","properties":{"in":{"const":"querystring"}},"required":["in"]}}]} is not allowed for [{"name":"q","in":"query","schema":{}},{"name":"all","in":"querystring","content":{"application/x-www-form-urlencoded":{}}}]
    "#]]
    .assert_eq(&invalid(&validator, &forbidden));
}

use crate::support::ferry;

/// `ferry check --format json` on the 3.2 document, as one line per operation (method,
/// path, status, annotations or reason) and one per diagnostic (code, where, operations).
fn check_json(args: &[&str]) -> (i32, String) {
    let document = document_dir().join("openapi.yaml");
    let mut all = vec!["check", "--format", "json", "--openapi"];
    all.push(document.to_str().expect("utf-8 path"));
    all.extend_from_slice(args);
    let (code, out, err) = ferry(&all, &document_dir());
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let mut table = String::new();
    for operation in report["operations"].as_array().expect("operations") {
        let outcome = match operation["status"].as_str() {
            Some("served") => format!(
                "{} by {}",
                operation["annotations"],
                operation["choice"].as_str().unwrap_or_default()
            ),
            _ => operation["reason"].as_str().unwrap_or_default().to_string(),
        };
        table.push_str(&format!(
            "{} {} {} ({}): {outcome}\n",
            operation["method"].as_str().unwrap_or_default(),
            operation["path"].as_str().unwrap_or_default(),
            operation["status"].as_str().unwrap_or_default(),
            operation["tool"].as_str().unwrap_or_default(),
        ));
    }
    for diagnostic in report["diagnostics"].as_array().expect("diagnostics") {
        table.push_str(&format!(
            "{} [{}] {}#{} {}\n",
            diagnostic["severity"].as_str().unwrap_or_default(),
            diagnostic["code"].as_str().unwrap_or("no code"),
            diagnostic["location"]["file"].as_str().unwrap_or_default(),
            diagnostic["location"]["pointer"]
                .as_str()
                .unwrap_or_default(),
            diagnostic["operations"],
        ));
    }
    (code, table)
}

/// Each 3.2 construct of the document is served (a tool, its annotations from its method) or
/// explained (a diagnostic with a stable code at its place); the document only loads because
/// its files name each other by `$self`.
#[test]
fn check_json_says_of_each_32_construct_whether_it_is_served_or_why_not() {
    let (code, table) = check_json(&["--all"]);
    assert_eq!(code, 1, "{table}");
    expect![[r#"
        QUERY /files served (searchFiles): {"readOnlyHint":true} by --all
        PROPFIND /files served (listFileProperties): {"readOnlyHint":true} by --all
        COPY /files served (copyFiles): {"readOnlyHint":false,"idempotentHint":true} by --all
        PURGE /files served (purge_files): {} by --all
        GET /files/{name} served (getFile): {"readOnlyHint":true} by --all
        PUT /files/{name} served (putFile): {"readOnlyHint":false,"idempotentHint":true} by --all
        POST /files/{name}/lines served (appendLines): {} by --all
        GET /files/{name}/events served (watchFile): {"readOnlyHint":true} by --all
        GET /select ineligible (selectFiles): `querystring` parameter `selector` is `application/jsonpath`: ferry writes a query string only as a form (`application/x-www-form-urlencoded`)
        error [querystring-not-form] openapi.yaml#/paths/~1select/get/parameters/0/content/application~1jsonpath ["GET /select"]
        warning [item-schema-not-validated] openapi.yaml#/paths/~1files~1{name}~1lines/post/requestBody/content/application~1jsonl/itemSchema ["POST /files/{name}/lines"]
    "#]]
    .assert_eq(&table);
    // A tag entry chooses the operations of the tags whose `parent` leads to it: `files`
    // those tagged `search` and `webdav` too; `streams` has no parent.
    let dir = std::env::temp_dir().join(format!("ferry-it-oas32-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let curation = dir.join("ferry.yaml");
    std::fs::write(&curation, "tags:\n  files: {}\n").expect("write curation");
    let (code, table) = check_json(&["--config", curation.to_str().expect("utf-8")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 1, "{table}");
    expect![[r#"
        QUERY /files served (searchFiles): {"readOnlyHint":true} by tags.files
        PROPFIND /files served (listFileProperties): {"readOnlyHint":true} by tags.files
        COPY /files served (copyFiles): {"readOnlyHint":false,"idempotentHint":true} by tags.files
        PURGE /files not chosen (purge_files): not chosen
        GET /files/{name} served (getFile): {"readOnlyHint":true} by tags.files
        PUT /files/{name} served (putFile): {"readOnlyHint":false,"idempotentHint":true} by tags.files
        POST /files/{name}/lines not chosen (appendLines): not chosen
        GET /files/{name}/events not chosen (watchFile): not chosen
        GET /select ineligible (selectFiles): `querystring` parameter `selector` is `application/jsonpath`: ferry writes a query string only as a form (`application/x-www-form-urlencoded`)
        error [querystring-not-form] openapi.yaml#/paths/~1select/get/parameters/0/content/application~1jsonpath ["GET /select"]
        warning [item-schema-not-validated] openapi.yaml#/paths/~1files~1{name}~1lines/post/requestBody/content/application~1jsonl/itemSchema ["POST /files/{name}/lines"]
    "#]]
    .assert_eq(&table);
}

fn compiled() -> Vec<Tool> {
    let document =
        openapi::load(&document_dir().join("openapi.yaml")).expect("the 3.2 document loads");
    let curation = Curation {
        all: true,
        ..Curation::default()
    };
    let (catalog, _) = catalog::compile(&document, &curation);
    catalog.tools
}

fn tool_named(tools: &[Tool], name: &str) -> Tool {
    let mut tool = tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .clone();
    tool.operation_mut().expect("an operation's tool").call = crate::upstream::fast();
    tool
}

/// The tools compiled from the document reach the upstream as written: QUERY with its JSON
/// body, the `additionalOperations` methods as their keys, a `querystring` argument as the
/// whole query string and a `cookie`-style cookie as given.
#[tokio::test]
async fn a_32_documents_tools_send_their_methods_and_query_strings_as_written() {
    let upstream = TestUpstream::start(|_, _| json_reply(200, json!({"ok": true}))).await;
    let tools = compiled();
    let calls = [
        ("searchFiles", json!({"text": "report", "limit": 5})),
        ("listFileProperties", json!({"Depth": "1"})),
        (
            "copyFiles",
            json!({"Destination": "https://files.ferry.test/v1/backup"}),
        ),
        ("purge_files", json!({})),
        (
            "getFile",
            json!({"name": "a b", "filter": {"owner": "me & you", "size": [1, 2]}, "session": "s%3D1"}),
        ),
    ];
    for (name, arguments) in &calls {
        let result = call(&upstream.base, &tool_named(&tools, name), arguments.clone()).await;
        assert!(!result.is_error, "{name}: {result:?}");
    }
    let mut seen = String::new();
    for request in upstream.requests() {
        seen.push_str(&format!(
            "{} {} | {} | {}\n",
            request.method,
            request.uri,
            ["content-type", "depth", "destination", "cookie"]
                .iter()
                .filter_map(|name| request.header(name).map(|value| format!("{name}: {value}")))
                .collect::<Vec<_>>()
                .join(", "),
            String::from_utf8_lossy(&request.body),
        ));
    }
    expect![[r#"
        QUERY /files | content-type: application/json | {"text":"report","limit":5}
        PROPFIND /files | depth: 1 | 
        COPY /files | destination: https://files.ferry.test/v1/backup | 
        PURGE /files |  | 
        GET /files/a%20b?owner=me%20%26%20you&size=1&size=2 | cookie: session=s%3D1 | 
    "#]]
    .assert_eq(&seen);
}
