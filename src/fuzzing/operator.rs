//! The operator's side: an OpenAPI document (with the files it refers to), a curation file
//! and an Arazzo document, each read and compiled as `ferry check` and `ferry serve` do.

use std::path::PathBuf;

use super::fixed_document;
use crate::catalog;
use crate::curation::{self, Curation};
use crate::mcp::{Server, ServerOptions};
use crate::openapi::{self, Document, LoadOptions};

/// A tree of files: the root document first, then each further file after a line
/// `#> relative/name.yaml`. They are written to a scratch directory and loaded as
/// `ferry check` loads them; a loaded document is compiled with every operation chosen, and
/// the compiled tools are prepared for serving.
pub fn openapi_load(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut files = text.split("\n#> ");
    let root = files.next().unwrap_or_default();
    let dir = scratch_dir("openapi");
    let root_name = if root.trim_start().starts_with('{') {
        "openapi.json"
    } else {
        "openapi.yaml"
    };
    let mut written = vec![(root_name.to_string(), root.to_string())];
    for file in files {
        let (name, content) = file.split_once('\n').unwrap_or((file, ""));
        if let Some(name) = safe_name(name.trim()) {
            written.push((name, content.to_string()));
        }
    }
    for (name, content) in &written {
        let path = dir.join(name);
        if let Some(parent) = path.parent()
            && std::fs::create_dir_all(parent).is_err()
        {
            continue;
        }
        // A name already taken as a directory, say, is simply not there to load.
        let _ = std::fs::write(&path, content);
    }
    let options = LoadOptions {
        max_file_bytes: 1 << 20,
        max_total_bytes: 4 << 20,
        max_files: 64,
        ..LoadOptions::default()
    };
    let loaded = openapi::load_with(&dir.join(root_name), &options);
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(document) = loaded else {
        return;
    };
    for problem in document.problems() {
        let _ = problem.error.to_string();
    }
    let curation = Curation {
        all: true,
        ..Curation::default()
    };
    compile_both_ways(&document, &curation);
}

