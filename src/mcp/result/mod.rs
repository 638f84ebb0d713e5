//! The one writer of `CallToolResult`s: a call's [`Outcome`], a validation failure, a rate
//! limit or a refusal becomes the JSON-RPC response each era expects; so does a confirming
//! tool's `input_required` question and every answer to an unconfirmed call.
//!
//! An answer keeps what the API said: the body as data, the observed HTTP facts in
//! `_meta["dev.ferry/http"]`, what ferry itself did in `_meta["dev.ferry/result"]`. A body
//! that is not text travels as an embedded resource under `ferry://tools/<tool>/response`;
//! an error answer's body always does, labelled with its media type (so an RFC 9457 problem
//! is `application/problem+json`). Modern results carry `resultType` and the server info;
//! a legacy client gets a `structuredContent` that is not an object wrapped under
//! [`LEGACY_WRAP_KEY`].
//!
//! A 2xx JSON body becomes `structuredContent` plus a text block holding the body as
//! received; `structuredContent` holds numbers as 64-bit integers or floats, so when a body
//! has a number they cannot hold exactly (an integer past 2^64, a decimal finer than f64),
//! `_meta["dev.ferry/result"].numbersRounded` is `true` and the text block is the exact one.
//! An error body leads with a short text block for the model; nothing is inferred from its
//! prose. The embedded resources are carriers inside a tool result, not resources a client
//! can list or read: ferry declares no `resources` capability. The headers reported in
//! `_meta["dev.ferry/http"]` are allow-listed, never cookies or authentication headers.
//!
//! Every answer to a `tools/call` that reached the point of calling is written here, as a
//! tool result; the one JSON-RPC error written here is [`refused`]'s, for a caller that
//! lacks the tool's scope.

use base64::Engine as _;
use bytes::Bytes;
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

mod limited;
pub(super) mod operation;
mod stream;
mod workflow;
mod written;

pub(super) use workflow::{workflow_contract_broken, workflow_result};

pub(super) use limited::{RateLimited, rate_limited};
use written::Written;

use super::confirm::{
    self, CONFIRM_FIELD, INPUT_KEY, NotConfirmed, Question, Refusal, TYPED_FIELD,
};
use super::{
    Era, ID_PREFIX, Kind, LEGACY_VERSION, META_SERVER_INFO, MODERN_VERSION, Outgoing, code,
};
use crate::auth::Challenge;
use crate::catalog::long_running::State;
use crate::catalog::shape::ResultShape;
use crate::upstream::{Answer, CallError, Handling, Http, Outcome};

/// `_meta` key of the observed HTTP facts.
pub const HTTP_META: &str = "dev.ferry/http";
/// `_meta` key of what ferry did to the result (cut it, paged it, projected it).
pub const RESULT_META: &str = "dev.ferry/result";
/// `_meta` key of a call refused by a rate limit: when to try again, and which limit.
pub const RATE_LIMIT_META: &str = "dev.ferry/rateLimit";
/// The key a legacy client finds a non-object `structuredContent` under: 2025-11-25 allows
/// only objects there, so `[1,2]` is served to it as `{"result":[1,2]}`
/// ([`crate::catalog::shape`] decides it, for the results and the output schemas alike).
pub const LEGACY_WRAP_KEY: &str = crate::catalog::shape::LEGACY_WRAP_KEY;

/// A tool result before its era is known, as the writer holds it: blocks and facts, written
/// straight to the response without an intermediate JSON tree.
#[derive(Debug, Default)]
pub(super) struct CallResult<'t> {
    content: Vec<Block<'t>>,
    structured_content: Option<Value>,
    pub(super) is_error: bool,
    http: Option<Http>,
    /// What ferry did, when it did anything.
    handling: Option<Handling>,
    /// The rate limit that refused the call, when one did.
    rate_limit: Option<RateLimited>,
    /// A composite tool's steps: `_meta["dev.ferry/workflow"]`.
    workflow: Option<Value>,
}

/// A tool result as MCP's `CallToolResult` without the era-specific parts, read back from
/// what the writer serves: what a program that calls [`crate::upstream::Upstream`] directly
/// (a test, a harness) gets to look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(rename = "_meta", default, skip_serializing_if = "Map::is_empty")]
    pub meta: Map<String, Value>,
}

