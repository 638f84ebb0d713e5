//! Curation keys that shape how a tool calls the upstream: timeouts, size caps, retries,
//! pagination, projection and the upstream's credentials.

use serde_json::{Map, Value};

use crate::diagnostic::Diagnostic;

/// Call options as written, at the top level (defaults for every tool) or in a tool entry.
/// Every field is optional here; `None` inherits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOptions {}

impl CallOptions {
    /// The tool's own options over the file's defaults.
    pub fn overlay(&self, tool: &CallOptions) -> CallOptions {
        let _ = tool;
        self.clone()
    }
}

/// The keys this module owns, so the parsers of the file and of tool entries accept them.
pub const KEYS: &[&str] = &[];

/// Reads the call-option keys of `map` (a top-level or tool mapping) found at `path`,
/// pushing a diagnostic for each bad value.
pub fn parse_call_options(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> CallOptions {
    let _ = (map, path, diagnostics);
    CallOptions::default()
}
