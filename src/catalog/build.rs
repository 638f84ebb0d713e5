//! One operation into one tool: its input schema and its request plan.
//!
//! The input schema is one object schema per tool, `additionalProperties: false`:
//! - Each path, query, header and cookie parameter is a property named after the parameter;
//!   when two parameters share a name (`id` in the path and in the query) both become
//!   `{in}_{name}` (`path_id`, `query_id`). The parameter's description, `deprecated` and
//!   examples are carried onto its schema. Path parameters are always required, and every
//!   `{name}` in the path template must be a declared path parameter: an operation missing
//!   one, or with a parameter that cannot be read, is ineligible rather than served with holes
//!   in its requests. An OpenAPI 3.2 `querystring` parameter is one object argument written as
//!   the whole query string as a form is (`ParameterLocation::QueryString`); one ferry cannot
//!   write that way makes its operation ineligible, with a code. `Accept` and `Content-Type`
//!   header parameters are ignored, as OpenAPI says.
//! - The request body joins the parameters or is one argument by the body rule
//!   ([`super::body`]).
//! - `readOnly` properties are left out: they are never sent in a request.
//! - Credentials are never arguments: parameters named by the operation's `apiKey` security
//!   schemes, an `Authorization` header, and parameters whose name the curation's
//!   `credential_parameters` lists (default: `token`, `access_token`, `api_key`, `apikey`,
//!   `api-key`, `x-api-key`; Slack's documents put `token` on 170 operations). They become
//!   `CredentialSlot`s in the plan, filled from ferry's own upstream credentials.

use serde_json::{Map, Value};

use crate::openapi::{Document, SpecVersion};

use super::body::{is_form, is_json, item_schemas, place_body, request_body, swagger_body};
use super::operation::{self, Operation, Parameter, Problem};
use super::schema::{SchemaBuilder, Translations};
use super::{
    CredentialKind, CredentialSlot, ParameterLocation, ParameterPlan, ParameterStyle, RequestPlan,
};

