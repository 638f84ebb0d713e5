//! `ferry.lock`: what was reviewed, so that what runs can be held to it.
//!
//! A [`Lock`] records ferry's version, a digest of every document file and of the curation,
//! every operation the document had, for each served tool a digest of each part of its
//! definition and of what a call runs (an operation's request, or a composite tool's
//! workflow and each step's request). [`drift`] compares a catalog with a
//! lock and names every difference that matters: tools added, gone or changed (and in which
//! part),
//! operations the document gained that nothing in the curation decides about, and chosen
//! operations that vanished. [`diff`] compares two catalogs by the same digests, for
//! `ferry diff` and a reload. Pure: the command line reads and writes the file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::catalog::{Catalog, OperationPlan, OperationStatus, Runs, Source, Tool, WorkflowPlan};
use crate::openapi::Document;

/// The version of the lock file's shape.
pub const LOCK_VERSION: u32 = 2;

/// The last lock version written before tools declared output schemas: a lock of it holds no
/// `outputSchema` digest, and drift from it says so rather than only that one was added.
pub const LOCK_VERSION_WITHOUT_OUTPUT: u32 = 1;

/// The file name of a lock, beside the curation file.
pub const LOCK_FILE: &str = "ferry.lock";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lock {
    pub lock_version: u32,
    /// The ferry version that wrote it: a request digest can change with ferry itself.
    pub ferry: String,
    /// `sha256:` digests of the curation file's bytes (absent when there is none) and of each
    /// document file's content (its parsed JSON, so formatting and comments do not count), by
    /// file name.
    pub files: Files,
    /// Every operation of the document, as `METHOD /path`.
    pub operations: BTreeSet<String>,
    /// Digests of what decides where calls go and who may make them, beside the tools: the
    /// upstream base URL, the inbound `auth:` configuration, ferry's upstream credentials and
    /// the identity header (their configuration as written: environment variable names and
    /// key hashes, never secret values).
    pub serving: BTreeMap<String, String>,
    /// Every served tool, an operation's or a composite one, by name.
    pub tools: BTreeMap<String, LockedTool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Files {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub curation: Option<String>,
    pub document: BTreeMap<String, String>,
}

/// A served tool as a lock holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockedTool {
    /// What it runs: `operation` (`METHOD /path`) or `workflow` (the `workflowId`).
    #[serde(flatten)]
    pub source: Source,
    /// A composite tool's steps in order, each `stepId = METHOD /path (operationId)`:
    /// readable, since which operations a workflow runs is what a reviewer looks at first.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub steps: Vec<String>,
    /// A digest of each member of the tool's `tools/list` definition but its name
    /// (`description`, `inputSchema`, `annotations`, …).
    pub definition: BTreeMap<String, String>,
    /// A digest of what a call runs: an operation's request plan and call settings; a
    /// composite tool's workflow as read (parameters, bodies, criteria, actions, outputs),
    /// each step's request and its bounds.
    pub request: String,
    /// A digest of the scopes a caller needs: the curation's `scopes:` and those the
    /// operations' security requirements name.
    pub scopes: String,
}

/// One difference between a lock and what a catalog would serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// A tool is served that the lock does not list.
    ToolAdded { tool: String, source: Source },
    /// A tool the lock lists is not served; `vanished` when its operation is gone from the
    /// document (known only when every operation was compiled).
    ToolRemoved {
        tool: String,
        source: Source,
        vanished: bool,
    },
    /// A tool whose definition or what it runs differs, with the parts that do.
    ToolChanged { tool: String, parts: Vec<String> },
    /// An operation the document gained since the lock that no curation choice covers.
    OperationGained { operation: String },
    /// A setting of the whole server changed: `upstream`, `auth`, `upstreamAuth`,
    /// `upstreamIdentity`.
    ServingChanged { setting: String },
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::ToolAdded { tool, source } => {
                write!(f, "tool {tool:?} ({source}) is served but not in the lock")
            }
            Drift::ToolRemoved {
                tool,
                source,
                vanished: true,
            } => write!(
                f,
                "tool {tool:?} is in the lock, but its operation {source} is gone from the document"
            ),
            Drift::ToolRemoved { tool, source, .. } => write!(
                f,
                "tool {tool:?} ({source}) is in the lock but no longer served"
            ),
            Drift::ToolChanged { tool, parts } => {
                write!(f, "tool {tool:?} changed: {}", parts.join(", "))
            }
            Drift::ServingChanged { setting } => write!(
                f,
                "`{setting}` changed: where calls go or who may make them is not what was locked"
            ),
            Drift::OperationGained { operation } => write!(
                f,
                "the document gained {operation}, which no curation choice covers (serve it, or switch it off with `false`)"
            ),
        }
    }
}

