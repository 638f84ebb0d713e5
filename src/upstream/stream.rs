//! An answer in a sequential media type, read item by item: server-sent events
//! (`text/event-stream`), JSON lines (`application/jsonl`, `application/x-ndjson`) and JSON
//! text sequences (`application/json-seq`, RFC 7464).
//!
//! While the answer comes, a [`Collector`] keeps its bytes and counts the items that have
//! ended, reporting each step to the call's [`Progress`]; once it is over (ended, cut at the
//! size cap, or stalled past the call's timeout), [`items`] reads the whole items out of the
//! body as redacted. An item is kept as the API sent it: a JSON line as its value, an event
//! as an object of the fields it had (`data`, `event`, `id`, `retry`), which is how an
//! OpenAPI 3.2 `itemSchema` models one. Nothing is dropped without being said: a line that
//! is not JSON is kept as text and named, and an item the answer stopped inside is counted.

use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value};

pub use crate::catalog::Sequence;
use crate::client::Sink;

/// Where a call that reads a stream says how far it has come: as each read brings items,
/// `items` ended so far and `bytes` of at most `limit`.
pub trait Progress: Sync {
    fn report(&self, items: u64, bytes: u64, limit: u64);
}

const RECORD_SEPARATOR: u8 = 0x1e;

/// The bytes of a 2xx answer in a sequential media type, kept as they come; any other answer
/// is left to be read whole.
pub(super) struct Collector<'p> {
    limit: u64,
    progress: Option<&'p dyn Progress>,
    /// The head of the answer being collected, once one came.
    pub(super) head: Option<(StatusCode, HeaderMap)>,
    pub(super) bytes: Vec<u8>,
    counter: Counter,
}

impl<'p> Collector<'p> {
    pub(super) fn new(limit: u64, progress: Option<&'p dyn Progress>) -> Collector<'p> {
        Collector {
            limit,
            progress,
            head: None,
            bytes: Vec::new(),
            counter: Counter::default(),
        }
    }

    /// What was collected, taken out, leaving it ready for another attempt.
    pub(super) fn take(&mut self) -> Option<(StatusCode, HeaderMap, Vec<u8>)> {
        self.counter = Counter::default();
        let (status, headers) = self.head.take()?;
        Some((status, headers, std::mem::take(&mut self.bytes)))
    }
}

impl Sink for Collector<'_> {
    fn head(&mut self, status: StatusCode, headers: &HeaderMap) -> bool {
        if !status.is_success() {
            return false;
        }
        let sequence = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(Sequence::of);
        match sequence {
            Some(sequence) => {
                self.counter = Counter {
                    sequence: Some(sequence),
                    line_start: true,
                    ..Counter::default()
                };
                self.head = Some((status, headers.clone()));
                self.bytes.clear();
                true
            }
            _ => false,
        }
    }

    fn body(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        let before = self.counter.items;
        self.counter.scan(bytes);
        if let Some(progress) = self.progress
            && self.counter.items > before
        {
            progress.report(self.counter.items, self.bytes.len() as u64, self.limit);
        }
    }
}

/// Counts the items that have ended so far, a read at a time, without keeping them.
#[derive(Debug, Default)]
struct Counter {
    sequence: Option<Sequence>,
    items: u64,
    /// The current line (or record) has something but white space.
    content: bool,
    /// Events: at the start of a line; the current line is a comment; the last byte was a
    /// carriage return (a line feed after it ends nothing).
    line_start: bool,
    comment: bool,
    after_cr: bool,
    /// Events: the current event has a field the reader keeps ([`events`]).
    kept: bool,
    /// Events: the current line's field name so far, up to one byte longer than the longest
    /// kept (a longer name is none of them), and whether its value has begun.
    name: [u8; 6],
    name_len: u8,
    in_value: bool,
    /// Events: the current line's value so far (its one leading space left out): has begun,
    /// has a byte, has only digits and they fit a `u64` (as a kept `retry` must), has a NUL.
    value_began: bool,
    value_any: bool,
    value_digits: bool,
    value_number: u64,
    value_nul: bool,
    /// Events: how much of a byte order mark the stream began with, which the reader drops;
    /// [`BOM_PASSED`] once past the start.
    bom: u8,
}

/// The UTF-8 byte order mark a stream of events may begin with.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// [`Counter::bom`] once the stream's start is behind.
const BOM_PASSED: u8 = u8::MAX;

impl Counter {
    fn scan(&mut self, bytes: &[u8]) {
        match self.sequence {
            Some(Sequence::Lines) => {
                for &byte in bytes {
                    if byte == b'\n' {
                        self.items += u64::from(self.content);
                        self.content = false;
                    } else if !byte.is_ascii_whitespace() {
                        self.content = true;
                    }
                }
            }
            Some(Sequence::Records) => {
                for &byte in bytes {
                    if byte == RECORD_SEPARATOR {
                        self.items += u64::from(self.content);
                        self.content = false;
                    } else if !byte.is_ascii_whitespace() {
                        self.content = true;
                    }
                }
            }
            Some(Sequence::Events) => {
                for &byte in bytes {
                    if self.bom != BOM_PASSED {
                        let matched = usize::from(self.bom);
                        if byte == BOM[matched] {
                            self.bom = if matched + 1 == BOM.len() {
                                BOM_PASSED
                            } else {
                                self.bom + 1
                            };
                            continue;
                        }
                        // Not a mark after all: what looked like one begins the first line.
                        self.bom = BOM_PASSED;
                        for &start in &BOM[..matched] {
                            self.event_byte(start);
                        }
                    }
                    self.event_byte(byte);
                }
            }
            None => {}
        }
    }

