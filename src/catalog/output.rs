//! A tool's output schema: its operation's documented success answer, declared as ferry
//! serves it.
//!
//! The 2xx responses' JSON schemas (a `2XX` range too; `default` is not a success) are
//! translated by the input schemas' rules ([`SchemaBuilder`]: 2020-12, `$ref`s as local
//! `$defs`, nothing fetched), one `anyOf` when several differ, then projected by the tool's
//! `fields:` and, for 2025-11-25, wrapped, both by [`ResultShape`], the description the
//! runtime shapes answers by. A schema is declared only where it says something: a 2xx JSON
//! response without a schema admits anything, and then nothing is declared. One that does
//! not validate against the 2020-12 meta-schema, nests deeper than a JSON reader reads back,
//! has a `$ref` cycle or a pattern the validator cannot compile is not declared either, with
//! a warning: the tool is served, its answers unchecked. Its patterns are written as clients
//! compile them ([`super::ecma`]), and one that cannot be is such a pattern.

use serde_json::{Map, Value};

use super::input::{InputSchema, MAX_NESTING, SharedDefs, too_deep};
use super::operation::{self, Operation};
use super::schema::SchemaBuilder;
use super::shape::{ResultShape, legacy_schema};
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::{Document, FileId, SpecVersion};

/// What a tool declares of its 2xx JSON answers, as each revision is given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSchema {
    /// What a 2026-07-28 client is given, and every answer is checked against.
    pub served: InputSchema,
    /// What a 2025-11-25 client is given where it differs (the root wrapped); `None`: the
    /// same.
    pub legacy: Option<InputSchema>,
}

impl OutputSchema {
    /// The schema of `revision_is_legacy`'s clients.
    pub fn for_legacy(&self, legacy: bool) -> &InputSchema {
        match (&self.legacy, legacy) {
            (Some(wrapped), true) => wrapped,
            _ => &self.served,
        }
    }
}

/// The output schema of `operation` shaped by `shape`: `Ok(None)` when its documented answers
/// say nothing a schema could hold; `Err` with why one could not be declared. `compiles`
/// says whether the validator compiles a pattern.
pub(super) fn declare(
    document: &Document,
    operation: &Operation<'_>,
    shape: &ResultShape,
    compiles: &mut dyn FnMut(&str) -> bool,
    held: &mut SharedDefs,
) -> Result<Option<OutputSchema>, String> {
    let mut builder = SchemaBuilder::new(document);
    let mut schemas: Vec<Value> = Vec::new();
    for (file, pointer, schema) in documented(document, operation)? {
        let translated = builder.schema(file, &pointer, schema);
        if translated == Value::Bool(true) || translated == Value::Object(Map::new()) {
            return Ok(None);
        }
        if !schemas.contains(&translated) {
            schemas.push(translated);
        }
    }
    if let Some((pointer, message)) = builder.errors.first() {
        return Err(format!("its response schema at {pointer}: {message}"));
    }
    if let Some((_, _, message)) = builder.cycles().first() {
        return Err(format!("its response schema has a {message}"));
    }
    if let Some(pattern) = builder.patterns.iter().find(|pattern| !compiles(pattern)) {
        return Err(format!(
            "its response schema has the pattern {pattern:?}, which the validator cannot compile"
        ));
    }
    let mut root = match schemas.len() {
        0 => return Ok(None),
        1 => schemas.remove(0),
        _ => Value::Object(Map::from_iter([(
            "anyOf".to_string(),
            Value::Array(schemas),
        )])),
    };
    let defs = builder.into_defs();
    if !defs.is_empty() {
        match &mut root {
            Value::Object(map) => {
                map.insert("$defs".to_string(), Value::Object(defs));
            }
            _ => return Ok(None),
        }
    }
    super::ecma::portable_patterns(&mut root)?;
    let served = match &shape.projection {
        Some(projection) => projection.schema(&root)?,
        None => root,
    };
    if served == Value::Bool(true) || served == Value::Object(Map::new()) {
        return Ok(None);
    }
    if let Err(error) = jsonschema::draft202012::meta::validate(&served) {
        return Err(format!(
            "its output schema would not be valid JSON Schema 2020-12 (at {}: {error})",
            error.instance_path()
        ));
    }
    let legacy = legacy_schema(&served);
    for schema in std::iter::once(&served).chain(&legacy) {
        if too_deep(schema).is_some() {
            return Err(format!(
                "its output schema nests arrays and objects more than {MAX_NESTING} deep"
            ));
        }
    }
    Ok(Some(OutputSchema {
        served: InputSchema::shared(&served, held),
        legacy: legacy.map(|legacy| InputSchema::shared(&legacy, held)),
    }))
}

