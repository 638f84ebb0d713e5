//! Following a long-running operation from its `202 Accepted` to its end, within the call:
//! the status location the plan names is polled until the operation completes, fails or is
//! cancelled, and the final result is answered as the tool's result would have been.
//!
//! Every poll goes through [`upstream::Followup`]: a GET with the API's own credential, on
//! the API's own origin (a status or result URL elsewhere is never fetched), within the
//! call's timeout and size cap, its answer redacted as any answer is. Between polls ferry
//! waits for the API's `Retry-After`, else the plan's interval (never less than
//! [`MIN_WAIT`]); a wait that would end past the call's deadline is not begun. A poll that
//! gets no answer is tried again at the next interval: it says nothing of the operation.
//! When the deadline comes first, the call ends in [`Unfollowed::Running`], which names the
//! status location: the operation was accepted and is not lost from view.
//!
//! A caller that follows the operation itself (a task) gets the status location at once
//! ([`Unfollowed::Task`]), and [`look`] looks at it once per ask: one poll (and, when it
//! ended, the result fetched) or one cancel, holding nothing between asks.

use std::time::Duration;

use http::header::HeaderValue;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::auth::Principal;
use crate::catalog::OperationPlan;
use crate::catalog::long_running::{LongRunning, ResultAt, State, UrlAt};
use crate::trace;
use crate::upstream::{
    self, Answer, CallContext, CallError, CallStats, Followed, Followup, Outcome, Pending, Route,
    Unfollowed, Upstream,
};

/// The shortest wait between two polls, whatever `Retry-After` says: no API is polled in a
/// loop that does not wait.
pub const MIN_WAIT: Duration = Duration::from_millis(10);

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

/// Calls the operation `tool` by its `route` (see [`Upstream::exchange`]) and, when it is
/// long-running and the API accepted it with a `202`, follows it: to its end within the
/// call's timeout, or, when `as_task`, only as far as its status location, which the
/// caller then looks at itself ([`look`]).
pub async fn call(
    upstream: &Upstream,
    (route, tool): (&Route, &OperationPlan),
    arguments: &Map<String, Value>,
    principal: &Principal,
    context: &CallContext<'_>,
    as_task: bool,
    stats: &mut CallStats,
) -> Outcome {
    let started = Instant::now();
    let (outcome, sent) = upstream
        .exchange(route, tool, arguments, principal, context, stats)
        .await;
    let Some(plan) = &tool.long_running else {
        return outcome;
    };
    let answer = match outcome {
        Ok(answer) if answer.http.status == StatusCode::ACCEPTED => answer,
        outcome => return outcome,
    };
    let followup = upstream.followup((route, tool), principal, context.trace, started, sent);
    Following {
        followup,
        plan,
        task: as_task,
    }
    .follow(answer, stats)
    .await
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
    let Some(plan) = tool.long_running.as_deref() else {
        return Polled::Ended(Err(CallError::Request));
    };
    let started = Instant::now();
    let deadline = upstream::deadline_after(started, tool.call.timeout);
    let sent = match tokio::time::timeout_at(deadline, upstream.sent_for(route, principal)).await {
        Ok(Ok(sent)) => sent,
        Ok(Err(error)) => return Polled::Ended(Err(error)),
        Err(_) => {
            return Polled::Ended(Err(CallError::Timeout {
                timeout_ms: tool.call.timeout.as_millis() as u64,
            }));
        }
    };
    let followup = upstream.followup((route, tool), principal, trace, started, sent);
    let following = Following {
        followup,
        plan,
        task: true,
    };
    let Some(target) = following.followup.target(status) else {
        return Polled::Ended(Err(CallError::Pending(Pending {
            status: status.to_string(),
            why: Unfollowed::OtherOrigin,
        })));
    };
    stats.calls += 1;
    match (look, &plan.cancel) {
        (Look::Poll, _) => following.poll(status, &target, stats).await,
        (Look::Cancel, Some(method)) => {
            match following.followup.send(method.clone(), target, stats).await {
                Some(answer) => Polled::Ended(Ok(answer)),
                None => Polled::Ended(Err(following.timeout())),
            }
        }
        (Look::Cancel, None) => Polled::Ended(Err(CallError::Request)),
    }
}