    /// One byte of a stream of events, its mark (if any) left out.
    fn event_byte(&mut self, byte: u8) {
        if byte == b'\n' && self.after_cr {
            self.after_cr = false;
            return;
        }
        self.after_cr = byte == b'\r';
        if byte == b'\r' || byte == b'\n' {
            self.end_of_line();
        } else if self.line_start {
            self.line_start = false;
            self.comment = byte == b':';
            self.name_len = 0;
            self.in_value = false;
            self.value_began = false;
            self.value_any = false;
            self.value_digits = true;
            self.value_number = 0;
            self.value_nul = false;
            self.field_byte(byte);
        } else if !self.comment {
            self.field_byte(byte);
        }
    }

    /// One byte of an event's field line, not its first when it is a comment's.
    fn field_byte(&mut self, byte: u8) {
        if self.comment {
            return;
        }
        if !self.in_value {
            if byte == b':' {
                self.in_value = true;
            } else if usize::from(self.name_len) < self.name.len() {
                self.name[usize::from(self.name_len)] = byte;
                self.name_len += 1;
            }
            return;
        }
        if !self.value_began {
            self.value_began = true;
            if byte == b' ' {
                return;
            }
        }
        self.value_digits = self.value_digits
            && byte.is_ascii_digit()
            && self
                .value_number
                .checked_mul(10)
                .and_then(|number| number.checked_add(u64::from(byte - b'0')))
                .inspect(|&number| self.value_number = number)
                .is_some();
        self.value_nul |= byte == 0;
        self.value_any = true;
    }

    /// An event's line ended: an empty one ends the event, counted when it kept a field.
    fn end_of_line(&mut self) {
        if self.line_start {
            if self.kept {
                self.items += 1;
                self.kept = false;
            }
            return;
        }
        self.line_start = true;
        if self.comment {
            return;
        }
        self.kept |= match &self.name[..usize::from(self.name_len)] {
            b"data" | b"event" => true,
            b"id" => !self.value_nul,
            b"retry" => self.value_any && self.value_digits,
            _ => false,
        };
    }
}

/// The items read out of a stream's body.
#[derive(Debug, Default, PartialEq)]
pub struct Items {
    pub items: Vec<Value>,
    /// The items (by index) that are not JSON, kept as their text.
    pub not_json: Vec<usize>,
    /// Bytes at the end that make no whole item: the answer stopped inside one.
    pub partial: usize,
}

/// The items of `body`, a stream in `sequence`; `ended` when the answer came to its end (not
/// cut, not stalled), so that a last JSON line without its line feed is whole.
pub fn items(sequence: Sequence, body: &[u8], ended: bool) -> Items {
    match sequence {
        Sequence::Lines => lines(body, ended),
        Sequence::Records => records(body, ended),
        Sequence::Events => events(body),
    }
}

fn lines(body: &[u8], ended: bool) -> Items {
    let mut read = Items::default();
    let mut rest = body;
    while !rest.is_empty() {
        let (line, next, whole) = match rest.iter().position(|&byte| byte == b'\n') {
            Some(end) => (&rest[..end], &rest[end + 1..], true),
            None => (rest, &rest[rest.len()..], ended),
        };
        if !whole {
            if !line.trim_ascii().is_empty() {
                read.partial = line.len();
            }
            break;
        }
        json_item(&mut read, line);
        rest = next;
    }
    read
}

fn records(body: &[u8], ended: bool) -> Items {
    let mut read = Items::default();
    let mut pieces = body.split(|&byte| byte == RECORD_SEPARATOR).peekable();
    while let Some(record) = pieces.next() {
        // A record ends with a line feed (RFC 7464 §2.2); the last one, without it, may have
        // been cut.
        let last = pieces.peek().is_none();
        if last && !ended && !record.ends_with(b"\n") && !record.trim_ascii().is_empty() {
            read.partial = record.len();
            break;
        }
        json_item(&mut read, record);
    }
    read
}

/// One JSON line or record: its value, or its text when it is not JSON; nothing when blank.
fn json_item(read: &mut Items, text: &[u8]) {
    let text = text.trim_ascii();
    if text.is_empty() {
        return;
    }
    match serde_json::from_slice(text) {
        Ok(value) => read.items.push(value),
        Err(_) => {
            read.not_json.push(read.items.len());
            read.items
                .push(Value::String(String::from_utf8_lossy(text).into_owned()));
        }
    }
}