/// The lock for a catalog from a full compile (so that `catalog.operations` lists every
/// operation); `curation` is the curation file's bytes, when there is one.
pub fn lock(catalog: &Catalog, documents: &[(String, Document)], curation: Option<&[u8]>) -> Lock {
    Lock {
        lock_version: LOCK_VERSION,
        ferry: env!("CARGO_PKG_VERSION").to_string(),
        files: Files {
            curation: curation.map(digest_bytes),
            document: document_files(documents),
        },
        operations: catalog.operations.iter().map(label).collect(),
        serving: digests(&serving(catalog)),
        tools: locked_tools(catalog),
    }
}

/// Every difference between `lock` and `catalog` that changes what is served, or that a
/// reviewer must decide about. `every_operation`: `catalog` came from a full compile, so
/// gained and vanished operations can be told; otherwise only tools and settings are
/// compared.
pub fn drift(lock: &Lock, catalog: &Catalog, every_operation: bool) -> Vec<Drift> {
    let mut found: Vec<Drift> = changed_keys(&lock.serving, &digests(&serving(catalog)))
        .into_iter()
        .map(|setting| Drift::ServingChanged { setting })
        .collect();
    let now = locked_tools(catalog);
    let operations: BTreeSet<String> = catalog.operations.iter().map(label).collect();
    for (name, was) in &lock.tools {
        match now.get(name.as_str()) {
            None => found.push(Drift::ToolRemoved {
                tool: name.clone(),
                source: was.source.clone(),
                vanished: every_operation
                    && matches!(&was.source, Source::Operation(operation) if !operations.contains(operation)),
            }),
            Some(is) => {
                let mut parts = changed_parts(was, is);
                if lock.lock_version == LOCK_VERSION_WITHOUT_OUTPUT {
                    for part in &mut parts {
                        if part == "outputSchema" && !was.definition.contains_key(part.as_str()) {
                            *part = "outputSchema (declared since lock version 2; this lock, \
                                     version 1, predates output schemas: review it and run \
                                     `ferry lock`)"
                                .to_string();
                        }
                    }
                }
                if !parts.is_empty() {
                    found.push(Drift::ToolChanged {
                        tool: name.clone(),
                        parts,
                    });
                }
            }
        }
    }
    for (name, is) in &now {
        if !lock.tools.contains_key(name) {
            found.push(Drift::ToolAdded {
                tool: name.clone(),
                source: is.source.clone(),
            });
        }
    }
    if every_operation {
        for report in &catalog.operations {
            let operation = label(report);
            if report.status == OperationStatus::NotChosen && !lock.operations.contains(&operation)
            {
                found.push(Drift::OperationGained { operation });
            }
        }
    }
    found
}

/// A change between catalogs as drift from a lock: the same differences, told to a reviewer.
impl From<Change> for Drift {
    fn from(change: Change) -> Drift {
        match change {
            Change::ToolAdded { tool, source } => Drift::ToolAdded { tool, source },
            Change::ToolRemoved { tool, source } => Drift::ToolRemoved {
                tool,
                source,
                vanished: false,
            },
            Change::ToolChanged { tool, parts } => Drift::ToolChanged { tool, parts },
            Change::SettingChanged { setting } => Drift::ServingChanged { setting },
        }
    }
}

