//! Tool names: the operationId when every client accepts it as it is, otherwise a readable
//! name derived from it (or from method and path), shortened with a stable hash suffix.

use sha2::{Digest, Sha256};

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

/// The name an operation gets when the curation gives none. Depends only on the operation
/// itself, never on the order of the document.
pub fn derive(operation_id: Option<&str>, method: &str, path: &str) -> String {
    if let Some(id) = operation_id.filter(|id| is_valid(id)) {
        return id.to_string();
    }
    let source = match operation_id {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => format!("{method}_{path}"),
    };
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
