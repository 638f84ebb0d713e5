//! One operation into one tool: its input schema and its request plan.

use serde_json::{Map, Value};

use crate::openapi::{Document, FileId, SpecVersion};

use super::operation::{self, Operation, Parameter};
use super::schema::SchemaBuilder;
use super::{
    BodyEncoding, BodyPlacement, BodyPlan, CredentialKind, CredentialSlot, FieldEncoding,
    ParameterLocation, ParameterPlan, ParameterStyle, RequestPlan,
};

/// What an operation compiles to, before curation settings are applied.
pub struct Built {
    pub input_schema: Value,
    pub plan: RequestPlan,
    /// Patterns in the input schema, for the caller to check.
    pub patterns: Vec<String>,
    /// Keywords of the document left out of the input schema, with why: lost, and said.
    pub warnings: Vec<Problem>,
}

/// A problem that makes the operation ineligible: (pointer in its file, message).
pub type Problem = (FileId, String, String);

/// Schema keywords a Swagger 2.0 non-body parameter carries on itself.
const PARAMETER_SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "x-nullable",
];

/// `lift_composition`: whether a body whose root composes (`allOf`, `anyOf`, `oneOf`, `not`)
/// may still be spread, those keywords lifted onto the input schema's root.
pub fn build(
    document: &Document,
    operation: &Operation,
    credential_names: &[String],
    lift_composition: bool,
) -> Result<Built, Vec<Problem>> {
    let mut builder = SchemaBuilder::new(document);
    let mut problems: Vec<Problem> = operation.problems.clone();
    let credentials = credentials(document, operation);
    let mut plan = RequestPlan {
        method: operation
            .method
            .to_ascii_uppercase()
            .parse()
            .unwrap_or(http::Method::GET),
        path: operation.path.to_string(),
        parameters: Vec::new(),
        body: None,
        credentials: Vec::new(),
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut form_fields: Vec<&Parameter> = Vec::new();
    let mut body_parameter: Option<&Parameter> = None;

    // The parameters that become arguments, with their place: credentials and the header
    // parameters OpenAPI ignores are set aside first, so only these can collide by name.
    let mut arguments: Vec<(&Parameter, ParameterLocation)> = Vec::new();
    for parameter in &operation.parameters {
        let location = match parameter.location {
            "path" => ParameterLocation::Path,
            "query" => ParameterLocation::Query,
            "header" => ParameterLocation::Header,
            "cookie" => ParameterLocation::Cookie,
            "body" if document.version == SpecVersion::Swagger2 => {
                body_parameter = Some(parameter);
                continue;
            }
            "formData" if document.version == SpecVersion::Swagger2 => {
                form_fields.push(parameter);
                continue;
            }
            other => {
                problems.push((
                    parameter.file,
                    parameter.pointer.clone(),
                    format!(
                        "parameter `{}` is in an unknown place `{other}`",
                        parameter.name
                    ),
                ));
                continue;
            }
        };
        if let Some(slot) = credential_for(parameter, location, &credentials, credential_names) {
            if !plan.credentials.contains(&slot) {
                plan.credentials.push(slot);
            }
            continue;
        }
        if location == ParameterLocation::Header
            && ["accept", "content-type"].contains(&parameter.name.to_ascii_lowercase().as_str())
        {
            // OpenAPI ignores these header parameters: they come from the media types.
            continue;
        }
        arguments.push((parameter, location));
    }

    for &(parameter, location) in &arguments {
        let collides = arguments
            .iter()
            .filter(|(p, _)| p.name == parameter.name)
            .count()
            > 1;
        let argument = if collides {
            format!("{}_{}", parameter.location, parameter.name)
        } else {
            parameter.name.to_string()
        };
        let (schema, json_content) =
            parameter_schema(document, &mut builder, parameter, &mut problems);
        let is_required = location == ParameterLocation::Path
            || parameter.value.get("required") == Some(&Value::Bool(true));
        let (style, explode) = parameter_style(document, parameter, location, &mut problems);
        plan.parameters.push(ParameterPlan {
            argument: argument.clone(),
            name: parameter.name.to_string(),
            location,
            style,
            explode,
            allow_reserved: parameter.value.get("allowReserved") == Some(&Value::Bool(true)),
            required: is_required,
            json_content,
        });
        if is_required {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument, schema);
    }

    // Every `{name}` in the path template needs a path parameter, or the request would be
    // sent with the braces in it.
    for name in template_names(operation.path) {
        let declared = plan
            .parameters
            .iter()
            .any(|p| p.location == ParameterLocation::Path && p.name == name);
        if !declared {
            problems.push((
                operation.file,
                operation.pointer.clone(),
                format!("path parameter `{name}` is not declared"),
            ));
        }
    }

    let mut lifted = Map::new();
    let body = match document.version {
        SpecVersion::Swagger2 => swagger_body(
            document,
            operation,
            body_parameter,
            &form_fields,
            credential_names,
            &mut problems,
        ),
        _ => request_body(document, operation, &mut problems),
    };
    if let Some(body) = body
        && let Err(problem) = place_body(
            &mut builder,
            body,
            &mut properties,
            &mut required,
            &mut lifted,
            &mut plan,
            lift_composition,
        )
    {
        problems.push(problem);
    }

    problems.extend(builder.cycles());
    let mut patterns = std::mem::take(&mut builder.patterns);
    problems.extend(
        builder
            .errors
            .drain(..)
            .map(|(pointer, message)| (operation.file, pointer, message)),
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    let warnings = std::mem::take(&mut builder.warnings);
    let defs = builder.into_defs();
    let mut schema = Map::new();
    schema.insert("type".to_string(), Value::from("object"));
    schema.insert("properties".to_string(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_string(), Value::Array(required));
    }
    schema.insert("additionalProperties".to_string(), Value::Bool(false));
    schema.extend(lifted);
    if !defs.is_empty() {
        schema.insert("$defs".to_string(), Value::Object(defs));
    }
    patterns.sort();
    patterns.dedup();
    Ok(Built {
        input_schema: Value::Object(schema),
        plan,
        patterns,
        warnings,
    })
}

/// The names between braces in a path template: `/pets/{petId}` → `petId`.
fn template_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// The JSON Schema dialect every input schema is written in.
const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A body as the document describes it, before it is placed among the arguments.
struct Body<'a> {
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

fn request_body<'a>(
    document: &'a Document,
    operation: &Operation<'a>,
    problems: &mut Vec<Problem>,
) -> Option<Body<'a>> {
    let value = operation.value.get("requestBody")?;
    let pointer = format!("{}/requestBody", operation.pointer);
    let (file, pointer, body) = match operation::follow(document, operation.file, &pointer, value) {
        Ok(found) => found,
        Err(message) => {
            problems.push((operation.file, pointer, message));
            return None;
        }
    };
    let content = body.get("content").and_then(Value::as_object)?;
    let (media_type, media) = pick_media_type(content)?;
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
        pointer: format!(
            "{pointer}/content/{}/schema",
            crate::openapi::escape_token(media_type)
        ),
        media_type: media_type.to_string(),
        encoding,
        schema,
        form_schema: None,
        required: body.get("required") == Some(&Value::Bool(true)),
    })
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

fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json")
}

/// A media type without its parameters, lowercased: `Application/JSON; charset=utf-8` →
/// `application/json`.
fn essence(media_type: &str) -> String {
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

fn swagger_body<'a>(
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
fn place_body(
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
        return Err((
            body.file,
            body.pointer.clone(),
            "a form body must be an object with properties".to_string(),
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
/// rule in ARCHITECTURE.md), or `None` when it must stay one argument.
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

fn parameter_schema(
    document: &Document,
    builder: &mut SchemaBuilder,
    parameter: &Parameter,
    problems: &mut Vec<Problem>,
) -> (Value, bool) {
    let mut json_content = false;
    let mut translated = if let Some(schema) = parameter.value.get("schema") {
        builder.schema(
            parameter.file,
            &format!("{}/schema", parameter.pointer),
            schema,
        )
    } else if let Some(content) = parameter.value.get("content").and_then(Value::as_object) {
        match content.iter().next() {
            Some((media_type, media)) => {
                json_content = is_json(&media_type.to_ascii_lowercase());
                let pointer = format!(
                    "{}/content/{}/schema",
                    parameter.pointer,
                    crate::openapi::escape_token(media_type)
                );
                match media.get("schema") {
                    Some(schema) => builder.schema(parameter.file, &pointer, schema),
                    None => Value::Object(Map::new()),
                }
            }
            None => Value::Object(Map::new()),
        }
    } else if document.version == SpecVersion::Swagger2 {
        let schema = swagger_parameter_schema(parameter);
        builder.schema(parameter.file, &parameter.pointer, &Value::Object(schema))
    } else {
        problems.push((
            parameter.file,
            parameter.pointer.clone(),
            format!(
                "parameter `{}` has neither `schema` nor `content`",
                parameter.name
            ),
        ));
        Value::Object(Map::new())
    };
    if let Value::Object(map) = &mut translated {
        // What the parameter says of itself takes precedence over its schema's own words.
        for key in ["description", "deprecated"] {
            if let Some(value) = parameter.value.get(key) {
                map.insert(key.to_string(), value.clone());
            }
        }
        if let Some(example) = parameter.value.get("example") {
            map.insert("examples".to_string(), Value::Array(vec![example.clone()]));
        } else if let Some(Value::Object(examples)) = parameter.value.get("examples") {
            let values: Vec<Value> = examples
                .values()
                .filter_map(|e| e.get("value").cloned())
                .collect();
            if !values.is_empty() {
                map.insert("examples".to_string(), Value::Array(values));
            }
        }
    }
    (translated, json_content)
}

/// The schema keywords a Swagger 2.0 non-body parameter carries on itself.
fn swagger_parameter_schema(parameter: &Parameter) -> Map<String, Value> {
    parameter
        .value
        .iter()
        .filter(|(k, _)| PARAMETER_SCHEMA_KEYWORDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A Swagger 2.0 `collectionFormat` (default `csv`, written `csv` style) as an OpenAPI 3
/// style and explode; `tsv`, which has none, is a problem.
fn collection_format(
    parameter: &Parameter,
    csv: ParameterStyle,
    problems: &mut Vec<Problem>,
) -> (ParameterStyle, bool) {
    let format = parameter
        .value
        .get("collectionFormat")
        .and_then(Value::as_str)
        .unwrap_or("csv");
    match format {
        "csv" => (csv, false),
        "multi" => (ParameterStyle::Form, true),
        "ssv" => (ParameterStyle::SpaceDelimited, false),
        "pipes" => (ParameterStyle::PipeDelimited, false),
        other => {
            problems.push((
                parameter.file,
                format!("{}/collectionFormat", parameter.pointer),
                format!("collectionFormat `{other}` cannot be expressed"),
            ));
            (csv, false)
        }
    }
}

fn parameter_style(
    document: &Document,
    parameter: &Parameter,
    location: ParameterLocation,
    problems: &mut Vec<Problem>,
) -> (ParameterStyle, bool) {
    if document.version == SpecVersion::Swagger2 {
        let csv = if location == ParameterLocation::Query {
            ParameterStyle::Form
        } else {
            ParameterStyle::Simple
        };
        return collection_format(parameter, csv, problems);
    }
    let default = match location {
        ParameterLocation::Query | ParameterLocation::Cookie => ParameterStyle::Form,
        _ => ParameterStyle::Simple,
    };
    let style = match parameter.value.get("style").and_then(Value::as_str) {
        None => default,
        Some("simple") => ParameterStyle::Simple,
        Some("label") => ParameterStyle::Label,
        Some("matrix") => ParameterStyle::Matrix,
        Some("form") => ParameterStyle::Form,
        Some("spaceDelimited") => ParameterStyle::SpaceDelimited,
        Some("pipeDelimited") => ParameterStyle::PipeDelimited,
        Some("deepObject") => ParameterStyle::DeepObject,
        Some(other) => {
            problems.push((
                parameter.file,
                format!("{}/style", parameter.pointer),
                format!("unknown parameter style `{other}`"),
            ));
            default
        }
    };
    let explode = parameter
        .value
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == ParameterStyle::Form);
    (style, explode)
}

/// The credentials the operation's security requirements name.
fn credentials(document: &Document, operation: &Operation) -> Vec<CredentialSlot> {
    let mut slots = Vec::new();
    for name in operation::security(document, operation) {
        let Some(scheme) = operation::security_scheme(document, name) else {
            continue;
        };
        let kind = match scheme.get("type").and_then(Value::as_str) {
            Some("apiKey") => {
                let location = match scheme.get("in").and_then(Value::as_str) {
                    Some("query") => ParameterLocation::Query,
                    Some("cookie") => ParameterLocation::Cookie,
                    _ => ParameterLocation::Header,
                };
                let key = scheme
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                CredentialKind::ApiKey {
                    location,
                    name: key,
                }
            }
            Some("basic") => CredentialKind::Basic,
            Some("http") => match scheme
                .get("scheme")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("basic") => CredentialKind::Basic,
                Some("bearer") | None => CredentialKind::Bearer,
                Some(other) => CredentialKind::Http(other.to_string()),
            },
            _ => CredentialKind::Bearer,
        };
        slots.push(CredentialSlot {
            scheme: name.to_string(),
            kind,
        });
    }
    slots
}

/// The credential slot a parameter carries, when it carries one: an `Authorization`
/// header, a parameter a security scheme names, or one the curation names as a credential.
fn credential_for(
    parameter: &Parameter,
    location: ParameterLocation,
    credentials: &[CredentialSlot],
    credential_names: &[String],
) -> Option<CredentialSlot> {
    let lower = parameter.name.to_ascii_lowercase();
    if location == ParameterLocation::Header && lower == "authorization" {
        return Some(
            credentials
                .iter()
                .find(|c| !matches!(c.kind, CredentialKind::ApiKey { .. }))
                .cloned()
                .unwrap_or(CredentialSlot {
                    scheme: "Authorization".to_string(),
                    kind: CredentialKind::Bearer,
                }),
        );
    }
    for slot in credentials {
        if let CredentialKind::ApiKey { location: l, name } = &slot.kind {
            let same = if location == ParameterLocation::Header {
                name.eq_ignore_ascii_case(parameter.name)
            } else {
                name == parameter.name
            };
            if *l == location && same {
                return Some(slot.clone());
            }
        }
    }
    if location != ParameterLocation::Path && credential_names.contains(&lower) {
        return Some(CredentialSlot {
            scheme: format!("parameter {}", parameter.name),
            kind: CredentialKind::ApiKey {
                location,
                name: parameter.name.to_string(),
            },
        });
    }
    None
}
