//! Reading Arazzo 1.0.x documents: workflows that run an API's operations in order.
//!
//! [`parse`] turns the value a document parsed to (read by [`crate::openapi::load_file`], with
//! the loader's confinement and budgets) into an [`Arazzo`], every runtime expression and
//! criterion parsed once into its typed form ([`expression`]: `simple` conditions, `regex`
//! patterns, RFC 9535 `jsonpath` queries), and every Reusable Object (`reference:
//! $components.parameters.x`) and `$ref: '#/components/inputs/x'` resolved to what it names,
//! so what runs never sees a reference. It is pure, and every problem is a [`Diagnostic`] at
//! a JSON pointer into the file: what this version does not support yet (steps that run a
//! workflow, a workflow's own `parameters` and actions) included. It also checks what
//! the document alone can tell: expressions naming an input, step or output that is not
//! there, steps the first cannot reach, and loops that nothing could ever leave (any other
//! loop is bounded when it runs, by the tool's `max_steps`). Whether the operations exist is
//! the catalog's to check. [`evaluate`] reads what was
//! parsed against one run: an expression's value, a payload filled in, a condition, the
//! action a step's outcome takes.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::escape_token;
use crate::parameter::ParameterLocation;
use check::check_workflow;

mod check;
pub mod evaluate;
pub mod expression;

pub use evaluate::{Context, Exchange};
pub use expression::{Condition, Criterion, Expression, ExpressionError, Source};

#[cfg(test)]
mod tests;

/// An Arazzo document, as far as ferry reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arazzo {
    /// The file's name (relative to its directory), for diagnostics.
    pub file: String,
    pub title: String,
    pub version: String,
    pub source_descriptions: Vec<SourceDescription>,
    pub workflows: Vec<Workflow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourceDescription {
    pub name: String,
    pub url: String,
    /// `openapi` or `arazzo`.
    pub kind: String,
    /// Where it is written, as a JSON pointer.
    pub pointer: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Workflow {
    pub id: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// The inputs' JSON Schema, as written.
    pub inputs: Option<Value>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
    pub pointer: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: String,
    pub target: Target,
    /// Written in place or referenced from `components.parameters`.
    pub parameters: Vec<StepParameter>,
    /// The request body's `payload`, with its expressions parsed.
    pub body: Option<Template>,
    /// All must hold for the step to succeed; none means a 2xx status.
    pub success_criteria: Vec<Criterion>,
    pub on_success: Vec<Action>,
    pub on_failure: Vec<Action>,
    pub outputs: Vec<Output>,
    pub pointer: String,
}

/// The operation a step calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `operationId`, with the source description it names (`$sourceDescriptions.api.getPet`)
    /// when it names one.
    OperationId { source: Option<String>, id: String },
    /// `operationPath`: `{$sourceDescriptions.api.url}#/paths/~1pets~1{id}/get`, kept as the
    /// source's name and the JSON pointer into its document.
    OperationPath { source: String, pointer: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepParameter {
    pub name: String,
    /// `in`; only a step that runs a workflow may leave it out, and those are not read yet.
    pub location: ParameterLocation,
    pub value: Template,
    /// Where it is written, or where the reference to it is.
    pub pointer: String,
}

/// A value to send: literal, or reading a runtime expression, at any depth.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    Literal(Value),
    Expression(Expression),
    /// A string with expressions embedded (`"Hello {$inputs.name}"`): each one's value
    /// written in its place, a string as it is and anything else as JSON.
    Text(Vec<Piece>),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

/// A piece of a [`Template::Text`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Literal(String),
    Expression(Expression),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub name: String,
    pub value: Expression,
    pub pointer: String,
}

/// An `onSuccess` or `onFailure` action, written in place or referenced from `components`
/// (its `pointer` then where the reference is): the first whose criteria hold is taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub name: String,
    pub kind: ActionKind,
    pub criteria: Vec<Criterion>,
    pub pointer: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionKind {
    End,
    /// Go to the step with this id.
    Goto(String),
    /// Run a step again (an `onFailure` action only): this one, or the one named.
    Retry(Retry),
}

/// A `retry` action: how long to wait before the next attempt, and how many attempts this
/// action may make for one run of the workflow before the failure actions after it apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// `retryAfter`, in milliseconds; a `Retry-After` header in the answer overrules it.
    pub after_ms: Option<u64>,
    /// `retryLimit`: one when it is not written, as Arazzo says.
    pub limit: u32,
    /// `stepId`: the step to run again; `None` for the step that failed.
    pub step: Option<String>,
}

impl ActionKind {
    /// The step this action goes to, when it names one.
    pub fn target(&self) -> Option<&str> {
        match self {
            ActionKind::Goto(step) => Some(step),
            ActionKind::Retry(Retry { step, .. }) => step.as_deref(),
            ActionKind::End => None,
        }
    }
}

