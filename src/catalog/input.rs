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
