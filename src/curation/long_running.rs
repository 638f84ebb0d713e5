//! A tool's `long_running:`: the operation answers `202 Accepted` and a status resource, and
//! a call follows that resource to the operation's end.
//!
//! As written, every part is optional: what the curation leaves out is taken from the
//! document where it makes the operation plain (a 202 whose headers include `Location` or
//! `Operation-Location`), and [`crate::catalog`] says which. Every value is checked here, so a
//! mistake is an error at its path saying what to write.

use serde_json::{Map, Value};

use super::{check_keys, join, non_empty_string};
use crate::diagnostic::Diagnostic;

/// The key of a tool entry this module reads.
pub const KEY: &str = "long_running";
const KEYS: &[&str] = &[
    "status",
    "state",
    "working",
    "completed",
    "failed",
    "cancelled",
    "result",
    "interval_ms",
    "cancel",
];
const CANCEL_METHODS: &[&str] = &["DELETE", "POST", "PUT", "PATCH"];
/// The shortest wait between two polls that `interval_ms` may ask for.
pub const MIN_INTERVAL_MS: u64 = 10;
/// The longest: a minute.
pub const MAX_INTERVAL_MS: u64 = 60_000;

/// `long_running:` as written on a tool entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LongRunningEntry {
    /// `long_running: false`: the 202 is the call's answer, whatever the document says.
    Off,
    /// `long_running: true` or a mapping: each part `None` is the document's, where it
    /// says.
    On(Box<LongRunningOptions>),
}

/// The parts of `long_running:` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LongRunningOptions {
    /// Where the 202 names the status resource (`status:`).
    pub status: Option<Place>,
    /// The JSON pointer of the status value in the status body (`state:`); `None`: the
    /// HTTP status of each poll says (202 working, 303 completed with the result at its
    /// `Location`, other 2xx completed, 4xx and 5xx failed).
    pub state: Option<String>,
    /// The status values of each kind (`working`, `completed`, `failed`, `cancelled`),
    /// compared without case. A value in no list is taken as working.
    pub working: Vec<String>,
    pub completed: Vec<String>,
    pub failed: Vec<String>,
    pub cancelled: Vec<String>,
    /// Where the final result is (`result:`); `None`: the status body itself.
    pub result: Option<ResultPlace>,
    /// The wait between polls when the API sends no `Retry-After` (`interval_ms`).
    pub interval_ms: Option<u64>,
    /// The method that cancels the operation, sent to its status location (`cancel:`).
    pub cancel: Option<String>,
}

/// Where a response names a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A response header, by its name as written (`{header: Operation-Location}`).
    Header(String),
    /// A string of the JSON body, by its JSON pointer (`{body: /links/status}`).
    Body(String),
}

/// Where the final result of a completed operation is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultPlace {
    /// `result: status`: the last status answer, as it is.
    Status,
    /// `result: {field: /output}`: a member of the status body.
    Field(String),
    /// `result: {header: Location}` or `{body: /links/result}`: a URL the status answer
    /// names, fetched with a GET.
    Fetch(Place),
}

