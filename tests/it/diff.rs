//! `ferry diff`: pairs of curation files and of documents from `tests/data/diff/` (and of
//! Arazzo workflows from `tests/data/arazzo/`), through the built binary, with snapshots of
//! what it prints and its exit code.

use std::process::Command;

use expect_test::{Expect, expect};
use serde_json::Value;

/// Runs `ferry diff ARGS` in `tests/data/diff/`; checks the exit code, stdout then stderr.
fn check(args: &[&str], expected: Expect) {
    check_in("diff", args, expected);
}

/// [`check`] in `tests/data/DATA/`.
fn check_in(data: &str, args: &[&str], expected: Expect) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(data);
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .arg("diff")
        .args(args)
        .current_dir(dir)
        .env_remove("FERRY_CONFIG")
        .env_remove("FERRY_OPENAPI")
        .env_remove("FERRY_UPSTREAM")
        .output()
        .expect("run ferry");
    let report = format!(
        "exit {}\n{}{}",
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    expected.assert_eq(&report);
}

#[test]
fn two_curation_files_differ_by_tool_and_part() {
    check(
        &["old.yaml", "new.yaml"],
        expect![[r#"
            exit 1
            - deletePet (DELETE /pets/{petId})
            + createPet (POST /pets)
            ~ getPet: annotations, call
            ~ listPets: description
            1 added, 1 removed, 2 changed, 0 settings changed
        "#]],
    );
}

#[test]
fn a_curation_file_against_itself_is_the_same() {
    check(
        &["old.yaml", "old.yaml"],
        expect![[r#"
            exit 0
            no change: the same 3 tools and settings
        "#]],
    );
}

#[test]
fn two_documents_against_one_curation() {
    check(
        &[
            "--documents",
            "--config",
            "both.yaml",
            "openapi.yaml",
            "openapi-v2.yaml",
        ],
        expect![[r#"
            exit 1
            ~ getPet: description
            ~ listPets: inputSchema, request
            ~ setting `server`
            0 added, 0 removed, 2 changed, 1 settings changed
        "#]],
    );
}

#[test]
fn a_side_that_does_not_compile_is_exit_2_with_its_errors() {
    check(
        &["old.yaml", "broken.yaml"],
        expect![[r#"
            exit 2
            broken.yaml: error: "getPets" matches no operation (give an operationId or `METHOD /path`); did you mean "getPet"?
              --> curation:tools.getPets
            ferry: cannot compare catalogs with errors: fix them, then run `ferry diff` again
        "#]],
    );
}

#[test]
fn a_missing_file_is_exit_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["diff", "old.yaml", "gone.yaml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/diff"))
        .output()
        .expect("run ferry");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("gone.yaml"), "{stderr}");
}

#[test]
fn json_lists_each_change_with_its_kind() {
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["diff", "--format", "json", "old.yaml", "new.yaml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/diff"))
        .output()
        .expect("run ferry");
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    expect![[r#"{"changes":[{"change":"removed","operation":"DELETE /pets/{petId}","tool":"deletePet"},{"change":"added","operation":"POST /pets","tool":"createPet"},{"change":"changed","parts":["annotations","call"],"tool":"getPet"},{"change":"changed","parts":["description"],"tool":"listPets"}],"same":false,"tools":{"new":3,"old":3},"version":1}"#]]
        .assert_eq(&ferry::catalog::canonical(report).to_string());
}

/// Composite tools are diffed as operations' tools are: added and gone by name (with the
/// workflow they run), changed by part (`description`, `annotations` with their basis,
/// `steps`, `plan`). `v2.yaml` chooses a third workflow from a second version of the Arazzo
/// document, which renames a step, rewords a summary and a payload, and asserts a hint.
#[test]
fn composite_tools_differ_by_tool_and_part() {
    check_in(
        "arazzo",
        &["ferry.yaml", "v2.yaml"],
        expect![[r#"
            exit 1
            ~ adopt_pet: annotations, request
            + listAvailable (workflow listAvailable)
            ~ showPet: _meta, description, steps, request
            1 added, 0 removed, 2 changed, 0 settings changed
        "#]],
    );
    check_in(
        "arazzo",
        &["v2.yaml", "ferry.yaml"],
        expect![[r#"
            exit 1
            - listAvailable (workflow listAvailable)
            ~ adopt_pet: annotations, request
            ~ showPet: _meta, description, steps, request
            0 added, 1 removed, 2 changed, 0 settings changed
        "#]],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(["diff", "--format", "json", "ferry.yaml", "v2.yaml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/arazzo"))
        .env_remove("FERRY_CONFIG")
        .output()
        .expect("run ferry");
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    expect![[r#"[{"change":"changed","tool":"adopt_pet","parts":["annotations","request"]},{"change":"added","tool":"listAvailable","workflow":"listAvailable"},{"change":"changed","tool":"showPet","parts":["_meta","description","steps","request"]}]"#]].assert_eq(&report["changes"].to_string());
    assert_eq!(report["workflows"], serde_json::json!({"old": 2, "new": 3}));
}
