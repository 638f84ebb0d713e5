//! The `workflows:` key: the Arazzo document whose workflows become composite tools, and
//! which of them do (default deny: only the workflows listed under `tools`).

use serde_json::Value;

use super::Confirmation;
use super::call::positive_integer;
use super::{AnnotationOverrides, check_keys, join, parse_annotations, string_at};
use crate::diagnostic::{Diagnostic, Location};

/// The top-level key this module reads.
pub const KEYS: &[&str] = &["workflows"];
const SECTION_KEYS: &[&str] = &["document", "tools"];
const ENTRY_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "annotations",
    "because",
    "max_steps",
    "timeout_ms",
    "confirm",
];

/// `workflows:` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workflows {
    /// The Arazzo document: a path relative to the curation's directory.
    pub document: String,
    /// The chosen workflows, in file order.
    pub tools: Vec<WorkflowEntry>,
}

/// One chosen workflow and what to change about its tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowEntry {
    /// The `workflowId` it chooses.
    pub workflow: String,
    pub name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub annotations: AnnotationOverrides,
    /// Evidence for a claim the steps' methods do not justify.
    pub because: Option<String>,
    /// The most steps one call may run, each `goto` and retry counted.
    pub max_steps: Option<u64>,
    /// The time one call may take, every step and wait included, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Whether the user confirms each call (`confirm:`), before its first step.
    pub confirm: Option<Confirmation>,
}

/// Reads `workflows:` from the top-level mapping, when it is there.
pub fn parse(
    map: &serde_json::Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Workflows> {
    let value = map.get("workflows").filter(|v| !v.is_null())?;
    let Some(section) = value.as_object() else {
        diagnostics.push(Diagnostic::error(
            Location::curation("workflows"),
            "`workflows` must be a mapping: `{document: FILE, tools: {workflowId: {...}}}`",
        ));
        return None;
    };
    check_keys(section, "workflows", &[SECTION_KEYS], diagnostics);
    let Some(document) = string_at(section, "document", "workflows", diagnostics) else {
        if section.get("document").is_none() {
            diagnostics.push(Diagnostic::error(
                Location::curation("workflows"),
                "`workflows` needs `document:`, the Arazzo file its workflows are written in",
            ));
        }
        return None;
    };
    let mut workflows = Workflows {
        document,
        tools: Vec::new(),
    };
    match section.get("tools") {
        None | Some(Value::Null) => {}
        Some(Value::Object(tools)) => {
            for (workflow, entry) in tools {
                let path = join("workflows.tools", workflow);
                if let Some(entry) = parse_entry(workflow, entry, &path, diagnostics) {
                    workflows.tools.push(entry);
                }
            }
        }
        Some(_) => diagnostics.push(Diagnostic::error(
            Location::curation("workflows.tools"),
            "`workflows.tools` must be a mapping from workflowId to settings (`{}` for the defaults)",
        )),
    }
    Some(workflows)
}

fn parse_entry(
    workflow: &str,
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<WorkflowEntry> {
    let mut entry = WorkflowEntry {
        workflow: workflow.to_string(),
        ..WorkflowEntry::default()
    };
    let map = match value {
        Value::Null | Value::Bool(true) => return Some(entry),
        Value::Bool(false) => return None,
        Value::Object(map) => map,
        _ => {
            diagnostics.push(Diagnostic::error(
                Location::curation(path),
                "a workflow entry is a mapping of settings (`{}` for the defaults) or `false`",
            ));
            return None;
        }
    };
    check_keys(map, path, &[ENTRY_KEYS], diagnostics);
    entry.name = string_at(map, "name", path, diagnostics);
    entry.title = string_at(map, "title", path, diagnostics);
    entry.description = string_at(map, "description", path, diagnostics);
    entry.because = string_at(map, "because", path, diagnostics);
    if let Some(annotations) = map.get("annotations") {
        entry.annotations = parse_annotations(annotations, &join(path, "annotations"), diagnostics);
    }
    if let Some(value) = map.get("max_steps") {
        entry.max_steps = positive_integer(value, &join(path, "max_steps"), diagnostics);
    }
    entry.confirm = super::confirm::parse_tool(map, path, diagnostics);
    if let Some(value) = map.get("timeout_ms") {
        entry.timeout_ms = positive_integer(value, &join(path, "timeout_ms"), diagnostics);
    }
    Some(entry)
}
