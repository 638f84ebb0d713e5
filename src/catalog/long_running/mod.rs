//! A long-running operation's plan, resolved once: where the status resource is named, how
//! its answers read, where the final result is, how long to wait between polls and how to
//! cancel. `upstream` follows an operation by this alone.
//!
//! The plan is the curation's `long_running:` over what the document makes plain: a `202`
//! response whose headers include `Operation-Location` (read as Azure's long-running
//! operations are: the status body's `/status` is `NotStarted`, `Running`, `Succeeded`,
//! `Failed` or `Canceled`) or `Location` (read by HTTP status alone: 202 is still working,
//! 303 is done with the result at its `Location`, any other 2xx is done with the status
//! answer as the result, 4xx and 5xx are the operation's failure). An operation the curation
//! says nothing of but whose document makes it plain is long-running by inference, which
//! `ferry check` says ([`INFERRED_CODE`]); `long_running: false` keeps the 202 as the answer.

use std::time::Duration;

use http::{HeaderName, Method};
use serde_json::Value;

use super::CallSettings;
use super::choose::Choice;
use super::operation::{self, Operation};
use crate::curation::long_running::{
    KEY, LongRunningEntry, LongRunningOptions, Place, ResultPlace,
};
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::Document;

/// [`crate::diagnostic::Diagnostic::code`] of a tool found long-running from its document.
pub const INFERRED_CODE: &str = "long-running-inferred";
/// The wait between polls when neither the API (`Retry-After`) nor the curation
/// (`interval_ms`) says.
pub const DEFAULT_INTERVAL_MS: u64 = 1_000;

/// How a call follows a long-running operation past its `202 Accepted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongRunning {
    /// Where the 202 names the status resource.
    pub status: UrlAt,
    /// How a status answer says where the operation is; `None`: by its HTTP status.
    pub state: Option<StateField>,
    /// Where a completed operation's result is.
    pub result: ResultAt,
    /// The wait between polls when the API sends no `Retry-After`.
    pub interval: Duration,
    /// The method sent to the status location to cancel the operation, when there is one.
    pub cancel: Option<Method>,
    /// The document alone made the operation long-running: the curation says nothing of it.
    pub inferred: bool,
}

/// Where an answer names a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlAt {
    /// A response header (lower case).
    Header(HeaderName),
    /// A string of the JSON body, at this JSON pointer.
    Body(String),
}

/// The status value of a status body, and what each value means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateField {
    /// The JSON pointer of the value in the status body.
    pub pointer: String,
    /// The values of each kind, compared without case; a value in none is still working.
    pub completed: Vec<String>,
    pub failed: Vec<String>,
    pub cancelled: Vec<String>,
}

/// Where the operation ended, as one status answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl State {
    /// The word results and logs use.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Working => "working",
            State::Completed => "completed",
            State::Failed => "failed",
            State::Cancelled => "cancelled",
        }
    }
}

impl StateField {
    /// What the status body `body` says; `None` when it holds no status value where the
    /// plan says.
    pub fn read(&self, body: &Value) -> Option<State> {
        let value = match body.pointer(&self.pointer)? {
            Value::String(text) => text.clone(),
            Value::Null | Value::Array(_) | Value::Object(_) => return None,
            other => other.to_string(),
        };
        let is = |list: &[String]| list.iter().any(|known| known.eq_ignore_ascii_case(&value));
        Some(if is(&self.completed) {
            State::Completed
        } else if is(&self.failed) {
            State::Failed
        } else if is(&self.cancelled) {
            State::Cancelled
        } else {
            State::Working
        })
    }
}

/// Where a completed operation's result is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultAt {
    /// The last status answer, as it is.
    Status,
    /// A member of the status body, at this JSON pointer.
    Field(String),
    /// A URL the status answer names, fetched with a GET.
    Fetch(UrlAt),
}

