//! A `tools/call` once the envelope is read: find the tool, check the caller's scopes, the
//! arguments against the input schema, the rate limits and the user's confirmation, then call
//! the upstream and write the result.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::envelope::{MetaString, Params};
use super::failure::Failure;
use super::{Era, Outgoing, Scope, ServedTool, Server, confirm, limit, result, span, validate};
use crate::auth::Principal;
use crate::catalog::{Rate, Runs, SafetyClass, ToolLimits};
use crate::observe::{CallFacts, StateFailure};
use crate::run::workflow::WorkflowOutcome;
use crate::upstream::{self, Fault};

impl Server {
    /// Finds the tool and reads the arguments of a `tools/call`.
    pub(super) fn call_target<'s, 'p>(
        &'s self,
        params: &Params<'p>,
    ) -> Result<CallTarget<'s, 'p>, Failure> {
        let name = match &params.name {
            Some(MetaString::Text(name)) => name,
            Some(MetaString::NotText) => {
                return Err(Failure::invalid_params("params.name is not a string"));
            }
            None => return Err(Failure::invalid_params("params.name is missing")),
        };
        let arguments = match params.arguments {
            None => Arguments::new(Map::new()),
            Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(arguments @ Value::Object(_)) => Arguments(arguments),
                Ok(Value::Null) => Arguments::new(Map::new()),
                Ok(_) | Err(_) => {
                    return Err(Failure::invalid_params("params.arguments is not an object"));
                }
            },
        };
        // A tool the curation did not choose does not exist, whatever the document holds;
        // an operation behind the discovery tools is called through them alone.
        let Some(&index) = self
            .by_name
            .get(name.as_ref())
            .filter(|&&index| self.tools[index].tool.listed)
        else {
            return Err(Failure::invalid_params(&format!("unknown tool {name:?}"))
                .with_data(json!({ "name": name })));
        };
        Ok(CallTarget {
            index,
            served: &self.tools[index],
            arguments,
            client_info: params.client_info,
        })
    }

    /// Runs a `tools/call` of `target` to its end, and answers it: the one place the MCP
    /// answer and the audit record's facts are both written, from one [`Ending`].
    pub(super) async fn call<'s>(
        &'s self,
        id: &RawValue,
        target: CallTarget<'s, '_>,
        era: Era,
        round: &confirm::Round<'_>,
        scope: Scope<'_, 's>,
    ) -> Result<Outgoing, Failure> {
        let Scope {
            principal,
            facts,
            trace,
            progress,
        } = scope;
        let CallTarget {
            index,
            served,
            arguments,
            client_info,
        } = target;
        if let Runs::Discovery(discovery) = &served.tool.runs {
            let scope = Scope {
                principal,
                facts,
                trace,
                progress,
            };
            return self
                .discover(
                    id,
                    (index, served, discovery),
                    arguments,
                    client_info,
                    era,
                    round,
                    scope,
                )
                .await;
        }
        let _ = trace.tool.set(&served.tool.name);
        if self.observer.is_some() {
            facts.tool = Some(index);
            // Copied as written: the audit log's writer reads it, off the call's path.
            facts.client = client_info.map(ToOwned::to_owned);
        }
        let (ending, confirmation) = self
            .end_of(
                served,
                &arguments,
                principal,
                era,
                round,
                trace,
                progress,
                &mut facts.state_failure,
            )
            .await;
        facts.confirmation = confirmation;
        self.answer(id, served, ending, era, facts, trace, None)
    }

    /// How a call of `served` with `arguments` by `principal` ends before it starts, if it
    /// does: its scopes first, so that a caller who may not call the tool learns nothing
    /// about what it accepts, then the arguments against its input schema. Every tool's
    /// call starts here, a discovery tool's as any other.
    pub(super) fn refusal<'s>(
        &'s self,
        served: &'s ServedTool,
        arguments: &Arguments,
        principal: Option<&Principal>,
    ) -> Option<Ending<'s>> {
        if let Some(principal) = principal
            && let Err(challenge) = self.authenticator.authorize(principal, &served.tool.name)
        {
            tracing::info!(tool = %served.tool.name, user = %principal.subject, "tool call refused: missing scope");
            return Some(Ending::Refused(challenge));
        }
        let Some(validator) = served.validator() else {
            return Some(Ending::Failed(Failure::internal(), Fault::Gateway));
        };
        validate::problems(validator, arguments.as_value()).map(Ending::Invalid)
    }

    /// How a call of `served` with `arguments` ends: refused, invalid, limited, asked or
    /// unconfirmed, failed, or run; beside it, what became of its confirmation. A rate limit
    /// or a confirmation the shared state could not check is noted in `state_failure`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn end_of<'s>(
        &'s self,
        served: &'s ServedTool,
        arguments: &Arguments,
        principal: Option<&Principal>,
        era: Era,
        round: &confirm::Round<'_>,
        trace: &span::Traced<'s>,
        progress: Option<&dyn upstream::Progress>,
        state_failure: &mut Option<StateFailure>,
    ) -> (Ending<'s>, Option<&'static str>) {
        if let Some(ending) = self.refusal(served, arguments, principal) {
            return (ending, None);
        }
        // Limits are checked once the call would go: an invalid call costs nothing. A call
        // that asks the user first is only measured against them here and charged once it
        // proceeds, so that asking, a decline or a mistyped answer costs no budget.
        let confirms = served.confirms();
        if let Some(limited) = self
            .over_limit(served, principal, !confirms, state_failure)
            .await
        {
            return (Ending::Limited(limited), None);
        }
        let principal = principal.unwrap_or(Principal::anonymous_ref());
        let (gate, confirmation) = self
            .confirmation(
                served,
                arguments.as_map(),
                principal,
                era,
                round,
                state_failure,
            )
            .await;
        let idempotency_key = match gate {
            Ok(confirm::Gate::Proceed { idempotency_key }) => idempotency_key,
            Ok(confirm::Gate::Ask(question)) => return (Ending::Asked(question), confirmation),
            Ok(confirm::Gate::Unconfirmed(result)) => {
                return (Ending::Unconfirmed(result), confirmation);
            }
            // A client without elicitation, or a retry that breaks the schema: the caller's
            // doing, answered as a protocol error.
            Err(confirm::GateError::Caller(failure)) => {
                return (Ending::Failed(failure, Fault::Caller), confirmation);
            }
            Err(confirm::GateError::Gateway(failure)) => {
                return (Ending::Failed(failure, Fault::Gateway), confirmation);
            }
        };
        // Checked once the call would go, so that a server built without a client (tests,
        // fuzzing) still asks and refuses as any other.
        let Some(upstream) = &self.upstream else {
            tracing::error!(tool = %served.tool.name, "no upstream client to call");
            return (
                Ending::Failed(Failure::internal(), Fault::Gateway),
                confirmation,
            );
        };
        if confirms
            && let Some(limited) = self
                .over_limit(served, Some(principal), true, state_failure)
                .await
        {
            return (Ending::Limited(limited), confirmation);
        }
        let context = upstream::CallContext {
            idempotency_key: idempotency_key.as_deref(),
            trace: &trace.context,
            progress,
        };
        // The caller follows a long-running operation itself (the Tasks extension): its 202
        // ends the call with the status location rather than being polled.
        let as_task = self.tasks && era == Era::Modern && super::task::declared(round.capabilities);
        let mut stats = upstream::CallStats::default();
        let ran = match (&served.tool.runs, served.routes.as_slice()) {
            (Runs::Operation(operation), [route]) => Ran::Operation(result::shaped(
                &operation.call.shape,
                crate::run::follow::call(
                    upstream,
                    (route, operation),
                    arguments.as_map(),
                    principal,
                    &context,
                    as_task,
                    &mut stats,
                )
                .await,
            )),
            (Runs::Workflow(workflow), routes) if routes.len() == workflow.plans.len() => {
                // Boxed: a run's future holds a step's call and the waits between steps,
                // several kilobytes that an operation's call would otherwise carry (and copy)
                // too.
                let outcome = crate::boxed::future(|| {
                    crate::run::workflow::run(
                        upstream,
                        workflow,
                        routes,
                        arguments.as_value(),
                        principal,
                        &context,
                        &mut stats,
                    )
                })
                .await;
                Ran::Workflow(workflow, outcome)
            }
            // A route for each request is made with the client; a server without one has
            // none.
            _ => {
                tracing::error!(tool = %served.tool.name, "no upstream client to call");
                return (
                    Ending::Failed(Failure::internal(), Fault::Gateway),
                    confirmation,
                );
            }
        };
        // An operation the API accepted, which the caller follows as a task.
        if let (
            Ran::Operation(Err(upstream::CallError::Pending(pending))),
            Runs::Operation(operation),
        ) = (&ran, &served.tool.runs)
            && pending.why == upstream::Unfollowed::Task
            && let Some(created) = self.task_of(&served.tool.name, operation, principal, pending)
        {
            return (Ending::Task(Box::new(created), stats), confirmation);
        }
        (Ending::Ran(ran, stats), confirmation)
    }

    /// Writes `ending`: the answer the caller gets, and the facts its audit record and
    /// metrics are made of. `via` is the discovery calling tool the call came through, if
    /// any.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &self,
        id: &RawValue,
        served: &ServedTool,
        ending: Ending<'_>,
        era: Era,
        facts: &mut CallFacts,
        trace: &span::Traced<'_>,
        via: Option<&str>,
    ) -> Result<Outgoing, Failure> {
        use crate::observe::{Outcome, Reason};
        let (outcome, result) = match ending {
            Ending::Refused(challenge) => {
                facts.outcome = Some(Outcome::Refused(Reason::Scope));
                return Ok(result::refused(id, challenge));
            }
            Ending::Asked(question) => {
                facts.outcome = Some(Outcome::Unconfirmed);
                return Ok(result::input_required(id, &question, &self.server_info));
            }
            Ending::Task(created, stats) => {
                facts.stats = stats;
                facts.upstream_status = Some(202);
                facts.operation = Some(created.task.status.clone());
                facts.outcome = Some(Outcome::Ok);
                return Ok(super::task::created_result(id, &created, &self.server_info));
            }
            Ending::Failed(failure, fault) => {
                facts.outcome = Some(match fault {
                    Fault::Caller => Outcome::ProtocolError,
                    _ => Outcome::GatewayFailure,
                });
                return Err(failure);
            }
            Ending::Invalid(text) => (Outcome::InvalidArguments, result::invalid_arguments(text)),
            Ending::Limited(limited) => (
                Outcome::Refused(Reason::RateLimit),
                result::rate_limited(limited),
            ),
            Ending::Unconfirmed(result) => (Outcome::Unconfirmed, *result),
            Ending::Answered(result) if result.is_error => (Outcome::InvalidArguments, *result),
            Ending::Answered(result) => (Outcome::Ok, *result),
            Ending::Ran(Ran::Operation(mut outcome), stats) => {
                facts.stats = stats;
                facts.upstream_status = Outcome::status_of(&outcome);
                facts.operation = Outcome::operation_of(&outcome);
                // A stream's items that break their schema are served, and said to break it.
                let items_broken = served.check_items(&mut outcome);
                match served.output_mismatch(&outcome) {
                    Some(mismatch) => (
                        Outcome::ContractBroken,
                        result::contract_broken(&served.tool, via, outcome, &mismatch),
                    ),
                    None => (
                        if items_broken {
                            Outcome::ContractBroken
                        } else {
                            Outcome::of(&outcome)
                        },
                        result::outcome_result_via(&served.tool.name, via, outcome),
                    ),
                }
            }
            Ending::Ran(Ran::Workflow(workflow, outcome), stats) => {
                facts.stats = stats;
                facts.upstream_status = outcome.taken.last().and_then(|taken| taken.status);
                match served.workflow_output_mismatch(&outcome) {
                    Some(mismatch) => (
                        Outcome::ContractBroken,
                        result::workflow_contract_broken(
                            &served.tool,
                            workflow,
                            outcome,
                            &mismatch,
                        ),
                    ),
                    None => (
                        Outcome::of_workflow(&outcome),
                        result::workflow_result(&served.tool.name, workflow, outcome),
                    ),
                }
            }
        };
        facts.outcome = Some(outcome);
        trace
            .tool_error
            .store(result.is_error, std::sync::atomic::Ordering::Relaxed);
        self.respond_call(id, &served.tool.name, &result, era)
            .inspect_err(|_| facts.outcome = Some(Outcome::GatewayFailure))
    }

    pub(super) fn respond_call(
        &self,
        id: &RawValue,
        tool: &str,
        result: &result::CallResult<'_>,
        era: Era,
    ) -> Result<Outgoing, Failure> {
        result::respond(id, result, era, &self.server_info).map_err(|error| {
            tracing::error!(tool, %error, "tool result does not serialize");
            Failure::internal()
        })
    }

    /// Spends the call from each of the tool's rate limits for its caller (only measures it,
    /// without `spend`); when one has no room, spends nothing and says which and when to try
    /// again. When the shared state cannot say, `--state-on-failure` decides, and
    /// `state_failure` notes it.
    pub(super) async fn over_limit(
        &self,
        served: &ServedTool,
        principal: Option<&Principal>,
        spend: bool,
        state_failure: &mut Option<StateFailure>,
    ) -> Option<result::RateLimited> {
        if served.limits.is_empty() {
            return None;
        }
        // Stdio asks nobody: its one caller is anonymous, as every caller over HTTP without
        // `auth:` is, and they share one budget.
        let subject = principal
            .unwrap_or(Principal::anonymous_ref())
            .subject
            .as_str();
        let refusal = match self.limiter.verdict(subject, &served.limits, spend).await {
            limit::Verdict::Fits => return None,
            limit::Verdict::Over(refusal) => refusal,
            limit::Verdict::Unknown(failure) => {
                let (limit, scope) = served.limits_told[0];
                let open = self.limiter.on_failure() == Some(crate::state::OnFailure::Open);
                let rule = if open { "open" } else { "closed" };
                tracing::warn!(tool = %served.tool.name, user = %subject, %failure, rule, "rate limit not checked: the shared state did not answer");
                if open {
                    *state_failure = Some(StateFailure::RateLimitOpen);
                    return None;
                }
                *state_failure = Some(StateFailure::RateLimitClosed);
                return Some(result::RateLimited {
                    retry_after_seconds: 1,
                    limit,
                    scope,
                    unchecked: true,
                });
            }
        };
        let (limit, scope) = served.limits_told[refusal.limit];
        tracing::debug!(tool = %served.tool.name, user = %subject, %limit, scope, "refused: rate limit");
        Some(result::RateLimited {
            retry_after_seconds: refusal.retry_after_seconds(),
            limit,
            scope,
            unchecked: false,
        })
    }
}

