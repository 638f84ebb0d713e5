//! What operators see of the calls ferry serves: one [`CallRecord`] per `tools/call` and per
//! refused request, built once where the request is answered, and read by both the audit log
//! ([`audit`]) and the metrics ([`metrics`]).
//!
//! An [`Observer`] is handed to the protocol layer and the HTTP transport through their
//! options; without one nothing is recorded and nothing is spent. A record holds what
//! happened, never what was said: no argument value, body, token, filled path or secret.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;

use crate::run::workflow::WorkflowOutcome;
use crate::upstream::{self, CallError, Fault};

pub mod audit;
pub mod metrics;
pub mod ready;

pub use self::metrics::Metrics;
pub use audit::{Audit, AuditCounters, AuditTarget};
pub use ready::Readiness;

/// Where calls are recorded: an audit log, metrics, or both. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Observer(Arc<Inner>, Option<Arc<str>>);

#[derive(Debug)]
struct Inner {
    audit: Option<Audit>,
    metrics: Option<Metrics>,
    /// A random start for request ids, so ids differ between processes and restarts.
    ids_base: u64,
    next_id: AtomicU64,
}

/// What a call (or a refused request) came to, as the audit log and the metrics name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream answered 2xx.
    Ok,
    /// The upstream answered, not with a success.
    ApiError,
    /// The arguments failed the input schema or could not become a request.
    InvalidArguments,
    /// The request was refused before anything was sent upstream.
    Refused(Reason),
    /// No answer from the upstream to pass on (a timeout, a refused connection, a broken body).
    UpstreamFailure,
    /// ferry's own fault, or its configuration's.
    GatewayFailure,
    /// A confirming tool sent nothing upstream: the user was asked (`input_required`), or
    /// declined, or the confirmation could not be accepted; [`CallRecord::confirmation`] says
    /// which.
    Unconfirmed,
    /// A `tools/call` answered with a JSON-RPC error: an unknown tool, unreadable params.
    ProtocolError,
    /// The upstream answered 2xx with JSON that does not match the tool's declared output
    /// schema: the API broke its contract, and the answer was not served as data.
    ContractBroken,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The caller's token lacks a scope the tool needs.
    Scope,
    /// Over a rate limit.
    RateLimit,
    /// A `Host` (or target authority) not on the allowlist.
    Host,
    /// A foreign `Origin`.
    Origin,
    /// MCP headers that disagree with the body.
    HeaderMismatch,
    /// No token, or one that is not valid.
    Auth,
    /// A body over the limit.
    BodyLimit,
}

/// The facts of one tool that its records carry, decided once per served tool.
#[derive(Debug)]
pub struct ToolFacts {
    pub name: String,
    /// The API it calls, by id (empty for a file without `apis:`).
    pub api: String,
    /// The endpoint serving it, by id (empty without `endpoints:`).
    pub endpoint: String,
    /// The upstream method and path template (never the filled path).
    pub method: String,
    pub template: String,
}

/// One served tool as the observer sees it: its facts and its metric handles.
#[derive(Debug)]
pub struct ToolMeter {
    facts: Arc<ToolFacts>,
    handles: Option<self::metrics::ToolHandles>,
}

