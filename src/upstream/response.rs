//! An upstream answer to an [`Answer`]: the body as received and the observed HTTP facts,
//! redacted of ferry's secrets, with what ferry did (cut, paged) written down. Its value is
//! what the API sent: a tool's `fields:` shape it only as `mcp` serves it.
//!
//! Pure: no IO, and no MCP: `mcp` writes the answer as a tool result. Nothing is invented:
//! no retryable flag, no error category, no member added to or taken from a problem.

use std::borrow::Cow;

use http::{HeaderMap, HeaderName, StatusCode};
use serde_json::Value;

use super::outcome::{Answer, Handling, Http, Page, Redacted, Stopped, Streamed};
use super::redact::Secrets;
use super::stream::{self, Sequence};
use crate::catalog::NextPage;
use crate::client::Response;

pub use crate::catalog::call::REPORTED_HEADERS;

/// How a tool's results are shaped, resolved from its call options.
#[derive(Debug, Clone, Copy)]
pub struct Shaping<'a> {
    pub tool: &'a str,
    pub limit_bytes: u64,
    /// Lower-case names, the built-in ones and the configured ones.
    pub report_headers: &'a [HeaderName],
    pub next: Option<&'a NextPage>,
    /// ferry sent its own configured credentials on this call.
    pub authenticated: bool,
    /// Secret values that must never reach a result, in any form.
    pub secrets: &'a Secrets,
    /// ferry's own query credential, removed from cursors.
    pub query_credential: Option<&'a str>,
}

/// The answer for what the upstream sent.
///
/// Every byte of the upstream's that the answer keeps (body, and so the value parsed from
/// it, headers, cursors, a redirect's location) is redacted of ferry's secrets first; when
/// anything was, [`Handling::redacted`] says where first, so a text that no longer matches
/// the body as received says so.
pub fn shape(observed: Response, shaping: &Shaping<'_>) -> Answer {
    read(observed, shaping, None)
}

/// [`shape`] for a 2xx answer in a sequential media type that stopped before its end: what
/// came is the answer, and says why it stopped.
pub fn stopped(observed: Response, shaping: &Shaping<'_>, stopped: Stopped) -> Answer {
    read(observed, shaping, Some(stopped))
}

fn read(observed: Response, shaping: &Shaping<'_>, stopped: Option<Stopped>) -> Answer {
    let Response {
        status,
        headers,
        body,
        truncated,
    } = observed;
    let mut handling = Handling {
        truncated,
        limit_bytes: shaping.limit_bytes,
        ..Handling::default()
    };
    let redacted = match shaping.secrets.bytes(&body, truncated) {
        Cow::Owned(redacted) => Some(redacted),
        Cow::Borrowed(_) => None,
    };
    let body = match redacted {
        Some(redacted) => {
            note_redacted(&mut handling, Redacted::Body, shaping.tool);
            redacted
        }
        None => body,
    };
    let essence = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(essence);
    let labelled_json = essence.as_deref().is_some_and(is_json);
    // A body is data only when it is complete, valid JSON: a cut or broken body is passed
    // on as bytes, not labelled as something a program would parse.
    let mut json = if labelled_json && !truncated && !body.is_empty() {
        parse_json(&body).ok()
    } else {
        None
    };
    let mut location = None;
    let sequence = essence.as_deref().and_then(Sequence::of);
    if let (true, Some(sequence)) = (status.is_success(), sequence) {
        // A stream's value is its items, read from the body as redacted.
        let ended = !truncated && stopped.is_none();
        let read = stream::items(sequence, &body, ended);
        let value = Value::Array(read.items);
        handling.numbers_rounded = sequence != Sequence::Events && has_rounded_numbers(&body);
        handling.stream = Some(Box::new(Streamed {
            sequence,
            items: value.as_array().map_or(0, Vec::len),
            not_json: read.not_json,
            partial: read.partial,
            stopped,
            mismatched: Vec::new(),
        }));
        json = Some(value);
    } else if status.is_success() {
        match json.take() {
            Some(value) => json = Some(success_json(value, &body, shaping, &mut handling)),
            None if labelled_json && !truncated && !body.is_empty() => {
                tracing::warn!(
                    tool = shaping.tool,
                    status = status.as_u16(),
                    "upstream response is labelled JSON but is not JSON"
                );
            }
            None => {}
        }
        if let Some(NextPage::Link { .. }) = shaping.next {
            handling.page = Some(link_page(&headers, shaping, &mut handling));
        }
    } else if status.is_redirection() {
        location = headers.get(http::header::LOCATION).map(|value| {
            redact_str(
                &String::from_utf8_lossy(value.as_bytes()),
                shaping,
                &mut handling,
            )
        });
    }
    let http = http_facts(status, &headers, shaping, &mut handling);
    Answer {
        http,
        essence,
        body,
        json,
        location,
        authenticated: shaping.authenticated,
        handling,
    }
}

