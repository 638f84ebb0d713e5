//! Composite tools: the workflows the curation chooses from an Arazzo document, each step
//! resolved to an operation of the loaded document (`workflows:`, default deny).
//!
//! Pure like the rest of the catalog: [`add_workflows`] takes the Arazzo file as it parsed
//! (read by [`crate::openapi::load_file`]) and checks what the document alone cannot: that
//! its `openapi` source is the document ferry loaded, that every step's operation is there
//! and declares the parameters the step sends, the tool's name, and its annotations, which
//! a method justifies only when every step's does (GET, HEAD, QUERY).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::arazzo::{self, Arazzo, Target, Workflow};
use crate::curation::{Curation, WorkflowEntry};
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::openapi::{Document, FileId, SourceFile, unescape_token};

use super::operation::{self, Operation};
use super::schema::SchemaBuilder;
use super::step::{self, StepPlan};
use super::{
    Catalog, InputSchema, Runs, SafetyClass, Tool, ToolLimits, annotations, confirm, naming,
};

/// The `_meta` key under which a composite tool names its workflow and each step's operation.
pub const WORKFLOW_META_KEY: &str = "dev.ferry/workflow";
/// The most steps one call runs when the curation does not say (`max_steps:`): each `goto`
/// and retry counts as a step run.
pub const DEFAULT_MAX_STEPS: u32 = 50;
/// How long one call may take when the curation does not say (`timeout_ms:`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What a composite tool runs: the workflow as read and each of its steps as sent.
#[derive(Debug, Clone)]
pub struct WorkflowPlan {
    /// The workflow as read, its expressions and conditions parsed.
    pub workflow: Workflow,
    /// Each step's operation, in step order.
    pub steps: Vec<StepOperation>,
    /// Each step's request, in step order.
    pub plans: Vec<StepPlan>,
    /// The most steps one call runs, each `goto` and retry counted.
    pub max_steps: u32,
    /// How long one call may take, every step and wait included.
    pub timeout: Duration,
}

impl WorkflowPlan {
    /// What a listed composite tool's `_meta` says of it: the workflow and the operation of
    /// each step.
    pub(super) fn meta(&self) -> Value {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|step| Value::Object(step.to_json()))
            .collect();
        json!({"workflowId": self.workflow.id, "steps": steps})
    }

    /// Each step, `stepId = METHOD /path (operationId)`, in order: which operations a
    /// workflow runs, as a reviewer reads it.
    pub fn step_labels(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|step| match &step.operation_id {
                Some(id) => format!("{} = {} ({id})", step.step, step.label()),
                None => format!("{} = {}", step.step, step.label()),
            })
            .collect()
    }
}

/// The operation one step calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOperation {
    pub step: String,
    /// As it is sent: `GET`, `QUERY`, an `additionalOperations` key as written.
    pub method: String,
    pub path: String,
    pub operation_id: Option<String>,
}

impl StepOperation {
    /// `{"stepId", "method", "path", "operationId"}`: how a listed composite tool and each
    /// of its results name the step.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut entry = Map::new();
        entry.insert("stepId".into(), Value::String(self.step.clone()));
        entry.insert("method".into(), Value::String(self.method.clone()));
        entry.insert("path".into(), Value::String(self.path.clone()));
        if let Some(id) = &self.operation_id {
            entry.insert("operationId".into(), Value::String(id.clone()));
        }
        entry
    }

    /// `GET /pets/{petId}`.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// One API a workflow's steps may call: its part of the curation and its document.
#[derive(Debug, Clone, Copy)]
pub struct WorkflowSource<'a> {
    pub curation: &'a Curation,
    pub document: &'a Document,
}

/// Reads the Arazzo `file` the curation's `workflows:` names and adds a tool to `catalog`
/// for each workflow it chooses, returning every problem found. Problems inside a workflow
/// that is not chosen are warnings: nothing will run it. Every step calls `document`.
pub fn add_workflows(
    catalog: &mut Catalog,
    document: &Document,
    curation: &Curation,
    file: &SourceFile,
) -> Vec<Diagnostic> {
    let source = WorkflowSource { curation, document };
    add_workflows_over(catalog, &[source], curation, file)
}

