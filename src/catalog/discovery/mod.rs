//! Discovery over a large API (`discovery:`): instead of one listed tool per chosen
//! operation, five tools over all of them. `search_operations` ranks the operations for a
//! query in words ([`SearchIndex`]), `describe_operation` answers their definitions as
//! `tools/list` would have served them, and one calling tool per class calls one: each
//! calling tool's annotations are the strongest its class's operations all justify, so a
//! client still tells a read from a delete.
//!
//! The operations stay what they were: every one is a [`Tool`] of the catalog, compiled as
//! any other, with [`Tool::listed`] false unless `also_list` names it. A call through a
//! calling tool is that tool's call (scopes, validation, limits, confirmation, the result
//! and its record all name the operation): only `mcp` tells the two ways in apart.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use crate::curation::Curation;
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::Document;

use super::{
    AnnotationBasis, Annotations, Catalog, InputSchema, OperationStatus, Runs, SafetyClass, Tool,
    ToolLimits, annotations, naming, operation,
};

pub mod search;
#[cfg(test)]
mod tests;

pub use search::{Entry, Filter, SearchIndex};

/// The `_meta` key under which a discovery tool says what it is: `{"kind": "search"}`, or
/// for a calling tool `{"kind": "call", "class": "read"}`.
pub const DISCOVERY_META_KEY: &str = "dev.ferry/discovery";
/// The discovery tools' names, before an API's prefix.
pub const SEARCH: &str = "search_operations";
pub const DESCRIBE: &str = "describe_operation";

/// One of the tools discovery serves, and the operations it reaches.
#[derive(Debug, Clone)]
pub struct DiscoveryTool {
    pub kind: DiscoveryKind,
    /// Every operation behind this API's discovery tools, shared by the five of them.
    pub index: Arc<SearchIndex>,
    /// What leads the discovery tools' names (the API's prefix), if anything does.
    pub prefix: Option<String>,
}

/// What a discovery tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryKind {
    /// Ranks the operations for a query.
    Search,
    /// Answers operations' definitions.
    Describe,
    /// Calls an operation of its class.
    Call(CallClass),
}

impl DiscoveryKind {
    /// The word `_meta`, logs and reports name it by.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscoveryKind::Search => "search",
            DiscoveryKind::Describe => "describe",
            DiscoveryKind::Call(_) => "call",
        }
    }
}

/// Which calling tool calls an operation: read-only ones, idempotent ones, the rest. Read
/// from the operation's final annotations, so a curated claim (`because:`) moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallClass {
    Read,
    Idempotent,
    Other,
}

impl CallClass {
    pub const ALL: [CallClass; 3] = [CallClass::Read, CallClass::Idempotent, CallClass::Other];

    /// The class of an operation whose tool has `annotations`: the strongest whose calling
    /// tool asserts nothing they do not.
    pub fn of(annotations: &Annotations) -> CallClass {
        if annotations.read_only_hint == Some(true) {
            CallClass::Read
        } else if annotations.idempotent_hint == Some(true) {
            CallClass::Idempotent
        } else {
            CallClass::Other
        }
    }

    /// The calling tool's name, before an API's prefix.
    pub fn tool(self) -> &'static str {
        match self {
            CallClass::Read => "call_read_operation",
            CallClass::Idempotent => "call_idempotent_operation",
            CallClass::Other => "call_operation",
        }
    }

    /// The word a search filter and a report name it by.
    pub fn as_str(self) -> &'static str {
        match self {
            CallClass::Read => "read",
            CallClass::Idempotent => "idempotent",
            CallClass::Other => "other",
        }
    }

    /// The calling tool's annotations: what a method of the class justifies (GET's, PUT's,
    /// POST's), so that every operation it calls asserts at least as much.
    pub fn annotations(self) -> Annotations {
        annotations::from_method(self.method())
    }

    /// A method whose annotations are the class's.
    fn method(self) -> &'static str {
        match self {
            CallClass::Read => "GET",
            CallClass::Idempotent => "PUT",
            CallClass::Other => "POST",
        }
    }
}

