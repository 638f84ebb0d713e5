//! Argument validation against a tool's input schema, before anything is sent upstream.
//!
//! Schemas are compiled on a tool's first call with the linear-time `regex` engine, so a
//! pattern taken from an API description cannot make validation backtrack for long. Patterns
//! that engine cannot compile were listed by the catalog as unchecked; they are taken out of
//! the copy used for validation (and stay in the schema clients see).

use std::fmt::Write;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

/// Compiles `schema` without the `pattern` keywords at `unchecked` (JSON pointers).
pub(super) fn compile(schema: &Value, unchecked: &[String]) -> Result<Validator, String> {
    let mut schema = schema.clone();
    for pointer in unchecked {
        remove_pointer(&mut schema, pointer);
    }
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(PatternOptions::regex())
        .build(&schema)
        .map_err(|error| error.to_string())
}

/// One line per problem, naming the argument by JSON pointer and saying what was expected and
/// what was given; `None` when the arguments are valid.
pub(super) fn problems(validator: &Validator, arguments: &Value) -> Option<String> {
    if validator.is_valid(arguments) {
        return None;
    }
    let mut text = String::from("invalid arguments; nothing was sent to the API:");
    for error in validator.iter_errors(arguments) {
        let path = error.instance_path().to_string();
        let at = if path.is_empty() {
            "(arguments)".to_owned()
        } else {
            path
        };
        let _ = write!(text, "\n- {at}: {error}");
    }
    Some(text)
}

fn remove_pointer(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    let target = if parent.is_empty() {
        Some(value)
    } else {
        value.pointer_mut(parent)
    };
    if let Some(Value::Object(object)) = target {
        object.remove(&key);
    }
}
