//! The few OTLP messages ferry sends, in protobuf's wire format, written by hand:
//! `ExportTraceServiceRequest` → `ResourceSpans` → `ScopeSpans` → `Span`, with `Resource`,
//! `InstrumentationScope`, `KeyValue`, `AnyValue` and `Status` (field numbers from
//! opentelemetry-proto's `trace/v1/trace.proto`, `common/v1/common.proto` and
//! `resource/v1/resource.proto`). The official definitions decode what this writes in
//! `tests/it/traces.rs`.
//!
//! A span is written whole when it ends, into one buffer of its exact size; a request is the
//! spans' bytes framed as repeated fields, so nothing is decoded or copied into a tree.

use super::{SpanId, TraceId};

/// `Span.SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Server = 2,
    Client = 3,
}

/// An attribute's value.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Str(&'a str),
    Int(i64),
}

/// A finished span, borrowed from whoever ran it.
#[derive(Debug)]
pub struct Span<'a> {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub parent_id: Option<SpanId>,
    pub trace_state: Option<&'a str>,
    /// The name, in pieces written one after another (`["tools/call", " ", "getPet"]`).
    pub name: &'a [&'a str],
    pub kind: Kind,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub attributes: &'a [(&'a str, Value<'a>)],
    /// `Status.code` is ERROR; otherwise left unset.
    pub error: bool,
    /// `Span.flags`: the W3C trace flags, and whether the parent is remote.
    pub flags: u32,
}

/// `SpanFlags`: bit 8 says bit 9 is known, bit 9 that the parent is remote.
pub const CONTEXT_HAS_IS_REMOTE: u32 = 0x100;
pub const CONTEXT_IS_REMOTE: u32 = 0x200;

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// The `Span` message's bytes (without its own tag and length).
pub fn encode_span(span: &Span<'_>) -> Vec<u8> {
    let name_len: usize = span.name.iter().map(|piece| piece.len()).sum();
    let mut len = bytes_len(1, 16) + bytes_len(2, 8) + bytes_len(5, name_len);
    if let Some(state) = span.trace_state {
        len += bytes_len(3, state.len());
    }
    if span.parent_id.is_some() {
        len += bytes_len(4, 8);
    }
    // Kind, start and end, flags (tag 16 takes two bytes), and the status when there is one.
    len += 2 + 2 * (1 + 8) + 2 + 4;
    if span.error {
        len += 5;
    }
    for (key, value) in span.attributes {
        len += bytes_len(9, key_value_len(key, value));
    }
    let mut out = Vec::with_capacity(len);
    write_bytes(&mut out, 1, &span.trace_id.0);
    write_bytes(&mut out, 2, &span.span_id.0);
    if let Some(state) = span.trace_state {
        write_bytes(&mut out, 3, state.as_bytes());
    }
    if let Some(parent) = span.parent_id {
        write_bytes(&mut out, 4, &parent.0);
    }
    tag(&mut out, 5, LEN);
    varint(&mut out, name_len as u64);
    for piece in span.name {
        out.extend_from_slice(piece.as_bytes());
    }
    tag(&mut out, 6, VARINT);
    varint(&mut out, span.kind as u64);
    tag(&mut out, 7, FIXED64);
    out.extend_from_slice(&span.start_unix_nano.to_le_bytes());
    tag(&mut out, 8, FIXED64);
    out.extend_from_slice(&span.end_unix_nano.to_le_bytes());
    for (key, value) in span.attributes {
        write_key_value(&mut out, 9, key, value);
    }
    if span.error {
        // Status { code = STATUS_CODE_ERROR (2) }
        tag(&mut out, 15, LEN);
        out.extend_from_slice(&[2, (3 << 3) | VARINT, 2]);
    }
    tag(&mut out, 16, FIXED32);
    out.extend_from_slice(&span.flags.to_le_bytes());
    out
}

/// What every request of one process says about where its spans come from: the `Resource`
/// and the `InstrumentationScope`, written once.
#[derive(Debug, Clone)]
pub struct Origin {
    resource: Vec<u8>,
    scope: Vec<u8>,
}

impl Origin {
    pub fn new(resource: &[(&str, Value<'_>)], scope_name: &str, scope_version: &str) -> Origin {
        let mut encoded = Vec::new();
        for (key, value) in resource {
            write_key_value(&mut encoded, 1, key, value);
        }
        let mut scope = Vec::new();
        write_bytes(&mut scope, 1, scope_name.as_bytes());
        write_bytes(&mut scope, 2, scope_version.as_bytes());
        Origin {
            resource: encoded,
            scope,
        }
    }
}

/// An `ExportTraceServiceRequest` holding `spans` (each from [`encode_span`]).
pub fn encode_request(origin: &Origin, spans: &[Vec<u8>]) -> Vec<u8> {
    let scope_spans_len = bytes_len(1, origin.scope.len())
        + spans
            .iter()
            .map(|span| bytes_len(2, span.len()))
            .sum::<usize>();
    let resource_spans_len = bytes_len(1, origin.resource.len()) + bytes_len(2, scope_spans_len);
    let mut out = Vec::with_capacity(bytes_len(1, resource_spans_len));
    tag(&mut out, 1, LEN);
    varint(&mut out, resource_spans_len as u64);
    write_bytes(&mut out, 1, &origin.resource);
    tag(&mut out, 2, LEN);
    varint(&mut out, scope_spans_len as u64);
    write_bytes(&mut out, 1, &origin.scope);
    for span in spans {
        write_bytes(&mut out, 2, span);
    }
    out
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// A length-delimited field's size: its tag (fields up to 15 take one byte), length and
/// content.
fn bytes_len(field: u32, len: usize) -> usize {
    varint_len(u64::from(field << 3)) + varint_len(len as u64) + len
}

fn write_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(out, field, LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn any_value_len(value: &Value<'_>) -> usize {
    match value {
        Value::Str(text) => bytes_len(1, text.len()),
        // int64 is written as the two's complement varint of its 64 bits.
        Value::Int(number) => 1 + varint_len(*number as u64),
    }
}

fn key_value_len(key: &str, value: &Value<'_>) -> usize {
    bytes_len(1, key.len()) + bytes_len(2, any_value_len(value))
}

/// A `KeyValue` as field `field` of its parent.
fn write_key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value<'_>) {
    tag(out, field, LEN);
    varint(out, key_value_len(key, value) as u64);
    write_bytes(out, 1, key.as_bytes());
    tag(out, 2, LEN);
    varint(out, any_value_len(value) as u64);
    match value {
        Value::Str(text) => write_bytes(out, 1, text.as_bytes()),
        Value::Int(number) => {
            tag(out, 3, VARINT);
            varint(out, *number as u64);
        }
    }
}
