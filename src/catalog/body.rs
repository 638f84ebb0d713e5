//! An operation's request body into the tool: which media type is sent, how (JSON, form,
//! multipart, raw bytes as base64), and whether its properties join the parameters as
//! arguments or the whole body is one argument (the body rule, below).
//!
//! **The body rule.** The request body is merged beside the parameters, its properties
//! becoming top-level arguments, when its schema (after `$ref`s) is an object whose keywords
//! say nothing about which *other* properties may exist: no open `additionalProperties`, no
//! `patternProperties`, `propertyNames`, `min`/`maxProperties`, `unevaluatedProperties`, and
//! none inside its `allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`; none of its property
//! names, nor any name it requires, is already an argument; it is required, or asks for
//! nothing (no required properties, no conditions); and, unless the curation says
//! `lift_composition: true`, its root has no `allOf`, `anyOf`, `oneOf` or `not` (major
//! clients refuse a tool list in which any input schema has those at its root). Its
//! composition and conditional keywords (`allOf`, `anyOf`, `oneOf`, `not`,
//! `if`/`then`/`else`, `dependentRequired`), `description`, `title` and a 2020-12 `$schema`
//! are lifted onto the input schema's root, where they mean what they meant on the body.
//! Otherwise the whole body is one argument named `body` (`requestBody` if a parameter is
//! already called `body`). The `RequestPlan` records which (`BodyPlacement::Merged` or
//! `Argument`).
//!
//! **Media types.** JSON (`application/json`, `+json`) is preferred, then
//! `application/x-www-form-urlencoded`, then `multipart/form-data`, then `text/*`, then the
//! first listed. Form and multipart bodies must be objects (an operation whose form body is
//! not is ineligible, with a diagnostic). Binary is base64: a body of another type, a
//! multipart file part, a `format: binary` string and a Swagger 2.0 `type: file` are carried
//! as base64 strings (`contentEncoding: base64`) and sent as raw bytes. A multipart file part
//! is sent with the property name as its file name and `application/octet-stream`, unless
//! the document's `encoding` gives a `contentType`.

use serde_json::{Map, Value};

use crate::openapi::{Document, FileId};

use super::build::{collection_format, swagger_parameter_schema};
use super::operation::{self, Operation, Parameter, Problem};
use super::schema::SchemaBuilder;
use super::{BodyEncoding, BodyPlacement, BodyPlan, FieldEncoding, ParameterStyle, RequestPlan};

/// The JSON Schema dialect every input schema is written in.
const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A body as the document describes it, before it is placed among the arguments.
pub(super) struct Body<'a> {
    file: FileId,
    pointer: String,
    media_type: String,
    encoding: BodyEncoding,
    schema: Option<&'a Value>,
    /// Swagger 2.0 form parameters, which make up an object schema of their own.
    form_schema: Option<Value>,
    required: bool,
    fields: Vec<FieldEncoding>,
}

pub(super) fn request_body<'a>(
    document: &'a Document,
    operation: &Operation<'a>,
    problems: &mut Vec<Problem>,
) -> Option<Body<'a>> {
    let value = operation.value.get("requestBody")?;
    let pointer = format!("{}/requestBody", operation.pointer);
    let (file, pointer, body) = match operation::follow(document, operation.file, &pointer, value) {
        Ok(found) => found,
        Err(message) => {
            problems.push(Problem::new(operation.file, pointer, message));
            return None;
        }
    };
    let content = body.get("content").and_then(Value::as_object)?;
    let (media_type, media) = pick_media_type(content)?;
    // A Media Type Object may be a `$ref` (to OpenAPI 3.2's `components/mediaTypes`): the
    // schema is then read where it lives.
    let media_pointer = format!(
        "{pointer}/content/{}",
        crate::openapi::escape_token(media_type)
    );
    let (file, media_pointer, media) =
        match operation::follow(document, file, &media_pointer, media) {
            Ok(found) => found,
            Err(message) => {
                problems.push(Problem::new(file, media_pointer, message));
                return None;
            }
        };
    let schema = media.get("schema");
    let encoding = encoding_for(media_type, schema);
    let fields = media
        .get("encoding")
        .and_then(Value::as_object)
        .map(|encodings| {
            encodings
                .iter()
                .map(|(name, e)| field_encoding(name, e))
                .collect()
        })
        .unwrap_or_default();
    Some(Body {
        fields,
        file,
        pointer: format!("{media_pointer}/schema"),
        media_type: media_type.to_string(),
        encoding,
        schema,
        form_schema: None,
        required: body.get("required") == Some(&Value::Bool(true)),
    })
}

