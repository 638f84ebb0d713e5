//! Reading a JSON-RPC message: the envelope (`jsonrpc`, `id`, `method`, `params`) borrowed
//! from the body, the `params` keys the dispatcher needs, and the checks on them.

use std::borrow::Cow;

use http::HeaderMap;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::*;

/// The envelope of a JSON-RPC message, borrowed from the body.
#[derive(Debug)]
pub(super) struct Request<'a> {
    pub(super) id: Option<&'a RawValue>,
    pub(super) method: Cow<'a, str>,
    pub(super) params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub(super) jsonrpc: Option<Cow<'a, str>>,
    // `deserialize_with` keeps an explicit `"id": null` apart from an absent id.
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) params: Option<&'a RawValue>,
}

pub(super) fn present<'de, D>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue as Deserialize>::deserialize(deserializer).map(Some)
}

pub(super) fn parse_request(body: &[u8]) -> Result<Request<'_>, Failure> {
    let envelope: Envelope<'_> = match serde_json::from_slice(body) {
        Ok(envelope) => envelope,
        Err(error) if error.is_syntax() || error.is_eof() || error.is_io() => {
            return Err(Failure::new(
                StatusCode::BAD_REQUEST,
                code::PARSE_ERROR,
                "parse error: body is not JSON",
            ));
        }
        Err(_) => {
            let message = if body.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
                "invalid request: batches are not supported"
            } else {
                "invalid request: not a JSON-RPC request object"
            };
            return Err(Failure::new(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                message,
            ));
        }
    };
    let invalid =
        |message: &str| Failure::new(StatusCode::BAD_REQUEST, code::INVALID_REQUEST, message);
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid("invalid request: jsonrpc must be \"2.0\"")
            .with_id(envelope.id.filter(|id| valid_id(id))));
    }
    if let Some(id) = envelope.id
        && !valid_id(id)
    {
        return Err(invalid(
            "invalid request: id must be a string or an integer",
        ));
    }
    let Some(method) = envelope.method else {
        return Err(invalid("invalid request: method is missing").with_id(envelope.id));
    };
    Ok(Request {
        id: envelope.id,
        method,
        params: envelope.params,
    })
}

/// MCP's `RequestId`: a string or an integer (never `null`, never a fraction).
pub(super) fn valid_id(id: &RawValue) -> bool {
    let text = id.get();
    match text.as_bytes().first() {
        Some(b'"') => true,
        Some(b'-' | b'0'..=b'9') => text
            .bytes()
            .all(|byte| byte == b'-' || byte.is_ascii_digit()),
        _ => false,
    }
}

/// The `params` fields any method reads, borrowed.
pub(super) struct Params<'a> {
    pub(super) meta_version: Option<MetaString<'a>>,
    /// `Some(true)` when `clientCapabilities` is an object.
    pub(super) meta_capabilities: Option<bool>,
    pub(super) name: Option<MetaString<'a>>,
    pub(super) uri: Option<MetaString<'a>>,
    pub(super) arguments: Option<&'a RawValue>,
    pub(super) cursor: bool,
    /// `_meta`'s `clientInfo`, as written.
    pub(super) client_info: Option<&'a RawValue>,
    /// `subscriptions/listen` asks for `notifications.toolsListChanged`.
    pub(super) tools_list_changed: bool,
    /// `_meta`'s `clientCapabilities`, `inputResponses` and `requestState` as received, for a
    /// confirming tool's rounds.
    pub(super) round: super::confirm::Round<'a>,
    /// `_meta.traceparent` and `_meta.tracestate`: W3C Trace Context where no HTTP header
    /// carries it (stdio).
    pub(super) traceparent: Option<MetaString<'a>>,
    pub(super) tracestate: Option<MetaString<'a>>,
}

pub(super) enum MetaString<'a> {
    /// Borrowed from the body unless the JSON string has escapes.
    Text(Cow<'a, str>),
    NotText,
}

