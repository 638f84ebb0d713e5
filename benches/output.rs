//! What checking an answer against its tool's output schema costs (issue 29): the validator
//! a served tool compiles once, run on 2xx JSON answers of about 1 KB, 100 KB and 1 MB, beside
//! what parsing the same body costs (which every JSON answer pays already).
//!
//! `cargo bench --bench output` (release). The schema is GitHub's issue shape in small: nested
//! objects, arrays, formats, nullable members, a `$ref`; the answer a list of such issues.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "$defs": {
            "User": {"type": "object", "required": ["login", "id", "url"],
                "properties": {"login": {"type": "string"}, "id": {"type": "integer"},
                    "url": {"type": "string", "format": "uri"}, "site_admin": {"type": "boolean"}}},
            "Label": {"type": "object", "required": ["id", "name"],
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                    "color": {"type": ["string", "null"]}, "default": {"type": "boolean"}}}
        },
        "type": "array",
        "items": {"type": "object", "required": ["id", "number", "title", "state", "user", "labels"],
            "properties": {
                "id": {"type": "integer"}, "number": {"type": "integer"},
                "title": {"type": "string"}, "body": {"type": ["string", "null"]},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "user": {"$ref": "#/$defs/User"},
                "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}},
                "assignees": {"type": ["array", "null"], "items": {"$ref": "#/$defs/User"}},
                "created_at": {"type": "string", "format": "date-time"},
                "comments": {"type": "integer", "minimum": 0}
            }}
    })
}

fn issue(n: usize) -> Value {
    json!({
        "id": 1_000_000 + n, "number": n, "title": format!("issue number {n}"),
        "body": "a body of a few words, as issues have", "state": "open",
        "user": {"login": "octocat", "id": 1, "url": "https://api.github.com/users/octocat", "site_admin": false},
        "labels": [{"id": 1, "name": "bug", "color": "f29513", "default": true}],
        "assignees": [], "created_at": "2011-04-22T13:33:48Z", "comments": 3
    })
}

/// A list of issues whose JSON text is about `bytes` long.
fn answer(bytes: usize) -> String {
    let one = issue(0).to_string().len() + 1;
    let items: Vec<Value> = (0..(bytes / one).max(1)).map(issue).collect();
    Value::Array(items).to_string()
}

#[allow(clippy::print_stdout)] // a benchmark reports on stdout
fn main() {
    let schema = ferry::catalog::InputSchema::new(&schema());
    let validator = ferry::mcp::output_validator(&schema).expect("compiles");
    for (case, bytes) in [("1 KB", 1_000), ("100 KB", 100_000), ("1 MB", 1_000_000)] {
        let text = answer(bytes);
        let value: Value = serde_json::from_str(&text).expect("JSON");
        assert!(validator.is_valid(&value), "the answer conforms");
        let runs = (20_000_000 / text.len()).clamp(20, 100_000);
        let parse = time(runs, || {
            black_box(serde_json::from_str::<Value>(black_box(&text)).expect("JSON"));
        });
        let check = time(runs, || {
            black_box(validator.is_valid(black_box(&value)));
        });
        println!(
            "{case:>6} ({} bytes): check {:>9.1} µs, parse {:>9.1} µs, check/parse {:.2}",
            text.len(),
            micros(check),
            micros(parse),
            check.as_secs_f64() / parse.as_secs_f64()
        );
    }
}

/// The mean time of one of `runs` runs of `work`.
fn time(runs: usize, mut work: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..runs {
        work();
    }
    start.elapsed() / runs as u32
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
