//! What `ferry check` says of discovery: the discovery tools of each API that has them, how
//! many operations each calling tool calls, and for each operation behind them the tool that
//! calls it.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use ferry::catalog::{CallClass, Catalog, DiscoveryKind, Runs};
use serde_json::{Value, json};

/// Each operation behind discovery, by its tool's name: the calling tool that calls it, and
/// whether it is listed as itself too.
pub(super) fn callers(catalog: &Catalog) -> HashMap<&str, (String, bool)> {
    let listed: HashMap<&str, bool> = catalog
        .tools
        .iter()
        .map(|tool| (tool.name.as_str(), tool.listed))
        .collect();
    let mut callers = HashMap::new();
    for discovery in discoveries(catalog) {
        for entry in discovery.index.entries() {
            let name = entry.tool.as_str();
            let also = listed.get(name).copied().unwrap_or(false);
            callers.insert(name, (discovery.caller(entry.class), also));
        }
    }
    callers
}

/// The report's discovery section, empty when no API has discovery.
pub(super) fn text(catalog: &Catalog) -> String {
    let mut out = String::new();
    for discovery in discoveries(catalog) {
        let entries = discovery.index.entries();
        let _ = writeln!(
            out,
            "\ndiscovery: {} operations are found with {} and {}, and called through:",
            super::report::thousands(entries.len()),
            discovery.sibling(ferry::catalog::discovery::SEARCH),
            discovery.sibling(ferry::catalog::discovery::DESCRIBE),
        );
        for (class, count) in classes(discovery) {
            let _ = writeln!(
                out,
                "  {} ({}): {} {}",
                discovery.caller(class),
                super::report::annotation_hints(&class.annotations()),
                super::report::thousands(count),
                if count == 1 {
                    "operation"
                } else {
                    "operations"
                }
            );
        }
        let also: Vec<&str> = entries
            .iter()
            .filter(|entry| {
                catalog
                    .tools
                    .iter()
                    .any(|tool| tool.name == entry.tool && tool.listed)
            })
            .map(|entry| entry.tool.as_str())
            .collect();
        if !also.is_empty() {
            let _ = writeln!(out, "  listed as themselves too: {}", also.join(", "));
        }
    }
    out
}

/// The JSON report's `discovery` list: per API with discovery, its tools and how many
/// operations each calling tool calls.
pub(super) fn json(catalog: &Catalog) -> Value {
    discoveries(catalog)
        .map(|discovery| {
            let calling: serde_json::Map<String, Value> = classes(discovery)
                .into_iter()
                .map(|(class, count)| (discovery.caller(class), json!(count)))
                .collect();
            json!({
                "search": discovery.sibling(ferry::catalog::discovery::SEARCH),
                "describe": discovery.sibling(ferry::catalog::discovery::DESCRIBE),
                "operations": discovery.index.entries().len(),
                "calling": calling,
            })
        })
        .collect()
}

/// Each API's discovery, once: its search tool's.
fn discoveries(catalog: &Catalog) -> impl Iterator<Item = &ferry::catalog::DiscoveryTool> {
    catalog.tools.iter().filter_map(|tool| match &tool.runs {
        Runs::Discovery(discovery) if discovery.kind == DiscoveryKind::Search => Some(discovery),
        _ => None,
    })
}

/// How many operations each class holds, every class listed.
fn classes(discovery: &ferry::catalog::DiscoveryTool) -> BTreeMap<CallClass, usize> {
    let mut counts: BTreeMap<CallClass, usize> =
        CallClass::ALL.into_iter().map(|class| (class, 0)).collect();
    for entry in discovery.index.entries() {
        *counts.entry(entry.class).or_default() += 1;
    }
    counts
}
