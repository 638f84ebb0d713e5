//! What can be checked of a workflow from its document alone: every expression names an input,
//! an earlier step or an output that exists, every step can be reached from the first, and no
//! loop is one that no outcome could ever leave. It also warns of what a run may meet: an
//! output that reads a step some successful run does not take (it is then left out), an
//! optional input with no default that something reads (what reads it is then left out), and
//! a loop that only a failure or `max_steps` can end.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Action, ActionKind, Expression, Reader, Step, Workflow};

/// The document-only checks of one workflow: what its expressions name, which steps can be
/// reached, and loops without a way out.
pub(super) fn check_workflow(reader: &mut Reader<'_>, workflow: &Workflow) {
    let inputs: HashSet<&str> = workflow
        .inputs
        .as_ref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let positions: HashMap<&str, usize> = workflow
        .steps
        .iter()
        .enumerate()
        .map(|(position, step)| (step.id.as_str(), position))
        .collect();
    let mut found = Vec::new();
    for (position, step) in workflow.steps.iter().enumerate() {
        let earlier = &workflow.steps[..position];
        let mut look = |expression: &Expression, pointer: &str, own_outputs: bool| {
            if let Some(message) =
                unknown_reference(expression, &inputs, earlier, step, own_outputs)
            {
                found.push((pointer.to_string(), message));
            }
        };
        for parameter in &step.parameters {
            for expression in parameter.value.expressions() {
                look(expression, &parameter.pointer, false);
            }
        }
        if let Some(body) = &step.body {
            for expression in body.expressions() {
                look(
                    expression,
                    &format!("{}/requestBody/payload", step.pointer),
                    false,
                );
            }
        }
        for output in &step.outputs {
            look(&output.value, &output.pointer, false);
        }
        for condition in &step.success_criteria {
            for expression in condition.expressions() {
                look(
                    expression,
                    &format!("{}/successCriteria", step.pointer),
                    false,
                );
            }
        }
        for action in step.on_success.iter().chain(&step.on_failure) {
            if let Some(target) = action.kind.target()
                && !positions.contains_key(target)
            {
                let kind = match action.kind {
                    ActionKind::Retry(_) => "retry",
                    _ => "goto",
                };
                found.push((
                    format!("{}/stepId", action.pointer),
                    format!("`{kind}` names step {target:?}, which this workflow does not have"),
                ));
            }
        }
    }
    for output in &workflow.outputs {
        let message = match &output.value {
            Expression::StepOutput { step, name, .. } => {
                match workflow.steps.iter().find(|s| &s.id == step) {
                    None => Some(format!("no step is named {step:?}")),
                    Some(found) if !found.outputs.iter().any(|o| &o.name == name) => {
                        Some(format!("step {step:?} has no output {name:?}"))
                    }
                    Some(_) => None,
                }
            }
            Expression::Input { name, .. } if !inputs.contains(name.as_str()) => {
                Some(format!("the workflow has no input {name:?}"))
            }
            Expression::Input { .. } => None,
            _ => Some(
                "a workflow's output reads `$steps.STEP.outputs.NAME` or `$inputs.NAME`"
                    .to_string(),
            ),
        };
        if let Some(message) = message {
            found.push((output.pointer.clone(), message));
        }
    }
    for (pointer, message) in found {
        reader.error(&pointer, message);
    }
    let graph: Vec<Vec<usize>> = workflow
        .steps
        .iter()
        .enumerate()
        .map(|(position, step)| successors(step, position, workflow.steps.len(), &positions))
        .collect();
    let mut reached = vec![false; graph.len()];
    let mut stack = vec![0];
    while let Some(position) = stack.pop() {
        if position < reached.len() && !reached[position] {
            reached[position] = true;
            stack.extend(&graph[position]);
        }
    }
    for (step, reached) in workflow.steps.iter().zip(&reached) {
        if !*reached {
            let message = format!("step {:?} cannot be reached from the first step", step.id);
            reader.warning(&step.pointer, message);
        }
    }
    let endless = endless_loop(workflow, &positions);
    if let Some(position) = endless {
        let step = &workflow.steps[position];
        let message = format!(
            "a `goto` loops back to step {:?} whatever each step's outcome: no run could ever leave the loop",
            step.id
        );
        reader.error(&step.pointer, message);
    }
    if let Some(position) = success_loop(workflow, &positions).filter(|p| Some(*p) != endless) {
        let step = &workflow.steps[position];
        let message = format!(
            "every success leads back to step {:?}: a run leaves this loop only by a step's failure or by reaching `max_steps`, and either ends it as failed; give a success action with criteria that ends it (a `watch` that waits for a state, say)",
            step.id
        );
        reader.coded_warning(LOOP_ENDS_ONLY_FAILED, &step.pointer, message);
    }
    for output in &workflow.outputs {
        let Expression::StepOutput { step, .. } = &output.value else {
            continue;
        };
        let Some(&position) = positions.get(step.as_str()) else {
            continue;
        };
        if ends_well_without(workflow, &positions, position) {
            let message = format!(
                "output {:?} reads step {step:?}, which a run that ends well may not take (an `end` or `goto` around it): such a run leaves the output out of its result",
                output.name
            );
            reader.coded_warning(OUTPUT_OF_UNRUN_STEP, &output.pointer, message);
        }
    }
    optional_inputs(reader, workflow);
}

