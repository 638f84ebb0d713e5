//! Arguments to an HTTP request, by the compiled plan and OpenAPI's serialization rules.
//!
//! Pure: no IO. Every value an argument puts in the path is percent-encoded as part of one
//! segment, so nothing a caller sends can move the path, the query or the host; header and
//! cookie values with CR, LF or NUL are refused.

use std::borrow::Cow;
use std::fmt::Write as _;

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use crate::catalog::{ParameterLocation, ParameterPlan, ParameterStyle, RequestPlan};

/// The request for one call, relative to the upstream's base URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Starts with `/` (the expanded path template), then `?query` when there is one.
    pub path_and_query: String,
    pub headers: HeaderMap,
    pub body: Option<Body>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub content_type: HeaderValue,
    pub bytes: Vec<u8>,
}

/// An argument that cannot become part of a request. The caller's to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid argument {argument:?}: {reason}")]
pub struct ArgumentError {
    pub argument: String,
    pub reason: Cow<'static, str>,
}

/// What of a plan can be decided once, at start-up: the path template split into literal
/// text and parameters, each parameter's name as it goes on the wire, and the body's media
/// type as a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pieces: Vec<Piece>,
    /// One per parameter of the plan, in its order.
    names: Vec<WireName>,
    /// The body's `Content-Type`; `None` when there is no body or it cannot be sent.
    content_type: Option<HeaderValue>,
}

/// What a call adds beside the plan: pagination and ferry's own query credential.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// `(argument, size)`: the page size applied when the caller gives none.
    pub page_size: Option<(&'a str, u64)>,
    /// The argument that takes back a `Link` cursor (a query string).
    pub link_cursor: Option<&'a str>,
    /// A query item ferry adds itself: `(name, value)`, both already encoded. Any item of
    /// that name in a caller's cursor is dropped.
    pub query_credential: Option<(&'a str, &'a str)>,
}

impl Route {
    pub fn new(plan: &RequestPlan) -> Route {
        let mut pieces = Vec::new();
        let mut rest = plan.path.as_str();
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|close| open + close) else {
                break;
            };
            let name = &rest[open + 1..close];
            let index = plan.parameters.iter().position(|parameter| {
                parameter.location == ParameterLocation::Path && parameter.name == name
            });
            match index {
                Some(index) => {
                    if open > 0 {
                        pieces.push(Piece::Literal(rest[..open].to_string()));
                    }
                    pieces.push(Piece::Parameter(index));
                }
                // A template name no parameter declares stays as written, so the request
                // visibly fails upstream rather than going somewhere else.
                None => pieces.push(Piece::Literal(rest[..=close].to_string())),
            }
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_string()));
        }
        let names = plan.parameters.iter().map(WireName::new).collect();
        let content_type = plan
            .body
            .as_ref()
            .and_then(|body| HeaderValue::from_str(&body.media_type).ok());
        Route {
            pieces,
            names,
            content_type,
        }
    }
}

