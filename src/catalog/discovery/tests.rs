//! Discovery in the catalog: which tools are listed, the five tools' names and
//! annotations, each operation's class, and the ranking's word handling.

use expect_test::expect;
use serde_json::Value;

use super::search::{Filter, words};
use super::{CallClass, add_discovery};
use crate::catalog::annotations::{self, Guarantee};
use crate::catalog::{Catalog, Runs, compile_chosen};
use crate::curation::{self, AnnotationOverrides};
use crate::diagnostic::Diagnostic;
use crate::openapi::Document;

const DOCUMENT: &str = r#"
openapi: 3.1.0
info: {title: Pets, version: "1"}
paths:
  /pets:
    get: {operationId: listPets, summary: List the pets, tags: [pets], responses: {"200": {description: ok}}}
    post: {operationId: createPet, summary: Add a pet, tags: [pets], responses: {"201": {description: ok}}}
  /pets/{petId}:
    parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
    get: {operationId: getPet, summary: One pet by its id, tags: [pets], responses: {"200": {description: ok}}}
    put: {operationId: putPet, summary: Replace a pet, tags: [pets], responses: {"200": {description: ok}}}
    delete: {operationId: deletePet, summary: Remove a pet for good, tags: [pets], responses: {"204": {description: ok}}}
    patch: {operationId: patchPet, summary: Change a pet, tags: [pets], responses: {"200": {description: ok}}}
"#;

fn compiled(curation_text: &str) -> (Catalog, Vec<Diagnostic>) {
    let value: Value = serde_saphyr::from_str(DOCUMENT).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let (curation, mut diagnostics) =
        curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation");
    let (mut catalog, found) = compile_chosen(&document, &curation);
    diagnostics.extend(found);
    diagnostics.extend(add_discovery(&mut catalog, &document, &curation));
    (catalog, diagnostics)
}

/// Each tool: whether it is listed, its annotations, and for an operation its class.
fn render(catalog: &Catalog) -> String {
    let mut out = String::new();
    for tool in &catalog.tools {
        let class = match &tool.runs {
            Runs::Operation(_) => format!(" {}", CallClass::of(&tool.annotations).tool()),
            Runs::Discovery(discovery) => format!(" {}", discovery.meta()),
            Runs::Workflow(_) => String::new(),
        };
        out.push_str(&format!(
            "{}{} {}{class}\n",
            tool.name,
            if tool.listed { "" } else { " (unlisted)" },
            serde_json::to_string(&tool.annotations).expect("annotations"),
        ));
    }
    out
}

