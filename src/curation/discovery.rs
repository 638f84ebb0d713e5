//! The `discovery:` key of an API: instead of one tool per chosen operation, a few tools
//! over all of them (search, describe, and one calling tool per safety class), with the
//! operations named under `also_list` listed as themselves beside them.

use serde_json::{Map, Value};

use super::{check_keys, string_list};
use crate::diagnostic::{Diagnostic, Location};

/// The key this module reads.
pub const KEY: &str = "discovery";
const SECTION_KEYS: &[&str] = &["also_list"];

/// `discovery:` as written: on, and which chosen operations stay listed as themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Operations listed as their own tools beside the discovery tools, each named as a
    /// `tools:` entry names one (operationId or `METHOD /path`) or by its tool's name, in
    /// file order.
    pub also_list: Vec<String>,
}

/// Reads `discovery:` from an API's mapping: `true` or `{}` turns it on, `false` (or no
/// key) leaves it off, `{also_list: [...]}` turns it on and keeps those tools listed.
pub fn parse(map: &Map<String, Value>, diagnostics: &mut Vec<Diagnostic>) -> Option<Discovery> {
    match map.get(KEY)? {
        Value::Null | Value::Bool(false) => None,
        Value::Bool(true) => Some(Discovery::default()),
        Value::Object(section) => {
            check_keys(section, KEY, &[SECTION_KEYS], diagnostics);
            let path = format!("{KEY}.also_list");
            let also_list = match section.get("also_list") {
                None | Some(Value::Null) => Vec::new(),
                Some(names) => string_list(names, &path, diagnostics).unwrap_or_default(),
            };
            Some(Discovery { also_list })
        }
        _ => {
            diagnostics.push(Diagnostic::error(
                Location::curation(KEY),
                "`discovery` is `true`, `false` or a mapping `{also_list: [operationId, ...]}`",
            ));
            None
        }
    }
}