/// Reads the Arazzo document `file` parsed to `value`, with every problem found.
pub fn parse(file: &str, value: &Value) -> (Arazzo, Vec<Diagnostic>) {
    let mut reader = Reader {
        file,
        diagnostics: Vec::new(),
        components: Components::default(),
    };
    let arazzo = reader.document(value);
    for workflow in &arazzo.workflows {
        check_workflow(&mut reader, workflow);
    }
    (arazzo, reader.diagnostics)
}

struct Reader<'a> {
    file: &'a str,
    diagnostics: Vec<Diagnostic>,
    /// What a Reusable Object or an inputs `$ref` may name, read before the workflows.
    components: Components,
}

/// The document's `components`, each read once where it is written; `None` for one that
/// could not be read (its diagnostics say why).
#[derive(Default)]
struct Components {
    /// JSON Schemas, as written.
    inputs: Map<String, Value>,
    parameters: HashMap<String, Option<StepParameter>>,
    success_actions: HashMap<String, Option<Action>>,
    failure_actions: HashMap<String, Option<Action>>,
}

/// How many `#/components/inputs/` schemas one workflow's inputs may inline, so that schemas
/// each naming another twice cannot grow without bound.
const INLINED_INPUTS_LIMIT: usize = 256;

impl Reader<'_> {
    fn error(&mut self, pointer: &str, message: impl Into<String>) {
        let location = Location::document(self.file, pointer);
        self.diagnostics.push(Diagnostic::error(location, message));
    }

    fn warning(&mut self, pointer: &str, message: impl Into<String>) {
        let location = Location::document(self.file, pointer);
        self.diagnostics
            .push(Diagnostic::warning(location, message));
    }

    /// A warning of a kind named by `code`.
    fn coded_warning(&mut self, code: &'static str, pointer: &str, message: impl Into<String>) {
        let location = Location::document(self.file, pointer);
        self.diagnostics
            .push(Diagnostic::warning(location, message).with_code(code));
    }

    fn document(&mut self, value: &Value) -> Arazzo {
        let mut arazzo = Arazzo {
            file: self.file.to_string(),
            ..Arazzo::default()
        };
        let Some(root) = self.object(value, "", "the document") else {
            return arazzo;
        };
        match root.get("arazzo").and_then(Value::as_str) {
            Some(version) if version.starts_with("1.0.") => arazzo.version = version.into(),
            Some(version) => self.error(
                "/arazzo",
                format!("unsupported Arazzo version {version:?} (ferry reads 1.0.x)"),
            ),
            None => self.error(
                "",
                "not an Arazzo document (no `arazzo` version string such as \"1.0.1\")",
            ),
        }
        if let Some(info) = self.object_at(root, "info", "", true) {
            arazzo.title = self
                .string_at(info, "title", "/info", true)
                .unwrap_or_default();
        }
        let sources = self.array_at(root, "sourceDescriptions", "", true);
        for (index, source) in sources.iter().enumerate() {
            let pointer = format!("/sourceDescriptions/{index}");
            if let Some(source) = self.source_description(source, pointer) {
                arazzo.source_descriptions.push(source);
            }
        }
        if let Some(components) = self.object_at(root, "components", "", false) {
            self.components(components);
        }
        let workflows = self.array_at(root, "workflows", "", true);
        let mut ids = HashSet::new();
        for (index, workflow) in workflows.iter().enumerate() {
            let pointer = format!("/workflows/{index}");
            if let Some(workflow) = self.workflow(workflow, pointer) {
                if !ids.insert(workflow.id.clone()) {
                    let message = format!("a second workflow is named {:?}", workflow.id);
                    self.error(&format!("{}/workflowId", workflow.pointer), message);
                }
                arazzo.workflows.push(workflow);
            }
        }
        arazzo
    }

    /// The Components Object: `inputs` kept as written, the parameters and actions read as a
    /// step's are, so a reference to one is the value it names.
    fn components(&mut self, components: &Map<String, Value>) {
        let each = |reader: &mut Self, key: &str| -> Vec<(String, &Value, String)> {
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
        for (name, schema, pointer) in each(self, "inputs") {
            if schema.is_object() {
                self.components.inputs.insert(name, schema.clone());
            } else {
                self.error(&pointer, "a reusable input must be a JSON Schema object");
            }
        }
        for (name, value, pointer) in each(self, "parameters") {
            let parameter = self.parameter_object(value, pointer);
            self.components.parameters.insert(name, parameter);
        }
        for (name, value, pointer) in each(self, "successActions") {
            let action = self.action(value, pointer, true);
            self.components.success_actions.insert(name, action);
        }
        for (name, value, pointer) in each(self, "failureActions") {
            let action = self.action(value, pointer, false);
            self.components.failure_actions.insert(name, action);
        }
    }

    /// A Reusable Object's `reference`, `$components.KIND.NAME`, resolved to what `found`
    /// holds under that name (`what` names it, for diagnostics).
    fn resolve<T: Clone>(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        kind: &str,
        what: &str,
        found: impl Fn(&Components) -> &HashMap<String, Option<T>>,
    ) -> Option<T> {
        let written = self.string_at(object, "reference", pointer, true)?;
        let at = format!("{pointer}/reference");
        let name = written
            .strip_prefix("$components.")
            .and_then(|rest| rest.strip_prefix(kind))
            .and_then(|rest| rest.strip_prefix('.'))
            .filter(|name| expression::is_name(name));
        let Some(name) = name else {
            self.error(
                &at,
                format!(
                    "{written:?} is not a reference to a {what} (write `$components.{kind}.NAME`)"
                ),
            );
            return None;
        };
        match found(&self.components).get(name) {
            Some(Some(component)) => Some(component.clone()),
            Some(None) => {
                let message =
                    format!("`components.{kind}.{name}` could not be read (see its diagnostics)");
                self.error(&at, message);
                None
            }
            None => {
                let mut known: Vec<&str> =
                    found(&self.components).keys().map(String::as_str).collect();
                known.sort_unstable();
                let known = if known.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("it has: {}", known.join(", "))
                };
                let message =
                    format!("no {what} is named {name:?} in `components.{kind}` ({known})");
                self.error(&at, message);
                None
            }
        }
    }

    /// `schema` with every `$ref: '#/components/inputs/NAME'` in it replaced by that schema
    /// (as one of an `allOf` when other keywords stand beside it). Any other `$ref` is left
    /// for the schema's translation to report.
    fn inline_inputs(
        &mut self,
        schema: &Value,
        pointer: &str,
        within: &mut Vec<String>,
        budget: &mut usize,
    ) -> Value {
        let object = match schema {
            Value::Object(object) => object,
            Value::Array(items) => {
                let items = items.iter().enumerate().map(|(index, item)| {
                    self.inline_inputs(item, &format!("{pointer}/{index}"), within, budget)
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
                    self.inline_inputs(item, &pointer, within, budget)
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
        let Some(component) = self.components.inputs.get(name).cloned() else {
            let message = format!("no input schema is named {name:?} in `components.inputs`");
            self.error(&at, message);
            return Value::Object(inlined);
        };
        if within.iter().any(|outer| outer == name) {
            let message = format!(
                "`components.inputs.{name}` refers to itself: a tool's input schema cannot be endless"
            );
            self.error(&at, message);
            return Value::Object(inlined);
        }
        if *budget == 0 {
            let message = format!(
                "the inputs inline more than {INLINED_INPUTS_LIMIT} `components.inputs` schemas"
            );
            self.error(&at, message);
            return Value::Object(inlined);
        }
        *budget -= 1;
        within.push(name.to_string());
        let component_pointer = format!("/components/inputs/{}", escape_token(name));
        let component = self.inline_inputs(&component, &component_pointer, within, budget);
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

    fn source_description(&mut self, value: &Value, pointer: String) -> Option<SourceDescription> {
        let object = self.object(value, &pointer, "a source description")?;
        let name = self.string_at(object, "name", &pointer, true)?;
        let url = self.string_at(object, "url", &pointer, true)?;
        let kind = self
            .string_at(object, "type", &pointer, false)
            .unwrap_or_else(|| "openapi".to_string());
        if kind != "openapi" {
            let message = format!(
                "source description {name:?} is of type {kind:?}: only `openapi` sources are read yet"
            );
            self.error(&format!("{pointer}/type"), message);
        }
        Some(SourceDescription {
            name,
            url,
            kind,
            pointer,
        })
    }

    fn workflow(&mut self, value: &Value, pointer: String) -> Option<Workflow> {
        let object = self.object(value, &pointer, "a workflow")?;
        let id = self.string_at(object, "workflowId", &pointer, true)?;
        let summary = self.string_at(object, "summary", &pointer, false);
        let description = self.string_at(object, "description", &pointer, false);
        let inputs = object.get("inputs").map(|inputs| {
            let mut budget = INLINED_INPUTS_LIMIT;
            let at = format!("{pointer}/inputs");
            self.inline_inputs(inputs, &at, &mut Vec::new(), &mut budget)
        });
        if let Some(inputs) = &inputs {
            if inputs.as_object().is_some_and(|o| o.contains_key("$ref")) {
                self.error(
                    &format!("{pointer}/inputs/$ref"),
                    "a `$ref` in a workflow's inputs must name `#/components/inputs/NAME` of this document",
                );
            } else if !inputs.is_object() {
                self.error(
                    &format!("{pointer}/inputs"),
                    "`inputs` must be a JSON Schema object",
                );
            }
        }
        for key in [
            "dependsOn",
            "parameters",
            "successActions",
            "failureActions",
        ] {
            if object.contains_key(key) {
                let message = format!("a workflow's `{key}` is not supported yet");
                self.error(&format!("{pointer}/{key}"), message);
            }
        }
        let mut steps = Vec::new();
        let mut step_ids = HashSet::new();
        let written = self.array_at(object, "steps", &pointer, true);
        if written.is_empty() && object.get("steps").is_some_and(Value::is_array) {
            self.error(
                &format!("{pointer}/steps"),
                "a workflow needs at least one step",
            );
        }
        for (index, step) in written.iter().enumerate() {
            if let Some(step) = self.step(step, format!("{pointer}/steps/{index}")) {
                if !step_ids.insert(step.id.clone()) {
                    let message = format!("a second step is named {:?}", step.id);
                    self.error(&format!("{}/stepId", step.pointer), message);
                }
                steps.push(step);
            }
        }
        let outputs = self.outputs(object, &pointer);
        Some(Workflow {
            id,
            summary,
            description,
            inputs,
            steps,
            outputs,
            pointer,
        })
    }

    fn step(&mut self, value: &Value, pointer: String) -> Option<Step> {
        let object = self.object(value, &pointer, "a step")?;
        let id = self.string_at(object, "stepId", &pointer, true)?;
        let target = match (
            object.get("operationId"),
            object.get("operationPath"),
            object.get("workflowId"),
        ) {
            (Some(_), None, None) => {
                let written = self.string_at(object, "operationId", &pointer, true)?;
                operation_id(&written)
            }
            (None, Some(_), None) => {
                let written = self.string_at(object, "operationPath", &pointer, true)?;
                match operation_path(&written) {
                    Ok(target) => target,
                    Err(message) => {
                        self.error(&format!("{pointer}/operationPath"), message);
                        return None;
                    }
                }
            }
            (None, None, Some(_)) => {
                self.error(
                    &format!("{pointer}/workflowId"),
                    "a step that runs another workflow is not supported yet",
                );
                return None;
            }
            (None, None, None) => {
                self.error(
                    &pointer,
                    format!("step {id:?} names no operation (`operationId` or `operationPath`)"),
                );
                return None;
            }
            _ => {
                self.error(
                    &pointer,
                    format!(
                        "step {id:?} names more than one of `operationId`, `operationPath` and `workflowId`"
                    ),
                );
                return None;
            }
        };
        let mut parameters = Vec::new();
        let written = self.array_at(object, "parameters", &pointer, false);
        for (index, parameter) in written.iter().enumerate() {
            let pointer = format!("{pointer}/parameters/{index}");
            if let Some(parameter) = self.parameter(parameter, pointer) {
                parameters.push(parameter);
            }
        }
        let body = match self.object_at(object, "requestBody", &pointer, false) {
            Some(request_body) => {
                let body_pointer = format!("{pointer}/requestBody");
                let payload = request_body
                    .get("payload")
                    .map(|payload| self.template(payload, &format!("{body_pointer}/payload")));
                self.replacements(request_body, &body_pointer, payload)
            }
            None => None,
        };
        let success_criteria = self.criteria(object, "successCriteria", &pointer);
        let on_success = self.actions(object, "onSuccess", &pointer);
        let on_failure = self.actions(object, "onFailure", &pointer);
        let outputs = self.outputs(object, &pointer);
        Some(Step {
            id,
            target,
            parameters,
            body,
            success_criteria,
            on_success,
            on_failure,
            outputs,
            pointer,
        })
    }

    /// The payload with the request body's `replacements` made in it: each `target` (a JSON
    /// pointer into the payload) given its `value`, a literal or an expression read when the
    /// step runs. The payload is a template, so this is done once, here: a target inside a
    /// value only an expression gives cannot be, and is a diagnostic.
    fn replacements(
        &mut self,
        request_body: &Map<String, Value>,
        body_pointer: &str,
        mut payload: Option<Template>,
    ) -> Option<Template> {
        let written = self.array_at(request_body, "replacements", body_pointer, false);
        for (index, replacement) in written.iter().enumerate() {
            let pointer = format!("{body_pointer}/replacements/{index}");
            let Some(replacement) = self.object(replacement, &pointer, "a replacement") else {
                continue;
            };
            let Some(target) = self.string_at(replacement, "target", &pointer, true) else {
                continue;
            };
            let Some(value) = replacement.get("value") else {
                self.error(&pointer, "a replacement needs a `value`");
                continue;
            };
            let value = self.template(value, &format!("{pointer}/value"));
            let Some(payload) = payload.as_mut() else {
                self.error(&pointer, "a replacement needs a `payload` to be made in");
                continue;
            };
            if let Err(message) = replace(payload, &target, value) {
                self.error(&format!("{pointer}/target"), message);
            }
        }
        payload
    }

    /// A step's parameter: a Parameter Object, or a Reusable Object naming one in
    /// `components.parameters`, whose `value` (when written) replaces the component's.
    fn parameter(&mut self, value: &Value, pointer: String) -> Option<StepParameter> {
        let object = self.object(value, &pointer, "a parameter")?;
        if !object.contains_key("reference") {
            return self.parameter_object(value, pointer);
        }
        let mut parameter = self.resolve(object, &pointer, "parameters", "parameter", |c| {
            &c.parameters
        })?;
        if let Some(value) = object.get("value") {
            parameter.value = self.template(value, &format!("{pointer}/value"));
        }
        parameter.pointer = pointer;
        Some(parameter)
    }

    fn parameter_object(&mut self, value: &Value, pointer: String) -> Option<StepParameter> {
        let object = self.object(value, &pointer, "a parameter")?;
        let name = self.string_at(object, "name", &pointer, true)?;
        let location = match self.string_at(object, "in", &pointer, true)?.as_str() {
            "path" => ParameterLocation::Path,
            "query" => ParameterLocation::Query,
            "header" => ParameterLocation::Header,
            "cookie" => ParameterLocation::Cookie,
            other => {
                let message = format!(
                    "parameter {name:?} is `in: {other}`: expected path, query, header or cookie"
                );
                self.error(&format!("{pointer}/in"), message);
                return None;
            }
        };
        let Some(value) = object.get("value") else {
            self.error(&pointer, format!("parameter {name:?} has no `value`"));
            return None;
        };
        let value = self.template(value, &format!("{pointer}/value"));
        Some(StepParameter {
            name,
            location,
            value,
            pointer,
        })
    }

    fn template(&mut self, value: &Value, pointer: &str) -> Template {
        match value {
            Value::String(text) if text.starts_with('$') => match expression::parse(text) {
                Ok(expression) => Template::Expression(expression),
                Err(error) => {
                    self.error(pointer, error.0);
                    Template::Literal(value.clone())
                }
            },
            Value::String(text) if text.contains("{$") => match pieces(text) {
                Ok(pieces) => Template::Text(pieces),
                Err(error) => {
                    self.error(pointer, error.0);
                    Template::Literal(value.clone())
                }
            },
            Value::Array(items) => Template::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| self.template(item, &format!("{pointer}/{index}")))
                    .collect(),
            ),
            Value::Object(object) => Template::Object(
                object
                    .iter()
                    .map(|(key, item)| {
                        let pointer = format!("{pointer}/{}", escape_token(key));
                        (key.clone(), self.template(item, &pointer))
                    })
                    .collect(),
            ),
            _ => Template::Literal(value.clone()),
        }
    }

    fn criteria(
        &mut self,
        object: &Map<String, Value>,
        key: &str,
        pointer: &str,
    ) -> Vec<Criterion> {
        let mut criteria = Vec::new();
        let written = self.array_at(object, key, pointer, false);
        for (index, criterion) in written.iter().enumerate() {
            let pointer = format!("{pointer}/{key}/{index}");
            if let Some(criterion) = self.criterion(criterion, &pointer) {
                criteria.push(criterion);
            }
        }
        criteria
    }

    /// A Criterion Object: `simple` (the default), `regex` or `jsonpath` (RFC 9535, the only
    /// JSONPath read: a Criterion Expression Type Object naming another is refused).
    fn criterion(&mut self, value: &Value, pointer: &str) -> Option<Criterion> {
        let criterion = self.object(value, pointer, "a criterion")?;
        let type_pointer = format!("{pointer}/type");
        let kind = match criterion.get("type") {
            None => "simple".to_string(),
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Object(expression_type)) => {
                self.expression_type(expression_type, &type_pointer)?
            }
            Some(_) => {
                self.error(
                    &type_pointer,
                    "`type` must be a string (simple, regex, jsonpath) or a Criterion Expression Type Object",
                );
                return None;
            }
        };
        let condition = self.string_at(criterion, "condition", pointer, true)?;
        let condition_pointer = format!("{pointer}/condition");
        if kind == "simple" {
            if criterion.contains_key("context") {
                self.error(
                    &format!("{pointer}/context"),
                    "a `simple` criterion with a `context` is not supported yet",
                );
                return None;
            }
            return match expression::parse_condition(&condition) {
                Ok(condition) => Some(Criterion::Simple(condition)),
                Err(error) => {
                    self.error(&condition_pointer, error.0);
                    None
                }
            };
        }
        if !matches!(kind.as_str(), "regex" | "jsonpath") {
            let message = match kind.as_str() {
                "xpath" => {
                    "`xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`"
                        .to_string()
                }
                other => format!("criterion type {other:?} is not one of simple, regex, jsonpath"),
            };
            self.error(&type_pointer, message);
            return None;
        }
        let Some(written) = criterion.get("context") else {
            let example = if kind == "regex" {
                "$statusCode"
            } else {
                "$response.body"
            };
            self.error(
                pointer,
                format!(
                    "a `{kind}` criterion needs a `context`: the runtime expression it applies to, such as `{example}`"
                ),
            );
            return None;
        };
        let context_pointer = format!("{pointer}/context");
        let Some(written) = written.as_str() else {
            self.error(&context_pointer, "`context` must be a runtime expression");
            return None;
        };
        let context = match expression::parse(written) {
            Ok(context) => context,
            Err(error) => {
                self.error(&context_pointer, error.0);
                return None;
            }
        };
        if kind == "regex"
            && condition.len() > 1
            && condition.starts_with('/')
            && condition.ends_with('/')
        {
            // Some tools read `/…/flags` as JavaScript does; here the slashes are matched.
            self.warning(
                &condition_pointer,
                "the pattern's slashes are part of it, matched as written: for a pattern without them, drop them (flags are written inside, as `(?i)`)",
            );
        }
        let criterion = if kind == "regex" {
            expression::parse_pattern(&condition)
                .map(|pattern| Criterion::Regex { context, pattern })
        } else {
            expression::parse_query(&condition).map(|query| Criterion::JsonPath { context, query })
        };
        match criterion {
            Ok(criterion) => Some(criterion),
            Err(error) => {
                self.error(&condition_pointer, error.0);
                None
            }
        }
    }

    /// A Criterion Expression Type Object's kind: only JSONPath as RFC 9535 defines it, which
    /// is what `type: jsonpath` already means.
    fn expression_type(&mut self, object: &Map<String, Value>, pointer: &str) -> Option<String> {
        let kind = self.string_at(object, "type", pointer, true)?;
        let version = self.string_at(object, "version", pointer, true)?;
        let rfc9535 = version
            .to_ascii_lowercase()
            .replace(['-', ' '], "")
            .eq("rfc9535");
        match kind.as_str() {
            "jsonpath" if rfc9535 => Some(kind),
            "jsonpath" => {
                self.error(
                    &format!("{pointer}/version"),
                    format!(
                        "JSONPath {version:?} is not supported: ferry evaluates JSONPath as RFC 9535, so write `type: jsonpath`"
                    ),
                );
                None
            }
            "xpath" => {
                self.error(
                    &format!("{pointer}/type"),
                    "`xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`",
                );
                None
            }
            other => {
                self.error(
                    &format!("{pointer}/type"),
                    format!("expression type {other:?} is not `jsonpath` or `xpath`"),
                );
                None
            }
        }
    }

    /// `onSuccess` or `onFailure`: Success or Failure Action Objects, or Reusable Objects
    /// naming one in `components.successActions` or `components.failureActions`.
    fn actions(&mut self, object: &Map<String, Value>, key: &str, pointer: &str) -> Vec<Action> {
        let success = key == "onSuccess";
        let mut actions = Vec::new();
        let written = self.array_at(object, key, pointer, false);
        for (index, value) in written.iter().enumerate() {
            let pointer = format!("{pointer}/{key}/{index}");
            let Some(object) = self.object(value, &pointer, "an action") else {
                continue;
            };
            let action = if !object.contains_key("reference") {
                self.action(value, pointer, success)
            } else {
                if object.contains_key("value") {
                    self.warning(
                        &format!("{pointer}/value"),
                        "`value` applies only to a reference to a parameter: it is ignored here",
                    );
                }
                let resolved = if success {
                    self.resolve(object, &pointer, "successActions", "success action", |c| {
                        &c.success_actions
                    })
                } else {
                    self.resolve(object, &pointer, "failureActions", "failure action", |c| {
                        &c.failure_actions
                    })
                };
                resolved.map(|action| Action { pointer, ..action })
            };
            actions.extend(action);
        }
        actions
    }

    /// A Success Action Object (`success`) or a Failure Action Object.
    fn action(&mut self, value: &Value, pointer: String, success: bool) -> Option<Action> {
        let action = self.object(value, &pointer, "an action")?;
        let name = self.string_at(action, "name", &pointer, true)?;
        let kind = self.string_at(action, "type", &pointer, true)?;
        let kind = match kind.as_str() {
            "end" => ActionKind::End,
            "goto" if action.contains_key("workflowId") => {
                self.error(
                    &format!("{pointer}/workflowId"),
                    "a `goto` to another workflow is not supported yet",
                );
                return None;
            }
            "goto" => ActionKind::Goto(self.string_at(action, "stepId", &pointer, true)?),
            "retry" if success => {
                self.error(
                    &format!("{pointer}/type"),
                    "a `retry` action belongs in `onFailure`: a step that succeeded is not run again",
                );
                return None;
            }
            "retry" if action.contains_key("workflowId") => {
                self.error(
                    &format!("{pointer}/workflowId"),
                    "a `retry` of another workflow is not supported yet",
                );
                return None;
            }
            "retry" => ActionKind::Retry(self.retry(action, &pointer)?),
            other => {
                let message = format!("action type {other:?} is not one of end, goto, retry");
                self.error(&format!("{pointer}/type"), message);
                return None;
            }
        };
        let criteria = self.criteria(action, "criteria", &pointer);
        Some(Action {
            name,
            kind,
            criteria,
            pointer,
        })
    }

    /// A `retry` action's `retryAfter` (non-negative seconds), `retryLimit` (a non-negative
    /// integer) and `stepId`.
    fn retry(&mut self, action: &Map<String, Value>, pointer: &str) -> Option<Retry> {
        let after_ms = match action.get("retryAfter") {
            None => None,
            Some(Value::Number(seconds))
                if seconds.as_f64().is_some_and(|s| s.is_finite() && s >= 0.0) =>
            {
                // A day is longer than any call may wait; the whole-call timeout ends it first.
                let seconds = seconds.as_f64().unwrap_or_default().min(86_400.0);
                Some((seconds * 1000.0).round() as u64)
            }
            Some(_) => {
                self.error(
                    &format!("{pointer}/retryAfter"),
                    "`retryAfter` must be a non-negative number of seconds",
                );
                return None;
            }
        };
        let limit = match action.get("retryLimit") {
            None => 1,
            Some(Value::Number(limit)) if limit.as_u64().is_some() => {
                u32::try_from(limit.as_u64().unwrap_or_default()).unwrap_or(u32::MAX)
            }
            Some(_) => {
                self.error(
                    &format!("{pointer}/retryLimit"),
                    "`retryLimit` must be a non-negative integer",
                );
                return None;
            }
        };
        let step = match action.get("stepId") {
            None => None,
            Some(_) => Some(self.string_at(action, "stepId", pointer, true)?),
        };
        Some(Retry {
            after_ms,
            limit,
            step,
        })
    }

    fn outputs(&mut self, object: &Map<String, Value>, pointer: &str) -> Vec<Output> {
        let mut outputs = Vec::new();
        let Some(written) = self.object_at(object, "outputs", pointer, false) else {
            return outputs;
        };
        for (name, value) in written {
            let pointer = format!("{pointer}/outputs/{}", escape_token(name));
            if !expression::is_name(name) {
                self.error(
                    &pointer,
                    format!("output name {name:?} is not a name (letters, digits, `.`, `-`, `_`)"),
                );
                continue;
            }
            let Some(text) = value.as_str() else {
                self.error(
                    &pointer,
                    format!("output {name:?} must be a runtime expression"),
                );
                continue;
            };
            match expression::parse(text) {
                Ok(value) => outputs.push(Output {
                    name: name.clone(),
                    value,
                    pointer,
                }),
                Err(error) => self.error(&pointer, error.0),
            }
        }
        outputs
    }

    fn object<'v>(
        &mut self,
        value: &'v Value,
        pointer: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        let object = value.as_object();
        if object.is_none() {
            self.error(pointer, format!("{what} must be an object"));
        }
        object
    }

    fn object_at<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        key: &str,
        pointer: &str,
        required: bool,
    ) -> Option<&'v Map<String, Value>> {
        match object.get(key) {
            Some(value) => self.object(value, &format!("{pointer}/{key}"), &format!("`{key}`")),
            None => {
                if required {
                    self.error(pointer, format!("`{key}` is missing"));
                }
                None
            }
        }
    }

    fn array_at<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        key: &str,
        pointer: &str,
        required: bool,
    ) -> &'v [Value] {
        match object.get(key) {
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.error(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` must be a list"),
                );
                &[]
            }
            None => {
                if required {
                    self.error(pointer, format!("`{key}` is missing"));
                }
                &[]
            }
        }
    }

    fn string_at(
        &mut self,
        object: &Map<String, Value>,
        key: &str,
        pointer: &str,
        required: bool,
    ) -> Option<String> {
        match object.get(key) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => {
                self.error(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` must be a string"),
                );
                None
            }
            None => {
                if required {
                    self.error(pointer, format!("`{key}` is missing"));
                }
                None
            }
        }
    }
}

