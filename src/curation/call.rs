//! Curation keys that shape how a tool calls the upstream: timeouts, size caps, retries,
//! pagination, projection and the upstream's credentials.
//!
//! Every call option may be written at the top level (a default for every tool) or in a tool
//! entry (for that tool); `upstream_auth` is top-level only.

use serde_json::{Map, Value};

use super::{join, non_empty_string};
pub use crate::access::UpstreamAuth;
use crate::diagnostic::Diagnostic;
use crate::parameter::ParameterLocation;

/// Call options as written, at the top level (defaults for every tool) or in a tool entry.
/// Every field is optional here; `None` inherits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// Total time for one tool call, retries and backoff included (`timeout_ms`).
    pub timeout_ms: Option<u64>,
    /// Time to establish a connection (`connect_timeout_ms`).
    pub connect_timeout_ms: Option<u64>,
    /// Cap on the response body; past it the body is cut (`max_response_bytes`).
    pub max_response_bytes: Option<u64>,
    /// Retries after the first attempt, where retrying is safe (`retries`).
    pub retries: Option<u32>,
    /// First backoff delay; each retry doubles it, with jitter (`retry_backoff_ms`).
    pub retry_backoff_ms: Option<u64>,
    /// Header the API deduplicates POST/PATCH on; makes them retryable
    /// (`idempotency_key_header`).
    pub idempotency_key_header: Option<String>,
    /// Response headers reported in `_meta["dev.ferry/http"]` beside the built-in ones
    /// (`response_headers`), lower-cased.
    pub response_headers: Option<Vec<String>>,
    /// Fields kept in a JSON result: JSON pointers or plain top-level names (`fields`).
    pub fields: Option<Vec<String>>,
    /// How the tool pages (`pagination`).
    pub pagination: Option<Pagination>,
    /// `output_schema: false`: declare no output schema, and check no answer against one.
    pub output_schema: Option<bool>,
}

/// `pagination:` of a tool (or a default for all), each part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pagination {
    /// The tool's page-size argument (`size_argument`).
    pub size_argument: Option<String>,
    /// Page size applied when the caller gives none (`size`).
    pub size: Option<u64>,
    /// Where the next page is named (`next`).
    pub next: Option<NextPage>,
    /// The argument a next cursor is accepted back in (`cursor_argument`).
    pub cursor_argument: Option<String>,
}

/// Where the upstream names the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextPage {
    /// `next: link`: a `Link: <…>; rel="next"` header. The cursor is that link's query; the
    /// tool gains an argument (default `cursor`) that takes it back.
    Link,
    /// `next: /json/pointer`: a field of the JSON body holds the cursor, and it goes back in
    /// the API's own parameter named by `cursor_argument`.
    Field(String),
}

impl CallOptions {
    /// The tool's own options over the file's defaults.
    pub fn overlay(&self, tool: &CallOptions) -> CallOptions {
        CallOptions {
            timeout_ms: tool.timeout_ms.or(self.timeout_ms),
            connect_timeout_ms: tool.connect_timeout_ms.or(self.connect_timeout_ms),
            max_response_bytes: tool.max_response_bytes.or(self.max_response_bytes),
            retries: tool.retries.or(self.retries),
            retry_backoff_ms: tool.retry_backoff_ms.or(self.retry_backoff_ms),
            idempotency_key_header: tool
                .idempotency_key_header
                .clone()
                .or_else(|| self.idempotency_key_header.clone()),
            response_headers: tool
                .response_headers
                .clone()
                .or_else(|| self.response_headers.clone()),
            fields: tool.fields.clone().or_else(|| self.fields.clone()),
            pagination: match (&self.pagination, &tool.pagination) {
                (Some(file), Some(tool)) => Some(file.overlay(tool)),
                (file, tool) => tool.clone().or_else(|| file.clone()),
            },
            output_schema: tool.output_schema.or(self.output_schema),
        }
    }
}

impl Pagination {
    fn overlay(&self, tool: &Pagination) -> Pagination {
        Pagination {
            size_argument: tool
                .size_argument
                .clone()
                .or_else(|| self.size_argument.clone()),
            size: tool.size.or(self.size),
            next: tool.next.clone().or_else(|| self.next.clone()),
            cursor_argument: tool
                .cursor_argument
                .clone()
                .or_else(|| self.cursor_argument.clone()),
        }
    }
}

/// The keys this module owns, so the parsers of the file and of tool entries accept them.
pub const KEYS: &[&str] = &[
    "timeout_ms",
    "connect_timeout_ms",
    "max_response_bytes",
    "retries",
    "retry_backoff_ms",
    "idempotency_key_header",
    "response_headers",
    "fields",
    "pagination",
    "output_schema",
    "upstream_auth",
];

