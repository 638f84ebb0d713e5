//! One API as the client calls it: its base URL, ferry's credential for it and the identity
//! header, with the request target a call's path makes under that base and the check that it
//! stays on the API's origin.

use std::fmt;
use std::sync::{Arc, Mutex};

use http::HeaderMap;
use http::header::{self, HeaderName, HeaderValue};

use super::address::join;
use super::credential::{Credential, obtained_secrets};
use super::redact::Secrets;
use crate::auth::Principal;
use crate::auth::outbound::identity_header;

/// What calls one API: where, and with which credential.
pub(super) struct Part {
    /// The API's id (empty for the one API of a file without `apis:`).
    pub(super) id: String,
    /// The base URL as text, without a trailing `/`: paths are appended to it.
    pub(super) base: String,
    pub(super) base_url: reqwest::Url,
    /// The base URL's path without a trailing `/`: a call's path is appended to it.
    pub(super) base_path: String,
    pub(super) credential: Option<Credential>,
    /// The last obtained `Authorization` value and every API's secrets with its own added: calls
    /// share one value (a client credentials token while it lasts, a basic credential), so
    /// its forms are prepared once, not per call.
    pub(super) obtained_secrets: Mutex<Option<(HeaderValue, Arc<Secrets>)>>,
    pub(super) identity_header: Option<HeaderName>,
}

impl Part {
    /// `secrets` (every API's) and those of the obtained `Authorization` value `value`.
    pub(super) fn secrets_with(
        &self,
        secrets: &Secrets,
        value: &HeaderValue,
    ) -> Option<Arc<Secrets>> {
        let mut last = self
            .obtained_secrets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((known, secrets)) = &*last
            && known == value
        {
            return Some(secrets.clone());
        }
        let secrets = Arc::new(secrets.with(obtained_secrets(value)?));
        *last = Some((value.clone(), secrets.clone()));
        Some(secrets)
    }

    /// The request target for `path_and_query` under the base URL, or why there is none.
    pub(super) fn uri(&self, path_and_query: &str) -> Result<http::Uri, &'static str> {
        // The common case: a path that starts with `/`, already encoded, appended as text.
        if path_and_query.starts_with('/')
            && !path_and_query.contains('#')
            && path_and_query
                .bytes()
                .last()
                .is_some_and(|byte| byte > b' ')
        {
            let mut text = String::with_capacity(self.base.len() + path_and_query.len());
            text.push_str(&self.base);
            text.push_str(path_and_query);
            if let Ok(uri) = http::Uri::try_from(text) {
                return Ok(uri);
            }
        }
        // Anything else is read as a URL, as a browser would, then taken as a target.
        let url = join(&self.base, &self.base_url, &self.base_path, path_and_query)
            .map_err(|_| "the URL did not parse")?;
        http::Uri::try_from(url.as_str()).map_err(|_| "the URL is not a valid request target")
    }

    /// Puts ferry's credential for the API in `headers` (an obtained one is
    /// `authorization`; a query credential goes in the target instead), and the identity
    /// header naming `principal` where the API has one. `None` when a cookie cannot be sent.
    pub(super) fn authorize(
        &self,
        headers: &mut HeaderMap,
        authorization: Option<&HeaderValue>,
        principal: &Principal,
    ) -> Option<()> {
        match &self.credential {
            Some(Credential::Header(name, value)) => {
                headers.insert(name.clone(), value.clone());
            }
            Some(Credential::Cookie(pair)) => {
                let cookie = match headers
                    .get(header::COOKIE)
                    .and_then(|value| value.to_str().ok())
                {
                    Some(existing) => format!("{existing}; {pair}"),
                    None => pair.clone(),
                };
                let mut value = HeaderValue::from_str(&cookie).ok()?;
                value.set_sensitive(true);
                headers.insert(header::COOKIE, value);
            }
            Some(Credential::Obtained(_)) => {
                if let Some(value) = authorization {
                    headers.insert(header::AUTHORIZATION, value.clone());
                }
            }
            Some(Credential::Query { .. }) | None => {}
        }
        if let Some(name) = &self.identity_header {
            let (name, value) = identity_header(name, principal);
            headers.insert(name, value);
        }
        Some(())
    }

    /// Whether `uri` is on the base URL's origin.
    pub(super) fn same_origin(&self, uri: &http::Uri) -> bool {
        let base = &self.base_url;
        uri.scheme_str() == Some(base.scheme())
            && uri.host() == base.host_str()
            && uri.port_u16().or_else(|| default_port(base.scheme()))
                == base.port_or_known_default()
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Part")
            .field("id", &self.id)
            .field("base", &self.base)
            .field("credential", &self.credential)
            .finish_non_exhaustive()
    }
}
