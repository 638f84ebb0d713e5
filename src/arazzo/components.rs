//! Reading a document's `components` and what refers to them: each Reusable Object
//! (`$components.parameters.x`, `.successActions.x`, `.failureActions.x`) and `$ref` to
//! `#/components/inputs/x` is replaced by what it names, read once where it is written, so a
//! run never sees a reference; inputs that name each other are inlined within a budget.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Components, INLINED_INPUTS_LIMIT, Reader, criteria, expression};
use crate::openapi::escape_token;

/// The Components Object: `inputs` kept as written, the parameters and actions read as a
/// step's are, so a reference to one is the value it names.
pub(super) fn read(reader: &mut Reader<'_>, components: &Map<String, Value>) {
    let each = |reader: &mut Reader<'_>, key: &str| -> Vec<(String, &Value, String)> {
        let Some(written) = reader.object_at(components, key, "/components", false) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (name, value) in written {
            let pointer = format!("/components/{key}/{}", escape_token(name));
            if !expression::is_name(name) {
                reader.error(
                    &pointer,
                    format!(
                        "component name {name:?} is not a name (letters, digits, `.`, `-`, `_`)"
                    ),
                );
            } else if value.get("reference").is_some() {
                reader.error(
                    &format!("{pointer}/reference"),
                    "a component is written in full: it cannot be a `reference` itself",
                );
            } else {
                found.push((name.clone(), value, pointer));
            }
        }
        found
    };
    for (name, schema, pointer) in each(reader, "inputs") {
        if schema.is_object() {
            reader.components.inputs.insert(name, schema.clone());
        } else {
            reader.error(&pointer, "a reusable input must be a JSON Schema object");
        }
    }
    for (name, value, pointer) in each(reader, "parameters") {
        let parameter = reader.parameter_object(value, pointer);
        reader.components.parameters.insert(name, parameter);
    }
    for (name, value, pointer) in each(reader, "successActions") {
        let action = criteria::action(reader, value, pointer, true);
        reader.components.success_actions.insert(name, action);
    }
    for (name, value, pointer) in each(reader, "failureActions") {
        let action = criteria::action(reader, value, pointer, false);
        reader.components.failure_actions.insert(name, action);
    }
}

/// A Reusable Object's `reference`, `$components.KIND.NAME`, resolved to what `found`
/// holds under that name (`what` names it, for diagnostics).
pub(super) fn resolve<T: Clone>(
    reader: &mut Reader<'_>,
    object: &Map<String, Value>,
    pointer: &str,
    kind: &str,
    what: &str,
    found: impl Fn(&Components) -> &HashMap<String, Option<T>>,
) -> Option<T> {
    let written = reader.string_at(object, "reference", pointer, true)?;
    let at = format!("{pointer}/reference");
    let name = written
        .strip_prefix("$components.")
        .and_then(|rest| rest.strip_prefix(kind))
        .and_then(|rest| rest.strip_prefix('.'))
        .filter(|name| expression::is_name(name));
    let Some(name) = name else {
        reader.error(
            &at,
            format!("{written:?} is not a reference to a {what} (write `$components.{kind}.NAME`)"),
        );
        return None;
    };
    match found(&reader.components).get(name) {
        Some(Some(component)) => Some(component.clone()),
        Some(None) => {
            let message =
                format!("`components.{kind}.{name}` could not be read (see its diagnostics)");
            reader.error(&at, message);
            None
        }
        None => {
            let mut known: Vec<&str> = found(&reader.components)
                .keys()
                .map(String::as_str)
                .collect();
            known.sort_unstable();
            let known = if known.is_empty() {
                "it has none".to_string()
            } else {
                format!("it has: {}", known.join(", "))
            };
            let message = format!("no {what} is named {name:?} in `components.{kind}` ({known})");
            reader.error(&at, message);
            None
        }
    }
}

/// `schema` with every `$ref: '#/components/inputs/NAME'` in it replaced by that schema
/// (as one of an `allOf` when other keywords stand beside it). Any other `$ref` is left
/// for the schema's translation to report.
pub(super) fn inline_inputs(
    reader: &mut Reader<'_>,
    schema: &Value,
    pointer: &str,
    within: &mut Vec<String>,
    budget: &mut usize,
) -> Value {
    let object = match schema {
        Value::Object(object) => object,
        Value::Array(items) => {
            let items = items.iter().enumerate().map(|(index, item)| {
                inline_inputs(reader, item, &format!("{pointer}/{index}"), within, budget)
            });
            return Value::Array(items.collect());
        }
        other => return other.clone(),
    };
    let mut inlined = Map::new();
    for (key, item) in object {
        let item = match key.as_str() {
            "$ref" => continue,
            // Values, not schemas: a `$ref` in them is data.
            "enum" | "const" | "default" | "examples" | "example" => item.clone(),
            _ => {
                let pointer = format!("{pointer}/{}", escape_token(key));
                inline_inputs(reader, item, &pointer, within, budget)
            }
        };
        inlined.insert(key.clone(), item);
    }
    let Some(reference) = object.get("$ref") else {
        return Value::Object(inlined);
    };
    let at = format!("{pointer}/$ref");
    let Some(name) = reference
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/inputs/"))
    else {
        inlined.insert("$ref".to_string(), reference.clone());
        return Value::Object(inlined);
    };
    let Some(component) = reader.components.inputs.get(name).cloned() else {
        let message = format!("no input schema is named {name:?} in `components.inputs`");
        reader.error(&at, message);
        return Value::Object(inlined);
    };
    if within.iter().any(|outer| outer == name) {
        let message = format!(
            "`components.inputs.{name}` refers to itself: a tool's input schema cannot be endless"
        );
        reader.error(&at, message);
        return Value::Object(inlined);
    }
    if *budget == 0 {
        let message = format!(
            "the inputs inline more than {INLINED_INPUTS_LIMIT} `components.inputs` schemas"
        );
        reader.error(&at, message);
        return Value::Object(inlined);
    }
    *budget -= 1;
    within.push(name.to_string());
    let component_pointer = format!("/components/inputs/{}", escape_token(name));
    let component = inline_inputs(reader, &component, &component_pointer, within, budget);
    within.pop();
    if inlined.is_empty() {
        return component;
    }
    let mut all = vec![component];
    if let Some(Value::Array(others)) = inlined.remove("allOf") {
        all.extend(others);
    }
    inlined.insert("allOf".to_string(), Value::Array(all));
    Value::Object(inlined)
}