/// The stable code of the warning about an `itemSchema` (`Diagnostic::code`).
pub const ITEM_SCHEMA_CODE: &str = "item-schema-not-validated";

/// A warning for each `itemSchema` (OpenAPI 3.2: the schema of each item of a sequential
/// media type, such as `application/jsonl` or `text/event-stream`) of the request body's
/// media type ferry sends and of every response but a 2xx stream: ferry checks no such item
/// against it; the body goes as the caller gives it and comes back as the API sends it.
pub(super) fn item_schemas(document: &Document, operation: &Operation) -> Vec<Problem> {
    let mut found = Vec::new();
    let mut look = |file: FileId, pointer: String, media: &Value, media_type: &str, request| {
        let Ok((file, pointer, media)) = operation::follow(document, file, &pointer, media) else {
            return;
        };
        if media.get("itemSchema").is_none() {
            return;
        }
        let message = if request {
            format!(
                "`itemSchema` describes each item of this `{media_type}` request body: ferry does not check the items, and sends the body as the caller gives it"
            )
        } else {
            format!(
                "`itemSchema` describes each item of this `{media_type}` response: ferry does not validate the items, and passes the body through as the API sends it"
            )
        };
        found.push(
            Problem::new(file, format!("{pointer}/itemSchema"), message)
                .with_code(ITEM_SCHEMA_CODE),
        );
    };
    if let Some(body) = operation.value.get("requestBody")
        && let Some((file, pointer, content)) = content_of(
            document,
            operation.file,
            format!("{}/requestBody", operation.pointer),
            body,
        )
        && let Some((media_type, media)) = pick_media_type(content)
    {
        let at = format!("{pointer}/{}", crate::openapi::escape_token(media_type));
        look(file, at, media, media_type, true);
    }
    let responses = operation.value.get("responses").and_then(Value::as_object);
    for (status, response) in responses.into_iter().flatten() {
        let pointer = format!(
            "{}/responses/{}",
            operation.pointer,
            crate::openapi::escape_token(status)
        );
        let Some((file, pointer, content)) =
            content_of(document, operation.file, pointer, response)
        else {
            continue;
        };
        // A 2xx stream's items are checked (`stream::documented`).
        let success = super::output::is_success(status);
        for (media_type, media) in content {
            if success && super::stream::Sequence::of(media_type).is_some() {
                continue;
            }
            let at = format!("{pointer}/{}", crate::openapi::escape_token(media_type));
            look(file, at, media, media_type, false);
        }
    }
    found
}

/// The `content` of a request body or response (either may be a `$ref`), where it lives.
fn content_of<'a>(
    document: &'a Document,
    file: FileId,
    pointer: String,
    value: &'a Value,
) -> Option<(FileId, String, &'a Map<String, Value>)> {
    let (file, pointer, value) = operation::follow(document, file, &pointer, value).ok()?;
    let content = value.get("content")?.as_object()?;
    Some((file, format!("{pointer}/content"), content))
}

/// Prefers JSON, then forms, then text, then the first type listed.
fn pick_media_type(content: &Map<String, Value>) -> Option<(&str, &Value)> {
    let rank = |media_type: &str| match encoding_for(media_type, None) {
        BodyEncoding::Json => 0,
        BodyEncoding::Form => 1,
        BodyEncoding::Multipart { .. } => 2,
        BodyEncoding::Text => 3,
        BodyEncoding::Binary => 4,
    };
    content
        .iter()
        .min_by_key(|(media_type, _)| rank(media_type))
        .map(|(k, v)| (k.as_str(), v))
}

