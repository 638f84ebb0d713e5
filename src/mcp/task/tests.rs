//! Task ids: what one holds opens for its caller alone, with its key, until it expires.

use super::{TTL_SECONDS, Task, Unknown, declared, open, seal};
use crate::mcp::confirm::ConfirmKey;

fn key(byte: u8) -> ConfirmKey {
    ConfirmKey::new(&[byte; 32]).expect("a key of 32 bytes")
}

fn task() -> Task {
    Task {
        tool: "startExport".to_string(),
        api: "jobs".to_string(),
        status: "/jobs/7?view=full".to_string(),
        created: 1_800_000_000,
    }
}

#[test]
fn an_id_opens_to_its_task_for_its_caller() {
    let id = seal(&key(1), "alice", &task()).expect("sealed");
    assert_eq!(open(&key(1), &id, "alice", 1_800_000_060), Ok(task()));
    assert_eq!(
        open(&key(1), &id, "alice", 1_800_000_000 + TTL_SECONDS),
        Ok(task())
    );
}

#[test]
fn a_foreign_tampered_other_key_or_expired_id_is_unknown() {
    let id = seal(&key(1), "alice", &task()).expect("sealed");
    let now = 1_800_000_060;
    assert_eq!(open(&key(1), &id, "bob", now), Err(Unknown::OtherCaller));
    assert_eq!(open(&key(2), &id, "alice", now), Err(Unknown::Forged));
    assert_eq!(
        open(&key(1), &id, "alice", 1_800_000_001 + TTL_SECONDS),
        Err(Unknown::Expired)
    );
    // Every byte changed, one at a time, breaks the seal.
    let bytes = id.as_bytes();
    for at in 0..bytes.len() {
        let mut changed = bytes.to_vec();
        changed[at] = if changed[at] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).expect("ASCII");
        assert_eq!(
            open(&key(1), &changed, "alice", now),
            Err(Unknown::Forged),
            "byte {at}"
        );
    }
    for junk in ["", "x", "!!!", &"A".repeat(5000)] {
        assert_eq!(open(&key(1), junk, "alice", now), Err(Unknown::Forged));
    }
}

#[test]
fn a_status_too_long_to_carry_makes_no_id() {
    let mut long = task();
    long.status = format!("/jobs/{}", "7".repeat(super::MAX_STATUS_BYTES));
    assert_eq!(seal(&key(1), "alice", &long), None);
}

#[test]
fn the_extension_is_declared_under_extensions() {
    let raw =
        |text: &str| serde_json::value::RawValue::from_string(text.to_string()).expect("JSON");
    assert!(declared(Some(&raw(
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#
    ))));
    assert!(!declared(Some(&raw(r#"{"extensions":{"other/ext":{}}}"#))));
    assert!(!declared(Some(&raw(r#"{"tasks":{}}"#))));
    assert!(!declared(Some(&raw("[]"))));
    assert!(!declared(None));
}
