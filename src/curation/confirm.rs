//! Curation keys about confirmation: a tool's `confirm:` (the user must confirm each call
//! before anything is sent upstream) and the file's `confirm_ttl`, `confirm_key` and
//! `confirm_legacy`. A tool's `confirm` is one of [`super::EXTENSION_KEYS`]: a document may
//! ask for confirmation too, since it only adds a question.

use serde_json::{Map, Value};

use super::join;
use crate::diagnostic::{Diagnostic, Location};

/// The top-level keys this module owns.
pub const KEYS: &[&str] = &["confirm_ttl", "confirm_key", "confirm_legacy"];
const CONFIRM_KEYS: &[&str] = &["message", "type_to_confirm"];
/// The longest `confirm_ttl` accepted, in seconds: a day.
pub const MAX_TTL_SECONDS: u64 = 86_400;

/// A tool's `confirm:` as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// `confirm: false`: this tool does not confirm (over a document's `x-mcp`).
    Off,
    /// `confirm: true`, or `confirm: {message: ..., type_to_confirm: ...}`.
    On {
        /// The question shown to the user; `{name}` is filled with the argument `name`.
        message: Option<String>,
        /// An argument whose value the user must type back.
        type_to_confirm: Option<String>,
    },
}

/// The file's confirmation settings as written; `None` takes the default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfirmOptions {
    /// How long a confirmation request stays valid, in seconds (`confirm_ttl`).
    pub ttl_seconds: Option<u64>,
    /// The environment variable holding the key that seals confirmation state
    /// (`confirm_key: {env: VAR}`).
    pub key_env: Option<String>,
    /// What a legacy client calling a confirming tool gets (`confirm_legacy`).
    pub legacy: Option<LegacyConfirm>,
}

/// `confirm_legacy: allow|refuse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegacyConfirm {
    /// A 2025-11-25 client cannot be asked mid-call: its call is refused (the default).
    #[default]
    Refuse,
    /// A 2025-11-25 client's call proceeds unconfirmed, logged as such.
    Allow,
}

/// Reads the top-level confirmation keys of `map`.
pub fn parse_options(
    map: &Map<String, Value>,
    diagnostics: &mut Vec<Diagnostic>,
) -> ConfirmOptions {
    let mut options = ConfirmOptions::default();
    if let Some(value) = map.get("confirm_ttl").filter(|value| !value.is_null()) {
        match value.as_u64() {
            Some(seconds) if (1..=MAX_TTL_SECONDS).contains(&seconds) => {
                options.ttl_seconds = Some(seconds)
            }
            _ => diagnostics.push(Diagnostic::error(
                Location::curation("confirm_ttl"),
                format!(
                    "`confirm_ttl` is how long a confirmation request stays valid, in seconds: a whole number from 1 to {MAX_TTL_SECONDS}"
                ),
            )),
        }
    }
    if let Some(value) = map.get("confirm_key").filter(|value| !value.is_null()) {
        match super::env_reference_name(value) {
            Some(name) => options.key_env = Some(name.to_string()),
            None => diagnostics.push(Diagnostic::error(
                Location::curation("confirm_key"),
                "a key is never written in the file: name its environment variable, as `confirm_key: {env: FERRY_CONFIRM_KEY}`",
            )),
        }
    }
    if let Some(value) = map.get("confirm_legacy").filter(|value| !value.is_null()) {
        match value.as_str() {
            Some("refuse") => options.legacy = Some(LegacyConfirm::Refuse),
            Some("allow") => options.legacy = Some(LegacyConfirm::Allow),
            _ => diagnostics.push(Diagnostic::error(
                Location::curation("confirm_legacy"),
                "`confirm_legacy` is `refuse` (the default: a 2025-11-25 client cannot confirm, so its call to a confirming tool is refused) or `allow` (it proceeds unconfirmed, logged)",
            )),
        }
    }
    options
}

/// Reads a tool entry's (or an `x-mcp` extension's) `confirm:`, found in `map` at `path`.
pub fn parse_tool(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Confirmation> {
    let value = map.get("confirm").filter(|value| !value.is_null())?;
    let here = join(path, "confirm");
    match value {
        Value::Bool(false) => Some(Confirmation::Off),
        Value::Bool(true) => Some(Confirmation::On {
            message: None,
            type_to_confirm: None,
        }),
        Value::Object(settings) => {
            super::check_keys(settings, &here, &[CONFIRM_KEYS], diagnostics);
            Some(Confirmation::On {
                message: super::string_at(settings, "message", &here, diagnostics),
                type_to_confirm: super::string_at(settings, "type_to_confirm", &here, diagnostics),
            })
        }
        _ => {
            diagnostics.push(Diagnostic::error(
                Location::curation(here),
                "`confirm` is `true`, `false` or a mapping such as `{message: \"Delete pet {petId}?\", type_to_confirm: petId}`",
            ));
            None
        }
    }
}
