//! ferry's own credential for the upstream, made once from the catalog's `upstream_auth`
//! and the environment: a header, query item or cookie ready to put on every request, or a
//! source that obtains one per call (basic, client credentials, token exchange); and the
//! secret values to redact from results.

use std::fmt;
use std::sync::Arc;

use http::header::{self, HeaderName, HeaderValue};
use percent_encoding::utf8_percent_encode;
use url::Url;

use super::{UpstreamError, redact};
use crate::access::{OutboundCredential, UpstreamAuth};
use crate::auth::outbound::CredentialSource;
use crate::catalog::ParameterLocation;
use crate::client::Pool;

/// ferry's own credential, ready to put on a request.
pub(super) enum Credential {
    Header(HeaderName, HeaderValue),
    /// Name and value, percent-encoded.
    Query {
        name: String,
        value: String,
    },
    /// `name=value`, encoded.
    Cookie(String),
    /// Built or fetched per call (basic, client credentials, token exchange).
    Obtained(Arc<CredentialSource>),
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Header(name, _) => write!(f, "Header({name}: [redacted])"),
            Credential::Query { name, .. } => write!(f, "Query({name}=[redacted])"),
            Credential::Cookie(_) => f.write_str("Cookie([redacted])"),
            Credential::Obtained(source) => write!(f, "Obtained({source:?})"),
        }
    }
}

/// Percent-encoding for ferry's own query and cookie credentials.
const CREDENTIAL_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// ferry's credential as `auth` configures it, with its secrets read from `env`, and the
/// secret values to redact; token requests go out on `pool`.
pub(super) fn credential(
    auth: &UpstreamAuth,
    env: &impl Fn(&str) -> Option<String>,
    pool: &Pool,
) -> Result<(Option<Credential>, Vec<String>), UpstreamError> {
    let secret = |name: &str| match env(name) {
        Some(value) if !value.is_empty() => Ok(value),
        _ => Err(UpstreamError::MissingSecret {
            env: name.to_string(),
        }),
    };
    let invalid = |name: &str| UpstreamError::InvalidSecret {
        env: name.to_string(),
    };
    match auth {
        UpstreamAuth::Obtained(config) => {
            if let OutboundCredential::Basic { password_env, .. } = config
                && let Some(password) = env(password_env)
            {
                searchable(&password, password_env);
            }
            let source = CredentialSource::with_env(config, pool.clone(), env)?;
            Ok((Some(Credential::Obtained(Arc::new(source))), Vec::new()))
        }
        UpstreamAuth::Bearer { env: name } => {
            let token = secret(name)?;
            let mut value =
                HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| invalid(name))?;
            value.set_sensitive(true);
            let secrets = if searchable(&token, name) {
                vec![token]
            } else {
                Vec::new()
            };
            Ok((
                Some(Credential::Header(header::AUTHORIZATION, value)),
                secrets,
            ))
        }
        UpstreamAuth::ApiKey {
            location,
            name: key_name,
            env: name,
        } => {
            let key = secret(name)?;
            let encoded = utf8_percent_encode(&key, CREDENTIAL_VALUE).to_string();
            let secrets = if !searchable(&key, name) {
                Vec::new()
            } else if encoded == key {
                vec![key.clone()]
            } else {
                vec![key.clone(), encoded.clone()]
            };
            let credential = match location {
                ParameterLocation::Header => {
                    let header =
                        HeaderName::from_bytes(key_name.as_bytes()).map_err(|_| invalid(name))?;
                    let mut value = HeaderValue::from_str(&key).map_err(|_| invalid(name))?;
                    value.set_sensitive(true);
                    Credential::Header(header, value)
                }
                ParameterLocation::Query
                | ParameterLocation::QueryString
                | ParameterLocation::Path => Credential::Query {
                    name: utf8_percent_encode(key_name, CREDENTIAL_VALUE).to_string(),
                    value: encoded,
                },
                ParameterLocation::Cookie => Credential::Cookie(format!(
                    "{}={encoded}",
                    utf8_percent_encode(key_name, CREDENTIAL_VALUE)
                )),
            };
            Ok((Some(credential), secrets))
        }
    }
}

/// The token endpoint ferry's credential is obtained from, when it is obtained from one.
pub(super) fn token_url(auth: &UpstreamAuth) -> Option<&Url> {
    match auth {
        UpstreamAuth::Obtained(
            OutboundCredential::ClientCredentials(config)
            | OutboundCredential::TokenExchange(config),
        ) => Some(&config.token_url),
        _ => None,
    }
}

/// Whether the secret `value` read from `env` is long enough to be redacted on its own
/// ([`redact::MIN_SECRET_CHARS`]); a warning at start says when it is not.
fn searchable(value: &str, env: &str) -> bool {
    let long_enough = value.chars().count() >= redact::MIN_SECRET_CHARS;
    if !long_enough {
        tracing::warn!(
            env,
            min_chars = redact::MIN_SECRET_CHARS,
            "secret not redacted on its own from upstream results: shorter than min_chars, it \
             would also match ordinary numbers and words there"
        );
    }
    long_enough
}

/// The secrets in an obtained `Authorization` value: its token, and for basic credentials
/// the `user:password` pair the token encodes and, when it is long enough to search for on
/// its own ([`redact::MIN_SECRET_CHARS`]), the password alone.
pub(super) fn obtained_secrets(value: &HeaderValue) -> Option<Vec<String>> {
    use base64::Engine as _;
    let (scheme, token) = value.to_str().ok()?.split_once(' ')?;
    let mut secrets = vec![token.to_string()];
    if scheme.eq_ignore_ascii_case("basic")
        && let Ok(pair) = base64::engine::general_purpose::STANDARD.decode(token)
        && let Ok(pair) = String::from_utf8(pair)
    {
        if let Some((_, password)) = pair.split_once(':')
            && password.chars().count() >= redact::MIN_SECRET_CHARS
        {
            secrets.push(password.to_string());
        }
        secrets.push(pair);
    }
    Some(secrets)
}
