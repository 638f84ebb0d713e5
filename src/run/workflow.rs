//! Running a composite tool: the steps of its Arazzo workflow, each sent as one call of its
//! own step tool (so with ferry's serialization, credentials, timeouts, retries, size cap and
//! redaction), in the order the workflow's actions choose, within the call's bounds: at most
//! `max_steps` steps run and `timeout` for the whole. What it comes to is data, a
//! [`WorkflowOutcome`]; `mcp` writes it as a tool result.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::arazzo::{self, ActionKind, Context, Exchange, Expression, Step, Template};
use crate::auth::Principal;
use crate::catalog::{ParameterLocation, StepPlan, WorkflowPlan};
use crate::upstream::response::is_json;
use crate::upstream::{
    Answer, CallContext, CallError, CallStats, Fault, Redacted, Route, Upstream, deadline_after,
    retry_after_value, retry_wait, uuid_text,
};

/// What one run of a workflow came to: the steps it ran, and how it ended.
#[derive(Debug)]
pub struct WorkflowOutcome {
    /// Every step run, in the order run; a step run again is listed again.
    pub taken: Vec<StepTaken>,
    pub end: Ending,
}

/// One step run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepTaken {
    /// The step's place in the workflow.
    pub step: usize,
    /// The upstream's status, when it answered.
    pub status: Option<u16>,
    /// Its success criteria held.
    pub succeeded: bool,
    /// Where a secret of ferry's was first taken out of its answer, if anywhere.
    pub redacted: Option<Redacted>,
}

#[derive(Debug)]
pub enum Ending {
    /// The workflow ran to its end: its outputs that have a value, by name, and those that
    /// have none.
    Done {
        outputs: Map<String, Value>,
        without: Vec<Unset>,
    },
    /// It stopped at the step at `step` (`None`: after its last step, reading its outputs).
    Failed {
        step: Option<usize>,
        failure: StepFailure,
    },
}

/// A workflow output with no value in this run: left out of the outputs, and said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unset {
    pub output: String,
    /// The expression it reads, as written.
    pub reads: String,
    /// The step it reads, when that step did not run on this path.
    pub unrun: Option<String>,
}

/// Why a workflow stopped before its end.
#[derive(Debug)]
pub enum StepFailure {
    /// The step's answer did not meet its success criteria, and no failure action went on.
    Unmet(Box<Answer>),
    /// The step's answer did not meet its success criteria, and the retry its failure
    /// actions chose would wait `wait` (the answer's `Retry-After`, or `retryAfter`), past
    /// the call's deadline.
    RetryTooLate { answer: Box<Answer>, wait: Duration },
    /// The workflow reads the step's body, and it cannot be read whole: cut at the size
    /// cap, or labelled JSON and not valid JSON.
    Unreadable(Box<Answer>),
    /// The step came to no answer, or could not be sent.
    Call(CallError),
    /// A value the workflow reads is not there.
    Missing { expression: String, reading: String },
    /// `max_steps` steps ran and the workflow had not ended.
    StepLimit(u32),
    /// The call's whole time ran out.
    Timeout(Duration),
}

impl StepFailure {
    /// Whose fault it is: an unmet step's answer says (a success whose criteria failed is
    /// the upstream's); a missing input the caller's, a missing value of an answer the
    /// upstream's; the limits are the tool's own, so ferry's; a timeout the upstream's.
    pub fn fault(&self) -> Fault {
        match self {
            StepFailure::Unmet(answer)
            | StepFailure::RetryTooLate { answer, .. }
            | StepFailure::Unreadable(answer) => answer.fault().unwrap_or(Fault::Upstream),
            StepFailure::Call(error) => error.fault(),
            StepFailure::Missing { expression, .. } if expression.starts_with("$inputs.") => {
                Fault::Caller
            }
            StepFailure::Missing { .. } | StepFailure::Timeout(_) => Fault::Upstream,
            StepFailure::StepLimit(_) => Fault::Gateway,
        }
    }
}

