//! What the curation does to a chosen tool's arguments once its schema is built: arguments
//! mirrored into headers, the cursor a paged tool takes back, the arguments left out; and
//! the checks that the schema is valid JSON Schema 2020-12 and that no major client refuses
//! it.

use serde_json::Value;

use crate::curation;
use crate::diagnostic::{Diagnostic, Location};

use super::choose::Choice;
use super::input::SharedDefs;
use super::{CallSettings, OperationReport, body, trim};

/// What the curation does to a chosen tool's arguments, in order: mirrored headers, the
/// pagination cursor, then the check that the schema is valid JSON Schema 2020-12 (what could
/// not be repaired makes the tool ineligible rather than refused by a client that checks
/// definitions; `location` is the operation's), then the arguments left out, recorded on
/// `report` with what they saved. Every problem is returned; none stops the others.
pub(super) fn finish(
    schema: &mut Value,
    defs: &mut SharedDefs,
    choice: &Choice,
    call: (&crate::curation::CallOptions, &CallSettings),
    location: Location,
    report: &mut OperationReport,
) -> Vec<Diagnostic> {
    let mut failed = mirror_headers(schema, choice);
    if let Some(problem) = paging_arguments(schema, call.0, call.1) {
        failed.push(Diagnostic::error(choice.location(), problem));
    }
    if let Err(error) = defs.meta_check(schema) {
        failed.push(Diagnostic::error(
            location,
            format!(
                "the input schema would not be valid JSON Schema 2020-12 (at {}: {error})",
                display_pointer(&error.instance_path().to_string())
            ),
        ));
    }
    if !choice.settings.omit.is_empty() {
        let before = trim::token_estimate(schema);
        let problems = trim::omit(schema, &choice.settings.omit);
        failed.extend(
            problems
                .into_iter()
                .map(|problem| Diagnostic::error(choice.location(), problem)),
        );
        report.omitted = choice.settings.omit.clone();
        report.tokens_saved = Some(before.saturating_sub(trim::token_estimate(schema)));
    }
    failed
}

/// What in an input schema a major client is known to refuse, so that it rejects the whole
/// tool list: only composition at the root, which `lift_composition: true` lets through.
pub(super) fn client_refusal(schema: &Value) -> Option<String> {
    let found: Vec<&str> = body::ROOT_COMPOSITION
        .iter()
        .copied()
        .filter(|k| schema.get(*k).is_some())
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "its input schema has {} at the root, which Anthropic's Messages API (`allOf`, \
             `anyOf`, `oneOf`) and OpenAI's function calling (those and `not`) refuse, failing \
             every request that lists it; drop `lift_composition: true` to keep such a body as \
             one argument",
            found.join(", ")
        )
    })
}

/// Marks arguments for `Mcp-Param-{Name}` header mirroring (`x-mcp-header`); returns a
/// problem for each that cannot be mirrored.
fn mirror_headers(schema: &mut Value, choice: &Choice) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (argument, header) in &choice.settings.mirror_headers {
        let location = Location::curation(format!(
            "{}.mirror_headers.{argument}",
            choice.origin.clone().unwrap_or_default()
        ));
        let lower = argument.to_ascii_lowercase();
        let looks_secret = [
            "token",
            "secret",
            "password",
            "key",
            "auth",
            "credential",
            "cookie",
            "session",
        ]
        .iter()
        .any(|word| lower.contains(word) || header.to_ascii_lowercase().contains(word));
        let property = schema
            .get_mut("properties")
            .and_then(|p| p.get_mut(argument.as_str()));
        let message = if looks_secret {
            Some(format!(
                "argument {argument:?} looks like a credential and must not be mirrored into a header"
            ))
        } else if !header
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            || header.is_empty()
        {
            Some(format!("{header:?} is not a valid header name"))
        } else {
            match property {
                None => Some(format!("the tool has no argument {argument:?}")),
                Some(Value::Object(map)) => {
                    let primitive = matches!(
                        map.get("type").and_then(Value::as_str),
                        Some("string" | "integer" | "boolean")
                    );
                    if primitive {
                        map.insert("x-mcp-header".to_string(), Value::String(header.clone()));
                        None
                    } else {
                        Some(format!(
                            "argument {argument:?} is not a string, integer or boolean, so it cannot be a header"
                        ))
                    }
                }
                Some(_) => Some(format!("argument {argument:?} cannot be mirrored")),
            }
        };
        if let Some(message) = message {
            problems.push(Diagnostic::error(location, message));
        }
    }
    problems
}

/// Adds the cursor argument a `next: link` tool takes back, and checks that the arguments
/// pagination names exist; a problem is returned as its message.
fn paging_arguments(
    schema: &mut Value,
    call: &crate::curation::CallOptions,
    settings: &CallSettings,
) -> Option<String> {
    let properties = schema.get_mut("properties")?.as_object_mut()?;
    if let Some(cursor) = settings.link_cursor() {
        if properties.contains_key(cursor) {
            return Some(format!(
                "the cursor argument {cursor:?} collides with an argument of the operation; set `pagination.cursor_argument`"
            ));
        }
        properties.insert(
            cursor.to_string(),
            serde_json::json!({
                "type": "string",
                "description": "Only to get a further page: the value that a result's last text block gives for this argument (\"call … again with these arguments\"). Omit it for the first page. It holds the next page's whole query, so query arguments that differ from it are refused beside it."
            }),
        );
    }
    let pagination = call.pagination.as_ref()?;
    if let Some(size) = &pagination.size_argument
        && !properties.contains_key(size)
    {
        return Some(format!(
            "`pagination.size_argument` names {size:?}, which is not an argument of the tool"
        ));
    }
    if let (Some(curation::call::NextPage::Field(_)), cursor) =
        (&pagination.next, &pagination.cursor_argument)
    {
        match cursor {
            Some(cursor) if properties.contains_key(cursor) => {}
            Some(cursor) => return Some(format!("`pagination.cursor_argument` names {cursor:?}, which is not an argument of the tool")),
            None => return Some("a cursor field in `pagination.next` needs `pagination.cursor_argument`, the parameter it goes back in".to_string()),
        }
    }
    None
}

/// A JSON pointer for a message: `/` for the whole value.
fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}
