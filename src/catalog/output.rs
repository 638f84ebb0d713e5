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
use super::schema::{SchemaBuilder, Translations};
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

/// The first thing that keeps the schemas a builder translated from being checked against.
pub(super) enum Problem {
    /// A schema could not be translated, at `pointer`.
    Error { pointer: String, message: String },
    /// `$ref`s that lead back to themselves, starting at `pointer`.
    Cycle { pointer: String, message: String },
    /// A pattern the validator cannot compile.
    Pattern(String),
}

impl Problem {
    /// The first of `builder`'s problems; `compiles` says whether the validator compiles a
    /// pattern.
    pub(super) fn first(
        builder: &SchemaBuilder,
        compiles: &mut dyn FnMut(&str) -> bool,
    ) -> Option<Problem> {
        if let Some((pointer, message)) = builder.errors.first() {
            return Some(Problem::Error {
                pointer: pointer.clone(),
                message: message.clone(),
            });
        }
        if let Some((_, pointer, message)) = builder.cycles().into_iter().next() {
            return Some(Problem::Cycle { pointer, message });
        }
        let pattern = builder.patterns.iter().find(|pattern| !compiles(pattern))?;
        Some(Problem::Pattern(pattern.clone()))
    }
}

/// The translated `schemas` (at least one) as one schema: itself when alone, else their
/// `anyOf`; with `defs` as its `$defs`, which only an object root can hold (`None`).
pub(super) fn joined(mut schemas: Vec<Value>, defs: &Map<String, Value>) -> Option<Value> {
    let mut root = match schemas.len() {
        1 => schemas.remove(0),
        _ => Value::Object(Map::from_iter([(
            "anyOf".to_string(),
            Value::Array(schemas),
        )])),
    };
    if !defs.is_empty() {
        root.as_object_mut()?
            .insert("$defs".to_string(), Value::Object(defs.clone()));
    }
    Some(root)
}