/// Puts `catalog`'s operations behind discovery when `curation` turns it on: each
/// operation's tool stays in the catalog, unlisted unless `also_list` names it, and the five
/// discovery tools (led by the API's prefix, as its tools are) are added over all of them.
/// Composite tools stay listed as themselves. Pure, as [`super::compile`] is.
pub fn add_discovery(
    catalog: &mut Catalog,
    document: &Document,
    curation: &Curation,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let Some(discovery) = &curation.discovery else {
        return diagnostics;
    };
    let prefix = curation.name_prefix.as_deref();
    let names: Vec<String> = [SEARCH, DESCRIBE]
        .into_iter()
        .chain(CallClass::ALL.map(CallClass::tool))
        .map(|name| naming::prefixed(prefix, name.to_string()))
        .collect();
    // A chosen operation named as a discovery tool is: it cannot be both.
    let taken: Vec<String> = catalog
        .tools
        .iter()
        .filter(|tool| names.contains(&tool.name))
        .map(|tool| tool.name.clone())
        .collect();
    for name in &taken {
        let message = format!(
            "tool name {name:?} is a discovery tool's: rename the operation's tool with `name:`"
        );
        diagnostics.push(Diagnostic::error(
            Location::curation(crate::curation::discovery::KEY),
            message.clone(),
        ));
        for report in catalog
            .operations
            .iter_mut()
            .filter(|report| &report.tool == name && report.status == OperationStatus::Served)
        {
            report.status = OperationStatus::Collision;
            report.reason = Some(message.clone());
        }
    }
    catalog.tools.retain(|tool| !taken.contains(&tool.name));

    let also_list = also_listed(catalog, &discovery.also_list, &mut diagnostics);
    let tags = operation_tags(document);
    let tokens: HashMap<&str, usize> = catalog
        .operations
        .iter()
        .filter_map(|report| Some((report.tool.as_str(), report.tokens?)))
        .collect();
    let summaries: HashMap<&str, &str> = catalog
        .operations
        .iter()
        .filter_map(|report| Some((report.tool.as_str(), report.summary.as_deref()?)))
        .collect();
    let mut entries = Vec::new();
    for tool in catalog.tools.iter_mut() {
        let Some(operation) = tool.operation() else {
            continue;
        };
        let plan = &operation.plan;
        let key = (plan.method.to_string(), plan.path.clone());
        let (tags, description) = tags.get(&key).cloned().unwrap_or_default();
        entries.push(Entry {
            tool: tool.name.clone(),
            operation_id: operation.operation_id.clone(),
            method: plan.method.to_string(),
            path: plan.path.clone(),
            summary: summaries.get(tool.name.as_str()).map(|s| s.to_string()),
            description,
            tags,
            parameters: parameter_names(tool),
            class: CallClass::of(&tool.annotations),
            annotations: tool.annotations.clone(),
            confirms: tool.confirm.is_some(),
            tokens: tokens
                .get(tool.name.as_str())
                .copied()
                .unwrap_or_else(|| super::trim::tool_tokens(tool)),
        });
        tool.listed = also_list.contains(&tool.name);
    }
    if entries.is_empty() {
        diagnostics.push(Diagnostic::warning(
            Location::curation(crate::curation::discovery::KEY),
            "discovery is on but no operation is chosen, so its tools find nothing: choose operations under `tools:` or `tags:`, or serve with --all",
        ));
    }
    let index = Arc::new(SearchIndex::new(entries));
    let kinds = [DiscoveryKind::Search, DiscoveryKind::Describe]
        .into_iter()
        .chain(CallClass::ALL.map(DiscoveryKind::Call));
    for (kind, name) in kinds.zip(names) {
        catalog
            .tools
            .push(discovery_tool(name, kind, &index, prefix));
    }
    catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
    diagnostics
}

/// Whether the `also_list` entry `entry` names the tool `name`, which calls the operation
/// `operation_id`, `method path`: by tool name, operationId or `METHOD /path`.
fn names(entry: &str, name: &str, operation_id: Option<&str>, method: &str, path: &str) -> bool {
    name == entry
        || operation_id == Some(entry)
        || entry
            .split_once(' ')
            .is_some_and(|(entry_method, entry_path)| {
                entry_method.eq_ignore_ascii_case(method) && entry_path == path
            })
}

/// Whether the tool `name` (of the operation `operation_id`, `method path`) is listed as
/// itself under `discovery`: always without discovery, else where `also_list` names it.
pub(super) fn listed_as_itself(
    discovery: Option<&crate::curation::discovery::Discovery>,
    name: &str,
    operation_id: Option<&str>,
    method: &str,
    path: &str,
) -> bool {
    discovery.is_none_or(|discovery| {
        discovery
            .also_list
            .iter()
            .any(|entry| names(entry, name, operation_id, method, path))
    })
}

/// The names of the tools `also_list` keeps listed; an entry that names no chosen operation
/// is an error, as a `tools:` entry that matches nothing is.
fn also_listed(
    catalog: &Catalog,
    also_list: &[String],
    diagnostics: &mut Vec<Diagnostic>,
) -> HashSet<String> {
    let mut listed = HashSet::new();
    for (position, entry) in also_list.iter().enumerate() {
        let found = catalog.tools.iter().find(|tool| {
            tool.operation().is_some_and(|operation| {
                names(
                    entry,
                    &tool.name,
                    operation.operation_id.as_deref(),
                    operation.plan.method.as_str(),
                    &operation.plan.path,
                )
            })
        });
        match found {
            Some(tool) => {
                listed.insert(tool.name.clone());
            }
            None => diagnostics.push(Diagnostic::error(
                Location::curation(format!("discovery.also_list.{position}")),
                format!(
                    "{entry:?} names no chosen operation: name one by its operationId, `METHOD /path` or tool name, and choose it under `tools:` or `tags:`"
                ),
            )),
        }
    }
    listed
}

/// Each operation's tags and description, by its method and path.
fn operation_tags(document: &Document) -> HashMap<(String, String), (Vec<String>, Option<String>)> {
    let mut problems = Vec::new();
    operation::list(document, &mut problems)
        .into_iter()
        .map(|operation| {
            (
                (operation.method.to_string(), operation.path.to_string()),
                (
                    operation.tags.iter().map(|tag| tag.to_string()).collect(),
                    operation.description().map(str::to_string),
                ),
            )
        })
        .collect()
}