#[test]
fn discovery_serves_five_tools_over_the_chosen_operations_and_lists_also_list() {
    let (catalog, diagnostics) = compiled(
        "tags: {pets: {}}\ndiscovery: {also_list: [listPets, 'DELETE /pets/{petId}']}\ntools:\n  patchPet:\n    annotations: {idempotentHint: true}\n    because: a patch here sets fields to the values sent\n",
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    expect![[r#"
        call_idempotent_operation {"readOnlyHint":false,"idempotentHint":true} {"kind":"call","class":"idempotent"}
        call_operation {} {"kind":"call","class":"other"}
        call_read_operation {"readOnlyHint":true} {"kind":"call","class":"read"}
        createPet (unlisted) {} call_operation
        deletePet {"readOnlyHint":false,"idempotentHint":true} call_idempotent_operation
        describe_operation {"readOnlyHint":true} {"kind":"describe"}
        getPet (unlisted) {"readOnlyHint":true} call_read_operation
        listPets {"readOnlyHint":true} call_read_operation
        patchPet (unlisted) {"idempotentHint":true} call_idempotent_operation
        putPet (unlisted) {"readOnlyHint":false,"idempotentHint":true} call_idempotent_operation
        search_operations {"readOnlyHint":true} {"kind":"search"}
    "#]]
    .assert_eq(&render(&catalog));
    assert_eq!(catalog.served_tools(), 7);
}

#[test]
fn only_the_tools_listed_as_themselves_declare_an_output_schema() {
    let document = DOCUMENT.replace(
        r#"get: {operationId: listPets, summary: List the pets, tags: [pets], responses: {"200": {description: ok}}}"#,
        r#"get: {operationId: listPets, summary: List the pets, tags: [pets], responses: {"200": {description: ok, content: {application/json: {schema: {type: array}}}}}}"#,
    )
    .replace(
        r#"get: {operationId: getPet, summary: One pet by its id, tags: [pets], responses: {"200": {description: ok}}}"#,
        r#"get: {operationId: getPet, summary: One pet by its id, tags: [pets], responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}"#,
    );
    let value: Value = serde_saphyr::from_str(&document).expect("test document is YAML");
    let document = Document::from_value(value).expect("test document is OpenAPI");
    let declared = |curation_text: &str| {
        let (curation, _) =
            curation::parse(curation_text, "ferry.yaml", Default::default()).expect("curation");
        let (mut catalog, _) = compile_chosen(&document, &curation);
        add_discovery(&mut catalog, &document, &curation);
        let mut declared: Vec<String> = catalog
            .tools
            .iter()
            .filter(|tool| tool.output_schema.is_some())
            .map(|tool| tool.name.clone())
            .collect();
        declared.sort();
        declared
    };
    assert_eq!(
        declared("tools: {listPets: {}, getPet: {}}\n"),
        ["getPet", "listPets"]
    );
    // Behind discovery, an operation is called through a calling tool, which declares none.
    assert_eq!(
        declared("tools: {listPets: {}, getPet: {}}\ndiscovery: {also_list: [listPets]}\n"),
        ["listPets"]
    );
}

#[test]
fn an_also_list_entry_that_names_no_chosen_operation_is_an_error() {
    let (_, diagnostics) = compiled("tools: {getPet: {}}\ndiscovery: {also_list: [listPets]}\n");
    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "error: \"listPets\" names no chosen operation: name one by its operationId, `METHOD /path` or tool name, and choose it under `tools:` or `tags:`\n  --> curation:discovery.also_list.0",
        ]
    "#]]
    .assert_debug_eq(&text);
}

#[test]
fn an_operation_named_as_a_discovery_tool_is_an_error_and_not_served() {
    let (catalog, diagnostics) =
        compiled("tools: {getPet: {name: search_operations}, listPets: {}}\ndiscovery: true\n");
    assert!(diagnostics.iter().any(|d| d.is_error()), "{diagnostics:?}");
    let search: Vec<&str> = catalog
        .tools
        .iter()
        .filter(|tool| tool.name == "search_operations")
        .map(|tool| tool.source().kind())
        .collect();
    assert_eq!(search, ["discovery"]);
}

#[test]
fn without_discovery_every_tool_is_listed() {
    let (catalog, _) = compiled("tags: {pets: {}}\n");
    assert!(catalog.tools.iter().all(|tool| tool.listed));
    assert_eq!(catalog.tools.len(), 6);
}

/// The annotation oracle for the three calling tools: on every method a tool can call, for
/// every state a curation can ask for (each hint absent, true or false, `openWorldHint`
/// absent or true, a claim beyond the method carrying `because:`), the operation's class
/// is the strongest whose calling tool asserts nothing the operation's served state does
/// not, so a client reading the calling tool's annotations is never told more than the
/// operation's own tool would tell it.
#[test]
fn each_calling_tool_asserts_no_more_than_every_operation_it_calls() {
    let methods = [
        "GET", "HEAD", "QUERY", "PUT", "DELETE", "POST", "PATCH", "OPTIONS", "TRACE", "PROPFIND",
        "COPY", "LOCK", "PURGE",
    ];
    let hints = [None, Some(true), Some(false)];
    let mut states = 0;
    for method in methods {
        for read_only_hint in hints {
            for destructive_hint in hints {
                for idempotent_hint in hints {
                    for open_world_hint in [None, Some(true)] {
                        let overrides = AnnotationOverrides {
                            read_only_hint,
                            destructive_hint,
                            idempotent_hint,
                            open_world_hint,
                        };
                        let served = annotations::decide(method, &overrides).annotations;
                        let class = CallClass::of(&served);
                        let claims = |class: CallClass| annotations::asserted(&class.annotations());
                        let holds = |class: CallClass| {
                            claims(class).iter().all(|g| {
                                annotations::asserted(&served).contains(g)
                                    // read-only asserts the other two as well
                                    || annotations::asserted(&served).contains(&Guarantee::ReadOnly)
                            })
                        };
                        assert!(holds(class), "{method} {overrides:?}: {class:?}");
                        for stronger in CallClass::ALL.into_iter().filter(|c| *c < class) {
                            assert!(!holds(stronger), "{method} {overrides:?}: {stronger:?}");
                        }
                        states += 1;
                    }
                }
            }
        }
    }
    assert_eq!(states, methods.len() * 54);
    // With no claim, the method alone decides: GET, PUT and POST land in the three.
    for (method, class) in [
        ("GET", CallClass::Read),
        ("DELETE", CallClass::Idempotent),
        ("PATCH", CallClass::Other),
    ] {
        assert_eq!(CallClass::of(&annotations::from_method(method)), class);
    }
}

#[test]
fn words_are_split_lowercased_stemmed_and_shortened_alike() {
    let said: Vec<String> =
        words("Who starred the repositories? listPullRequests issues/create-comment").collect();
    expect![[r#"
        [
            "who",
            "star",
            "repo",
            "list",
            "pull",
            "request",
            "issue",
            "create",
            "comment",
        ]
    "#]]
    .assert_debug_eq(&said);
}

#[test]
fn a_search_ranks_by_what_the_query_says_and_keeps_to_its_filters() {
    let (catalog, _) = compiled("tags: {pets: {}}\ndiscovery: true\n");
    let index = catalog
        .tools
        .iter()
        .find_map(|tool| match &tool.runs {
            Runs::Discovery(discovery) => Some(discovery.index.clone()),
            _ => None,
        })
        .expect("discovery");
    let names = |query: &str, filter: &Filter<'_>| -> Vec<String> {
        index
            .search(query, filter, 3, |_| true)
            .0
            .iter()
            .map(|entry| entry.tool.clone())
            .collect()
    };
    let every = Filter::default();
    assert_eq!(names("remove a pet", &every)[0], "deletePet");
    assert_eq!(names("show me all the pets", &every)[0], "listPets");
    assert_eq!(names("add a new pet", &every)[0], "createPet");
    assert_eq!(names("getPet", &every)[0], "getPet");
    let reads = Filter {
        class: Some(CallClass::Read),
        ..Filter::default()
    };
    assert!(
        names("remove a pet", &reads)
            .iter()
            .all(|name| name == "getPet" || name == "listPets")
    );
    // What a caller may not see is never answered, nor counted.
    let (found, matched) = index.search("pet", &every, 10, |entry| entry.tool != "deletePet");
    assert_eq!(matched, 5);
    assert!(found.iter().all(|entry| entry.tool != "deletePet"));
}

#[test]
fn discovery_over_no_chosen_operation_is_a_warning() {
    let (catalog, diagnostics) = compiled("discovery: true\n");
    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "warning: discovery is on but no operation is chosen, so its tools find nothing: choose operations under `tools:` or `tags:`, or serve with --all\n  --> curation:discovery",
        ]
    "#]].assert_debug_eq(&text);
    assert_eq!(catalog.served_tools(), 5);
}
