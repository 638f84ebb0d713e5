//! `Mcp-Name` and `Mcp-Param-*` header values: decoding (`=?base64?…?=`) and comparing them
//! with the body, and finding the arguments a tool's input schema marks with `x-mcp-header`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::header::AsHeaderName;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

/// The headers a modern client mirrors the request into, named once: looked up by name, a
/// text name would be parsed again on every request.
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// An argument whose value a modern HTTP client mirrors into `Mcp-Param-{name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredHeader {
    /// The header name without the `Mcp-Param-` prefix, as the schema writes it.
    pub name: String,
    /// Lowercased full header name, ready for lookup.
    header: String,
    /// Property names from the arguments object down to the value.
    pub path: Vec<String>,
}

/// Every `x-mcp-header` in `schema`, reached through `properties` chains only (the keyword is
/// defined nowhere else), in schema order.
pub fn mirrored_headers(schema: &Value) -> Vec<MirroredHeader> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found);
    found
}

fn walk(schema: &Value, path: &mut Vec<String>, found: &mut Vec<MirroredHeader>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (property, subschema) in properties {
        path.push(property.clone());
        if let Some(name) = subschema.get("x-mcp-header").and_then(Value::as_str) {
            found.push(MirroredHeader {
                name: name.to_owned(),
                header: format!("mcp-param-{}", name.to_ascii_lowercase()),
                path: path.clone(),
            });
        }
        walk(subschema, path, found);
        path.pop();
    }
}

/// A header's value, base64-decoded when it uses the `=?base64?…?=` form. `Err` names what is
/// wrong with it.
pub(crate) fn decoded(
    headers: &HeaderMap,
    name: impl AsHeaderName,
) -> Result<Option<String>, String> {
    let Some(value) = single(headers, name)? else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| "value is not visible ASCII".to_owned())?;
    decode_value(text).map(Some)
}

/// What is wrong with a header that occurs more than once.
pub(super) const REPEATED: &str = "occurs more than once";

/// A header's one value; `Err` when it occurs more than once, since an intermediary may read
/// another line than the one checked.
pub(super) fn single(
    headers: &HeaderMap,
    name: impl AsHeaderName,
) -> Result<Option<&HeaderValue>, &'static str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next();
    match values.next() {
        Some(_) => Err(REPEATED),
        None => Ok(value),
    }
}

/// The name (after `mcp-param-`, lowercase) of an `Mcp-Param-*` header that occurs more than
/// once, if any.
pub(super) fn repeated_param(headers: &HeaderMap) -> Option<&str> {
    headers.keys().find_map(|name| {
        let param = name.as_str().strip_prefix("mcp-param-")?;
        (headers.get_all(name).iter().nth(1).is_some()).then_some(param)
    })
}

pub(crate) fn decode_value(text: &str) -> Result<String, String> {
    match text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|_| "value is not valid base64".to_owned())?;
            String::from_utf8(bytes).map_err(|_| "value does not decode to UTF-8".to_owned())
        }
        None => Ok(text.to_owned()),
    }
}

/// Checks one mirrored argument against its header: present and equal when the argument is
/// present and not null, absent otherwise.
pub(super) fn check_param(
    headers: &HeaderMap,
    mirrored: &MirroredHeader,
    arguments: &Map<String, Value>,
) -> Result<(), String> {
    let body = lookup(arguments, &mirrored.path).filter(|value| !value.is_null());
    let header = decoded(headers, &mirrored.header)
        .map_err(|problem| format!("Mcp-Param-{} header {problem}", mirrored.name))?;
    match (header, body) {
        (None, None) => Ok(()),
        (Some(header), Some(body)) if agrees(&header, body) => Ok(()),
        (None, Some(_)) => Err(format!("missing Mcp-Param-{} header", mirrored.name)),
        (Some(header), None) => Err(format!(
            "Mcp-Param-{} header value '{header}' has no argument in the body",
            mirrored.name
        )),
        (Some(header), Some(body)) => Err(format!(
            "Mcp-Param-{} header value '{header}' does not match body value '{}'",
            mirrored.name,
            plain(body)
        )),
    }
}

fn lookup<'v>(arguments: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut value = arguments.get(first)?;
    for key in rest {
        value = value.get(key)?;
    }
    Some(value)
}

/// Numbers compare numerically (`42.0` agrees with `42`), strings and booleans as text.
pub(crate) fn agrees(header: &str, body: &Value) -> bool {
    match body {
        Value::String(text) => header == text,
        Value::Bool(flag) => header == if *flag { "true" } else { "false" },
        Value::Number(number) => match (header.trim().parse::<f64>(), number.as_f64()) {
            (Ok(header), Some(body)) => header == body,
            _ => false,
        },
        _ => false,
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
