//! How each tool calls the upstream, resolved once in compile: the curation's call options
//! over the file's, with ferry's defaults where neither says, in the types the runtime
//! uses (durations, header names, projection paths). `upstream` reads only this.

use std::time::Duration;

use http::HeaderName;

use super::shape::ResultShape;
use crate::curation::call::{CallOptions, NEVER_REPORTED_HEADERS};

/// Defaults applied where neither a tool nor the file sets a value.
pub mod defaults {
    pub const TIMEOUT_MS: u64 = 30_000;
    pub const CONNECT_TIMEOUT_MS: u64 = 5_000;
    pub const MAX_RESPONSE_BYTES: u64 = 1_048_576;
    pub const RETRIES: u32 = 2;
    pub const RETRY_BACKOFF_MS: u64 = 100;
    pub const PAGE_SIZE: u64 = 20;
    pub const CURSOR_ARGUMENT: &str = "cursor";
}

/// Response headers reported whenever the upstream sends them.
pub const REPORTED_HEADERS: &[&str] = &[
    "content-type",
    "retry-after",
    "location",
    "etag",
    "link",
    "content-language",
];

/// A tool's call settings, every default applied.
#[derive(Clone, PartialEq, Eq)]
pub struct CallSettings {
    /// Total time for one tool call, retries and backoff included.
    pub timeout: Duration,
    /// Time to establish a connection, in milliseconds: the pooled client is chosen by it.
    pub connect_timeout_ms: u64,
    /// Cap on the response body; past it the body is cut.
    pub max_response_bytes: u64,
    /// Retries after the first attempt, where retrying is safe.
    pub retries: u32,
    /// First backoff delay; each retry doubles it, with jitter.
    pub backoff: Duration,
    /// The header the API deduplicates POST/PATCH on, which makes them retryable.
    pub idempotency_header: Option<HeaderName>,
    /// Response headers reported in `_meta["dev.ferry/http"]`: [`REPORTED_HEADERS`], then the
    /// curation's, never a cookie or authentication header.
    pub report_headers: Vec<HeaderName>,
    /// How a 2xx JSON answer is shaped as served (its projection by `fields:`).
    pub shape: ResultShape,
    /// `(argument, size)`: the page size applied when the caller gives none.
    pub page_size: Option<(String, u64)>,
    /// Where the upstream names the next page.
    pub next: Option<NextPage>,
}

/// Where the upstream names the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextPage {
    /// A `Link: <…>; rel="next"` header. The cursor is that link's query, taken back in the
    /// tool's argument `cursor_argument` (which compile adds to the input schema).
    Link { cursor_argument: String },
    /// A field of the JSON body, at `pointer`, holds the cursor; it goes back in the API's
    /// own parameter, `cursor_argument`.
    Field {
        pointer: String,
        cursor_argument: String,
    },
}

impl Default for CallSettings {
    /// Every default, as for a tool the curation says nothing about.
    fn default() -> Self {
        CallSettings::resolve(&CallOptions::default())
    }
}

/// Written by hand: the lock digests this text, and a shape is written as the projection it
/// is (`fields: Some([["id"]])`), so a lock written before there was a shape still matches.
impl std::fmt::Debug for CallSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallSettings")
            .field("timeout", &self.timeout)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("idempotency_header", &self.idempotency_header)
            .field("report_headers", &self.report_headers)
            .field(
                "fields",
                &self
                    .shape
                    .projection
                    .as_ref()
                    .map(|projection| projection.paths()),
            )
            .field("page_size", &self.page_size)
            .field("next", &self.next)
            .finish()
    }
}

impl CallSettings {
    /// `options` (a tool's, already over the file's) with every default applied.
    pub fn resolve(options: &CallOptions) -> CallSettings {
        let mut report_headers: Vec<HeaderName> = REPORTED_HEADERS
            .iter()
            .map(|name| HeaderName::from_static(name))
            .collect();
        for name in options.response_headers.iter().flatten() {
            let lower = name.to_ascii_lowercase();
            // The curation refuses these with an error; a catalog built otherwise still
            // never reports them.
            if NEVER_REPORTED_HEADERS.contains(&lower.as_str()) {
                continue;
            }
            if let Ok(name) = HeaderName::from_bytes(lower.as_bytes())
                && !report_headers.contains(&name)
            {
                report_headers.push(name);
            }
        }
        let pagination = options.pagination.as_ref();
        let next = pagination
            .and_then(|pagination| Some((pagination, pagination.next.as_ref()?)))
            .map(|(pagination, next)| match next {
                crate::curation::call::NextPage::Link => NextPage::Link {
                    cursor_argument: pagination
                        .cursor_argument
                        .clone()
                        .unwrap_or_else(|| defaults::CURSOR_ARGUMENT.to_string()),
                },
                crate::curation::call::NextPage::Field(pointer) => NextPage::Field {
                    pointer: pointer.clone(),
                    // Compile refuses a cursor field without it.
                    cursor_argument: pagination.cursor_argument.clone().unwrap_or_default(),
                },
            });
        CallSettings {
            timeout: Duration::from_millis(options.timeout_ms.unwrap_or(defaults::TIMEOUT_MS)),
            connect_timeout_ms: options
                .connect_timeout_ms
                .unwrap_or(defaults::CONNECT_TIMEOUT_MS),
            max_response_bytes: options
                .max_response_bytes
                .unwrap_or(defaults::MAX_RESPONSE_BYTES),
            retries: options.retries.unwrap_or(defaults::RETRIES),
            backoff: Duration::from_millis(
                options
                    .retry_backoff_ms
                    .unwrap_or(defaults::RETRY_BACKOFF_MS),
            ),
            idempotency_header: options
                .idempotency_key_header
                .as_deref()
                .and_then(|name| HeaderName::from_bytes(name.as_bytes()).ok()),
            report_headers,
            shape: ResultShape::new(options.fields.as_deref()),
            page_size: pagination.and_then(|pagination| {
                let argument = pagination.size_argument.clone()?;
                Some((argument, pagination.size.unwrap_or(defaults::PAGE_SIZE)))
            }),
            next,
        }
    }

    /// The argument a `Link` cursor is taken back in, when the tool pages by `Link`.
    pub fn link_cursor(&self) -> Option<&str> {
        match &self.next {
            Some(NextPage::Link { cursor_argument }) => Some(cursor_argument),
            _ => None,
        }
    }
}
