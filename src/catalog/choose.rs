//! Which operations become tools, by the rules of default deny: `tools:` entries, `tags:`,
//! `--all` and, when the curation honours them, the document's `x-mcp` extensions; and the
//! settings each chosen one gets.
//!
//! An operation is a tool only when chosen: by a `tools:` entry (operationId or
//! `METHOD /path`), by a `tags:` entry (which, in OpenAPI 3.2, names the tags under it through
//! `parent` too), by `--all`, or by an `x-mcp` extension in the document when the curation
//! says `document_extensions: true`. Precedence, strongest first: a tag marked `false`; a
//! `tools:` entry (`false` switches off); `x-mcp`; a chosen tag; `--all`. Where a tools entry
//! and `x-mcp` both give a setting, the curation's wins.

use std::collections::HashMap;

use serde_json::Value;

use crate::curation::{self, AnnotationOverrides, Curation, ToolEntry};
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::{Document, SpecVersion};

use super::OperationStatus;
use super::operation::{self, Operation};

/// How the curation decided about one operation, and the settings that apply to it.
pub(super) struct Choice {
    pub(super) chosen: bool,
    /// `Served` when chosen (compiling may still find it ineligible); otherwise what left it
    /// out.
    pub(super) status: OperationStatus,
    pub(super) reason: String,
    /// The curation entry's settings, over the document's `x-mcp` where it is honoured.
    pub(super) settings: ToolEntry,
    /// Where the settings came from, for diagnostics.
    pub(super) origin: Option<String>,
}

impl Choice {
    pub(super) fn location(&self) -> Location {
        match &self.origin {
            Some(path) => Location::curation(path),
            None => Location::General,
        }
    }
}

/// The operation an entry that selects none likely meant, as the message names it: an
/// operationId a typo away, or the one whose tool is named as the entry is (a tool's name
/// from `ferry check` written where its operationId goes).
fn likely_meant(selector: &str, operations: &[Operation]) -> Option<String> {
    let ids = || operations.iter().filter_map(|op| op.operation_id);
    if let Some(id) = ids().find(|id| id.eq_ignore_ascii_case(selector)) {
        return Some(format!("{id:?}"));
    }
    // An `additionalOperations` method is matched only as written.
    if let Some(label) = operations
        .iter()
        .filter(|op| op.additional)
        .map(Operation::label)
        .find(|label| label.eq_ignore_ascii_case(selector))
    {
        return Some(format!("{label:?}"));
    }
    if let Some(id) = ids().find(|id| crate::curation::similar(id, selector)) {
        return Some(format!("{id:?}"));
    }
    let named = operations.iter().find(|op| {
        [
            crate::curation::Naming::AsWritten,
            crate::curation::Naming::SnakeCase,
        ]
        .into_iter()
        .any(|naming| {
            super::naming::derive(naming, op.operation_id, op.method, op.path) == selector
        })
    })?;
    let key = match named.operation_id {
        Some(id) => format!("{id:?}"),
        None => format!("{:?}", named.label()),
    };
    Some(format!(
        "{key} (the operation whose tool is named {selector:?}; `tools:` is keyed by operationId or `METHOD /path`, and `name:` sets a tool's name)"
    ))
}

