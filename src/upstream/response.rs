//! An upstream answer to a tool result that keeps what the API said: the body as data, the
//! observed HTTP facts in `_meta["dev.ferry/http"]`, what ferry itself did in
//! `_meta["dev.ferry/result"]`.
//!
//! Pure: no IO. Nothing is invented: no retryable flag, no error category, no member added to
//! or taken from a problem.

use std::borrow::Cow;

use base64::Engine as _;
use http::{HeaderMap, HeaderName, StatusCode};
use serde_json::{Map, Value, json};

use super::ToolResult;
use super::redact::Secrets;
use crate::curation::call::NextPage;

/// `_meta` key of the observed HTTP facts.
pub const HTTP_META: &str = "dev.ferry/http";
/// `_meta` key of what ferry did to the result (cut it, paged it, projected it).
pub const RESULT_META: &str = "dev.ferry/result";

/// Response headers reported in `_meta["dev.ferry/http"]` whenever the upstream sends them.
pub const REPORTED_HEADERS: &[&str] = &[
    "content-type",
    "retry-after",
    "location",
    "etag",
    "link",
    "content-language",
];

/// What came back from the upstream.
#[derive(Debug, Clone)]
pub struct Observed {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The body was cut at the size cap.
    pub truncated: bool,
}

/// How a tool's results are shaped, resolved from its call options.
#[derive(Debug, Clone, Copy)]
pub struct Shaping<'a> {
    pub tool: &'a str,
    pub limit_bytes: u64,
    /// Lower-case names, the built-in ones and the configured ones.
    pub report_headers: &'a [HeaderName],
    /// Projection paths, one token list per field.
    pub fields: Option<&'a [Vec<String>]>,
    pub next: Option<&'a NextPage>,
    /// ferry sent its own configured credentials on this call.
    pub authenticated: bool,
    /// Secret values that must never reach a result, in any form.
    pub secrets: &'a Secrets,
    /// ferry's own query credential, removed from cursors.
    pub query_credential: Option<&'a str>,
}

/// A result for a call that failed before or without a full answer: a short, stable text.
pub fn failure(message: impl Into<String>) -> ToolResult {
    ToolResult {
        content: vec![text_block(message.into())],
        is_error: true,
        ..ToolResult::default()
    }
}

/// The tool result for an upstream answer.
///
/// Every byte of the upstream's that reaches the result (body, and so the value parsed from
/// it, headers, cursors) is redacted of ferry's secrets first; when anything was,
/// `_meta["dev.ferry/result"].redacted` is `true`, so a text that no longer matches the body
/// as received says so.
pub fn shape(observed: Observed, shaping: &Shaping<'_>) -> ToolResult {
    let mut result = ToolResult::default();
    let mut done = Map::new();
    let body = shaping.secrets.bytes(&observed.body, observed.truncated);
    if let Cow::Owned(_) = body {
        redacted(&mut done, shaping.tool);
    }
    if observed.truncated {
        done.insert("truncated".into(), Value::Bool(true));
        done.insert("limitBytes".into(), Value::from(shaping.limit_bytes));
    }
    let content_type = observed
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    let essence = content_type.map(essence);
    let essence = essence.as_deref();

    if observed.status.is_success() {
        success(&mut result, &mut done, &body, essence, &observed, shaping);
        if let Some(NextPage::Link) = shaping.next {
            link_page(&observed.headers, shaping, &mut done);
        }
    } else {
        failed(&mut result, &mut done, &body, essence, &observed, shaping);
    }

    let http = http_facts(&observed, shaping, &mut done);
    result.meta.insert(HTTP_META.into(), http);
    if !done.is_empty() {
        result.meta.insert(RESULT_META.into(), Value::Object(done));
    }
    result
}

/// The type and subtype of a `Content-Type` value, lower-cased, without parameters.
pub fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The projection paths of a `fields:` list: a JSON pointer's tokens, or one plain name.
pub fn field_paths(fields: &[String]) -> Vec<Vec<String>> {
    fields
        .iter()
        .map(|field| match field.strip_prefix('/') {
            Some(pointer) => pointer
                .split('/')
                .map(|token| token.replace("~1", "/").replace("~0", "~"))
                .collect(),
            None => vec![field.clone()],
        })
        .collect()
}

