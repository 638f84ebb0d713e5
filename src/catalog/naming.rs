//! Tool names: by the curation's `naming:` rule, from the operationId (or method and path):
//! as written when every client accepts it, otherwise made acceptable; or in snake case.
//! Either way at most 64 characters, shortened with a stable hash suffix.

use sha2::{Digest, Sha256};

use crate::curation::Naming;

/// The longest name every major client accepts.
pub const MAX_LEN: usize = 64;

/// Whether `name` matches `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The name an operation gets when the curation gives none, by `naming`. Depends only on the
/// operation itself, never on the order of the document.
pub fn derive(naming: Naming, operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = match operation_id {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => format!("{method}_{path}"),
    };
    match naming {
        Naming::AsWritten => match operation_id.filter(|id| is_valid(id)) {
            Some(id) => id.to_string(),
            None => bounded(accepted(&source), &source, method),
        },
        Naming::SnakeCase => bounded(snake_case(&source), &source, method),
    }
}

/// `name` led by the API id `prefix` and `_` (a server of several APIs names each tool by
/// where it comes from), within [`MAX_LEN`]: a longer one is cut and given a stable hash of
/// the whole. An id is at most 32 characters, so some of the name always stays. Without a
/// prefix, `name` as it is.
pub fn prefixed(prefix: Option<&str>, name: String) -> String {
    match prefix {
        None => name,
        Some(prefix) => {
            let whole = format!("{prefix}_{name}");
            bounded(whole.clone(), &whole, "")
        }
    }
}

/// `source` in snake case: its words (split at every character that is not a letter or a
/// digit, and where a lowercase letter or digit meets an uppercase one, or an uppercase run
/// meets a capitalized word: `HTTPServer` is `http_server`) lowercased and joined by `_`.
fn snake_case(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut name = String::with_capacity(source.len() + 8);
    for (index, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !name.is_empty() && !name.ends_with('_') {
                name.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && index > 0 && !name.is_empty() && !name.ends_with('_') {
            let before = chars[index - 1];
            let after = chars.get(index + 1).copied();
            let starts_word = before.is_ascii_lowercase()
                || before.is_ascii_digit()
                || (before.is_ascii_uppercase() && after.is_some_and(|a| a.is_ascii_lowercase()));
            if starts_word {
                name.push('_');
            }
        }
        name.push(c.to_ascii_lowercase());
    }
    while name.ends_with('_') {
        name.pop();
    }
    name
}

/// `source` with each character no client accepts as `_`, and no `_` doubled, leading or
/// trailing.
fn accepted(source: &str) -> String {
    let mut name = String::with_capacity(source.len());
    for c in source.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && (name.is_empty() || name.ends_with('_')) {
            continue;
        }
        name.push(c);
    }
    while name.ends_with('_') {
        name.pop();
    }
    name
}

/// `name` made from `source`, within [`MAX_LEN`]: a longer one is cut and given a stable
/// hash of `source`; an empty one is `method`.
fn bounded(mut name: String, source: &str, method: &str) -> String {
    if name.is_empty() {
        name = method.to_string();
    }
    if name.len() > MAX_LEN {
        let hash = Sha256::digest(source.as_bytes());
        let suffix: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        name.truncate(MAX_LEN - suffix.len() - 1);
        while name.ends_with('_') {
            name.pop();
        }
        name.push('_');
        name.push_str(&suffix);
    }
    name
}
