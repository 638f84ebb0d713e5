//! The MCP endpoints one process serves (`endpoints:`), each a chosen toolset of the catalog
//! with a path, a server and an inbound authorization of its own, resolved once when the
//! catalog is built: which tools each serves is decided here, not per request.

use crate::curation::Curation;
use crate::curation::endpoints::{EndpointEntry, Toolset};
use crate::diagnostic::{Diagnostic, Location};

use super::{Catalog, SafetyClass, ServerInfo, Tool};

/// One MCP endpoint of the process.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// Its id under `endpoints:`.
    pub id: String,
    /// The path it is served at.
    pub path: String,
    pub server: ServerInfo,
    /// Who may call it; `None`: nobody is asked (loopback only).
    pub auth: Option<crate::access::AuthConfig>,
    /// The names of the tools it serves, sorted.
    pub tools: Vec<String>,
}

/// Resolves the curation's `endpoints:` against `catalog`'s tools into
/// [`Catalog::endpoints`]: each endpoint's tools, server and authorization. A toolset that
/// names an API or a tool the catalog does not have is an error; one that chooses no tool,
/// a warning.
pub fn resolve(catalog: &mut Catalog, curation: &Curation) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    catalog.endpoints = curation
        .endpoints
        .iter()
        .map(|entry| endpoint(catalog, entry, &mut diagnostics))
        .collect();
    diagnostics
}

fn endpoint(
    catalog: &Catalog,
    entry: &EndpointEntry,
    diagnostics: &mut Vec<Diagnostic>,
) -> Endpoint {
    let at = |key: &str| Location::curation(format!("endpoints.{}.tools.{key}", entry.id));
    let toolset = &entry.toolset;
    for api in toolset.apis.iter().flatten() {
        if !catalog.apis.iter().any(|known| &known.id == api) {
            diagnostics.push(Diagnostic::error(
                at("apis"),
                format!(
                    "endpoint {:?} chooses the tools of API {api:?}, which `apis:` does not list",
                    entry.id
                ),
            ));
        }
    }
    for name in toolset.names.iter().flatten() {
        if !catalog.tools.iter().any(|tool| &tool.name == name) {
            diagnostics.push(Diagnostic::error(
                at("names"),
                format!(
                    "endpoint {:?} chooses tool {name:?}, which is not served: `ferry tools` lists the names",
                    entry.id
                ),
            ));
        }
    }
    let tools: Vec<String> = catalog
        .tools
        .iter()
        .filter(|tool| chooses(toolset, tool))
        .map(|tool| tool.name.clone())
        .collect();
    if tools.is_empty() {
        diagnostics.push(Diagnostic::warning(
            Location::curation(format!("endpoints.{}", entry.id)),
            format!(
                "endpoint {:?} serves no tool: its `tools:` chooses none",
                entry.id
            ),
        ));
    }
    let server = match &entry.server {
        Some(section) => ServerInfo {
            name: section
                .name
                .clone()
                .unwrap_or_else(|| catalog.server.name.clone()),
            title: section
                .title
                .clone()
                .or_else(|| catalog.server.title.clone()),
            version: catalog.server.version.clone(),
            instructions: section
                .instructions
                .clone()
                .or_else(|| catalog.server.instructions.clone()),
        },
        None => catalog.server.clone(),
    };
    Endpoint {
        id: entry.id.clone(),
        path: entry.path.clone(),
        server,
        auth: entry.auth.clone().or_else(|| catalog.auth.clone()),
        tools,
    }
}

/// Whether `toolset` chooses `tool`: every filter it gives passes.
fn chooses(toolset: &Toolset, tool: &Tool) -> bool {
    let requests = tool.requests();
    let apis = toolset
        .apis
        .as_ref()
        .is_none_or(|apis| requests.iter().all(|request| apis.contains(&request.api)));
    let names = toolset
        .names
        .as_ref()
        .is_none_or(|names| names.contains(&tool.name));
    let tags = toolset.tags.as_ref().is_none_or(|tags| {
        requests
            .iter()
            .any(|request| request.tags.iter().any(|tag| tags.contains(tag)))
    });
    let read_only = toolset
        .read_only
        .is_none_or(|read_only| read_only == (tool.limits.class == SafetyClass::Reads));
    apis && names && tags && read_only
}
