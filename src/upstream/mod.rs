//! Calling the upstream APIs: an operation's tool call becomes one HTTP request (plus retries
//! where they are safe), and what came back becomes an [`Outcome`]: an answer that keeps what
//! the API said, or a [`CallError`] that knows whose fault it is. No MCP is written here, and
//! nothing above one operation's call: a composite tool's workflow is run by `crate::run`,
//! each step a call of this module's.
//!
//! [`request`] turns arguments into a request by the tool's plan, [`response`] turns the
//! answer into an [`Answer`]; this module owns credentials, timeouts, the size cap and
//! retries, and sends each attempt through [`crate::client`]'s pools. A tool's call settings
//! were resolved by compile ([`crate::catalog::CallSettings`]); what is left to decide before the first call (the
//! base URL, the pools, credentials) is decided in [`Upstream::new`], and each tool's
//! [`Route`] once, by whoever serves it.
//!
//! An [`Upstream`] holds one part per API of the catalog (its base URL, checked once by
//! `address`; ferry's credential for it, made by `credential`; the identity header) and one
//! pool per distinct connect timeout, shared by every API; a [`Route`] names the tool's API
//! and pool. Every API's secrets are redacted from every API's answers.
//!
//! What a long-running operation's later requests need (its polls, its result, its cancel)
//! is a [`Followup`]; when to send them is `crate::run::follow`'s to decide.
//!
//! Redirects are never followed, and a request that would leave its API's origin is refused.
//! A retry waits for the backoff or `Retry-After` only when the wait ends before the call's
//! deadline (otherwise the answer that came is the result); a response head that cannot be
//! read (over the client's limits, or not HTTP) is the upstream's answer, reported as such
//! and never retried.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use http::header::{self, HeaderValue};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::auth::Principal;
use crate::catalog::{Catalog, NextPage, OperationPlan, Tool};
use crate::client::{self, Pool, Tls, TlsError};
use crate::trace;

mod address;
mod attempt;
mod body;
mod credential;
mod followup;
mod outcome;
mod part;
mod random;
pub(crate) mod redact;
pub(crate) mod request;
pub(crate) mod response;
mod retry;
mod span;
pub mod stream;

use address::base_url;
use attempt::Attempt;
use credential::{Credential, credential, token_url};
use part::Part;
pub(crate) use random::uuid_text;
use random::uuid_v4;
use redact::Secrets;
pub(crate) use retry::{backoff, deadline_after, retry_after, retry_after_value, retry_wait};

pub use followup::{Followup, Sent};
pub use outcome::{
    Answer, CallError, CallStats, Fault, Followed, Handling, Http, Outcome, Page, Pending,
    Redacted, Stopped, Streamed, Unfollowed,
};
pub use request::ArgumentError;
pub use response::REPORTED_HEADERS;
pub use stream::{Progress, Sequence};

/// The pooled client that calls one upstream API for every tool of a catalog. Cheap to
/// clone: clones share the connection pools, which every serving thread shares (a kept
/// connection is taken again only on the thread that last used it; see [`client::pool`]).
#[derive(Debug, Clone)]
pub struct Upstream {
    inner: Arc<Inner>,
    /// Where each attempt's span goes; see [`Upstream::with_traces`].
    traces: Option<trace::Exporter>,
}

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("no upstream base URL: name one with `upstream:` or --upstream")]
    NoBaseUrl,
    #[error("API `{api}` has no upstream base URL: name one with `apis.{api}.upstream`")]
    NoApiBaseUrl { api: String },
    #[error("API `{api}`: {error}")]
    Api {
        api: String,
        error: Box<UpstreamError>,
    },
    #[error("invalid upstream base URL: {0}")]
    InvalidBaseUrl(&'static str),
    #[error("environment variable {env} is not set or empty (named by upstream_auth)")]
    MissingSecret { env: String },
    #[error(
        "environment variable {env} (named by upstream_auth) holds a value that cannot be sent"
    )]
    InvalidSecret { env: String },
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error(transparent)]
    Credential(#[from] crate::auth::outbound::OutboundError),
}

impl UpstreamError {
    /// This error, said of the API with id `api` when there are several.
    fn of(self, api: &str) -> UpstreamError {
        match api {
            "" => self,
            api => UpstreamError::Api {
                api: api.to_owned(),
                error: Box::new(self),
            },
        }
    }
}

impl Upstream {
    /// Builds the client for `catalog`'s upstream, reading credentials from the process
    /// environment; fails when it cannot be called at all (no base URL, credentials missing
    /// from the environment).
    pub fn new(catalog: &Catalog) -> Result<Upstream, UpstreamError> {
        Upstream::with_env(catalog, |name| std::env::var(name).ok())
    }

