//! A JSON-RPC error on its way out: its code, message and data, and the HTTP status it
//! travels with. Every JSON-RPC error the dispatcher answers is one of these but two: a call
//! of a tool the caller lacks a scope for, which `result::refused` writes itself (-32600,
//! with the `Challenge`'s 403 and its `WWW-Authenticate`), and a message whose id cannot be
//! read, which the transports answer with [`super::error_without_id`].
//!
//! The codes: -32700 parse, -32600 invalid request, -32601 method not found, -32602 params
//! (an unknown tool included), -32020 header mismatch, -32021 a missing client capability (a
//! confirming tool called without `elicitation`), -32022 unsupported version, -32603 ferry's
//! own fault (500; 504 for a request the HTTP transport's timeout cut off,
//! [`super::timed_out`]). Each travels with the HTTP status issue 3 tabulates; legacy
//! clients get every one but -32603 in-band, with 200 ([`Failure::legacy`]).

use bytes::Bytes;
use http::StatusCode;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{Kind, Outgoing, SUPPORTED_VERSIONS, code};

/// A JSON-RPC error on its way out, with the HTTP status it travels with (boxed: errors are
/// the rare path, and results stay small).
#[derive(Debug)]
pub(super) struct Failure(pub(super) Box<FailureBody>);

#[derive(Debug)]
pub(super) struct FailureBody {
    pub(super) status: StatusCode,
    pub(super) code: i32,
    pub(super) message: String,
    pub(super) data: Option<Value>,
    /// An id read before the request was found invalid, echoed when it is usable.
    pub(super) id: Option<String>,
}

impl Failure {
    pub(super) fn new(status: StatusCode, code: i32, message: &str) -> Failure {
        Failure(Box::new(FailureBody {
            status,
            code,
            message: message.to_owned(),
            data: None,
            id: None,
        }))
    }

    pub(super) fn with_data(mut self, data: Value) -> Failure {
        self.0.data = Some(data);
        self
    }

    pub(super) fn with_id(mut self, id: Option<&RawValue>) -> Failure {
        self.0.id = id.map(|id| id.get().to_owned());
        self
    }

    pub(super) fn missing_meta(detail: &str) -> Failure {
        Failure::new(
            StatusCode::BAD_REQUEST,
            code::INVALID_PARAMS,
            &format!("invalid params: {detail}"),
        )
    }

    pub(super) fn invalid_params(detail: &str) -> Failure {
        Failure::new(
            StatusCode::OK,
            code::INVALID_PARAMS,
            &format!("invalid params: {detail}"),
        )
    }

    pub(super) fn header_mismatch(detail: String) -> Failure {
        Failure::new(
            StatusCode::BAD_REQUEST,
            code::HEADER_MISMATCH,
            &format!("header mismatch: {detail}"),
        )
    }

    pub(super) fn unsupported_version(requested: &str) -> Failure {
        Failure::new(
            StatusCode::BAD_REQUEST,
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "unsupported protocol version",
        )
        .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": requested }))
    }

    /// A confirming tool called by a client that did not declare `elicitation` in this
    /// request: ferry cannot ask the user, so the call is not made.
    pub(super) fn missing_capability() -> Failure {
        Failure::new(
            StatusCode::BAD_REQUEST,
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "missing required client capability: this tool asks the user to confirm each call, which needs the elicitation capability in _meta clientCapabilities",
        )
        .with_data(json!({ "requiredCapabilities": { "elicitation": {} } }))
    }

    /// A request of the extension `extension` from a client whose request does not declare
    /// it: the extension's methods are served only to those that do.
    pub(super) fn missing_extension(method: &str, extension: &str) -> Failure {
        Failure::new(
            StatusCode::BAD_REQUEST,
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            &format!(
                "missing required client capability: {method} belongs to the {extension} extension, which this request's _meta clientCapabilities.extensions does not declare"
            ),
        )
        .with_data(json!({ "requiredCapabilities": { "extensions": { extension: {} } } }))
    }

    pub(super) fn internal() -> Failure {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            code::INTERNAL_ERROR,
            "internal error",
        )
    }

    /// Legacy clients get in-band errors with 200, except ferry's own faults.
    pub(super) fn legacy(mut self) -> Failure {
        if self.0.code != code::INTERNAL_ERROR {
            self.0.status = StatusCode::OK;
        }
        self
    }

    pub(super) fn into_outgoing(self, id: Option<&RawValue>) -> Outgoing {
        let failure = *self.0;
        let mut error = Map::new();
        error.insert("code".into(), json!(failure.code));
        error.insert("message".into(), Value::String(failure.message));
        if let Some(data) = failure.data {
            error.insert("data".into(), data);
        }
        let id = id.map(|id| id.get().to_owned()).or(failure.id);
        let mut body = String::with_capacity(128);
        body.push_str(r#"{"jsonrpc":"2.0","#);
        if let Some(id) = id {
            body.push_str(r#""id":"#);
            body.push_str(&id);
            body.push(',');
        }
        body.push_str(r#""error":"#);
        body.push_str(&Value::Object(error).to_string());
        body.push('}');
        Outgoing {
            status: failure.status,
            body: Bytes::from(body),
            kind: Kind::Json,
        }
    }
}
