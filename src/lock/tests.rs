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
    let server = ServerInfo {
        name: "pets".into(),
        title: None,
        version: "1".into(),
        instructions: None,
    };
    Catalog::new(server, Some(upstream.into()), tools)
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
        "additionalProperties": false})
    .into();
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
    new[0]
        .operation_mut()
        .expect("an operation's tool")
        .call
        .timeout = std::time::Duration::from_millis(500);
    new[1]
        .operation_mut()
        .expect("an operation's tool")
        .plan
        .path = "/animals".into();
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
    let lock = lock(&old, &one(&document), None);
    let mut new = pets();
    new[0].description = None;
    new[0]
        .operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 1;
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
    new[1]
        .operation_mut()
        .expect("an operation's tool")
        .call
        .retries = 0;
    assert_ne!(same, digest(new, serving));
    assert_ne!(same, digest(pets(), "http://127.0.0.1:2"));
    assert_eq!(Digests::new(&served(pets(), serving)).tools(), 2);
}

#[test]
fn the_digest_follows_every_serving_setting_and_the_lock_names_them_alike() {
    let before = catalog(pets());
    let mut after = catalog(pets());
    after.apis[0].upstream_auth = Some(crate::access::UpstreamAuth::Bearer {
        env: "PETS_TOKEN".into(),
    });
    after.apis[0].identity_header = Some(http::HeaderName::from_static("x-subject"));
    after.server.instructions = Some("Ask about pets.".into());
    assert_ne!(
        Digests::new(&before).digest(),
        Digests::new(&after).digest()
    );
    let text = written(&diff(&Digests::new(&before), &Digests::new(&after)));
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
    let drift = written(&drift(&lock(&before, &one(&document), None), &after, false));
    expect![[r#"
        [
            "`upstreamAuth` changed: where calls go or who may make them is not what was locked",
            "`upstreamIdentity` changed: where calls go or who may make them is not what was locked",
        ]
    "#]].assert_debug_eq(&drift);
}

/// The catalog `tests/data/arazzo/CURATION` compiles to, its composite tools included, and
/// the document it was compiled from.
fn composite(curation: &str) -> (Catalog, crate::openapi::Document) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arazzo");
    let text = std::fs::read_to_string(dir.join(curation)).expect("the curation");
    let (curation, _) = crate::curation::parse(&text, curation, dir.clone()).expect("YAML");
    let document = crate::openapi::load(&dir.join("pets.openapi.yaml")).expect("the document");
    let (mut catalog, _) = crate::catalog::compile(&document, &curation);
    let workflows = curation.workflows.as_ref().expect("workflows chosen");
    let options = crate::openapi::LoadOptions::default();
    let file = crate::openapi::load_file(&dir.join(&workflows.document), &options)
        .expect("the Arazzo document");
    let diagnostics = crate::catalog::add_workflows(&mut catalog, &document, &curation, &file);
    assert!(
        !diagnostics
            .iter()
            .any(crate::diagnostic::Diagnostic::is_error),
        "{diagnostics:?}"
    );
    (catalog, document)
}

#[test]
fn composite_tools_are_locked_with_each_part_and_their_steps() {
    let (catalog, document) = composite("ferry.yaml");
    let lock = lock(&catalog, &one(&document), None);
    let mut text = String::new();
    for (name, tool) in &lock.tools {
        let parts: Vec<&str> = tool.definition.keys().map(String::as_str).collect();
        text.push_str(&format!("{name} ({}): {}\n", tool.source, parts.join(", ")));
        for step in &tool.steps {
            text.push_str(&format!("  {step}\n"));
        }
        assert!(tool.request.starts_with("sha256:"), "{}", tool.request);
    }
    expect![[r#"
        adopt_pet (workflow adoptFirstAvailable): _meta, annotations, description, inputSchema, outputSchema, title
          findPet = GET /pets (findPets)
          adopt = POST /pets/{petId}/adoption (adoptPet)
        findPets (GET /pets): _meta, annotations, inputSchema, outputSchema
        showPet (workflow showPet): _meta, annotations, description, inputSchema, outputSchema
          get = GET /pets/{petId} (getPet)
    "#]]
    .assert_eq(&text);
    assert_eq!(from_text(&to_text(&lock)), Ok(lock));
}

#[test]
fn a_lock_names_what_each_tool_runs_in_one_member() {
    let (catalog, document) = composite("ferry.yaml");
    let text = to_text(&lock(&catalog, &one(&document), None));
    let value: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        value["tools"]["findPets"]["operation"], "GET /pets",
        "{text}"
    );
    assert_eq!(value["tools"]["showPet"]["workflow"], "showPet", "{text}");
    assert!(value["tools"]["findPets"].get("steps").is_none(), "{text}");
    assert!(
        value["tools"]["findPets"].get("workflow").is_none(),
        "{text}"
    );
    // A lock whose composite tools are kept apart, as an earlier ferry wrote them, is
    // refused with what to do.
    let mut earlier = value.clone();
    earlier["workflows"] = json!({});
    let refused = from_text(&earlier.to_string()).expect_err("an unknown member");
    assert!(refused.contains("ferry lock"), "{refused}");
}

#[test]
fn drift_names_composite_tools_added_gone_and_changed_by_part() {
    let (locked, document) = composite("v2.yaml");
    let (now, _) = composite("ferry.yaml");
    let gone = written(&drift(&lock(&locked, &one(&document), None), &now, false));
    let added = written(&drift(&lock(&now, &one(&document), None), &locked, false));
    expect![[r#"
        [
            [
                "tool \"adopt_pet\" changed: annotations, request",
                "tool \"listAvailable\" (workflow listAvailable) is in the lock but no longer served",
                "tool \"showPet\" changed: _meta, description, steps, request",
            ],
            [
                "tool \"adopt_pet\" changed: annotations, request",
                "tool \"showPet\" changed: _meta, description, steps, request",
                "tool \"listAvailable\" (workflow listAvailable) is served but not in the lock",
            ],
        ]
    "#]].assert_debug_eq(&[gone, added]);
}

/// Each of `items` as it is written for people.
fn written(items: &[impl ToString]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

#[test]
fn input_schemas_are_locked_by_the_text_they_are_served_as() {
    let (catalog, document) = composite("ferry.yaml");
    let lock = lock(&catalog, &one(&document), None);
    // The `inputSchema` text of a definition as `tools/list` writes it.
    fn served_schema(definition: impl serde::Serialize) -> String {
        let text = serde_json::to_string(&definition).expect("serializes");
        let value: serde_json::Value = serde_json::from_str(&text).expect("reads back");
        let schema = value["inputSchema"].to_string();
        assert!(text.contains(&schema), "{text}");
        schema
    }
    let mut pinned = String::new();
    let (composite, operations): (Vec<&Tool>, Vec<&Tool>) = catalog
        .tools
        .iter()
        .partition(|tool| tool.workflow().is_some());
    for tool in operations {
        let digest = &lock.tools[&tool.name].definition["inputSchema"];
        let served = served_schema(tool.sorted_definition());
        assert_eq!(digest, &digest_bytes(served.as_bytes()));
        pinned.push_str(&format!("{}: {digest}\n", tool.name));
    }
    // A composite tool's as an operation's: the canonical text `tools/list` serves.
    for workflow in composite {
        let digest = &lock.tools[&workflow.name].definition["inputSchema"];
        let served = served_schema(workflow.sorted_definition());
        assert_eq!(digest, &digest_bytes(served.as_bytes()));
        pinned.push_str(&format!("{} (composite): {digest}\n", workflow.name));
    }
    // Pinned: a change of how a schema is written or digested would make every lock drift.
    expect![[r#"
        findPets: sha256:37c9576ec74bfb29d55b5afeda210a39bea0188718b629f2882c586517157fb6
        adopt_pet (composite): sha256:4df08fa9e5cc2a657ef8abdf53e5df203210560424dfc0cadd055b6df3345fba
        showPet (composite): sha256:b389493af041c928a9846db4f6d14e1deab47faae22da791fe8c0ce973487218
    "#]].assert_eq(&pinned);
}

/// The documents of a configuration with one API.
fn one(document: &crate::openapi::Document) -> Vec<(String, crate::openapi::Document)> {
    vec![(String::new(), document.clone())]
}

/// A tool that declares `schema` as its output schema.
fn with_output(mut tool: Tool, schema: serde_json::Value) -> Tool {
    tool.output_schema = Some(crate::catalog::OutputSchema {
        served: crate::catalog::InputSchema::new(&schema),
        legacy: None,
    });
    tool
}

#[test]
fn an_output_schema_is_a_member_diff_names() {
    let old = vec![with_output(
        tool("get_pet", http::Method::GET, "/pets/{id}"),
        json!({"type": "object"}),
    )];
    let new = vec![with_output(
        tool("get_pet", http::Method::GET, "/pets/{id}"),
        json!({"type": "object", "required": ["id"]}),
    )];
    check(
        old,
        new,
        expect![[r#"
        ~ get_pet: outputSchema
    "#]],
    );
}

#[test]
fn a_lock_from_before_output_schemas_says_why_each_tool_gained_one() {
    let document =
        crate::openapi::Document::from_value(json!({"openapi": "3.1.0"})).expect("document");
    let mut earlier = lock(&catalog(pets()), &one(&document), None);
    earlier.lock_version = LOCK_VERSION_WITHOUT_OUTPUT;
    let earlier = from_text(&to_text(&earlier)).expect("a version 1 lock is read");
    let mut now = pets();
    let first = now.remove(0);
    now.insert(0, with_output(first, json!({"type": "object"})));
    let drift = drift(&earlier, &catalog(now.clone()), false);
    let text: Vec<String> = drift.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "tool \"get_pet\" changed: outputSchema (declared since lock version 2; this lock, version 1, predates output schemas: review it and run `ferry lock`)",
        ]
    "#]]
    .assert_debug_eq(&text);
    // Written again, the lock holds the output schema, and nothing drifts.
    let again = lock(&catalog(now.clone()), &one(&document), None);
    assert_eq!(again.lock_version, LOCK_VERSION);
    assert!(super::drift(&again, &catalog(now), false).is_empty());
}
