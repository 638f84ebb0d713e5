//! RFC 6901 JSON pointers and the relative paths of `$ref`s between files.

use std::borrow::Cow;

use serde_json::Value;

/// Looks up an RFC 6901 pointer (with a leading `/`, or empty for the whole value);
/// percent-encoded fragments (`#/paths/~1pets%7Bid%7D`) are decoded first.
///
/// Returns `None` for a pointer that names nothing, that does not start with `/`, or that is
/// not valid: `~` not followed by `0` or `1`, an array index with a leading zero or sign.
pub fn pointer_get<'a>(value: &'a Value, pointer: &str) -> Option<&'a Value> {
    let decoded = decode_fragment(pointer)?;
    walk(value, &decoded)
}

/// Escapes one JSON pointer token: `~` to `~0`, `/` to `~1`.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Reverses [`escape_token`]; `None` for a `~` that is not `~0` or `~1`.
pub fn unescape_token(token: &str) -> Option<Cow<'_, str>> {
    if !token.contains('~') {
        return Some(Cow::Borrowed(token));
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(Cow::Owned(out))
}

/// A URI fragment percent-decoded; `None` when the decoded bytes are not UTF-8.
pub(crate) fn decode_fragment(fragment: &str) -> Option<Cow<'_, str>> {
    if fragment.contains('%') {
        percent_encoding::percent_decode_str(fragment)
            .decode_utf8()
            .ok()
    } else {
        Some(Cow::Borrowed(fragment))
    }
}

/// Follows an already percent-decoded pointer.
pub(crate) fn walk<'a>(value: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut current = value;
    for raw in rest.split('/') {
        let token = unescape_token(raw)?;
        current = match current {
            Value::Object(map) => map.get(token.as_ref())?,
            Value::Array(items) => {
                let valid = !token.is_empty()
                    && token.bytes().all(|b| b.is_ascii_digit())
                    && (token.len() == 1 || !token.starts_with('0'));
                if !valid {
                    return None;
                }
                items.get(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(current)
}

/// Joins the relative `path` of a `$ref` to the directory of `from` (both `/`-separated and
/// relative to the root directory); `None` when the result would leave that directory or the
/// path is absolute. Percent-escapes in `path` are decoded, as it is a URI reference.
pub(crate) fn join_relative(from: &str, path: &str) -> Option<String> {
    let path = decode_fragment(path)?;
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    parts.retain(|p| !p.is_empty());
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}