/// An Arazzo document (YAML or JSON), read, every workflow chosen and compiled against
/// [`DOCUMENT`], and every expression, payload and condition evaluated against an exchange
/// made of the input: nothing panics, and each expression written back reads as itself.
pub fn arazzo(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = openapi::parse_with(text, "fuzz.arazzo.yaml", &LoadOptions::default()) else {
        return;
    };
    let (document, diagnostics) = crate::arazzo::parse("fuzz.arazzo.yaml", &value);
    for diagnostic in &diagnostics {
        let _ = diagnostic.to_string();
    }
    let exchange = crate::arazzo::Exchange {
        url: "http://127.0.0.1/pets".into(),
        method: "GET".into(),
        request_headers: vec![("x-a".into(), "1".into())],
        query: vec![("q".into(), "2".into())],
        path: vec![("id".into(), "3".into())],
        request_body: Some(value.clone()),
        status: 200,
        response_headers: vec![("etag".into(), "\"e\"".into())],
        response_body: Some(value.clone()),
    };
    let steps = std::collections::HashMap::new();
    let context = crate::arazzo::Context {
        inputs: &value,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    let round_trips = |expression: &crate::arazzo::Expression| {
        let written = expression.to_string();
        assert_eq!(
            crate::arazzo::expression::parse(&written).as_ref(),
            Ok(expression),
            "{written:?} does not read back as itself"
        );
        let _ = crate::arazzo::evaluate::value(expression, &context);
    };
    for workflow in &document.workflows {
        for output in &workflow.outputs {
            round_trips(&output.value);
        }
        for step in &workflow.steps {
            let templates = step.parameters.iter().map(|p| &p.value).chain(&step.body);
            for template in templates {
                template.expressions().into_iter().for_each(round_trips);
                let _ = crate::arazzo::evaluate::fill(template, &context);
            }
            for output in &step.outputs {
                round_trips(&output.value);
            }
            let actions = step.on_success.iter().chain(&step.on_failure);
            let conditions = step
                .success_criteria
                .iter()
                .chain(actions.flat_map(|action| &action.criteria));
            for condition in conditions {
                condition.expressions().into_iter().for_each(round_trips);
                let _ = crate::arazzo::evaluate::holds(condition, &context);
            }
            let _ = crate::arazzo::evaluate::choose(&step.on_failure, &context);
        }
    }
    // Every workflow chosen, against the fixed document.
    let mut curation = Curation {
        openapi: Some("openapi.json".into()),
        ..Curation::default()
    };
    curation.workflows = Some(curation::Workflows {
        document: "fuzz.arazzo.yaml".into(),
        tools: document
            .workflows
            .iter()
            .map(|workflow| curation::WorkflowEntry {
                workflow: workflow.id.clone(),
                ..curation::WorkflowEntry::default()
            })
            .collect(),
    });
    let (mut catalog, _) = catalog::compile_chosen(fixed_document(), &curation);
    let file = openapi::SourceFile {
        name: "fuzz.arazzo.yaml".into(),
        value,
    };
    for diagnostic in catalog::add_workflows(&mut catalog, fixed_document(), &curation, &file) {
        let _ = diagnostic.to_string();
    }
    for tool in &catalog.tools {
        if let Some(workflow) = tool.workflow() {
            assert_eq!(workflow.plans.len(), workflow.workflow.steps.len());
        }
        let _ = tool.to_json();
    }
    let _ = Server::new(&catalog, None, ServerOptions::default());
}

/// A curation file, read and compiled against [`DOCUMENT`]: `compile` and `compile_chosen`
/// agree on the tools.
pub fn curation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((curation, diagnostics)) = curation::parse(text, "ferry.yaml", PathBuf::from("."))
    else {
        return;
    };
    for diagnostic in &diagnostics {
        let _ = diagnostic.to_string();
    }
    // Each API of the file (every one on the fixed document), joined as `ferry serve`
    // joins them, and each endpoint's toolset prepared as it would be served.
    let parts = curation
        .api_curations()
        .iter()
        .map(|part| compile_both_ways(fixed_document(), part))
        .collect();
    let (mut joined, _) = catalog::join(&curation, parts);
    let _ = catalog::endpoints::resolve(&mut joined, &curation);
    for endpoint in &joined.endpoints {
        let served = joined
            .endpoint(&endpoint.id)
            .expect("a resolved endpoint has a catalog");
        assert!(
            served
                .tools
                .iter()
                .all(|tool| joined.tools.iter().any(|known| known.name == tool.name)),
            "an endpoint serves only the catalog's tools"
        );
        let _ = Server::new(&served, None, ServerOptions::default());
    }
}

/// Compiles `document` with `curation` both ways ferry does, checks they agree, prepares
/// the result for serving as `ferry serve` would, and returns it.
fn compile_both_ways(document: &Document, curation: &Curation) -> catalog::Catalog {
    let (all, _) = catalog::compile(document, curation);
    let (chosen, _) = catalog::compile_chosen(document, curation);
    assert_eq!(
        catalog::tools_json(&all),
        catalog::tools_json(&chosen),
        "compile and compile_chosen disagree on the tools"
    );
    let _ = Server::new(&chosen, None, ServerOptions::default());
    chosen
}

/// A relative file name made of plain parts, or `None`.
fn safe_name(name: &str) -> Option<String> {
    let plain = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"._-".contains(&byte))
    };
    let parts: Vec<&str> = name.split('/').collect();
    (parts.len() <= 4 && parts.iter().all(|part| plain(part))).then(|| name.to_string())
}

/// An empty directory of this process's and thread's own under the system's temporary
/// directory.
fn scratch_dir(purpose: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ferry-fuzz-{purpose}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    dir
}
