//! Which scopes each tool needs, and whether a tool list may be shared between callers.
//!
//! [`tool_scopes`] reads each tool's need from the catalog once, when an [`Authenticator`]
//! is built; the authenticator keeps them by tool name in [`ToolScopes`]. A call's scope
//! check looks the tool's name up there, apart from the server's own lookup of the tool.
//!
//! [`Authenticator`]: super::Authenticator

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::AuthConfig;
use crate::catalog::ScopeSource;

/// Whether a `tools/list` answer may be shared across callers (MCP `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    Public,
    Private,
}

impl CacheScope {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// The scopes each tool needs: its own when the curation names them (or the document does,
/// with `scopes_from_document`), else the default. A tool's need is a list of alternatives:
/// a caller holding every scope of any one of them may use the tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolScopes {
    default: Vec<Vec<String>>,
    tools: HashMap<String, Vec<Vec<String>>>,
}

impl ToolScopes {
    /// `explicit` holds the tools with scopes of their own, as alternatives (possibly one
    /// empty alternative: the tool needs no scope).
    pub fn new(
        default: Vec<String>,
        explicit: impl IntoIterator<Item = (String, Vec<Vec<String>>)>,
    ) -> ToolScopes {
        ToolScopes {
            default: vec![default],
            tools: explicit
                .into_iter()
                .map(|(tool, alternatives)| {
                    // No alternative at all would let nobody in; it means "no scope needed".
                    let alternatives = if alternatives.is_empty() {
                        vec![Vec::new()]
                    } else {
                        alternatives
                    };
                    (tool, alternatives)
                })
                .collect(),
        }
    }

    /// The alternatives `tool` needs: never empty.
    pub fn required(&self, tool: &str) -> &[Vec<String>] {
        self.tools.get(tool).unwrap_or(&self.default)
    }

    /// Whether some tool may need a scope.
    pub fn any(&self) -> bool {
        self.default
            .iter()
            .chain(self.tools.values().flatten())
            .any(|scopes| !scopes.is_empty())
    }

    /// Every scope named, sorted: `scopes_supported` in the metadata.
    pub fn all(&self) -> Vec<String> {
        let all: BTreeSet<&String> = self
            .default
            .iter()
            .chain(self.tools.values().flatten())
            .flatten()
            .collect();
        all.into_iter().cloned().collect()
    }
}

/// The tools that need scopes of their own, for [`Authenticator::new`]: a curation entry's
/// `scopes:` wins; then, with `scopes_from_document`, the OAuth 2 / OpenID Connect scopes
/// the operation's security requirements name; every other tool needs the default.
pub fn tool_scopes(
    catalog: &crate::catalog::Catalog,
    config: &AuthConfig,
) -> Vec<(String, Vec<Vec<String>>)> {
    catalog
        .tools
        .iter()
        .filter_map(|tool| {
            let needs = needs(&tool.scope_sources(), config)?;
            Some((tool.name.clone(), needs))
        })
        .collect()
}

/// What a tool needs, from what each request a call sends needs: one request's own need
/// (`None` when that is the default), or everything each of several needs together.
fn needs(sources: &[ScopeSource<'_>], config: &AuthConfig) -> Option<Vec<Vec<String>>> {
    match sources {
        [one] => own_scopes(one, config),
        several => Some(combined(several, config)),
    }
}

/// What one request needs of its own, when it is not the default.
fn own_scopes(source: &ScopeSource<'_>, config: &AuthConfig) -> Option<Vec<Vec<String>>> {
    match source.scopes {
        Some(scopes) => Some(vec![scopes.to_vec()]),
        None if config.scopes_from_document && !source.document_scopes.is_empty() => {
            Some(source.document_scopes.to_vec())
        }
        None => None,
    }
}

/// The most alternatives a composite tool's need is written as; past it, each step keeps
/// only its first alternative, which asks more of a caller, never less.
const MAX_ALTERNATIVES: usize = 64;

/// What several requests need together (a composite tool's steps): everything each would
/// need as a tool of its own, so that no caller reaches an operation through a workflow that
/// it could not call alone. Requests the curation says nothing about need the default.
fn combined(sources: &[ScopeSource<'_>], config: &AuthConfig) -> Vec<Vec<String>> {
    let needs: Vec<Vec<Vec<String>>> = sources
        .iter()
        .map(|source| {
            own_scopes(source, config).unwrap_or_else(|| vec![config.default_scopes.clone()])
        })
        .collect();
    let product: usize = needs
        .iter()
        .map(|alternatives| alternatives.len().max(1))
        .fold(1, usize::saturating_mul);
    let mut combined: Vec<BTreeSet<String>> = vec![BTreeSet::new()];
    for alternatives in &needs {
        let alternatives = if product > MAX_ALTERNATIVES {
            &alternatives[..alternatives.len().min(1)]
        } else {
            &alternatives[..]
        };
        if alternatives.is_empty() {
            continue;
        }
        combined = combined
            .iter()
            .flat_map(|held| {
                alternatives.iter().map(move |more| {
                    let mut both = held.clone();
                    both.extend(more.iter().cloned());
                    both
                })
            })
            .collect();
    }
    let mut alternatives: Vec<Vec<String>> = combined
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect();
    alternatives.sort();
    alternatives.dedup();
    alternatives
}