/// `getPet`, or `$sourceDescriptions.api.getPet`.
fn operation_id(written: &str) -> Target {
    match written
        .strip_prefix("$sourceDescriptions.")
        .and_then(|rest| rest.split_once('.'))
    {
        Some((source, id)) => Target::OperationId {
            source: Some(source.to_string()),
            id: id.to_string(),
        },
        None => Target::OperationId {
            source: None,
            id: written.to_string(),
        },
    }
}

/// `{$sourceDescriptions.api.url}#/paths/~1pets/get`.
fn operation_path(written: &str) -> Result<Target, String> {
    let parsed = written
        .strip_prefix("{$sourceDescriptions.")
        .and_then(|rest| rest.split_once(".url}#"))
        .filter(|(source, pointer)| expression::is_name(source) && pointer.starts_with("/paths/"));
    match parsed {
        Some((source, pointer)) => Ok(Target::OperationPath {
            source: source.to_string(),
            pointer: pointer.to_string(),
        }),
        None => Err(format!(
            "operationPath {written:?} is not `{{$sourceDescriptions.NAME.url}}#/paths/…/METHOD`"
        )),
    }
}

/// `text` cut into its literal pieces and the expressions written in it as `{$…}`.
fn pieces(text: &str) -> Result<Vec<Piece>, ExpressionError> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{$") {
        if start > 0 {
            pieces.push(Piece::Literal(rest[..start].to_string()));
        }
        let inner = &rest[start + 1..];
        let Some(end) = inner.find('}') else {
            return Err(ExpressionError(format!(
                "{text:?}: an embedded expression `{{$…` has no closing `}}`"
            )));
        };
        pieces.push(Piece::Expression(expression::parse(&inner[..end])?));
        rest = &inner[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest.to_string()));
    }
    Ok(pieces)
}