/// `root` projected by `shape`'s `fields:`, as each answer is; `Err` with why it cannot be.
pub(super) fn projected(root: Value, shape: &ResultShape) -> Result<Value, String> {
    match &shape.projection {
        Some(projection) => projection.schema(&root),
        None => Ok(root),
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
    translations: &mut Translations,
) -> Result<Option<OutputSchema>, String> {
    let mut builder = SchemaBuilder::with_translations(document, Some(translations));
    let mut schemas: Vec<Value> = Vec::new();
    for (file, pointer, schema) in documented_answers(document, operation)? {
        let translated = builder.schema(file, &pointer, schema);
        if translated == Value::Bool(true) || translated == Value::Object(Map::new()) {
            return Ok(None);
        }
        if !schemas.contains(&translated) {
            schemas.push(translated);
        }
    }
    match Problem::first(&builder, compiles) {
        Some(Problem::Error { pointer, message }) => {
            return Err(format!("its response schema at {pointer}: {message}"));
        }
        Some(Problem::Cycle { message, .. }) => {
            return Err(format!("its response schema has a {message}"));
        }
        Some(Problem::Pattern(pattern)) => {
            return Err(format!(
                "its response schema has the pattern {pattern:?}, which the validator cannot compile"
            ));
        }
        None => {}
    }
    if schemas.is_empty() {
        return Ok(None);
    }
    let Some(mut root) = joined(schemas, &builder.into_defs()) else {
        return Ok(None);
    };
    super::ecma::portable_patterns(&mut root)?;
    let mut served = projected(root, shape)?;
    if served == Value::Bool(true) || served == Value::Object(Map::new()) {
        return Ok(None);
    }
    if let Err(error) = held.meta_check(&mut served) {
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

/// A step of a composite tool, beside the operation it calls as its document describes it:
/// where its outputs' types are read.
pub(super) struct DocumentedStep<'s> {
    pub id: &'s str,
    pub document: &'s Document,
    pub operation: &'s Operation<'s>,
}

/// A composite tool's output schema: the object of its workflow's outputs by name, as its
/// result holds them when the workflow runs to its end. Each output is typed only where the
/// documents fix its type: `$statusCode` a number, `$method` a string, and an output of a step
/// that reads `$response.body` (or a pointer into it) the schema of that place in the step
/// operation's documented 2xx JSON answers (an `anyOf` where several differ), where the step
/// succeeds only on a 2xx (no `successCriteria`) and the pointer is followed with certainty:
/// through `properties` and `items` alone, never through `allOf`/`anyOf`/`oneOf`, a member
/// only `additionalProperties` or `patternProperties` describe, or a `$ref` with siblings.
/// Any other output admits any JSON. Types are read from one document (the first a typed
/// step calls); a step of another API's is not typed. None is required, since an output
/// without a value in a run is left out; no other member is. The runtime checks each result
/// against it, as it checks an operation's answer. `None` for a workflow with no outputs.
pub(super) fn of_workflow(
    workflow: &crate::arazzo::Workflow,
    steps: &[DocumentedStep<'_>],
) -> Option<OutputSchema> {
    if workflow.outputs.is_empty() {
        return None;
    }
    typed_outputs(workflow, steps).or_else(|| typed_outputs(workflow, &[]))
}

/// [`of_workflow`] reading types from `steps`; `None` when what they give cannot be declared
/// (then nothing is read from them).
fn typed_outputs(
    workflow: &crate::arazzo::Workflow,
    steps: &[DocumentedStep<'_>],
) -> Option<OutputSchema> {
    let mut typing = Typing {
        workflow,
        steps,
        builder: steps.first().map(|step| SchemaBuilder::new(step.document)),
    };
    let properties: Map<String, Value> = workflow
        .outputs
        .iter()
        .map(|output| {
            let schema = typing.typed(None, &output.value, &[], 8);
            (output.name.clone(), schema)
        })
        .collect();
    let mut schema = serde_json::json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if let Some(builder) = typing.builder {
        let unusable = !builder.errors.is_empty()
            || !builder.cycles().is_empty()
            || builder
                .patterns
                .iter()
                .any(|pattern| !super::compile::compiles(pattern));
        if unusable {
            return None;
        }
        let defs = builder.into_defs();
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
    }
    super::ecma::portable_patterns(&mut schema).ok()?;
    if jsonschema::draft202012::meta::validate(&schema).is_err() || too_deep(&schema).is_some() {
        return None;
    }
    Some(OutputSchema {
        served: InputSchema::new(&schema),
        legacy: None,
    })
}

/// What types a composite tool's outputs: its workflow, its steps' operations, and the one
/// builder that copies their schemas (`None`: nothing is read from a document).
struct Typing<'w, 's> {
    workflow: &'w crate::arazzo::Workflow,
    steps: &'w [DocumentedStep<'s>],
    builder: Option<SchemaBuilder<'s>>,
}

impl Typing<'_, '_> {
    /// What `expression`, read in `step`'s context (`None`: the workflow's), yields at
    /// `pointer`, as a schema; `depth` steps' outputs may still be followed.
    fn typed(
        &mut self,
        step: Option<&crate::arazzo::Step>,
        expression: &crate::arazzo::Expression,
        pointer: &[String],
        depth: u8,
    ) -> Value {
        use crate::arazzo::{Expression, Source};
        match expression {
            Expression::StatusCode if pointer.is_empty() => {
                serde_json::json!({"type": "integer"})
            }
            Expression::Method if pointer.is_empty() => serde_json::json!({"type": "string"}),
            Expression::StepOutput {
                step: id,
                name,
                pointer: more,
            } if depth > 0 => {
                let Some(step) = self.workflow.steps.iter().find(|step| &step.id == id) else {
                    return any();
                };
                let Some(output) = step.outputs.iter().find(|output| &output.name == name) else {
                    return any();
                };
                let mut tokens = tokens(more);
                tokens.extend_from_slice(pointer);
                self.typed(Some(step), &output.value, &tokens, depth - 1)
            }
            Expression::Response(Source::Body(body)) => {
                let Some(step) = step else {
                    return any();
                };
                let mut tokens = tokens(body);
                tokens.extend_from_slice(pointer);
                self.body(step, &tokens).unwrap_or_else(any)
            }
            _ => any(),
        }
    }

    /// The schema of `pointer` in `step`'s documented 2xx JSON answers, where it is certain.
    fn body(&mut self, step: &crate::arazzo::Step, pointer: &[String]) -> Option<Value> {
        // A step whose criteria admit another status may succeed on an answer no 2xx
        // schema describes.
        if !succeeds_only_on_2xx(step) {
            return None;
        }
        let documented = self
            .steps
            .iter()
            .find(|documented| documented.id == step.id)?;
        let builder = self.builder.as_mut()?;
        if !std::ptr::eq(documented.document, self.steps.first()?.document) {
            return None;
        }
        let mut schemas: Vec<Value> = Vec::new();
        for (file, at, schema) in
            documented_answers(documented.document, documented.operation).ok()?
        {
            let (file, at, schema) =
                follow_pointer(documented.document, file, at, schema, pointer)?;
            let translated = builder.schema(file, &at, schema);
            if translated == Value::Bool(true) || translated == any() {
                return None;
            }
            if !schemas.contains(&translated) {
                schemas.push(translated);
            }
        }
        match schemas.len() {
            0 => None,
            1 => schemas.pop(),
            _ => Some(serde_json::json!({ "anyOf": schemas })),
        }
    }
}

/// Whether `step` succeeds only on a 2xx answer: it has no `successCriteria` (then a 2xx is
/// success), or one of them holds only where `$statusCode` equals a 2xx number.
fn succeeds_only_on_2xx(step: &crate::arazzo::Step) -> bool {
    use crate::arazzo::expression::{Operand, Operator};
    use crate::arazzo::{Criterion, Expression};
    let is_2xx = |operand: &Operand| {
        matches!(operand, Operand::Literal(Value::Number(number))
            if number.as_u64().is_some_and(|status| (200..300).contains(&status)))
    };
    let status = |operand: &Operand| matches!(operand, Operand::Expression(Expression::StatusCode));
    step.success_criteria.is_empty()
        || step
            .success_criteria
            .iter()
            .any(|criterion| match criterion {
                Criterion::Simple(condition) => {
                    !condition.any.is_empty()
                        && condition.any.iter().all(|all| {
                            all.iter().any(|comparison| match &comparison.test {
                                Some((Operator::Equal, right)) => {
                                    (status(&comparison.left) && is_2xx(right))
                                        || (is_2xx(&comparison.left) && status(right))
                                }
                                _ => false,
                            })
                        })
                }
                _ => false,
            })
}

/// Any JSON, as an object: 2025-11-25 takes no boolean schema among `properties`.
fn any() -> Value {
    Value::Object(Map::new())
}

/// A JSON pointer's tokens, unescaped.
fn tokens(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// The schema `pointer` reaches from `schema` (written in `file` at `at`), where each step is
/// certain: a `properties` member, or an `items` schema for an index.
fn follow_pointer<'d>(
    document: &'d Document,
    mut file: FileId,
    mut at: String,
    mut schema: &'d Value,
    pointer: &[String],
) -> Option<(FileId, String, &'d Value)> {
    /// Keywords beside which a member's schema is not the member's alone.
    const UNCERTAIN: &[&str] = &[
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$dynamicRef",
        "$recursiveRef",
        "patternProperties",
        "prefixItems",
        "dependentSchemas",
    ];
    for token in pointer {
        let map = schema.as_object()?;
        if map.contains_key("$ref") {
            // A `$ref` with siblings is not its target alone.
            if map
                .keys()
                .any(|key| !matches!(key.as_str(), "$ref" | "description" | "summary"))
            {
                return None;
            }
            (file, at, schema) = operation::follow(document, file, &at, schema).ok()?;
        }
        let map = schema.as_object()?;
        if map.keys().any(|key| UNCERTAIN.contains(&key.as_str())) {
            return None;
        }
        let member = map
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|properties| properties.get(token));
        if let Some(member) = member {
            at = format!("{at}/properties/{}", crate::openapi::escape_token(token));
            schema = member;
        } else if let Some(items) = map.get("items").filter(|items| items.is_object())
            && token.parse::<usize>().is_ok()
        {
            at = format!("{at}/items");
            schema = items;
        } else {
            return None;
        }
    }
    if let Some(map) = schema.as_object()
        && map.contains_key("$ref")
        && map
            .keys()
            .any(|key| !matches!(key.as_str(), "$ref" | "description" | "summary"))
    {
        return None;
    }
    Some((file, at, schema))
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
fn documented_answers<'d>(
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
pub(super) fn is_success(status: &str) -> bool {
    let bytes = status.as_bytes();
    bytes.len() == 3
        && bytes[0] == b'2'
        && (bytes[1..].iter().all(u8::is_ascii_digit) || status[1..].eq_ignore_ascii_case("xx"))
}

/// Whether a media type (any case, with or without parameters) is JSON.
fn is_json(media_type: &str) -> bool {
    super::body::is_json(&super::body::essence(media_type))
}