/// [`crate::diagnostic::Diagnostic::code`] of an output that a run ending well may leave out.
pub const OUTPUT_OF_UNRUN_STEP: &str = "workflow-output-may-be-unset";
/// Of an expression reading an optional input that has no default.
pub const OPTIONAL_INPUT_READ: &str = "workflow-optional-input-read";
/// Of a loop only a failure or `max_steps` can leave.
pub const LOOP_ENDS_ONLY_FAILED: &str = "workflow-loop-ends-only-failed";

/// Warns of each expression that reads an input the caller may leave out and that has no
/// default: what reads it is left out then (a parameter not sent, a body member not written).
fn optional_inputs(reader: &mut Reader<'_>, workflow: &Workflow) {
    let Some(schema) = workflow.inputs.as_ref() else {
        return;
    };
    let required: HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    let optional = |name: &str| {
        !required.contains(name)
            && properties
                .and_then(|properties| properties.get(name))
                .is_some_and(|property| property.get("default").is_none())
    };
    let mut found: Vec<(String, String)> = Vec::new();
    let mut look = |expression: &Expression, pointer: String, what: &str, needed: bool| {
        if let Expression::Input { name, .. } = expression
            && optional(name)
        {
            let then = if needed {
                "a call that leaves it out stops the workflow at this step, which cannot be sent without it; make the input required, or give it a default"
            } else {
                "a call that leaves it out leaves this out too"
            };
            let message =
                format!("{what} reads the optional input {name:?}, which has no default: {then}");
            if !found.contains(&(pointer.clone(), message.clone())) {
                found.push((pointer, message));
            }
        }
    };
    for step in &workflow.steps {
        for parameter in &step.parameters {
            let needed = parameter.location == crate::parameter::ParameterLocation::Path;
            let what = format!("parameter {:?} of step {:?}", parameter.name, step.id);
            for expression in parameter.value.expressions() {
                look(expression, parameter.pointer.clone(), &what, needed);
            }
        }
        if let Some(body) = &step.body {
            let what = format!("the request body of step {:?}", step.id);
            let pointer = format!("{}/requestBody/payload", step.pointer);
            for expression in body.expressions() {
                look(expression, pointer.clone(), &what, false);
            }
        }
    }
    for output in &workflow.outputs {
        let what = format!("output {:?}", output.name);
        look(&output.value, output.pointer.clone(), &what, false);
    }
    for (pointer, message) in found {
        reader.coded_warning(OPTIONAL_INPUT_READ, &pointer, message);
    }
}

/// Where a step's outcome may lead a run: to a step, or to the workflow's end, done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leads {
    Step(usize),
    Done,
}

/// Where each outcome of the step at `position` may lead, on the way to a run that ends well:
/// a success's actions (and falling through to the next step, or past the last, which is the
/// end), and a failure's `goto` and `retry` (a failure that ends, ends failed).
fn leads(
    step: &Step,
    position: usize,
    count: usize,
    positions: &HashMap<&str, usize>,
) -> Vec<Leads> {
    let mut next = Vec::new();
    let mut falls_through = true;
    let to = |target: Option<&str>, next: &mut Vec<Leads>| match target {
        Some(target) => next.extend(positions.get(target).map(|p| Leads::Step(*p))),
        None => next.push(Leads::Done),
    };
    for action in &step.on_success {
        match &action.kind {
            ActionKind::End => to(None, &mut next),
            kind => to(kind.target(), &mut next),
        }
        if action.criteria.is_empty() {
            falls_through = false;
            break;
        }
    }
    if falls_through {
        next.push(if position + 1 < count {
            Leads::Step(position + 1)
        } else {
            Leads::Done
        });
    }
    for action in &step.on_failure {
        match &action.kind {
            ActionKind::Retry(retry) if retry.step.is_none() => next.push(Leads::Step(position)),
            ActionKind::End => {}
            kind => to(kind.target(), &mut next),
        }
    }
    next
}