impl ToolResult {
    /// The era-free result the writer makes of `outcome`, a call of `tool`.
    pub fn of(tool: &str, outcome: Outcome) -> ToolResult {
        serde_json::from_slice(&era_free(tool, outcome)).expect("a written tool result reads back")
    }

    /// The era-free result the writer makes of `outcome`, a call of `tool`, as `tool` serves
    /// it ([`shaped`] by its `fields:`), as `tools/call` would.
    pub fn of_tool(tool: &crate::catalog::Tool, outcome: Outcome) -> ToolResult {
        let outcome = match tool.operation() {
            Some(operation) => shaped(&operation.call.shape, outcome),
            None => outcome,
        };
        ToolResult::of(&tool.name, outcome)
    }
}

/// `outcome`, an operation's, as its tool serves it: a 2xx JSON answer's value (a stream's
/// items) shaped by the tool's result shape, the value the API sent projected by `fields:`
/// ([`ResultShape::apply`], the rule `catalog::output` declares the output schema by). The
/// one function that applies a shape, where an operation's outcome comes back from the
/// runner (a call's, a task's look), before anything checks or writes it, so that the item
/// and output checks judge what is served. The runner keeps answers as the API sent them, since the long-running
/// follower reads a status location from a body `fields:` may leave it out of. A status that
/// says the operation failed or was cancelled is passed on as the API answered it: it is not
/// the result the shape describes.
pub(crate) fn shaped(shape: &ResultShape, mut outcome: Outcome) -> Outcome {
    if let Ok(answer) = &mut outcome
        && answer.http.status.is_success()
        && shape.projection.is_some()
        && !answer
            .handling
            .operation
            .as_ref()
            .is_some_and(|followed| matches!(followed.state, State::Failed | State::Cancelled))
        && let Some(value) = answer.json.take()
    {
        let (value, projected) = shape.apply(value);
        answer.handling.projected = projected;
        answer.json = Some(value);
    }
    outcome
}

/// The JSON of `outcome`'s result before the era's additions.
pub(crate) fn era_free(tool: &str, outcome: Outcome) -> Vec<u8> {
    let result = outcome_result(tool, outcome);
    let mut out = Vec::with_capacity(512);
    Written {
        result: &result,
        result_type: None,
        server_info: None,
        wrap: false,
    }
    .write(&mut out)
    .expect("a tool result serializes");
    out
}

/// The result of a call's outcome.
pub(super) fn outcome_result(tool: &str, outcome: Outcome) -> CallResult<'_> {
    outcome_result_via(tool, None, outcome)
}

/// [`outcome_result`] of a call made through `via`, a discovery calling tool, when it was:
/// what the result tells the model to call next is said as a call of `via`.
pub(super) fn outcome_result_via<'t>(
    tool: &'t str,
    via: Option<&str>,
    outcome: Outcome,
) -> CallResult<'t> {
    match outcome {
        Ok(answer) => answer_result(tool, via, answer),
        Err(error) => error_result(error),
    }
}

/// The result of a 2xx JSON answer that does not match `tool`'s output schema (`mismatch`
/// says where): never served as `structuredContent`, but as an error with the body as text;
/// for a tool whose method is not read-only, saying the operation was carried out.
pub(super) fn contract_broken<'t>(
    tool: &'t crate::catalog::Tool,
    via: Option<&str>,
    outcome: Outcome,
    mismatch: &str,
) -> CallResult<'t> {
    let mut result = outcome_result_via(&tool.name, via, outcome);
    let status = result
        .http
        .as_ref()
        .map_or_else(String::new, |http| http.status.to_string());
    let mut text = format!(
        "the API answered {status}, but its answer does not match this tool's declared output \
         schema, so it is not served as structured content; the body follows as text. What \
         does not match:{mismatch}"
    );
    if tool.limits.class != crate::catalog::SafetyClass::Reads {
        text.push_str(&format!(
            "\nThe API answered success ({status}): the operation was carried out; do not repeat it."
        ));
    }
    result.structured_content = None;
    result.is_error = true;
    result.content.insert(0, Block::Text(text));
    result
}

