//! Reading a JSON-RPC message: the envelope (`jsonrpc`, `id`, `method`, `params`) borrowed
//! from the body, the `params` keys the dispatcher needs, and the checks on them.
//!
//! The body is read in one pass: `params` and its `_meta` are read where they stand, each
//! value the dispatcher needs borrowed as written, rather than cut out whole and read again.
//!
//! A transport reads through it too: a request's id (stdio tracks requests in flight by it),
//! and the error for a message it could not read or did not get answered in time.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

use http::HeaderMap;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use http::StatusCode;

use super::failure::Failure;
use super::{Outgoing, code, headers};

/// The envelope of a JSON-RPC message, borrowed from the body.
pub(super) struct Request<'a> {
    pub(super) id: Option<&'a RawValue>,
    pub(super) method: Cow<'a, str>,
    /// `None` when absent or `null`.
    pub(super) params: Option<ParamsField<'a>>,
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
    pub(super) params: Option<ParamsField<'a>>,
}

pub(super) fn present<'de, D>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue as Deserialize>::deserialize(deserializer).map(Some)
}

pub(super) fn parse_request(body: &[u8]) -> Result<Request<'_>, Failure> {
    let envelope: Envelope<'_> = match crate::json::from_bytes(body) {
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

/// MCP's `RequestId`: a string or an integer (never `null`, never a fraction). A string
/// must be text: one holding a lone surrogate (`"\ud800"`) is JSON by the grammar, but no
/// client could read it back from the answer, nor an audit reader from the record.
pub(crate) fn valid_id(id: &RawValue) -> bool {
    let text = id.get();
    match text.as_bytes().first() {
        Some(b'"') => !text.contains('\\') || serde_json::from_str::<Cow<'_, str>>(text).is_ok(),
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
    /// `tasks/get`'s and `tasks/cancel`'s `taskId`.
    pub(super) task_id: Option<MetaString<'a>>,
    /// `_meta.progressToken` when it is a string or an integer, as written.
    pub(super) progress_token: Option<&'a RawValue>,
}

pub(super) enum MetaString<'a> {
    /// Borrowed from the body unless the JSON string has escapes.
    Text(Cow<'a, str>),
    NotText,
}

/// `params` as read: an object's members the dispatcher reads, each as written; `None` for
/// a value that is not an object.
#[derive(Default)]
pub(super) struct ParamsField<'a>(Option<RawParams<'a>>);

#[derive(Default)]
pub(super) struct RawParams<'a> {
    /// `None` when absent; `Some(None)` when not an object, or one of its members is
    /// repeated.
    meta: Option<Option<RawMeta<'a>>>,
    name: Option<&'a RawValue>,
    uri: Option<&'a RawValue>,
    arguments: Option<&'a RawValue>,
    cursor: Option<&'a RawValue>,
    notifications: Option<&'a RawValue>,
    input_responses: Option<&'a RawValue>,
    request_state: Option<&'a RawValue>,
    /// `notifications/cancelled`'s.
    request_id: Option<&'a RawValue>,
    task_id: Option<&'a RawValue>,
    /// One of the members above but `requestId` is given twice: the params are invalid.
    repeated: bool,
    /// `requestId` is given twice.
    request_id_repeated: bool,
}

/// Puts `value` in `slot`, or says that it was already filled.
fn fill<T>(slot: &mut Option<T>, value: T, repeated: &mut bool) {
    if slot.is_some() {
        *repeated = true;
    } else {
        *slot = Some(value);
    }
}

/// Reads any value as not an object, consuming it whole.
macro_rules! not_object {
    ($($method:ident: $type:ty),* $(,)?) => {
        $(fn $method<E: de::Error>(self, _: $type) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        })*
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Self::Value::default())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Self::Value::default())
        }
    };
}

impl<'de: 'a, 'a> Deserialize<'de> for ParamsField<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = ParamsField<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            not_object!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64,
                visit_str: &str, visit_borrowed_str: &'de str, visit_string: String);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut params = RawParams::default();
                let repeated = &mut params.repeated;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "_meta" => {
                            fill(&mut params.meta, map.next_value::<MetaField>()?.0, repeated)
                        }
                        "name" => fill(&mut params.name, map.next_value()?, repeated),
                        "uri" => fill(&mut params.uri, map.next_value()?, repeated),
                        "arguments" => fill(&mut params.arguments, map.next_value()?, repeated),
                        "cursor" => fill(&mut params.cursor, map.next_value()?, repeated),
                        "notifications" => {
                            fill(&mut params.notifications, map.next_value()?, repeated);
                        }
                        "inputResponses" => {
                            fill(&mut params.input_responses, map.next_value()?, repeated);
                        }
                        "requestState" => {
                            fill(&mut params.request_state, map.next_value()?, repeated);
                        }
                        "taskId" => fill(&mut params.task_id, map.next_value()?, repeated),
                        "requestId" => fill(
                            &mut params.request_id,
                            map.next_value()?,
                            &mut params.request_id_repeated,
                        ),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ParamsField(Some(params)))
            }
        }
        deserializer.deserialize_any(ParamsVisitor)
    }
}

