//! A `tools/call` once the envelope is read: find the tool, check the caller's scopes, the
//! arguments against the input schema, the rate limits and the user's confirmation, then call
//! the upstream and write the result.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::envelope::*;
use super::failure::*;
use super::{Era, Outgoing, Runs, Scope, ServedTool, Server, confirm, limit, result, validate};
use crate::auth::Principal;
use crate::catalog::{Rate, SafetyClass, ToolLimits};
use crate::upstream;

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
        // A tool the curation did not choose does not exist, whatever the document holds.
        let Some(&index) = self.by_name.get(name.as_ref()) else {
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

    pub(super) async fn call<'s>(
        &'s self,
        id: &RawValue,
        target: CallTarget<'s, '_>,
        era: Era,
        round: &confirm::Round<'_>,
        scope: Scope<'_, 's>,
    ) -> Result<Outgoing, Failure> {
        use crate::observe::{Outcome, Reason};
        let Scope {
            principal,
            facts,
            trace,
        } = scope;
        let CallTarget {
            index,
            served,
            arguments,
            client_info,
        } = target;
        let _ = trace.tool.set(&served.name);
        if self.observer.is_some() {
            facts.tool = Some(index);
            // Copied as written: the audit log's writer reads it, off the call's path.
            facts.client = client_info.map(ToOwned::to_owned);
            // Anything that ends this call early without an outcome is ferry's own failure.
            facts.outcome = Some(Outcome::GatewayFailure);
        }
        // Scopes are checked before the arguments: a caller who may not call the tool
        // learns nothing about what it accepts.
        if let Some(principal) = principal
            && let Err(challenge) = self.authenticator.authorize(principal, &served.name)
        {
            tracing::info!(tool = %served.name, user = %principal.subject, "tool call refused: missing scope");
            facts.outcome = Some(Outcome::Refused(Reason::Scope));
            return Ok(result::refused(id, challenge));
        }
        let validator = served
            .validator
            .get_or_init(|| validate::validator(served.input_schema(), &served.unchecked_patterns));
        let validator = match validator {
            Ok(validator) => validator,
            Err(detail) => {
                tracing::error!(tool = %served.name, %detail, "input schema does not compile");
                return Err(Failure::internal());
            }
        };
        // Limits are checked once the call would go: an invalid call costs nothing. A call
        // that asks the user first is only measured against them here and charged once it
        // proceeds, so that asking, a decline or a mistyped answer costs no budget.
        let confirms = served.confirms();
        let refused = match validate::problems(validator, arguments.as_value()) {
            Some(text) => {
                facts.outcome = Some(Outcome::InvalidArguments);
                Some(result::invalid_arguments(text))
            }
            None => self
                .over_limit(served, principal, !confirms)
                .map(|limited| {
                    facts.outcome = Some(Outcome::Refused(Reason::RateLimit));
                    result::rate_limited(limited)
                }),
        };
        let result = match refused {
            Some(refused) => refused,
            None => {
                let principal = principal.unwrap_or(Principal::anonymous_ref());
                let (gate, confirmation) =
                    self.confirmation(id, served, arguments.as_map(), principal, era, round);
                facts.confirmation = confirmation;
                let idempotency_key = match gate {
                    Ok(confirm::Gate::Proceed { idempotency_key }) => idempotency_key,
                    Ok(confirm::Gate::Respond(outgoing)) => {
                        facts.outcome = Some(Outcome::Unconfirmed);
                        return Ok(outgoing);
                    }
                    Ok(confirm::Gate::Unconfirmed(result)) => {
                        facts.outcome = Some(Outcome::Unconfirmed);
                        return self.respond_call(id, &served.name, &result, era);
                    }
                    Err(confirm::GateError::Caller(failure)) => {
                        // A client without elicitation, or a retry that breaks the schema:
                        // the caller's doing, answered as a protocol error.
                        facts.outcome = Some(Outcome::ProtocolError);
                        return Err(failure);
                    }
                    Err(confirm::GateError::Gateway(failure)) => return Err(failure),
                };
                // Checked once the call would go, so that a server built without a client
                // (tests, fuzzing) still asks and refuses as any other.
                let Some(upstream) = &self.upstream else {
                    tracing::error!(tool = %served.name, "no upstream client to call");
                    return Err(Failure::internal());
                };
                if confirms && let Some(limited) = self.over_limit(served, Some(principal), true) {
                    facts.outcome = Some(Outcome::Refused(Reason::RateLimit));
                    return self.respond_call(
                        id,
                        &served.name,
                        &result::rate_limited(limited),
                        era,
                    );
                }
                let context = upstream::CallContext {
                    idempotency_key: idempotency_key.as_deref(),
                    trace: &trace.context,
                };
                match &served.runs {
                    Runs::Operation {
                        tool,
                        route: Some(route),
                    } => {
                        let outcome = upstream
                            .call_with(
                                route,
                                tool,
                                arguments.as_map(),
                                principal,
                                &context,
                                &mut facts.stats,
                            )
                            .await;
                        facts.outcome = Some(Outcome::of(&outcome));
                        facts.upstream_status = Outcome::status_of(&outcome);
                        result::outcome_result(&served.name, outcome)
                    }
                    Runs::Workflow { workflow, routes } => {
                        // Boxed: a run's future holds a step's call and the waits between
                        // steps, several kilobytes that an operation's call would otherwise
                        // carry (and copy) too.
                        let outcome = Box::pin(upstream.run_workflow(
                            workflow,
                            routes,
                            arguments.as_value(),
                            principal,
                            &context,
                            &mut facts.stats,
                        ))
                        .await;
                        facts.outcome = Some(Outcome::of_workflow(&outcome));
                        facts.upstream_status = outcome.taken.last().and_then(|taken| taken.status);
                        result::workflow_result(&served.name, workflow, outcome)
                    }
                    Runs::Operation { route: None, .. } => {
                        tracing::error!(tool = %served.name, "no upstream client to call");
                        return Err(Failure::internal());
                    }
                }
            }
        };
        trace
            .tool_error
            .store(result.is_error, std::sync::atomic::Ordering::Relaxed);
        self.respond_call(id, &served.name, &result, era)
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
    /// again.
    pub(super) fn over_limit(
        &self,
        served: &ServedTool,
        principal: Option<&Principal>,
        spend: bool,
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
        let refusal = if spend {
            self.limiter.check(subject, &served.limits)
        } else {
            self.limiter.fits(subject, &served.limits)
        }
        .err()?;
        let (limit, scope) = served.limits_told[refusal.limit];
        tracing::debug!(tool = %served.name, user = %subject, %limit, scope, "tool call refused: rate limit");
        Some(result::RateLimited {
            retry_after_seconds: refusal.retry_after_seconds(),
            limit,
            scope,
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
    const READS: u32 = 0;
    const WRITES: u32 = 1;
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