/// The result of a tool that answers from what ferry holds (a discovery tool's search or
/// description): `value` as `structuredContent`, its JSON text and then `notes` as text.
pub(super) fn answered(value: Value, notes: Vec<String>) -> CallResult<'static> {
    let mut content = vec![Block::Text(value.to_string())];
    content.extend(notes.into_iter().map(Block::Text));
    CallResult {
        content,
        structured_content: Some(value),
        ..CallResult::default()
    }
}

/// The result for arguments the input schema refuses: `text` says what to fix.
pub(super) fn invalid_arguments(text: String) -> CallResult<'static> {
    CallResult {
        content: vec![Block::Text(text)],
        is_error: true,
        ..CallResult::default()
    }
}

/// `result` as the JSON-RPC response to request `id` in `era`, written in one pass into one
/// buffer.
pub(super) fn respond(
    id: &RawValue,
    result: &CallResult<'_>,
    era: Era,
    server_info: &RawValue,
) -> Result<Outgoing, serde_json::Error> {
    let written = match era {
        Era::Modern => Written {
            result,
            result_type: Some("complete"),
            server_info: Some(server_info),
            wrap: false,
        },
        Era::Legacy => Written {
            result,
            result_type: None,
            server_info: None,
            wrap: true,
        },
    };
    let id = id.get().as_bytes();
    let mut body = Vec::with_capacity(512);
    body.extend_from_slice(ID_PREFIX);
    body.extend_from_slice(id);
    body.extend_from_slice(br#","result":"#);
    written.write(&mut body)?;
    body.push(b'}');
    Ok(Outgoing {
        status: StatusCode::OK,
        body: Bytes::from(body),
        kind: Kind::Json,
    })
}

/// The `input_required` answer to a confirming tool's call: one form-mode elicitation (a
/// boolean to confirm, and the value to type back when the tool asks for one) and the sealed
/// state. It carries no `ttlMs` or `cacheScope`: an interim result is never cached.
pub(super) fn input_required(
    id: &RawValue,
    question: &Question,
    server_info: &RawValue,
) -> Outgoing {
    let mut properties = Map::new();
    properties.insert(
        CONFIRM_FIELD.into(),
        json!({
            "type": "boolean",
            "title": "Confirm",
            "description": "Check to let this call be made; nothing is sent until you do.",
        }),
    );
    let mut required = vec![CONFIRM_FIELD];
    if let Some(argument) = &question.type_to_confirm {
        properties.insert(
            TYPED_FIELD.into(),
            json!({
                "type": "string",
                "title": format!("Type the {} to confirm", confirm::escape(argument, confirm::MAX_VALUE_CHARS)),
                "description": "Exactly the value the message names.",
            }),
        );
        required.push(TYPED_FIELD);
    }
    let result = json!({
        "resultType": "input_required",
        "inputRequests": {
            INPUT_KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": question.message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": properties,
                        "required": required,
                    },
                },
            },
        },
        "requestState": question.state,
        "_meta": { META_SERVER_INFO: server_info },
    });
    super::respond_value(id, &result)
}

/// The user did not confirm: nothing was sent.
pub(super) fn declined(how: NotConfirmed) -> CallResult<'static> {
    let text = match how {
        NotConfirmed::Declined => "the user declined this call: nothing was sent to the API",
        NotConfirmed::Cancelled => {
            "the user dismissed the confirmation without confirming: nothing was sent to the API"
        }
        NotConfirmed::Mistyped => {
            "the value the user typed does not match the one this call names: nothing was sent to the API; call the tool again to ask anew"
        }
    };
    refusal(text.to_string())
}

