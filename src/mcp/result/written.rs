//! A tool result written straight into the response bytes: typed blocks and `_meta`, with no
//! JSON tree in between, and each era's additions (`resultType` and the server info, or the
//! legacy wrap of a `structuredContent` that is not an object).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::*;

/// A result with its era's additions, serialized in place.
pub(super) struct Written<'r, 't> {
    pub(super) result: &'r CallResult<'t>,
    pub(super) result_type: Option<&'static str>,
    /// The server info added last to `_meta` (modern).
    pub(super) server_info: Option<&'r RawValue>,
    /// A `structuredContent` that is not an object is wrapped (legacy).
    pub(super) wrap: bool,
}

impl Serialize for Written<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let result = self.result;
        let mut map = serializer.serialize_map(None)?;
        if let Some(result_type) = self.result_type {
            map.serialize_entry("resultType", result_type)?;
        }
        map.serialize_entry("content", &Blocks(&result.content))?;
        if let Some(structured) = &result.structured_content {
            if self.wrap && !structured.is_object() {
                map.serialize_entry("structuredContent", &Wrapped(structured))?;
            } else {
                map.serialize_entry("structuredContent", structured)?;
            }
        }
        if result.is_error {
            map.serialize_entry("isError", &true)?;
        }
        if result.http.is_some()
            || result.handling.is_some()
            || result.rate_limit.is_some()
            || result.workflow.is_some()
            || self.server_info.is_some()
        {
            map.serialize_entry(
                "_meta",
                &Meta {
                    http: result.http.as_ref(),
                    handling: result.handling.as_ref(),
                    rate_limit: result.rate_limit.as_ref(),
                    workflow: result.workflow.as_ref(),
                    server_info: self.server_info,
                },
            )?;
        }
        map.end()
    }
}

struct Wrapped<'v>(&'v Value);

impl Serialize for Wrapped<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(LEGACY_WRAP_KEY, self.0)?;
        map.end()
    }
}

struct Blocks<'b, 't>(&'b [Block<'t>]);

impl Serialize for Blocks<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for block in self.0 {
            seq.serialize_element(block)?;
        }
        seq.end()
    }
}

impl Serialize for Block<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Block::Text(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Block::Media { kind, data, mime } => {
                map.serialize_entry("type", kind)?;
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime)?;
            }
            Block::Resource { tool, mime, body } => {
                map.serialize_entry("type", "resource")?;
                map.serialize_entry(
                    "resource",
                    &Resource {
                        tool,
                        mime: mime.as_deref(),
                        body,
                    },
                )?;
            }
        }
        map.end()
    }
}

struct Resource<'r> {
    tool: &'r str,
    mime: Option<&'r str>,
    body: &'r ResourceBody,
}

impl Serialize for Resource<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("uri", &Uri(self.tool))?;
        if let Some(mime) = self.mime {
            map.serialize_entry("mimeType", mime)?;
        }
        match self.body {
            ResourceBody::Text(text) => map.serialize_entry("text", text)?,
            ResourceBody::Blob(blob) => map.serialize_entry("blob", blob)?,
        }
        map.end()
    }
}

/// `ferry://tools/<tool>/response`, the URI of a tool's response body.
struct Uri<'t>(&'t str);

impl Serialize for Uri<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("ferry://tools/{}/response", self.0))
    }
}

struct Meta<'r> {
    http: Option<&'r Http>,
    handling: Option<&'r Handling>,
    rate_limit: Option<&'r RateLimited>,
    workflow: Option<&'r Value>,
    server_info: Option<&'r RawValue>,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(http) = self.http {
            map.serialize_entry(HTTP_META, &HttpFacts(http))?;
        }
        if let Some(handling) = self.handling {
            map.serialize_entry(RESULT_META, &Done(handling))?;
        }
        if let Some(limited) = self.rate_limit {
            map.serialize_entry(
                RATE_LIMIT_META,
                &json!({
                    "retryAfterSeconds": limited.retry_after_seconds,
                    "limit": limited.limit.to_string(),
                    "scope": limited.scope,
                }),
            )?;
        }
        if let Some(workflow) = self.workflow {
            map.serialize_entry(crate::catalog::WORKFLOW_META_KEY, workflow)?;
        }
        if let Some(info) = self.server_info {
            map.serialize_entry(META_SERVER_INFO, info)?;
        }
        map.end()
    }
}

/// `{"status": 200, "headers": {"content-type": "..."}}`.
struct HttpFacts<'h>(&'h Http);

impl Serialize for HttpFacts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Headers<'h>(&'h Http);
        impl Serialize for Headers<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.headers.len()))?;
                for (name, value) in &self.0.headers {
                    map.serialize_entry(name.as_str(), value)?;
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("status", &self.0.status.as_u16())?;
        map.serialize_entry("headers", &Headers(self.0))?;
        map.end()
    }
}

/// What ferry did, each note in the order it was made: the body redacted, cut, paged by a
/// field, projected, its numbers rounded; a cursor or location redacted, paged by `Link`;
/// a header redacted.
struct Done<'h>(&'h Handling);

impl Serialize for Done<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let handling = self.0;
        let mut map = serializer.serialize_map(None)?;
        let redacted_at = |map: &mut S::SerializeMap, part: Redacted| {
            if handling.redacted == Some(part) {
                map.serialize_entry("redacted", &true)
            } else {
                Ok(())
            }
        };
        let page = |map: &mut S::SerializeMap, from_link: bool| match &handling.page {
            Some(page) if page.from_link == from_link => {
                if let Some(cursor) = &page.cursor {
                    map.serialize_entry("nextCursor", cursor)?;
                }
                map.serialize_entry("more", &page.more)
            }
            _ => Ok(()),
        };
        redacted_at(&mut map, Redacted::Body)?;
        if handling.truncated {
            map.serialize_entry("truncated", &true)?;
            map.serialize_entry("limitBytes", &handling.limit_bytes)?;
        }
        page(&mut map, false)?;
        if handling.projected {
            map.serialize_entry("projected", &true)?;
        }
        if handling.numbers_rounded {
            map.serialize_entry("numbersRounded", &true)?;
        }
        redacted_at(&mut map, Redacted::Target)?;
        page(&mut map, true)?;
        redacted_at(&mut map, Redacted::Headers)?;
        map.end()
    }
}