/// Runs `workflow` with `arguments` (validated against its input schema) on `upstream`, each
/// step by its prepared route in `routes` (step order), on behalf of `principal` as a single
/// tool's call would be. `stats` sums every step's requests.
// Out of line, so that a caller that boxes its future has it written in the box
// (`crate::boxed`).
#[inline(never)]
pub async fn run(
    upstream: &Upstream,
    workflow: &WorkflowPlan,
    routes: &[Route],
    arguments: &Value,
    principal: &Principal,
    context: &CallContext<'_>,
    stats: &mut CallStats,
) -> WorkflowOutcome {
    let inputs = with_defaults(arguments, workflow.workflow.inputs.as_ref());
    let mut run = Run {
        workflow,
        inputs: &inputs,
        sender: Sender {
            upstream,
            routes,
            principal,
            context,
            stats,
        },
        outputs: HashMap::new(),
        taken: Vec::new(),
        retries: HashMap::new(),
        deadline: deadline_after(Instant::now(), workflow.timeout),
    };
    let end = run.steps().await;
    WorkflowOutcome {
        taken: run.taken,
        end,
    }
}

/// One run of a workflow as it goes.
struct Run<'w> {
    workflow: &'w WorkflowPlan,
    inputs: &'w Value,
    sender: Sender<'w>,
    /// Each step's outputs, by step id, from its last run.
    outputs: HashMap<String, Map<String, Value>>,
    taken: Vec<StepTaken>,
    /// Attempts each `retry` action made, by step and action.
    retries: HashMap<(usize, usize), u32>,
    deadline: Instant,
}

/// How the run's steps are sent: by whom, for whom, and what they cost.
struct Sender<'w> {
    upstream: &'w Upstream,
    /// Each step's route, in step order.
    routes: &'w [Route],
    principal: &'w Principal,
    context: &'w CallContext<'w>,
    stats: &'w mut CallStats,
}

/// How a step failed: with an answer its criteria did not accept, or with no answer.
enum Failed {
    Unmet(Box<Answer>),
    Unanswered(CallError),
}

impl Failed {
    /// The failure a workflow that stops here ends with.
    fn ended(self) -> StepFailure {
        match self {
            Failed::Unmet(answer) => StepFailure::Unmet(answer),
            Failed::Unanswered(error) => StepFailure::Call(error),
        }
    }
}

/// Where a step's outcome leads.
enum Next {
    Step(usize),
    End,
    Fail(StepFailure),
}

