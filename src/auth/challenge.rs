//! Why a request was refused, as the HTTP status and `WWW-Authenticate` value a client needs
//! to recover (RFC 6750 §3, RFC 9728 §5.1, MCP authorization).

use http::StatusCode;

/// A refusal: 401 (no or bad token), 403 (token lacks a scope) or 503 (the token could not
/// be checked right now). Built by [`super::Authenticator`], which knows the metadata URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    kind: ChallengeKind,
    www_authenticate: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeKind {
    /// No bearer token was sent.
    Missing,
    /// A token was sent but is not valid: bad signature, expired, another audience, unknown.
    InvalidToken,
    /// The token is valid but lacks a scope the operation needs.
    InsufficientScope,
    /// The token could not be checked (introspection endpoint unreachable).
    Unavailable,
}

/// What goes into a challenge besides its kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChallengeParams<'a> {
    pub description: Option<&'a str>,
    pub scopes: &'a [String],
    pub resource_metadata: Option<&'a str>,
}

impl Challenge {
    pub(crate) fn new(kind: ChallengeKind, params: ChallengeParams<'_>) -> Challenge {
        let www_authenticate = match kind {
            ChallengeKind::Unavailable => None,
            _ => Some(bearer_header(kind, &params)),
        };
        Challenge {
            kind,
            www_authenticate,
        }
    }

    pub fn kind(&self) -> ChallengeKind {
        self.kind
    }

    pub fn status(&self) -> StatusCode {
        match self.kind {
            ChallengeKind::Missing | ChallengeKind::InvalidToken => StatusCode::UNAUTHORIZED,
            ChallengeKind::InsufficientScope => StatusCode::FORBIDDEN,
            ChallengeKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The `WWW-Authenticate` header value; `None` for [`ChallengeKind::Unavailable`].
    pub fn www_authenticate(&self) -> Option<&str> {
        self.www_authenticate.as_deref()
    }

    /// The `Retry-After` value, in seconds, when trying again soon may work: a token that
    /// could not be checked.
    pub fn retry_after(&self) -> Option<u64> {
        (self.kind == ChallengeKind::Unavailable).then_some(5)
    }
}

/// `Bearer` followed by its parameters, in the order the MCP specification shows them:
/// `error`, `scope`, `resource_metadata`, `error_description`; for a missing token,
/// `resource_metadata` then `scope`. Every value is a URL, a scope token
/// or a fixed description, none of which holds `"` or `\`.
fn bearer_header(kind: ChallengeKind, params: &ChallengeParams<'_>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let scope =
        (!params.scopes.is_empty()).then(|| format!("scope=\"{}\"", params.scopes.join(" ")));
    let metadata = params
        .resource_metadata
        .map(|url| format!("resource_metadata=\"{url}\""));
    match kind {
        ChallengeKind::Missing => {
            parts.extend(metadata);
            parts.extend(scope);
        }
        ChallengeKind::InvalidToken | ChallengeKind::InsufficientScope => {
            let error = if kind == ChallengeKind::InvalidToken {
                "invalid_token"
            } else {
                "insufficient_scope"
            };
            parts.push(format!("error=\"{error}\""));
            parts.extend(scope);
            parts.extend(metadata);
            parts.extend(
                params
                    .description
                    .map(|text| format!("error_description=\"{text}\"")),
            );
        }
        ChallengeKind::Unavailable => {}
    }
    if parts.is_empty() {
        "Bearer".to_string()
    } else {
        format!("Bearer {}", parts.join(", "))
    }
}
