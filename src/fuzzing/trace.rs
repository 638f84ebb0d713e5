//! A caller's W3C trace context: `traceparent` and `tracestate` as a client sends them, and
//! the request's place in the trace that ferry continues and passes on upstream.

use http::HeaderValue;

use crate::trace::{self, Context, MAX_TRACESTATE, SAMPLED, TraceParent};

/// Members a `tracestate` may have, as the specification bounds them.
const MAX_MEMBERS: usize = 32;

/// A `traceparent` (the first 55 bytes) and a `tracestate` (the rest), each also read whole.
/// A `traceparent` read is written back as it was sent and reads back the same; a
/// `tracestate` accepted is at most 512 bytes and 32 members and holds no CR, LF or NUL; the
/// request's context continues the caller's trace, and each child's `traceparent` reads back
/// with the trace's id, the child's span and the sampled bit only.
pub fn tracecontext(data: &[u8]) {
    let (parent, state) = data.split_at(data.len().min(55));
    for text in [data, parent] {
        if let Some(parsed) = TraceParent::parse(text) {
            let written = write(&parsed);
            assert_eq!(
                written, text,
                "a traceparent is written back as it was sent"
            );
            assert_eq!(TraceParent::parse(&written), Some(parsed));
        }
    }
    for text in [data, state] {
        if trace::valid_tracestate(text) {
            check_tracestate(text);
        }
    }
    // As the HTTP transport reads them: the state is kept only beside a valid parent.
    let parsed = TraceParent::parse(parent);
    let kept = parsed
        .filter(|_| trace::valid_tracestate(state))
        .and_then(|_| HeaderValue::from_bytes(state).ok());
    let context = Context::new(parsed, kept);
    if let Some(parsed) = parsed {
        assert_eq!(
            context.trace_id, parsed.trace_id,
            "the caller's trace goes on"
        );
        assert_eq!(context.parent_id, Some(parsed.parent_id));
        assert_eq!(context.flags, parsed.flags);
    }
    assert_ne!(context.span_id.0, [0; 8], "a span's id is never all zero");
    for _ in 0..2 {
        let (span, header) = context.child();
        let child = TraceParent::parse(header.as_bytes())
            .unwrap_or_else(|| panic!("a child's traceparent does not read: {header:?}"));
        assert_eq!(child.trace_id, context.trace_id, "a child keeps the trace");
        assert_eq!(child.parent_id, span, "a child names its own span");
        assert_eq!(child.flags, context.flags & SAMPLED);
    }
}

/// `parent` written as a version 00 `traceparent`.
fn write(parent: &TraceParent) -> Vec<u8> {
    let mut text = b"00-00000000000000000000000000000000-0000000000000000-00".to_vec();
    trace::write_hex(&parent.trace_id.0, &mut text[3..35]);
    trace::write_hex(&parent.parent_id.0, &mut text[36..52]);
    trace::write_hex(&[parent.flags], &mut text[53..55]);
    text
}

/// What an accepted `tracestate` is: within the specification's bounds, and nothing that
/// ends a header line or a C string.
fn check_tracestate(text: &[u8]) {
    let shown = String::from_utf8_lossy(text);
    assert!(
        text.len() <= MAX_TRACESTATE,
        "{} bytes accepted",
        text.len()
    );
    assert!(
        !text.iter().any(|byte| matches!(byte, b'\r' | b'\n' | 0)),
        "a tracestate with CR, LF or NUL is accepted: {shown:?}"
    );
    let members = text
        .split(|byte| *byte == b',')
        .filter(|member| member.iter().any(|byte| !matches!(byte, b' ' | b'\t')))
        .count();
    assert!(
        members <= MAX_MEMBERS,
        "{members} members accepted: {shown:?}"
    );
}