/// Whether some run can end well without taking the step at `avoided`.
fn ends_well_without(
    workflow: &Workflow,
    positions: &HashMap<&str, usize>,
    avoided: usize,
) -> bool {
    let count = workflow.steps.len();
    let mut seen = vec![false; count];
    let mut stack = vec![0];
    while let Some(position) = stack.pop() {
        if position == avoided || position >= count || seen[position] {
            continue;
        }
        seen[position] = true;
        for next in leads(&workflow.steps[position], position, count, positions) {
            match next {
                Leads::Done => return true,
                Leads::Step(step) => stack.push(step),
            }
        }
    }
    false
}

/// A step on a loop that every success keeps going round, if there is one: each step on it
/// has one outcome on success, always taken (its first success action has no criteria and is
/// a `goto`, or it has none and falls through), and that leads to the next step on it. Only a
/// failure or `max_steps` ends such a run.
fn success_loop(workflow: &Workflow, positions: &HashMap<&str, usize>) -> Option<usize> {
    let count = workflow.steps.len();
    let next: Vec<Option<usize>> = workflow
        .steps
        .iter()
        .enumerate()
        .map(|(position, step)| match step.on_success.first() {
            None => (position + 1 < count).then_some(position + 1),
            Some(Action {
                kind: ActionKind::Goto(target),
                criteria,
                ..
            }) if criteria.is_empty() => positions.get(target.as_str()).copied(),
            Some(_) => None,
        })
        .collect();
    for start in 0..count {
        let mut position = start;
        for _ in 0..count {
            match next[position] {
                Some(following) if following == start => return Some(start),
                Some(following) => position = following,
                None => break,
            }
        }
    }
    None
}

/// Why an expression in `step` names something that is not there, if it does.
fn unknown_reference(
    expression: &Expression,
    inputs: &HashSet<&str>,
    earlier: &[Step],
    step: &Step,
    own_outputs: bool,
) -> Option<String> {
    match expression {
        Expression::Input { name, .. } if !inputs.contains(name.as_str()) => {
            Some(format!("the workflow has no input {name:?}"))
        }
        Expression::StepOutput {
            step: named, name, ..
        } => match earlier.iter().find(|s| &s.id == named) {
            None if *named == step.id => Some(format!(
                "step {named:?} reads its own output: use `$response.` here"
            )),
            None => Some(format!("no step before {:?} is named {named:?}", step.id)),
            Some(found) if !found.outputs.iter().any(|o| &o.name == name) => {
                Some(format!("step {named:?} has no output {name:?}"))
            }
            Some(_) => None,
        },
        Expression::Output { .. } if !own_outputs => {
            Some("`$outputs.` is read only in a workflow's outputs".to_string())
        }
        _ => None,
    }
}

/// The steps that may run after the step at `position`.
fn successors(
    step: &Step,
    position: usize,
    count: usize,
    positions: &HashMap<&str, usize>,
) -> Vec<usize> {
    let mut next = Vec::new();
    let mut falls_through = true;
    for action in &step.on_success {
        if let Some(target) = action.kind.target() {
            next.extend(positions.get(target));
        }
        if action.criteria.is_empty() {
            // The first action without criteria is always taken; none after it ever is.
            falls_through = false;
            break;
        }
    }
    if falls_through && position + 1 < count {
        next.push(position + 1);
    }
    for action in &step.on_failure {
        match &action.kind {
            ActionKind::Retry(retry) if retry.step.is_none() => next.push(position),
            kind => next.extend(kind.target().and_then(|target| positions.get(target))),
        }
    }
    next
}

/// A step on a loop that no outcome leaves, if there is one: each step on it goes to the
/// next one on it whether it succeeds or fails, the first action of each outcome always
/// taken (no criteria) and a `goto`. Any other loop can end, and `max_steps` bounds how long
/// it may run.
fn endless_loop(workflow: &Workflow, positions: &HashMap<&str, usize>) -> Option<usize> {
    let always = |actions: &[Action]| match actions.first() {
        Some(Action {
            kind: ActionKind::Goto(target),
            criteria,
            ..
        }) if criteria.is_empty() => positions.get(target.as_str()).copied(),
        _ => None,
    };
    let next: Vec<Option<usize>> = workflow
        .steps
        .iter()
        .map(|step| {
            let on_success = always(&step.on_success)?;
            let on_failure = always(&step.on_failure)?;
            (on_success == on_failure).then_some(on_success)
        })
        .collect();
    for start in 0..next.len() {
        let mut position = start;
        for _ in 0..next.len() {
            match next[position] {
                Some(following) if following == start => return Some(start),
                Some(following) => position = following,
                None => break,
            }
        }
    }
    None
}
