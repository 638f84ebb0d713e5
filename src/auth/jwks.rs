//! The authorization server's signing keys, fetched from its JWKS URL and cached.
//!
//! Readers take a snapshot (`Arc`) under a short read lock and never wait on the network
//! while keys they know are cached. An unknown `kid` triggers one refresh shared by every
//! caller waiting for it (single flight), at most once per `min_refresh` interval, so made-up
//! key ids cannot flood the key server. A failed fetch keeps the keys already cached: the
//! server goes on accepting tokens signed with them while the JWKS host is down.
//!
//! Each key's algorithm comes from the key (its type and curve, and `alg` when present),
//! never from a token: RSA keys verify RS256 only, P-256 keys ES256, Ed25519 keys EdDSA.
//! Symmetric (`oct`) keys are ignored, so HMAC is never accepted from a JWKS.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use url::Url;

use crate::client::{self, Failure, Pool};

/// Largest JWKS document accepted.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// A key the server verifies signatures with, and the one algorithm it is used with.
pub(crate) struct VerifyingKey {
    pub kid: Option<String>,
    pub algorithm: Algorithm,
    pub key: DecodingKey,
}

/// The answer to a key lookup.
pub(crate) enum Lookup {
    Found(Arc<VerifyingKey>),
    /// The key set was fetched and has no such key.
    Unknown,
    /// The key set has never been fetched: whether the key exists is not known.
    Unavailable,
}

pub(crate) struct JwksCache {
    uri: Url,
    client: Pool,
    keys: RwLock<Arc<KeySet>>,
    /// Held while fetching; holds when the last fetch started.
    refresh: tokio::sync::Mutex<Option<Instant>>,
    min_refresh: Duration,
    max_age: Duration,
}

#[derive(Default)]
struct KeySet {
    keys: Vec<Arc<VerifyingKey>>,
    /// `None` until the first successful fetch.
    fetched_at: Option<Instant>,
    /// How long these keys are fresh: the configured maximum, shortened by the key
    /// server's `Cache-Control: max-age`.
    fresh_for: Duration,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum JwksError {
    #[error("cannot fetch the JWKS: {0}")]
    Fetch(#[from] Failure),
    #[error("the JWKS host answered {0}")]
    Status(http::StatusCode),
    #[error("the JWKS is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the JWKS is not a JSON object with a `keys` array")]
    Shape,
}

impl JwksCache {
    pub fn new(uri: Url, client: Pool, min_refresh: Duration, max_age: Duration) -> JwksCache {
        JwksCache {
            uri,
            client,
            keys: RwLock::new(Arc::new(KeySet::default())),
            refresh: tokio::sync::Mutex::new(None),
            min_refresh,
            max_age,
        }
    }

    /// The key for `kid` (or the only key, when the token names none), fetching the JWKS
    /// when the key is not cached and the rate limit allows.
    pub async fn find(self: &Arc<Self>, kid: Option<&str>) -> Lookup {
        let snapshot = self.snapshot();
        if let Some(key) = snapshot.find(kid) {
            if snapshot
                .fetched_at
                .is_some_and(|at| at.elapsed() >= snapshot.fresh_for)
            {
                self.refresh_in_background();
            }
            return Lookup::Found(key);
        }
        self.refresh_rate_limited(&snapshot).await;
        let snapshot = self.snapshot();
        match snapshot.find(kid) {
            Some(key) => Lookup::Found(key),
            None if snapshot.fetched_at.is_none() => Lookup::Unavailable,
            None => Lookup::Unknown,
        }
    }

    /// Fetches the keys once now, so the first request does not wait; a failure is logged
    /// and retried on demand.
    pub async fn warm(self: &Arc<Self>) {
        let snapshot = self.snapshot();
        self.refresh_rate_limited(&snapshot).await;
    }

    fn snapshot(&self) -> Arc<KeySet> {
        match self.keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn replace(&self, set: KeySet) {
        let set = Arc::new(set);
        match self.keys.write() {
            Ok(mut keys) => *keys = set,
            Err(poisoned) => *poisoned.into_inner() = set,
        }
    }

    /// Refreshes unless someone else refreshed since `seen` was taken, or the last fetch
    /// started less than `min_refresh` ago. Callers arriving during a fetch wait for it.
    async fn refresh_rate_limited(&self, seen: &Arc<KeySet>) {
        let mut last = self.refresh.lock().await;
        if !Arc::ptr_eq(seen, &self.snapshot()) {
            return;
        }
        if last.is_some_and(|at| at.elapsed() < self.min_refresh) {
            return;
        }
        *last = Some(Instant::now());
        self.fetch_and_replace().await;
    }

    fn refresh_in_background(self: &Arc<Self>) {
        let cache = Arc::clone(self);
        tokio::spawn(async move {
            let Ok(mut last) = cache.refresh.try_lock() else {
                return;
            };
            if last.is_some_and(|at| at.elapsed() < cache.min_refresh) {
                return;
            }
            *last = Some(Instant::now());
            cache.fetch_and_replace().await;
        });
    }

    async fn fetch_and_replace(&self) {
        match self.fetch().await {
            Ok((keys, max_age)) => {
                let fresh_for = max_age.map_or(self.max_age, |max_age| max_age.min(self.max_age));
                tracing::debug!(jwks_uri = %self.uri, keys = keys.len(), fresh_s = fresh_for.as_secs(), "fetched signing keys");
                self.replace(KeySet {
                    keys,
                    fetched_at: Some(Instant::now()),
                    fresh_for,
                });
            }
            Err(error) => {
                let cached = self.snapshot().keys.len();
                tracing::warn!(jwks_uri = %self.uri, %error, cached, "signing keys not refreshed; keeping the cached ones");
            }
        }
    }

    /// The keys, and the `max-age` the key server gave them.
    async fn fetch(&self) -> Result<(Vec<Arc<VerifyingKey>>, Option<Duration>), JwksError> {
        let mut request = client::Request::to(http::Method::GET, &self.uri)?;
        request.headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/json"),
        );
        let response = self
            .client
            .send_within(&request, MAX_JWKS_BYTES, super::FETCH_TIMEOUT)
            .await?;
        if !response.status.is_success() {
            return Err(JwksError::Status(response.status));
        }
        if response.truncated {
            return Err(JwksError::TooLarge);
        }
        let max_age = cache_max_age(&response.headers);
        Ok((parse_jwks(&response.body)?, max_age))
    }
}

/// `max-age` of a `Cache-Control` header (`no-cache` and `no-store` count as 0).
pub(crate) fn cache_max_age(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').map(str::trim).find_map(|directive| {
        let directive = directive.to_ascii_lowercase();
        if directive == "no-cache" || directive == "no-store" {
            return Some(Duration::ZERO);
        }
        let seconds = directive.strip_prefix("max-age=")?;
        seconds
            .trim_matches('"')
            .parse()
            .ok()
            .map(Duration::from_secs)
    })
}

