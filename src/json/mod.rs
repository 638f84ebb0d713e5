//! Reading JSON text from bytes, and writing compact JSON text out pretty.

use std::io::{self, Write};

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

/// Writes the compact JSON text `compact` (as serde_json writes it: no space between tokens)
/// as `serde_json::to_writer_pretty` writes the value it holds, two spaces an indent, without
/// reading it into a tree: a tree of a large `tools/list` takes several times its text's
/// memory. Strings, numbers and literals are copied as they are. Only compact input is
/// written as serde_json would: whitespace between tokens is dropped, but an empty object or
/// array with whitespace inside (`{ }`) is opened on lines of its own.
pub fn write_pretty(compact: &[u8], out: &mut impl Write) -> io::Result<()> {
    fn new_line(out: &mut impl Write, depth: usize) -> io::Result<()> {
        out.write_all(b"\n")?;
        (0..depth).try_for_each(|_| out.write_all(b"  "))
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // The bytes from `run` on are still to be copied as they are.
    let mut run = 0;
    let mut at = 0;
    while at < compact.len() {
        let byte = compact[at];
        at += 1;
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                out.write_all(&compact[run..at])?;
                let close = if byte == b'{' { b'}' } else { b']' };
                if compact.get(at) == Some(&close) {
                    // An empty object or array stays on its line: `{}`, `[]`.
                    out.write_all(&[close])?;
                    at += 1;
                } else {
                    depth += 1;
                    new_line(out, depth)?;
                }
                run = at;
            }
            b'}' | b']' => {
                out.write_all(&compact[run..at - 1])?;
                depth = depth.saturating_sub(1);
                new_line(out, depth)?;
                out.write_all(&[byte])?;
                run = at;
            }
            b',' => {
                out.write_all(&compact[run..at])?;
                new_line(out, depth)?;
                run = at;
            }
            b':' => {
                out.write_all(&compact[run..at])?;
                out.write_all(b" ")?;
                run = at;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.write_all(&compact[run..at - 1])?;
                run = at;
            }
            _ => {}
        }
    }
    out.write_all(&compact[run..])
}

#[cfg(test)]
mod tests;
