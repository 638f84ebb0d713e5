//! What one call comes to, as data: an [`Answer`] from the upstream, or a [`CallError`] that
//! knows whose fault it is. Nothing here is MCP; `mcp` writes both as a tool result.

use http::{HeaderName, StatusCode};
use serde_json::Value;

use super::request::ArgumentError;
use crate::auth::outbound::CredentialError;
use crate::catalog::long_running::State;

/// What one call comes to.
pub type Outcome = Result<Answer, CallError>;

/// What one call cost at the upstream: requests sent (retries and a resend with a fresh token
/// included) and the time spent waiting on them, bodies included, backoff not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStats {
    pub attempts: u32,
    /// Calls that sent a first request: one for a tool, one per step run for a workflow.
    /// The attempts beyond them are retries.
    pub calls: u32,
    pub upstream: std::time::Duration,
}

/// Whose fault a failed call is, as cloudflare/pingora's `ErrorSource` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The caller's: arguments that cannot be sent, a scope it lacks, a token it lacks.
    Caller,
    /// The upstream's: no answer in time, a connection refused or reset, a credential
    /// refused, an answer that is not HTTP or whose body broke off.
    Upstream,
    /// ferry's own: a request it could not form, a token endpoint it could not use.
    Gateway,
}

/// The HTTP facts ferry reports of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http {
    pub status: StatusCode,
    /// The reported headers the upstream sent, in the tool's order, each one's values joined
    /// with `, ` and redacted of ferry's secrets.
    pub headers: Vec<(HeaderName, String)>,
}

/// An upstream answer, redacted of ferry's secrets: the body as received and what ferry did.
#[derive(Debug, Clone)]
pub struct Answer {
    pub http: Http,
    /// The `Content-Type` essence: type and subtype, lower-cased, without parameters.
    pub essence: Option<String>,
    /// The body as received, cut at the size cap when [`Handling::truncated`].
    pub body: Vec<u8>,
    /// The body as JSON when it is labelled JSON, complete and valid (a stream's: its
    /// items), as the API sent it: `mcp` shapes it as the tool serves it.
    pub json: Option<Value>,
    /// A redirect's first `Location`.
    pub location: Option<String>,
    /// ferry sent its own configured credentials on this call.
    pub authenticated: bool,
    pub handling: Handling,
}

/// What ferry did to an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handling {
    /// Where a secret of ferry's was first found and taken out, if anywhere.
    pub redacted: Option<Redacted>,
    /// The body was cut at `limit_bytes`.
    pub truncated: bool,
    pub limit_bytes: u64,
    pub page: Option<Page>,
    /// The JSON body was cut down to the tool's `fields:` (by `mcp`, as it serves it).
    pub projected: bool,
    /// A number of the JSON body does not survive as a 64-bit integer or float.
    pub numbers_rounded: bool,
    /// The answer ends a long-running operation ferry followed from its `202 Accepted`.
    pub operation: Option<Box<Followed>>,
    /// The answer was a stream, read item by item.
    pub stream: Option<Box<Streamed>>,
}

/// Why a stream ended before it came to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It was still coming when the call's timeout came.
    Stalled { timeout_ms: u64 },
    /// The connection failed in the middle of it.
    BrokeOff,
}

/// A stream read item by item: how many items, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    pub sequence: crate::upstream::Sequence,
    /// The items kept (the answer's value is their array).
    pub items: usize,
    /// The items (by index) that are not JSON, kept as their text.
    pub not_json: Vec<usize>,
    /// Bytes at the end that make no whole item, left out: the stream stopped inside one.
    pub partial: usize,
    /// The stream stopped before its end, and is what had come.
    pub stopped: Option<Stopped>,
    /// The items (by index) that do not match the item schema the API documents, with what
    /// did not match.
    pub mismatched: Vec<(usize, String)>,
}

