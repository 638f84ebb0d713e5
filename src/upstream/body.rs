//! A request body from a call's arguments, by the plan's media type: JSON, a form, a
//! multipart body (file parts sent as the raw bytes their base64 carries), or raw bytes.

use std::borrow::Cow;
use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::{Map, Value};

use http::HeaderValue;

use super::random::random_hex;
use super::request::{ArgumentError, Body, form_default, primitive, write_form};
use crate::catalog::{BodyEncoding, BodyPlacement, BodyPlan, FieldEncoding, ParameterPlan};

/// Base64 as file and binary arguments carry it: the standard alphabet, padding optional.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

pub(super) fn build(
    plan: &BodyPlan,
    content_type: Option<&HeaderValue>,
    arguments: &Map<String, Value>,
) -> Result<Option<Body>, ArgumentError> {
    let (argument, value): (&str, Cow<'_, Value>) = match &plan.placement {
        BodyPlacement::Argument(name) => match arguments.get(name) {
            Some(value) => (name, Cow::Borrowed(value)),
            None if plan.required => (name, Cow::Owned(Value::Object(Map::new()))),
            None => return Ok(None),
        },
        BodyPlacement::Merged(names) => {
            let merged: Map<String, Value> = names
                .iter()
                .filter_map(|name| {
                    arguments
                        .get(name)
                        .map(|value| (name.clone(), value.clone()))
                })
                .collect();
            if merged.is_empty() && !plan.required {
                return Ok(None);
            }
            ("body", Cow::Owned(Value::Object(merged)))
        }
    };
    let invalid_body = |reason: &'static str| ArgumentError {
        argument: argument.to_string(),
        reason: reason.into(),
    };
    let content_type = content_type
        .cloned()
        .ok_or_else(|| invalid_body("its media type cannot be sent"))?;
    let bytes = match &plan.encoding {
        BodyEncoding::Json => serde_json::to_vec(value.as_ref())
            .map_err(|_| invalid_body("cannot be written as JSON"))?,
        BodyEncoding::Form => {
            let Value::Object(map) = value.as_ref() else {
                return Err(invalid_body("must be an object to be sent as a form"));
            };
            let mut form = String::new();
            write_form(map, &|key| form_field(plan, key), &mut form);
            form.into_bytes()
        }
        BodyEncoding::Multipart { files } => {
            let Value::Object(map) = value.as_ref() else {
                return Err(invalid_body(
                    "must be an object to be sent as multipart/form-data",
                ));
            };
            let (bytes, boundary) = multipart(map, files, &plan.fields)?;
            let content_type =
                HeaderValue::from_str(&format!("multipart/form-data; boundary={boundary}"))
                    .map_err(|_| invalid_body("its media type cannot be sent"))?;
            return Ok(Some(Body {
                content_type,
                bytes,
            }));
        }
        BodyEncoding::Text => match value.as_ref() {
            Value::String(text) => text.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        },
        BodyEncoding::Binary => match value.as_ref() {
            Value::String(text) => BASE64
                .decode(text)
                .map_err(|_| invalid_body("must be base64 (standard alphabet)"))?,
            _ => return Err(invalid_body("must be a base64 string")),
        },
    };
    Ok(Some(Body {
        content_type,
        bytes,
    }))
}

/// A form body's property as a form-style query item: its declared encoding, or `form`
/// exploded.
fn form_field(plan: &BodyPlan, name: &str) -> ParameterPlan {
    let mut field = form_default(name);
    if let Some(declared) = plan.fields.iter().find(|field| field.name == name) {
        field.style = declared.style;
        field.explode = declared.explode;
        field.allow_reserved = declared.allow_reserved;
    }
    field
}

/// One part per property, in argument order. File properties (a base64 string, or a list
/// of them) become `application/octet-stream` parts with the property name as file name;
/// objects become `application/json` parts; other values are text parts. A part's declared
/// `contentType` (the media type's `encoding`) replaces these defaults.
fn multipart(
    map: &Map<String, Value>,
    files: &[String],
    fields: &[FieldEncoding],
) -> Result<(Vec<u8>, String), ArgumentError> {
    let boundary = format!("ferry-{}", random_hex::<12>());
    let mut out = Vec::new();
    for (name, value) in map {
        let is_file = files.iter().any(|file| file == name);
        let items: Vec<&Value> = match value {
            Value::Array(items) if is_file || !items.iter().any(Value::is_object) => {
                items.iter().collect()
            }
            Value::Null => continue,
            other => vec![other],
        };
        let quoted = name.replace(['"', '\r', '\n'], "_");
        let declared = fields
            .iter()
            .find(|field| &field.name == name)
            .and_then(|field| field.content_type.as_deref())
            .filter(|content_type| !content_type.contains(['\r', '\n']));
        for item in items {
            let _ = write!(PartWriter(&mut out), "--{boundary}\r\n");
            if is_file {
                let Value::String(text) = item else {
                    return Err(ArgumentError {
                        argument: name.clone(),
                        reason: "must be a base64 string".into(),
                    });
                };
                let bytes = BASE64.decode(text).map_err(|_| ArgumentError {
                    argument: name.clone(),
                    reason: "must be base64 (standard alphabet)".into(),
                })?;
                let _ = write!(
                    PartWriter(&mut out),
                    "Content-Disposition: form-data; name=\"{quoted}\"; filename=\"{quoted}\"\r\nContent-Type: {}\r\n\r\n",
                    declared.unwrap_or("application/octet-stream")
                );
                out.extend_from_slice(&bytes);
            } else if item.is_object() || item.is_array() {
                let _ = write!(
                    PartWriter(&mut out),
                    "Content-Disposition: form-data; name=\"{quoted}\"\r\nContent-Type: {}\r\n\r\n{item}",
                    declared.unwrap_or("application/json")
                );
            } else if let Some(content_type) = declared {
                let _ = write!(
                    PartWriter(&mut out),
                    "Content-Disposition: form-data; name=\"{quoted}\"\r\nContent-Type: {content_type}\r\n\r\n{}",
                    primitive(item)
                );
            } else {
                let _ = write!(
                    PartWriter(&mut out),
                    "Content-Disposition: form-data; name=\"{quoted}\"\r\n\r\n{}",
                    primitive(item)
                );
            }
            out.extend_from_slice(b"\r\n");
        }
    }
    let _ = write!(PartWriter(&mut out), "--{boundary}--\r\n");
    Ok((out, boundary))
}

struct PartWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for PartWriter<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.extend_from_slice(text.as_bytes());
        Ok(())
    }
}
