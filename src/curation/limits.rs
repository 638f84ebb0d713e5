//! Curation keys that limit how often a caller may call: `rate_limits: {reads, writes}` at the
//! top level (one budget per caller for each safety class) and `rate_limit:` on a tool entry
//! (a budget per caller for that tool alone).

use serde_json::{Map, Value};

use super::join;
use crate::diagnostic::{Diagnostic, Location};
use crate::rate::{RATE_FORM, Rate};

/// The top-level key this module owns.
pub const KEYS: &[&str] = &["rate_limits"];
/// The tool entry's key this module owns.
pub const TOOL_KEYS: &[&str] = &["rate_limit"];
const CLASS_KEYS: &[&str] = &["reads", "writes"];

/// `rate_limits:` as written: each class's limit, when it has one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Tools whose method justifies read-only (`reads`).
    pub reads: Option<Rate>,
    /// Every other tool (`writes`).
    pub writes: Option<Rate>,
}

/// Reads `rate_limits:` from the top-level mapping.
pub fn parse_rate_limits(
    map: &Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> RateLimits {
    let path = "rate_limits";
    let Some(value) = map.get(path).filter(|value| !value.is_null()) else {
        return RateLimits::default();
    };
    let Some(classes) = value.as_object() else {
        diagnostics.push(Diagnostic::error(
            Location::curation(path),
            "`rate_limits` must be a mapping of classes to rates, such as `{writes: 30/min, reads: 600/min}`",
        ));
        return RateLimits::default();
    };
    super::check_keys(classes, path, &[CLASS_KEYS], diagnostics);
    RateLimits {
        reads: rate_at(classes, "reads", path, diagnostics),
        writes: rate_at(classes, "writes", path, diagnostics),
    }
}

/// Reads a tool entry's `rate_limit:`; `path` is the entry's.
pub fn parse_tool_rate_limit(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Rate> {
    rate_at(map, "rate_limit", path, diagnostics)
}

/// The rate at `key` of `map`; `None` when absent or null, and an error with the key path
/// and the accepted form when it is not one.
fn rate_at(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Rate> {
    let value = map.get(key).filter(|value| !value.is_null())?;
    let here = join(path, key);
    let parsed = match value {
        Value::String(text) => Rate::parse(text).map_err(|error| error.to_string()),
        _ => Err(format!("must be {RATE_FORM}")),
    };
    match parsed {
        Ok(rate) => Some(rate),
        Err(message) => {
            diagnostics.push(Diagnostic::error(
                Location::curation(here),
                format!("`{key}` {message}"),
            ));
            None
        }
    }
}