    /// As [`Upstream::new`], with the environment given as a function.
    pub fn with_env(
        catalog: &Catalog,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Upstream, UpstreamError> {
        Upstream::build(catalog, env, Tls::platform)
    }

    /// As [`Upstream::with_env`], trusting what `tls` trusts instead of the platform's store.
    #[cfg(test)]
    pub(crate) fn with_tls(
        catalog: &Catalog,
        env: impl Fn(&str) -> Option<String>,
        tls: Tls,
    ) -> Result<Upstream, UpstreamError> {
        Upstream::build(catalog, env, || Ok(tls))
    }

    fn build(
        catalog: &Catalog,
        env: impl Fn(&str) -> Option<String>,
        tls: impl FnOnce() -> Result<Tls, TlsError>,
    ) -> Result<Upstream, UpstreamError> {
        if catalog.apis.is_empty() {
            return Err(UpstreamError::NoBaseUrl);
        }
        let mut bases = Vec::with_capacity(catalog.apis.len());
        for api in &catalog.apis {
            let base = match (api.upstream.as_deref(), api.id.as_str()) {
                (Some(base), _) => base_url(base).map_err(|error| error.of(&api.id))?,
                (None, "") => return Err(UpstreamError::NoBaseUrl),
                (None, id) => return Err(UpstreamError::NoApiBaseUrl { api: id.to_owned() }),
            };
            bases.push(base);
        }
        // TLS is set up (the platform's trust store read) only where something is called
        // over HTTPS: an upstream, or a token endpoint a credential comes from.
        let secure = catalog.apis.iter().zip(&bases).any(|(api, base)| {
            base.scheme() == "https"
                || api
                    .upstream_auth
                    .as_ref()
                    .and_then(token_url)
                    .is_some_and(|url| url.scheme() == "https")
        });
        let tls = if secure { Some(tls()?) } else { None };
        // One pool per distinct connect timeout (usually just one), shared by every API (a
        // pool keeps connections by origin): the timeout belongs to the connections, not to
        // a request. An API's token endpoint is called on its API's default pool.
        let pool = |ms: u64| Pool::new(Duration::from_millis(ms), tls.clone());
        let mut clients: Vec<(u64, Pool)> = Vec::new();
        let timeouts = catalog.apis.iter().map(|api| api.connect_timeout_ms);
        let tools = catalog.tools.iter().filter_map(Tool::operation);
        for ms in timeouts.chain(tools.map(|tool| tool.call.connect_timeout_ms)) {
            if !clients.iter().any(|(known, _)| *known == ms) {
                clients.push((ms, pool(ms)));
            }
        }
        let mut credentials = Vec::with_capacity(catalog.apis.len());
        let mut secrets = Vec::new();
        for api in &catalog.apis {
            let (credential, found) = match &api.upstream_auth {
                Some(auth) => {
                    let index = pool_index(&clients, api.connect_timeout_ms).unwrap_or(0);
                    credential(auth, &env, &clients[index].1).map_err(|error| error.of(&api.id))?
                }
                None => (None, Vec::new()),
            };
            credentials.push(credential);
            secrets.extend(found);
        }
        // Every API's secrets are redacted from every API's answers: an upstream that echoes
        // what another was sent (or holds it) gives nothing away either.
        let secrets = Secrets::new(secrets);
        let apis = catalog
            .apis
            .iter()
            .zip(bases)
            .zip(credentials)
            .map(|((api, base_url), credential)| Part {
                id: api.id.clone(),
                base: base_url.as_str().trim_end_matches('/').to_string(),
                base_path: base_url.path().trim_end_matches('/').to_string(),
                base_url,
                credential,
                obtained_secrets: Mutex::default(),
                identity_header: api.identity_header.clone(),
            })
            .collect();
        Ok(Upstream {
            inner: Arc::new(Inner {
                clients,
                apis,
                secrets,
            }),
            traces: None,
        })
    }

    /// What a call of `tool` needs that its plan alone does not say, decided once: its
    /// route (see [`request::Route`]), the pool its connect timeout chose and its API's
    /// part. A tool of another catalog than this client's, whose connect timeout has no pool
    /// or whose API is not called here, is called on the first's.
    pub fn route(&self, tool: &OperationPlan) -> Route {
        let inner = &self.inner;
        Route {
            request: request::Route::new(&tool.plan),
            pool: pool_index(&inner.clients, tool.call.connect_timeout_ms).unwrap_or(0),
            api: inner
                .apis
                .iter()
                .position(|part| part.id == tool.api)
                .unwrap_or(0),
        }
    }

    /// Exports a span for each attempt of a sampled call to `exporter`.
    pub fn with_traces(mut self, exporter: Option<trace::Exporter>) -> Upstream {
        self.traces = exporter;
        self
    }

    /// The URL a workflow step's request goes to, for `$url`: as sent, but without a credential ferry
    /// adds to the query, which is never a value a workflow reads.
    pub(crate) fn step_url(
        &self,
        route: &Route,
        tool: &OperationPlan,
        arguments: &Map<String, Value>,
    ) -> Option<String> {
        let extras = request::Extras {
            page_size: None,
            link_cursor: None,
            query_credential: None,
        };
        let prepared = request::build(&tool.plan, &route.request, arguments, extras).ok()?;
        self.target(route.api, &prepared.path_and_query)
            .ok()
            .map(|uri| uri.to_string())
    }

    /// The request target a call with `path_and_query` to the API with index `api` (see
    /// [`Route`]) is sent to, before the origin check; what the fuzzing harness checks.
    pub(crate) fn target(
        &self,
        api: usize,
        path_and_query: &str,
    ) -> Result<http::Uri, &'static str> {
        self.inner.apis[api.min(self.inner.apis.len() - 1)].uri(path_and_query)
    }

