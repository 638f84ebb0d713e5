//! A composite tool's result: the workflow's outputs when it ran to its end; otherwise the
//! failing step's answer carried exactly as a single tool carries it, after a first text block
//! that says which step failed, why, and which steps had already succeeded. Either way
//! `_meta["dev.ferry/workflow"]` lists the steps taken, each with its operation and status.

use serde_json::{Value, json};

use super::{Block, CallResult, answer_result, error_result};
use crate::catalog::annotations::{Guarantee, justified};
use crate::catalog::{StepOperation, WorkflowPlan};
use crate::run::workflow::{Ending, StepFailure, StepTaken, Unset, WorkflowOutcome};
use crate::upstream::Handling;

/// What a finished workflow's outputs that have no value are, said so that a model does not
/// take their absence for a failure.
fn unset(without: &[Unset]) -> String {
    let each: Vec<String> = without
        .iter()
        .map(|unset| match &unset.unrun {
            Some(step) => format!(
                "{} (it reads {}, and step {step:?} did not run on this path)",
                unset.output, unset.reads
            ),
            None => format!(
                "{} (it reads {}, which had no value)",
                unset.output, unset.reads
            ),
        })
        .collect();
    format!(
        "The workflow ran to its end. These outputs have no value in this run, so they are left out: {}.",
        each.join("; ")
    )
}

/// The steps of a failed run that changed something: a method that does not justify
/// read-only, answered 2xx. Named with their status, so that a model does not repeat what
/// was done.
fn carried_out(workflow: &WorkflowPlan, taken: &[StepTaken]) -> Option<String> {
    let done: Vec<String> = taken
        .iter()
        .filter_map(|taken| {
            let status = taken.status.filter(|status| (200..300).contains(status))?;
            let step = workflow.steps.get(taken.step)?;
            let reads = justified(&step.method).contains(&Guarantee::ReadOnly);
            (!reads).then(|| format!("step {:?} ({}) answered {status}", step.step, step.label()))
        })
        .collect();
    (!done.is_empty()).then(|| {
        format!(
            "These steps were carried out before the workflow stopped and must not be repeated: {}.",
            done.join("; ")
        )
    })
}

/// The result of a run of `workflow` (the tool `tool`) that reached its end with outputs
/// that do not match the tool's output schema, `mismatch` saying where: never
/// `structuredContent`, but `isError` with the outputs as text, and, for a workflow that is
/// not read-only, that its steps were carried out.
pub(in crate::mcp) fn workflow_contract_broken<'t>(
    tool: &'t crate::catalog::Tool,
    workflow: &WorkflowPlan,
    outcome: WorkflowOutcome,
    mismatch: &str,
) -> CallResult<'t> {
    let mut result = workflow_result(&tool.name, workflow, outcome);
    let mut text = format!(
        "the workflow ran to its end, but what its outputs hold does not match this tool's \
         declared output schema (an API answered other than its document says), so they are \
         not served as structured content; they follow as text. What does not match:{mismatch}"
    );
    if tool.limits.class != crate::catalog::SafetyClass::Reads {
        text.push_str("\nIts steps were carried out; do not repeat it.");
    }
    result.structured_content = None;
    result.is_error = true;
    result.content.insert(0, Block::Text(text));
    result
}