impl Run<'_> {
    async fn steps(&mut self) -> Ending {
        let workflow = self.workflow;
        let steps = &workflow.workflow.steps;
        let mut position = 0;
        loop {
            if self.taken.len() >= self.workflow.max_steps as usize {
                return Ending::Failed {
                    step: Some(position),
                    failure: StepFailure::StepLimit(self.workflow.max_steps),
                };
            }
            let (Some(step), Some(plan), true) = (
                steps.get(position),
                workflow.plans.get(position),
                position < self.sender.routes.len(),
            ) else {
                // Compile gives every step a plan and the server a route; a catalog built by
                // hand might not.
                return Ending::Failed {
                    step: Some(position),
                    failure: StepFailure::Call(CallError::Request),
                };
            };
            let next = self.step(position, step, plan).await;
            match next {
                Next::Step(following) if following < steps.len() => position = following,
                Next::Step(_) | Next::End => return self.finish(),
                Next::Fail(failure) => {
                    return Ending::Failed {
                        step: Some(position),
                        failure,
                    };
                }
            }
        }
    }

    /// Runs `step`, the one at `position`, once by its `plan`, and decides where its
    /// outcome leads.
    async fn step(&mut self, position: usize, step: &Step, plan: &StepPlan) -> Next {
        let (arguments, mut exchange) = match request(step, plan, &self.context(None)) {
            Ok(request) => request,
            Err(failure) => return Next::Fail(failure),
        };
        if plan.reads_url {
            exchange.url = self
                .sender
                .upstream
                .step_url(&self.sender.routes[position], &plan.operation, &arguments)
                .unwrap_or_default();
        }
        if Instant::now() >= self.deadline {
            // Nothing is sent once the call's time is up.
            return Next::Fail(StepFailure::Timeout(self.workflow.timeout));
        }
        let Sender {
            upstream,
            routes,
            principal,
            context,
            ref mut stats,
        } = self.sender;
        // A confirmed call's key names the whole run: each step run sends its own, made of
        // it and the step's place in the run, so a replayed confirmation sends the same keys
        // and the API can refuse the writes it has already done.
        let key = context
            .idempotency_key
            .map(|key| step_key(key, self.taken.len() + 1));
        let step_context = CallContext {
            idempotency_key: key.as_deref(),
            trace: context.trace,
            // A step's stream is read whole, without telling its progress.
            progress: None,
        };
        // A long-running step is followed to its end within the workflow's time.
        let call = super::follow::call(
            upstream,
            (&routes[position], &plan.operation),
            &arguments,
            principal,
            &step_context,
            false,
            stats,
        );
        let outcome = match tokio::time::timeout_at(self.deadline, call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                self.record(position, None, false);
                return Next::Fail(StepFailure::Timeout(self.workflow.timeout));
            }
        };
        let answer = match outcome {
            Ok(answer) => answer,
            Err(error) => {
                self.record(position, None, false);
                return self
                    .on_failure(position, step, None, Failed::Unanswered(error))
                    .await;
            }
        };
        if !readable(&answer, plan) {
            self.record(position, Some(&answer), false);
            return Next::Fail(StepFailure::Unreadable(Box::new(answer)));
        }
        answered(&mut exchange, &answer);
        let context = Context {
            inputs: self.inputs,
            steps: &self.outputs,
            outputs: None,
            exchange: Some(&exchange),
        };
        let succeeded = if step.success_criteria.is_empty() {
            answer.http.status.is_success()
        } else {
            arazzo::evaluate::all_hold(&step.success_criteria, &context)
        };
        if succeeded {
            let mut outputs = Map::new();
            for output in &step.outputs {
                // An output whose value is not there is left out: reading it later says so.
                if let Some(value) = arazzo::evaluate::value(&output.value, &context) {
                    outputs.insert(output.name.clone(), value);
                }
            }
            let action = arazzo::evaluate::choose(&step.on_success, &context);
            let next = match action.map(|action| &action.kind) {
                None => Next::Step(position + 1),
                Some(ActionKind::End) => Next::End,
                Some(kind) => self.goto(kind, position),
            };
            self.record(position, Some(&answer), true);
            self.outputs.insert(step.id.clone(), outputs);
            return next;
        }
        self.record(position, Some(&answer), false);
        self.on_failure(
            position,
            step,
            Some(&exchange),
            Failed::Unmet(Box::new(answer)),
        )
        .await
    }

    /// The step at `position` failed, as `failed` says: its failure actions apply, their
    /// criteria read against `exchange` (none when no answer came, so `$statusCode` and
    /// `$response.` are not there). A `retry` waits the answer's `Retry-After`, or its own
    /// `retryAfter`, within the deadline; nothing taken, or a wait past the deadline, ends
    /// the workflow with the failure.
    async fn on_failure(
        &mut self,
        position: usize,
        step: &Step,
        exchange: Option<&Exchange>,
        failed: Failed,
    ) -> Next {
        let context = Context {
            inputs: self.inputs,
            steps: &self.outputs,
            outputs: None,
            exchange,
        };
        let action = failure_action(step, &context, |index, limit| {
            grant(&mut self.retries, (position, index), limit)
        });
        let (kind, retry) = match action.map(|action| &action.kind) {
            None | Some(ActionKind::End) => return Next::Fail(failed.ended()),
            Some(kind @ ActionKind::Goto(_)) => return self.goto(kind, position),
            Some(kind @ ActionKind::Retry(retry)) => (kind, retry),
        };
        let told = match &failed {
            Failed::Unmet(answer) => answer_retry_after(answer),
            Failed::Unanswered(_) => None,
        };
        let asked = told
            .or(retry.after_ms.map(Duration::from_millis))
            .unwrap_or_default();
        let Some(wait) = retry_wait(Some(asked), Duration::ZERO, Instant::now(), self.deadline)
        else {
            return Next::Fail(match failed {
                // As for a single tool's retry: the answer that came is the step's.
                Failed::Unmet(answer) => StepFailure::RetryTooLate {
                    answer,
                    wait: asked,
                },
                unanswered => unanswered.ended(),
            });
        };
        tokio::time::sleep(wait).await;
        match &retry.step {
            None => Next::Step(position),
            Some(_) => self.goto(kind, position),
        }
    }

    fn record(&mut self, step: usize, answer: Option<&Answer>, succeeded: bool) {
        self.taken.push(StepTaken {
            step,
            status: answer.map(|answer| answer.http.status.as_u16()),
            succeeded,
            redacted: answer.and_then(|answer| answer.handling.redacted),
        });
    }

    /// The step an action names.
    fn goto(&self, kind: &ActionKind, position: usize) -> Next {
        let target = kind.target().and_then(|id| {
            self.workflow
                .workflow
                .steps
                .iter()
                .position(|step| step.id == id)
        });
        match target {
            Some(target) => Next::Step(target),
            // Compile checks every target; a catalog built by hand might not.
            None => Next::Step(position + 1),
        }
    }

    /// The workflow's outputs, once it has ended: each that has a value. One that reads a
    /// step that did not run on this path (an `end` before it), or a value its answer did not
    /// have, has none, and is left out: the workflow did what it was asked, and the outputs
    /// that have no value are named beside the others, never made a failure.
    fn finish(&self) -> Ending {
        let mut outputs = Map::new();
        let mut without = Vec::new();
        for output in &self.workflow.workflow.outputs {
            let mut context = self.context(None);
            context.outputs = Some(&outputs);
            match arazzo::evaluate::value(&output.value, &context) {
                Some(value) => {
                    outputs.insert(output.name.clone(), value);
                }
                None => without.push(Unset {
                    output: output.name.clone(),
                    reads: output.value.to_string(),
                    unrun: match &output.value {
                        Expression::StepOutput { step, .. } => {
                            (!self.outputs.contains_key(step)).then(|| step.clone())
                        }
                        _ => None,
                    },
                }),
            }
        }
        Ending::Done { outputs, without }
    }

    fn context<'a>(&'a self, exchange: Option<&'a Exchange>) -> Context<'a> {
        Context {
            inputs: self.inputs,
            steps: &self.outputs,
            outputs: None,
            exchange,
        }
    }
}