    /// The pool with index `index` (by connect timeout).
    fn client(&self, index: usize) -> &Pool {
        let clients = &self.inner.clients;
        &clients[index.min(clients.len() - 1)].1
    }

    /// Calls `tool` once, with arguments already validated against its input schema,
    /// preparing its [`Route`] first; a server prepares each tool's once and calls
    /// [`Upstream::call_on`]. An answer of any status, the upstream's refusal included, is
    /// an [`Answer`]; a long-running operation's `202` too, which `crate::run::follow`
    /// follows.
    pub async fn call(&self, tool: &Tool, arguments: &Map<String, Value>) -> Outcome {
        self.call_as(tool, arguments, &Principal::anonymous()).await
    }

    /// [`Upstream::call`] on behalf of `principal`.
    pub async fn call_as(
        &self,
        tool: &Tool,
        arguments: &Map<String, Value>,
        principal: &Principal,
    ) -> Outcome {
        // A composite tool is run by its steps, never sent as one request.
        let Some(operation) = tool.operation() else {
            return Err(CallError::Request);
        };
        let mut stats = CallStats::default();
        self.call_on(
            &self.route(operation),
            operation,
            arguments,
            principal,
            &mut stats,
        )
        .await
    }

    /// Calls `tool` by its prepared `route` on behalf of `principal`: its subject goes in
    /// the identity header when one is configured, and its validated token is what token
    /// exchange trades. The caller's own credentials are never sent. `stats` counts the
    /// requests sent and the time spent on them, for the audit log and the metrics. The call
    /// starts a trace of its own, and a fresh idempotency key; see [`Upstream::exchange`].
    pub async fn call_on(
        &self,
        route: &Route,
        tool: &OperationPlan,
        arguments: &Map<String, Value>,
        principal: &Principal,
        stats: &mut CallStats,
    ) -> Outcome {
        let trace = trace::Context::new(None, None);
        let context = CallContext {
            idempotency_key: None,
            trace: &trace,
            progress: None,
        };
        self.exchange(route, tool, arguments, principal, &context, stats)
            .await
            .0
    }