/// One difference between the tools and settings two catalogs serve, as `ferry diff` and a
/// reload report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "camelCase")]
pub enum Change {
    /// A tool the new catalog serves and the old did not, with what it runs
    /// (`operation` or `workflow`).
    #[serde(rename = "added")]
    ToolAdded {
        tool: String,
        #[serde(flatten)]
        source: Source,
    },
    /// A tool the old catalog served and the new does not.
    #[serde(rename = "removed")]
    ToolRemoved {
        tool: String,
        #[serde(flatten)]
        source: Source,
    },
    /// A tool both serve, with the parts that differ: members of its `tools/list`
    /// definition (`description`, `inputSchema`, `annotations`, …), what it runs
    /// (`operation` or `workflow`, and a composite tool's `steps`), `request` (an operation's
    /// plan: method, path, parameters, body; a workflow's steps, criteria and outputs),
    /// `call` (an operation's call settings), `scopes`.
    #[serde(rename = "changed")]
    ToolChanged { tool: String, parts: Vec<String> },
    /// A setting of the whole server differs, by the name the caller gave it (see
    /// [`Lock::serving`]).
    #[serde(rename = "setting")]
    SettingChanged { setting: String },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::ToolAdded { tool, source } => write!(f, "+ {tool} ({source})"),
            Change::ToolRemoved { tool, source } => write!(f, "- {tool} ({source})"),
            Change::ToolChanged { tool, parts } => write!(f, "~ {tool}: {}", parts.join(", ")),
            Change::SettingChanged { setting } => write!(f, "~ setting `{setting}`"),
        }
    }
}

/// What [`diff`] compares of a catalog: the digests a lock holds of each tool's parts (the
/// request split into its plan and its call settings) and of the server-wide settings (see
/// [`serving`]), and `server` (the name, version and instructions clients are told). Small
/// beside the catalog, so a running server keeps the one of what it serves for the diff of
/// its next reload; its [`Digests::digest`] labels the catalog served in the metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digests {
    tools: BTreeMap<String, ToolDigests>,
    settings: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct ToolDigests {
    #[serde(flatten)]
    locked: LockedTool,
    plan: String,
    call: String,
}

impl Digests {
    /// Digests what `catalog` serves.
    pub fn new(catalog: &Catalog) -> Digests {
        let mut settings = serving(catalog);
        settings.insert("server".to_string(), format!("{:?}", catalog.server));
        Digests {
            tools: catalog
                .tools
                .iter()
                .map(|tool| {
                    let (plan, call) = runs_text(tool);
                    let digests = ToolDigests {
                        locked: locked_with(tool, &plan, &call),
                        plan: digest_bytes(plan.as_bytes()),
                        call: digest_bytes(call.as_bytes()),
                    };
                    (tool.name.clone(), digests)
                })
                .collect(),
            settings: digests(&settings),
        }
    }

    /// One digest of everything [`diff`] compares: equal digests, no change. The metrics
    /// label the catalog served with it, so the label follows a change of a setting as well as
    /// of a tool.
    pub fn digest(&self) -> String {
        let text = serde_json::json!({
            "tools": self.tools,
            "serving": self.settings,
        })
        .to_string();
        digest_bytes(text.as_bytes())
    }

    /// How many tools are served, composite ones included.
    pub fn tools(&self) -> usize {
        self.tools.len()
    }
}

/// Every difference in what `old` and `new` serve: tools removed, added and changed, by name,
/// then settings changed. Compares the same digests a lock holds, so a change `ferry diff`
/// shows is one `--locked` would refuse, and the other way round.
pub fn diff(old: &Digests, new: &Digests) -> Vec<Change> {
    let mut found = Vec::new();
    for (name, tool) in &old.tools {
        if !new.tools.contains_key(name) {
            found.push(Change::ToolRemoved {
                tool: name.clone(),
                source: tool.locked.source.clone(),
            });
        }
    }
    for (name, after) in &new.tools {
        let Some(before) = old.tools.get(name) else {
            found.push(Change::ToolAdded {
                tool: name.clone(),
                source: after.locked.source.clone(),
            });
            continue;
        };
        let mut parts = changed_parts(&before.locked, &after.locked);
        // The lock digests the plan and the call settings together; say which changed.
        if let Some(at) = parts.iter().position(|part| part == "request") {
            let mut split = Vec::new();
            if before.plan != after.plan {
                split.push("request".to_string());
            }
            if before.call != after.call {
                split.push("call".to_string());
            }
            parts.splice(at..=at, split);
        }
        if !parts.is_empty() {
            found.push(Change::ToolChanged {
                tool: name.clone(),
                parts,
            });
        }
    }
    found.extend(
        changed_keys(&old.settings, &new.settings)
            .into_iter()
            .map(|setting| Change::SettingChanged { setting }),
    );
    found
}

