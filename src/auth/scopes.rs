//! Which scopes each tool needs, and whether a tool list may be shared between callers.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::AuthConfig;

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
    tools: &[crate::catalog::Tool],
    config: &AuthConfig,
) -> Vec<(String, Vec<Vec<String>>)> {
    tools
        .iter()
        .filter_map(|tool| match &tool.scopes {
            Some(scopes) => Some((tool.name.clone(), vec![scopes.clone()])),
            None if config.scopes_from_document && !tool.document_scopes.is_empty() => {
                Some((tool.name.clone(), tool.document_scopes.clone()))
            }
            None => None,
        })
        .collect()
}
