use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::*;

#[test]
fn bytes_read_as_from_slice_reads_them() {
    let cases: &[&[u8]] = &[
        br#"{"a":"b","c":[1,2.5,"\u00e9"]}"#,
        b"{\"a\":\"\xC3\xA9\"}",
        b"{\"a\":\"\xFF\"}",
        b"[1,",
        b"",
        b"\xEF\xBB\xBF{}",
    ];
    for bytes in cases {
        let ours = from_bytes::<Value>(bytes).map_err(|error| error.to_string());
        let theirs = serde_json::from_slice::<Value>(bytes).map_err(|error| error.to_string());
        assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(bytes));
    }
    // A skipped string is not looked into, by either.
    let skipped = b"{\"a\":\"\xFF\"}";
    assert!(from_bytes::<IgnoredAny>(skipped).is_ok());
    assert!(serde_json::from_slice::<IgnoredAny>(skipped).is_ok());
}

#[test]
fn compact_text_is_written_pretty_as_serde_json_writes_its_value() {
    let cases = [
        json!([]),
        json!({}),
        json!([{}, [], {"a": []}, [[]]]),
        json!({"name": "a,b:c{d}[e]", "quote": "say \"hi\" \\ {", "n": [1, -2.5, 1e300, null, true]}),
        json!({"nested": {"deeper": {"deepest": [1, {"x": "y"}]}}, "é": "\u{1}\n\t"}),
        json!("a lone string, with [brackets]"),
        json!(12),
    ];
    for value in cases {
        let compact = serde_json::to_vec(&value).unwrap();
        let mut ours = Vec::new();
        write_pretty(&compact, &mut ours).unwrap();
        let theirs = serde_json::to_vec_pretty(&value).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(theirs).unwrap(),
            "{compact:?}"
        );
    }
    // Space between tokens is dropped, not doubled.
    let mut spaced = Vec::new();
    write_pretty(b"{ \"a\" : [ 1 , 2 ] }", &mut spaced).unwrap();
    assert_eq!(
        spaced,
        serde_json::to_vec_pretty(&json!({"a": [1, 2]})).unwrap()
    );
}