/// Following one operation: the way back to it and the plan to read its answers by.
struct Following<'a> {
    followup: Followup<'a>,
    plan: &'a LongRunning,
    /// The caller follows the operation itself, as a task: the status location is the
    /// call's answer ([`Unfollowed::Task`]).
    task: bool,
}

impl Following<'_> {
    /// Follows the operation `accepted` started to its end; `accepted` itself when it names
    /// no status location.
    async fn follow(&self, accepted: Answer, stats: &mut CallStats) -> Outcome {
        let tool = &self.followup.tool().name;
        let Some(status) = url_in(&accepted, &self.plan.status) else {
            tracing::warn!(tool = %tool, "the 202 names no status location where the plan says; answered as it is");
            return Ok(accepted);
        };
        let Some(target) = self.followup.target(&status) else {
            tracing::warn!(tool = %tool, "the status location is not on the API's origin; not fetched");
            return Err(CallError::Pending(Pending {
                status,
                why: Unfollowed::OtherOrigin,
            }));
        };
        if self.task {
            return Err(CallError::Pending(Pending {
                status,
                why: Unfollowed::Task,
            }));
        }
        let deadline = self.followup.deadline();
        let mut wait = self.wait(&accepted.http.headers);
        loop {
            if Instant::now() + wait >= deadline {
                return Err(CallError::Pending(Pending {
                    status,
                    why: Unfollowed::Running {
                        timeout_ms: self.timeout_ms(),
                    },
                }));
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
        let Some(answer) = self.get(target.clone(), stats).await else {
            return Polled::Working(self.plan.interval.max(MIN_WAIT));
        };
        let state = self.state(&answer);
        tracing::debug!(tool = %self.followup.tool().name, status = answer.http.status.as_u16(), state = state.as_str(), "polled a long-running operation");
        let followed = Box::new(Followed {
            status: status.to_string(),
            state,
        });
        match state {
            State::Working => Polled::Working(self.wait(&answer.http.headers)),
            State::Completed => {
                let mut result = self.result(answer, stats).await;
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
        upstream::retry_after(&map)
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

    /// The final result of a completed operation, whose last status answer is `answer`.
    async fn result(&self, answer: Answer, stats: &mut CallStats) -> Outcome {
        // A redirect is HTTP's own word for where the result is.
        let fetch = match (&self.plan.result, &answer.location) {
            (_, Some(location)) if answer.http.status.is_redirection() => Some(location.clone()),
            (ResultAt::Fetch(place), _) => url_in(&answer, place),
            _ => None,
        };
        if let Some(url) = fetch {
            let Some(target) = self.followup.target(&url) else {
                return Err(CallError::Pending(Pending {
                    status: url,
                    why: Unfollowed::OtherOrigin,
                }));
            };
            return self.get(target, stats).await.ok_or_else(|| self.timeout());
        }
        let mut result = answer;
        if let ResultAt::Field(pointer) = &self.plan.result
            && let Some(value) = result.json.as_ref().and_then(|body| body.pointer(pointer))
        {
            let value = value.clone();
            result.body = value.to_string().into_bytes();
            result.essence = Some("application/json".to_string());
            result.json = Some(value);
        }
        Ok(result)
    }

    /// One GET of `target` within the call's deadline; `None` when no answer came.
    async fn get(&self, target: http::Uri, stats: &mut CallStats) -> Option<Answer> {
        self.followup.send(Method::GET, target, stats).await
    }

    /// The call's timeout, in milliseconds.
    fn timeout_ms(&self) -> u64 {
        self.followup.tool().call.timeout.as_millis() as u64
    }

    /// The call's time ran out before an answer came.
    fn timeout(&self) -> CallError {
        CallError::Timeout {
            timeout_ms: self.timeout_ms(),
        }
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
