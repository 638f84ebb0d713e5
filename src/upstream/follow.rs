//! Following a long-running operation from its `202 Accepted` to its end, within the call:
//! the status location the plan names is polled until the operation completes, fails or is
//! cancelled, and the final result is answered as the tool's result would have been.
//!
//! Every poll is a GET with the API's own credential, on the API's own origin (a status or
//! result URL elsewhere is never fetched), within the call's timeout and size cap, and its
//! answer is redacted as any answer is. Between polls ferry waits for the API's
//! `Retry-After`, else the plan's interval (never less than [`MIN_WAIT`]); a wait that would
//! end past the call's deadline is not begun. A poll that gets no answer is tried again at
//! the next interval: it says nothing of the operation. When the deadline comes first, the
//! call ends in [`Unfollowed::Running`], which names the status location: the operation
//! was accepted and is not lost from view.
//!
//! A caller that follows the operation itself (a task) gets the status location at once
//! ([`Unfollowed::Task`]), and [`look`] looks at it once per ask: one poll (and, when it
//! ended, the result fetched) or one cancel, holding nothing between asks.

use std::time::Duration;

use http::header::HeaderValue;
use http::{HeaderMap, Method, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::outcome::{Answer, CallError, CallStats, Followed, Outcome, Pending, Unfollowed};
use super::part::Part;
use super::redact::Secrets;
use super::{
    Attempt, Clock, Route, Upstream, deadline_after, response, retry_after, trace_headers,
};
use crate::auth::Principal;
use crate::catalog::OperationPlan;
use crate::catalog::long_running::{LongRunning, ResultAt, State, UrlAt};
use crate::client::{self, Response};
use crate::trace;

/// The shortest wait between two polls, whatever `Retry-After` says: no API is polled in a
/// loop that does not wait.
pub const MIN_WAIT: Duration = Duration::from_millis(10);

/// What following one operation needs of its call.
pub(super) struct Following<'a> {
    pub(super) upstream: &'a Upstream,
    pub(super) tool: &'a OperationPlan,
    pub(super) plan: &'a LongRunning,
    pub(super) route: &'a Route,
    /// ferry's obtained credential for this call, when the API's credential is obtained.
    pub(super) authorization: Option<&'a HeaderValue>,
    pub(super) principal: &'a Principal,
    pub(super) trace: &'a trace::Context,
    pub(super) secrets: &'a Secrets,
    /// When the call started: its deadline is its timeout from then.
    pub(super) started: Instant,
    /// The caller follows the operation itself, as a task: the status location is the
    /// call's answer ([`Unfollowed::Task`]).
    pub(super) task: bool,
}

/// What one look at a long-running operation found.
#[derive(Debug)]
// Held inline: one per look, moved once, and boxing the outcome would allocate on the
// look that ends the operation to save stack on the ones that do not.
#[allow(clippy::large_enum_variant)]
pub enum Polled {
    /// It is still working: look again after this long.
    Working(Duration),
    /// It ended: the tool's result, as a call that followed it would have answered.
    Ended(Outcome),
}

/// What a look at an operation a task follows does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// GET its status once.
    Poll,
    /// Send the plan's cancel method to its status location once.
    Cancel,
}

/// One look at the long-running operation `tool` started, whose status the API named
/// `status`, on behalf of `principal`, within the tool's timeout and size cap: what a
/// task's `tasks/get` (or `tasks/cancel`) does, holding nothing between looks. A status
/// location off the API's origin is never fetched; a tool that is not long-running (or
/// cannot cancel, for [`Look::Cancel`]) sends nothing and ends in [`CallError::Request`].
pub async fn look(
    upstream: &Upstream,
    (route, tool): (&Route, &OperationPlan),
    status: &str,
    principal: &Principal,
    trace: &trace::Context,
    look: Look,
    stats: &mut CallStats,
) -> Polled {
    let inner = &upstream.inner;
    let part = &inner.apis[route.api];
    let Some(plan) = tool.long_running.as_deref() else {
        return Polled::Ended(Err(CallError::Request));
    };
    let obtained = match &part.credential {
        Some(super::credential::Credential::Obtained(source)) => {
            match source.authorization(principal).await {
                Ok(value) => Some(value),
                Err(error) => return Polled::Ended(Err(CallError::Credential(error))),
            }
        }
        _ => None,
    };
    let secrets = obtained
        .as_ref()
        .and_then(|value| part.secrets_with(&inner.secrets, value));
    let following = Following {
        upstream,
        tool,
        plan,
        route,
        authorization: obtained.as_ref(),
        principal,
        trace,
        secrets: secrets.as_deref().unwrap_or(&inner.secrets),
        started: Instant::now(),
        task: true,
    };
    let Some(target) = following.target(status) else {
        return Polled::Ended(Err(CallError::Pending(Pending {
            status: status.to_string(),
            why: Unfollowed::OtherOrigin,
        })));
    };
    stats.calls += 1;
    match (look, &plan.cancel) {
        (Look::Poll, _) => following.poll(status, &target, stats).await,
        (Look::Cancel, Some(method)) => match following.send(method.clone(), target, stats).await {
            Some(observed) => Polled::Ended(Ok(following.shape(observed))),
            None => Polled::Ended(Err(CallError::Timeout {
                timeout_ms: tool.call.timeout.as_millis() as u64,
            })),
        },
        (Look::Cancel, None) => Polled::Ended(Err(CallError::Request)),
    }
}