/// The HTTP facts of an answer whose body is not kept.
pub fn reported(status: StatusCode, headers: &HeaderMap, shaping: &Shaping<'_>) -> Http {
    http_facts(status, headers, shaping, &mut Handling::default())
}

/// Whether a `Content-Type` essence is JSON.
pub fn is_json(essence: &str) -> bool {
    essence == "application/json" || essence.ends_with("+json")
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

/// The target of the first link-value of a `Link` header (RFC 8288 §3) whose relation types
/// include `next`. The value is read as the RFC writes it: link-values separated by commas,
/// each a `<target>` and its `;` parameters, a parameter's value a token or a quoted string
/// (with `\` escapes, and commas or semicolons inside); `rel` may name several relation types,
/// separated by spaces, compared without case, and only its first occurrence in a link-value
/// counts (§3.3). A link-value that cannot be read ends the reading: nothing after it is
/// trusted.
pub fn next_link(link: &str) -> Option<&str> {
    let bytes = link.as_bytes();
    let mut at = 0;
    loop {
        // Empty list elements (`, ,`) are allowed (RFC 9110 §5.6.1).
        while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b',') {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] != b'<' {
            return None;
        }
        let close = at + link[at..].find('>')?;
        let target = &link[at + 1..close];
        at = close + 1;
        let mut relation: Option<Cow<'_, str>> = None;
        loop {
            while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
                at += 1;
            }
            if at >= bytes.len() || bytes[at] == b',' {
                break;
            }
            if bytes[at] != b';' {
                return None;
            }
            at += 1;
            while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
                at += 1;
            }
            let name_start = at;
            while at < bytes.len() && !matches!(bytes[at], b'=' | b';' | b',' | b' ' | b'\t') {
                at += 1;
            }
            let name = &link[name_start..at];
            while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
                at += 1;
            }
            let value = if at < bytes.len() && bytes[at] == b'=' {
                at += 1;
                while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
                    at += 1;
                }
                let (value, next) = link_param_value(link, at)?;
                at = next;
                value
            } else {
                Cow::Borrowed("")
            };
            if relation.is_none() && name.eq_ignore_ascii_case("rel") {
                relation = Some(value);
            }
        }
        let is_next = relation.is_some_and(|relation| {
            relation
                .split_ascii_whitespace()
                .any(|kind| kind.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target);
        }
    }
}

/// A link parameter's value starting at `at`: a quoted string (unescaped) or a token, and
/// where reading goes on; `None` for a quoted string that never closes.
fn link_param_value(link: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let bytes = link.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        let mut end = at;
        while end < bytes.len() && !matches!(bytes[end], b';' | b',' | b' ' | b'\t') {
            end += 1;
        }
        return Some((Cow::Borrowed(&link[at..end]), end));
    }
    let mut value = String::new();
    let mut chars = link[at + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '"' => return Some((Cow::Owned(value), at + 1 + offset + 1)),
            '\\' => value.push(chars.next()?.1),
            c => value.push(c),
        }
    }
    None
}

/// What a successful JSON answer's value gives: its page read, its numbers judged.
fn success_json(
    value: Value,
    body: &[u8],
    shaping: &Shaping<'_>,
    handling: &mut Handling,
) -> Value {
    if let Some(NextPage::Field { pointer, .. }) = shaping.next {
        handling.page = Some(field_page(&value, pointer));
    }
    // serde_json holds numbers as 64-bit integers or floats: say so when one of the body's
    // numbers did not survive that, so a program knows to read the text.
    handling.numbers_rounded = has_rounded_numbers(body);
    value
}