/// Keeps only `paths` of a JSON value, in the value's own order. An array along the way
/// applies the rest of the path to each element.
pub fn project(value: &Value, paths: &[&[String]]) -> Value {
    match value {
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| project(item, paths)).collect())
        }
        Value::Object(map) => {
            let mut kept = Map::new();
            for (key, child) in map {
                let rests: Vec<&[String]> = paths
                    .iter()
                    .filter(|path| path.first() == Some(key))
                    .map(|path| &path[1..])
                    .collect();
                if rests.is_empty() {
                    continue;
                }
                if rests.iter().any(|rest| rest.is_empty()) {
                    kept.insert(key.clone(), child.clone());
                } else {
                    kept.insert(key.clone(), project(child, &rests));
                }
            }
            Value::Object(kept)
        }
        scalar => scalar.clone(),
    }
}

/// The target of a `Link` header's `rel="next"` entry.
pub fn next_link(link: &str) -> Option<&str> {
    let mut rest = link;
    while let Some(open) = rest.find('<') {
        let close = open + rest[open..].find('>')?;
        let target = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let params_end = after.find('<').unwrap_or(after.len());
        let is_next = after[..params_end].split(';').any(|param| {
            let Some((key, value)) = param.split_once('=') else {
                return false;
            };
            key.trim().eq_ignore_ascii_case("rel")
                && value
                    .trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target);
        }
        rest = &after[params_end..];
    }
    None
}

fn text_block(text: String) -> Value {
    json!({"type": "text", "text": text})
}

fn resource_uri(tool: &str) -> String {
    format!("ferry://tools/{tool}/response")
}

fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json")
}

fn is_text(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/x-ndjson"
                | "application/x-www-form-urlencoded"
                | "application/csv"
        )
}

fn success(
    result: &mut ToolResult,
    done: &mut Map<String, Value>,
    body: &[u8],
    essence: Option<&str>,
    observed: &Observed,
    shaping: &Shaping<'_>,
) {
    let status = status_line(observed.status);
    if observed.truncated {
        let cut_text = essence.is_some_and(|essence| is_text(essence) && !is_json(essence));
        if let (true, Some(text)) = (cut_text, utf8_prefix(body)) {
            result.content.push(text_block(text.to_string()));
            result.content.push(text_block(format!(
                "the response was cut at {} bytes (max_response_bytes)",
                shaping.limit_bytes
            )));
        } else {
            result.is_error = true;
            result.content.push(text_block(format!(
                "the upstream answered {status}, but its response is larger than the {}-byte limit (max_response_bytes) and was cut",
                shaping.limit_bytes
            )));
        }
        return;
    }
    if body.is_empty() {
        result.content.push(text_block(format!(
            "the upstream answered {status} with an empty body: the call succeeded"
        )));
        return;
    }
    match essence {
        Some(essence) if is_json(essence) => {
            let Ok(value) = parse_json(body) else {
                tracing::warn!(
                    tool = shaping.tool,
                    status = observed.status.as_u16(),
                    "upstream response is labelled JSON but is not JSON"
                );
                result.is_error = true;
                result.content.push(text_block(format!(
                    "the upstream answered {status}, but its response is labelled {essence} and is not valid JSON"
                )));
                result
                    .content
                    .push(resource(shaping.tool, Some("text/plain"), body));
                return;
            };
            if let Some(NextPage::Field(pointer)) = shaping.next {
                field_page(&value, pointer, done);
            }
            let (value, text) = match shaping.fields {
                Some(fields) => {
                    let paths: Vec<&[String]> = fields.iter().map(Vec::as_slice).collect();
                    let projected = project(&value, &paths);
                    done.insert("projected".into(), Value::Bool(true));
                    let text = projected.to_string();
                    (projected, text)
                }
                // The text block is the body as received (secrets redacted): no number or
                // other string re-written.
                None => (value, String::from_utf8_lossy(body).into_owned()),
            };
            // serde_json holds numbers as 64-bit integers or floats: say so when one of the
            // body's numbers did not survive that, so a program knows to read the text.
            if has_rounded_numbers(body) {
                done.insert("numbersRounded".into(), Value::Bool(true));
            }
            result.content.push(text_block(text));
            result.structured_content = Some(value);
        }
        Some(essence) if essence.starts_with("image/") || essence.starts_with("audio/") => {
            let kind = if essence.starts_with("image/") {
                "image"
            } else {
                "audio"
            };
            let data = base64::engine::general_purpose::STANDARD.encode(body);
            result
                .content
                .push(json!({"type": kind, "data": data, "mimeType": essence}));
        }
        Some(essence) if is_text(essence) => match std::str::from_utf8(body) {
            Ok(text) => result.content.push(text_block(text.to_string())),
            Err(_) => result
                .content
                .push(resource(shaping.tool, Some(essence), body)),
        },
        None => match std::str::from_utf8(body) {
            Ok(text) => result.content.push(text_block(text.to_string())),
            Err(_) => result.content.push(resource(shaping.tool, None, body)),
        },
        Some(essence) => result
            .content
            .push(resource(shaping.tool, Some(essence), body)),
    }
}