/// [`add_workflows`] for workflows whose steps may call any API of `apis`: each of the
/// Arazzo document's OpenAPI source descriptions is bound to the API whose document it
/// names (by its URL, or by the API's id as its name), and each step calls its source's API,
/// with that API's settings and credential. `curation` is the one whose `workflows:` chose
/// them: the top of a file with `apis:`, or the one API's.
pub fn add_workflows_over(
    catalog: &mut Catalog,
    apis: &[WorkflowSource<'_>],
    curation: &Curation,
    file: &SourceFile,
) -> Vec<Diagnostic> {
    let Some(chosen) = &curation.workflows else {
        return Vec::new();
    };
    let (arazzo, mut diagnostics) = arazzo::parse(&file.name, &file.value);
    let chosen_pointers: Vec<String> = chosen
        .tools
        .iter()
        .filter_map(|entry| arazzo.workflows.iter().find(|w| w.id == entry.workflow))
        .map(|workflow| workflow.pointer.clone())
        .collect();
    for diagnostic in &mut diagnostics {
        if let Location::Document { pointer, .. } = &diagnostic.location
            && pointer.starts_with("/workflows/")
            && !chosen_pointers.iter().any(|p| within(pointer, p))
        {
            diagnostic.severity = Severity::Warning;
        }
    }
    let sources = check_sources(&arazzo, apis, &mut diagnostics);
    let mut problems = Vec::new();
    let operations: Vec<Vec<Operation<'_>>> = apis
        .iter()
        .map(|api| operation::list(api.document, &mut problems))
        .collect();
    let mut names: HashSet<String> = catalog.tools.iter().map(|t| t.name.clone()).collect();
    let mut composite = Vec::new();
    for entry in &chosen.tools {
        let path = format!("workflows.tools.{}", entry.workflow);
        let Some(workflow) = arazzo.workflows.iter().find(|w| w.id == entry.workflow) else {
            let known: Vec<&str> = arazzo.workflows.iter().map(|w| w.id.as_str()).collect();
            diagnostics.push(Diagnostic::error(
                Location::curation(path),
                format!(
                    "{} has no workflow {:?} (it has: {})",
                    arazzo.file,
                    entry.workflow,
                    known.join(", ")
                ),
            ));
            continue;
        };
        // A workflow its document could not wholly read is no tool: what was left out
        // (a step, a criterion, an action) would change what it does.
        let unreadable = diagnostics.iter().any(|d| {
            d.is_error()
                && matches!(&d.location, Location::Document { pointer, .. }
                    if within(pointer, &workflow.pointer)
                        || !(pointer.starts_with("/workflows/")
                            || pointer.starts_with("/sourceDescriptions/")))
        });
        if unreadable {
            continue;
        }
        let tool = compile_workflow(
            Inputs {
                arazzo: &arazzo,
                apis,
                curation,
                tools: &catalog.tools,
                operations: &operations,
                sources: &sources,
            },
            workflow,
            entry,
            &path,
            &mut diagnostics,
        );
        if let Some(tool) = tool {
            if !names.insert(tool.name.clone()) {
                diagnostics.push(Diagnostic::error(
                    Location::curation(path),
                    format!(
                        "another tool is already named {:?}: give this workflow its own `name:`",
                        tool.name
                    ),
                ));
                continue;
            }
            composite.push(tool);
        }
    }
    // Listed among the others, in name order.
    catalog.tools.extend(composite);
    catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
    diagnostics.sort_by_key(|d| d.severity);
    diagnostics
}

/// Whether the JSON pointer `pointer` is `parent` or inside it.
fn within(pointer: &str, parent: &str) -> bool {
    pointer
        .strip_prefix(parent)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Each OpenAPI source description's name and the index in `apis` of the API it is bound
/// to: the one whose document its URL names, or else the one whose id is its name.
fn check_sources(
    arazzo: &Arazzo,
    apis: &[WorkflowSource<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(String, usize)> {
    let mut bound = Vec::new();
    for source in &arazzo.source_descriptions {
        if source.kind != "openapi" {
            continue;
        }
        fn loaded<'a>(api: &WorkflowSource<'a>) -> &'a str {
            api.curation.openapi.as_deref().unwrap_or_default()
        }
        let by_url = apis
            .iter()
            .position(|api| names_same_document(&source.url, loaded(api)));
        let by_id = || {
            apis.iter()
                .position(|api| apis.len() > 1 && api.curation.api_id == source.name)
        };
        match by_url.or_else(by_id) {
            Some(index) => bound.push((source.name.clone(), index)),
            None => {
                let documents: Vec<String> = apis
                    .iter()
                    .map(|api| format!("{:?}", loaded(api)))
                    .collect();
                diagnostics.push(Diagnostic::error(
                    Location::document(&arazzo.file, format!("{}/url", source.pointer)),
                    format!(
                        "source description {:?} names {:?}, not a document ferry loaded ({})",
                        source.name,
                        source.url,
                        documents.join(", ")
                    ),
                ));
            }
        }
    }
    bound
}

/// Whether an Arazzo source URL names the loaded document: the same URL, or the same file
/// name.
fn names_same_document(url: &str, loaded: &str) -> bool {
    let file_name = |text: &str| {
        let text = text.split(['?', '#']).next().unwrap_or(text);
        text.rsplit(['/', '\\']).next().unwrap_or(text).to_string()
    };
    url == loaded || (!file_name(url).is_empty() && file_name(url) == file_name(loaded))
}

/// What every chosen workflow of one Arazzo document is compiled against.
struct Inputs<'a, 'd> {
    arazzo: &'a Arazzo,
    /// The APIs its steps may call.
    apis: &'a [WorkflowSource<'d>],
    /// The curation that chose the workflows.
    curation: &'a Curation,
    /// The operations' tools already compiled: a step whose operation is one is sent with
    /// its settings.
    tools: &'a [Tool],
    /// Each API's operations, in `apis` order.
    operations: &'a [Vec<Operation<'d>>],
    /// Each source description bound to an API: its name and the API's index.
    sources: &'a [(String, usize)],
}