/// Builds the request `plan` describes from `arguments` (already valid against the tool's
/// input schema).
pub fn build(
    plan: &RequestPlan,
    route: &Route,
    arguments: &Map<String, Value>,
    extras: Extras<'_>,
) -> Result<Prepared, ArgumentError> {
    let mut path = String::with_capacity(plan.path.len() + 16);
    for piece in &route.pieces {
        match piece {
            Piece::Literal(text) => path.push_str(text),
            Piece::Parameter(index) => {
                let parameter = &plan.parameters[*index];
                expand_path(parameter, arguments.get(&parameter.argument), &mut path)?;
            }
        }
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }

    let cursor = extras
        .link_cursor
        .and_then(|name| arguments.get(name))
        .and_then(Value::as_str);
    // A cursor is the next page's whole query: a query argument beside it must say what the
    // cursor says, or one of the two would silently win.
    if let (Some(cursor), Some(cursor_argument)) = (cursor, extras.link_cursor)
        && let Some(parameter) = disagreeing(plan, route, arguments, cursor).next()
    {
        return Err(ArgumentError {
            argument: parameter.argument.clone(),
            reason: format!(
                "cannot be given with {cursor_argument:?}, whose query sets it otherwise: the cursor already holds the next page's query; give {cursor_argument:?} with the other arguments and leave {:?} out",
                parameter.argument
            )
            .into(),
        });
    }
    let mut query = String::new();
    let mut headers = HeaderMap::new();
    let mut cookies = String::new();
    for (parameter, name) in plan.parameters.iter().zip(&route.names) {
        let value = arguments.get(&parameter.argument);
        let page_size;
        let value = match (value, extras.page_size) {
            (None, Some((argument, size))) if argument == parameter.argument => {
                page_size = Value::from(size);
                Some(&page_size)
            }
            _ => value,
        };
        let Some(value) = value.filter(|value| !value.is_null()) else {
            continue;
        };
        match name {
            WireName::Path => {}
            // A cursor from a `Link` header is the whole query of the next page.
            WireName::Query(_) | WireName::QueryString if cursor.is_some() => {}
            WireName::Query(name) => expand_query(parameter, name, value, &mut query),
            WireName::QueryString => expand_query_string(parameter, value, &mut query)?,
            WireName::Header(name) => expand_header(parameter, name, value, &mut headers)?,
            WireName::Cookie(name) => expand_cookie(parameter, name, value, &mut cookies)?,
        }
    }
    if let Some(cursor) = cursor {
        append_cursor(
            cursor,
            extras.query_credential.map(|(name, _)| name),
            &mut query,
        );
    }
    if let Some((name, value)) = extras.query_credential {
        separate(&mut query, '&');
        query.push_str(name);
        query.push('=');
        query.push_str(value);
    }
    if !cookies.is_empty() {
        let value = HeaderValue::try_from(cookies).map_err(|_| ArgumentError {
            argument: "cookie".into(),
            reason: "cookie values cannot be sent".into(),
        })?;
        headers.insert(header::COOKIE, value);
    }

    let body = match &plan.body {
        Some(body) => super::body::build(body, route.content_type.as_ref(), arguments)?,
        None => None,
    };

    let mut path_and_query = path;
    if !query.is_empty() {
        path_and_query.push('?');
        path_and_query.push_str(&query);
    }
    Ok(Prepared {
        path_and_query,
        headers,
        body,
    })
}

/// The arguments that ask for the page after this one, when the answer to `arguments` named
/// a `Link` cursor: the same arguments, less the query ones the cursor sets otherwise (a page
/// number, say), with the cursor in `cursor_argument`. A query argument the cursor agrees
/// with is kept, so a required one stays given.
pub fn next_page_arguments(
    plan: &RequestPlan,
    route: &Route,
    arguments: &Map<String, Value>,
    cursor_argument: &str,
    cursor: &str,
) -> Map<String, Value> {
    let dropped: Vec<&str> = disagreeing(plan, route, arguments, cursor)
        .map(|parameter| parameter.argument.as_str())
        .collect();
    let mut next: Map<String, Value> = arguments
        .iter()
        .filter(|(name, _)| !dropped.contains(&name.as_str()) && *name != cursor_argument)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    next.insert(cursor_argument.to_string(), Value::from(cursor));
    next
}