fn failed(
    result: &mut ToolResult,
    done: &mut Map<String, Value>,
    body: &[u8],
    essence: Option<&str>,
    observed: &Observed,
    shaping: &Shaping<'_>,
) {
    result.is_error = true;
    let status = status_line(observed.status);
    let mut lead = if observed.status.is_redirection() {
        match observed
            .headers
            .get(http::header::LOCATION)
            .map(|value| String::from_utf8_lossy(value.as_bytes()))
        {
            Some(location) => format!(
                "the upstream answered {status}, a redirect to {}; ferry does not follow redirects",
                redact_str(&location, shaping, done)
            ),
            None => format!(
                "the upstream answered {status}, a redirect without a location; ferry does not follow redirects"
            ),
        }
    } else if observed.status == StatusCode::UNAUTHORIZED && shaping.authenticated {
        format!(
            "the upstream answered {status} to ferry's own configured credentials: this is a configuration problem of \
             this server that no change to the call can fix"
        )
    } else {
        format!("the upstream answered {status}")
    };

    // A problem is data only when it is complete, valid JSON: a cut or broken body is
    // passed on as text, not labelled as something a program would parse.
    let parsed_json = if !observed.truncated && essence.is_some_and(is_json) {
        parse_json(body).ok()
    } else {
        None
    };
    let mime = match essence {
        Some(essence) if is_json(essence) && parsed_json.is_none() => {
            Some(if std::str::from_utf8(body).is_ok() {
                "text/plain"
            } else {
                "application/octet-stream"
            })
        }
        other => other,
    };
    if let (Some("application/problem+json"), Some(Value::Object(problem))) =
        (essence, &parsed_json)
    {
        for member in ["title", "detail", "type"] {
            if let Some(Value::String(text)) = problem.get(member) {
                lead.push_str(&format!("\n{member}: {text}"));
            }
        }
        if let Some(Value::Number(number)) = problem.get("status") {
            lead.push_str(&format!("\nstatus: {number}"));
        }
    }
    if observed.truncated {
        lead.push_str(&format!(
            "\nthe body was cut at {} bytes (max_response_bytes)",
            shaping.limit_bytes
        ));
    }
    result.content.push(text_block(lead));
    if !body.is_empty() {
        result.content.push(resource(shaping.tool, mime, body));
    }
}

/// An embedded resource carrying a body: text when it is UTF-8 (exactly as received),
/// base64 otherwise.
fn resource(tool: &str, mime: Option<&str>, body: &[u8]) -> Value {
    let mut resource = Map::new();
    resource.insert("uri".into(), Value::String(resource_uri(tool)));
    if let Some(mime) = mime {
        resource.insert("mimeType".into(), Value::String(mime.to_string()));
    }
    match std::str::from_utf8(body) {
        Ok(text) if !mime.is_some_and(is_binary_type) => {
            resource.insert("text".into(), Value::String(text.to_string()));
        }
        _ => {
            let blob = base64::engine::general_purpose::STANDARD.encode(body);
            resource.insert("blob".into(), Value::String(blob));
        }
    }
    json!({"type": "resource", "resource": resource})
}

fn is_binary_type(essence: &str) -> bool {
    essence.starts_with("image/")
        || essence.starts_with("audio/")
        || essence.starts_with("video/")
        || matches!(
            essence,
            "application/octet-stream" | "application/pdf" | "application/zip"
        )
}

fn status_line(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The longest prefix that is valid UTF-8 (a cut may split a character).
fn utf8_prefix(body: &[u8]) -> Option<&str> {
    match std::str::from_utf8(body) {
        Ok(text) => Some(text),
        Err(error) if error.error_len().is_none() => {
            std::str::from_utf8(&body[..error.valid_up_to()]).ok()
        }
        Err(_) => None,
    }
}

fn http_facts(observed: &Observed, shaping: &Shaping<'_>, done: &mut Map<String, Value>) -> Value {
    let mut headers = Map::new();
    for name in shaping.report_headers {
        let mut values = observed.headers.get_all(name).iter().peekable();
        if values.peek().is_none() {
            continue;
        }
        let joined: Vec<Cow<'_, str>> = values
            .map(|value| String::from_utf8_lossy(value.as_bytes()))
            .collect();
        let joined = joined.join(", ");
        headers.insert(
            name.as_str().to_string(),
            Value::String(redact_str(&joined, shaping, done).into_owned()),
        );
    }
    json!({"status": observed.status.as_u16(), "headers": headers})
}

fn field_page(value: &Value, pointer: &str, done: &mut Map<String, Value>) {
    let cursor = match value.pointer(pointer) {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    let more = cursor.is_some();
    page(cursor, more, done);
}

fn link_page(headers: &HeaderMap, shaping: &Shaping<'_>, done: &mut Map<String, Value>) {
    let values: Vec<Cow<'_, str>> = headers
        .get_all(http::header::LINK)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()))
        .collect();
    let joined = values.join(", ");
    let Some(target) = next_link(&joined) else {
        page(None, false, done);
        return;
    };
    let query = target
        .split('#')
        .next()
        .unwrap_or_default()
        .split_once('?')
        .map(|(_, query)| query);
    let cursor = query.map(|query| match shaping.query_credential {
        Some(name) => super::request::without_query_item(query, name),
        None => query.to_string(),
    });
    let cursor = cursor.map(|cursor| redact_str(&cursor, shaping, done).into_owned());
    page(cursor.filter(|cursor| !cursor.is_empty()), true, done);
}