/// `arguments` with the default of each input the caller left out, where its schema gives one
/// (`inputs.properties.NAME.default`): a workflow reads an input's default as its value.
fn with_defaults<'a>(arguments: &'a Value, inputs: Option<&Value>) -> std::borrow::Cow<'a, Value> {
    let defaults = inputs
        .and_then(|inputs| inputs.get("properties"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name, property.get("default")?)))
        .filter(|(name, _)| arguments.get(name.as_str()).is_none());
    let mut filled: Option<Map<String, Value>> = None;
    for (name, default) in defaults {
        filled
            .get_or_insert_with(|| arguments.as_object().cloned().unwrap_or_default())
            .insert(name.clone(), default.clone());
    }
    match filled {
        Some(filled) => std::borrow::Cow::Owned(Value::Object(filled)),
        None => std::borrow::Cow::Borrowed(arguments),
    }
}

/// The step tool's arguments for `step`, sent by `plan`, and the request part of its
/// exchange, every value read in `context`.
pub(crate) fn request(
    step: &Step,
    plan: &StepPlan,
    context: &Context<'_>,
) -> Result<(Map<String, Value>, Exchange), StepFailure> {
    let mut arguments = Map::new();
    let mut exchange = Exchange {
        method: plan.operation.plan.method.as_str().to_string(),
        ..Exchange::default()
    };
    for (parameter, argument) in step.parameters.iter().zip(&plan.arguments) {
        // An optional input the caller left out sends no parameter in its place; a path has
        // no place without it, so there it is a value missing, as any other.
        let Some(value) = fill(&parameter.value, context, &parameter.name)? else {
            if parameter.location == ParameterLocation::Path {
                return Err(StepFailure::Missing {
                    expression: parameter
                        .value
                        .expressions()
                        .first()
                        .map(|expression| expression.to_string())
                        .unwrap_or_default(),
                    reading: parameter.name.clone(),
                });
            }
            continue;
        };
        let text = match &value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let name = parameter.name.clone();
        match parameter.location {
            ParameterLocation::Path => exchange.path.push((name, text)),
            ParameterLocation::Query => exchange.query.push((name, text)),
            ParameterLocation::Header => exchange
                .request_headers
                .push((name.to_ascii_lowercase(), text)),
            // Arazzo 1.0 names no `querystring` parameter.
            ParameterLocation::QueryString | ParameterLocation::Cookie => {}
        }
        arguments.insert(argument.clone(), value);
    }
    if let (Some(template), Some(argument)) = (&step.body, &plan.body)
        && let Some(body) = fill(template, context, "the request body")?
    {
        exchange.request_body = Some(body.clone());
        arguments.insert(argument.clone(), body);
    }
    Ok((arguments, exchange))
}