pub(super) fn choose(
    document: &Document,
    operations: &[Operation],
    curation: &Curation,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Choice> {
    // Which operation each tool entry selects.
    let mut entry_of: HashMap<usize, &ToolEntry> = HashMap::new();
    for entry in &curation.tools {
        let path = format!("tools.{}", entry.selector);
        let matches: Vec<usize> = operations
            .iter()
            .enumerate()
            .filter(|(_, op)| selects(&entry.selector, op))
            .map(|(i, _)| i)
            .collect();
        if matches.is_empty() {
            let mut message = format!(
                "{:?} matches no operation (give an operationId or `METHOD /path`)",
                entry.selector
            );
            if let Some(close) = likely_meant(&entry.selector, operations) {
                message.push_str(&format!("; did you mean {close}?"));
            }
            diagnostics.push(Diagnostic::error(Location::curation(path), message));
            continue;
        }
        for index in matches {
            if let Some(previous) = entry_of.insert(index, entry) {
                diagnostics.push(
                    Diagnostic::error(
                        Location::curation(path.clone()),
                        format!(
                            "this operation is already chosen by `tools.{}`",
                            previous.selector
                        ),
                    )
                    .with_operation(operations[index].label()),
                );
            }
        }
    }
    // Each operation's tags with every tag they descend from (OpenAPI 3.2's `parent`): a
    // `tags:` entry names its tag's descendants too.
    let ancestry = tag_ancestry(document, diagnostics);
    let tags_of: Vec<Vec<&str>> = operations
        .iter()
        .map(|op| with_ancestors(&op.tags, &ancestry))
        .collect();
    for tag in &curation.tags {
        if !tags_of.iter().any(|tags| tags.contains(&tag.tag.as_str())) {
            diagnostics.push(Diagnostic::error(
                Location::curation(format!("tags.{}", tag.tag)),
                format!("no operation is tagged {:?}", tag.tag),
            ));
        }
    }

    operations
        .iter()
        .enumerate()
        .map(|(index, operation)| {
            let extension = if curation.document_extensions {
                x_mcp(document, operation, diagnostics)
            } else {
                None
            };
            let entry = entry_of.get(&index).copied();
            let mut settings = match (&extension, entry) {
                (Some(from_document), Some(entry)) => overlay(from_document, entry),
                (Some(from_document), None) => from_document.clone(),
                (None, Some(entry)) => entry.clone(),
                (None, None) => ToolEntry {
                    enabled: true,
                    ..ToolEntry::default()
                },
            };
            let origin = match (entry, &extension) {
                (Some(entry), _) => Some(format!("tools.{}", entry.selector)),
                (None, Some(_)) => Some(format!("x-mcp of {}", operation.label())),
                (None, None) => None,
            };
            let tags = &tags_of[index];
            let excluded_by = curation
                .tags
                .iter()
                .find(|t| !t.enabled && tags.contains(&t.tag.as_str()));
            let chosen_by_tag = curation
                .tags
                .iter()
                .find(|t| t.enabled && tags.contains(&t.tag.as_str()));
            let (status, reason) = if let Some(tag) = excluded_by {
                (
                    OperationStatus::Excluded,
                    format!("off by tags.{}", tag.tag),
                )
            } else if let Some(entry) = entry {
                if entry.enabled {
                    (OperationStatus::Served, "tools entry".to_string())
                } else {
                    (OperationStatus::Off, "off by tools entry".to_string())
                }
            } else if let Some(extension) = &extension {
                if extension.enabled {
                    (OperationStatus::Served, "x-mcp".to_string())
                } else {
                    (OperationStatus::Off, "off by x-mcp".to_string())
                }
            } else if let Some(tag) = chosen_by_tag {
                (OperationStatus::Served, format!("tags.{}", tag.tag))
            } else if curation.all {
                (OperationStatus::Served, "--all".to_string())
            } else {
                (OperationStatus::NotChosen, "not chosen".to_string())
            };
            let chosen = status == OperationStatus::Served;
            settings.enabled = chosen;
            Choice {
                chosen,
                status,
                reason,
                settings,
                origin,
            }
        })
        .collect()
}

/// The stable codes of the warnings about tags' `parent`s (`Diagnostic::code`).
pub const TAG_PARENT_UNKNOWN: &str = "tag-parent-unknown";
pub const TAG_PARENT_CYCLE: &str = "tag-parent-cycle";

/// Each tag of the document's `tags` list that has a `parent` (OpenAPI 3.2), with the tags
/// it descends from, nearest first. A parent that names no tag, or a chain that comes back
/// to where it started, is a warning: the chain stops there.
fn tag_ancestry<'d>(
    document: &'d Document,
    diagnostics: &mut Vec<Diagnostic>,
) -> HashMap<&'d str, Vec<&'d str>> {
    let mut ancestry = HashMap::new();
    if document.version != SpecVersion::OpenApi32 {
        return ancestry;
    }
    let Some(tags) = document.root().get("tags").and_then(Value::as_array) else {
        return ancestry;
    };
    let parent_of: HashMap<&str, (usize, &str)> = tags
        .iter()
        .enumerate()
        .filter_map(|(at, tag)| {
            let name = tag.get("name")?.as_str()?;
            let parent = tag.get("parent")?.as_str()?;
            Some((name, (at, parent)))
        })
        .collect();
    let names: Vec<&str> = tags
        .iter()
        .filter_map(|tag| tag.get("name")?.as_str())
        .collect();
    let root = &document.file(crate::openapi::FileId(0)).name;
    for (at, tag) in tags.iter().enumerate() {
        let Some(name) = tag.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(&(_, parent)) = parent_of.get(name) else {
            continue;
        };
        let location = Location::document(root, format!("/tags/{at}/parent"));
        if !names.contains(&parent) {
            diagnostics.push(
                Diagnostic::warning(
                    location,
                    format!(
                        "tag {name:?} names {parent:?} as its parent, which is not a tag of the document: a `tags:` entry for {parent:?} does not choose the operations tagged {name:?}"
                    ),
                )
                .with_code(TAG_PARENT_UNKNOWN),
            );
            continue;
        }
        let mut chain = vec![parent];
        let mut next = parent;
        while let Some(&(_, grandparent)) = parent_of.get(next) {
            if grandparent == name || chain.contains(&grandparent) {
                diagnostics.push(
                    Diagnostic::warning(
                        location.clone(),
                        format!(
                            "tag {name:?} descends from itself through `parent` ({} → {grandparent}): its ancestors are read up to the loop",
                            std::iter::once(name)
                                .chain(chain.iter().copied())
                                .collect::<Vec<_>>()
                                .join(" → ")
                        ),
                    )
                    .with_code(TAG_PARENT_CYCLE),
                );
                break;
            }
            if !names.contains(&grandparent) {
                break;
            }
            chain.push(grandparent);
            next = grandparent;
        }
        ancestry.insert(name, chain);
    }
    ancestry
}