#[derive(Deserialize, Default)]
pub(super) struct RawParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub(super) meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) cursor: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) notifications: Option<&'a RawValue>,
    #[serde(rename = "inputResponses", borrow, default)]
    pub(super) input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default)]
    pub(super) request_state: Option<&'a RawValue>,
}

/// The `notifications` filter of `subscriptions/listen`: only what ferry can honour.
#[derive(Deserialize)]
struct RawFilter {
    #[serde(rename = "toolsListChanged", default)]
    tools_list_changed: Option<bool>,
}

#[derive(Deserialize)]
pub(super) struct RawMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub(super) protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub(super) client_capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    pub(super) client_info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) traceparent: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) tracestate: Option<&'a RawValue>,
}

impl<'a> Params<'a> {
    /// `Err` when `params` is present but not an object. Absent params read as empty.
    pub(super) fn parse(raw: Option<&'a RawValue>) -> Result<Params<'a>, ()> {
        let raw_params: RawParams<'a> = match raw.map(RawValue::get) {
            None | Some("null") => RawParams::default(),
            Some(raw) if raw.starts_with('{') => serde_json::from_str(raw).map_err(|_| ())?,
            Some(_) => return Err(()),
        };
        let meta: Option<RawMeta<'a>> = raw_params
            .meta
            .filter(|meta| meta.get().starts_with('{'))
            .and_then(|meta| serde_json::from_str(meta.get()).ok());
        let (meta_version, meta_capabilities, client_info, capabilities, traceparent, tracestate) =
            match meta {
                Some(meta) => (
                    meta.protocol_version.map(string_of),
                    meta.client_capabilities
                        .map(|capabilities| capabilities.get().starts_with('{')),
                    meta.client_info,
                    meta.client_capabilities,
                    meta.traceparent.map(string_of),
                    meta.tracestate.map(string_of),
                ),
                None => (None, None, None, None, None, None),
            };
        Ok(Params {
            meta_version,
            meta_capabilities,
            name: raw_params.name.map(string_of),
            uri: raw_params.uri.map(string_of),
            arguments: raw_params.arguments,
            cursor: raw_params.cursor.is_some(),
            client_info,
            tools_list_changed: raw_params
                .notifications
                .and_then(|filter| serde_json::from_str::<RawFilter>(filter.get()).ok())
                .and_then(|filter| filter.tools_list_changed)
                .unwrap_or(false),
            round: super::confirm::Round {
                capabilities,
                input_responses: raw_params.input_responses,
                request_state: raw_params.request_state,
            },
            traceparent,
            tracestate,
        })
    }
}

pub(super) fn string_of(raw: &RawValue) -> MetaString<'_> {
    if let Ok(text) = serde_json::from_str::<&str>(raw.get()) {
        return MetaString::Text(Cow::Borrowed(text));
    }
    match serde_json::from_str::<String>(raw.get()) {
        Ok(text) => MetaString::Text(Cow::Owned(text)),
        Err(_) => MetaString::NotText,
    }
}

/// ferry serves every tool in one page and never issues a cursor, so any cursor is invalid.
pub(super) fn check_no_cursor(params: &Params<'_>) -> Result<(), Failure> {
    if params.cursor {
        return Err(Failure::invalid_params(
            "invalid cursor: tools/list has a single page",
        ));
    }
    Ok(())
}

pub(super) fn cancelled_request_id(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Cancelled<'a> {
        #[serde(rename = "requestId", borrow)]
        request_id: &'a RawValue,
    }
    let cancelled: Cancelled<'_> = serde_json::from_str(params?.get()).ok()?;
    Some(cancelled.request_id.get().to_owned())
}

/// A header's value as text; `Err` says what is wrong when it holds bytes that are not visible
/// ASCII or occurs more than once (an intermediary may read either line).
pub(super) fn header_str<'h>(
    headers: &'h HeaderMap,
    name: &str,
) -> Result<Option<&'h str>, &'static str> {
    match headers::single(headers, name)? {
        None => Ok(None),
        Some(value) => value.to_str().map(Some).map_err(|_| "is not visible ASCII"),
    }
}
