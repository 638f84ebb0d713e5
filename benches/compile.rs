//! Compiles the GitHub document (1,223 operations) with every operation chosen, from reading
//! the file to the serialized `tools/list` array, and reports time and peak memory. Then
//! compiles a curation of three operations both ways, the full compile `ferry check` runs and
//! the chosen-only one `ferry serve` runs (the compile step alone).
//!
//! `cargo bench --bench compile` (release). Target on a 2-core machine: under 300 ms and
//! under 200 MiB. The document is the one `scripts/setup-tests.sh` installs from npm
//! (`@octokit/openapi`); set `FERRY_BENCH_DOC` to measure another.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ferry::catalog;
use ferry::curation::{Curation, ToolEntry};
use ferry::openapi;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let path = std::env::var_os("FERRY_BENCH_DOC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/e2e/node_modules/@octokit/openapi/generated/api.github.com.json")
        });
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup-tests.sh, or set FERRY_BENCH_DOC",
        path.display()
    );
    let rounds: usize = std::env::var("FERRY_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10)
        .max(1);
    let mut times = Vec::with_capacity(rounds);
    let mut size = 0;
    let mut tools = 0;
    let mut labels = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let document = openapi::load(&path).expect("document loads");
        let curation = Curation {
            all: true,
            ..Curation::default()
        };
        let (catalog, _) = catalog::compile(&document, &curation);
        let bytes = serde_json::to_vec(&catalog::tools_json(&catalog)).expect("serializes");
        times.push(start.elapsed());
        size = bytes.len();
        tools = catalog.tools.len();
        labels = catalog
            .operations
            .iter()
            .map(|report| format!("{} {}", report.method, report.path))
            .collect();
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "compile {}: {tools} tools, tools/list {:.1} MiB; min {}, median {}, max {}; peak memory {}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        size as f64 / (1024.0 * 1024.0),
        ms(times[0]),
        ms(median),
        ms(times[times.len() - 1]),
        peak_memory(),
    );

    // Three operations, first, middle and last, as a small curation would choose them.
    let document = openapi::load(&path).expect("document loads");
    let picks = [0, labels.len() / 2, labels.len().saturating_sub(1)];
    let curation = Curation {
        tools: labels
            .iter()
            .enumerate()
            .filter(|(index, _)| picks.contains(index))
            .map(|(_, label)| ToolEntry {
                selector: label.clone(),
                enabled: true,
                ..ToolEntry::default()
            })
            .collect(),
        ..Curation::default()
    };
    let mut full = Vec::with_capacity(rounds);
    let mut chosen = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let (catalog, _) = catalog::compile(&document, &curation);
        full.push(start.elapsed());
        let start = Instant::now();
        let (served, _) = catalog::compile_chosen(&document, &curation);
        chosen.push(start.elapsed());
        assert_eq!(served.tools.len(), catalog.tools.len());
        tools = served.tools.len();
    }
    full.sort();
    chosen.sort();
    println!(
        "compile {tools} of {} operations: full min {}, median {}; chosen-only min {}, median {}",
        labels.len(),
        ms(full[0]),
        ms(full[full.len() / 2]),
        ms(chosen[0]),
        ms(chosen[chosen.len() / 2]),
    );
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// The process's peak resident set size, from /proc (Linux).
fn peak_memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| format!("{:.0} MiB", kb / 1024.0))
        .unwrap_or_else(|| "unknown".to_string())
}
