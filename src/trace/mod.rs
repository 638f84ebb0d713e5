//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): reading a caller's
//! `traceparent` and `tracestate`, a request's place in its trace ([`Context`]), and the
//! child `traceparent` each upstream attempt carries. [`export`] sends finished spans to an
//! OTLP/HTTP collector, written by [`otlp`].
//!
//! A leaf: it names nothing else of ferry, so `mcp` and `upstream` both use it.

use std::cell::RefCell;

use http::{HeaderName, HeaderValue};

pub mod export;
pub mod otlp;

pub use export::{Endpoint, EndpointError, ExportOptions, Exporter, Exporting};

/// The header a caller's trace arrives in, and ferry's upstream request carries on.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
/// The vendors' list that travels with it, passed on as received.
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");
/// Longest `tracestate` passed on: the specification asks every vendor to carry at least
/// 512 characters, and a longer one is dropped rather than cut (a cut list is not the list).
pub const MAX_TRACESTATE: usize = 512;
/// Members a `tracestate` may have (the specification's limit).
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// `traceparent` of version 00: `00-` 32 hex `-` 16 hex `-` 2 hex.
const TRACEPARENT_LEN: usize = 55;

/// A trace's id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceId(pub [u8; 16]);

/// A span's id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanId(pub [u8; 8]);

/// A valid `traceparent`, as a caller sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    /// The caller's span: the parent of ferry's.
    pub parent_id: SpanId,
    pub flags: u8,
}

impl TraceParent {
    /// Reads a version 00 `traceparent` strictly: lowercase hex, the ids not all zero, nothing
    /// before or after. Anything else is `None`, and the request starts a trace of its own.
    pub fn parse(text: &[u8]) -> Option<TraceParent> {
        if text.len() != TRACEPARENT_LEN
            || &text[..3] != b"00-"
            || text[35] != b'-'
            || text[52] != b'-'
        {
            return None;
        }
        let trace_id = TraceId(hex_bytes(&text[3..35])?);
        let parent_id = SpanId(hex_bytes(&text[36..52])?);
        let [flags] = hex_bytes::<1>(&text[53..55])?;
        if trace_id.0 == [0; 16] || parent_id.0 == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }
}

/// Whether `value` is a `tracestate` ferry passes on: at most [`MAX_TRACESTATE`] bytes, at
/// most 32 `key=value` members separated by commas with optional spaces and tabs (blank
/// members allowed), keys and values as the specification spells them.
pub fn valid_tracestate(value: &[u8]) -> bool {
    if value.len() > MAX_TRACESTATE {
        return false;
    }
    let mut members = 0;
    for member in value.split(|byte| *byte == b',') {
        let member = trim_ows(member);
        if member.is_empty() {
            continue;
        }
        members += 1;
        if members > MAX_TRACESTATE_MEMBERS {
            return false;
        }
        let Some(equals) = member.iter().position(|byte| *byte == b'=') else {
            return false;
        };
        let (key, value) = (&member[..equals], &member[equals + 1..]);
        if !valid_key(key) || !valid_value(value) {
            return false;
        }
    }
    true
}

/// A request's place in a trace: the caller's continued, or one ferry starts.
#[derive(Debug, Clone)]
pub struct Context {
    pub trace_id: TraceId,
    /// This request's own span (the MCP request, kind SERVER).
    pub span_id: SpanId,
    /// The caller's span, when the request carried a valid `traceparent`.
    pub parent_id: Option<SpanId>,
    /// The caller's trace flags (`01`: sampled), or sampled when ferry started the trace.
    pub flags: u8,
    /// The caller's `tracestate`, when valid, to pass on.
    pub state: Option<HeaderValue>,
}

impl Context {
    /// Continues `parent` (with its `state`, already checked) or, without one, starts a new
    /// sampled trace.
    pub fn new(parent: Option<TraceParent>, state: Option<HeaderValue>) -> Context {
        match parent {
            Some(parent) => Context {
                trace_id: parent.trace_id,
                span_id: SpanId(random_nonzero()),
                parent_id: Some(parent.parent_id),
                flags: parent.flags,
                state,
            },
            None => Context {
                trace_id: TraceId(random_nonzero()),
                span_id: SpanId(random_nonzero()),
                parent_id: None,
                flags: SAMPLED,
                state: None,
            },
        }
    }