impl KeySet {
    fn find(&self, kid: Option<&str>) -> Option<Arc<VerifyingKey>> {
        match kid {
            Some(kid) => self
                .keys
                .iter()
                .find(|key| key.kid.as_deref() == Some(kid))
                .cloned(),
            None if self.keys.len() == 1 => self.keys.first().cloned(),
            None => None,
        }
    }
}

/// The usable signature keys of a JWKS document; keys of other types, uses or algorithms
/// are skipped, each with a debug line.
pub(crate) fn parse_jwks(body: &[u8]) -> Result<Vec<Arc<VerifyingKey>>, JwksError> {
    let document: Value = serde_json::from_slice(body).map_err(|_| JwksError::Shape)?;
    let entries = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or(JwksError::Shape)?;
    let mut keys = Vec::new();
    for entry in entries {
        let kid = entry.get("kid").and_then(Value::as_str);
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            tracing::debug!(
                kid,
                "skipping a JWKS entry that is not a key ferry understands"
            );
            continue;
        };
        match verifying_key(&jwk) {
            Some(key) => keys.push(Arc::new(key)),
            None => tracing::debug!(
                kid,
                "skipping a JWKS key that is not an RS256, ES256 or EdDSA signing key"
            ),
        }
    }
    Ok(keys)
}

fn verifying_key(jwk: &Jwk) -> Option<VerifyingKey> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|key_use| *key_use != PublicKeyUse::Signature)
    {
        return None;
    }
    let declared = jwk.common.key_algorithm;
    let algorithm = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) if matches!(declared, None | Some(KeyAlgorithm::RS256)) => {
            Algorithm::RS256
        }
        AlgorithmParameters::EllipticCurve(params)
            if params.curve == EllipticCurve::P256
                && matches!(declared, None | Some(KeyAlgorithm::ES256)) =>
        {
            Algorithm::ES256
        }
        AlgorithmParameters::OctetKeyPair(params)
            if params.curve == EllipticCurve::Ed25519
                && matches!(declared, None | Some(KeyAlgorithm::EdDSA)) =>
        {
            Algorithm::EdDSA
        }
        _ => return None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(VerifyingKey {
        kid: jwk.common.key_id.clone(),
        algorithm,
        key,
    })
}
