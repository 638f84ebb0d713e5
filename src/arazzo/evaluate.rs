//! Evaluating what [`super::parse`] compiled, against one run of a workflow: a runtime
//! expression's value, a payload filled in, whether a criterion holds (a `simple` condition,
//! a `regex` pattern or a `jsonpath` query, on the value of its context), and which action a
//! step's outcome takes. Pure, and nothing is parsed or compiled here.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::expression::{Comparison, Condition, Criterion, Expression, Operand, Operator, Source};
use super::{Action, Piece, Template};
use crate::openapi::pointer_get;

/// What a step's expressions may read.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The workflow's arguments.
    pub inputs: &'a Value,
    /// The outputs of the steps run so far, by step id.
    pub steps: &'a HashMap<String, Map<String, Value>>,
    /// The outputs being read by `$outputs.` (a workflow's, once its steps have run).
    pub outputs: Option<&'a Map<String, Value>>,
    /// The step's request and response, once it has been sent.
    pub exchange: Option<&'a Exchange>,
}

/// One step's request and the answer to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exchange {
    pub url: String,
    pub method: String,
    /// Lowercase names.
    pub request_headers: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
    pub path: Vec<(String, String)>,
    pub request_body: Option<Value>,
    pub status: u16,
    /// Lowercase names.
    pub response_headers: Vec<(String, String)>,
    /// The body as JSON; a body that is not JSON is a string.
    pub response_body: Option<Value>,
}

/// An expression's value; `None` when what it reads is not there.
pub fn value(expression: &Expression, context: &Context<'_>) -> Option<Value> {
    read(expression, context).map(Cow::into_owned)
}

/// The value a template stands for, every expression in it read; the first expression whose
/// value is not there is the error.
pub fn fill<'t>(template: &'t Template, context: &Context<'_>) -> Result<Value, &'t Expression> {
    Ok(match template {
        Template::Literal(value) => value.clone(),
        Template::Expression(expression) => value(expression, context).ok_or(expression)?,
        Template::Text(pieces) => {
            let mut text = String::new();
            for piece in pieces {
                match piece {
                    Piece::Literal(literal) => text.push_str(literal),
                    Piece::Expression(expression) => {
                        match value(expression, context).ok_or(expression)? {
                            Value::String(found) => text.push_str(&found),
                            other => text.push_str(&other.to_string()),
                        }
                    }
                }
            }
            Value::String(text)
        }
        Template::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| fill(item, context))
                .collect::<Result<_, _>>()?,
        ),
        Template::Object(entries) => {
            let mut object = Map::new();
            for (key, item) in entries {
                object.insert(key.clone(), fill(item, context)?);
            }
            Value::Object(object)
        }
    })
}

/// [`fill`], where what reads an input the caller left out (`$inputs.name`, or a member of
/// it, with no value) is left out in turn: an object member or array item that reads it is
/// not written, and a template that is nothing but such a read (or text made with one) is
/// absent, `Ok(None)`. An optional input left out so sends nothing in its place; any other
/// value that is not there is the error, as for [`fill`].
pub fn fill_present<'t>(
    template: &'t Template,
    context: &Context<'_>,
) -> Result<Option<Value>, &'t Expression> {
    let left_out = |expression: &Expression| {
        matches!(expression, Expression::Input { .. }) && read(expression, context).is_none()
    };
    Ok(Some(match template {
        Template::Literal(value) => value.clone(),
        Template::Expression(expression) => match value(expression, context) {
            Some(value) => value,
            None if left_out(expression) => return Ok(None),
            None => return Err(expression),
        },
        Template::Text(pieces) => {
            let mut text = String::new();
            for piece in pieces {
                match piece {
                    Piece::Literal(literal) => text.push_str(literal),
                    Piece::Expression(expression) => match value(expression, context) {
                        Some(Value::String(found)) => text.push_str(&found),
                        Some(other) => text.push_str(&other.to_string()),
                        None if left_out(expression) => return Ok(None),
                        None => return Err(expression),
                    },
                }
            }
            Value::String(text)
        }
        Template::Array(items) => {
            let mut array = Vec::with_capacity(items.len());
            for item in items {
                if let Some(value) = fill_present(item, context)? {
                    array.push(value);
                }
            }
            Value::Array(array)
        }
        Template::Object(entries) => {
            let mut object = Map::new();
            for (key, item) in entries {
                if let Some(value) = fill_present(item, context)? {
                    object.insert(key.clone(), value);
                }
            }
            Value::Object(object)
        }
    }))
}

