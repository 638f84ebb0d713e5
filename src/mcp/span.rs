//! A request's place in its caller's trace: the W3C `traceparent` and `tracestate` from the
//! HTTP headers, or from `params._meta` where no header carries them (stdio, or an HTTP
//! client that puts them in the message, as OpenTelemetry's MCP conventions suggest).

use http::{HeaderMap, HeaderValue};

use super::envelope::{MetaString, Params};
use crate::trace::{self, TraceParent};

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
