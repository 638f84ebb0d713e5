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
    served(tools, "http://127.0.0.1:1")
}

/// A catalog of `tools` calling `upstream`.
fn served(tools: Vec<Tool>, upstream: &str) -> Catalog {
    Catalog {
        server: ServerInfo {
            name: "pets".into(),
            title: None,
            version: "1".into(),
            instructions: None,
        },
        upstream: Some(upstream.into()),
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

/// The diff of `old` to `new` (with the same settings), one change a line.
fn check(old: Vec<Tool>, new: Vec<Tool>, expected: Expect) {
    let changes = diff(&Digests::new(&catalog(old)), &Digests::new(&catalog(new)));
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
        &Digests::new(&served(pets(), "http://127.0.0.1:1")),
        &Digests::new(&served(pets(), "http://127.0.0.1:2")),
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
    let changes = diff(
        &Digests::new(&catalog(pets())),
        &Digests::new(&catalog(new)),
    );
    expect![[r#"[{"change":"added","tool":"create_pet","operation":"POST /pets"},{"change":"changed","tool":"get_pet","parts":["description"]}]"#]]
        .assert_eq(&serde_json::to_string(&changes).expect("serializes"));
}

#[test]
fn drift_still_reports_each_changed_part() {
    let old = catalog(pets());
    let document =
        crate::openapi::Document::from_value(json!({"openapi": "3.1.0"})).expect("document");
    let lock = lock(&old, &document, None);
    let mut new = pets();
    new[0].description = None;
    new[0].call.retries = 1;
    let drift = drift(&lock, &served(new, "http://127.0.0.1:2"), false);
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
    let serving = "http://127.0.0.1:1";
    let digest = |tools: Vec<Tool>, serving| Digests::new(&served(tools, serving)).digest();
    let same = digest(pets(), serving);
    assert_eq!(same, digest(pets(), serving));
    assert!(same.starts_with("sha256:"), "{same}");
    let mut new = pets();
    new[1].call.retries = 0;
    assert_ne!(same, digest(new, serving));
    assert_ne!(same, digest(pets(), "http://127.0.0.1:2"));
    assert_eq!(Digests::new(&served(pets(), serving)).tools(), 2);
}

#[test]
fn the_digest_follows_every_serving_setting_and_the_lock_names_them_alike() {
    let before = catalog(pets());
    let mut after = catalog(pets());
    after.upstream_auth = Some(crate::access::UpstreamAuth::Bearer {
        env: "PETS_TOKEN".into(),
    });
    after.identity_header = Some(http::HeaderName::from_static("x-subject"));
    after.server.instructions = Some("Ask about pets.".into());
    assert_ne!(
        Digests::new(&before).digest(),
        Digests::new(&after).digest()
    );
    let text: Vec<String> = diff(&Digests::new(&before), &Digests::new(&after))
        .iter()
        .map(ToString::to_string)
        .collect();
    expect![[r#"
        [
            "~ setting `server`",
            "~ setting `upstreamAuth`",
            "~ setting `upstreamIdentity`",
        ]
    "#]]
    .assert_debug_eq(&text);
    let document =
        crate::openapi::Document::from_value(json!({"openapi": "3.1.0"})).expect("document");
    let drift: Vec<String> = drift(&lock(&before, &document, None), &after, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    expect![[r#"
        [
            "`upstreamAuth` changed: where calls go or who may make them is not what was locked",
            "`upstreamIdentity` changed: where calls go or who may make them is not what was locked",
        ]
    "#]].assert_debug_eq(&drift);
}
