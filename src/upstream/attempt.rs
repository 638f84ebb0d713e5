//! One call's attempts at the upstream: each within the call's deadline, traced, counted,
//! retried where the method or an idempotency key allows it, and its answer shaped. A 2xx
//! answer in a sequential media type is collected as it comes (see [`super::stream`]), so that
//! a stream stalled at the deadline or broken off still answers with what came.

use std::time::Duration;

use http::Method;
use tokio::time::Instant;

use super::credential::Credential;
use super::outcome::{CallError, Outcome, Stopped};
use super::redact::Secrets;
use super::{
    Clock, Route, Upstream, backoff, deadline_after, response, retry_after, retry_wait, span,
    stream,
};
use crate::catalog::OperationPlan;
use crate::client::{self, Failure, Malformed};
use crate::trace;

/// How one attempt ended.
pub(super) enum Attempt {
    /// An answer read whole (or cut at the size cap), or a failure.
    Answered(Result<client::Response, Failure>),
    /// A stream that stopped before its end: what came of it.
    Stopped(client::Response, Stopped),
    /// The call's time ran out before any stream began.
    TimedOut,
}

impl Upstream {
    pub(super) async fn send(
        &self,
        tool: &OperationPlan,
        route: &Route,
        mut request: client::Request,
        mut clock: Clock<'_>,
        secrets: &Secrets,
        on_unauthorized: Option<&(dyn Fn() + Sync)>,
    ) -> Outcome {
        let part = &self.inner.apis[route.api];
        let settings = &tool.call;
        let deadline = deadline_after(clock.started, settings.timeout);
        let retryable = retryable(&request, settings);
        let shaping = response::Shaping {
            tool: &tool.name,
            limit_bytes: settings.max_response_bytes,
            report_headers: &settings.report_headers,
            next: settings.next.as_ref(),
            authenticated: part.credential.is_some(),
            secrets,
            query_credential: match &part.credential {
                Some(Credential::Query { name, .. }) => Some(name),
                _ => None,
            },
        };
        let timeout_ms = settings.timeout.as_millis() as u64;
        let mut attempt: u32 = 0;
        loop {
            let outcome = self
                .attempt_traced(tool, route, &mut request, &mut clock, attempt)
                .await;
            let retry_delay = |after: Option<Duration>| {
                if !retryable || attempt >= settings.retries {
                    return None;
                }
                let backoff = backoff(settings.backoff, attempt);
                retry_wait(after, backoff, Instant::now(), deadline)
            };
            let outcome = match outcome {
                Attempt::TimedOut => {
                    tracing::warn!(tool = %tool.name, timeout_ms, attempts = attempt + 1, "upstream call timed out");
                    return Err(CallError::Timeout { timeout_ms });
                }
                Attempt::Stopped(observed, stopped) => {
                    tracing::warn!(tool = %tool.name, ?stopped, "upstream stream stopped before its end");
                    return Ok(response::stopped(observed, &shaping, stopped));
                }
                Attempt::Answered(outcome) => outcome,
            };
            match outcome {
                Ok(observed) => {
                    let status = observed.status.as_u16();
                    if status == 401
                        && let Some(forget) = on_unauthorized
                    {
                        forget();
                    }
                    if matches!(status, 502..=504)
                        && let Some(delay) = retry_delay(retry_after(&observed.headers))
                    {
                        tracing::info!(tool = %tool.name, status, attempt = attempt + 1, delay_ms = delay.as_millis() as u64, "retrying upstream call");
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                        continue;
                    }
                    if observed.truncated {
                        tracing::warn!(tool = %tool.name, status, limit_bytes = settings.max_response_bytes, "upstream response cut at the size cap");
                    }
                    return Ok(response::shape(observed, &shaping));
                }
                Err(Failure::Body {
                    status,
                    headers,
                    detail,
                }) => {
                    tracing::warn!(tool = %tool.name, status = status.as_u16(), error = %detail, "upstream response body failed");
                    return Err(CallError::Body(response::reported(
                        status, &headers, &shaping,
                    )));
                }
                Err(failure) => {
                    if failure.retryable()
                        && let Some(delay) = retry_delay(None)
                    {
                        tracing::info!(tool = %tool.name, error = %failure.detail(), attempt = attempt + 1, delay_ms = delay.as_millis() as u64, "retrying upstream call");
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                        continue;
                    }
                    tracing::warn!(tool = %tool.name, error = %failure.detail(), attempts = attempt + 1, "upstream call failed");
                    return Err(send_error(&failure, settings));
                }
            }
        }
    }