/// A composite tool's output schema: the object of its workflow's outputs by name, as its
/// result holds them when the workflow runs to its end. Each output is typed only where its
/// expression's kind fixes the type (`$statusCode`, a number; `$method`, a string; an output
/// of an earlier step that is one of these), and admits any JSON otherwise; none is required,
/// since an output without a value in a run is left out; no other member is. A result holds
/// only the outputs named, so it keeps to this schema by construction. `None` for a workflow
/// with no outputs.
pub(super) fn of_workflow(workflow: &crate::arazzo::Workflow) -> Option<OutputSchema> {
    use crate::arazzo::Expression;

    /// Any JSON, as an object: 2025-11-25 takes no boolean schema among `properties`.
    fn any() -> Value {
        Value::Object(Map::new())
    }

    /// What `expression` yields, as a schema, `depth` steps' outputs from where it is read.
    fn typed(workflow: &crate::arazzo::Workflow, expression: &Expression, depth: u8) -> Value {
        match expression {
            Expression::StatusCode => serde_json::json!({"type": "integer"}),
            Expression::Method => serde_json::json!({"type": "string"}),
            Expression::StepOutput {
                step,
                name,
                pointer,
            } if pointer.is_empty() && depth > 0 => workflow
                .steps
                .iter()
                .find(|candidate| &candidate.id == step)
                .and_then(|step| step.outputs.iter().find(|output| &output.name == name))
                .map_or_else(any, |output| typed(workflow, &output.value, depth - 1)),
            _ => any(),
        }
    }

    if workflow.outputs.is_empty() {
        return None;
    }
    let properties: Map<String, Value> = workflow
        .outputs
        .iter()
        .map(|output| (output.name.clone(), typed(workflow, &output.value, 8)))
        .collect();
    let schema = serde_json::json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    Some(OutputSchema {
        served: InputSchema::new(&schema),
        legacy: None,
    })
}

/// The code of the warning that a tool declares no output schema where its document
/// describes its answers.
pub const NO_OUTPUT_SCHEMA: &str = "no-output-schema";

/// The warning that `operation`'s tool declares no output schema, `why`.
pub(super) fn undeclared(
    document: &Document,
    operation: &Operation<'_>,
    why: &str,
    label: &str,
) -> Diagnostic {
    let file = &document.file(operation.file).name;
    Diagnostic::warning(
        Location::document(file, operation.pointer.clone()),
        format!("no output schema is declared: {why}; its answers are served unchecked"),
    )
    .with_operation(label.to_string())
    .with_code(NO_OUTPUT_SCHEMA)
}

/// Each documented 2xx JSON answer's schema, where it is written: `Err` when one is
/// unreadable.
fn documented<'d>(
    document: &'d Document,
    operation: &Operation<'d>,
) -> Result<Vec<(FileId, String, &'d Value)>, String> {
    let mut found = Vec::new();
    let Some(responses) = operation.value.get("responses").and_then(Value::as_object) else {
        return Ok(found);
    };
    let swagger = document.version == SpecVersion::Swagger2;
    let produces_json = || {
        let produces = operation
            .value
            .get("produces")
            .or_else(|| document.root().get("produces"))
            .and_then(Value::as_array);
        match produces {
            None => true,
            Some(list) => list.iter().filter_map(Value::as_str).any(is_json),
        }
    };
    for (status, response) in responses {
        if !is_success(status) {
            continue;
        }
        let pointer = format!(
            "{}/responses/{}",
            operation.pointer,
            crate::openapi::escape_token(status)
        );
        let (file, pointer, response) =
            operation::follow(document, operation.file, &pointer, response)?;
        if swagger {
            if let Some(schema) = response.get("schema")
                && produces_json()
            {
                found.push((file, format!("{pointer}/schema"), schema));
            }
            continue;
        }
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            continue;
        };
        for (media_type, media) in content {
            if !is_json(media_type) {
                continue;
            }
            let at = format!(
                "{pointer}/content/{}/schema",
                crate::openapi::escape_token(media_type)
            );
            match media.get("schema") {
                Some(schema) => found.push((file, at, schema)),
                // A JSON answer documented without a schema may be anything.
                None => return Ok(Vec::new()),
            }
        }
    }
    Ok(found)
}

/// Whether a response's key names success: `200`…`299` or `2XX`.
fn is_success(status: &str) -> bool {
    let bytes = status.as_bytes();
    bytes.len() == 3
        && bytes[0] == b'2'
        && (bytes[1..].iter().all(u8::is_ascii_digit) || status[1..].eq_ignore_ascii_case("xx"))
}

/// Whether a media type (any case, with or without parameters) is JSON.
fn is_json(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}
