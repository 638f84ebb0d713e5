//! Reading JSON text from bytes.

use serde::Deserialize;

/// `bytes` read as JSON, as `serde_json::from_slice` reads them, but checked as UTF-8 once
/// first: read from a `&str`, serde_json does not check each string it meets again (a
/// `tools/call` has a dozen, and each key is one). Bytes that are not UTF-8 are read by
/// `from_slice` itself, so what is refused, and as what error, is serde_json's as before
/// (it does not look inside a string it skips).
pub fn from_bytes<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

#[cfg(test)]
mod tests;