/// The names a caller gives an operation's arguments: its parameters' and, where the body is
/// spread into the arguments, its properties.
fn parameter_names(tool: &Tool) -> Vec<String> {
    let Some(operation) = tool.operation() else {
        return Vec::new();
    };
    let mut names: Vec<String> = operation
        .plan
        .parameters
        .iter()
        .map(|parameter| parameter.argument.clone())
        .collect();
    if let Some(super::BodyPlan {
        placement: super::BodyPlacement::Merged(properties),
        ..
    }) = &operation.plan.body
    {
        names.extend(properties.iter().cloned());
    }
    names
}

/// One discovery tool: its definition and what it runs.
fn discovery_tool(
    name: String,
    kind: DiscoveryKind,
    index: &Arc<SearchIndex>,
    prefix: Option<&str>,
) -> Tool {
    let call = |class: CallClass| naming::prefixed(prefix, class.tool().to_string());
    let (description, schema, annotations) = match kind {
        DiscoveryKind::Search => (
            format!(
                "Find this API's operations for a task, described in words. Answers the best matches, each with its name, what it does, its method and path, and which tool calls it ({}, {} or {}). Read an operation's arguments with {} before calling it.",
                call(CallClass::Read),
                call(CallClass::Idempotent),
                call(CallClass::Other),
                naming::prefixed(prefix, DESCRIBE.to_string())
            ),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, in words: `close an issue`, `list a repository's stargazers`."},
                    "tag": {"type": "string", "description": "Only operations with this tag."},
                    "class": {"type": "string", "enum": ["read", "idempotent", "other"], "description": "Only operations its class's tool calls: read (only reads), idempotent (repeating it changes nothing more), other."},
                    "path_prefix": {"type": "string", "description": "Only operations whose path starts with this, as `/repos/{owner}/{repo}/issues`."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": search::MAX_LIMIT, "description": "The most operations to answer; 10 unless given."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            annotations::from_method("GET"),
        ),
        DiscoveryKind::Describe => (
            format!(
                "The full definitions of operations named by {}: each as a tool definition (its description, and the input schema its arguments must follow), and the tool that calls it.",
                naming::prefixed(prefix, SEARCH.to_string())
            ),
            json!({
                "type": "object",
                "properties": {
                    "operations": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": search::MAX_DESCRIBED, "description": "The operations' names, as the search answered them."}
                },
                "required": ["operations"],
                "additionalProperties": false
            }),
            annotations::from_method("GET"),
        ),
        DiscoveryKind::Call(class) => (
            format!(
                "Call one of this API's {} operations by its name, with the arguments its definition asks for (read it with {}). {}",
                match class {
                    CallClass::Read => "read-only",
                    CallClass::Idempotent =>
                        "idempotent (repeating a call changes nothing more than making it once)",
                    CallClass::Other => "other (neither read-only nor idempotent)",
                },
                naming::prefixed(prefix, DESCRIBE.to_string()),
                match class {
                    CallClass::Read => "Only reads: nothing is changed.",
                    CallClass::Idempotent => "It may change or delete data.",
                    CallClass::Other =>
                        "It may change or delete data, and repeating a call may repeat its effect.",
                }
            ),
            json!({
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "description": "The operation's name, as the search answered it."},
                    "arguments": {"type": "object", "description": "The operation's arguments, as its input schema asks for them."}
                },
                "required": ["operation"],
                "additionalProperties": false
            }),
            class.annotations(),
        ),
    };
    let method = match kind {
        DiscoveryKind::Call(class) => class.method(),
        _ => "GET",
    };
    Tool {
        name,
        title: None,
        description: Some(description),
        input_schema: InputSchema::new(&schema),
        annotations,
        basis: AnnotationBasis::Method,
        unchecked_patterns: Vec::new(),
        output_schema: None,
        scopes: None,
        // A discovery tool spends no budget of its own: a call through a calling tool
        // spends its operation's.
        limits: ToolLimits {
            class: SafetyClass::of(method),
            tool: None,
            class_limit: None,
        },
        confirm: None,
        listed: true,
        runs: Runs::Discovery(DiscoveryTool {
            kind,
            index: Arc::clone(index),
            prefix: prefix.map(str::to_string),
        }),
    }
}

impl DiscoveryTool {
    /// The name of the tool that calls operations of `class`, beside this one.
    pub fn caller(&self, class: CallClass) -> String {
        naming::prefixed(self.prefix.as_deref(), class.tool().to_string())
    }

    /// The name of the tool named `base` beside this one (`search_operations`, ...).
    pub fn sibling(&self, base: &str) -> String {
        naming::prefixed(self.prefix.as_deref(), base.to_string())
    }

    /// What its `_meta` says of it.
    pub fn meta(&self) -> Value {
        match self.kind {
            DiscoveryKind::Call(class) => {
                json!({"kind": self.kind.as_str(), "class": class.as_str()})
            }
            kind => json!({"kind": kind.as_str()}),
        }
    }
}