/// The retry's `requestState` is refused: nothing was sent.
pub(super) fn state_refused(refusal_of: Refusal) -> CallResult<'static> {
    let why = match refusal_of {
        Refusal::Unreadable => "the requestState is not one this server writes",
        Refusal::Forged => {
            "the requestState does not verify: it was altered, or written by a server with another key (replicas must share `confirm_key`)"
        }
        Refusal::Expired => "the confirmation request expired before it was answered",
        Refusal::OtherTool => "the requestState was given for another tool",
        Refusal::Changed => {
            "the tool was changed since the user was asked (its question or what it sends)"
        }
        Refusal::OtherCaller => "the requestState was given to another caller",
        Refusal::OtherArguments => {
            "the requestState was given for other arguments: a confirmation covers exactly the arguments it showed"
        }
        Refusal::Replayed => "this confirmation was already answered once",
        Refusal::Busy => "this server holds too many unanswered confirmations to take another",
        Refusal::StateUnavailable => {
            "whether it was already used cannot be checked now (the state the servers share did not answer in time), and a confirmation is accepted only when it can be used once"
        }
        Refusal::StateLost => {
            "the state the servers share lost what it held after the user was asked, so whether this confirmation was already used cannot be known"
        }
    };
    refusal(format!(
        "the call was not confirmed: {why}. Nothing was sent to the API; call the tool again without requestState to ask the user anew"
    ))
}

/// A legacy client called a tool that confirms: it cannot be asked mid-call.
pub(super) fn legacy_cannot_confirm() -> CallResult<'static> {
    refusal(format!(
        "this tool asks the user to confirm each call before anything is sent, which needs a client that supports MCP {MODERN_VERSION} confirmation (input_required with elicitation); this client speaks {LEGACY_VERSION}, so the call was not made"
    ))
}

fn refusal(text: String) -> CallResult<'static> {
    CallResult {
        content: vec![Block::Text(text)],
        is_error: true,
        ..CallResult::default()
    }
}

/// A 403 for a tool the caller lacks a scope for, with a JSON-RPC error for the record.
pub(super) fn refused(id: &RawValue, challenge: Challenge) -> Outgoing {
    let error = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code::INVALID_REQUEST, "message": "the token lacks a scope this tool needs"},
    });
    Outgoing {
        status: challenge.status(),
        body: Bytes::from(error.to_string()),
        kind: Kind::Refused(challenge),
    }
}

/// One content block.
#[derive(Debug)]
enum Block<'t> {
    Text(String),
    /// An `image` or `audio` block: its kind, the base64 data, the media type.
    Media {
        kind: &'static str,
        data: String,
        mime: String,
    },
    /// An embedded resource carrying a body under the tool's URI.
    Resource {
        tool: &'t str,
        mime: Option<String>,
        body: ResourceBody,
    },
}

#[derive(Debug)]
enum ResourceBody {
    Text(String),
    Blob(String),
}

/// The words for a call that came to no answer to pass on.
fn error_result(error: CallError) -> CallResult<'static> {
    let (text, http) = match error {
        CallError::Argument(error) => (error.to_string(), None),
        CallError::Credential(_) => (
            "ferry could not obtain its credential for the upstream".to_string(),
            None,
        ),
        CallError::Request => (
            "ferry could not form the upstream request for this call".to_string(),
            None,
        ),
        CallError::Timeout { timeout_ms } => (
            format!("the upstream did not answer within {timeout_ms} ms"),
            None,
        ),
        CallError::ConnectTimeout { connect_timeout_ms } => (
            format!("could not connect to the upstream within {connect_timeout_ms} ms"),
            None,
        ),
        CallError::Connect => ("could not connect to the upstream".to_string(), None),
        CallError::Closed => (
            "the upstream closed the connection without an answer".to_string(),
            None,
        ),
        CallError::HeadTooLarge => (
            "the upstream answered with a response head larger than ferry accepts (too many or too long header lines)"
                .to_string(),
            None,
        ),
        CallError::NotHttp => (
            "the upstream answered with something that is not an HTTP response".to_string(),
            None,
        ),
        CallError::Pending(pending) => (operation::pending(&pending), None),
        CallError::Body(http) => (
            format!(
                "the upstream answered {}, then its response body could not be read completely",
                http.status.as_u16()
            ),
            Some(http),
        ),
    };
    CallResult {
        content: vec![Block::Text(text)],
        is_error: true,
        http,
        ..CallResult::default()
    }
}

