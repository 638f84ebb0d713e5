//! Argument validation against a tool's input schema, before anything is sent upstream.
//!
//! Schemas are compiled on a tool's first call with the linear-time `regex` engine, so a
//! pattern taken from an API description cannot make validation backtrack for long. Patterns
//! that engine cannot compile were listed by the catalog as unchecked; they are taken out of
//! the copy used for validation (and stay in the schema clients see).

use std::fmt::Write;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use crate::catalog::InputSchema;

/// Compiles `schema` without the `pattern` keywords (and `patternProperties` entries) whose
/// pattern is one of `unchecked`.
pub(super) fn compile(mut schema: Value, unchecked: &[String]) -> Result<Validator, String> {
    if !unchecked.is_empty() {
        strip_patterns(&mut schema, unchecked);
    }
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(PatternOptions::regex())
        .build(&schema)
        .map_err(|error| error.to_string())
}

/// [`compile`] from a tool's input schema as the catalog holds it: the validator a served
/// tool checks its arguments with.
pub fn validator(schema: &InputSchema, unchecked: &[String]) -> Result<Validator, String> {
    let schema = serde_json::from_str(&schema.text()).map_err(|error| error.to_string())?;
    compile(schema, unchecked)
}

/// The validator a tool's 2xx JSON answers are checked with, from its output schema as
/// served: compiled as input schemas are (every pattern of it compiled at compile time).
pub fn output_validator(schema: &InputSchema) -> Result<Validator, String> {
    validator(schema, &[])
}

/// What of `value` does not match the output schema `validator` checks, one line per
/// problem (the first few), each naming the place by JSON pointer; `None` when it matches.
pub(super) fn mismatch(validator: &Validator, value: &Value) -> Option<String> {
    /// Enough to say what went wrong without repeating it for each of a long list's items.
    const SHOWN: usize = 5;
    if validator.is_valid(value) {
        return None;
    }
    let mut text = String::new();
    for (index, error) in validator.iter_errors(value).enumerate() {
        if index == SHOWN {
            text.push_str("\n- …");
            break;
        }
        let path = error.instance_path().to_string();
        let at = if path.is_empty() {
            "(the answer)".to_owned()
        } else {
            path
        };
        let _ = write!(text, "\n- {at}: {}", truncated(&error.to_string(), 300));
    }
    Some(text)
}

/// `text`, cut to about `chars` characters: an error can quote a whole value.
fn truncated(text: &str, chars: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
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

/// Takes the `unchecked` patterns out of `schema`, wherever they are.
fn strip_patterns(schema: &mut Value, unchecked: &[String]) {
    match schema {
        Value::Object(map) => {
            if map
                .get("pattern")
                .and_then(Value::as_str)
                .is_some_and(|pattern| unchecked.iter().any(|u| u == pattern))
            {
                map.remove("pattern");
            }
            if let Some(Value::Object(entries)) = map.get_mut("patternProperties") {
                entries.retain(|pattern, _| !unchecked.contains(pattern));
            }
            map.values_mut()
                .for_each(|value| strip_patterns(value, unchecked));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|value| strip_patterns(value, unchecked)),
        _ => {}
    }
}
