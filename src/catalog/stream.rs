//! Answers that are streams: a 2xx response in a sequential media type (server-sent events,
//! JSON lines, JSON text sequences), read item by item at run time. OpenAPI 3.2 describes
//! each item with `itemSchema`; each is translated here by the input schemas' rules
//! ([`SchemaBuilder`]: 2020-12, `$ref`s as local `$defs`, nothing fetched) for every item to
//! be checked against. One that cannot be translated is a warning, and its items go
//! unchecked. A tool that may answer with a stream declares no output schema: its result is
//! the items read, not the document's JSON answer.

use serde_json::Value;

use super::input::{InputSchema, SharedDefs};
use super::operation::{self, Operation};
use super::output::{Problem, joined, projected};
use super::schema::SchemaBuilder;
use super::shape::ResultShape;
use crate::diagnostic::{Diagnostic, Location};
use crate::openapi::{Document, SpecVersion};

/// A sequential media type: how its items are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequence {
    /// `text/event-stream`: events, each ended by an empty line.
    Events,
    /// JSON lines (`application/jsonl`, `application/x-ndjson`): one JSON text per line.
    Lines,
    /// `application/json-seq` (RFC 7464): each JSON text led by a record separator.
    Records,
}

impl Sequence {
    /// The sequence a media type names (any case, with or without parameters), if any.
    pub fn of(media_type: &str) -> Option<Sequence> {
        let essence = media_type.split(';').next().unwrap_or_default().trim();
        let is = |name: &str| essence.eq_ignore_ascii_case(name);
        if is("text/event-stream") {
            Some(Sequence::Events)
        } else if is("application/jsonl")
            || is("application/x-ndjson")
            || is("application/x-jsonlines")
        {
            Some(Sequence::Lines)
        } else if is("application/json-seq") {
            Some(Sequence::Records)
        } else {
            None
        }
    }
}

/// The schema each item of one documented stream is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemSchema {
    /// The media type's essence, lower-cased.
    pub media_type: String,
    pub schema: InputSchema,
}

/// The code of the warning that a stream's items go unchecked.
pub const ITEMS_UNCHECKED: &str = "items-unchecked";

/// What `operation` documents of its streamed answers: whether any 2xx answer is in a
/// sequential media type, and the item schemas to check their items against (one per
/// media type; where several 2xx answers give one, an `anyOf` of them).
pub(super) struct Streams {
    pub(super) any: bool,
    pub(super) items: Vec<ItemSchema>,
}

/// [`Streams`] of `operation`, each item schema projected by `shape` as each item is; a
/// warning in `diagnostics` for each item schema that cannot be checked against (`compiles`
/// says whether the validator compiles a pattern).
pub(super) fn documented(
    document: &Document,
    operation: &Operation<'_>,
    shape: &ResultShape,
    compiles: &mut dyn FnMut(&str) -> bool,
    held: &mut SharedDefs,
    label: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Streams {
    let mut streams = Streams {
        any: false,
        items: Vec::new(),
    };
    if document.version == SpecVersion::Swagger2 {
        return streams;
    }
    let Some(responses) = operation.value.get("responses").and_then(Value::as_object) else {
        return streams;
    };
    let mut builder = SchemaBuilder::new(document);
    let mut found: Vec<(String, Vec<Value>, String)> = Vec::new();
    for (status, response) in responses {
        if !super::output::is_success(status) {
            continue;
        }
        let pointer = format!(
            "{}/responses/{}",
            operation.pointer,
            crate::openapi::escape_token(status)
        );
        let Ok((file, pointer, response)) =
            operation::follow(document, operation.file, &pointer, response)
        else {
            continue;
        };
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            continue;
        };
        for (media_type, media) in content {
            if Sequence::of(media_type).is_none() {
                continue;
            }
            streams.any = true;
            let Some(schema) = media.get("itemSchema") else {
                continue;
            };
            let at = format!(
                "{pointer}/content/{}/itemSchema",
                crate::openapi::escape_token(media_type)
            );
            let translated = builder.schema(file, &at, schema);
            let essence = super::body::essence(media_type);
            match found.iter_mut().find(|(known, ..)| *known == essence) {
                Some((_, schemas, _)) if !schemas.contains(&translated) => schemas.push(translated),
                Some(_) => {}
                None => found.push((essence, vec![translated], at)),
            }
        }
    }
    let file = &document.file(operation.file).name;
    let warn = |at: &str, why: String, diagnostics: &mut Vec<Diagnostic>| {
        diagnostics.push(
            Diagnostic::warning(
                Location::document(file, at.to_string()),
                format!("the items of this stream are not checked: {why}"),
            )
            .with_operation(label.to_string())
            .with_code(ITEMS_UNCHECKED),
        );
    };
    let problem = match Problem::first(&builder, compiles) {
        Some(Problem::Error { pointer, message }) => {
            Some((pointer, format!("its item schema: {message}")))
        }
        Some(Problem::Cycle { pointer, message }) => {
            Some((pointer, format!("its item schema has a {message}")))
        }
        Some(Problem::Pattern(pattern)) => Some((
            found.first().map_or("", |(.., at)| at.as_str()).to_string(),
            format!(
                "its item schema has the pattern {pattern:?}, which the validator cannot compile"
            ),
        )),
        None => None,
    };
    if let Some((at, why)) = problem {
        warn(&at, why, diagnostics);
        return streams;
    }
    let defs = builder.into_defs();
    for (media_type, schemas, at) in found {
        let Some(root) = joined(schemas, &defs) else {
            continue;
        };
        let mut root = match projected(root, shape) {
            Ok(root) => root,
            Err(why) => {
                warn(
                    &at,
                    format!("its item schema cannot be projected: {why}"),
                    diagnostics,
                );
                continue;
            }
        };
        if let Err(error) = held.meta_check(&mut root) {
            warn(
                &at,
                format!("its item schema is not valid JSON Schema 2020-12 ({error})"),
                diagnostics,
            );
            continue;
        }
        streams.items.push(ItemSchema {
            media_type,
            schema: InputSchema::shared(&root, held),
        });
    }
    streams
}