/// Whether a step reading its answer by `plan` can read `answer`: not when it reads the body
/// and that is cut at the size cap, or labelled JSON and not valid JSON (a part of the body is
/// not the body, nor is broken JSON text: as for a single tool, an error).
pub(crate) fn readable(answer: &Answer, plan: &StepPlan) -> bool {
    let broken_json = answer.json.is_none()
        && !answer.body.is_empty()
        && answer.essence.as_deref().is_some_and(is_json);
    !((answer.handling.truncated || broken_json) && plan.reads_body)
}

/// Writes `answer` into `exchange` as the step's expressions read it: the status, the headers
/// reported (lowercase names), and the body as JSON, or as text when it is not JSON.
pub(crate) fn answered(exchange: &mut Exchange, answer: &Answer) {
    exchange.status = answer.http.status.as_u16();
    exchange.response_headers = answer
        .http
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_string(), value.clone()))
        .collect();
    exchange.response_body = answer.json.clone().or_else(|| {
        (!answer.body.is_empty())
            .then(|| String::from_utf8(answer.body.clone()).ok())
            .flatten()
            .map(Value::String)
    });
}

/// Whether the retry action at `key` (step, action) may make one more attempt of its
/// `limit`, counting it when it may.
fn grant(retries: &mut HashMap<(usize, usize), u32>, key: (usize, usize), limit: u32) -> bool {
    let made = retries.entry(key).or_default();
    let left = *made < limit;
    if left {
        *made += 1;
    }
    left
}

/// The first failure action of `step` that applies: its criteria hold and, for a retry,
/// `attempt(index, limit)` grants one more attempt (a spent retry lets the actions after it
/// apply). `None`: the workflow ends, failed.
pub(crate) fn failure_action<'s>(
    step: &'s Step,
    context: &Context<'_>,
    mut attempt: impl FnMut(usize, u32) -> bool,
) -> Option<&'s arazzo::Action> {
    step.on_failure
        .iter()
        .enumerate()
        .find_map(|(index, action)| {
            if !arazzo::evaluate::all_hold(&action.criteria, context) {
                return None;
            }
            match &action.kind {
                ActionKind::Retry(retry) if !attempt(index, retry.limit) => None,
                _ => Some(action),
            }
        })
}

/// `template` filled in for `reading`, with what reads an optional input the caller left out
/// left out (`None`: nothing at all); any other expression whose value is not there fails.
fn fill(
    template: &Template,
    context: &Context<'_>,
    reading: &str,
) -> Result<Option<Value>, StepFailure> {
    arazzo::evaluate::fill_present(template, context).map_err(|expression: &Expression| {
        StepFailure::Missing {
            expression: expression.to_string(),
            reading: reading.to_string(),
        }
    })
}

/// The idempotency key of the `run`th step run (from 1) of a call whose key is `key`: a
/// UUID's form, as the call's own is, taken from a SHA-256 of both.
fn step_key(key: &str, run: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(key.as_bytes())
        .chain_update(run.to_be_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    uuid_text(&hex)
}

/// The wait an answer's `Retry-After` asks for.
fn answer_retry_after(answer: &Answer) -> Option<Duration> {
    let (_, value) = answer
        .http
        .headers
        .iter()
        .find(|(name, _)| name == http::header::RETRY_AFTER)?;
    retry_after_value(value)
}