/// The document files whose content differs from the lock's, and the curation when it does:
/// not drift by itself, but worth saying.
pub fn changed_files(
    lock: &Lock,
    documents: &[(String, Document)],
    curation: Option<&[u8]>,
) -> Vec<String> {
    let mut changed = Vec::new();
    if lock.files.curation != curation.map(digest_bytes) {
        changed.push("the curation file".to_string());
    }
    let now = document_files(documents);
    for (name, digest) in &lock.files.document {
        if now.get(name) != Some(digest) {
            changed.push(display_name(name));
        }
    }
    for name in now.keys() {
        if !lock.files.document.contains_key(name) {
            changed.push(display_name(name));
        }
    }
    changed
}

/// A digest of each file of each API's document, by its name; led by `<id>:` for an API of a
/// file with `apis:`, whose documents may name their files alike.
fn document_files(documents: &[(String, Document)]) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for (api, document) in documents {
        for file in &document.files {
            let name = match api.as_str() {
                "" => file.name.clone(),
                api => format!("{api}:{}", file.name),
            };
            files.insert(name, digest_value(&file.value));
        }
    }
    files
}

/// The lock as its file holds it: canonical JSON (keys sorted, two-space indent) and a
/// final newline, the same bytes on every run and machine.
pub fn to_text(lock: &Lock) -> String {
    let value = crate::catalog::canonical(serde_json::to_value(lock).unwrap_or_default());
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads a lock file's text; an unknown shape is an error that says so.
pub fn from_text(text: &str) -> Result<Lock, String> {
    let lock: Lock = serde_json::from_str(text).map_err(|e| {
        format!("not a lock this ferry reads ({e}): write it again with `ferry lock`")
    })?;
    if lock.lock_version != LOCK_VERSION && lock.lock_version != LOCK_VERSION_WITHOUT_OUTPUT {
        return Err(format!(
            "lock version {} is not the {LOCK_VERSION} this ferry reads: run `ferry lock` again",
            lock.lock_version
        ));
    }
    Ok(lock)
}

/// The server-wide settings a lock holds to, each by its name with the text digested:
/// where calls go, who may make them, and what ferry presents upstream, as configured (never
/// secret values: the curation holds only environment variable names and key hashes).
pub fn serving(catalog: &Catalog) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::from([("auth".to_string(), format!("{:?}", catalog.auth))]);
    for api in &catalog.apis {
        // The one API of a file without `apis:` is named as the file names it.
        let key = |setting: &str| match api.id.as_str() {
            "" => setting.to_string(),
            id => format!("apis.{id}.{setting}"),
        };
        settings.insert(key("upstream"), format!("{:?}", api.upstream));
        settings.insert(key("upstreamAuth"), format!("{:?}", api.upstream_auth));
        settings.insert(
            key("upstreamIdentity"),
            format!("{:?}", api.identity_header),
        );
    }
    // Each endpoint: its path, server, inbound authorization and the tools it serves.
    for endpoint in &catalog.endpoints {
        settings.insert(
            format!("endpoints.{}", endpoint.id),
            format!("{endpoint:?}"),
        );
    }
    settings
}

/// What a lock holds of each served tool, by name.
fn locked_tools(catalog: &Catalog) -> BTreeMap<String, LockedTool> {
    catalog
        .tools
        .iter()
        .map(|tool| {
            let (plan, call) = runs_text(tool);
            (tool.name.clone(), locked_with(tool, &plan, &call))
        })
        .collect()
}

/// What a call of `tool` runs, in a form that names every field (none has a wire form of
/// its own), split in two: an operation's request plan and its call settings; a composite
/// tool's whole workflow (as read, each step's request and settings, its bounds) and
/// nothing.
fn runs_text(tool: &Tool) -> (String, String) {
    match &tool.runs {
        // An operation reached only through discovery is served otherwise: said, so that
        // the lock tells the two apart (a listed one's text is as it always was).
        Runs::Operation(operation) if !tool.listed => (
            format!("{:?} behind discovery", operation.plan),
            call_text(operation),
        ),
        Runs::Operation(operation) => (format!("{:?}", operation.plan), call_text(operation)),
        Runs::Workflow(workflow) => (format!("{workflow:?}"), String::new()),
        // A discovery tool runs nothing of its own: what it reaches is each operation's, and
        // which calling tool reaches which operation is what it decides.
        Runs::Discovery(discovery) => {
            let reached: Vec<String> = discovery
                .index
                .entries()
                .iter()
                .map(|entry| format!("{} {}", entry.tool, entry.class.as_str()))
                .collect();
            (
                format!("{:?} {}", discovery.kind, reached.join(",")),
                String::new(),
            )
        }
    }
}