/// What happened to one request. Built once, read by the audit log and the metrics.
#[derive(Debug)]
pub struct CallRecord {
    pub time: SystemTime,
    /// ferry's own id for the request, unique in the process.
    pub request_id: u64,
    /// The JSON-RPC id as the request wrote it.
    pub jsonrpc_id: Option<Box<RawValue>>,
    /// The request's method when it is not a `tools/call`: a task's look (`tasks/get`,
    /// `tasks/cancel`), recorded when it was refused; `None` for a call and for a request
    /// refused before it was read.
    pub method: Option<&'static str>,
    /// The tool called, when it is one ferry serves.
    pub tool: Option<Arc<ToolFacts>>,
    /// The principal; `None` is `anonymous`.
    pub subject: Option<String>,
    /// `_meta["io.modelcontextprotocol/clientInfo"]` as the request wrote it; the audit log
    /// reads its name and version.
    pub client: Option<Box<RawValue>>,
    pub outcome: Outcome,
    /// The upstream's status, when it answered.
    pub upstream_status: Option<u16>,
    /// Requests sent upstream.
    pub attempts: u32,
    /// Of them, those sent again by a call (a workflow's steps are calls of their own).
    pub retries: u32,
    /// Time in ferry, the upstream's included.
    pub duration: Duration,
    /// Time spent waiting on the upstream.
    pub upstream_duration: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The JSON-RPC error code, when the answer was one.
    pub error_code: Option<i32>,
    /// For a confirming tool, what became of its confirmation (`asked`, `confirmed`,
    /// `declined`, `refused_state`, ...).
    pub confirmation: Option<&'static str>,
    /// The state replicas share (`--state`) could not be read for the call, and what
    /// followed.
    pub state_failure: Option<StateFailure>,
    /// The status location of a long-running operation the call started, as the API named
    /// it: where to look for an operation not followed to its end.
    pub operation: Option<String>,
}

/// What a call's record is filled from, gathered while the call is answered.
#[derive(Debug, Default)]
pub struct CallFacts {
    /// The tool's index in the protocol layer's own list, once the call has reached one.
    pub tool: Option<usize>,
    /// `None` while the call has not reached a tool.
    pub outcome: Option<Outcome>,
    pub upstream_status: Option<u16>,
    pub stats: upstream::CallStats,
    pub client: Option<Box<RawValue>>,
    /// The JSON-RPC error code, when the answer is one.
    pub error_code: Option<i32>,
    /// For a confirming tool, what became of its confirmation.
    pub confirmation: Option<&'static str>,
    /// The shared state could not be read for the call.
    pub state_failure: Option<StateFailure>,
    /// The status location of the long-running operation the call started, if it did.
    pub operation: Option<String>,
}

/// A call for which the state replicas share (`--state`) did not answer in time, and the
/// rule that then decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFailure {
    /// Its rate limits were not checked, and it went on (`--state-on-failure open`).
    RateLimitOpen,
    /// Its rate limits were not checked, and it was refused (`--state-on-failure closed`).
    RateLimitClosed,
    /// Its confirmation could not be spent once-only, and was refused: always closed.
    Confirmation,
}

impl StateFailure {
    pub const ALL: [StateFailure; 3] = [
        StateFailure::RateLimitOpen,
        StateFailure::RateLimitClosed,
        StateFailure::Confirmation,
    ];

    /// The word an audit record names.
    pub fn as_str(self) -> &'static str {
        match self {
            StateFailure::RateLimitOpen => "rate_limit_open",
            StateFailure::RateLimitClosed => "rate_limit_closed",
            StateFailure::Confirmation => "confirmation_closed",
        }
    }

    /// What could not be checked: `rate_limit` or `confirmation`.
    pub fn check(self) -> &'static str {
        match self {
            StateFailure::RateLimitOpen | StateFailure::RateLimitClosed => "rate_limit",
            StateFailure::Confirmation => "confirmation",
        }
    }

    /// What followed: `open` (the call went on) or `closed` (it was refused).
    pub fn rule(self) -> &'static str {
        match self {
            StateFailure::RateLimitOpen => "open",
            StateFailure::RateLimitClosed | StateFailure::Confirmation => "closed",
        }
    }
}

impl Observer {
    pub fn new(audit: Option<Audit>, metrics: Option<Metrics>) -> Observer {
        let mut seed = [0u8; 8];
        // Without randomness ids still differ within the process, which is what they are for.
        let _ = getrandom::fill(&mut seed);
        Observer(
            Arc::new(Inner {
                audit,
                metrics,
                ids_base: u64::from_le_bytes(seed),
                next_id: AtomicU64::new(0),
            }),
            None,
        )
    }