/// Whether `criterion` holds. A `simple` condition holds when any of its alternatives does,
/// each with all its comparisons; a `regex` one when its pattern matches the context's value
/// (a string, or a number or boolean as JSON writes it); a `jsonpath` one when its query, with
/// the context's value as the root node, selects a node. A context that is not there holds
/// neither.
pub fn holds(criterion: &Criterion, context: &Context<'_>) -> bool {
    match criterion {
        Criterion::Simple(condition) => simple_holds(condition, context),
        Criterion::Regex {
            context: context_expression,
            pattern,
        } => match read(context_expression, context).as_deref() {
            Some(Value::String(text)) => pattern.is_match(text),
            Some(value @ (Value::Number(_) | Value::Bool(_))) => {
                pattern.is_match(&value.to_string())
            }
            _ => false,
        },
        Criterion::JsonPath {
            context: context_expression,
            query,
        } => read(context_expression, context).is_some_and(|root| query.selects(&root)),
    }
}

/// Whether every one of `criteria` holds (none: they do).
pub fn all_hold(criteria: &[Criterion], context: &Context<'_>) -> bool {
    criteria.iter().all(|criterion| holds(criterion, context))
}

/// The first of `actions` whose criteria hold.
pub fn choose<'a>(actions: &'a [Action], context: &Context<'_>) -> Option<&'a Action> {
    actions
        .iter()
        .find(|action| all_hold(&action.criteria, context))
}

fn simple_holds(condition: &Condition, context: &Context<'_>) -> bool {
    condition
        .any
        .iter()
        .any(|all| all.iter().all(|comparison| compare(comparison, context)))
}

fn compare(comparison: &Comparison, context: &Context<'_>) -> bool {
    let left = operand(&comparison.left, context);
    let Some((operator, right)) = &comparison.test else {
        return *left == Value::Bool(true);
    };
    let right = operand(right, context);
    // Headers and paths are text: a number written as text compares as the number.
    let number = |value: &Value| match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse::<f64>().ok(),
        _ => None,
    };
    let (left, right) = (left.as_ref(), right.as_ref());
    let ordering = match (left, right) {
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => match (number(left), number(right)) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => None,
        },
    };
    match operator {
        Operator::Equal => ordering.map_or(left == right, |o| o.is_eq()),
        Operator::NotEqual => ordering.map_or(left != right, |o| o.is_ne()),
        Operator::Less => ordering.is_some_and(|o| o.is_lt()),
        Operator::LessOrEqual => ordering.is_some_and(|o| o.is_le()),
        Operator::Greater => ordering.is_some_and(|o| o.is_gt()),
        Operator::GreaterOrEqual => ordering.is_some_and(|o| o.is_ge()),
    }
}

/// An operand's value; what is not there is `null`.
fn operand<'a>(operand: &'a Operand, context: &Context<'a>) -> Cow<'a, Value> {
    const NULL: &Value = &Value::Null;
    match operand {
        Operand::Literal(value) => Cow::Borrowed(value),
        Operand::Expression(expression) => read(expression, context).unwrap_or(Cow::Borrowed(NULL)),
    }
}

/// What an expression reads, borrowed where the run holds it (a body, an input, an output),
/// so a criterion reads a large answer without copying it.
fn read<'c>(expression: &Expression, context: &Context<'c>) -> Option<Cow<'c, Value>> {
    let exchange = context.exchange;
    let owned = |value: Value| Some(Cow::Owned(value));
    match expression {
        Expression::Url => exchange
            .filter(|e| !e.url.is_empty())
            .and_then(|e| owned(Value::String(e.url.clone()))),
        Expression::Method => exchange.and_then(|e| owned(Value::String(e.method.clone()))),
        Expression::StatusCode => exchange.and_then(|e| owned(Value::from(e.status))),
        Expression::Request(source) => {
            let exchange = exchange?;
            match source {
                Source::Header(name) => header(&exchange.request_headers, name).map(Cow::Owned),
                Source::Query(name) => find(&exchange.query, name).map(Cow::Owned),
                Source::Path(name) => find(&exchange.path, name).map(Cow::Owned),
                Source::Body(pointer) => at(exchange.request_body.as_ref()?, pointer),
            }
        }
        Expression::Response(source) => {
            let exchange = exchange?;
            match source {
                Source::Header(name) => header(&exchange.response_headers, name).map(Cow::Owned),
                Source::Body(pointer) => at(exchange.response_body.as_ref()?, pointer),
                // A response has no query or path of its own.
                Source::Query(_) | Source::Path(_) => None,
            }
        }
        Expression::Input { name, pointer } => at(context.inputs.get(name)?, pointer),
        Expression::Output { name, pointer } => at(context.outputs?.get(name)?, pointer),
        Expression::StepOutput {
            step,
            name,
            pointer,
        } => at(context.steps.get(step)?.get(name)?, pointer),
    }
}

/// A header's value; names are matched without regard to case.
fn header(pairs: &[(String, String)], name: &str) -> Option<Value> {
    pairs
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| Value::String(value.clone()))
}

fn find(pairs: &[(String, String)], name: &str) -> Option<Value> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| Value::String(value.clone()))
}

fn at<'c>(value: &'c Value, pointer: &str) -> Option<Cow<'c, Value>> {
    if pointer.is_empty() {
        return Some(Cow::Borrowed(value));
    }
    pointer_get(value, pointer).map(Cow::Borrowed)
}
