//! Unit tests of document loading.

use super::*;

#[test]
fn pointer_tokens_round_trip() {
    assert_eq!(escape_token("a/b~c"), "a~1b~0c");
    assert_eq!(unescape_token("a~1b~0c").as_deref(), Some("a/b~c"));
}
