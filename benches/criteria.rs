//! What evaluating a step's criteria costs once its answer is in: `evaluate::all_hold` on a
//! `simple` condition, a `regex` pattern and an RFC 9535 `jsonpath` query, each against a
//! JSON body of 100 items, read from a document the way `arazzo::parse` reads it (parsed and
//! compiled once, before the loop).
//!
//! `cargo bench --bench criteria [-- CASE]` (release; CASE runs only the cases whose name
//! holds it). `FERRY_CRITERIA_CALLS=N` sets the evaluations per case (default 200,000).

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use ferry::arazzo::{self, Context, Exchange, evaluate};
use serde_json::{Value, json};

const DOCUMENT: &str = r#"{
  "arazzo": "1.0.1",
  "info": {"title": "criteria", "version": "1"},
  "sourceDescriptions": [{"name": "api", "url": "./api.yaml", "type": "openapi"}],
  "workflows": [{"workflowId": "w", "steps": [
    {"stepId": "simple", "operationId": "op", "successCriteria": [
      {"condition": "$statusCode == 200 && $response.body#/items/99/status == 'open'"}]},
    {"stepId": "regex", "operationId": "op", "successCriteria": [
      {"context": "$response.header.etag", "condition": "^\"v-\\d+\"$", "type": "regex"}]},
    {"stepId": "jsonpath", "operationId": "op", "successCriteria": [
      {"context": "$response.body", "condition": "$.items[?@.status == 'open']", "type": "jsonpath"}]},
    {"stepId": "descendant", "operationId": "op", "successCriteria": [
      {"context": "$response.body", "condition": "$..[?@ == 'open']", "type": "jsonpath"}]}
  ]}]
}"#;

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let calls: usize = std::env::var("FERRY_CRITERIA_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let document: Value = serde_json::from_str(DOCUMENT).expect("document is JSON");
    let (arazzo, diagnostics) = arazzo::parse("criteria.json", &document);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    // The last item is the only open one: a query that stops at the first match still walks
    // every item.
    let items: Vec<Value> = (0..100)
        .map(|id| json!({"id": id, "status": if id == 99 { "open" } else { "closed" }}))
        .collect();
    let exchange = Exchange {
        status: 200,
        response_headers: vec![("etag".into(), "\"v-42\"".into())],
        response_body: Some(json!({"items": items, "total": 100})),
        ..Exchange::default()
    };
    let steps = HashMap::new();
    let context = Context {
        inputs: &Value::Null,
        steps: &steps,
        outputs: None,
        exchange: Some(&exchange),
    };
    for step in &arazzo.workflows[0].steps {
        if only.as_deref().is_some_and(|only| !step.id.contains(only)) {
            continue;
        }
        assert!(
            evaluate::all_hold(&step.success_criteria, &context),
            "{}",
            step.id
        );
        let started = Instant::now();
        for _ in 0..calls {
            black_box(evaluate::all_hold(
                black_box(&step.success_criteria),
                &context,
            ));
        }
        let each = started.elapsed().as_nanos() / calls as u128;
        println!("{:<12} {each:>8} ns per evaluation", step.id);
    }
}
