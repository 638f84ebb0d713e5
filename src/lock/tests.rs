use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use serde_json::json;

use super::*;
use crate::catalog::{RequestPlan, ServerInfo};

fn tool(name: &str, method: http::Method, path: &str) -> Tool {
    let mut tool = Tool::new(
        name,
        json!({"type": "object", "additionalProperties": false}),
        RequestPlan::new(method, path, Vec::new()),
    );
    tool.description = Some(format!("The {name} operation."));
    tool
}

fn catalog(tools: Vec<Tool>) -> Catalog {
    Catalog {
        server: ServerInfo {
            name: "pets".into(),
            title: None,
            version: "1".into(),
            instructions: None,
        },
        upstream: Some("http://127.0.0.1:1".into()),
        upstream_auth: None,
        identity_header: None,
        auth: None,
        confirm: Default::default(),
        connect_timeout_ms: crate::catalog::call::defaults::CONNECT_TIMEOUT_MS,
        tools,
        operations: Vec::new(),
        workflows: Vec::new(),
    }
}

fn pets() -> Vec<Tool> {
    vec![
        tool("get_pet", http::Method::GET, "/pets/{id}"),
        tool("list_pets", http::Method::GET, "/pets"),
    ]
}

fn settings(upstream: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("upstream".to_string(), upstream.to_string()),
        ("auth".to_string(), "None".to_string()),
    ])
}

/// The diff of `old` to `new` (with the same settings), one change a line.
fn check(old: Vec<Tool>, new: Vec<Tool>, expected: Expect) {
    let serving = settings("http://127.0.0.1:1");
    let changes = diff(
        &Digests::new(&catalog(old).tools, &serving),
        &Digests::new(&catalog(new).tools, &serving),
    );
    let text: String = changes.iter().map(|change| format!("{change}\n")).collect();
    expected.assert_eq(&text);
}

#[test]
fn the_same_catalog_has_no_changes() {
    check(pets(), pets(), expect![""]);
}

#[test]
fn added_and_removed_tools_are_named_with_their_operations() {
    let mut new = pets();
    new.remove(0);
    new.push(tool("create_pet", http::Method::POST, "/pets"));
    check(
        pets(),
        new,
        expect![[r#"
            - get_pet (GET /pets/{id})
            + create_pet (POST /pets)
        "#]],
    );
}

#[test]
fn a_changed_tool_names_each_part_that_changed() {
    let mut new = pets();
    new[0].description = Some("Reads one pet.".into());
    new[0].input_schema = json!({"type": "object", "properties": {"id": {"type": "integer"}},
        "additionalProperties": false});
    new[1].annotations.read_only_hint = Some(true);
    new[1].title = Some("Pets".into());
    check(
        pets(),
        new,
        expect![[r#"
            ~ get_pet: description, inputSchema
            ~ list_pets: annotations, title
        "#]],
    );
}

#[test]
fn call_settings_and_the_request_are_told_apart() {
    let mut new = pets();
    new[0].call.timeout = std::time::Duration::from_millis(500);
    new[1].plan.path = "/animals".into();
    new[1].scopes = Some(vec!["pets:read".into()]);
    check(
        pets(),
        new,
        expect![[r#"
            ~ get_pet: call
            ~ list_pets: _meta, operation (GET /pets → GET /animals), request, scopes
        "#]],
    );
}

#[test]
fn a_changed_setting_is_named_without_its_value() {
    let changes = diff(
        &Digests::new(&pets(), &settings("http://127.0.0.1:1")),
        &Digests::new(&pets(), &settings("http://127.0.0.1:2")),
    );
    assert_eq!(
        changes,
        vec![Change::SettingChanged {
            setting: "upstream".into()
        }]
    );
    assert_eq!(changes[0].to_string(), "~ setting `upstream`");
}

#[test]
fn changes_serialize_with_their_kind() {
    let mut new = pets();
    new.push(tool("create_pet", http::Method::POST, "/pets"));
    new[0].description = None;
    let serving = settings("http://127.0.0.1:1");
    let changes = diff(
        &Digests::new(&pets(), &serving),
        &Digests::new(&new, &serving),
    );
    expect![[r#"[{"change":"added","tool":"create_pet","operation":"POST /pets"},{"change":"changed","tool":"get_pet","parts":["description"]}]"#]]
        .assert_eq(&serde_json::to_string(&changes).expect("serializes"));
}

#[test]
fn drift_still_reports_each_changed_part() {
    let old = catalog(pets());
    let serving = settings("http://127.0.0.1:1");
    let document =
        crate::openapi::Document::from_value(json!({"openapi": "3.1.0"})).expect("document");
    let lock = lock(&old, &document, None, &serving);
    let mut new = pets();
    new[0].description = None;
    new[0].call.retries = 1;
    let drift = drift(&lock, &catalog(new), &settings("http://127.0.0.1:2"), false);
    let text: Vec<String> = drift.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "`upstream` changed: where calls go or who may make them is not what was locked",
            "tool \"get_pet\" changed: description, request",
        ]
    "#]]
    .assert_debug_eq(&text);
}

#[test]
fn the_digest_changes_with_what_diff_compares() {
    let serving = settings("http://127.0.0.1:1");
    let digest = |tools: &[Tool], serving| Digests::new(tools, serving).digest();
    let same = digest(&pets(), &serving);
    assert_eq!(same, digest(&pets(), &serving));
    assert!(same.starts_with("sha256:"), "{same}");
    let mut new = pets();
    new[1].call.retries = 0;
    assert_ne!(same, digest(&new, &serving));
    assert_ne!(same, digest(&pets(), &settings("http://127.0.0.1:2")));
    assert_eq!(Digests::new(&pets(), &serving).tools(), 2);
}
