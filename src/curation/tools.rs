//! One `tools:` entry: which operation it chooses, and what it changes of the tool.

use serde_json::Value;

use super::{
    CallOptions, Confirmation, auth, bool_at, call, check_keys, confirm, join, limits,
    long_running, string_at, string_list,
};
use crate::diagnostic::{Diagnostic, Location};

/// One `tools:` entry: a selector (operationId or `METHOD /path`) and what to change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolEntry {
    /// The key as written: an operationId or `METHOD /path`.
    pub selector: String,
    /// `false` marks the operation off: never a tool, even when a tag chooses it.
    pub enabled: bool,
    pub name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub annotations: AnnotationOverrides,
    /// Evidence for a claim the method does not justify.
    pub because: Option<String>,
    /// Mirror these arguments into `Mcp-Param-{Name}` headers: argument name → Name.
    pub mirror_headers: Vec<(String, String)>,
    /// Optional arguments left out of the tool (`arguments: {omit: [...]}`): JSON pointers
    /// into the served input schema.
    pub omit: Vec<String>,
    /// Scopes a caller needs to see and call the tool (`scopes:`); `None`: the `auth:`
    /// section's default.
    pub scopes: Option<Vec<String>>,
    /// The tool's own limit per caller (`rate_limit:`).
    pub rate_limit: Option<crate::rate::Rate>,
    /// Whether the user must confirm each call (`confirm:`); `None`: the document's `x-mcp`
    /// decides, else no.
    pub confirm: Option<Confirmation>,
    pub call: CallOptions,
    /// How a call follows the operation past its `202 Accepted` (`long_running:`); `None`:
    /// as the document makes plain, if it does.
    pub long_running: Option<long_running::LongRunningEntry>,
}

/// Annotation values the curation sets; `None` leaves the derived value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnnotationOverrides {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// The keys an `x-mcp` extension in a document may use: a tool entry's, less those that
/// only the operator may set.
pub const EXTENSION_KEYS: &[&str] = &[
    "enabled",
    "name",
    "title",
    "description",
    "annotations",
    "because",
    "confirm",
];
/// A tool entry's keys beside [`EXTENSION_KEYS`] (and those of `call` and `auth`).
const OPERATOR_TOOL_KEYS: &[&str] = &["mirror_headers", "arguments", long_running::KEY];
const ARGUMENTS_KEYS: &[&str] = &["omit"];
const ANNOTATION_KEYS: &[&str] = &[
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

pub(super) fn parse_tool(
    selector: &str,
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> ToolEntry {
    let mut entry = ToolEntry {
        selector: selector.to_string(),
        enabled: true,
        ..ToolEntry::default()
    };
    let map = match value {
        Value::Null | Value::Bool(true) => return entry,
        Value::Bool(false) => {
            entry.enabled = false;
            return entry;
        }
        Value::Object(map) => map,
        _ => {
            diagnostics.push(Diagnostic::error(
                Location::curation(path),
                "a tool entry is a mapping of settings (`{}` for the defaults) or `false`",
            ));
            return entry;
        }
    };
    check_keys(
        map,
        path,
        &[
            EXTENSION_KEYS,
            OPERATOR_TOOL_KEYS,
            call::KEYS,
            auth::TOOL_KEYS,
            limits::TOOL_KEYS,
        ],
        diagnostics,
    );
    entry.scopes = auth::parse_tool_scopes(map, path, diagnostics);
    entry.confirm = confirm::parse_tool(map, path, diagnostics);
    entry.enabled = bool_at(map, "enabled", path, diagnostics).unwrap_or(true);
    entry.name = string_at(map, "name", path, diagnostics);
    entry.title = string_at(map, "title", path, diagnostics);
    entry.description = string_at(map, "description", path, diagnostics);
    entry.because = string_at(map, "because", path, diagnostics);
    if let Some(annotations) = map.get("annotations") {
        entry.annotations =
            parse_annotations(annotations, &format!("{path}.annotations"), diagnostics);
    }
    if let Some(mirror) = map.get("mirror_headers") {
        let mirror_path = format!("{path}.mirror_headers");
        match mirror.as_object() {
            Some(pairs) => {
                for (argument, header) in pairs {
                    match header.as_str() {
                        Some(header) => entry
                            .mirror_headers
                            .push((argument.clone(), header.to_string())),
                        None => diagnostics.push(Diagnostic::error(
                            Location::curation(format!("{mirror_path}.{argument}")),
                            "a mirrored header is named by a string",
                        )),
                    }
                }
            }
            None => diagnostics.push(Diagnostic::error(
                Location::curation(mirror_path),
                "`mirror_headers` maps argument names to header names",
            )),
        }
    }
    if let Some(arguments) = map.get("arguments") {
        entry.omit = parse_arguments(arguments, &format!("{path}.arguments"), diagnostics);
    }
    entry.rate_limit = limits::parse_tool_rate_limit(map, path, diagnostics);
    entry.call = call::parse_call_options(map, path, diagnostics);
    entry.long_running = long_running::parse(map, path, diagnostics);
    entry
}

/// Reads a tool's `arguments: {omit: [pointer, ...]}`.
fn parse_arguments(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<String> {
    let Some(map) = value.as_object() else {
        diagnostics.push(Diagnostic::error(
            Location::curation(path),
            "`arguments` must be a mapping, such as `{omit: [/properties/verbose]}`",
        ));
        return Vec::new();
    };
    check_keys(map, path, &[ARGUMENTS_KEYS], diagnostics);
    let Some(omit) = map.get("omit") else {
        return Vec::new();
    };
    let omit_path = join(path, "omit");
    let pointers = match omit {
        Value::Null => Vec::new(),
        omit => string_list(omit, &omit_path, diagnostics).unwrap_or_default(),
    };
    for pointer in &pointers {
        if !pointer.starts_with('/') {
            diagnostics.push(Diagnostic::error(
                Location::curation(omit_path.clone()),
                format!(
                    "{pointer:?} is not a JSON pointer into the tool's input schema; write it as `/properties/NAME`"
                ),
            ));
        }
    }
    pointers
}

/// Reads an annotation mapping; shared with the `x-mcp` document extension.
pub fn parse_annotations(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> AnnotationOverrides {
    let Some(map) = value.as_object() else {
        diagnostics.push(Diagnostic::error(
            Location::curation(path),
            "`annotations` must be a mapping",
        ));
        return AnnotationOverrides::default();
    };
    check_keys(map, path, &[ANNOTATION_KEYS], diagnostics);
    AnnotationOverrides {
        read_only_hint: bool_at(map, "readOnlyHint", path, diagnostics),
        destructive_hint: bool_at(map, "destructiveHint", path, diagnostics),
        idempotent_hint: bool_at(map, "idempotentHint", path, diagnostics),
        open_world_hint: bool_at(map, "openWorldHint", path, diagnostics),
    }
}
