//! Reading a step's criteria and actions: `successCriteria` and an action's `criteria` (each
//! parsed once into a typed `Criterion`: a `simple` condition, a `regex` pattern compiled with
//! a size limit, an RFC 9535 `jsonpath` query), and `onSuccess`/`onFailure` actions (`end`,
//! `goto`, `retry` with its wait and limit, or a Reusable Object naming one).

use serde_json::{Map, Value};

use super::{Action, ActionKind, Criterion, Reader, Retry, expression};

pub(super) fn criteria(
    reader: &mut Reader<'_>,
    object: &Map<String, Value>,
    key: &str,
    pointer: &str,
) -> Vec<Criterion> {
    let mut criteria = Vec::new();
    let written = reader.array_at(object, key, pointer, false);
    for (index, written) in written.iter().enumerate() {
        let pointer = format!("{pointer}/{key}/{index}");
        if let Some(read) = criterion(reader, written, &pointer) {
            criteria.push(read);
        }
    }
    criteria
}

/// A Criterion Object: `simple` (the default), `regex` or `jsonpath` (RFC 9535, the only
/// JSONPath read: a Criterion Expression Type Object naming another is refused).
pub(super) fn criterion(
    reader: &mut Reader<'_>,
    value: &Value,
    pointer: &str,
) -> Option<Criterion> {
    let criterion = reader.object(value, pointer, "a criterion")?;
    let type_pointer = format!("{pointer}/type");
    let kind = match criterion.get("type") {
        None => "simple".to_string(),
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Object(written)) => expression_type(reader, written, &type_pointer)?,
        Some(_) => {
            reader.error(
                &type_pointer,
                "`type` must be a string (simple, regex, jsonpath) or a Criterion Expression Type Object",
            );
            return None;
        }
    };
    let condition = reader.string_at(criterion, "condition", pointer, true)?;
    let condition_pointer = format!("{pointer}/condition");
    if kind == "simple" {
        if criterion.contains_key("context") {
            reader.error(
                &format!("{pointer}/context"),
                "a `simple` criterion with a `context` is not supported yet",
            );
            return None;
        }
        return match expression::parse_condition(&condition) {
            Ok(condition) => Some(Criterion::Simple(condition)),
            Err(error) => {
                reader.error(&condition_pointer, error.0);
                None
            }
        };
    }
    if !matches!(kind.as_str(), "regex" | "jsonpath") {
        let message = match kind.as_str() {
            "xpath" => "`xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`"
                .to_string(),
            other => format!("criterion type {other:?} is not one of simple, regex, jsonpath"),
        };
        reader.error(&type_pointer, message);
        return None;
    }
    let Some(written) = criterion.get("context") else {
        let example = if kind == "regex" {
            "$statusCode"
        } else {
            "$response.body"
        };
        reader.error(
            pointer,
            format!(
                "a `{kind}` criterion needs a `context`: the runtime expression it applies to, such as `{example}`"
            ),
        );
        return None;
    };
    let context_pointer = format!("{pointer}/context");
    let Some(written) = written.as_str() else {
        reader.error(&context_pointer, "`context` must be a runtime expression");
        return None;
    };
    let context = match expression::parse(written) {
        Ok(context) => context,
        Err(error) => {
            reader.error(&context_pointer, error.0);
            return None;
        }
    };
    if kind == "regex"
        && condition.len() > 1
        && condition.starts_with('/')
        && condition.ends_with('/')
    {
        // Some tools read `/…/flags` as JavaScript does; here the slashes are matched.
        reader.warning(
            &condition_pointer,
            "the pattern's slashes are part of it, matched as written: for a pattern without them, drop them (flags are written inside, as `(?i)`)",
        );
    }
    let criterion = if kind == "regex" {
        expression::parse_pattern(&condition).map(|pattern| Criterion::Regex { context, pattern })
    } else {
        expression::parse_query(&condition).map(|query| Criterion::JsonPath { context, query })
    };
    match criterion {
        Ok(criterion) => Some(criterion),
        Err(error) => {
            reader.error(&condition_pointer, error.0);
            None
        }
    }
}

/// A Criterion Expression Type Object's kind: only JSONPath as RFC 9535 defines it, which
/// is what `type: jsonpath` already means.
pub(super) fn expression_type(
    reader: &mut Reader<'_>,
    object: &Map<String, Value>,
    pointer: &str,
) -> Option<String> {
    let kind = reader.string_at(object, "type", pointer, true)?;
    let version = reader.string_at(object, "version", pointer, true)?;
    let rfc9535 = version
        .to_ascii_lowercase()
        .replace(['-', ' '], "")
        .eq("rfc9535");
    match kind.as_str() {
        "jsonpath" if rfc9535 => Some(kind),
        "jsonpath" => {
            reader.error(
                &format!("{pointer}/version"),
                format!(
                    "JSONPath {version:?} is not supported: ferry evaluates JSONPath as RFC 9535, so write `type: jsonpath`"
                ),
            );
            None
        }
        "xpath" => {
            reader.error(
                &format!("{pointer}/type"),
                "`xpath` criteria are not supported: ferry reads JSON, so use `jsonpath`",
            );
            None
        }
        other => {
            reader.error(
                &format!("{pointer}/type"),
                format!("expression type {other:?} is not `jsonpath` or `xpath`"),
            );
            None
        }
    }
}