/// The API (its index in `inputs.apis`) and operation `step` calls, or why there is none:
/// the operation of the source it names, or else the one operation of that id (or pointer)
/// among the bound APIs.
fn find_operation<'i, 'd>(
    inputs: &'i Inputs<'_, 'd>,
    step: &arazzo::Step,
) -> Result<(usize, &'i Operation<'d>), String> {
    let (source, written) = match &step.target {
        Target::OperationId { source, id } => (source.as_deref(), format!("operationId {id:?}")),
        Target::OperationPath { source, pointer } => {
            (Some(source.as_str()), format!("operation at {pointer:?}"))
        }
    };
    let find = |api: usize| {
        let operations = &inputs.operations[api];
        match &step.target {
            Target::OperationId { id, .. } => operations
                .iter()
                .find(|o| o.operation_id == Some(id.as_str())),
            Target::OperationPath { pointer, .. } => by_pointer(operations, pointer),
        }
    };
    let candidates: Vec<usize> = match source {
        Some(source) => match inputs.sources.iter().find(|(name, _)| name == source) {
            Some((_, api)) => vec![*api],
            None => {
                return Err(format!(
                    "step {:?} names the source {source:?}, which is not a loaded OpenAPI document",
                    step.id
                ));
            }
        },
        None => {
            let mut bound: Vec<usize> = inputs.sources.iter().map(|(_, api)| *api).collect();
            bound.sort_unstable();
            bound.dedup();
            if bound.is_empty() {
                bound = (0..inputs.apis.len()).collect();
            }
            bound
        }
    };
    let found: Vec<(usize, &Operation<'d>)> = candidates
        .into_iter()
        .filter_map(|api| find(api).map(|operation| (api, operation)))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("step {:?}: the document has no {written}", step.id)),
        _ => Err(format!(
            "step {:?}: {written} is in more than one source's document: name its source, \
             `$sourceDescriptions.NAME.<operationId>`",
            step.id
        )),
    }
}

