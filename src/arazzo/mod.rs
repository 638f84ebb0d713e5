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
mod components;
mod criteria;
pub mod evaluate;
pub mod expression;
mod written;

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
            components::read(self, components);
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
            components::inline_inputs(self, inputs, &at, &mut Vec::new(), &mut budget)
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
                written::operation_id(&written)
            }
            (None, Some(_), None) => {
                let written = self.string_at(object, "operationPath", &pointer, true)?;
                match written::operation_path(&written) {
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
        let success_criteria = criteria::criteria(self, object, "successCriteria", &pointer);
        let on_success = criteria::actions(self, object, "onSuccess", &pointer);
        let on_failure = criteria::actions(self, object, "onFailure", &pointer);
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
            if let Err(message) = written::replace(payload, &target, value) {
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
        let mut parameter =
            components::resolve(self, object, &pointer, "parameters", "parameter", |c| {
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
            Value::String(text) if text.contains("{$") => match written::pieces(text) {
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