/// `_meta` as read: its members, or `None` when it is not an object or repeats one of them.
#[derive(Default)]
struct MetaField<'a>(Option<RawMeta<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MetaField<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetaVisitor;
        impl<'de> Visitor<'de> for MetaVisitor {
            type Value = MetaField<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            not_object!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64,
                visit_str: &str, visit_borrowed_str: &'de str, visit_string: String);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut meta = RawMeta::default();
                let mut repeated = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let slot = match key.as_ref() {
                        "io.modelcontextprotocol/protocolVersion" => &mut meta.protocol_version,
                        "io.modelcontextprotocol/clientCapabilities" => {
                            &mut meta.client_capabilities
                        }
                        "io.modelcontextprotocol/clientInfo" => &mut meta.client_info,
                        "traceparent" => &mut meta.traceparent,
                        "tracestate" => &mut meta.tracestate,
                        "progressToken" => &mut meta.progress_token,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    fill(slot, map.next_value()?, &mut repeated);
                }
                Ok(MetaField((!repeated).then_some(meta)))
            }
        }
        deserializer.deserialize_any(MetaVisitor)
    }
}

/// The `notifications` filter of `subscriptions/listen`: only what ferry can honour.
#[derive(Deserialize)]
struct RawFilter {
    #[serde(rename = "toolsListChanged", default)]
    tools_list_changed: Option<bool>,
}

#[derive(Default)]
pub(super) struct RawMeta<'a> {
    protocol_version: Option<&'a RawValue>,
    client_capabilities: Option<&'a RawValue>,
    client_info: Option<&'a RawValue>,
    traceparent: Option<&'a RawValue>,
    tracestate: Option<&'a RawValue>,
    progress_token: Option<&'a RawValue>,
}

impl<'a> Params<'a> {
    /// `Err` when `params` is present but not an object, or repeats a member. Absent params
    /// read as empty.
    pub(super) fn parse(field: Option<ParamsField<'a>>) -> Result<Params<'a>, ()> {
        let raw_params = match field {
            None => RawParams::default(),
            Some(ParamsField(Some(params))) if !params.repeated => params,
            Some(_) => return Err(()),
        };
        let meta = raw_params.meta.flatten();
        let progress_token = meta
            .as_ref()
            .and_then(|meta| meta.progress_token)
            .filter(|token| {
                let text = token.get();
                text.starts_with('"') || serde_json::from_str::<i64>(text).is_ok()
            });
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
            task_id: raw_params.task_id.map(string_of),
            progress_token,
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

/// The `requestId` of `notifications/cancelled`, as written; `None` when it is absent or
/// given twice.
pub(super) fn cancelled_request_id(params: Option<&ParamsField<'_>>) -> Option<String> {
    match params? {
        ParamsField(Some(params)) if !params.request_id_repeated => {
            Some(params.request_id?.get().to_owned())
        }
        _ => None,
    }
}

/// A header's value as text; `Err` says what is wrong when it holds bytes that are not visible
/// ASCII or occurs more than once (an intermediary may read either line).
pub(super) fn header_str(
    headers: &HeaderMap,
    name: impl http::header::AsHeaderName,
) -> Result<Option<&str>, &'static str> {
    match headers::single(headers, name)? {
        None => Ok(None),
        Some(value) => value.to_str().map(Some).map_err(|_| "is not visible ASCII"),
    }
}

/// The raw JSON `id` of a request message, for a transport that tracks requests in flight
/// (stdio cancels them by id). `None` for notifications and unreadable messages.
pub fn request_id(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct OnlyId<'a> {
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
    }
    let only: OnlyId<'_> = serde_json::from_slice(body).ok()?;
    only.id.map(|id| id.get().to_owned())
}

/// The JSON-RPC error (with HTTP 504) for a request not answered within the transport's
/// time limit; `body` is the request as received, read for its id.
pub fn timed_out(body: &[u8]) -> Outgoing {
    let mut failure = Failure::new(
        StatusCode::GATEWAY_TIMEOUT,
        code::INTERNAL_ERROR,
        "request timed out",
    );
    failure.0.id = request_id(body);
    failure.into_outgoing(None)
}

/// A JSON-RPC error for a message that could not be read, with no `id` (the schema's
/// `RequestId` cannot be `null`, so the key is left out rather than set to `null`).
pub fn error_without_id(code: i32, message: &str) -> Bytes {
    Bytes::from(
        serde_json::json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}})
            .to_string(),
    )
}
