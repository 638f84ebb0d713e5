//! A catalog of several APIs: each API compiled on its own (from its part of the curation,
//! with its own document), then joined into the one catalog the server runs from.

use std::collections::BTreeMap;

use crate::curation::Curation;
use crate::diagnostic::{Diagnostic, Location};

use super::{Catalog, OperationStatus, ServerInfo};

/// The catalog of every API in `parts` (each compiled from one of `curation`'s
/// [`Curation::api_curations`], in order): their APIs, tools and operations together, and the
/// server the file's top names. A name two APIs' tools share is an error: neither is served.
/// One part is the catalog as it is.
pub fn join(curation: &Curation, mut parts: Vec<Catalog>) -> (Catalog, Vec<Diagnostic>) {
    if parts.len() == 1 {
        return (parts.remove(0), Vec::new());
    }
    let mut catalog = Catalog {
        server: server_info(curation),
        apis: Vec::new(),
        auth: curation.auth.clone(),
        confirm: parts
            .first()
            .map(|part| part.confirm.clone())
            .unwrap_or_default(),
        tools: Vec::new(),
        operations: Vec::new(),
        endpoints: Vec::new(),
    };
    for part in parts {
        catalog.apis.extend(part.apis);
        catalog.tools.extend(part.tools);
        catalog.operations.extend(part.operations);
    }
    let diagnostics = drop_shared_names(&mut catalog);
    catalog.tools.sort_by(|a, b| a.name.cmp(&b.name));
    (catalog, diagnostics)
}

/// Who a server of several APIs says it is: what the file's `server:` says, else `ferry`
/// (no one document's `info` speaks for all of them).
fn server_info(curation: &Curation) -> ServerInfo {
    let server = &curation.server;
    ServerInfo {
        name: server.name.clone().unwrap_or_else(|| "ferry".to_string()),
        title: server.title.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        instructions: server.instructions.clone(),
    }
}

/// Removes every tool whose name a tool of another API has too, and says so, naming each
/// source; the operations' reports say why they are not served.
fn drop_shared_names(catalog: &mut Catalog) -> Vec<Diagnostic> {
    let mut apis_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for tool in &catalog.tools {
        apis_of
            .entry(tool.name.as_str())
            .or_default()
            .push(api_of(tool));
    }
    let shared: BTreeMap<String, Vec<String>> = apis_of
        .into_iter()
        .filter(|(_, apis)| apis.len() > 1)
        .map(|(name, apis)| {
            (
                name.to_string(),
                apis.into_iter().map(str::to_string).collect(),
            )
        })
        .collect();
    let mut diagnostics = Vec::new();
    for (name, apis) in &shared {
        let sources: Vec<String> = catalog
            .tools
            .iter()
            .filter(|tool| &tool.name == name)
            .map(|tool| tool.source().to_string())
            .collect();
        let message = format!(
            "two APIs name a tool {name:?}: {}; rename one with `name:`, or let each API's id \
             lead its tools' names (`prefix:`, on unless set to `false`)",
            sources.join(" and ")
        );
        let mut diagnostic = Diagnostic::error(Location::curation("apis"), message.clone());
        for report in catalog.operations.iter_mut().filter(|report| {
            &report.tool == name
                && report.status == OperationStatus::Served
                && apis.contains(&report.api.clone().unwrap_or_default())
        }) {
            diagnostic = diagnostic.with_operation(report.label());
            report.status = OperationStatus::Collision;
            report.reason = Some(message.clone());
            report.tokens = None;
        }
        diagnostics.push(diagnostic);
    }
    catalog
        .tools
        .retain(|tool| !shared.contains_key(&tool.name));
    diagnostics
}

/// The id of the API `tool` calls (its first request's).
fn api_of(tool: &super::Tool) -> &str {
    tool.requests()
        .first()
        .map_or("", |request| request.api.as_str())
}