    /// Whether the caller asked for this trace to be recorded (or ferry started it).
    pub fn sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// A new span under this request's, and the `traceparent` that names it: what one
    /// upstream attempt carries. The header value is the only allocation.
    pub fn child(&self) -> (SpanId, HeaderValue) {
        let span_id = SpanId(random_nonzero());
        let mut text = [0u8; TRACEPARENT_LEN];
        text[..3].copy_from_slice(b"00-");
        write_hex(&self.trace_id.0, &mut text[3..35]);
        text[35] = b'-';
        write_hex(&span_id.0, &mut text[36..52]);
        text[52] = b'-';
        // Only the sampled bit is carried on: the other bits are not defined in version 00.
        write_hex(&[self.flags & SAMPLED], &mut text[53..55]);
        let value = HeaderValue::from_bytes(&text).unwrap_or_else(|_| {
            // Lowercase hex and dashes are always a valid header value.
            HeaderValue::from_static("00-00000000000000000000000000000000-0000000000000000-00")
        });
        (span_id, value)
    }
}

/// The sampled bit of the trace flags.
pub const SAMPLED: u8 = 0x01;

/// Lowercase hex of `bytes` into `out` (twice as long).
pub fn write_hex(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (byte, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
}

fn hex_bytes<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    fn digit(byte: u8) -> Option<u8> {
        match byte {
            b'0'..=b'9' => Some(byte - b'0'),
            b'a'..=b'f' => Some(byte - b'a' + 10),
            _ => None,
        }
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(bytes)
}

/// `bytes` without the spaces and tabs around it: the specification's optional whitespace,
/// and nothing more (CR, LF and form feed are not, and a list holding them is refused).
fn trim_ows(bytes: &[u8]) -> &[u8] {
    let ows = |byte: &u8| matches!(byte, b' ' | b'\t');
    let start = bytes
        .iter()
        .position(|byte| !ows(byte))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|byte| !ows(byte))
        .map_or(start, |last| last + 1);
    &bytes[start..end]
}

/// `simple-key` or `tenant-id@system-id`.
fn valid_key(key: &[u8]) -> bool {
    let simple = |part: &[u8], max: usize, first_digit: bool| {
        !part.is_empty()
            && part.len() <= max
            && (part[0].is_ascii_lowercase() || (first_digit && part[0].is_ascii_digit()))
            && part.iter().all(|byte| {
                byte.is_ascii_lowercase()
                    || byte.is_ascii_digit()
                    || matches!(byte, b'_' | b'-' | b'*' | b'/')
            })
    };
    match key.iter().position(|byte| *byte == b'@') {
        None => simple(key, 256, false),
        Some(at) => simple(&key[..at], 241, true) && simple(&key[at + 1..], 14, false),
    }
}

/// Up to 256 printable ASCII characters but `,` and `=`, not ending in a space.
fn valid_value(value: &[u8]) -> bool {
    !value.is_empty()
        && value.len() <= 256
        && value.last() != Some(&b' ')
        && value
            .iter()
            .all(|byte| (0x20..=0x7e).contains(byte) && !matches!(byte, b',' | b'='))
}

thread_local! {
    /// Random bytes read ahead from the system, so an id costs no system call.
    static RANDOM: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; 512], used: 512 }) };
}

struct Pool {
    bytes: [u8; 512],
    used: usize,
}

/// `N` random bytes, not all zero (an all-zero id is invalid).
fn random_nonzero<const N: usize>() -> [u8; N] {
    RANDOM.with(|pool| {
        let mut pool = pool.borrow_mut();
        loop {
            if pool.used + N > pool.bytes.len() {
                if getrandom::fill(&mut pool.bytes).is_err() {
                    fallback(&mut pool.bytes);
                }
                pool.used = 0;
            }
            let mut id = [0u8; N];
            id.copy_from_slice(&pool.bytes[pool.used..pool.used + N]);
            pool.used += N;
            if id != [0; N] {
                return id;
            }
        }
    })
}

/// Where the system has no randomness to give: the clock and a counter, mixed. Ids need
/// only be unique, not secret.
fn fallback(bytes: &mut [u8]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let mut state = nanos ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32);
    for chunk in bytes.chunks_mut(8) {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^= mixed >> 31;
        let word = mixed.to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests;