/// The events of a `text/event-stream` body as the HTML standard reads them: lines end at
/// CR, LF or CRLF; a line starting with `:` is a comment; `field: value` (one space after
/// the colon dropped); `data` lines joined with line feeds; an `id` with a NUL and a `retry`
/// that is not all digits ignored; an empty line ends the event. An event is kept when it
/// had any field; one the stream stopped inside (even at its end, as the standard discards
/// it) is counted, not kept.
fn events(body: &[u8]) -> Items {
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut read = Items::default();
    let mut event = Map::new();
    let mut data: Option<String> = None;
    let mut started = 0;
    let mut at = 0;
    let bytes = text.as_bytes();
    let mut line_start = 0;
    while at <= bytes.len() {
        let end_of_line = at < bytes.len() && matches!(bytes[at], b'\r' | b'\n');
        if at == bytes.len() {
            // The last line has no end: it and its event are left out.
            if line_start < bytes.len() || !event.is_empty() || data.is_some() {
                read.partial = bytes.len() - started;
            }
            break;
        }
        if !end_of_line {
            at += 1;
            continue;
        }
        let line = &text[line_start..at];
        at += if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        line_start = at;
        if line.is_empty() {
            if let Some(data) = data.take() {
                event.insert("data".to_string(), Value::String(data));
            }
            if !event.is_empty() {
                read.items.push(Value::Object(std::mem::take(&mut event)));
            }
            started = at;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            "event" => {
                event.insert("event".to_string(), Value::from(value));
            }
            "id" if !value.contains('\0') => {
                event.insert("id".to_string(), Value::from(value));
            }
            "retry" if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) => {
                if let Ok(retry) = value.parse::<u64>() {
                    event.insert("retry".to_string(), Value::from(retry));
                }
            }
            _ => {}
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_lines_keep_each_value_and_name_what_is_not_json() {
        let read = items(
            Sequence::Lines,
            b"{\"a\":1}\r\n\n[2]\nnot json\n\"last\"",
            true,
        );
        assert_eq!(
            read.items,
            [
                json!({"a": 1}),
                json!([2]),
                json!("not json"),
                json!("last")
            ]
        );
        assert_eq!(read.not_json, [2]);
        assert_eq!(read.partial, 0);
        let cut = items(Sequence::Lines, b"{\"a\":1}\n{\"b\":", false);
        assert_eq!(cut.items, [json!({"a": 1})]);
        assert_eq!(cut.partial, 5);
    }

    #[test]
    fn json_text_sequences_split_at_record_separators() {
        let read = items(
            Sequence::Records,
            b"\x1e{\"a\":1}\n\x1e2\n\x1e{\"b\"",
            false,
        );
        assert_eq!(read.items, [json!({"a": 1}), json!(2)]);
        assert_eq!(read.partial, 4);
    }

    #[test]
    fn events_are_read_as_the_html_standard_reads_them() {
        let body =
            b": comment\r\nevent: update\r\nid: 7\r\nretry: 1500\r\ndata: one\r\ndata:two\r\n\r\n\
            data\n\nretry: soon\nid: a\0b\n\n: only a comment\n\ndata: {\"x\":1}\rdata: cut";
        let read = items(Sequence::Events, body, true);
        assert_eq!(
            read.items,
            [
                json!({"event": "update", "id": "7", "retry": 1500, "data": "one\ntwo"}),
                json!({"data": ""}),
            ]
        );
        // The last event never ended: it is counted, not kept.
        assert_eq!(read.partial, "data: {\"x\":1}\rdata: cut".len());
    }

    #[test]
    fn the_counter_counts_items_as_they_end_whatever_the_reads() {
        let cases: [(Sequence, &[u8], u64); 5] = [
            (Sequence::Lines, b"{}\n\n[1]\n{\"partial\"", 2),
            (Sequence::Records, b"\x1e{}\n\x1e[1]\n\x1e", 2),
            (
                Sequence::Events,
                b": hi\n\ndata: a\r\n\r\nevent: b\rdata: c\r\rdata: d\n",
                2,
            ),
            // Events the reader keeps nothing of are not counted: an unknown field, a retry
            // that is not digits (or is empty after its space), an id with a NUL.
            (
                Sequence::Events,
                b"datum: x\n\nretry: 1s\n\nretry: \n\nid: a\0b\n\nretry:15\n\nid\n\ndata\n\n",
                3,
            ),
            // A byte order mark at the start is no part of the first field's name; a retry
            // past a u64 is not kept.
            (
                Sequence::Events,
                b"\xEF\xBB\xBFdata: x\n\nretry: 99999999999999999999\n\nretry: 18446744073709551615\n\n",
                2,
            ),
        ];
        for (sequence, body, expected) in cases {
            if matches!(sequence, Sequence::Events) {
                let kept = items(sequence, body, true).items.len() as u64;
                assert_eq!(kept, expected, "the counter counts what the reader keeps");
            }
            for step in 1..=body.len() {
                let mut counter = Counter {
                    sequence: Some(sequence),
                    line_start: true,
                    ..Counter::default()
                };
                for chunk in body.chunks(step) {
                    counter.scan(chunk);
                }
                assert_eq!(counter.items, expected, "{sequence:?} in reads of {step}");
            }
        }
    }
}