/// The query parameters given in `arguments` whose items differ from those `cursor` (a query
/// string) has under the same names: compared decoded, `+` read as a space, as a form is.
fn disagreeing<'p>(
    plan: &'p RequestPlan,
    route: &'p Route,
    arguments: &'p Map<String, Value>,
    cursor: &'p str,
) -> impl Iterator<Item = &'p ParameterPlan> + 'p {
    let cursor_items = query_items(cursor.strip_prefix('?').unwrap_or(cursor));
    plan.parameters
        .iter()
        .zip(&route.names)
        .filter_map(move |(parameter, name)| {
            let value = arguments
                .get(&parameter.argument)
                .filter(|value| !value.is_null())?;
            let mut written = String::new();
            match name {
                WireName::Query(name) => expand_query(parameter, name, value, &mut written),
                WireName::QueryString => {
                    // One that cannot be written is refused when the request is built.
                    expand_query_string(parameter, value, &mut written).ok()?;
                }
                _ => return None,
            }
            let mut given = query_items(&written);
            let names: Vec<&String> = given.iter().map(|(name, _)| name).collect();
            let mut said: Vec<(String, String)> = cursor_items
                .iter()
                .filter(|(name, _)| names.contains(&name))
                .cloned()
                .collect();
            given.sort();
            said.sort();
            (given != said).then_some(parameter)
        })
}

/// A query string's items, names and values percent-decoded with `+` as a space.
fn query_items(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| {
        let spaced = text.replace('+', " ");
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (name, value) = item.split_once('=').unwrap_or((item, ""));
            (decode(name), decode(value))
        })
        .collect()
}

/// The characters of a `Link` target's query kept as they are in a cursor; everything else
/// is percent-encoded when a cursor comes back, so a cursor can only ever be a query.
pub const CURSOR_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'%')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'|');

/// Removes the items named `name` from a query string.
pub fn without_query_item(query: &str, name: &str) -> String {
    let mut kept = String::with_capacity(query.len());
    for item in query.split('&').filter(|item| !item.is_empty()) {
        let key = item.split('=').next().unwrap_or(item);
        if key == name {
            continue;
        }
        separate(&mut kept, '&');
        kept.push_str(item);
    }
    kept
}

/// Query values: everything but the unreserved characters is encoded.
pub(super) const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Query values of `allowReserved` parameters: reserved characters pass as they are, except
/// those that would end the value, start a new item or a fragment (`&`, `=`, `#`, `+`).
const QUERY_VALUE_RESERVED: &AsciiSet = &QUERY_VALUE
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b',')
    .remove(b';');

/// Path values: everything but the unreserved characters is encoded, so `/`, `?`, `#` and
/// `%` stay inside the segment.
const PATH_VALUE: &AsciiSet = QUERY_VALUE;

/// Cookie values: what RFC 6265 leaves out of a cookie-octet, plus `%` so that the
/// encoding is reversible.
const COOKIE_VALUE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b',')
    .add(b';')
    .add(b'\\')
    .add(b'%')
    .add(b'=');

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Parameter(usize),
}

/// A parameter's name as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WireName {
    /// In the path: written by the route's pieces.
    Path,
    /// A query item's name, percent-encoded.
    Query(String),
    /// The whole query string, whose parameter's name is not written.
    QueryString,
    /// A cookie's name, percent-encoded.
    Cookie(String),
    /// A header's name, or why it cannot be set by an argument.
    Header(Result<HeaderName, &'static str>),
}

impl WireName {
    fn new(parameter: &ParameterPlan) -> WireName {
        let name = parameter.name.as_str();
        match parameter.location {
            ParameterLocation::Path => WireName::Path,
            ParameterLocation::Query => {
                WireName::Query(utf8_percent_encode(name, QUERY_VALUE).to_string())
            }
            ParameterLocation::QueryString => WireName::QueryString,
            ParameterLocation::Cookie => {
                WireName::Cookie(utf8_percent_encode(name, COOKIE_VALUE).to_string())
            }
            ParameterLocation::Header => {
                WireName::Header(match HeaderName::from_bytes(name.as_bytes()) {
                    Err(_) => Err("its header name cannot be sent"),
                    Ok(name) if FRAMING_HEADERS.contains(&name) => {
                        Err("its header is set by the HTTP client, not by arguments")
                    }
                    Ok(name) => Ok(name),
                })
            }
        }
    }
}