/// `payload` with the node at the JSON pointer `target` replaced by `value` (or added, as
/// the last token of an object's key), or why it cannot be.
fn replace(payload: &mut Template, target: &str, value: Template) -> Result<(), String> {
    if target.is_empty() {
        *payload = value;
        return Ok(());
    }
    let Some(tokens) = target.strip_prefix('/') else {
        return Err(format!(
            "target {target:?} is not a JSON pointer (`/a/0/b`); XPath targets are not supported yet"
        ));
    };
    let tokens: Vec<String> = tokens
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut node = payload;
    for (index, token) in tokens.iter().enumerate() {
        let last = index + 1 == tokens.len();
        node = match node {
            Template::Object(entries) => match entries.iter().position(|(key, _)| key == token) {
                Some(found) => &mut entries[found].1,
                None if last => {
                    entries.push((token.clone(), value));
                    return Ok(());
                }
                None => return Err(format!("target {target:?}: the payload has no {token:?}")),
            },
            Template::Array(items) => {
                match token.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(item) => item,
                    None => {
                        return Err(format!(
                            "target {target:?}: the payload's array has no item {token:?}"
                        ));
                    }
                }
            }
            Template::Expression(_) | Template::Text(_) => {
                return Err(format!(
                    "target {target:?} lies inside a value an expression gives when the step runs: replacing inside it is not supported yet"
                ));
            }
            Template::Literal(_) => {
                return Err(format!(
                    "target {target:?}: the payload has nothing at {token:?} to replace"
                ));
            }
        };
    }
    *node = value;
    Ok(())
}

