use serde_json::{Value, json};

use super::{SchemaBuilder, Translations};
use crate::openapi::{Document, FileId};

/// All that translating a `$ref` to `root` made: the schema, its `$defs`, and what was said.
fn made(document: &Document, root: &str, translations: &mut Translations) -> String {
    let mut builder = SchemaBuilder::with_translations(document, Some(translations));
    let value = builder.schema(FileId(0), "/root", &json!({"$ref": root}));
    let said = format!(
        "{value}\nerrors {:?}\npatterns {:?}\nwarnings {:?}\ncycles {:?}",
        builder.errors,
        builder.patterns,
        builder.warnings,
        builder.cycles()
    );
    format!("{said}\ndefs {}", Value::Object(builder.into_defs()))
}

/// Each root translated as the next tool of one compile (one memo for all), and each as if
/// it were the first (a memo of its own).
fn both_ways(document: &Document, roots: &[String]) -> (Vec<String>, Vec<String>) {
    let mut shared = Translations::default();
    let together = roots
        .iter()
        .map(|root| made(document, root, &mut shared))
        .collect();
    let alone = roots
        .iter()
        .map(|root| made(document, root, &mut Translations::default()))
        .collect();
    (together, alone)
}

#[test]
fn a_schema_taken_from_the_memo_is_the_one_translated_again() {
    let mut schemas = json!({
        // Closed: a pattern, a keyword left out with a warning, nullable and nesting.
        "Leaf": {
            "type": "object",
            "nullable": true,
            "properties": {
                "code": {"type": "string", "pattern": "^[a-z]+$", "minLength": -1},
                "inner": {"type": "object", "properties": {"deep": {"type": "integer"}}},
            },
        },
        // Situated: each copy reads what its tool met (references, an anchor).
        "Holder": {
            "type": "object",
            "properties": {
                "leaf": {"$ref": "#/components/schemas/Leaf"},
                "again": {"$ref": "#/components/schemas/Leaf"},
                // Data that looks like a reference stays as written.
                "const": {"const": {"$ref": "#/$defs/Leaf"}},
            },
        },
        "Anchored": {"$anchor": "here", "type": "string"},
        "Anchored2": {"$anchor": "here", "type": "integer"},
        "Anchors": {"anyOf": [
            {"$ref": "#/components/schemas/Anchored"},
            {"$ref": "#/components/schemas/Anchored2"},
        ]},
        "Broken": {"type": "object", "properties": {"bad": 3}},
        // Another schema whose place ends in `Leaf`: a tool that has both names them apart,
        // whichever comes first.
        "Other": {"properties": {"Leaf": {"type": "integer"}}},
        "Renamed": {"properties": {
            "first": {"$ref": "#/components/schemas/Other/properties/Leaf"},
            "then": {"$ref": "#/components/schemas/Holder"},
        }},
        // Recursion, through one schema and through two.
        "Tree": {"properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}},
        "Ping": {"properties": {"pong": {"$ref": "#/components/schemas/Pong"}, "leaf": {"$ref": "#/components/schemas/Leaf"}}},
        "Pong": {"properties": {"ping": {"$ref": "#/components/schemas/Ping"}, "tree": {"$ref": "#/components/schemas/Tree"}}},
        // Reached shallow first, then at the end of every chain: its reference sits deep.
        "Mid": {"properties": {"x": {"properties": {"leaf": {"$ref": "#/components/schemas/Leaf"}}}}},
        "Both": {"properties": {
            "first": {"$ref": "#/components/schemas/Other/properties/Leaf"},
            "then": {"$ref": "#/components/schemas/Leaf"},
        }},
    });
    // Chains that reach `Mid` (and `Leaf`) ever deeper through references, up to and past
    // the limit on nesting through `$ref`s: a copy kept from a shallow place must not hide
    // that limit.
    for length in 52..68 {
        for link in 0..length {
            let next = if link + 1 == length {
                "#/components/schemas/Mid".to_string()
            } else {
                format!("#/components/schemas/Chain{length}_{}", link + 1)
            };
            schemas[format!("Chain{length}_{link}")] =
                json!({"type": "object", "properties": {"next": {"$ref": next}}});
        }
    }
    let document = Document::from_value(json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": schemas},
    }))
    .expect("a document");
    let mut roots: Vec<String> = [
        "Leaf",
        "Holder",
        "Anchored2",
        "Anchored",
        "Anchors",
        "Broken",
        "Renamed",
        "Tree",
        "Ping",
        "Pong",
        "Renamed",
        "Both",
        "Leaf",
        "Anchored",
        "Broken",
    ]
    .iter()
    .map(|name| format!("#/components/schemas/{name}"))
    .collect();
    roots.push("#/components/schemas/Mid".to_string());
    roots.extend(
        (52..68)
            .rev()
            .map(|length| format!("#/components/schemas/Chain{length}_0")),
    );
    roots.push("#/components/schemas/Holder".to_string());
    let (together, alone) = both_ways(&document, &roots);
    for ((root, together), alone) in roots.iter().zip(&together).zip(&alone) {
        assert_eq!(together, alone, "{root}");
    }
    // The cases the memo must not change are there to be met.
    assert!(
        alone[0].contains(r#"patterns ["^[a-z]+$"]"#),
        "{}",
        alone[0]
    );
    assert!(alone[0].contains("minLength"), "{}", alone[0]);
    assert!(
        alone[6].contains(r##""then":{"$ref":"#/$defs/Holder"}"##)
            && alone[6].contains(r##""leaf":{"$ref":"#/$defs/Leaf_2"}"##)
            && alone[6].contains(r##""const":{"$ref":"#/$defs/Leaf"}"##),
        "{}",
        alone[6]
    );
    assert!(
        alone[11].contains(r##""then":{"$ref":"#/$defs/Leaf_2"}"##),
        "{}",
        alone[11]
    );
    let limited = alone
        .iter()
        .filter(|made| made.contains("nested more than"))
        .count();
    assert!(
        (1..16).contains(&limited),
        "{limited} of 16 chains reach the limit"
    );
}