/// A parameter's value, reduced to what OpenAPI's styles distinguish.
enum Shape<'a> {
    Primitive(Cow<'a, str>),
    Array(Vec<Cow<'a, str>>),
    Object(Vec<(&'a str, Cow<'a, str>)>),
}

fn shape<'a>(parameter: &ParameterPlan, value: &'a Value) -> Shape<'a> {
    if parameter.json_content {
        return Shape::Primitive(Cow::Owned(value.to_string()));
    }
    match value {
        Value::Array(items) => Shape::Array(items.iter().map(primitive).collect()),
        Value::Object(map) => Shape::Object(
            map.iter()
                .map(|(key, value)| (key.as_str(), primitive(value)))
                .collect(),
        ),
        other => Shape::Primitive(primitive(other)),
    }
}

/// A scalar as text; a nested array or object (which no style defines) as JSON text.
pub(super) fn primitive(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        Value::Null => Cow::Borrowed(""),
        Value::Bool(true) => Cow::Borrowed("true"),
        Value::Bool(false) => Cow::Borrowed("false"),
        other => Cow::Owned(other.to_string()),
    }
}

fn invalid(parameter: &ParameterPlan, reason: &'static str) -> ArgumentError {
    ArgumentError {
        argument: parameter.argument.clone(),
        reason: Cow::Borrowed(reason),
    }
}

fn expand_path(
    parameter: &ParameterPlan,
    value: Option<&Value>,
    path: &mut String,
) -> Result<(), ArgumentError> {
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Err(invalid(parameter, "is required: it is part of the path"));
    };
    let start = path.len();
    fn encode(text: &str) -> percent_encoding::PercentEncode<'_> {
        utf8_percent_encode(text, PATH_VALUE)
    }
    let (prefix, separator, named) = match parameter.style {
        ParameterStyle::Label => (".", if parameter.explode { "." } else { "," }, false),
        ParameterStyle::Matrix => (";", if parameter.explode { ";" } else { "," }, true),
        _ => ("", ",", false),
    };
    path.push_str(prefix);
    match shape(parameter, value) {
        Shape::Primitive(text) => {
            if named {
                let _ = write!(path, "{}", encode(&parameter.name));
                if !text.is_empty() {
                    path.push('=');
                }
            }
            let _ = write!(path, "{}", encode(&text));
        }
        Shape::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    path.push_str(separator);
                }
                if named && (index == 0 || parameter.explode) {
                    let _ = write!(path, "{}=", encode(&parameter.name));
                }
                let _ = write!(path, "{}", encode(item));
            }
        }
        Shape::Object(entries) => {
            if named && !parameter.explode {
                let _ = write!(path, "{}=", encode(&parameter.name));
            }
            for (index, (key, item)) in entries.iter().enumerate() {
                if index > 0 {
                    path.push_str(separator);
                }
                let pair = if parameter.explode { "=" } else { "," };
                let _ = write!(path, "{}{pair}{}", encode(key), encode(item));
            }
        }
    }
    // `.` and `..` would be read as dot-segments (and `%2e` is decoded as `.` by URL
    // parsers), moving the path; an empty segment names another resource.
    let segment = &path[start..];
    if segment.is_empty() {
        return Err(invalid(parameter, "cannot be empty: it is a path segment"));
    }
    if segment == "." || segment == ".." {
        return Err(invalid(
            parameter,
            "cannot be \".\" or \"..\": it is a path segment",
        ));
    }
    Ok(())
}