/// Whether `media_type` (any case, with or without parameters) is a form.
pub(super) fn is_form(media_type: &str) -> bool {
    essence(media_type) == "application/x-www-form-urlencoded"
}

pub(super) fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json")
}

/// A media type without its parameters, lowercased: `Application/JSON; charset=utf-8` →
/// `application/json`.
pub(super) fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn encoding_for(media_type: &str, schema: Option<&Value>) -> BodyEncoding {
    let essence = essence(media_type);
    if is_json(&essence) {
        BodyEncoding::Json
    } else if essence == "application/x-www-form-urlencoded" {
        BodyEncoding::Form
    } else if essence == "multipart/form-data" {
        BodyEncoding::Multipart { files: Vec::new() }
    } else if essence.starts_with("text/") {
        BodyEncoding::Text
    } else if essence == "*/*"
        && schema.is_some_and(|s| s.get("format").is_none_or(|f| f != "binary"))
    {
        BodyEncoding::Json
    } else {
        BodyEncoding::Binary
    }
}

pub(super) fn swagger_body<'a>(
    document: &'a Document,
    operation: &Operation<'a>,
    body: Option<&Parameter<'a>>,
    form_fields: &[&Parameter<'a>],
    credential_names: &[String],
    problems: &mut Vec<Problem>,
) -> Option<Body<'a>> {
    let consumes: Vec<&str> = operation
        .value
        .get("consumes")
        .or_else(|| document.root().get("consumes"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(parameter) = body {
        let media_type = consumes
            .iter()
            .find(|m| is_json(&m.to_ascii_lowercase()))
            .or(consumes.first())
            .copied()
            .unwrap_or("application/json");
        let schema = parameter.value.get("schema");
        return Some(Body {
            fields: Vec::new(),
            file: parameter.file,
            pointer: format!("{}/schema", parameter.pointer),
            media_type: media_type.to_string(),
            encoding: encoding_for(media_type, schema),
            schema,
            form_schema: None,
            required: parameter.value.get("required") == Some(&Value::Bool(true)),
        });
    }
    let fields: Vec<&&Parameter> = form_fields
        .iter()
        .filter(|p| !credential_names.contains(&p.name.to_ascii_lowercase()))
        .collect();
    if fields.is_empty() {
        return None;
    }
    let multipart = consumes.contains(&"multipart/form-data")
        || fields
            .iter()
            .any(|p| p.value.get("type") == Some(&Value::from("file")));
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &fields {
        let mut schema = swagger_parameter_schema(field);
        if let Some(description) = field.value.get("description") {
            schema.insert("description".to_string(), description.clone());
        }
        if field.value.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::from(field.name));
        }
        properties.insert(field.name.to_string(), Value::Object(schema));
    }
    let mut schema = Map::new();
    schema.insert("type".to_string(), Value::from("object"));
    schema.insert("properties".to_string(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_string(), Value::Array(required));
    }
    let required = schema.contains_key("required");
    let (media_type, encoding) = if multipart {
        (
            "multipart/form-data",
            BodyEncoding::Multipart { files: Vec::new() },
        )
    } else {
        ("application/x-www-form-urlencoded", BodyEncoding::Form)
    };
    let fields = fields
        .iter()
        .filter(|field| field.value.contains_key("collectionFormat"))
        .map(|field| {
            let (style, explode) = collection_format(field, ParameterStyle::Form, problems);
            FieldEncoding {
                name: field.name.to_string(),
                content_type: None,
                style,
                explode,
                allow_reserved: false,
            }
        })
        .collect();
    Some(Body {
        fields,
        file: operation.file,
        pointer: format!("{}/parameters", operation.pointer),
        media_type: media_type.to_string(),
        encoding,
        schema: None,
        form_schema: Some(Value::Object(schema)),
        required,
    })
}