/// `tags` with every tag each descends from, in order, each once.
fn with_ancestors<'d>(tags: &[&'d str], ancestry: &HashMap<&'d str, Vec<&'d str>>) -> Vec<&'d str> {
    let mut all = tags.to_vec();
    for tag in tags {
        for ancestor in ancestry.get(tag).into_iter().flatten() {
            if !all.contains(ancestor) {
                all.push(ancestor);
            }
        }
    }
    all
}

/// Whether a curation selector (operationId or `METHOD /path`) names this operation. A
/// fixed field's method is matched in any case (`get /pets`); an `additionalOperations`
/// method only as written, since methods are case-sensitive.
fn selects(selector: &str, operation: &Operation) -> bool {
    if let Some((method, path)) = selector.split_once(' ') {
        let fixed = operation::METHODS
            .iter()
            .any(|(_, fixed)| fixed.eq_ignore_ascii_case(method));
        if fixed {
            return !operation.additional
                && method.eq_ignore_ascii_case(operation.method)
                && path.trim() == operation.path;
        }
        if operation.additional && method == operation.method && path.trim() == operation.path {
            return true;
        }
    }
    operation.operation_id == Some(selector)
}

/// The tool entry's settings over the document's: each field the curation gives wins.
fn overlay(document: &ToolEntry, curation: &ToolEntry) -> ToolEntry {
    let pick = |a: &Option<bool>, b: &Option<bool>| b.or(*a);
    ToolEntry {
        selector: curation.selector.clone(),
        enabled: curation.enabled,
        omit: curation.omit.clone(),
        name: curation.name.clone().or_else(|| document.name.clone()),
        title: curation.title.clone().or_else(|| document.title.clone()),
        description: curation
            .description
            .clone()
            .or_else(|| document.description.clone()),
        annotations: AnnotationOverrides {
            read_only_hint: pick(
                &document.annotations.read_only_hint,
                &curation.annotations.read_only_hint,
            ),
            destructive_hint: pick(
                &document.annotations.destructive_hint,
                &curation.annotations.destructive_hint,
            ),
            idempotent_hint: pick(
                &document.annotations.idempotent_hint,
                &curation.annotations.idempotent_hint,
            ),
            open_world_hint: pick(
                &document.annotations.open_world_hint,
                &curation.annotations.open_world_hint,
            ),
        },
        because: curation
            .because
            .clone()
            .or_else(|| document.because.clone()),
        mirror_headers: if curation.mirror_headers.is_empty() {
            document.mirror_headers.clone()
        } else {
            curation.mirror_headers.clone()
        },
        call: curation.call.clone(),
        long_running: curation.long_running.clone(),
        scopes: curation.scopes.clone(),
        rate_limit: curation.rate_limit,
        confirm: curation
            .confirm
            .clone()
            .or_else(|| document.confirm.clone()),
    }
}

/// The operation's `x-mcp` extension, read with the curation's own rules.
fn x_mcp(
    document: &Document,
    operation: &Operation,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ToolEntry> {
    let value = operation.value.get("x-mcp")?;
    let mut found = Vec::new();
    let text = operation.label();
    let mut entry = match value {
        Value::Bool(enabled) => ToolEntry {
            selector: text.clone(),
            enabled: *enabled,
            ..ToolEntry::default()
        },
        Value::Object(map) => {
            let mut entry = ToolEntry {
                selector: text.clone(),
                enabled: true,
                ..ToolEntry::default()
            };
            curation::check_keys(map, "x-mcp", &[curation::EXTENSION_KEYS], &mut found);
            entry.enabled = curation::bool_at(map, "enabled", "x-mcp", &mut found).unwrap_or(true);
            entry.name = curation::string_at(map, "name", "x-mcp", &mut found);
            entry.title = curation::string_at(map, "title", "x-mcp", &mut found);
            entry.description = curation::string_at(map, "description", "x-mcp", &mut found);
            entry.because = curation::string_at(map, "because", "x-mcp", &mut found);
            if let Some(annotations) = map.get("annotations") {
                entry.annotations =
                    curation::parse_annotations(annotations, "x-mcp.annotations", &mut found);
            }
            entry.confirm = curation::confirm::parse_tool(map, "x-mcp", &mut found);
            entry
        }
        _ => {
            found.push(Diagnostic::error(
                Location::General,
                "`x-mcp` must be true, false or a mapping",
            ));
            ToolEntry::default()
        }
    };
    let file = document.file(operation.file).name.clone();
    for mut diagnostic in found {
        let pointer = match &diagnostic.location {
            Location::Curation { path } => {
                format!("{}/{}", operation.pointer, path.replace('.', "/"))
            }
            _ => format!("{}/x-mcp", operation.pointer),
        };
        diagnostic.location = Location::document(&file, pointer);
        diagnostics.push(diagnostic.with_operation(text.clone()));
        entry.enabled = false;
    }
    Some(entry)
}