fn http_facts(
    status: StatusCode,
    headers: &HeaderMap,
    shaping: &Shaping<'_>,
    handling: &mut Handling,
) -> Http {
    let mut reported = Vec::new();
    for name in shaping.report_headers {
        let mut values = headers.get_all(name).iter();
        let Some(first) = values.next() else {
            continue;
        };
        // Joined in one string as they come: most headers have one value, and then this is
        // one copy, with no list of the values first.
        let mut joined = String::from_utf8_lossy(first.as_bytes()).into_owned();
        for value in values {
            joined.push_str(", ");
            joined.push_str(&String::from_utf8_lossy(value.as_bytes()));
        }
        let value = match shaping.secrets.text(&joined) {
            Cow::Owned(redacted) => Some(redacted),
            Cow::Borrowed(_) => None,
        };
        let value = match value {
            Some(redacted) => {
                note_redacted(handling, Redacted::Headers, shaping.tool);
                redacted
            }
            None => joined,
        };
        reported.push((name.clone(), value));
    }
    Http {
        status,
        headers: reported,
    }
}

fn field_page(value: &Value, pointer: &str) -> Page {
    let (cursor, cursor_number) = match value.pointer(pointer) {
        Some(Value::String(text)) if !text.is_empty() => (Some(text.clone()), false),
        Some(Value::Number(number)) => (Some(number.to_string()), true),
        _ => (None, false),
    };
    Page {
        more: cursor.is_some(),
        cursor,
        from_link: false,
        cursor_number,
        next_arguments: None,
    }
}

fn link_page(headers: &HeaderMap, shaping: &Shaping<'_>, handling: &mut Handling) -> Page {
    let values: Vec<Cow<'_, str>> = headers
        .get_all(http::header::LINK)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()))
        .collect();
    let joined = values.join(", ");
    let Some(target) = next_link(&joined) else {
        return Page {
            cursor: None,
            more: false,
            from_link: true,
            cursor_number: false,
            next_arguments: None,
        };
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
    let cursor = cursor.map(|cursor| redact_str(&cursor, shaping, handling));
    Page {
        cursor: cursor.filter(|cursor| !cursor.is_empty()),
        more: true,
        from_link: true,
        cursor_number: false,
        next_arguments: None,
    }
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
    crate::json::from_bytes(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body))
}

/// Notes that a secret was taken out of `part` of the answer, unless one already was.
fn note_redacted(handling: &mut Handling, part: Redacted, tool: &str) {
    if handling.redacted.is_none() {
        handling.redacted = Some(part);
        tracing::warn!(
            tool,
            "upstream response contained ferry's credential; it was redacted"
        );
    }
}

/// `text` redacted; a note in `handling` when anything was.
fn redact_str(text: &str, shaping: &Shaping<'_>, handling: &mut Handling) -> String {
    match shaping.secrets.text(text) {
        Cow::Owned(redacted) => {
            note_redacted(handling, Redacted::Target, shaping.tool);
            redacted
        }
        Cow::Borrowed(text) => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn reported_headers_are_joined_in_order_and_redacted() {
        let mut headers = HeaderMap::new();
        headers.append("x-trace", HeaderValue::from_static("one"));
        headers.append("x-trace", HeaderValue::from_static("two s3cret"));
        headers.append("x-trace", HeaderValue::from_static("three"));
        headers.append("x-single", HeaderValue::from_static("only"));
        let report = [
            HeaderName::from_static("x-absent"),
            HeaderName::from_static("x-single"),
            HeaderName::from_static("x-trace"),
        ];
        let secrets = Secrets::new(["s3cret"]);
        let shaping = Shaping {
            tool: "tool",
            limit_bytes: 1024,
            report_headers: &report,
            next: None,
            authenticated: true,
            secrets: &secrets,
            query_credential: None,
        };
        let mut handling = Handling::default();
        let http = http_facts(StatusCode::OK, &headers, &shaping, &mut handling);
        assert_eq!(http.headers.len(), 2);
        assert_eq!(http.headers[0], (report[1].clone(), "only".to_owned()));
        assert_eq!(http.headers[1].0, report[2]);
        let joined = &http.headers[1].1;
        assert!(joined.starts_with("one, two ") && joined.ends_with(", three"));
        assert!(!joined.contains("s3cret"), "{joined}");
        assert_eq!(handling.redacted, Some(Redacted::Headers));
    }
}
