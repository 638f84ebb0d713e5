//! What a tool's definition costs in a context window, and the curation's way to make it
//! cost less: leaving optional arguments out (`arguments: {omit: [...]}`), a declared loss.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::openapi::unescape_token;

/// The budget for one tool's definition, in estimated tokens, unless the curation sets
/// `max_tool_tokens`. Microsoft Graph's largest tool is about 136,000 tokens, more than most
/// context windows; 10,000 is a few percent of a large one.
pub const DEFAULT_MAX_TOOL_TOKENS: u64 = 10_000;

/// The budget for the whole tool list, in estimated tokens, unless the curation sets
/// `max_catalog_tokens`: Claude Code warns of a "large MCP tools context" past 25,000, and a
/// tool list that size is an eighth of a 200,000-token window before any work is done.
pub const DEFAULT_MAX_CATALOG_TOKENS: u64 = 25_000;

/// The most tools served before a warning, unless the curation sets `max_tools`: OpenAI's
/// models take at most 128 tools in one request, and VS Code's chat sends at most 128.
pub const DEFAULT_MAX_TOOLS: u64 = 128;

/// [`crate::diagnostic::Diagnostic::code`] of a tool list over `max_tools`.
pub const OVER_MAX_TOOLS: &str = "catalog-over-max-tools";
/// Of a tool list whose definitions together are over `max_catalog_tokens`.
pub const OVER_MAX_CATALOG_TOKENS: &str = "catalog-over-max-tokens";

/// Warnings for a whole tool list past its budgets: more tools than `max_tools`, or more
/// estimated tokens together than `max_catalog_tokens`. Each names the five largest tools.
pub fn catalog_budget(
    catalog: &super::Catalog,
    curation: &crate::curation::Curation,
) -> Vec<crate::diagnostic::Diagnostic> {
    use crate::diagnostic::{Diagnostic, Location};
    let max_tools = curation.max_tools.unwrap_or(DEFAULT_MAX_TOOLS);
    let max_tokens = curation
        .max_catalog_tokens
        .unwrap_or(DEFAULT_MAX_CATALOG_TOKENS);
    let tools = catalog.served_tools();
    let tokens = catalog.served_tokens();
    let mut found = Vec::new();
    let largest = || {
        let named: Vec<String> = largest_tools(catalog, 5)
            .into_iter()
            .map(|(name, tokens)| format!("{name} ({tokens})"))
            .collect();
        named.join(", ")
    };
    if tools as u64 > max_tools {
        found.push(
            Diagnostic::warning(
                Location::curation("max_tools"),
                format!(
                    "{tools} tools are served, more than {max_tools} (`max_tools`): some clients take no more than 128 tools at once and refuse or cut the list; choose fewer operations, or raise `max_tools` if your clients take more"
                ),
            )
            .with_code(OVER_MAX_TOOLS),
        );
    }
    if tokens as u64 > max_tokens {
        found.push(
            Diagnostic::warning(
                Location::curation("max_catalog_tokens"),
                format!(
                    "the tool list costs about {tokens} tokens of context, more than {max_tokens} (`max_catalog_tokens`): every conversation pays it before any work; the largest tools are {}; choose fewer operations, leave optional arguments out (`arguments: {{omit: [...]}}`), or raise the budget",
                    largest()
                ),
            )
            .with_code(OVER_MAX_CATALOG_TOKENS),
        );
    }
    found
}

/// The `count` served tools with the largest definitions, largest first: each name and its
/// estimated tokens (operations' as measured when compiled, composite tools' measured here).
pub fn largest_tools(catalog: &super::Catalog, count: usize) -> Vec<(String, usize)> {
    // Operations reached only through discovery are not in the list.
    let unlisted = catalog.unlisted();
    let mut sizes: Vec<(String, usize)> = catalog
        .operations
        .iter()
        .filter(|report| report.status == super::OperationStatus::Served)
        .filter(|report| !unlisted.contains(report.tool.as_str()))
        .filter_map(|report| Some((report.tool.clone(), report.tokens?)))
        .chain(
            catalog
                .tools
                .iter()
                .filter(|tool| tool.operation().is_none())
                .map(|tool| (tool.name.clone(), tool_tokens(tool))),
        )
        .collect();
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sizes.truncate(count);
    sizes
}