/// `onSuccess` or `onFailure`: Success or Failure Action Objects, or Reusable Objects
/// naming one in `components.successActions` or `components.failureActions`.
pub(super) fn actions(
    reader: &mut Reader<'_>,
    object: &Map<String, Value>,
    key: &str,
    pointer: &str,
) -> Vec<Action> {
    let success = key == "onSuccess";
    let mut actions = Vec::new();
    let written = reader.array_at(object, key, pointer, false);
    for (index, value) in written.iter().enumerate() {
        let pointer = format!("{pointer}/{key}/{index}");
        let Some(object) = reader.object(value, &pointer, "an action") else {
            continue;
        };
        let action = if !object.contains_key("reference") {
            action(reader, value, pointer, success)
        } else {
            if object.contains_key("value") {
                reader.warning(
                    &format!("{pointer}/value"),
                    "`value` applies only to a reference to a parameter: it is ignored here",
                );
            }
            let resolved = if success {
                super::components::resolve(
                    reader,
                    object,
                    &pointer,
                    "successActions",
                    "success action",
                    |c| &c.success_actions,
                )
            } else {
                super::components::resolve(
                    reader,
                    object,
                    &pointer,
                    "failureActions",
                    "failure action",
                    |c| &c.failure_actions,
                )
            };
            resolved.map(|action| Action { pointer, ..action })
        };
        actions.extend(action);
    }
    actions
}

/// A Success Action Object (`success`) or a Failure Action Object.
pub(super) fn action(
    reader: &mut Reader<'_>,
    value: &Value,
    pointer: String,
    success: bool,
) -> Option<Action> {
    let action = reader.object(value, &pointer, "an action")?;
    let name = reader.string_at(action, "name", &pointer, true)?;
    let kind = reader.string_at(action, "type", &pointer, true)?;
    let kind = match kind.as_str() {
        "end" => ActionKind::End,
        "goto" if action.contains_key("workflowId") => {
            reader.error(
                &format!("{pointer}/workflowId"),
                "a `goto` to another workflow is not supported yet",
            );
            return None;
        }
        "goto" => ActionKind::Goto(reader.string_at(action, "stepId", &pointer, true)?),
        "retry" if success => {
            reader.error(
                &format!("{pointer}/type"),
                "a `retry` action belongs in `onFailure`: a step that succeeded is not run again",
            );
            return None;
        }
        "retry" if action.contains_key("workflowId") => {
            reader.error(
                &format!("{pointer}/workflowId"),
                "a `retry` of another workflow is not supported yet",
            );
            return None;
        }
        "retry" => ActionKind::Retry(retry(reader, action, &pointer)?),
        other => {
            let message = format!("action type {other:?} is not one of end, goto, retry");
            reader.error(&format!("{pointer}/type"), message);
            return None;
        }
    };
    let criteria = criteria(reader, action, "criteria", &pointer);
    Some(Action {
        name,
        kind,
        criteria,
        pointer,
    })
}

/// A `retry` action's `retryAfter` (non-negative seconds), `retryLimit` (a non-negative
/// integer) and `stepId`.
pub(super) fn retry(
    reader: &mut Reader<'_>,
    action: &Map<String, Value>,
    pointer: &str,
) -> Option<Retry> {
    let after_ms = match action.get("retryAfter") {
        None => None,
        Some(Value::Number(seconds))
            if seconds.as_f64().is_some_and(|s| s.is_finite() && s >= 0.0) =>
        {
            // A day is longer than any call may wait; the whole-call timeout ends it first.
            let seconds = seconds.as_f64().unwrap_or_default().min(86_400.0);
            Some((seconds * 1000.0).round() as u64)
        }
        Some(_) => {
            reader.error(
                &format!("{pointer}/retryAfter"),
                "`retryAfter` must be a non-negative number of seconds",
            );
            return None;
        }
    };
    let limit = match action.get("retryLimit") {
        None => 1,
        Some(Value::Number(limit)) if limit.as_u64().is_some() => {
            u32::try_from(limit.as_u64().unwrap_or_default()).unwrap_or(u32::MAX)
        }
        Some(_) => {
            reader.error(
                &format!("{pointer}/retryLimit"),
                "`retryLimit` must be a non-negative integer",
            );
            return None;
        }
    };
    let step = match action.get("stepId") {
        None => None,
        Some(_) => Some(reader.string_at(action, "stepId", pointer, true)?),
    };
    Some(Retry {
        after_ms,
        limit,
        step,
    })
}