impl Step {
    /// Every expression read once the step's answer has come: its outputs', its success
    /// criteria's and its actions' criteria's.
    pub fn answer_expressions(&self) -> impl Iterator<Item = &Expression> {
        let outputs = self.outputs.iter().map(|output| &output.value);
        let criteria = self
            .success_criteria
            .iter()
            .chain(self.on_success.iter().flat_map(|action| &action.criteria))
            .chain(self.on_failure.iter().flat_map(|action| &action.criteria))
            .flat_map(|criterion| criterion.expressions());
        outputs.chain(criteria)
    }
}

impl Template {
    /// Every expression it reads, in order.
    pub fn expressions(&self) -> Vec<&Expression> {
        let mut found = Vec::new();
        let mut stack = vec![self];
        while let Some(template) = stack.pop() {
            match template {
                Template::Literal(_) => {}
                Template::Expression(expression) => found.push(expression),
                Template::Text(pieces) => {
                    found.extend(pieces.iter().filter_map(|piece| match piece {
                        Piece::Expression(expression) => Some(expression),
                        Piece::Literal(_) => None,
                    }))
                }
                Template::Array(items) => stack.extend(items.iter().rev()),
                Template::Object(entries) => stack.extend(entries.iter().rev().map(|(_, t)| t)),
            }
        }
        found
    }
}
