//! What can be checked of a workflow from its document alone: every expression names an input,
//! an earlier step or an output that exists, every step can be reached from the first, and no
//! loop is one that no outcome could ever leave.

use std::collections::{HashMap, HashSet};

use super::*;

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
    if let Some(position) = endless_loop(workflow, &positions) {
        let step = &workflow.steps[position];
        let message = format!(
            "a `goto` loops back to step {:?} whatever each step's outcome: no run could ever leave the loop",
            step.id
        );
        reader.error(&step.pointer, message);
    }
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
