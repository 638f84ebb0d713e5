//! A tool's input schema as the catalog holds it: the JSON text `tools/list` serves, every
//! object's keys sorted, written once at compile from the tree the builder made.
//!
//! A schema tree takes several times its text's memory (5,000 synthetic operations: 57 MiB of
//! trees, 7.6 MB of text), and once compiled only three readers need the schema: `tools/list`
//! and the lock, which want this very text, and argument validation, which compiles its own
//! form on a tool's first call. The tree is dropped as soon as the tool is built, so a large
//! document's schemas are never all held as trees at once.

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Sorted;

/// The deepest nesting of arrays and objects a served schema may have: what serde_json (and
/// ferry's validator with it) reads back. Deeper, the text could be written but not read
/// again, by ferry or by a client whose JSON reader has the same guard.
pub const MAX_NESTING: usize = 127;

/// Why `schema` cannot be served: it nests arrays and objects deeper than [`MAX_NESTING`].
pub fn too_deep(schema: &Value) -> Option<String> {
    /// Whether `value` nests more than `levels` deep (a scalar nests none, an array or object
    /// one more than its deepest member); no deeper than `levels` is looked.
    fn deeper_than(value: &Value, levels: usize) -> bool {
        match value {
            Value::Object(map) => levels == 0 || map.values().any(|v| deeper_than(v, levels - 1)),
            Value::Array(items) => levels == 0 || items.iter().any(|v| deeper_than(v, levels - 1)),
            _ => false,
        }
    }
    deeper_than(schema, MAX_NESTING).then(|| {
        format!(
            "the input schema nests arrays and objects more than {MAX_NESTING} deep, deeper than \
             JSON readers such as ferry's own read back: no client could be sure to read it"
        )
    })
}

/// Canonical compact JSON: what [`super::canonical`] makes of the schema, as text.
#[derive(Clone)]
pub struct InputSchema(Box<RawValue>);

impl InputSchema {
    /// The text of `schema` with every object's keys sorted.
    pub fn new(schema: &Value) -> InputSchema {
        // Serializing a `Value` cannot fail: its keys are strings.
        match serde_json::value::to_raw_value(&Sorted(schema)) {
            Ok(text) => InputSchema(text),
            Err(_) => InputSchema::none(),
        }
    }

    /// No schema (`null`): a tool kept only for its report (`compile_report`), or one step
    /// of a workflow, whose arguments the workflow's own schema checks.
    pub fn none() -> InputSchema {
        InputSchema(RawValue::NULL.to_owned())
    }

    pub fn is_none(&self) -> bool {
        self.as_str() == "null"
    }

    /// The JSON text: compact, keys sorted.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The schema as a tree, parsed from the text (its keys in sorted order).
    pub fn to_value(&self) -> Value {
        // The text was written from a `Value`, so it parses.
        serde_json::from_str(self.as_str()).unwrap_or(Value::Null)
    }
}

impl From<Value> for InputSchema {
    fn from(schema: Value) -> InputSchema {
        InputSchema::new(&schema)
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &InputSchema) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for InputSchema {}

/// Written as the text itself, into any serializer: JSON writers copy it, others (such as
/// `serde_json::to_value`) read it as the value it is.
impl Serialize for InputSchema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl fmt::Display for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{InputSchema, MAX_NESTING, too_deep};

    /// An object schema whose one property holds `levels - 1` arrays inside each other.
    fn nested(levels: usize) -> Value {
        let mut value = json!(1);
        for _ in 1..levels {
            value = Value::Array(vec![value]);
        }
        json!({ "default": value })
    }

    #[test]
    fn a_schema_is_served_as_deep_as_it_reads_back_and_no_deeper() {
        let deepest = nested(MAX_NESTING);
        assert_eq!(too_deep(&deepest), None);
        let text = InputSchema::new(&deepest);
        assert_eq!(text.to_value(), deepest, "read back whole");
        let deeper = nested(MAX_NESTING + 1);
        assert!(too_deep(&deeper).is_some_and(|why| why.contains("127")));
        let text = InputSchema::new(&deeper);
        assert!(
            serde_json::from_str::<Value>(text.as_str()).is_err(),
            "what is refused could not be read back"
        );
    }
}
