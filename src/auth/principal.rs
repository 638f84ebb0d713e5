//! Who is calling, once authenticated: a subject and its granted scopes, and the token it
//! presented, kept only for token exchange and never forwarded.

use std::collections::BTreeSet;

use super::Secret;

/// Who is calling, once authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's `sub` (or `client_id`), or the API key's subject; `anonymous` without
    /// authentication.
    pub subject: String,
    /// Granted scopes, sorted, without duplicates.
    pub scopes: Vec<String>,
    /// The validated bearer token, kept only for RFC 8693 token exchange.
    token: Option<Secret>,
}

impl Principal {
    pub fn new(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Principal {
        let scopes: BTreeSet<String> = scopes.into_iter().map(Into::into).collect();
        Principal {
            subject: subject.into(),
            scopes: scopes.into_iter().collect(),
            token: None,
        }
    }

    /// The principal of a server without authentication.
    pub fn anonymous() -> Principal {
        Principal {
            subject: String::from("anonymous"),
            scopes: Vec::new(),
            token: None,
        }
    }

    /// [`Principal::anonymous`], made once and shared: where nobody is asked, every call is
    /// its.
    pub fn anonymous_ref() -> &'static Principal {
        static ANONYMOUS: std::sync::LazyLock<Principal> =
            std::sync::LazyLock::new(Principal::anonymous);
        &ANONYMOUS
    }

    /// Attaches the validated token the principal presented (for token exchange).
    pub fn with_token(mut self, token: Secret) -> Principal {
        self.token = Some(token);
        self
    }

    /// The OAuth access token this principal was authenticated with; `None` for API keys
    /// and for the anonymous principal.
    pub fn token(&self) -> Option<&Secret> {
        self.token.as_ref()
    }

    pub fn has_scopes(&self, required: &[String]) -> bool {
        required
            .iter()
            .all(|scope| self.scopes.binary_search(scope).is_ok())
    }
}
