//! The audit log's line from what a client wrote: the JSON-RPC id and `clientInfo` as written,
//! and a subject and tool name of any text, always one JSON object on one line, bounded.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::mcp::envelope::valid_id;
use crate::observe::{CallRecord, Outcome, ToolFacts, audit};

/// Bytes of a client-written value the line keeps at most.
const MAX_WRITTEN: usize = 128;

/// The first byte picks how the parts are read; the rest, split at `0xff`, is the request's
/// id, its `clientInfo`, the subject and the tool's name. Bit 0 set, the id is the JSON its
/// bytes are (left out when they are not JSON, or not a string or an integer), else a string
/// of their text; bit 1 likewise for `clientInfo`. The line is one JSON object and its
/// newline, with no other newline; the id is there as written when short (as a string of
/// what was written when that is not text), else cut to 128 bytes and marked; the client's
/// name and version are at most 128 bytes; the subject and the tool's name are there as
/// given.
pub fn audit(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.split(|byte| *byte == 0xff);
    let mut next = || parts.next().unwrap_or_default();
    let (id, client, subject, tool) = (next(), next(), next(), next());
    // The envelope refuses any other id before a record is made.
    let jsonrpc_id = written(id, pick & 1 != 0).filter(|id| valid_id(id));
    let client = written(client, pick & 2 != 0);
    let subject = String::from_utf8_lossy(subject).into_owned();
    let tool = String::from_utf8_lossy(tool).into_owned();
    let record = CallRecord {
        time: UNIX_EPOCH + Duration::from_micros(u64::from(pick) << 40),
        request_id: u64::from(pick),
        jsonrpc_id: jsonrpc_id.clone(),
        method: (pick & 64 != 0).then_some("tasks/get"),
        tool: Some(Arc::new(ToolFacts {
            name: tool.clone(),
            api: if pick & 8 != 0 {
                tool.clone()
            } else {
                String::new()
            },
            endpoint: if pick & 16 != 0 {
                "read".into()
            } else {
                String::new()
            },
            method: "GET".into(),
            template: "/items/{id}".into(),
        })),
        subject: (pick & 4 != 0).then(|| subject.clone()),
        client,
        outcome: Outcome::Ok,
        upstream_status: Some(200),
        attempts: 1,
        retries: 0,
        duration: Duration::from_micros(9),
        upstream_duration: Duration::from_micros(7),
        bytes_in: rest.len() as u64,
        bytes_out: 0,
        error_code: (pick & 8 != 0).then_some(-32602),
        confirmation: None,
        state_failure: None,
        operation: (pick & 32 != 0).then(|| "/jobs/1".to_string()),
    };
    let mut line = Vec::new();
    audit::write_line(&record, &mut line);

    assert_eq!(line.last(), Some(&b'\n'), "a line ends in its newline");
    assert_eq!(
        line.iter().filter(|byte| **byte == b'\n').count(),
        1,
        "a line holds no other newline: {}",
        String::from_utf8_lossy(&line)
    );
    let value: Value = serde_json::from_slice(&line).unwrap_or_else(|error| {
        panic!(
            "a line is not JSON ({error}): {}",
            String::from_utf8_lossy(&line)
        )
    });
    let object = value.as_object().expect("a line is a JSON object");
    let cut = object.get("jsonrpc_id_cut");
    match (&jsonrpc_id, object.get("jsonrpc_id")) {
        (None, None) => assert!(cut.is_none(), "{value}"),
        (Some(raw), Some(written)) => {
            let raw = raw.get();
            let long = raw.len() > MAX_WRITTEN;
            let expected_cut = long.then_some(&Value::Bool(true));
            assert_eq!(cut, expected_cut, "only a long id is marked cut: {value}");
            match serde_json::from_str::<Value>(raw) {
                Ok(raw) if !long => {
                    assert_eq!(
                        written, &raw,
                        "a short id is written as the client wrote it"
                    );
                }
                // Long, or not text (a lone surrogate): a string of at most 128 bytes, of
                // the id's text or of what the client wrote.
                _ => {
                    let text = written.as_str().expect("an id not kept is a string");
                    assert!(
                        text.len() <= MAX_WRITTEN,
                        "a cut id is {} bytes",
                        text.len()
                    );
                    assert!(long || text == raw, "{text:?} is not {raw:?}");
                }
            }
        }
        (_, written) => panic!("the id {jsonrpc_id:?} was written as {written:?}"),
    }
    for field in ["client_name", "client_version"] {
        if let Some(written) = object.get(field) {
            let text = written.as_str().expect("the client's fields are strings");
            assert!(text.len() <= MAX_WRITTEN, "{field} is {} bytes", text.len());
        }
    }
    let expected_subject = if pick & 4 != 0 {
        subject.as_str()
    } else {
        "anonymous"
    };
    assert_eq!(object.get("subject"), Some(&Value::from(expected_subject)));
    assert_eq!(object.get("tool"), Some(&Value::from(tool)));
    assert_eq!(
        object.get("method"),
        (pick & 64 != 0).then(|| Value::from("tasks/get")).as_ref()
    );
}

/// `bytes` as the client's raw JSON: the JSON they are (`None` when they are not), or a
/// string of their text.
fn written(bytes: &[u8], as_json: bool) -> Option<Box<RawValue>> {
    if as_json {
        let text = std::str::from_utf8(bytes).ok()?;
        serde_json::from_str::<&RawValue>(text)
            .ok()
            .map(ToOwned::to_owned)
    } else {
        let text = String::from_utf8_lossy(bytes);
        serde_json::value::to_raw_value(&text).ok()
    }
}