/// The header of a 202 that makes an operation long-running, where its document shows one:
/// `operation-location` before `location`.
pub(super) fn shown(document: &Document, operation: &Operation<'_>) -> Option<&'static str> {
    let responses = operation.value.get("responses")?.as_object()?;
    let accepted = responses.get("202")?;
    let pointer = format!("{}/responses/202", operation.pointer);
    let (_, _, response) = operation::follow(document, operation.file, &pointer, accepted).ok()?;
    let headers = response.get("headers")?.as_object()?;
    ["operation-location", "location"]
        .into_iter()
        .find(|name| headers.keys().any(|key| key.eq_ignore_ascii_case(name)))
}

/// The plan of the operation `choice` chose, whose document's 202 shows `shown`, for the
/// tool `name` (of the operation `label`): a curation that asks for what cannot be is a
/// failure of the tool, an inference a warning that says so. The status header is reported
/// by `call`, so that the 202's answer carries it.
pub(super) fn plan(
    choice: &Choice,
    shown: Option<&'static str>,
    call: &mut CallSettings,
    (name, label): (&str, &str),
    failed: &mut Vec<Diagnostic>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Box<LongRunning>> {
    let plan = match resolve(choice.settings.long_running.as_ref(), shown) {
        Ok(plan) => plan?,
        Err(message) => {
            let origin = choice.origin.clone().unwrap_or_default();
            failed.push(Diagnostic::error(
                Location::curation(format!("{origin}.{KEY}")),
                message,
            ));
            return None;
        }
    };
    let result_header = match &plan.result {
        ResultAt::Fetch(UrlAt::Header(header)) => Some(header),
        _ => None,
    };
    let status_header = match &plan.status {
        UrlAt::Header(header) => Some(header),
        _ => None,
    };
    for header in [status_header, result_header].into_iter().flatten() {
        if !call.report_headers.contains(header) {
            call.report_headers.push(header.clone());
        }
    }
    if plan.inferred && choice.chosen {
        let header = shown.unwrap_or("location");
        diagnostics.push(
            Diagnostic::warning(
                choice.location(),
                format!(
                    "tool {name:?} is long-running, inferred from its 202 response's `{header}` header: a call polls the status there until the operation ends; write `long_running:` on its entry to say how its status reads, or `long_running: false` to answer the 202 as it is"
                ),
            )
            .with_operation(label.to_string())
            .with_code(INFERRED_CODE),
        );
    }
    Some(Box::new(plan))
}

/// The plan of an operation whose curation entry says `entry` and whose document's 202
/// shows `shown` (see [`shown`]); `None` when it is not long-running; `Err` saying what to
/// write when the curation asks for it but leaves out what the document does not say.
pub(super) fn resolve(
    entry: Option<&LongRunningEntry>,
    shown: Option<&'static str>,
) -> Result<Option<LongRunning>, String> {
    let (options, inferred) = match (entry, shown) {
        (Some(LongRunningEntry::Off), _) | (None, None) => return Ok(None),
        (Some(LongRunningEntry::On(options)), _) => (options.as_ref().clone(), false),
        (None, Some(_)) => (LongRunningOptions::default(), true),
    };
    let azure = shown == Some("operation-location");
    let status = match (&options.status, shown) {
        (Some(Place::Header(name)), _) => UrlAt::Header(header(name)),
        (Some(Place::Body(pointer)), _) => UrlAt::Body(pointer.clone()),
        (None, Some(name)) => UrlAt::Header(HeaderName::from_static(name)),
        (None, None) => {
            return Err(
                "the document's 202 response names no status location (no `Location` or `Operation-Location` header): say where it is, as `status: {header: Location}` or `status: {body: /links/status}`"
                    .to_string(),
            );
        }
    };
    let state = match &options.state {
        Some(pointer) => Some(StateField {
            pointer: pointer.clone(),
            completed: options.completed.clone(),
            failed: options.failed.clone(),
            cancelled: options.cancelled.clone(),
        }),
        // Azure's values, when the status location is the one the document shows.
        None if azure && options.status.is_none() => Some(StateField {
            pointer: "/status".to_string(),
            completed: vec!["Succeeded".to_string()],
            failed: vec!["Failed".to_string()],
            cancelled: vec!["Canceled".to_string(), "Cancelled".to_string()],
        }),
        None => None,
    };
    let result = match &options.result {
        None | Some(ResultPlace::Status) => ResultAt::Status,
        Some(ResultPlace::Field(pointer)) => ResultAt::Field(pointer.clone()),
        Some(ResultPlace::Fetch(Place::Header(name))) => {
            ResultAt::Fetch(UrlAt::Header(header(name)))
        }
        Some(ResultPlace::Fetch(Place::Body(pointer))) => {
            ResultAt::Fetch(UrlAt::Body(pointer.clone()))
        }
    };
    Ok(Some(LongRunning {
        status,
        state,
        result,
        interval: Duration::from_millis(options.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS)),
        cancel: options
            .cancel
            .as_deref()
            .and_then(|method| Method::from_bytes(method.as_bytes()).ok()),
        inferred,
    }))
}

/// A header name the curation checked, lower-cased.
fn header(name: &str) -> HeaderName {
    HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).unwrap_or(http::header::LOCATION)
}

#[cfg(test)]
mod tests;