fn compile_workflow(
    inputs: Inputs<'_, '_>,
    workflow: &Workflow,
    entry: &WorkflowEntry,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Tool> {
    let arazzo = inputs.arazzo;
    let tool_name = match &entry.name {
        Some(name) => name.clone(),
        None => naming::prefixed(
            inputs.curation.name_prefix.as_deref(),
            naming::derive(inputs.curation.naming, Some(&workflow.id), "post", "/"),
        ),
    };
    let mut failed = false;
    let mut error = |pointer: &str, message: String| {
        failed = true;
        diagnostics.push(Diagnostic::error(
            Location::document(&arazzo.file, pointer),
            message,
        ));
    };
    let mut steps = Vec::new();
    let mut plans = Vec::new();
    let mut documented = Vec::new();
    for step in &workflow.steps {
        let (api, operation) = match find_operation(&inputs, step) {
            Ok(found) => found,
            Err(message) => {
                error(&step.pointer, message);
                continue;
            }
        };
        let mut undeclared = false;
        for parameter in &step.parameters {
            let declared = operation.parameters.iter().any(|p| {
                p.location == parameter.location.as_str()
                    && if p.location == "header" {
                        p.name.eq_ignore_ascii_case(&parameter.name)
                    } else {
                        p.name == parameter.name
                    }
            });
            if !declared {
                undeclared = true;
                error(
                    &format!("{}/name", parameter.pointer),
                    format!(
                        "{} declares no {} parameter {:?}",
                        operation.label(),
                        parameter.location.as_str(),
                        parameter.name
                    ),
                );
            }
        }
        if undeclared {
            continue;
        }
        let source = &inputs.apis[api];
        match step::plan(
            source.document,
            source.curation,
            inputs.tools,
            operation,
            step,
            &tool_name,
        ) {
            Ok(plan) => plans.push(plan),
            Err(message) => {
                error(&step.pointer, format!("step {:?}: {message}", step.id));
                continue;
            }
        }
        documented.push(super::output::DocumentedStep {
            id: &step.id,
            document: source.document,
            operation,
        });
        steps.push(StepOperation {
            step: step.id.clone(),
            method: operation.method.to_string(),
            path: operation.path.to_string(),
            operation_id: operation.operation_id.map(str::to_string),
        });
    }
    // Read-only is justified only when every step is; nothing else follows from methods.
    let reads_only = !steps.is_empty()
        && steps.iter().all(|step| {
            annotations::justified(&step.method).contains(&annotations::Guarantee::ReadOnly)
        });
    let method = if reads_only { "GET" } else { "POST" };
    let mut decision = annotations::decide(method, &entry.annotations);
    if !reads_only {
        decision.annotations.read_only_hint = decision.annotations.read_only_hint.or(Some(false));
    }
    if !decision.unjustified.is_empty() && entry.because.is_none() {
        let claims: Vec<&str> = decision.unjustified.iter().map(|g| g.hint()).collect();
        failed = true;
        diagnostics.push(Diagnostic::error(
            Location::curation(path),
            format!(
                "{} is not justified: a workflow is read-only only when every step's method justifies it (GET, HEAD, QUERY); add `because:` with the evidence, or drop the claim",
                claims.join(", ")
            ),
        ));
    }
    if let Some(name) = &entry.name
        && !naming::is_valid(name)
    {
        failed = true;
        diagnostics.push(Diagnostic::error(
            Location::curation(format!("{path}.name")),
            format!("{name:?} is not a tool name (letters, digits, `_` and `-`, at most 128)"),
        ));
    }
    // A tool the user confirms is not run unasked through a workflow: the curation says
    // whether the workflow confirms.
    if entry.confirm.is_none() {
        for (step, plan) in steps.iter().zip(&plans) {
            let confirming = inputs.tools.iter().find(|tool| {
                tool.confirm.is_some()
                    && tool.operation().is_some_and(|operation| {
                        operation.api == plan.operation.api
                            && operation.plan.method == plan.operation.plan.method
                            && operation.plan.path == plan.operation.plan.path
                    })
            });
            if let Some(tool) = confirming {
                failed = true;
                diagnostics.push(Diagnostic::error(
                    Location::curation(path),
                    format!(
                        "step {:?} calls {}, whose tool {} asks the user to confirm each call: give this workflow `confirm:` (asked once, before its first step), or `confirm: false`",
                        step.step,
                        step.label(),
                        tool.name
                    ),
                ));
            }
        }
    }
    let (input_schema, unchecked_patterns) =
        input_schema(arazzo, workflow, diagnostics, &mut failed);
    let confirm = match confirm::resolve(entry.confirm.as_ref(), &input_schema) {
        Ok(confirm) => confirm,
        Err(problems) => {
            failed = true;
            for (key, message) in problems {
                diagnostics.push(Diagnostic::error(
                    Location::curation(format!("{path}.confirm.{key}")),
                    message,
                ));
            }
            None
        }
    };
    if failed {
        return None;
    }
    if confirm.is_some() && !super::ConfirmSettings::resolve(&inputs.curation.confirm).allow_legacy
    {
        diagnostics.push(
            Diagnostic::warning(
                Location::curation(format!("{path}.confirm")),
                format!(
                    "composite tool {tool_name:?} asks the user to confirm each call: clients of MCP 2025-11-25, which cannot be asked, see the tool but every call of theirs is refused (`confirm_legacy: refuse`, the default); `confirm_legacy: allow` lets their calls through unconfirmed"
                ),
            )
            .with_code(super::compile::LEGACY_CANNOT_CONFIRM),
        );
    }
    let mut annotations = decision.annotations;
    annotations.title = entry.title.clone();
    let class = if reads_only {
        SafetyClass::Reads
    } else {
        SafetyClass::Writes
    };
    let rate_limits = &inputs.curation.rate_limits;
    let limits = ToolLimits {
        class,
        tool: None,
        class_limit: match class {
            SafetyClass::Reads => rate_limits.reads,
            SafetyClass::Writes => rate_limits.writes,
        },
    };
    Some(Tool {
        name: tool_name,
        title: entry.title.clone(),
        description: entry.description.clone().or_else(|| describe(workflow)),
        input_schema: InputSchema::new(&input_schema),
        output_schema: super::output::of_workflow(workflow, &documented),
        unchecked_patterns,
        annotations,
        basis: decision.basis,
        // Every scope each step's operation would need: the authenticator reads them off
        // the steps.
        scopes: None,
        limits,
        confirm,
        listed: true,
        runs: Runs::Workflow(std::sync::Arc::new(WorkflowPlan {
            workflow: workflow.clone(),
            steps,
            plans,
            max_steps: entry
                .max_steps
                .map_or(DEFAULT_MAX_STEPS, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            timeout: entry
                .timeout_ms
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        })),
    })
}

/// The operation at `/paths/{escaped path}/{field}`, or (OpenAPI 3.2)
/// `/paths/{escaped path}/additionalOperations/{method}`.
fn by_pointer<'o, 'd>(operations: &'o [Operation<'d>], pointer: &str) -> Option<&'o Operation<'d>> {
    let mut tokens = pointer.strip_prefix("/paths/")?.split('/');
    let path = unescape_token(tokens.next()?)?;
    let field = tokens.next()?;
    let found = if field == "additionalOperations" {
        let method = unescape_token(tokens.next()?)?;
        operations
            .iter()
            .find(|o| o.additional && o.path == path && o.method == method)
    } else {
        let (_, method) = operation::METHODS
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(field))?;
        operations
            .iter()
            .find(|o| !o.additional && o.path == path && o.method == *method)
    };
    if tokens.next().is_some() {
        return None;
    }
    found
}

