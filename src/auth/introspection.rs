//! RFC 7662 token introspection: asking the authorization server whether an opaque token is
//! active, and what it grants. ferry authenticates to the endpoint with HTTP basic
//! (RFC 6749 §2.3.1), its client secret read from the environment at start.
//!
//! An active answer is reused for up to 30 s (never past the token's `exp`), keyed by the
//! token's SHA-256, so a revoked token stays accepted that long.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use url::Url;

use super::secret::Secret;
use crate::client::{self, Failure, Pool};

/// Largest introspection response accepted.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How long an active answer is reused at most. A token revoked at the authorization server
/// stays accepted for up to this long; its `exp` shortens it.
const CACHE_TTL: Duration = Duration::from_secs(30);
/// Answers kept at most.
const MAX_CACHED: usize = 4096;

pub(crate) struct Introspector {
    endpoint: Url,
    client_id: String,
    client_secret: Secret,
    client: Pool,
    /// Active answers by SHA-256 of the token (the token itself is never a key).
    cache: Mutex<HashMap<[u8; 32], CachedAnswer>>,
}

/// An active answer, and until when it is reused.
type CachedAnswer = (Instant, Map<String, Value>);

#[derive(Debug, thiserror::Error)]
pub(crate) enum IntrospectionError {
    #[error("introspection request failed: {0}")]
    Request(#[from] Failure),
    #[error("introspection endpoint answered {0}")]
    Status(http::StatusCode),
    #[error("introspection response is not a JSON object")]
    Shape,
}

impl Introspector {
    pub fn new(
        endpoint: Url,
        client_id: String,
        client_secret: Secret,
        client: Pool,
    ) -> Introspector {
        Introspector {
            endpoint,
            client_id,
            client_secret,
            client,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// [`Introspector::introspect`], reusing an active answer for a short while so a busy
    /// caller does not cost one round trip per request. Inactive answers are not kept.
    pub async fn introspect_cached(
        &self,
        token: &str,
    ) -> Result<Option<Map<String, Value>>, IntrospectionError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = Instant::now();
        {
            let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((until, claims)) = cache.get(&key)
                && now < *until
            {
                return Ok(Some(claims.clone()));
            }
        }
        let answer = self.introspect(token).await?;
        if let Some(claims) = &answer {
            let unix_now = super::unix_now();
            let remaining = claims
                .get("exp")
                .and_then(Value::as_u64)
                .map_or(CACHE_TTL, |exp| {
                    Duration::from_secs(exp.saturating_sub(unix_now))
                });
            let until = now + remaining.min(CACHE_TTL);
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if cache.len() >= MAX_CACHED {
                cache.retain(|_, (until, _)| now < *until);
                if cache.len() >= MAX_CACHED {
                    cache.clear();
                }
            }
            cache.insert(key, (until, claims.clone()));
        }
        Ok(answer)
    }

    /// The endpoint's answer about `token`: the claims of an active token, or `None` when
    /// the server says it is not active.
    pub async fn introspect(
        &self,
        token: &str,
    ) -> Result<Option<Map<String, Value>>, IntrospectionError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let mut request = client::Request::to(http::Method::POST, &self.endpoint)?;
        let mut authorization = http::HeaderValue::from_str(&basic_authorization(
            &self.client_id,
            self.client_secret.expose(),
        ))
        .map_err(|_| IntrospectionError::Shape)?;
        authorization.set_sensitive(true);
        let headers = &mut request.headers;
        headers.insert(http::header::AUTHORIZATION, authorization);
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/json"),
        );
        request.body = Some(body.into());
        let response = self
            .client
            .send_within(&request, MAX_RESPONSE_BYTES, super::FETCH_TIMEOUT)
            .await?;
        if !response.status.is_success() {
            return Err(IntrospectionError::Status(response.status));
        }
        if response.truncated {
            return Err(IntrospectionError::Shape);
        }
        let Ok(Value::Object(claims)) = serde_json::from_slice::<Value>(&response.body) else {
            return Err(IntrospectionError::Shape);
        };
        let active = claims
            .get("active")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(active.then_some(claims))
    }
}

/// `Basic base64(urlencode(id):urlencode(secret))`, as RFC 6749 §2.3.1 asks of OAuth clients.
pub(crate) fn basic_authorization(client_id: &str, client_secret: &str) -> String {
    use base64::Engine as _;
    let encode =
        |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(client_id), encode(client_secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}
