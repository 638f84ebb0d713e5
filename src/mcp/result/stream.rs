//! The words for a streamed answer: its items are the result (an array in
//! `structuredContent`, and the same as text), and how the stream ended is said where the
//! model reads it when it is not simply its end: cut at the size cap, stalled past the
//! tool's timeout, broken off, an item left unfinished, lines that are not JSON, items that
//! do not match the item schema the API documents. What came is kept in each case; none of
//! these makes the result an error, since what came is what the API sent.

use serde_json::{Value, json};

use super::{Block, CallResult};
use crate::upstream::{Handling, Stopped, Streamed};

/// Items named in a note, at most; the rest are counted.
const NAMED: usize = 5;

/// `_meta["dev.ferry/result"].stream`: the items kept and how the stream ended.
pub(super) fn meta(streamed: &Streamed) -> Value {
    let mut meta = json!({"items": streamed.items});
    if let Some(stopped) = streamed.stopped {
        meta["stopped"] = json!(match stopped {
            Stopped::Stalled { .. } => "stalled",
            Stopped::BrokeOff => "brokeOff",
        });
    }
    if streamed.partial > 0 {
        meta["partialBytes"] = json!(streamed.partial);
    }
    if !streamed.not_json.is_empty() {
        meta["notJson"] = json!(streamed.not_json);
    }
    if !streamed.mismatched.is_empty() {
        let indexes: Vec<usize> = streamed
            .mismatched
            .iter()
            .map(|(index, _)| *index)
            .collect();
        meta["mismatched"] = json!(indexes);
    }
    meta
}

/// Writes a 2xx stream's `value` (its items' array, as served) into `result`, with a note
/// for each way its end was not simply the stream's end.
pub(super) fn items(
    result: &mut CallResult<'_>,
    value: Value,
    streamed: &Streamed,
    handling: &Handling,
) {
    result.content.push(Block::Text(value.to_string()));
    result.structured_content = Some(value);
    let count = match streamed.items {
        1 => "the 1 item".to_string(),
        items => format!("the {items} items"),
    };
    if handling.truncated {
        result.content.push(Block::Text(format!(
            "the stream was cut at {} bytes (max_response_bytes): {count} read before are above, and the rest was not read",
            handling.limit_bytes
        )));
    }
    match streamed.stopped {
        Some(Stopped::Stalled { timeout_ms }) => result.content.push(Block::Text(format!(
            "the stream was still coming when this tool's timeout ({timeout_ms} ms) ran out: {count} that came are above, and more may have followed"
        ))),
        Some(Stopped::BrokeOff) => result.content.push(Block::Text(format!(
            "the connection failed in the middle of the stream: {count} that came are above"
        ))),
        None => {}
    }
    if streamed.partial > 0 {
        result.content.push(Block::Text(format!(
            "the stream stopped inside an item: its {} bytes are left out",
            streamed.partial
        )));
    }
    if !streamed.not_json.is_empty() {
        result.content.push(Block::Text(format!(
            "{} not JSON, and kept as text",
            named("item", &streamed.not_json)
        )));
    }
    if !streamed.mismatched.is_empty() {
        let mut note = String::from("the API's answer breaks its own description: ");
        for (at, (index, detail)) in streamed.mismatched.iter().take(NAMED).enumerate() {
            if at > 0 {
                note.push_str("; ");
            }
            note.push_str(&format!(
                "item {index} does not match the item schema the API documents ({detail})"
            ));
        }
        if streamed.mismatched.len() > NAMED {
            note.push_str(&format!("; and {} more", streamed.mismatched.len() - NAMED));
        }
        result.content.push(Block::Text(note));
    }
}

/// "item 3 is" or "items 3, 5 and 9 are" (indexes from 0, as in the array), the first few
/// named and the rest counted.
fn named(noun: &str, indexes: &[usize]) -> String {
    let shown: Vec<String> = indexes.iter().take(NAMED).map(usize::to_string).collect();
    let more = indexes.len().saturating_sub(NAMED);
    match (shown.as_slice(), more) {
        ([one], 0) => format!("{noun} {one} (counting from 0) is"),
        (shown, 0) => format!("{noun}s {} (counting from 0) are", shown.join(", ")),
        (shown, more) => format!(
            "{noun}s {} and {more} more (counting from 0) are",
            shown.join(", ")
        ),
    }
}