/// A tool's limits as the limiter checks them: its own spent from `key` (the limiter's key
/// for its name), its class's from the class's key (one for all reads, one for all writes),
/// each with what the caller is told.
pub(super) fn rate_limits(
    key: u32,
    limits: &ToolLimits,
) -> (Vec<limit::Limit>, Vec<(Rate, &'static str)>) {
    use limit::{READS_KEY as READS, WRITES_KEY as WRITES};
    let mut checked = Vec::new();
    let mut told = Vec::new();
    if let Some(rate) = limits.tool {
        checked.push(limit::Limit::new(key, rate));
        told.push((rate, "tool"));
    }
    if let Some(rate) = limits.class_limit {
        let key = match limits.class {
            SafetyClass::Reads => READS,
            SafetyClass::Writes => WRITES,
        };
        checked.push(limit::Limit::new(key, rate));
        told.push((rate, limits.class.as_str()));
    }
    (checked, told)
}

/// How one `tools/call` ended: every way is one variant, and [`Server::answer`] writes both
/// the answer and the audit facts from it. `Ran` is the large variant and the usual one, so
/// it is kept unboxed: boxing it would allocate on every call to save stack on the rare ones.
#[allow(clippy::large_enum_variant)]
pub(super) enum Ending<'s> {
    /// The caller lacks a scope the tool needs: 403 with the challenge.
    Refused(crate::auth::Challenge),
    /// The arguments break the input schema: what to fix. Nothing was sent.
    Invalid(String),
    /// Over a rate limit: when to try again. Nothing was sent.
    Limited(result::RateLimited),
    /// The user is asked to confirm (`input_required`). Nothing was sent.
    Asked(confirm::Question),
    /// The user did not confirm, or the confirmation could not be taken. Nothing was sent.
    Unconfirmed(Box<result::CallResult<'static>>),
    /// A JSON-RPC error, and whose doing it is (the caller's, or ferry's own).
    Failed(Failure, Fault),
    /// The call ran: what it came to, and what it cost.
    Ran(Ran<'s>, upstream::CallStats),
    /// A discovery tool answered from what the server holds. Nothing was sent.
    Answered(Box<result::CallResult<'static>>),
    /// The API accepted a long-running operation, which the caller follows as a task.
    Task(Box<super::task::Created>, upstream::CallStats),
}

/// What a call that ran came to: an operation's outcome, or a workflow's.
pub(super) enum Ran<'s> {
    Operation(upstream::Outcome),
    Workflow(&'s crate::catalog::WorkflowPlan, WorkflowOutcome),
}

pub(super) struct CallTarget<'s, 'p> {
    /// The tool's place in `Server::tools`.
    pub(super) index: usize,
    pub(super) served: &'s ServedTool,
    pub(super) arguments: Arguments,
    /// `_meta`'s `clientInfo`, as written.
    pub(super) client_info: Option<&'p RawValue>,
}

/// A call's arguments: always a JSON object, held as a [`Value`] so that validation reads it
/// as it is and the upstream client borrows the same map.
pub(super) struct Arguments(Value);

impl Arguments {
    pub(super) fn new(map: Map<String, Value>) -> Arguments {
        Arguments(Value::Object(map))
    }

    pub(super) fn as_value(&self) -> &Value {
        &self.0
    }

    pub(super) fn as_map(&self) -> &Map<String, Value> {
        match &self.0 {
            Value::Object(map) => map,
            // `new` is the only way in.
            _ => unreachable!("arguments are always an object"),
        }
    }
}