/// `name` is the parameter's name, already encoded.
pub(super) fn expand_query(
    parameter: &ParameterPlan,
    name: &str,
    value: &Value,
    query: &mut String,
) {
    let set = if parameter.allow_reserved {
        QUERY_VALUE_RESERVED
    } else {
        QUERY_VALUE
    };
    let encode = |text: &str| utf8_percent_encode(text, set).to_string();
    let delimiter = match parameter.style {
        ParameterStyle::SpaceDelimited => "%20",
        ParameterStyle::PipeDelimited => "|",
        _ => ",",
    };
    match (shape(parameter, value), parameter.style) {
        (Shape::Primitive(text), _) => push_item(query, name, &encode(&text)),
        // Arrays under `deepObject` too: OpenAPI leaves them undefined, and the APIs that use
        // the style read the brackets (`expand[0]=a`), not a repeated name.
        (_, ParameterStyle::DeepObject) => deep_object(name, value, &encode, query),
        (Shape::Array(items), _) if parameter.explode => {
            for item in items {
                push_item(query, name, &encode(&item));
            }
        }
        (Shape::Array(items), _) => {
            if !items.is_empty() {
                let joined: Vec<String> = items.iter().map(|item| encode(item)).collect();
                push_item(query, name, &joined.join(delimiter));
            }
        }
        (Shape::Object(entries), ParameterStyle::Form) if parameter.explode => {
            for (key, item) in entries {
                push_item(query, &encode(key), &encode(&item));
            }
        }
        (Shape::Object(entries), _) => {
            let joined: Vec<String> = entries
                .iter()
                .flat_map(|(key, item)| [encode(key), encode(item)])
                .collect();
            push_item(query, name, &joined.join(delimiter));
        }
    }
}

/// An object written as a form is (`application/x-www-form-urlencoded`): each property not
/// null as a query item, in the style `field` gives it, appended to `out`.
pub(super) fn write_form(
    map: &Map<String, Value>,
    field: &dyn Fn(&str) -> ParameterPlan,
    out: &mut String,
) {
    for (key, item) in map.iter().filter(|(_, item)| !item.is_null()) {
        let name = utf8_percent_encode(key, QUERY_VALUE).to_string();
        expand_query(&field(key), &name, item, out);
    }
}

/// A form's property written in its default style: `form`, exploded.
pub(super) fn form_default(name: &str) -> ParameterPlan {
    ParameterPlan::new(name, ParameterLocation::Query, ParameterStyle::Form, true)
}

/// An OpenAPI 3.2 `querystring` parameter: its object is the whole query string, written as
/// a form.
fn expand_query_string(
    parameter: &ParameterPlan,
    value: &Value,
    query: &mut String,
) -> Result<(), ArgumentError> {
    let Value::Object(map) = value else {
        return Err(invalid(
            parameter,
            "must be an object: its properties are the query string's items",
        ));
    };
    write_form(map, &form_default, query);
    Ok(())
}

/// `deepObject`: `name[key]=value`, nested objects nesting brackets and arrays numbering
/// their items, `name[key][0]=item`, `name[0][key]=value` for an array of objects: the
/// bracket form that Stripe's API and the `qs` parser its conventions come from read
/// (OpenAPI leaves both nesting and arrays undefined). A number keeps an array of objects'
/// members together, where `name[][key]` could not say which item a member belongs to.
fn deep_object(prefix: &str, value: &Value, encode: &dyn Fn(&str) -> String, query: &mut String) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                deep_object(&format!("{prefix}[{}]", encode(key)), item, encode, query);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                deep_object(&format!("{prefix}[{index}]"), item, encode, query);
            }
        }
        Value::Null => {}
        other => push_item(query, prefix, &encode(&primitive(other))),
    }
}

fn push_item(query: &mut String, name: &str, value: &str) {
    separate(query, '&');
    query.push_str(name);
    query.push('=');
    query.push_str(value);
}

fn separate(text: &mut String, separator: char) {
    if !text.is_empty() {
        text.push(separator);
    }
}

fn append_cursor(cursor: &str, credential: Option<&str>, query: &mut String) {
    let cursor = cursor.strip_prefix('?').unwrap_or(cursor);
    let encoded = utf8_percent_encode(cursor, CURSOR_KEEP).to_string();
    let kept = match credential {
        Some(name) => without_query_item(&encoded, name),
        None => encoded,
    };
    if !kept.is_empty() {
        separate(query, '&');
        query.push_str(&kept);
    }
}