    /// [`Upstream::call_on`] within what `context` carries, with what its requests were
    /// [`Sent`] with (a long-running operation's `202` is the answer: `crate::run::follow`
    /// follows it through a [`Followup`] made of it): the caller's trace (each attempt
    /// carries a `traceparent` naming a span of its own under the trace's, and its
    /// `tracestate`; these replace any the arguments would set, so no caller's value reaches
    /// the upstream but through the trace), and the idempotency key to send where the tool
    /// has an `idempotency_key_header` (a confirmed call's nonce, so the API deduplicates a
    /// confirmation used twice; `None` makes a fresh one).
    pub async fn exchange(
        &self,
        route: &Route,
        tool: &OperationPlan,
        arguments: &Map<String, Value>,
        principal: &Principal,
        context: &CallContext<'_>,
        stats: &mut CallStats,
    ) -> (Outcome, Sent) {
        let CallContext {
            idempotency_key,
            trace: context,
            progress,
        } = *context;
        let started = Instant::now();
        let settings = &tool.call;
        let inner = &self.inner;
        let part = &inner.apis[route.api];
        let query_credential = match &part.credential {
            Some(Credential::Query { name, value }) => Some((name.as_str(), value.as_str())),
            _ => None,
        };
        let extras = request::Extras {
            page_size: settings
                .page_size
                .as_ref()
                .map(|(argument, size)| (argument.as_str(), *size)),
            link_cursor: settings.link_cursor(),
            query_credential,
        };
        let prepared = match request::build(&tool.plan, &route.request, arguments, extras) {
            Ok(prepared) => prepared,
            Err(error) => {
                tracing::debug!(tool = %tool.name, argument = %error.argument, "argument refused");
                return (Err(CallError::Argument(error)), Sent::default());
            }
        };
        let obtained = match &part.credential {
            Some(Credential::Obtained(source)) => match source.authorization(principal).await {
                Ok(value) => Some((source.as_ref(), value)),
                Err(error) => {
                    tracing::warn!(tool = %tool.name, %error, "no upstream credential for this call");
                    return (Err(CallError::Credential(error)), Sent::default());
                }
            },
            _ => None,
        };
        let authorization = obtained.as_ref().map(|(_, value)| value);
        let Some(mut request) = self.request(
            tool,
            part,
            prepared,
            authorization,
            principal,
            idempotency_key,
        ) else {
            return (Err(CallError::Request), Sent::default());
        };
        trace_headers(&mut request.headers, context);
        // An obtained token the upstream echoes is redacted like a configured secret. One it
        // refuses (401) is forgotten, and the call is sent once more with a fresh token: a
        // request refused for its credentials did nothing, whatever its method.
        //
        // A token is redacted from the results of the calls that sent it. A client
        // credentials token is every call's while it lasts; the one it replaced was refused
        // or about to expire. An exchanged token belongs to one caller: another caller's
        // result could only carry it if the upstream handed one caller's data to another,
        // which no redaction of ours would contain.
        let with_token = |value: &HeaderValue| part.secrets_with(&inner.secrets, value);
        let secrets = authorization.and_then(with_token);
        let mut sent = Sent {
            authorization: authorization.cloned(),
            secrets: secrets.clone(),
        };
        let again = obtained.as_ref().map(|_| request.clone());
        let refused = std::sync::atomic::AtomicBool::new(false);
        let forget = obtained.as_ref().map(|(source, value)| {
            let refused = &refused;
            move || {
                refused.store(true, std::sync::atomic::Ordering::Relaxed);
                source.invalidate(principal, value);
            }
        });
        stats.calls += 1;
        let mut result = self
            .send(
                tool,
                route,
                request,
                Clock {
                    started,
                    stats,
                    context,
                    progress,
                },
                secrets.as_deref().unwrap_or(&inner.secrets),
                forget.as_ref().map(|forget| forget as &(dyn Fn() + Sync)),
            )
            .await;
        if refused.load(std::sync::atomic::Ordering::Relaxed)
            && let (Some((source, old)), Some(mut again)) = (obtained.as_ref(), again)
            && let Ok(fresh) = source.authorization(principal).await
            && fresh != old
        {
            tracing::info!(tool = %tool.name, "upstream refused ferry's token; retrying once with a new one");
            let secrets = with_token(&fresh);
            again.headers.insert(header::AUTHORIZATION, fresh.clone());
            // What follows the call sends the token it ended with, and redacts it.
            sent = Sent {
                authorization: Some(fresh),
                secrets: secrets.clone(),
            };
            result = self
                .send(
                    tool,
                    route,
                    again,
                    Clock {
                        started,
                        stats,
                        context,
                        progress,
                    },
                    secrets.as_deref().unwrap_or(&inner.secrets),
                    None,
                )
                .await;
        }
        tracing::debug!(
            tool = %tool.name,
            fault = ?result.as_ref().map_or_else(|error| Some(error.fault()), Answer::fault),
            duration_us = started.elapsed().as_micros() as u64,
            "upstream exchange finished"
        );
        if let Ok(answer) = &mut result
            && let Some(page) = &mut answer.handling.page
        {
            page.next_arguments = next_arguments(tool, route, arguments, page);
        }
        (result, sent)
    }
}