impl Following<'_> {
    /// Follows the operation `accepted` started to its end; `accepted` itself when it names
    /// no status location.
    pub(super) async fn follow(&self, accepted: Answer, stats: &mut CallStats) -> Outcome {
        let tool = &self.tool.name;
        let Some(status) = url_in(&accepted, &self.plan.status) else {
            tracing::warn!(tool = %tool, "the 202 names no status location where the plan says; answered as it is");
            return Ok(accepted);
        };
        let Some(target) = self.target(&status) else {
            tracing::warn!(tool = %tool, "the status location is not on the API's origin; not fetched");
            return Err(CallError::Pending(Pending {
                status,
                why: Unfollowed::OtherOrigin,
            }));
        };
        let deadline = deadline_after(self.started, self.tool.call.timeout);
        let running = || {
            CallError::Pending(Pending {
                status: status.clone(),
                why: Unfollowed::Running {
                    timeout_ms: self.tool.call.timeout.as_millis() as u64,
                },
            })
        };
        if self.task {
            return Err(CallError::Pending(Pending {
                status,
                why: Unfollowed::Task,
            }));
        }
        let mut wait = self.wait(&accepted.http.headers);
        loop {
            if Instant::now() + wait >= deadline {
                return Err(running());
            }
            tokio::time::sleep(wait).await;
            match self.poll(&status, &target, stats).await {
                Polled::Working(next) => wait = next,
                Polled::Ended(outcome) => return outcome,
            }
        }
    }

    /// One look at the operation whose status is at `status` (`target`): still working
    /// (and how long to wait before the next look), or its end.
    async fn poll(&self, status: &str, target: &http::Uri, stats: &mut CallStats) -> Polled {
        let Some(observed) = self.get(target.clone(), stats).await else {
            return Polled::Working(self.plan.interval.max(MIN_WAIT));
        };
        let answer = self.shape(observed.clone());
        let state = self.state(&answer);
        tracing::debug!(tool = %self.tool.name, status = answer.http.status.as_u16(), state = state.as_str(), "polled a long-running operation");
        let followed = Box::new(Followed {
            status: status.to_string(),
            state,
        });
        match state {
            State::Working => Polled::Working(self.wait(&answer.http.headers)),
            State::Completed => {
                let mut result = self.result(observed, &answer, stats).await;
                if let Ok(answer) = &mut result {
                    answer.handling.operation = Some(followed);
                }
                Polled::Ended(result)
            }
            State::Failed | State::Cancelled => {
                let mut answer = answer;
                answer.handling.operation = Some(followed);
                Polled::Ended(Ok(answer))
            }
        }
    }

    /// How long to wait after an answer with `headers`: its `Retry-After`, else the plan's
    /// interval.
    fn wait(&self, headers: &[(http::HeaderName, String)]) -> Duration {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            if let Ok(value) = HeaderValue::from_str(value) {
                map.insert(name.clone(), value);
            }
        }
        retry_after(&map)
            .unwrap_or(self.plan.interval)
            .max(MIN_WAIT)
    }

    /// Where the operation is, as the status answer `answer` says.
    fn state(&self, answer: &Answer) -> State {
        let status = answer.http.status;
        if status.is_client_error() || status.is_server_error() {
            return State::Failed;
        }
        match &self.plan.state {
            Some(field) if status.is_success() => answer
                .json
                .as_ref()
                .and_then(|body| field.read(body))
                .unwrap_or(State::Working),
            _ if status == StatusCode::ACCEPTED => State::Working,
            _ => State::Completed,
        }
    }

    /// The final result of a completed operation, whose last status answer is `observed`
    /// (shaped as `answer`).
    async fn result(&self, observed: Response, answer: &Answer, stats: &mut CallStats) -> Outcome {
        // A redirect is HTTP's own word for where the result is.
        let fetch = match (&self.plan.result, &answer.location) {
            (_, Some(location)) if answer.http.status.is_redirection() => Some(location.clone()),
            (ResultAt::Fetch(place), _) => url_in(answer, place),
            _ => None,
        };
        if let Some(url) = fetch {
            let Some(target) = self.target(&url) else {
                return Err(CallError::Pending(Pending {
                    status: url,
                    why: Unfollowed::OtherOrigin,
                }));
            };
            return match self.get(target, stats).await {
                Some(observed) => Ok(self.shape(observed)),
                None => Err(CallError::Timeout {
                    timeout_ms: self.tool.call.timeout.as_millis() as u64,
                }),
            };
        }
        let mut result = self.shape(observed);
        if let ResultAt::Field(pointer) = &self.plan.result
            && let Some(value) = answer.json.as_ref().and_then(|body| body.pointer(pointer))
        {
            let value = value.clone();
            result.body = value.to_string().into_bytes();
            result.essence = Some("application/json".to_string());
            result.json = Some(value);
        }
        Ok(result)
    }

    /// The request target `url` (as the API wrote it, relative to the base URL or absolute)
    /// names, when it is on the API's origin.
    fn target(&self, url: &str) -> Option<http::Uri> {
        let part = self.part();
        let mut joined = part.base_url.join(url).ok()?;
        if let Some(super::credential::Credential::Query { name, value }) = &part.credential
            && !joined.query_pairs().any(|(key, _)| key == name.as_str())
        {
            joined.query_pairs_mut().append_pair(name, value);
        }
        let uri = http::Uri::try_from(joined.as_str()).ok()?;
        part.same_origin(&uri).then_some(uri)
    }

    /// One GET of `target` within the call's deadline; `None` when no answer came.
    async fn get(&self, target: http::Uri, stats: &mut CallStats) -> Option<Response> {
        self.send(Method::GET, target, stats).await
    }

    /// One `method` request to `target`, without a body, within the call's deadline; `None`
    /// when no answer came.
    async fn send(
        &self,
        method: Method,
        target: http::Uri,
        stats: &mut CallStats,
    ) -> Option<Response> {
        let mut request = client::Request {
            idempotent: super::idempotent(&method),
            method,
            uri: target,
            headers: HeaderMap::new(),
            body: None,
        };
        self.part()
            .authorize(&mut request.headers, self.authorization, self.principal)?;
        trace_headers(&mut request.headers, self.trace);
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
            Attempt::Answered(Ok(observed)) => Some(observed),
            Attempt::Answered(Err(failure)) => {
                tracing::info!(tool = %self.tool.name, error = %failure.detail(), "a poll of a long-running operation got no answer");
                None
            }
            Attempt::Stopped(..) => {
                tracing::info!(tool = %self.tool.name, "a poll of a long-running operation got a stream that stopped before its end");
                None
            }
            Attempt::TimedOut => None,
        }
    }

    /// `observed` as an answer of the tool.
    fn shape(&self, observed: Response) -> Answer {
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
                secrets: self.secrets,
                query_credential: match &part.credential {
                    Some(super::credential::Credential::Query { name, .. }) => Some(name),
                    _ => None,
                },
            },
        )
    }

    fn part(&self) -> &Part {
        &self.upstream.inner.apis[self.route.api]
    }
}

/// The URL `answer` names at `place`: a reported header, or a string of its JSON body (as
/// the API sent it: `fields:` shape only what `mcp` serves).
fn url_in(answer: &Answer, place: &UrlAt) -> Option<String> {
    match place {
        UrlAt::Header(name) => answer
            .http
            .headers
            .iter()
            .find(|(reported, _)| reported == name)
            .map(|(_, value)| value.clone()),
        UrlAt::Body(pointer) => match answer.json.as_ref()?.pointer(pointer)? {
            Value::String(url) => Some(url.clone()),
            _ => None,
        },
    }
    .filter(|url| !url.is_empty())
}