/// The result of one run of `workflow`, the tool named `tool`.
pub(in crate::mcp) fn workflow_result<'t>(
    tool: &'t str,
    workflow: &WorkflowPlan,
    outcome: WorkflowOutcome,
) -> CallResult<'t> {
    let WorkflowOutcome { taken, end } = outcome;
    let steps: Vec<Value> = taken
        .iter()
        .map(|taken| {
            let mut step = workflow
                .steps
                .get(taken.step)
                .map(StepOperation::to_json)
                .unwrap_or_default();
            step.insert("succeeded".into(), Value::Bool(taken.succeeded));
            if let Some(status) = taken.status {
                step.insert("status".into(), Value::from(status));
            }
            if taken.redacted.is_some() {
                step.insert("redacted".into(), Value::Bool(true));
            }
            Value::Object(step)
        })
        .collect();
    let mut meta = json!({"workflowId": workflow.workflow.id, "steps": steps});
    let (step, failure) = match end {
        Ending::Done { outputs, without } => {
            let outputs = Value::Object(outputs);
            // The outputs come from answers redacted of ferry's secrets: said as a single
            // tool says it.
            let redacted = taken.iter().find_map(|taken| taken.redacted);
            let mut content = vec![Block::Text(outputs.to_string())];
            if !without.is_empty() {
                content.push(Block::Text(unset(&without)));
            }
            return CallResult {
                content,
                structured_content: Some(outputs),
                workflow: Some(meta),
                handling: redacted.map(|redacted| Handling {
                    redacted: Some(redacted),
                    ..Handling::default()
                }),
                ..CallResult::default()
            };
        }
        Ending::Failed { step, failure } => (step, failure),
    };
    let id = |position: usize| {
        workflow
            .workflow
            .steps
            .get(position)
            .map_or("?", |step| step.id.as_str())
    };
    let label = |position: usize| {
        workflow
            .steps
            .get(position)
            .map_or_else(String::new, |step| format!(" ({})", step.label()))
    };
    let mut succeeded: Vec<&str> = Vec::new();
    for taken in taken.iter().filter(|taken| taken.succeeded) {
        if !succeeded.contains(&id(taken.step)) {
            succeeded.push(id(taken.step));
        }
    }
    let before = if succeeded.is_empty() {
        "no step had succeeded".to_string()
    } else {
        format!("steps that had succeeded: {}", succeeded.join(", "))
    };
    let at = step.map(|position| format!("step {:?}{}", id(position), label(position)));
    if let Some(position) = step {
        meta["failedStep"] = Value::String(id(position).to_string());
    }
    let carried_out = carried_out(workflow, &taken);
    let (lead, mut result) = match failure {
        StepFailure::Unmet(answer) => {
            let status = answer.http.status.as_u16();
            let lead = format!(
                "the workflow stopped at {}: its success criteria did not hold (the upstream answered {status}), and no failure action goes on; {before}; nothing after it ran. The step's answer follows.",
                at.as_deref().unwrap_or("a step")
            );
            (lead, answer_result(tool, None, *answer))
        }
        StepFailure::RetryTooLate { answer, wait } => {
            let status = answer.http.status.as_u16();
            let lead = format!(
                "the workflow stopped at {}: its success criteria did not hold (the upstream answered {status}), and its retry would wait {} ms, past the workflow's {} ms (timeout_ms); {before}; nothing after it ran. The step's answer follows.",
                at.as_deref().unwrap_or("a step"),
                wait.as_millis(),
                workflow.timeout.as_millis(),
            );
            (lead, answer_result(tool, None, *answer))
        }
        StepFailure::Unreadable(answer) => {
            let lead = format!(
                "the workflow stopped at {}: the workflow reads the step's response body, which cannot be read whole; {before}; nothing after it ran. The step's answer follows.",
                at.as_deref().unwrap_or("a step")
            );
            (lead, answer_result(tool, None, *answer))
        }
        StepFailure::Call(error) => {
            let lead = format!(
                "the workflow stopped at {}: the step came to no answer; {before}; nothing after it ran.",
                at.as_deref().unwrap_or("a step")
            );
            (lead, error_result(error))
        }
        StepFailure::Missing {
            expression,
            reading,
        } => {
            let lead = match at {
                Some(at) => format!(
                    "the workflow stopped at {at} before sending it: {reading} reads {expression}, which has no value; {before}."
                ),
                None => format!(
                    "every step ran, but {reading} reads {expression}, which has no value; {before}."
                ),
            };
            (lead, CallResult::default())
        }
        StepFailure::StepLimit(limit) => (
            format!(
                "the workflow ran {limit} steps (max_steps) without ending, and was stopped before {}; {before}.",
                at.as_deref().unwrap_or("its next step")
            ),
            CallResult::default(),
        ),
        StepFailure::Timeout(timeout) => (
            format!(
                "the workflow did not end within {} ms (timeout_ms), and was stopped at {}; {before}.",
                timeout.as_millis(),
                at.as_deref().unwrap_or("a step")
            ),
            CallResult::default(),
        ),
    };
    let lead = match carried_out {
        Some(carried_out) => format!("{lead}\n{carried_out}"),
        None => lead,
    };
    result.content.insert(0, Block::Text(lead));
    result.is_error = true;
    result.workflow = Some(meta);
    result
}
