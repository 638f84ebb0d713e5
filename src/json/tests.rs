use serde::de::IgnoredAny;
use serde_json::Value;

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