/// A rough count of the tokens a JSON value costs as compact text: JSON runs at about four
/// characters a token. Counted as it is written, nothing is kept.
pub fn token_estimate(value: &impl serde::Serialize) -> usize {
    /// Counts bytes written, keeping none.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, and serde_json values always serialize.
    let _ = serde_json::to_writer(&mut count, value);
    count.0.div_ceil(4)
}

/// [`token_estimate`] of a tool's whole definition, its `tools/list` JSON, without building
/// that JSON.
pub fn tool_tokens(tool: &super::Tool) -> usize {
    token_estimate(&tool.sorted_definition())
}

/// Removes each pointed-at property from `schema`, then every `$defs` entry nothing refers
/// to any more. A pointer must name a member of a `properties` mapping
/// (`/properties/verbose`, `/$defs/Item/properties/notes`) that its schema does not list in
/// `required`; each one that does not is a problem, and nothing is removed for it.
pub fn omit(schema: &mut Value, pointers: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for pointer in pointers {
        if let Err(problem) = omit_one(schema, pointer) {
            problems.push(format!("cannot omit {pointer:?}: {problem}"));
        }
    }
    if problems.is_empty() {
        prune_defs(schema);
    }
    problems
}

fn omit_one(schema: &mut Value, pointer: &str) -> Result<(), &'static str> {
    let (parent, name) = pointer
        .rsplit_once('/')
        .ok_or("a pointer starts with `/`")?;
    let owner = parent
        .strip_suffix("/properties")
        .ok_or("it must point at a property: `.../properties/NAME`")?;
    let name = unescape_token(name)
        .ok_or("a `~` in a pointer is `~0` or `~1`")?
        .into_owned();
    if pointer_mut(schema, parent)
        .and_then(|p| p.get(&name))
        .is_none()
    {
        return Err("nothing in the tool's input schema is there");
    }
    let owner = pointer_mut(schema, owner).ok_or("nothing in the tool's input schema is there")?;
    let required = owner
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name.as_str())));
    if required {
        return Err("the argument is required, and a call cannot be made without it");
    }
    if let Some(Value::Object(properties)) = owner.get_mut("properties") {
        properties.shift_remove(&name);
    }
    Ok(())
}

fn pointer_mut<'a>(value: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    value.pointer_mut(pointer)
}

/// Drops the `$defs` entries that no `$ref` reaches from outside `$defs`, directly or through
/// other entries.
fn prune_defs(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.get("$defs") else {
        return;
    };
    let mut reached = BTreeSet::new();
    let mut pending = Vec::new();
    for (key, value) in schema.as_object().into_iter().flatten() {
        if key != "$defs" {
            refs(value, &mut pending);
        }
    }
    while let Some(name) = pending.pop() {
        if reached.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            refs(def, &mut pending);
        }
    }
    if reached.len() == defs.len() {
        return;
    }
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        defs.retain(|name, _| reached.contains(name));
        if defs.is_empty() {
            schema.as_object_mut().map(|map| map.shift_remove("$defs"));
        }
    }
}

/// The `$defs` names every `#/$defs/NAME` reference in `value` points at.
fn refs(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref"
                    && let Some(name) = value.as_str().and_then(|r| r.strip_prefix("#/$defs/"))
                {
                    let name = name.split('/').next().unwrap_or(name);
                    if let Some(name) = unescape_token(name) {
                        found.push(name.into_owned());
                    }
                }
                refs(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, found)),
        _ => {}
    }
}