/// Puts the body among the arguments: merged beside the parameters when it is a plain
/// object whose property names collide with none of them, under one `body` argument
/// otherwise. A body that cannot be sent as declared is a problem.
pub(super) fn place_body(
    builder: &mut SchemaBuilder,
    body: Body,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    lifted: &mut Map<String, Value>,
    plan: &mut RequestPlan,
    lift_composition: bool,
) -> Result<(), Problem> {
    let empty = Value::Object(Map::new());
    let declared = body.form_schema.as_ref().or(body.schema);
    let (schema_file, schema) = match declared {
        Some(schema) => builder
            .resolve(body.file, schema)
            .unwrap_or((body.file, schema)),
        None => (body.file, &empty),
    };
    let mut encoding = body.encoding.clone();
    // An optional body is spread only when it asks for nothing: its required properties or
    // conditions would otherwise bind a call that sends no body at all.
    let asks_nothing = schema
        .get("required")
        .is_none_or(|r| r.as_array().is_none_or(Vec::is_empty))
        && !["allOf", "anyOf", "oneOf", "not", "if", "dependentRequired"]
            .iter()
            .any(|k| schema.get(*k).is_some());
    // Composition at the root of a tool's input schema is refused by some major clients
    // (Anthropic's Messages API refuses `allOf`, `anyOf` and `oneOf` there, OpenAI's function
    // calling those and `not`), and one such tool makes the whole tool list unusable: such a
    // body stays one argument, where the keywords mean the same, unless the curation asks.
    let composes = ROOT_COMPOSITION.iter().any(|k| schema.get(*k).is_some());
    // A name the body requires but does not define (some documents list `id` so) must not
    // be an argument already either: merged, it would bind that argument instead.
    let requires_an_argument = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|name| properties.contains_key(name));
    let mergeable = mergeable_properties(schema).filter(|names| {
        names.iter().all(|name| !properties.contains_key(*name))
            && !requires_an_argument
            && (body.required || asks_nothing)
            && (lift_composition || !composes)
    });
    let form = matches!(
        encoding,
        BodyEncoding::Form | BodyEncoding::Multipart { .. }
    );
    let not_object = schema.get("type").is_some_and(|t| t != "object");
    if form && not_object {
        return Err(Problem::new(
            body.file,
            body.pointer.clone(),
            "a form body must be an object with properties",
        ));
    }
    let placement = match mergeable {
        Some(_) => {
            let mut translated = builder.schema(schema_file, &body.pointer, schema);
            let mut names = Vec::new();
            // The properties are moved into the arguments, not copied: a body's schema can be
            // most of a tool's.
            let props = translated
                .as_object_mut()
                .and_then(|map| map.remove("properties"));
            if let Some(Value::Object(props)) = props {
                for (name, property) in props {
                    if let BodyEncoding::Multipart { files } = &mut encoding
                        && is_file(
                            builder,
                            schema_file,
                            schema.get("properties").and_then(|p| p.get(&name)),
                        )
                    {
                        files.push(name.clone());
                    }
                    names.push(name.clone());
                    properties.insert(name, property);
                }
            }
            if let Some(Value::Array(body_required)) = translated.get("required") {
                required.extend(body_required.iter().cloned());
            }
            for key in LIFTED_KEYWORDS {
                if let Some(value) = translated.get(*key) {
                    lifted.insert(key.to_string(), value.clone());
                }
            }
            if let Some(dialect) = schema
                .get("$schema")
                .filter(|d| d.as_str() == Some(DIALECT_2020_12))
            {
                lifted.insert("$schema".to_string(), dialect.clone());
            }
            BodyPlacement::Merged(names)
        }
        None => {
            let argument = if properties.contains_key("body") {
                "requestBody"
            } else {
                "body"
            };
            let mut translated = match (&encoding, declared) {
                (BodyEncoding::Binary, _) => {
                    let mut map = Map::new();
                    map.insert("type".to_string(), Value::from("string"));
                    map.insert("contentEncoding".to_string(), Value::from("base64"));
                    map.insert(
                        "contentMediaType".to_string(),
                        Value::from(body.media_type.clone()),
                    );
                    Value::Object(map)
                }
                (BodyEncoding::Text, _) => {
                    let mut map = Map::new();
                    map.insert("type".to_string(), Value::from("string"));
                    Value::Object(map)
                }
                (_, Some(schema)) => builder.schema(body.file, &body.pointer, schema),
                (_, None) => Value::Object(Map::new()),
            };
            if let (Value::Object(map), Some(description)) =
                (&mut translated, declared.and_then(|s| s.get("description")))
            {
                map.entry("description")
                    .or_insert_with(|| description.clone());
            }
            properties.insert(argument.to_string(), translated);
            if body.required {
                required.push(Value::from(argument));
            }
            BodyPlacement::Argument(argument.to_string())
        }
    };
    plan.body = Some(BodyPlan {
        media_type: body.media_type,
        encoding,
        placement,
        required: body.required,
        fields: body.fields,
    });
    Ok(())
}