/// What an operation compiles to, before curation settings are applied.
pub struct Built {
    pub input_schema: Value,
    pub plan: RequestPlan,
    /// Patterns in the input schema, for the caller to check.
    pub patterns: Vec<String>,
    /// What of the document the tool leaves out or does not check, with why: lost, and said.
    pub warnings: Vec<Problem>,
}

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
    translations: Option<&mut Translations>,
) -> Result<Built, Vec<Problem>> {
    let mut builder = SchemaBuilder::with_translations(document, translations);
    let mut problems: Vec<Problem> = operation.problems.clone();
    let credentials = credentials(document, operation);
    let mut plan = RequestPlan {
        // A method that is no token is a problem of the operation already (`operation::list`).
        method: http::Method::from_bytes(operation.method.as_bytes()).unwrap_or(http::Method::GET),
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
            "querystring" if document.version == SpecVersion::OpenApi32 => {
                ParameterLocation::QueryString
            }
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
                problems.push(Problem::new(
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
    if document.version == SpecVersion::OpenApi32 {
        querystring_rules(operation, &mut problems);
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
        let (schema, json_content) = if location == ParameterLocation::QueryString {
            (
                querystring_schema(document, &mut builder, parameter, &mut problems),
                false,
            )
        } else {
            parameter_schema(document, &mut builder, parameter, &mut problems)
        };
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
            problems.push(Problem::new(
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

    problems.extend(
        builder
            .cycles()
            .into_iter()
            .map(|(file, pointer, message)| Problem::new(file, pointer, message)),
    );
    let mut patterns = std::mem::take(&mut builder.patterns);
    problems.extend(
        builder
            .errors
            .drain(..)
            .map(|(pointer, message)| Problem::new(operation.file, pointer, message)),
    );
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut warnings: Vec<Problem> = std::mem::take(&mut builder.warnings)
        .into_iter()
        .map(|(file, pointer, message)| Problem::new(file, pointer, message))
        .collect();
    if document.version == SpecVersion::OpenApi32 {
        warnings.extend(item_schemas(document, operation));
    }
    let defs = builder.into_defs();
    let mut schema = Map::with_capacity(5 + lifted.len());
    schema.insert("type".to_string(), Value::from("object"));
    // Grown one argument at a time, the map may hold nearly as much room again: collected
    // anew, it is allocated at its size, for as long as the tool is held.
    let properties: Map<String, Value> = properties.into_iter().collect();
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

/// The stable codes of the problems of a `querystring` parameter (`Diagnostic::code`).
pub const QUERYSTRING_BESIDE_QUERY: &str = "querystring-beside-query";
pub const QUERYSTRING_REPEATED: &str = "querystring-repeated";
pub const QUERYSTRING_NOT_FORM: &str = "querystring-not-form";

/// What OpenAPI 3.2 asks of `querystring` parameters: one at most, and none beside `query`
/// ones, since it is the whole query string.
fn querystring_rules(operation: &Operation, problems: &mut Vec<Problem>) {
    let strings: Vec<&Parameter> = operation
        .parameters
        .iter()
        .filter(|p| p.location == "querystring")
        .collect();
    let Some(first) = strings.first() else {
        return;
    };
    for extra in &strings[1..] {
        problems.push(
            Problem::new(
                extra.file,
                extra.pointer.clone(),
                format!(
                    "a `querystring` parameter MUST NOT appear more than once: `{}` is a second one beside `{}`",
                    extra.name, first.name
                ),
            )
            .with_code(QUERYSTRING_REPEATED),
        );
    }
    if let Some(query) = operation.parameters.iter().find(|p| p.location == "query") {
        problems.push(
            Problem::new(
                first.file,
                first.pointer.clone(),
                format!(
                    "a `querystring` parameter MUST NOT appear in the same operation (or in the operation's path-item) as any `in: \"query\"` parameters: `{}` is the whole query string, and `{}` is in it",
                    first.name, query.name
                ),
            )
            .with_code(QUERYSTRING_BESIDE_QUERY),
        );
    }
}

/// The schema of a `querystring` parameter's one argument: the object its
/// `application/x-www-form-urlencoded` content describes, written as a form is. Any other
/// content is a problem: ferry writes no other kind of query string.
fn querystring_schema(
    document: &Document,
    builder: &mut SchemaBuilder,
    parameter: &Parameter,
    problems: &mut Vec<Problem>,
) -> Value {
    let empty = Value::Object(Map::new());
    let Some((media_type, media)) = parameter
        .value
        .get("content")
        .and_then(Value::as_object)
        .and_then(|content| content.iter().next())
    else {
        problems.push(
            Problem::new(
                parameter.file,
                parameter.pointer.clone(),
                format!(
                    "`querystring` parameter `{}` has no `content`: ferry writes a query string only as a form (`application/x-www-form-urlencoded`)",
                    parameter.name
                ),
            )
            .with_code(QUERYSTRING_NOT_FORM),
        );
        return empty;
    };
    let pointer = format!(
        "{}/content/{}",
        parameter.pointer,
        crate::openapi::escape_token(media_type)
    );
    let (file, pointer, media) = match operation::follow(document, parameter.file, &pointer, media)
    {
        Ok(found) => found,
        Err(message) => {
            problems.push(Problem::new(parameter.file, pointer, message));
            return empty;
        }
    };
    if !is_form(media_type) {
        problems.push(
            Problem::new(
                file,
                pointer,
                format!(
                    "`querystring` parameter `{}` is `{media_type}`: ferry writes a query string only as a form (`application/x-www-form-urlencoded`)",
                    parameter.name
                ),
            )
            .with_code(QUERYSTRING_NOT_FORM),
        );
        return empty;
    }
    if media.get("encoding").is_some() {
        problems.push(
            Problem::new(
                file,
                format!("{pointer}/encoding"),
                format!(
                    "`querystring` parameter `{}` sets an `encoding` of its own for some properties: ferry writes each property as a form's default (`style: form`, `explode: true`), so it would not send what this asks",
                    parameter.name
                ),
            )
            .with_code(QUERYSTRING_NOT_FORM),
        );
        return empty;
    }
    let Some(schema) = media.get("schema") else {
        return empty;
    };
    let schema_pointer = format!("{pointer}/schema");
    let resolved = builder
        .resolve(file, schema)
        .map_or(schema, |(_, resolved)| resolved);
    if resolved.get("type").is_some_and(|t| t != "object") {
        problems.push(
            Problem::new(
                file,
                schema_pointer,
                format!(
                    "`querystring` parameter `{}` is not an object: a form is written from an object's properties",
                    parameter.name
                ),
            )
            .with_code(QUERYSTRING_NOT_FORM),
        );
        return empty;
    }
    let mut translated = builder.schema(file, &schema_pointer, schema);
    add_parameter_words(parameter, &mut translated);
    translated
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
                    "{}/content/{}",
                    parameter.pointer,
                    crate::openapi::escape_token(media_type)
                );
                // A Media Type Object may be a `$ref` (to OpenAPI 3.2's
                // `components/mediaTypes`).
                match operation::follow(document, parameter.file, &pointer, media) {
                    Ok((file, pointer, media)) => match media.get("schema") {
                        Some(schema) => builder.schema(file, &format!("{pointer}/schema"), schema),
                        None => Value::Object(Map::new()),
                    },
                    Err(message) => {
                        problems.push(Problem::new(parameter.file, pointer, message));
                        Value::Object(Map::new())
                    }
                }
            }
            None => Value::Object(Map::new()),
        }
    } else if document.version == SpecVersion::Swagger2 {
        let schema = swagger_parameter_schema(parameter);
        builder.schema(parameter.file, &parameter.pointer, &Value::Object(schema))
    } else {
        problems.push(Problem::new(
            parameter.file,
            parameter.pointer.clone(),
            format!(
                "parameter `{}` has neither `schema` nor `content`",
                parameter.name
            ),
        ));
        Value::Object(Map::new())
    };
    add_parameter_words(parameter, &mut translated);
    (translated, json_content)
}

/// What the parameter says of itself, put on its argument's schema: its description, that it
/// is deprecated, its examples. They take precedence over the schema's own words.
fn add_parameter_words(parameter: &Parameter, translated: &mut Value) {
    if let Value::Object(map) = translated {
        for key in ["description", "deprecated"] {
            if let Some(value) = parameter.value.get(key) {
                map.insert(key.to_string(), value.clone());
            }
        }
        if let Some(example) = parameter.value.get("example") {
            map.insert("examples".to_string(), Value::Array(vec![example.clone()]));
        } else if let Some(Value::Object(examples)) = parameter.value.get("examples") {
            // An Example Object's value is its `value`, or OpenAPI 3.2's `dataValue`; a
            // `serializedValue` is the value as written on the wire, no argument.
            let values: Vec<Value> = examples
                .values()
                .filter_map(|e| e.get("value").or_else(|| e.get("dataValue")).cloned())
                .collect();
            if !values.is_empty() {
                map.insert("examples".to_string(), Value::Array(values));
            }
        }
    }
}

/// The schema keywords a Swagger 2.0 non-body parameter carries on itself.
pub(super) fn swagger_parameter_schema(parameter: &Parameter) -> Map<String, Value> {
    parameter
        .value
        .iter()
        .filter(|(k, _)| PARAMETER_SCHEMA_KEYWORDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A Swagger 2.0 `collectionFormat` (default `csv`, written `csv` style) as an OpenAPI 3
/// style and explode; `tsv`, which has none, is a problem.
pub(super) fn collection_format(
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
            problems.push(Problem::new(
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
        ParameterLocation::Query | ParameterLocation::QueryString | ParameterLocation::Cookie => {
            ParameterStyle::Form
        }
        ParameterLocation::Path | ParameterLocation::Header => ParameterStyle::Simple,
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
        Some("cookie")
            if location == ParameterLocation::Cookie
                && document.version == SpecVersion::OpenApi32 =>
        {
            ParameterStyle::Cookie
        }
        Some(other) => {
            problems.push(Problem::new(
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
        .unwrap_or(matches!(
            style,
            ParameterStyle::Form | ParameterStyle::Cookie
        ));
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
    if location == ParameterLocation::QueryString {
        // The whole query string is no one credential, whatever its name.
        return None;
    }
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