/// Response headers that are never reported, even when configured: cookies and
/// authentication.
pub const NEVER_REPORTED_HEADERS: &[&str] = &[
    "set-cookie",
    "set-cookie2",
    "cookie",
    "authorization",
    "proxy-authorization",
    "www-authenticate",
    "proxy-authenticate",
    "authentication-info",
    "proxy-authentication-info",
];

/// Reads the call-option keys of `map` (a top-level or tool mapping) found at `path`,
/// pushing a diagnostic for each bad value. `path` is the key path of the mapping: empty
/// (or anything not under `tools.`) for the top level, `tools.<selector>` for a tool entry.
/// `upstream_auth` is not read here (see [`parse_upstream_auth`]), only refused in tools.
pub fn parse_call_options(
    map: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> CallOptions {
    let in_tool = path.starts_with("tools.");
    let mut options = CallOptions::default();
    for (key, value) in map {
        let here = join(path, key);
        match key.as_str() {
            "timeout_ms" => options.timeout_ms = positive_integer(value, &here, diagnostics),
            "connect_timeout_ms" => {
                options.connect_timeout_ms = positive_integer(value, &here, diagnostics)
            }
            "max_response_bytes" => {
                options.max_response_bytes = positive_integer(value, &here, diagnostics)
            }
            "retries" => match value.as_u64() {
                Some(n) if n <= MAX_RETRIES => options.retries = Some(n as u32),
                _ => error(
                    &here,
                    format!("must be a whole number from 0 to {MAX_RETRIES}"),
                    diagnostics,
                ),
            },
            "retry_backoff_ms" => {
                options.retry_backoff_ms = positive_integer(value, &here, diagnostics)
            }
            "idempotency_key_header" => {
                options.idempotency_key_header = header_name(value, &here, diagnostics);
            }
            "response_headers" => {
                options.response_headers = header_names(value, &here, diagnostics)
            }
            "fields" => options.fields = fields(value, &here, diagnostics),
            "pagination" => options.pagination = pagination(value, &here, diagnostics),
            "output_schema" => match value.as_bool() {
                Some(on) => options.output_schema = Some(on),
                None => error(&here, "must be true or false".to_string(), diagnostics),
            },
            "upstream_auth" if in_tool => top_level_only(&here, diagnostics),
            _ => {}
        }
    }
    options
}

/// Reads `upstream_auth:` (found at `path`, usually `upstream_auth`). The value is a mapping
/// with exactly one key, the credential's kind.
pub fn parse_upstream_auth(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<UpstreamAuth> {
    let Some(map) = value.as_object() else {
        error(
            path,
            format!("must be a mapping with one key: {}", AUTH_KINDS.join(", ")),
            diagnostics,
        );
        return None;
    };
    let mut kinds = map.iter();
    let (Some((kind, settings)), None) = (kinds.next(), kinds.next()) else {
        error(
            path,
            format!("must have exactly one key: {}", AUTH_KINDS.join(", ")),
            diagnostics,
        );
        return None;
    };
    let here = join(path, kind);
    if crate::curation::auth::UPSTREAM_AUTH_KINDS.contains(&kind.as_str()) {
        return crate::curation::auth::parse_upstream_credential(
            kind,
            settings,
            &here,
            diagnostics,
        )
        .map(UpstreamAuth::Obtained);
    }
    let Some(settings) = settings.as_object() else {
        error(&here, "must be a mapping", diagnostics);
        return None;
    };
    match kind.as_str() {
        "api_key" => {
            super::check_keys(settings, &here, &[&["in", "name", "env"]], diagnostics);
            let location = match settings.get("in").map(Value::as_str) {
                None | Some(Some("header")) => Some(ParameterLocation::Header),
                Some(Some("query")) => Some(ParameterLocation::Query),
                Some(Some("cookie")) => Some(ParameterLocation::Cookie),
                Some(_) => {
                    error(
                        &join(&here, "in"),
                        "must be header, query or cookie",
                        diagnostics,
                    );
                    None
                }
            };
            let name = match settings.get("name") {
                None => {
                    error(
                        &here,
                        "needs `name`, the header, query item or cookie the key goes in",
                        diagnostics,
                    );
                    None
                }
                Some(name) if location == Some(ParameterLocation::Header) => {
                    header_name(name, &join(&here, "name"), diagnostics)
                }
                Some(name) => non_empty_string(name, &join(&here, "name"), diagnostics),
            };
            let env = env_setting(settings, &here, diagnostics);
            Some(UpstreamAuth::ApiKey {
                location: location?,
                name: name?,
                env: env?,
            })
        }
        "bearer" => {
            super::check_keys(settings, &here, &[&["env"]], diagnostics);
            Some(UpstreamAuth::Bearer {
                env: env_setting(settings, &here, diagnostics)?,
            })
        }
        _ => {
            error(
                &here,
                format!(
                    "unknown credential kind; expected one of: {}",
                    AUTH_KINDS.join(", ")
                ),
                diagnostics,
            );
            None
        }
    }
}

const MAX_RETRIES: u64 = 10;
const AUTH_KINDS: &[&str] = &[
    "api_key",
    "bearer",
    "basic",
    "client_credentials",
    "token_exchange",
];

fn error(path: &str, message: impl Into<String>, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.push(super::error(path, message));
}

fn top_level_only(path: &str, diagnostics: &mut Vec<Diagnostic>) {
    error(
        path,
        "is only allowed at the top level of the file",
        diagnostics,
    );
}

pub(super) fn positive_integer(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<u64> {
    match value.as_u64() {
        Some(n) if n > 0 => Some(n),
        _ => {
            error(path, "must be a whole number greater than 0", diagnostics);
            None
        }
    }
}

fn header_name(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<String> {
    let name = non_empty_string(value, path, diagnostics)?;
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        error(
            path,
            format!("{name:?} is not a valid header name"),
            diagnostics,
        );
        return None;
    }
    Some(name)
}

fn header_names(
    value: &Value,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    let Some(items) = value.as_array() else {
        error(path, "must be a list of header names", diagnostics);
        return None;
    };
    let mut names = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let here = format!("{path}.{index}");
        let Some(name) = header_name(item, &here, diagnostics) else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        if NEVER_REPORTED_HEADERS.contains(&name.as_str()) {
            error(
                &here,
                format!("{name} is never reported: it carries cookies or credentials"),
                diagnostics,
            );
            continue;
        }
        names.push(name);
    }
    Some(names)
}

fn fields(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let Some(items) = value.as_array().filter(|items| !items.is_empty()) else {
        error(
            path,
            "must be a non-empty list of field names or JSON pointers",
            diagnostics,
        );
        return None;
    };
    let mut fields = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let here = format!("{path}.{index}");
        let Some(field) = non_empty_string(item, &here, diagnostics) else {
            continue;
        };
        if field.starts_with('/') && !valid_pointer_escapes(&field) {
            error(
                &here,
                format!("{field:?} is not a valid JSON pointer (`~` must be followed by 0 or 1)"),
                diagnostics,
            );
            continue;
        }
        fields.push(field);
    }
    Some(fields)
}

pub(super) fn valid_pointer_escapes(pointer: &str) -> bool {
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

fn pagination(value: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<Pagination> {
    let Some(map) = value.as_object() else {
        error(path, "must be a mapping", diagnostics);
        return None;
    };
    super::check_keys(
        map,
        path,
        &[&["size_argument", "size", "next", "cursor_argument"]],
        diagnostics,
    );
    let mut pagination = Pagination::default();
    if let Some(value) = map.get("size_argument") {
        pagination.size_argument =
            non_empty_string(value, &join(path, "size_argument"), diagnostics);
    }
    if let Some(value) = map.get("size") {
        pagination.size = positive_integer(value, &join(path, "size"), diagnostics);
    }
    if let Some(value) = map.get("next") {
        let here = join(path, "next");
        pagination.next = match value.as_str() {
            Some("link") => Some(NextPage::Link),
            Some(pointer) if pointer.starts_with('/') && valid_pointer_escapes(pointer) => {
                Some(NextPage::Field(pointer.to_string()))
            }
            _ => {
                error(
                    &here,
                    "must be `link` or a JSON pointer into the response body, like /next_cursor",
                    diagnostics,
                );
                None
            }
        };
    }
    if let Some(value) = map.get("cursor_argument") {
        pagination.cursor_argument =
            non_empty_string(value, &join(path, "cursor_argument"), diagnostics);
    }
    Some(pagination)
}

/// The `env` of `settings` (at `path`): the environment variable holding the secret.
fn env_setting(
    settings: &Map<String, Value>,
    path: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some(value) = settings.get("env") else {
        error(
            path,
            "needs `env`, the environment variable holding the secret",
            diagnostics,
        );
        return None;
    };
    super::env_var(value, &join(path, "env"), diagnostics)
}