/// The arguments that ask for the page after `page`, when it names one ferry can pass back.
fn next_arguments(
    tool: &OperationPlan,
    route: &Route,
    arguments: &Map<String, Value>,
    page: &Page,
) -> Option<Map<String, Value>> {
    let cursor = page.cursor.as_deref().filter(|_| page.more)?;
    match tool.call.next.as_ref()? {
        NextPage::Link { cursor_argument } => Some(request::next_page_arguments(
            &tool.plan,
            &route.request,
            arguments,
            cursor_argument,
            cursor,
        )),
        NextPage::Field {
            cursor_argument, ..
        } => {
            let mut next = arguments.clone();
            let value = match cursor.parse::<serde_json::Number>() {
                Ok(number) if page.cursor_number => Value::Number(number),
                _ => Value::from(cursor),
            };
            next.insert(cursor_argument.clone(), value);
            Some(next)
        }
    }
}

struct Inner {
    /// Pools by connect timeout in milliseconds, shared by every API.
    clients: Vec<(u64, Pool)>,
    /// One part per API of the catalog, in its order.
    apis: Vec<Part>,
    /// Every API's secret values, redacted in any form from anything any result carries.
    secrets: Secrets,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inner")
            .field("apis", &self.apis)
            .finish_non_exhaustive()
    }
}

/// What a call carries beside its tool and arguments; see [`Upstream::exchange`].
#[derive(Clone, Copy)]
pub struct CallContext<'a> {
    pub idempotency_key: Option<&'a str>,
    pub trace: &'a trace::Context,
    /// Where a streamed answer's progress is told as its items come, when the caller asked.
    pub progress: Option<&'a dyn Progress>,
}

/// When a call started, what its requests have cost so far, and the trace it is part of:
/// what each of its attempts is timed by and named under.
struct Clock<'s> {
    started: Instant,
    stats: &'s mut CallStats,
    context: &'s trace::Context,
    progress: Option<&'s dyn Progress>,
}

/// A tool's route, pool and API: see [`Upstream::route`].
#[derive(Debug, Clone)]
pub struct Route {
    request: request::Route,
    /// Index of the pooled client with the tool's connect timeout.
    pool: usize,
    /// Index of the tool's API's part.
    api: usize,
}

/// The index of the pool in `clients` with connect timeout `ms`.
fn pool_index(clients: &[(u64, Pool)], ms: u64) -> Option<usize> {
    clients.iter().position(|(known, _)| *known == ms)
}

impl Upstream {
    fn request(
        &self,
        tool: &OperationPlan,
        part: &Part,
        prepared: request::Prepared,
        authorization: Option<&HeaderValue>,
        principal: &Principal,
        idempotency_key: Option<&str>,
    ) -> Option<client::Request> {
        let uri = match part.uri(&prepared.path_and_query) {
            Ok(uri) => uri,
            Err(error) => {
                tracing::warn!(tool = %tool.name, error, "upstream url did not parse");
                return None;
            }
        };
        // Arguments are encoded so they cannot move the host; this guards the invariant.
        if !part.same_origin(&uri) {
            tracing::error!(tool = %tool.name, "request would leave the upstream's origin; refused");
            return None;
        }
        let method = &tool.plan.method;
        let mut request = client::Request {
            method: method.clone(),
            uri,
            headers: prepared.headers,
            body: None,
            idempotent: idempotent(method),
        };
        part.authorize(&mut request.headers, authorization, principal)?;
        let headers = &mut request.headers;
        if let Some(name) = &tool.call.idempotency_header
            && !headers.contains_key(name)
        {
            // One fresh key per tool call (or the one given), reused by each retry of the
            // call; a key the caller gave as an argument is kept.
            let key = idempotency_key.map_or_else(uuid_v4, str::to_string);
            if let Ok(value) = HeaderValue::from_str(&key) {
                headers.insert(name.clone(), value);
            }
        }
        if let Some(body) = prepared.body {
            headers.insert(header::CONTENT_TYPE, body.content_type);
            request.body = Some(body.bytes.into());
        }
        Some(request)
    }
}

/// Whether sending a request with `method` twice changes nothing more than sending it once
/// (RFC 9110 §9.2.2), so that one that may have reached the upstream can be sent again: what
/// the IANA HTTP Method Registry says of it (`annotations::idempotent`).
fn idempotent(method: &Method) -> bool {
    crate::catalog::annotations::idempotent(method.as_str())
}

/// Takes out any `traceparent` and `tracestate` the plan set from the arguments (a header
/// parameter of those names) and puts in `context`'s `tracestate`; each attempt adds its own
/// `traceparent`.
fn trace_headers(headers: &mut http::HeaderMap, context: &trace::Context) {
    headers.remove(trace::TRACEPARENT);
    match &context.state {
        Some(state) => {
            headers.insert(trace::TRACESTATE, state.clone());
        }
        None => {
            headers.remove(trace::TRACESTATE);
        }
    }
}

#[cfg(test)]
mod tests;
