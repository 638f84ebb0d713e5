//! A request's place in its caller's trace: the W3C `traceparent` and `tracestate` from the
//! HTTP headers, or from `params._meta` where no header carries them (stdio, or an HTTP
//! client that puts them in the message, as OpenTelemetry's MCP conventions suggest), and
//! the request's own span, named and attributed as those conventions say.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use http::{HeaderMap, HeaderValue};
use serde_json::value::RawValue;

use super::envelope::{MetaString, Params};
use crate::trace::otlp::{self, Value};
use crate::trace::{self, Exporter, TraceParent, export};

/// The request's trace context. A `traceparent` header, when present, is the only source:
/// an invalid one (or one given twice) starts a new trace rather than falling back to
/// `_meta`. `tracestate` is kept only beside a valid `traceparent`.
pub(super) fn context(headers: Option<&HeaderMap>, params: Option<&Params<'_>>) -> trace::Context {
    if let Some(headers) = headers {
        let mut lines = headers.get_all(trace::TRACEPARENT).iter();
        if let Some(first) = lines.next() {
            let parent = match lines.next() {
                None => TraceParent::parse(first.as_bytes()),
                Some(_) => None,
            };
            let state = parent.and_then(|_| {
                let mut lines = headers.get_all(trace::TRACESTATE).iter();
                // A list split over several lines would have to be joined; it is dropped
                // instead, as the specification allows for a list that cannot be kept whole.
                match (lines.next(), lines.next()) {
                    (Some(value), None) if trace::valid_tracestate(value.as_bytes()) => {
                        Some(value.clone())
                    }
                    _ => None,
                }
            });
            return trace::Context::new(parent, state);
        }
    }
    let parent = params
        .and_then(|params| text(params.traceparent.as_ref()))
        .and_then(|text| TraceParent::parse(text.as_bytes()));
    let state = parent
        .and_then(|_| params.and_then(|params| text(params.tracestate.as_ref())))
        .filter(|text| trace::valid_tracestate(text.as_bytes()))
        .and_then(|text| HeaderValue::from_str(text).ok());
    trace::Context::new(parent, state)
}

fn text<'p>(value: Option<&'p MetaString<'_>>) -> Option<&'p str> {
    match value {
        Some(MetaString::Text(text)) => Some(text.as_ref()),
        _ => None,
    }
}

/// One MCP request's span (kind SERVER): its context, and what the call learned that the
/// answer does not say (the tool, whether its result is an error).
pub(super) struct Traced<'s> {
    pub(super) context: trace::Context,
    /// Where the span goes; `None` when spans are not exported or the caller did not sample.
    exporter: Option<&'s Exporter>,
    start_unix_nano: u64,
    /// HTTP or stdio.
    transport: &'static str,
    /// The served tool called: its name is the catalog's, never the caller's text.
    /// (A `Sync` cell: the request's future may move between threads.)
    pub(super) tool: OnceLock<&'s str>,
    pub(super) tool_error: AtomicBool,
}

impl<'s> Traced<'s> {
    pub(super) fn new(
        context: trace::Context,
        exporter: Option<&'s Exporter>,
        http: bool,
    ) -> Traced<'s> {
        let exporter = exporter.filter(|_| context.sampled());
        Traced {
            start_unix_nano: exporter.map_or(0, |_| export::now_unix_nano()),
            context,
            exporter,
            transport: if http { "tcp" } else { "pipe" },
            tool: OnceLock::new(),
            tool_error: AtomicBool::new(false),
        }
    }

    /// Exports the span of the request `method` with `id`, answered with `code` (a JSON-RPC
    /// error's) or not. Never the arguments, the body or a token.
    pub(super) fn finish(&self, method: &str, id: &RawValue, code: Option<i32>) {
        let Some(exporter) = self.exporter else {
            return;
        };
        // Only methods ferry knows name a span: any other text would be the caller's.
        let method = KNOWN_METHODS
            .iter()
            .find(|known| **known == method)
            .copied()
            .unwrap_or("_OTHER");
        let tool = self.tool.get().copied();
        let name = match tool {
            Some(tool) => [method, " ", tool],
            None => [method, "", ""],
        };
        let mut attributes: [(&str, Value<'_>); 7] = [("", Value::Int(0)); 7];
        let mut count = 0;
        let mut push = |key, value| {
            attributes[count] = (key, value);
            count += 1;
        };
        push("mcp.method.name", Value::Str(method));
        if let Some(id) = request_id(id) {
            push("jsonrpc.request.id", Value::Str(id));
        }
        push("network.transport", Value::Str(self.transport));
        if let Some(tool) = tool {
            push("gen_ai.tool.name", Value::Str(tool));
            push("gen_ai.operation.name", Value::Str("execute_tool"));
        }
        let error = match code {
            Some(code) => Some(code_text(code)),
            None if self.tool_error.load(Ordering::Relaxed) => Some("tool_error"),
            None => None,
        };
        if let Some(error) = error {
            push("error.type", Value::Str(error));
        }
        if let Some(code) = code {
            push("rpc.response.status_code", Value::Str(code_text(code)));
        }
        let context = &self.context;
        let mut flags = u32::from(context.flags & trace::SAMPLED) | otlp::CONTEXT_HAS_IS_REMOTE;
        if context.parent_id.is_some() {
            flags |= otlp::CONTEXT_IS_REMOTE;
        }
        exporter.export(&otlp::Span {
            trace_id: context.trace_id,
            span_id: context.span_id,
            parent_id: context.parent_id,
            trace_state: context.state.as_ref().and_then(|state| state.to_str().ok()),
            name: &name,
            kind: otlp::Kind::Server,
            start_unix_nano: self.start_unix_nano,
            end_unix_nano: export::now_unix_nano(),
            attributes: &attributes[..count],
            error: error.is_some(),
            flags,
        });
    }
}

const KNOWN_METHODS: [&str; 6] = [
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "server/discover",
    "subscriptions/listen",
];

/// The id as text: a string's content when it needs no unescaping, an integer as written;
/// `None` for a long or escaped one, which would be the caller's bulk in every span.
fn request_id(id: &RawValue) -> Option<&str> {
    const MAX_ID: usize = 128;
    let text = id.get();
    let text = match text.strip_prefix('"') {
        Some(quoted) => quoted
            .strip_suffix('"')
            .filter(|inner| !inner.contains('\\'))?,
        None => text,
    };
    (text.len() <= MAX_ID).then_some(text)
}

/// The error codes ferry answers with, as text (OpenTelemetry's `error.type` is a string).
fn code_text(code: i32) -> &'static str {
    use super::code;
    match code {
        code::PARSE_ERROR => "-32700",
        code::INVALID_REQUEST => "-32600",
        code::METHOD_NOT_FOUND => "-32601",
        code::INVALID_PARAMS => "-32602",
        code::INTERNAL_ERROR => "-32603",
        code::HEADER_MISMATCH => "-32020",
        code::UNSUPPORTED_PROTOCOL_VERSION => "-32022",
        _ => "_OTHER",
    }
}