fn answer_result<'t>(tool: &'t str, via: Option<&str>, answer: Answer) -> CallResult<'t> {
    let Answer {
        http,
        essence,
        body,
        json,
        location,
        authenticated,
        handling,
    } = answer;
    let status = http.status;
    let mut result = CallResult::default();
    let essence = essence.as_deref();
    if status.is_success() {
        success(&mut result, tool, status, body, essence, json, &handling);
        // The model reads the content, not `_meta`: a next page is said where it reads.
        if let Some(page) = handling.page.as_ref().filter(|page| page.more) {
            result.content.push(Block::Text(next_page(tool, via, page)));
        }
    } else {
        let parsed = json.is_some();
        let lead = failure_lead(status, location, authenticated, essence, json, &handling);
        result.is_error = true;
        result.content.push(Block::Text(lead));
        if !body.is_empty() {
            let mime = match essence {
                // Labelled JSON, but cut or broken: passed on as text, not as JSON.
                Some(essence) if is_json(essence) && !parsed => {
                    Some(if std::str::from_utf8(&body).is_ok() {
                        "text/plain"
                    } else {
                        "application/octet-stream"
                    })
                }
                other => other,
            };
            result.content.push(resource(tool, mime, body));
        }
    }
    if let Some(followed) = &handling.operation {
        operation::ended(&mut result, followed);
    }
    result.http = Some(http);
    result.handling = done_anything(&handling).then_some(handling);
    result
}

fn success<'t>(
    result: &mut CallResult<'t>,
    tool: &'t str,
    status: StatusCode,
    body: Vec<u8>,
    essence: Option<&str>,
    json: Option<Value>,
    handling: &Handling,
) {
    if let Some(streamed) = &handling.stream {
        stream::items(result, json.unwrap_or_default(), streamed, handling);
        return;
    }
    let status = status_line(status);
    if handling.truncated {
        let cut_text = essence.is_some_and(|essence| is_text(essence) && !is_json(essence));
        if let (true, Some(text)) = (cut_text, utf8_prefix(&body)) {
            result.content.push(Block::Text(text.to_string()));
            result.content.push(Block::Text(format!(
                "the response was cut at {} bytes (max_response_bytes)",
                handling.limit_bytes
            )));
        } else {
            result.is_error = true;
            result.content.push(Block::Text(format!(
                "the upstream answered {status}, but its response is larger than the {}-byte limit (max_response_bytes) and was cut",
                handling.limit_bytes
            )));
        }
        return;
    }
    if body.is_empty() {
        result.content.push(Block::Text(format!(
            "the upstream answered {status} with an empty body: the call succeeded"
        )));
        return;
    }
    match essence {
        Some(essence) if is_json(essence) => {
            let Some(value) = json else {
                result.is_error = true;
                result.content.push(Block::Text(format!(
                    "the upstream answered {status}, but its response is labelled {essence} and is not valid JSON"
                )));
                result
                    .content
                    .push(resource(tool, Some("text/plain"), body));
                return;
            };
            let text = if handling.projected {
                value.to_string()
            } else {
                // The text block is the body as received (secrets redacted): no number or
                // other string re-written.
                into_text(body)
            };
            result.content.push(Block::Text(text));
            result.structured_content = Some(value);
        }
        Some(essence) if essence.starts_with("image/") || essence.starts_with("audio/") => {
            let kind = if essence.starts_with("image/") {
                "image"
            } else {
                "audio"
            };
            let data = base64::engine::general_purpose::STANDARD.encode(&body);
            result.content.push(Block::Media {
                kind,
                data,
                mime: essence.to_string(),
            });
        }
        Some(essence) if is_text(essence) => match String::from_utf8(body) {
            Ok(text) => result.content.push(Block::Text(text)),
            Err(error) => result
                .content
                .push(resource(tool, Some(essence), error.into_bytes())),
        },
        None => match String::from_utf8(body) {
            Ok(text) => result.content.push(Block::Text(text)),
            Err(error) => result
                .content
                .push(resource(tool, None, error.into_bytes())),
        },
        Some(essence) => result.content.push(resource(tool, Some(essence), body)),
    }
}