/// The workflow's own words: its summary, then its description when that says more.
fn describe(workflow: &Workflow) -> Option<String> {
    let summary = workflow
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let description = workflow
        .description
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match (summary, description) {
        (Some(summary), Some(description)) if description.starts_with(summary) => {
            Some(description.to_string())
        }
        (Some(summary), Some(description)) => Some(format!("{summary}\n\n{description}")),
        (Some(text), None) | (None, Some(text)) => Some(text.to_string()),
        (None, None) => None,
    }
}

/// The workflow's `inputs` as a tool's input schema, translated by [`SchemaBuilder`] as an
/// operation's are. A `$ref` in it does not resolve (the Arazzo file is not part of the
/// OpenAPI document), which the builder reports. The schema is held to what an operation's
/// is: valid JSON Schema 2020-12, no composition at its root that a major client refuses (a
/// warning), and each `pattern` the linear-time engine cannot compile served unchecked
/// (returned, with a warning).
fn input_schema(
    arazzo: &Arazzo,
    workflow: &Workflow,
    diagnostics: &mut Vec<Diagnostic>,
    failed: &mut bool,
) -> (Value, Vec<String>) {
    let Some(inputs) = &workflow.inputs else {
        let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
        return (empty, Vec::new());
    };
    let pointer = format!("{}/inputs", workflow.pointer);
    // The builder reads schemas in a document; the inputs are translated as a 3.1 schema
    // standing alone.
    let holder = json!({"openapi": "3.1.0", "info": {"title": "", "version": ""}, "paths": {}});
    let Ok(standalone) = Document::from_value(holder) else {
        return (
            json!({"type": "object", "additionalProperties": false}),
            Vec::new(),
        );
    };
    let mut builder = SchemaBuilder::new(&standalone);
    let mut schema = builder.schema(FileId(0), &pointer, inputs);
    let mut unchecked: Vec<String> = super::compile::unchecked(&builder.patterns)
        .cloned()
        .collect();
    unchecked.sort();
    unchecked.dedup();
    for pattern in &unchecked {
        diagnostics.push(Diagnostic::warning(
            Location::document(&arazzo.file, pointer.clone()),
            format!("pattern {pattern:?} is not supported by the linear-time regex engine; it is served but not checked"),
        ));
    }
    for (at, message) in std::mem::take(&mut builder.errors) {
        *failed = true;
        diagnostics.push(Diagnostic::error(
            Location::document(&arazzo.file, at),
            format!("the workflow's inputs do not translate: {message}"),
        ));
    }
    for (_, at, message) in std::mem::take(&mut builder.warnings) {
        diagnostics.push(Diagnostic::warning(
            Location::document(&arazzo.file, at),
            message,
        ));
    }
    let defs = builder.into_defs();
    let Some(object) = schema.as_object_mut() else {
        return (schema, unchecked);
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        *failed = true;
        diagnostics.push(Diagnostic::error(
            Location::document(&arazzo.file, pointer.clone()),
            "a workflow's inputs must be an object schema (`type: object`), its properties the tool's arguments",
        ));
    }
    object
        .entry("additionalProperties")
        .or_insert(Value::Bool(false));
    object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if !defs.is_empty() {
        object.insert("$defs".to_string(), Value::Object(defs));
    }
    if let Some(why) = super::input::too_deep(&schema) {
        *failed = true;
        diagnostics.push(Diagnostic::error(
            Location::document(&arazzo.file, pointer.clone()),
            why,
        ));
    }
    if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
        *failed = true;
        diagnostics.push(Diagnostic::error(
            Location::document(&arazzo.file, pointer.clone()),
            format!(
                "the workflow's inputs would not be valid JSON Schema 2020-12 (at {}: {error})",
                error.instance_path()
            ),
        ));
    }
    let composed: Vec<&str> = super::body::ROOT_COMPOSITION
        .iter()
        .copied()
        .filter(|keyword| schema.get(*keyword).is_some())
        .collect();
    if !composed.is_empty() {
        diagnostics.push(Diagnostic::warning(
            Location::document(&arazzo.file, pointer),
            format!(
                "the workflow's inputs have {} at the root, which Anthropic's Messages API (`allOf`, `anyOf`, `oneOf`) and OpenAI's function calling (those and `not`) refuse, failing every request that lists the tool; write the inputs as one object schema",
                composed.join(", ")
            ),
        ));
    }
    (schema, unchecked)
}