/// Reads `long_running:` of the tool entry `map` at `path`, if it has one.
pub fn parse(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<LongRunningEntry> {
    let value = map.get(KEY)?;
    let path = join(path, KEY);
    let map = match value {
        Value::Bool(false) => return Some(LongRunningEntry::Off),
        Value::Null | Value::Bool(true) => {
            return Some(LongRunningEntry::On(Box::default()));
        }
        Value::Object(map) => map,
        _ => {
            error(
                &path,
                "must be `true` (as the document's 202 shows), `false` (answer the 202 as it is) or a mapping such as `{status: {header: Location}}`",
                diagnostics,
            );
            return None;
        }
    };
    check_keys(map, &path, &[KEYS], diagnostics);
    let mut options = LongRunningOptions::default();
    if let Some(value) = map.get("status") {
        options.status = place(value, &join(&path, "status"), diagnostics);
    }
    if let Some(value) = map.get("state") {
        options.state = pointer(value, &join(&path, "state"), diagnostics);
    }
    for (key, list) in [
        ("working", &mut options.working),
        ("completed", &mut options.completed),
        ("failed", &mut options.failed),
        ("cancelled", &mut options.cancelled),
    ] {
        if let Some(value) = map.get(key) {
            *list = values(value, &join(&path, key), diagnostics);
        }
    }
    let listed = |options: &LongRunningOptions| {
        [
            &options.working,
            &options.completed,
            &options.failed,
            &options.cancelled,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<String>>()
    };
    let all = listed(&options);
    if options.state.is_none() && !all.is_empty() {
        error(
            &path,
            "status values are read from the status body: say where with `state:`, a JSON pointer such as /status",
            diagnostics,
        );
    }
    if options.state.is_some() && options.completed.is_empty() {
        error(
            &path,
            "`state:` needs `completed:`, the status values that mean the operation is done, such as [succeeded]",
            diagnostics,
        );
    }
    for (index, value) in all.iter().enumerate() {
        if all[..index]
            .iter()
            .any(|earlier| earlier.eq_ignore_ascii_case(value))
        {
            error(
                &path,
                format!("the status value {value:?} is listed twice: each value means one thing"),
                diagnostics,
            );
        }
    }
    if let Some(value) = map.get("result") {
        options.result = result_place(value, &join(&path, "result"), diagnostics);
    }
    if let Some(value) = map.get("interval_ms") {
        let here = join(&path, "interval_ms");
        match value.as_u64() {
            Some(ms) if (MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&ms) => {
                options.interval_ms = Some(ms)
            }
            _ => error(
                &here,
                format!(
                    "must be a whole number of milliseconds from {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS}"
                ),
                diagnostics,
            ),
        }
    }
    if let Some(value) = map.get("cancel") {
        options.cancel = cancel(value, &join(&path, "cancel"), diagnostics);
    }
    Some(LongRunningEntry::On(Box::new(options)))
}

fn error(path: &str, message: impl Into<String>, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.push(super::error(path, message));
}

/// `{header: NAME}` or `{body: /pointer}`.
fn place(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Place> {
    let one = value.as_object().filter(|map| map.len() == 1);
    let Some((kind, value)) = one.and_then(|map| map.iter().next()) else {
        error(
            path,
            "must be `{header: NAME}` (a response header holding the URL) or `{body: /pointer}` (a string of the JSON body)",
            diagnostics,
        );
        return None;
    };
    let here = join(path, kind);
    match kind.as_str() {
        "header" => {
            let name = non_empty_string(value, &here, diagnostics)?;
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                error(
                    &here,
                    format!("{name:?} is not a valid header name"),
                    diagnostics,
                );
                return None;
            }
            Some(Place::Header(name))
        }
        "body" => pointer(value, &here, diagnostics).map(Place::Body),
        _ => {
            error(
                path,
                format!("unknown key `{kind}` (expected one of: header, body)"),
                diagnostics,
            );
            None
        }
    }
}

/// `status`, `{field: /pointer}`, `{header: NAME}` or `{body: /pointer}`.
fn result_place(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ResultPlace> {
    if value.as_str() == Some("status") {
        return Some(ResultPlace::Status);
    }
    if let Some(field) = value.as_object().and_then(|map| match map.len() {
        1 => map.get("field"),
        _ => None,
    }) {
        return pointer(field, &join(path, "field"), diagnostics).map(ResultPlace::Field);
    }
    if value.as_object().is_some_and(|map| {
        map.len() == 1 && (map.contains_key("header") || map.contains_key("body"))
    }) {
        return place(value, path, diagnostics).map(ResultPlace::Fetch);
    }
    error(
        path,
        "must be `status` (the status body is the result), `{field: /pointer}` (a member of it), or a URL to fetch: `{header: Location}` or `{body: /pointer}`",
        diagnostics,
    );
    None
}

/// A JSON pointer into a body: `/` alone is the whole body.
fn pointer(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    let text = non_empty_string(value, path, diagnostics)?;
    if !text.starts_with('/') || !super::call::valid_pointer_escapes(&text) {
        error(
            path,
            format!(
                "{text:?} is not a JSON pointer into the body; write it as /status or /links/0/href"
            ),
            diagnostics,
        );
        return None;
    }
    Some(text)
}

/// A list of status values: strings, or numbers and booleans taken as their text.
fn values(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<String> {
    let Some(items) = value.as_array().filter(|items| !items.is_empty()) else {
        error(
            path,
            "must be a non-empty list of status values",
            diagnostics,
        );
        return Vec::new();
    };
    let mut values = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::String(text) if !text.is_empty() => values.push(text.clone()),
            Value::Number(_) | Value::Bool(_) => values.push(item.to_string()),
            _ => error(
                &format!("{path}.{index}"),
                "a status value is a non-empty string, a number or a boolean",
                diagnostics,
            ),
        }
    }
    values
}

/// `DELETE`, or `{method: POST}`.
fn cancel(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    let method = match value {
        Value::String(method) => Some(method.as_str()),
        Value::Object(map) => {
            check_keys(map, path, &[&["method"]], diagnostics);
            map.get("method").and_then(Value::as_str)
        }
        _ => None,
    };
    match method.map(str::to_ascii_uppercase) {
        Some(method) if CANCEL_METHODS.contains(&method.as_str()) => Some(method),
        _ => {
            error(
                path,
                format!(
                    "must be the method that cancels the operation at its status location: one of {}",
                    CANCEL_METHODS.join(", ")
                ),
                diagnostics,
            );
            None
        }
    }
}