/// What a paged result says of the next page: the exact arguments that ask for it.
fn next_page(tool: &str, via: Option<&str>, page: &crate::upstream::Page) -> String {
    match (&page.next_arguments, via) {
        (Some(arguments), None) => format!(
            "There are more results. For the next page, call {tool} again with these arguments: {}",
            Value::Object(arguments.clone())
        ),
        (Some(arguments), Some(via)) => format!(
            "There are more results. For the next page, call {via} again with these arguments: {}",
            json!({"operation": tool, "arguments": Value::Object(arguments.clone())})
        ),
        (None, _) => "The API says there are more results, but named no next page that can be asked for through this tool.".to_string(),
    }
}

/// The first text block of an error answer: the status, what a redirect or a refusal of
/// ferry's credentials means, a problem's members, a cut.
fn failure_lead(
    status: StatusCode,
    location: Option<String>,
    authenticated: bool,
    essence: Option<&str>,
    json: Option<Value>,
    handling: &Handling,
) -> String {
    let status_text = status_line(status);
    let mut lead = if status.is_redirection() {
        match location {
            Some(location) => format!(
                "the upstream answered {status_text}, a redirect to {location}; ferry does not follow redirects"
            ),
            None => format!(
                "the upstream answered {status_text}, a redirect without a location; ferry does not follow redirects"
            ),
        }
    } else if status == StatusCode::UNAUTHORIZED && authenticated {
        format!(
            "the upstream answered {status_text} to ferry's own configured credentials: this is a configuration problem of \
             this server that no change to the call can fix"
        )
    } else {
        format!("the upstream answered {status_text}")
    };
    if let (Some("application/problem+json"), Some(Value::Object(problem))) = (essence, &json) {
        for member in ["title", "detail", "type"] {
            if let Some(Value::String(text)) = problem.get(member) {
                lead.push_str(&format!("\n{member}: {text}"));
            }
        }
        if let Some(Value::Number(number)) = problem.get("status") {
            lead.push_str(&format!("\nstatus: {number}"));
        }
    }
    if handling.truncated {
        lead.push_str(&format!(
            "\nthe body was cut at {} bytes (max_response_bytes)",
            handling.limit_bytes
        ));
    }
    lead
}

/// An embedded resource carrying a body: text when it is UTF-8 (exactly as received),
/// base64 otherwise.
fn resource<'t>(tool: &'t str, mime: Option<&str>, body: Vec<u8>) -> Block<'t> {
    let binary = mime.is_some_and(is_binary_type);
    let body = match String::from_utf8(body) {
        Ok(text) if !binary => ResourceBody::Text(text),
        Ok(text) => ResourceBody::Blob(base64::engine::general_purpose::STANDARD.encode(text)),
        Err(error) => {
            ResourceBody::Blob(base64::engine::general_purpose::STANDARD.encode(error.as_bytes()))
        }
    };
    Block::Resource {
        tool,
        mime: mime.map(str::to_string),
        body,
    }
}

/// A body that is text, without a copy; any invalid sequence replaced.
fn into_text(body: Vec<u8>) -> String {
    match String::from_utf8(body) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

fn is_json(essence: &str) -> bool {
    crate::upstream::response::is_json(essence)
}

fn is_text(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/x-ndjson"
                | "application/x-www-form-urlencoded"
                | "application/csv"
        )
}

fn is_binary_type(essence: &str) -> bool {
    essence.starts_with("image/")
        || essence.starts_with("audio/")
        || essence.starts_with("video/")
        || matches!(
            essence,
            "application/octet-stream" | "application/pdf" | "application/zip"
        )
}

fn status_line(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The longest prefix that is valid UTF-8 (a cut may split a character).
fn utf8_prefix(body: &[u8]) -> Option<&str> {
    match std::str::from_utf8(body) {
        Ok(text) => Some(text),
        Err(error) if error.error_len().is_none() => {
            std::str::from_utf8(&body[..error.valid_up_to()]).ok()
        }
        Err(_) => None,
    }
}

fn done_anything(handling: &Handling) -> bool {
    handling.redacted.is_some()
        || handling.truncated
        || handling.page.is_some()
        || handling.projected
        || handling.numbers_rounded
        || handling.operation.is_some()
        || handling.stream.is_some()
}