    pub fn metrics(&self) -> Option<&Metrics> {
        self.0.metrics.as_ref()
    }

    pub fn audit(&self) -> Option<&Audit> {
        self.0.audit.as_ref()
    }

    /// This observer, recording the tools it meters as served by the endpoint with id
    /// `endpoint` (of the curation's `endpoints:`).
    pub fn for_endpoint(&self, endpoint: &str) -> Observer {
        Observer(Arc::clone(&self.0), Some(endpoint.into()))
    }

    /// A served tool's meter: its facts and metric handles, made once when it is served.
    /// `api` is the id of the API it calls (empty for a file without `apis:`).
    pub fn tool(&self, name: &str, api: &str, method: &str, template: &str) -> ToolMeter {
        ToolMeter {
            facts: Arc::new(ToolFacts {
                name: name.to_owned(),
                api: api.to_owned(),
                endpoint: self.1.as_deref().unwrap_or_default().to_owned(),
                method: method.to_owned(),
                template: template.to_owned(),
            }),
            handles: self
                .0
                .metrics
                .as_ref()
                .map(|metrics| metrics.tool(name, api, self.1.as_deref().unwrap_or_default())),
        }
    }

    /// Counts `failure` for a request that has no record of its own: a task's look that went
    /// on though its rate limits could not be checked.
    pub fn state_failed(&self, failure: StateFailure) {
        if let Some(metrics) = &self.0.metrics {
            metrics.state_failed(failure);
        }
    }

    /// A fresh request id.
    pub fn request_id(&self) -> u64 {
        let sequence = self.0.next_id.fetch_add(1, Ordering::Relaxed);
        self.0.ids_base.wrapping_add(sequence)
    }

    /// A call in flight until the guard is dropped.
    pub fn in_flight(&self) -> InFlight {
        if let Some(metrics) = &self.0.metrics {
            metrics.in_flight().increment(1.0);
        }
        InFlight(self.clone())
    }

    /// Records `record` of a call to `meter`'s tool (or of a request that reached none).
    pub fn record(&self, record: CallRecord, meter: Option<&ToolMeter>) {
        if let Some(metrics) = &self.0.metrics {
            metrics.record(&record, meter.and_then(|meter| meter.handles.as_ref()));
        }
        if let Some(audit) = &self.0.audit {
            audit.write(record);
        }
    }

    /// Records a request refused before it reached the protocol layer.
    pub fn refused(&self, reason: Reason, subject: Option<&str>, bytes_in: u64, bytes_out: u64) {
        self.record(
            CallRecord {
                time: SystemTime::now(),
                request_id: self.request_id(),
                jsonrpc_id: None,
                method: None,
                tool: None,
                subject: subject.map(str::to_owned),
                client: None,
                outcome: Outcome::Refused(reason),
                upstream_status: None,
                attempts: 0,
                retries: 0,
                duration: Duration::ZERO,
                upstream_duration: Duration::ZERO,
                bytes_in,
                bytes_out,
                error_code: None,
                confirmation: None,
                state_failure: None,
                operation: None,
            },
            None,
        );
    }

    /// The catalog now served: how many tools, and its digest.
    pub fn catalog(&self, tools: usize, digest: &str) {
        if let Some(metrics) = &self.0.metrics {
            metrics.catalog(tools, digest);
        }
    }

    /// A catalog reload was tried: `ok` when the new catalog is served.
    pub fn reloaded(&self, ok: bool) {
        if let Some(metrics) = &self.0.metrics {
            metrics.reloaded(ok);
        }
    }

    /// Reopens the audit log file (after it was rotated away).
    pub fn reopen(&self) {
        if let Some(audit) = &self.0.audit {
            audit.reopen();
        }
    }

    /// Writes what the audit log still holds, waiting at most `deadline`.
    pub fn finish(&self, deadline: Duration) {
        if let Some(audit) = &self.0.audit {
            audit.finish(deadline);
        }
    }
}