/// Keywords a body object may carry and still be spread into arguments.
const MERGEABLE_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "examples",
    "example",
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "$defs",
    "definitions",
    "deprecated",
    "discriminator",
    "xml",
    "externalDocs",
];
/// Keywords of a merged body that are lifted onto the input schema's root, where they mean
/// what they meant on the body: composition and conditions over its properties, and its
/// own description.
const LIFTED_KEYWORDS: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "description",
    "title",
];
/// Lifted keywords that some major clients refuse at the root of an input schema.
pub const ROOT_COMPOSITION: &[&str] = &["allOf", "anyOf", "oneOf", "not"];
/// Keywords that constrain which properties an object may have: inside a lifted subschema
/// they would also judge the parameters beside the body, so a body using them is not spread.
const CLOSED_WORLD_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];

/// The property names of a body object that can be spread into arguments (see the body
/// rule in this module's documentation), or `None` when it must stay one argument.
fn mergeable_properties(schema: &Value) -> Option<Vec<&str>> {
    let map = schema.as_object()?;
    let known = |key: &String| {
        key.starts_with("x-")
            || MERGEABLE_KEYWORDS.contains(&key.as_str())
            || LIFTED_KEYWORDS.contains(&key.as_str())
    };
    if !map.keys().all(known) {
        return None;
    }
    let open = map
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false));
    let nullable = map.get("nullable") == Some(&Value::Bool(true))
        || map.get("x-nullable") == Some(&Value::Bool(true));
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        None => map.contains_key("properties"),
        _ => false,
    };
    if open || nullable || !is_object {
        return None;
    }
    let liftable = LIFTED_KEYWORDS
        .iter()
        .filter_map(|k| map.get(*k))
        .all(liftable);
    if !liftable {
        return None;
    }
    match map.get("properties") {
        Some(properties) => Some(properties.as_object()?.keys().map(String::as_str).collect()),
        None => Some(Vec::new()),
    }
}

/// Whether a subschema of a body means the same at the input schema's root: it says nothing
/// about which other properties may exist.
fn liftable(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().all(liftable),
        Value::Object(map) => {
            !map.keys()
                .any(|k| CLOSED_WORLD_KEYWORDS.contains(&k.as_str()))
                && ["allOf", "anyOf", "oneOf", "not", "if", "then", "else"]
                    .iter()
                    .filter_map(|k| map.get(*k))
                    .all(liftable)
        }
        _ => true,
    }
}

fn is_file(builder: &SchemaBuilder, file: FileId, schema: Option<&Value>) -> bool {
    let Some((_, schema)) = schema.and_then(|s| builder.resolve(file, s)) else {
        return false;
    };
    schema.get("format") == Some(&Value::from("binary"))
        || schema.get("type") == Some(&Value::from("file"))
        || schema.get("contentMediaType").is_some() && schema.get("contentEncoding").is_none()
}

fn field_encoding(name: &str, encoding: &Value) -> FieldEncoding {
    let style = match encoding.get("style").and_then(Value::as_str) {
        Some("spaceDelimited") => ParameterStyle::SpaceDelimited,
        Some("pipeDelimited") => ParameterStyle::PipeDelimited,
        Some("deepObject") => ParameterStyle::DeepObject,
        _ => ParameterStyle::Form,
    };
    FieldEncoding {
        name: name.to_string(),
        content_type: encoding
            .get("contentType")
            .and_then(Value::as_str)
            .map(str::to_string),
        style,
        explode: encoding
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == ParameterStyle::Form),
        allow_reserved: encoding.get("allowReserved") == Some(&Value::Bool(true)),
    }
}
