//! The requests that follow an operation's call on the same operation: a long-running
//! operation's polls, the fetch of its result, its cancel. [`crate::run::follow`] decides
//! when to send them and what their answers mean; this is how they are sent.
//!
//! Every one is a request without a body, with the API's own credential as the call [`Sent`]
//! it (the token it ended with, when a refused one was replaced), on the API's own origin (a
//! location elsewhere is never fetched), within the call's timeout and size cap, and its
//! answer is redacted as the call's was. A task's look, which follows no call of its own,
//! asks for the credential afresh ([`Upstream::sent_for`]).

use std::sync::Arc;

use http::header::HeaderValue;
use http::{HeaderMap, Method};
use tokio::time::Instant;

use super::credential::Credential;
use super::part::Part;
use super::redact::Secrets;
use super::{Answer, Attempt, CallError, CallStats, Clock, Route, Upstream, response};
use crate::auth::Principal;
use crate::catalog::OperationPlan;
use crate::client;
use crate::trace;

/// What a call's requests were sent with, for the requests that follow it: ferry's obtained
/// credential, when the API's is obtained, and the secrets answers are redacted of with it.
/// Opaque: it leaves `upstream` only to come back.
#[derive(Default)]
pub struct Sent {
    pub(super) authorization: Option<HeaderValue>,
    pub(super) secrets: Option<Arc<Secrets>>,
}

/// One caller's way back to an operation it called: see the module's comment.
pub struct Followup<'a> {
    upstream: &'a Upstream,
    route: &'a Route,
    tool: &'a OperationPlan,
    principal: &'a Principal,
    trace: &'a trace::Context,
    /// ferry's obtained credential for this caller, when the API's credential is obtained.
    authorization: Option<HeaderValue>,
    /// The secrets answers are redacted of, with the obtained token among them.
    secrets: Option<Arc<Secrets>>,
    started: Instant,
}

impl Upstream {
    /// ferry's credential for `route`'s API as `principal` would be sent it now: a cache
    /// look-up, but for a token that has to be fetched (bounded by the token client).
    pub async fn sent_for(&self, route: &Route, principal: &Principal) -> Result<Sent, CallError> {
        let part = &self.inner.apis[route.api];
        let Some(Credential::Obtained(source)) = &part.credential else {
            return Ok(Sent::default());
        };
        let authorization = source
            .authorization(principal)
            .await
            .map_err(CallError::Credential)?;
        let secrets = part.secrets_with(&self.inner.secrets, &authorization);
        Ok(Sent {
            authorization: Some(authorization),
            secrets,
        })
    }

    /// The way back to `tool` (by its `route`) for `principal`, with what its call was
    /// `sent` with, within the timeout of a call that started at `started`.
    pub fn followup<'a>(
        &'a self,
        (route, tool): (&'a Route, &'a OperationPlan),
        principal: &'a Principal,
        trace: &'a trace::Context,
        started: Instant,
        sent: Sent,
    ) -> Followup<'a> {
        Followup {
            upstream: self,
            route,
            tool,
            principal,
            trace,
            authorization: sent.authorization,
            secrets: sent.secrets,
            started,
        }
    }
}

impl<'a> Followup<'a> {
    /// The operation followed.
    pub fn tool(&self) -> &'a OperationPlan {
        self.tool
    }

    /// When the call's time is up.
    pub fn deadline(&self) -> Instant {
        super::deadline_after(self.started, self.tool.call.timeout)
    }

    /// The request target `url` (as the API wrote it, relative to the base URL or absolute)
    /// names, when it is on the API's origin.
    pub fn target(&self, url: &str) -> Option<http::Uri> {
        let part = self.part();
        let mut joined = part.base_url.join(url).ok()?;
        if let Some(Credential::Query { name, value }) = &part.credential
            && !joined.query_pairs().any(|(key, _)| key == name.as_str())
        {
            joined.query_pairs_mut().append_pair(name, value);
        }
        let uri = http::Uri::try_from(joined.as_str()).ok()?;
        part.same_origin(&uri).then_some(uri)
    }

    /// One `method` request to `target` (from [`Followup::target`]), without a body, within
    /// the call's deadline, its answer shaped as the tool's; `None` when no whole answer came.
    pub async fn send(
        &self,
        method: Method,
        target: http::Uri,
        stats: &mut CallStats,
    ) -> Option<Answer> {
        let mut request = client::Request {
            idempotent: super::idempotent(&method),
            method,
            uri: target,
            headers: HeaderMap::new(),
            body: None,
        };
        self.part().authorize(
            &mut request.headers,
            self.authorization.as_ref(),
            self.principal,
        )?;
        super::trace_headers(&mut request.headers, self.trace);
        let mut clock = Clock {
            started: self.started,
            stats,
            context: self.trace,
            progress: None,
        };
        let sent = self
            .upstream
            .attempt_traced(self.tool, self.route, &mut request, &mut clock, 0)
            .await;
        match sent {
            Attempt::Answered(Ok(observed)) => Some(self.shape(observed)),
            Attempt::Answered(Err(failure)) => {
                tracing::info!(tool = %self.tool.name, error = %failure.detail(), "a request following a long-running operation got no answer");
                None
            }
            Attempt::Stopped(..) => {
                tracing::info!(tool = %self.tool.name, "a request following a long-running operation got a stream that stopped before its end");
                None
            }
            Attempt::TimedOut => None,
        }
    }

    /// `observed` as an answer of the tool.
    fn shape(&self, observed: client::Response) -> Answer {
        let part = self.part();
        let settings = &self.tool.call;
        response::shape(
            observed,
            &response::Shaping {
                tool: &self.tool.name,
                limit_bytes: settings.max_response_bytes,
                report_headers: &settings.report_headers,
                next: None,
                authenticated: part.credential.is_some(),
                secrets: self
                    .secrets
                    .as_deref()
                    .unwrap_or(&self.upstream.inner.secrets),
                query_credential: match &part.credential {
                    Some(Credential::Query { name, .. }) => Some(name),
                    _ => None,
                },
            },
        )
    }

    fn part(&self) -> &'a Part {
        &self.upstream.inner.apis[self.route.api]
    }
}
