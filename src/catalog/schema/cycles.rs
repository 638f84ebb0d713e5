//! Cycles of `$defs` entries that refer to each other through `$ref` and the in-place
//! keywords alone, which would make validation loop for ever ([`super::SchemaBuilder::cycles`]).

use serde_json::{Map, Value};

/// Keywords that apply their subschemas to the very value their schema is judging (unlike
/// `properties` or `items`, which judge a part of it): a cycle of references through these
/// alone never reaches a smaller value, so validating against it never ends.
const IN_PLACE_KEYWORDS: &[&str] = &["not", "if", "then", "else"];
const IN_PLACE_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAP_KEYWORDS: &[&str] = &["dependentSchemas"];

/// The `$defs` names a translated schema refers to by `$ref` at its own place: through the
/// in-place keywords, not under `properties`, `items` and the like.
pub(super) fn in_place_references(schema: &Value, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
    {
        out.push(name.replace("~1", "/").replace("~0", "~"));
    }
    for (key, value) in map {
        let key = key.as_str();
        if IN_PLACE_KEYWORDS.contains(&key) {
            in_place_references(value, out);
        } else if IN_PLACE_LIST_KEYWORDS.contains(&key) {
            for item in value.as_array().into_iter().flatten() {
                in_place_references(item, out);
            }
        } else if IN_PLACE_MAP_KEYWORDS.contains(&key) {
            for item in value.as_object().into_iter().flat_map(Map::values) {
                in_place_references(item, out);
            }
        }
    }
}

/// Cycles in a graph given as each node's successors, found in one depth-first walk (linear
/// in nodes and edges, without recursion): one per edge back into the walk's current path,
/// skipping those through a node already reported, so a tangle of schemas is reported once
/// rather than once per loop in it. Each cycle lists its nodes from the one entered first.
pub(super) fn cycles(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Unseen,
        /// On the current path, at this position.
        OnPath(usize),
        Finished,
    }
    let mut marks = vec![Mark::Unseen; successors.len()];
    let mut reported = vec![false; successors.len()];
    let mut found = Vec::new();
    for start in 0..successors.len() {
        if marks[start] != Mark::Unseen {
            continue;
        }
        // Each node on the path, with how many of its successors have been followed.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::OnPath(0);
        while let Some(&(node, followed)) = path.last() {
            let Some(&next) = successors[node].get(followed) else {
                marks[node] = Mark::Finished;
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match marks[next] {
                Mark::Unseen => {
                    marks[next] = Mark::OnPath(path.len());
                    path.push((next, 0));
                }
                Mark::OnPath(at) => {
                    let cycle: Vec<usize> = path[at..].iter().map(|&(node, _)| node).collect();
                    if !cycle.iter().any(|&node| reported[node]) {
                        for &node in &cycle {
                            reported[node] = true;
                        }
                        found.push(cycle);
                    }
                }
                Mark::Finished => {}
            }
        }
    }
    found
}