/// A long-running operation followed to its end: where its status was, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Followed {
    /// The status location, as the API named it (redacted of ferry's secrets).
    pub status: String,
    pub state: State,
}

/// A long-running operation accepted by the API but not followed to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The status location, as the API named it (redacted of ferry's secrets).
    pub status: String,
    pub why: Unfollowed,
}

/// Why ferry stopped following an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfollowed {
    /// It was still running when the call's timeout came.
    Running { timeout_ms: u64 },
    /// Its status location is on another origin than the API's, which ferry never calls.
    OtherOrigin,
    /// The caller follows it as a task, by its status location.
    Task,
}

/// The part of an answer a secret was first found in: the body, a `Link` cursor or a
/// redirect's location, or a reported header. The result says so in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redacted {
    Body,
    Target,
    Headers,
}

/// The next page of a paged answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// `Some` when the next page has a cursor.
    pub cursor: Option<String>,
    /// There is a next page.
    pub more: bool,
    /// Read from the `Link` header rather than a field of the body.
    pub from_link: bool,
    /// The cursor was a number in the body (a page number, say), and goes back as one.
    pub cursor_number: bool,
    /// The arguments that ask for the next page: the call's own, its cursor in the tool's
    /// cursor argument, less any query argument a `Link` cursor sets otherwise. `None` when
    /// there is no next page, or no cursor ferry can pass back.
    pub next_arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A call that came to no answer to pass on.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// An argument cannot become part of the request.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// ferry's credential for the upstream could not be obtained.
    #[error("no upstream credential: {0}")]
    Credential(#[source] CredentialError),
    /// The request could not be formed: its URL, its origin or a header value.
    #[error("the request could not be formed")]
    Request,
    /// No answer within the call's time limit.
    #[error("no answer within {timeout_ms} ms")]
    Timeout { timeout_ms: u64 },
    /// No connection within the connect time limit.
    #[error("no connection within {connect_timeout_ms} ms")]
    ConnectTimeout { connect_timeout_ms: u64 },
    /// The connection was refused or failed.
    #[error("no connection")]
    Connect,
    /// The connection closed before an answer.
    #[error("the connection closed without an answer")]
    Closed,
    /// The answer's head is larger than ferry reads.
    #[error("the response head is too large")]
    HeadTooLarge,
    /// What came back is not an HTTP response.
    #[error("not an HTTP response")]
    NotHttp,
    /// The upstream answered, then its body broke off.
    #[error("the response body broke off after status {}", .0.status.as_u16())]
    Body(Http),
    /// The API accepted a long-running operation that ferry did not follow to its end.
    #[error("the operation was accepted; its status is at {}", .0.status)]
    Pending(Pending),
}

impl CallError {
    /// Whose fault this is.
    pub fn fault(&self) -> Fault {
        match self {
            CallError::Argument(_) | CallError::Credential(CredentialError::NoCallerToken) => {
                Fault::Caller
            }
            CallError::Credential(CredentialError::Request(_) | CredentialError::Shape)
            | CallError::Request => Fault::Gateway,
            CallError::Credential(CredentialError::Refused { .. })
            | CallError::Timeout { .. }
            | CallError::ConnectTimeout { .. }
            | CallError::Connect
            | CallError::Closed
            | CallError::HeadTooLarge
            | CallError::NotHttp
            | CallError::Body(_)
            | CallError::Pending(_) => Fault::Upstream,
        }
    }
}

impl Answer {
    /// Whose fault the answer is when it is not a success: a 4xx the caller's, unless it
    /// refuses ferry's own credentials (401); that and anything else the upstream's. `None`
    /// for a success.
    pub fn fault(&self) -> Option<Fault> {
        let status = self.http.status;
        if status.is_success() {
            None
        } else if status.is_client_error()
            && !(status == StatusCode::UNAUTHORIZED && self.authenticated)
        {
            Some(Fault::Caller)
        } else {
            Some(Fault::Upstream)
        }
    }
}
