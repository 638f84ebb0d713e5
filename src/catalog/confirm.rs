//! What confirming a tool's calls means once compiled: the question as literal text and
//! argument names (parsed once here, filled per call by `mcp`), the argument the user types
//! back, and the file's time-to-live, key and legacy policy.

use std::time::Duration;

use serde_json::Value;

use crate::curation::{ConfirmOptions, Confirmation, LegacyConfirm};

/// How long a confirmation request stays valid when the curation does not say.
pub const DEFAULT_TTL: Duration = Duration::from_secs(300);

/// A tool whose every call the user confirms before anything is sent upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The question, in order; `None` for `confirm: true`, which asks about the tool and
    /// lists the call's arguments.
    pub message: Option<Vec<MessagePart>>,
    /// The string argument whose value the user must type back.
    pub type_to_confirm: Option<String>,
}

/// One piece of a confirmation message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessagePart {
    Literal(String),
    /// The value of this argument in the call (escaped and bounded when filled).
    Argument(String),
}

/// The file's confirmation settings, every default applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmSettings {
    pub ttl: Duration,
    /// The environment variable holding the sealing key; `None`: a key generated at start-up.
    pub key_env: Option<String>,
    /// `confirm_legacy: allow`: a 2025-11-25 client's call proceeds unconfirmed (logged);
    /// otherwise it is refused, since such a client cannot be asked mid-call.
    pub allow_legacy: bool,
}

impl Default for ConfirmSettings {
    fn default() -> Self {
        ConfirmSettings::resolve(&ConfirmOptions::default())
    }
}

impl ConfirmSettings {
    pub fn resolve(options: &ConfirmOptions) -> ConfirmSettings {
        ConfirmSettings {
            ttl: options.ttl_seconds.map_or(DEFAULT_TTL, Duration::from_secs),
            key_env: options.key_env.clone(),
            allow_legacy: options.legacy == Some(LegacyConfirm::Allow),
        }
    }
}

/// A tool's `confirm:` resolved against its input schema: `Ok(None)` when it does not
/// confirm; each problem as `(key under confirm, message)`.
pub(super) fn resolve(
    confirmation: Option<&Confirmation>,
    input_schema: &Value,
) -> Result<Option<Confirm>, Vec<(&'static str, String)>> {
    let Some(Confirmation::On {
        message,
        type_to_confirm,
    }) = confirmation
    else {
        return Ok(None);
    };
    let properties = input_schema.get("properties").and_then(Value::as_object);
    let known = |name: &str| properties.is_some_and(|properties| properties.contains_key(name));
    let mut problems = Vec::new();
    let message = match message.as_deref().map(parse_message) {
        None => None,
        Some(Err(problem)) => {
            problems.push(("message", problem));
            None
        }
        Some(Ok(parts)) => {
            for part in &parts {
                if let MessagePart::Argument(name) = part
                    && !known(name)
                {
                    problems.push((
                        "message",
                        format!(
                            "the message names {{{name}}}, which is not an argument of the tool"
                        ),
                    ));
                }
            }
            Some(parts)
        }
    };
    if let Some(name) = type_to_confirm {
        let kind = properties
            .and_then(|properties| properties.get(name))
            .and_then(|property| property.get("type"))
            .and_then(Value::as_str);
        match kind {
            Some("string") => {}
            _ if !known(name) => problems.push((
                "type_to_confirm",
                format!("{name:?} is not an argument of the tool"),
            )),
            _ => problems.push((
                "type_to_confirm",
                format!("argument {name:?} is not a string, so it cannot be typed back exactly"),
            )),
        }
    }
    if problems.is_empty() {
        Ok(Some(Confirm {
            message,
            type_to_confirm: type_to_confirm.clone(),
        }))
    } else {
        Err(problems)
    }
}

/// `Delete pet {petId}?` as literal text and argument names; `{{` and `}}` are braces.
pub fn parse_message(text: &str) -> Result<Vec<MessagePart>, String> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err(
                                "the message has an unclosed { (write {{ for a brace)".to_string()
                            );
                        }
                    }
                }
                let name = name.trim().to_string();
                if name.is_empty() {
                    return Err(
                        "the message has an empty {} (name an argument, or write {{ for a brace)"
                            .to_string(),
                    );
                }
                if !literal.is_empty() {
                    parts.push(MessagePart::Literal(std::mem::take(&mut literal)));
                }
                parts.push(MessagePart::Argument(name));
            }
            '}' => {
                return Err("the message has a } without its { (write }} for a brace)".to_string());
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        parts.push(MessagePart::Literal(literal));
    }
    Ok(parts)
}