/// A call in flight (the `ferry_calls_in_flight` gauge) until dropped.
pub struct InFlight(Observer);

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(metrics) = &self.0.0.metrics {
            metrics.in_flight().decrement(1.0);
        }
    }
}

impl ToolMeter {
    pub fn facts(&self) -> &Arc<ToolFacts> {
        &self.facts
    }
}

impl Outcome {
    /// What a call that reached the upstream (or tried to) came to.
    pub fn of(outcome: &upstream::Outcome) -> Outcome {
        match outcome {
            Ok(answer) if answer.fault().is_none() => Outcome::Ok,
            Ok(_) => Outcome::ApiError,
            Err(error) => Outcome::of_error(error),
        }
    }

    /// What a call that came to no answer came to.
    fn of_error(error: &CallError) -> Outcome {
        match error {
            CallError::Credential(crate::auth::outbound::CredentialError::NoCallerToken) => {
                Outcome::Refused(Reason::Auth)
            }
            error => match error.fault() {
                Fault::Caller => Outcome::InvalidArguments,
                Fault::Upstream => Outcome::UpstreamFailure,
                Fault::Gateway => Outcome::GatewayFailure,
            },
        }
    }

    /// What a composite tool's run came to: its end, or its failing step's.
    pub fn of_workflow(outcome: &WorkflowOutcome) -> Outcome {
        use crate::run::workflow::{Ending, StepFailure};
        match &outcome.end {
            Ending::Done { .. } => Outcome::Ok,
            Ending::Failed {
                failure:
                    StepFailure::Unmet(_)
                    | StepFailure::RetryTooLate { .. }
                    | StepFailure::Unreadable(_),
                ..
            } => Outcome::ApiError,
            Ending::Failed {
                failure: StepFailure::Call(error),
                ..
            } => Outcome::of_error(error),
            Ending::Failed { failure, .. } => match failure.fault() {
                Fault::Caller => Outcome::InvalidArguments,
                Fault::Upstream => Outcome::UpstreamFailure,
                Fault::Gateway => Outcome::GatewayFailure,
            },
        }
    }

    /// The status location of the long-running operation `outcome` started, if it did.
    pub fn operation_of(outcome: &upstream::Outcome) -> Option<String> {
        match outcome {
            Ok(answer) => Some(answer.handling.operation.as_ref()?.status.clone()),
            Err(CallError::Pending(pending)) => Some(pending.status.clone()),
            Err(_) => None,
        }
    }

    /// The upstream's status in `outcome`, when it answered.
    pub fn status_of(outcome: &upstream::Outcome) -> Option<u16> {
        match outcome {
            Ok(answer) => Some(answer.http.status.as_u16()),
            Err(CallError::Body(http)) => Some(http.status.as_u16()),
            Err(_) => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ApiError => "api_error",
            Outcome::InvalidArguments => "invalid_arguments",
            Outcome::Refused(_) => "refused",
            Outcome::UpstreamFailure => "upstream_failure",
            Outcome::GatewayFailure => "gateway_failure",
            Outcome::Unconfirmed => "unconfirmed",
            Outcome::ProtocolError => "protocol_error",
            Outcome::ContractBroken => "contract_broken",
        }
    }
}

impl Reason {
    pub const ALL: [Reason; 7] = [
        Reason::Scope,
        Reason::RateLimit,
        Reason::Host,
        Reason::Origin,
        Reason::HeaderMismatch,
        Reason::Auth,
        Reason::BodyLimit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Scope => "scope",
            Reason::RateLimit => "rate_limit",
            Reason::Host => "host",
            Reason::Origin => "origin",
            Reason::HeaderMismatch => "header_mismatch",
            Reason::Auth => "auth",
            Reason::BodyLimit => "body_limit",
        }
    }
}

#[cfg(test)]
mod tests;