    /// One attempt of a call (`resend` earlier ones before it), within the call's deadline
    /// (its timeout from when `clock` started): `request` carries a `traceparent` naming a
    /// span of its own under the clock's trace, exported when the trace is sampled; the
    /// clock's stats count it. A 2xx answer in a sequential media type is collected as it
    /// comes, its progress told to the clock's; when the deadline passes or the connection
    /// fails during it, what came of it is the answer.
    pub(super) async fn attempt_traced(
        &self,
        tool: &OperationPlan,
        route: &Route,
        request: &mut client::Request,
        clock: &mut Clock<'_>,
        resend: u32,
    ) -> Attempt {
        let deadline = deadline_after(clock.started, tool.call.timeout);
        let context = clock.context;
        let (span_id, traceparent) = context.child();
        request.headers.insert(trace::TRACEPARENT, traceparent);
        let exporter = self.traces.as_ref().filter(|_| context.sampled());
        let begun = exporter.map(|_| span::Begun {
            context,
            span_id,
            resend,
            start_unix_nano: trace::export::now_unix_nano(),
        });
        let sent = Instant::now();
        let limit = usize::try_from(tool.call.max_response_bytes).unwrap_or(usize::MAX);
        let mut collector = stream::Collector::new(tool.call.max_response_bytes, clock.progress);
        let sent_to = self
            .client(route.pool)
            .send_to(request, limit, Some(&mut collector));
        let outcome = tokio::time::timeout_at(deadline, sent_to).await;
        clock.stats.attempts += 1;
        clock.stats.upstream += sent.elapsed();
        let collected = collector.take();
        let attempt = match (outcome, collected) {
            (Ok(Ok(mut response)), Some((_, _, body))) => {
                response.body = body;
                Attempt::Answered(Ok(response))
            }
            (Ok(outcome), None) => Attempt::Answered(outcome),
            (Ok(Err(_)), Some((status, headers, body))) => Attempt::Stopped(
                client::Response {
                    status,
                    headers,
                    body,
                    truncated: false,
                },
                Stopped::BrokeOff,
            ),
            (Err(_), Some((status, headers, body))) => Attempt::Stopped(
                client::Response {
                    status,
                    headers,
                    body,
                    truncated: false,
                },
                Stopped::Stalled {
                    timeout_ms: tool.call.timeout.as_millis() as u64,
                },
            ),
            (Err(_), None) => Attempt::TimedOut,
        };
        if let (Some(exporter), Some(begun)) = (exporter, &begun) {
            let ended = match &attempt {
                Attempt::TimedOut => span::Ended::TIMEOUT,
                Attempt::Answered(outcome) => span::Ended::of(outcome),
                Attempt::Stopped(response, _) => span::Ended::stopped(response.status),
            };
            span::export_attempt(exporter, &self.inner.apis[route.api], tool, begun, &ended);
        }
        attempt
    }
}

/// Whether a call may be sent again after a failure: its method is idempotent, or the API
/// deduplicates it by an idempotency key.
fn retryable(request: &client::Request, settings: &crate::catalog::CallSettings) -> bool {
    request.idempotent
        || (settings.idempotency_header.is_some()
            && matches!(request.method, Method::POST | Method::PATCH))
}

/// What a request that got no answer comes to.
fn send_error(failure: &Failure, settings: &crate::catalog::CallSettings) -> CallError {
    match failure {
        Failure::Head(Malformed::TooLarge, _) => CallError::HeadTooLarge,
        Failure::Head(Malformed::Invalid, _) => CallError::NotHttp,
        Failure::Connect { timeout: true, .. } => CallError::ConnectTimeout {
            connect_timeout_ms: settings.connect_timeout_ms,
        },
        Failure::Connect { timeout: false, .. } => CallError::Connect,
        Failure::Closed { timeout: true, .. } => CallError::Timeout {
            timeout_ms: settings.timeout.as_millis() as u64,
        },
        Failure::Closed { timeout: false, .. } | Failure::Body { .. } => CallError::Closed,
    }
}
