//! A string that must never be printed: tokens, client secrets, API keys.
//!
//! `Debug` shows only that a value is there, and there is no `Display`, so a secret cannot
//! reach a log line, an error message or `ferry check` output by accident.

use std::fmt;
use std::sync::Arc;

/// A secret value. Cloning is cheap; the text is reached only through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(value: impl Into<Arc<str>>) -> Secret {
        Secret(value.into())
    }

    /// The secret's text, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value.into())
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.into())
    }
}