/// How an operation's call is made: its settings, then how it follows a long-running
/// operation and what its streams' items are checked against, when it has them (a tool
/// without keeps the text it always had).
fn call_text(operation: &OperationPlan) -> String {
    let mut text = match &operation.long_running {
        Some(long_running) => format!("{:?}\n{long_running:?}", operation.call),
        None => format!("{:?}", operation.call),
    };
    if !operation.items.is_empty() {
        text.push_str(&format!("\n{:?}", operation.items));
    }
    text
}

/// What a lock holds of `tool`, given the text of what a call runs ([`runs_text`]).
fn locked_with(tool: &Tool, plan: &str, call: &str) -> LockedTool {
    // Each member is digested as its compact JSON text in `Tool::to_json`, written from the
    // tool's own values into one buffer.
    let mut text = Vec::new();
    let definition = tool
        .sorted_members()
        .into_iter()
        .filter(|(key, _)| *key != "name")
        .map(|(key, member)| {
            text.clear();
            // Serializing a `Value` cannot fail: its keys are strings.
            let _ = serde_json::to_writer(&mut text, &member);
            (key.to_string(), digest_bytes(&text))
        })
        .collect();
    // A change of ferry's version is recorded beside the request.
    let request = digest_bytes(format!("{plan}\n{call}").as_bytes());
    let scopes: Vec<String> = tool
        .scope_sources()
        .iter()
        .map(|source| format!("{:?}\n{:?}", source.scopes, source.document_scopes))
        .collect();
    LockedTool {
        source: tool.source(),
        steps: tool
            .workflow()
            .map(WorkflowPlan::step_labels)
            .unwrap_or_default(),
        definition,
        request,
        scopes: digest_bytes(scopes.join("\n").as_bytes()),
    }
}

/// The parts in which two digested tools differ: definition members by name, then what it
/// runs with both of its values (`operation (GET /a → GET /b)`), then `steps`, `request`
/// and `scopes`.
fn changed_parts(was: &LockedTool, is: &LockedTool) -> Vec<String> {
    let mut parts = changed_keys(&was.definition, &is.definition);
    if was.source != is.source {
        let (was, is) = (&was.source, &is.source);
        if was.kind() == is.kind() {
            parts.push(format!("{} ({} → {})", is.kind(), was.name(), is.name()));
        } else {
            parts.push(format!("{} ({was} → {is})", is.kind()));
        }
    }
    let others = [
        ("steps", was.steps != is.steps),
        ("request", was.request != is.request),
        ("scopes", was.scopes != is.scopes),
    ];
    let differing = others.iter().filter(|(_, differs)| *differs);
    parts.extend(differing.map(|(part, _)| part.to_string()));
    parts
}

/// The keys (settings, definition members) whose digests differ between `was` and `is`, or
/// that only one has, once each, in name order.
fn changed_keys(was: &BTreeMap<String, String>, is: &BTreeMap<String, String>) -> Vec<String> {
    was.keys()
        .chain(is.keys())
        .filter(|setting| was.get(*setting) != is.get(*setting))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn digests(settings: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    settings
        .iter()
        .map(|(name, text)| (name.clone(), digest_bytes(text.as_bytes())))
        .collect()
}

/// An operation as a lock names it: `METHOD /path`, led by `<id>: ` for an API of a file
/// with `apis:`.
fn label(report: &crate::catalog::OperationReport) -> String {
    match &report.api {
        None => format!("{} {}", report.method, report.path),
        Some(api) => format!("{api}: {} {}", report.method, report.path),
    }
}

fn display_name(name: &str) -> String {
    match name.strip_suffix(':') {
        _ if name.is_empty() => "the document".to_string(),
        Some(api) => format!("the document of API {api}"),
        None => name.to_string(),
    }
}

fn digest_value(value: &Value) -> String {
    digest_bytes(value.to_string().as_bytes())
}

fn digest_bytes(bytes: &[u8]) -> String {
    let mut hex = [0u8; 64];
    crate::trace::write_hex(&Sha256::digest(bytes), &mut hex);
    let mut text = String::with_capacity(71);
    text.push_str("sha256:");
    text.push_str(std::str::from_utf8(&hex).unwrap_or_default());
    text
}

#[cfg(test)]
mod tests;