/// Headers a parameter must never set: they frame the message or belong to the connection.
const FRAMING_HEADERS: &[HeaderName] = &[
    header::HOST,
    header::CONTENT_LENGTH,
    header::TRANSFER_ENCODING,
    header::CONNECTION,
    header::TE,
    header::TRAILER,
    header::UPGRADE,
];

fn expand_header(
    parameter: &ParameterPlan,
    name: &Result<HeaderName, &'static str>,
    value: &Value,
    headers: &mut HeaderMap,
) -> Result<(), ArgumentError> {
    let text = match shape(parameter, value) {
        Shape::Primitive(text) => text.into_owned(),
        Shape::Array(items) => items.join(","),
        Shape::Object(entries) => {
            let pair = if parameter.explode { "=" } else { "," };
            entries
                .iter()
                .map(|(key, item)| format!("{key}{pair}{item}"))
                .collect::<Vec<_>>()
                .join(",")
        }
    };
    refuse_line_breaks(parameter, &text)?;
    let name = name.as_ref().map_err(|reason| invalid(parameter, reason))?;
    let value = HeaderValue::from_bytes(text.as_bytes()).map_err(|_| {
        invalid(
            parameter,
            "contains a control character, which a header cannot carry",
        )
    })?;
    headers.append(name.clone(), value);
    Ok(())
}

/// `name` is the parameter's name, already encoded.
fn expand_cookie(
    parameter: &ParameterPlan,
    name: &str,
    value: &Value,
    cookies: &mut String,
) -> Result<(), ArgumentError> {
    // `style: cookie` (OpenAPI 3.2) sends values as given, already escaped as the API wants
    // them; `form` percent-encodes them. Either way nothing may end the cookie early.
    let as_given = parameter.style == ParameterStyle::Cookie;
    let encode = |text: &str| {
        if as_given {
            text.to_string()
        } else {
            utf8_percent_encode(text, COOKIE_VALUE).to_string()
        }
    };
    let check = |text: &str, key: bool| {
        refuse_line_breaks(parameter, text)?;
        if as_given && (text.contains(';') || key && text.contains('=')) {
            return Err(invalid(
                parameter,
                "contains `;` (or `=` in a key), which would end the cookie: `style: cookie` sends values as given, so escape them as the API reads them",
            ));
        }
        Ok(())
    };
    let name = name.to_string();
    let mut pairs: Vec<(String, String)> = Vec::new();
    match shape(parameter, value) {
        Shape::Primitive(text) => {
            check(&text, false)?;
            pairs.push((name, encode(&text)));
        }
        Shape::Array(items) => {
            for item in &items {
                check(item, false)?;
            }
            if parameter.explode {
                pairs.extend(items.iter().map(|item| (name.clone(), encode(item))));
            } else {
                pairs.push((
                    name,
                    items
                        .iter()
                        .map(|item| encode(item))
                        .collect::<Vec<_>>()
                        .join(","),
                ));
            }
        }
        Shape::Object(entries) => {
            for (key, item) in &entries {
                check(key, parameter.explode)?;
                check(item, false)?;
            }
            if parameter.explode {
                pairs.extend(
                    entries
                        .iter()
                        .map(|(key, item)| (encode(key), encode(item))),
                );
            } else {
                let joined = entries
                    .iter()
                    .flat_map(|(key, item)| [encode(key), encode(item)]);
                pairs.push((name, joined.collect::<Vec<_>>().join(",")));
            }
        }
    }
    for (name, value) in pairs {
        if !cookies.is_empty() {
            cookies.push_str("; ");
        }
        cookies.push_str(&name);
        cookies.push('=');
        cookies.push_str(&value);
    }
    Ok(())
}

fn refuse_line_breaks(parameter: &ParameterPlan, text: &str) -> Result<(), ArgumentError> {
    if text.contains(['\r', '\n', '\0']) {
        return Err(invalid(
            parameter,
            "contains CR, LF or NUL, which cannot be sent in a header or cookie",
        ));
    }
    Ok(())
}