fn page(cursor: Option<String>, more: bool, done: &mut Map<String, Value>) {
    if let Some(cursor) = cursor {
        done.insert("nextCursor".into(), Value::String(cursor));
    }
    done.insert("more".into(), Value::Bool(more));
}

/// Whether a JSON text holds a number that a 64-bit integer or float cannot represent
/// exactly as written (an integer past ±2^64, or a decimal with more precision than f64).
pub fn has_rounded_numbers(json: &[u8]) -> bool {
    let mut index = 0;
    while index < json.len() {
        match json[index] {
            b'"' => {
                index += 1;
                while index < json.len() && json[index] != b'"' {
                    index += if json[index] == b'\\' { 2 } else { 1 };
                }
                index += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = index;
                while index < json.len()
                    && matches!(json[index], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    index += 1;
                }
                let token = std::str::from_utf8(&json[start..index]).unwrap_or("");
                if !number_is_exact(token) {
                    return true;
                }
            }
            _ => index += 1,
        }
    }
    false
}

fn number_is_exact(token: &str) -> bool {
    if !token.contains(['.', 'e', 'E']) {
        return token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok();
    }
    short_decimal(token) || float_is_exact(token)
}

/// Whether a JSON number token has at most 15 significant digits and a magnitude well
/// inside f64's normal range. Every such decimal survives f64 exactly (f64 holds any
/// 15-digit decimal), so it needs no allocation to tell: a body full of prices or
/// coordinates is judged in one pass.
pub fn short_decimal(token: &str) -> bool {
    let (mantissa, exponent) = match token.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => match exponent.trim_start_matches('+').parse::<i32>() {
            Ok(exponent) => (mantissa, exponent),
            Err(_) => return false,
        },
        None => (token, 0),
    };
    if mantissa.len() > 40 || exponent.unsigned_abs() > 250 {
        return false;
    }
    // The span from the first to the last non-zero digit, the point skipped.
    let (mut first, mut last) = (None, 0);
    for (index, digit) in mantissa.bytes().filter(u8::is_ascii_digit).enumerate() {
        if digit != b'0' {
            first.get_or_insert(index);
            last = index;
        }
    }
    first.is_none_or(|first| last - first < 15)
}

/// Whether the f64 nearest a decimal token prints back as the same decimal.
pub fn float_is_exact(token: &str) -> bool {
    match token.parse::<f64>() {
        Ok(float) if float.is_finite() => decimal(token) == decimal(&float.to_string()),
        _ => false,
    }
}

/// A decimal number as (negative, significant digits, exponent), so `1.50e1` and `15` agree.
fn decimal(text: &str) -> (bool, String, i64) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = format!("{whole}{fraction}")
        .trim_start_matches('0')
        .to_string();
    let mut exponent = exponent - fraction.len() as i64;
    while digits.ends_with('0') {
        digits.pop();
        exponent += 1;
    }
    if digits.is_empty() {
        return (false, String::new(), 0);
    }
    (negative, digits, exponent)
}

/// JSON from a body, past a UTF-8 byte order mark if there is one.
fn parse_json(body: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body))
}

/// Notes in `_meta["dev.ferry/result"]` that a secret was taken out of the result.
fn redacted(done: &mut Map<String, Value>, tool: &str) {
    if done.insert("redacted".into(), Value::Bool(true)).is_none() {
        tracing::warn!(
            tool,
            "upstream response contained ferry's credential; it was redacted"
        );
    }
}

fn redact_str<'t>(
    text: &'t str,
    shaping: &Shaping<'_>,
    done: &mut Map<String, Value>,
) -> Cow<'t, str> {
    let text = shaping.secrets.text(text);
    if let Cow::Owned(_) = text {
        redacted(done, shaping.tool);
    }
    text
}
